/* Reflection: fields, methods, metadata and attributes of object types. */
#ifndef WEBFFI_SRC_REFLECTION_H_
#define WEBFFI_SRC_REFLECTION_H_

#include <tvm/ffi/c_api.h>

/* Calls fn for every field of a type, the root ancestor's first; stops at
 * and returns the first non-zero result. */
int wf_reflect_visit_fields(int32_t type_index,
                            int (*fn)(const TVMFFIFieldInfo* field, void* ctx), void* ctx);

/* The field called name (own or inherited), or NULL. */
const TVMFFIFieldInfo* wf_reflect_find_field(int32_t type_index, const char* name, size_t n);

/* The method called name (own or inherited), or NULL. */
const TVMFFIMethodInfo* wf_reflect_find_method(int32_t type_index, const char* name, size_t n);

/* Reads a field of obj into an owned Any (result holds None on entry). */
int wf_reflect_get(TVMFFIObject* obj, const TVMFFIFieldInfo* field, TVMFFIAny* result);
/* Writes a field through its setter (Writable is not checked here). */
int wf_reflect_set(TVMFFIObject* obj, const TVMFFIFieldInfo* field, const TVMFFIAny* value);

/* The type's creator, or NULL when it has none. */
int (*wf_reflect_creator(int32_t type_index))(TVMFFIObjectHandle* result);

/* Whether objects of the type can be made empty: a native creator in its
 * metadata, else a Function in its `__ffi_new__` attribute (as types that
 * bindings define have). */
int wf_reflect_can_create(int32_t type_index);

/* A new empty object of the type (owned) from its creator or `__ffi_new__`;
 * RuntimeError when it has neither. */
int wf_reflect_create(int32_t type_index, TVMFFIObject** out);

/* Sets a field to its default: the value itself, or what its factory
 * returns when the field is flagged DefaultFromFactory. */
int wf_reflect_set_default(TVMFFIObject* obj, const TVMFFIFieldInfo* field);

/* Field accessors for plain C layouts, usable as getter/setter. */
int wf_reflect_get_int64(void* field, TVMFFIAny* result);
int wf_reflect_set_int64(void* field, const TVMFFIAny* value);
int wf_reflect_get_any(void* field, TVMFFIAny* result);
int wf_reflect_set_any(void* field, const TVMFFIAny* value);

/* A type's cell in the attribute column NAME (a C string literal's bytes),
 * or NULL when there is no such column or the type has no cell in it. */
const TVMFFIAny* wf_reflect_attr(int32_t type_index, const TVMFFIByteArray* name);

/* The type's hook in column NAME when it is a Function (as __s_equal__,
 * __s_hash__, __ffi_compare__, __ffi_repr__ are), else NULL. */
const TVMFFIAny* wf_reflect_attr_func(int32_t type_index, const TVMFFIByteArray* name);

/* Registers ffi.MakeFieldGetter, ffi.MakeFieldSetter, ffi.GetRegisteredTypeKeys. */
int wf_reflect_register(void);

#endif /* WEBFFI_SRC_REFLECTION_H_ */
