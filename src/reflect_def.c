/* Reflected types defined from C (src/reflect_def.h). */
#include "reflect_def.h"

#include <string.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "reflection.h"
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

int wf_def_field(int32_t type_index, const char* name, size_t offset, wf_def_kind kind,
                 int64_t extra_flags) {
  static const struct {
    TVMFFIFieldGetter getter;
    int64_t size;
    int32_t static_type;
  } kinds[] = {
      [WF_DEF_ANY] = {wf_reflect_get_any, sizeof(TVMFFIAny), kTVMFFIAny},
      [WF_DEF_OBJ] = {wf_def_get_obj, sizeof(void*), kTVMFFIObject},
      [WF_DEF_INT64] = {wf_reflect_get_int64, 8, kTVMFFIInt},
      [WF_DEF_INT32] = {wf_def_get_int32, 4, kTVMFFIInt},
  };
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.flags = extra_flags; /* read-only: no Writable bit, no setter */
  f.size = kinds[kind].size;
  f.alignment = kinds[kind].size < 8 ? kinds[kind].size : 8;
  f.offset = (int64_t)offset;
  f.getter = kinds[kind].getter;
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
