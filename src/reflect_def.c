/* Reflected types defined from C (src/reflect_def.h). */
#include "reflect_def.h"

#include <stdint.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "reflection.h"
#include "str.h"
#include "type_registry.h"

int32_t wf_def_type(const char* key, int32_t index, int32_t parent, int32_t total_size,
                    TVMFFISEqHashKind kind, int (*creator)(TVMFFIObjectHandle* out)) {
  int32_t type_index = wf_type_register_static(key, index, parent);
  if (type_index < 0) return -1;
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.creator = creator;
  meta.total_size = total_size;
  meta.structural_eq_hash_kind = kind;
  return TVMFFITypeRegisterMetadata(type_index, &meta) != 0 ? -1 : type_index;
}

static int wf_def_get_obj(void* field, TVMFFIAny* result) {
  TVMFFIObject* obj = *(TVMFFIObject**)field;
  if (obj == NULL) {
    wf_any_set_none(result);
  } else {
    wf_obj_incref(obj);
    wf_any_set_object(result, obj);
  }
  return 0;
}

static int wf_def_get_int32(void* field, TVMFFIAny* result) {
  wf_any_set_int(result, *(int32_t*)field);
  return 0;
}

static int wf_def_set_obj(void* field, const TVMFFIAny* value) {
  TVMFFIObject* obj = NULL;
  if (value->type_index != kTVMFFINone) {
    if (!wf_any_is_object(value)) {
      return wf_err_raise("TypeError", "Cannot convert from type `%s` to `ffi.Object`",
                          wf_type_key(value->type_index));
    }
    obj = value->v_obj;
    wf_obj_incref(obj);
  }
  TVMFFIObject* old = *(TVMFFIObject**)field;
  *(TVMFFIObject**)field = obj;
  if (old != NULL) wf_obj_decref(old);
  return 0;
}

static int wf_def_set_int32(void* field, const TVMFFIAny* value) {
  int64_t v;
  if (WebFFIArgToInt(NULL, value, 0, &v) != 0) return -1;
  if (v < INT32_MIN || v > INT32_MAX) {
    return wf_err_raise("OverflowError", "%lld does not fit in int32", (long long)v);
  }
  *(int32_t*)field = (int32_t)v;
  return 0;
}

int wf_def_field(int32_t type_index, const char* name, size_t offset, wf_def_kind kind,
                 int64_t extra_flags) {
  static const struct {
    TVMFFIFieldGetter getter;
    TVMFFIFieldSetter setter;
    int64_t size;
    int32_t static_type;
  } kinds[] = {
      [WF_DEF_ANY] = {wf_reflect_get_any, wf_reflect_set_any, sizeof(TVMFFIAny), kTVMFFIAny},
      [WF_DEF_OBJ] = {wf_def_get_obj, wf_def_set_obj, sizeof(void*), kTVMFFIObject},
      [WF_DEF_INT64] = {wf_reflect_get_int64, wf_reflect_set_int64, 8, kTVMFFIInt},
      [WF_DEF_INT32] = {wf_def_get_int32, wf_def_set_int32, 4, kTVMFFIInt},
  };
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  /* Read-only to users (no Writable bit); the setter serves construction
   * and deserialization, as upstream's def_ro fields have one too. */
  f.flags = extra_flags;
  f.size = kinds[kind].size;
  f.alignment = kinds[kind].size < 8 ? kinds[kind].size : 8;
  f.offset = (int64_t)offset;
  f.getter = kinds[kind].getter;
  f.setter = (void*)kinds[kind].setter;
  f.field_static_type_index = kinds[kind].static_type;
  wf_any_set_none(&f.default_value_or_factory);
  return TVMFFITypeRegisterField(type_index, &f);
}

int wf_def_method(int32_t type_index, const char* name, TVMFFISafeCallType fn, int is_static) {
  TVMFFIObject* f = wf_func_new(fn, NULL, NULL);
  if (f == NULL) return -1;
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof(m));
  m.name.data = name;
  m.name.size = strlen(name);
  m.flags = is_static ? kTVMFFIFieldFlagBitMaskIsStaticMethod : 0;
  wf_any_set_object(&m.method, f);
  int rc = TVMFFITypeRegisterMethod(type_index, &m);
  wf_obj_decref(f);
  return rc;
}

int wf_def_attr_column(const char* name) {
  TVMFFIByteArray key = {name, strlen(name)};
  if (TVMFFIGetTypeAttrColumn(&key) != NULL) return 0;
  TVMFFIAny none;
  wf_any_set_none(&none);
  /* Upstream's convention: None registered on type index 0 (kTVMFFINone)
   * creates the column and sets nothing. */
  return TVMFFITypeRegisterAttr(kTVMFFINone, &key, &none);
}

int wf_def_attr_ptr(int32_t type_index, const char* name, void* ptr) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIAny v;
  wf_any_set_none(&v);
  v.type_index = kTVMFFIOpaquePtr;
  v.v_ptr = ptr;
  return TVMFFITypeRegisterAttr(type_index, &key, &v);
}

int wf_def_attr_func(int32_t type_index, const char* name, TVMFFISafeCallType fn) {
  TVMFFIObject* f = wf_func_new(fn, NULL, NULL);
  if (f == NULL) return -1;
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIAny v;
  wf_any_set_object(&v, f);
  int rc = TVMFFITypeRegisterAttr(type_index, &key, &v);
  wf_obj_decref(f);
  return rc;
}
