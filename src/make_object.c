/* ffi.MakeObjectFromPackedArgs(type, name0, value0, name1, value1, ...):
 * a reflected object built from its creator and named field values; fields
 * not named take their defaults. */
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "object.h"
#include "reflection.h"
#include "runtime_init.h"
#include "str.h"
#include "type_registry.h"

typedef struct {
  TVMFFIObject* obj;
  const TVMFFIAny* args;
  int32_t n;
  unsigned char* used; /* per name: 1 once a field took it */
  const char* type_key;
} wf_make_ctx;

static int wf_make_field(const TVMFFIFieldInfo* field, void* ctx) {
  wf_make_ctx* c = (wf_make_ctx*)ctx;
  for (int32_t i = 1; i + 1 < c->n; i += 2) {
    TVMFFIByteArray name;
    wf_any_string_view(&c->args[i], &name);
    if (c->used[i / 2] || name.size != field->name.size ||
        memcmp(name.data, field->name.data, name.size) != 0) {
      continue;
    }
    c->used[i / 2] = 1;
    return wf_reflect_set(c->obj, field, &c->args[i + 1]);
  }
  if (!(field->flags & kTVMFFIFieldFlagBitMaskHasDefault)) {
    return wf_err_raise("TypeError", "Required field `%.*s` not set in type `%s`",
                        (int)field->name.size, field->name.data, c->type_key);
  }
  return wf_reflect_set_default(c->obj, field);
}

static int wf_make_object(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n < 1 || n % 2 != 1) {
    return wf_err_raise("TypeError",
                        "ffi.MakeObjectFromPackedArgs expects a type and name/value pairs, "
                        "got %d arguments",
                        (int)n);
  }
  int32_t type_index;
  TVMFFIByteArray key;
  if (args[0].type_index == kTVMFFIInt) {
    type_index = (int32_t)args[0].v_int64;
    if (TVMFFIGetTypeInfo(type_index) == NULL || (int64_t)type_index != args[0].v_int64) {
      return wf_err_raise("ValueError", "Unknown type index %lld", (long long)args[0].v_int64);
    }
  } else if (wf_any_string_view(&args[0], &key)) {
    if (TVMFFITypeKeyToIndex(&key, &type_index) != 0) return -1;
  } else {
    return wf_err_raise("TypeError",
                        "ffi.MakeObjectFromPackedArgs: argument #0 must be a type index or key");
  }
  for (int32_t i = 1; i < n; i += 2) {
    TVMFFIByteArray name;
    if (!wf_any_string_view(&args[i], &name)) {
      return wf_err_raise("TypeError", "ffi.MakeObjectFromPackedArgs: argument #%d must be a str",
                          (int)i);
    }
  }
  const char* type_key = wf_type_key(type_index);
  unsigned char used[128];
  if (n / 2 > (int32_t)sizeof(used)) {
    return wf_err_raise("ValueError", "ffi.MakeObjectFromPackedArgs: more than %d fields",
                        (int)sizeof(used));
  }
  memset(used, 0, sizeof(used));
  TVMFFIObject* obj;
  if (wf_reflect_create(type_index, &obj) != 0) return -1;
  wf_make_ctx c = {obj, args, n, used, type_key};
  if (wf_reflect_visit_fields(type_index, wf_make_field, &c) != 0) {
    wf_obj_decref(obj);
    return -1;
  }
  for (int32_t i = 1; i < n; i += 2) {
    if (used[i / 2]) continue;
    TVMFFIByteArray name;
    wf_any_string_view(&args[i], &name);
    wf_obj_decref(obj);
    return wf_err_raise("TypeError", "Type `%s` does not have field `%.*s`", type_key,
                        (int)name.size, name.data);
  }
  wf_any_set_object(result, obj);
  return 0;
}

int wf_make_object_register(void) {
  return wf_global_register("ffi.MakeObjectFromPackedArgs", wf_make_object, NULL);
}
