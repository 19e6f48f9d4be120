/* Global functions: a name -> Function table kept in insertion order. */
#include "global_registry.h"

#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_schemas.h"
#include "object.h"
#include "runtime_init.h"
#include "str.h"
#include "strmap.h"
#include "type_registry.h"

typedef struct {
  char* name; /* NUL-terminated */
  size_t name_len;
  TVMFFIObject* func;
  TVMFFIObject* metadata; /* a String object, or NULL for `{}` */
  const char* schema;     /* a builtin's type schema (src/global_schemas.c), or NULL */
} wf_global;

static wf_strmap wf_globals_by_name;
static wf_global** wf_globals; /* insertion order */
static size_t wf_globals_count, wf_globals_capacity;

static void wf_global_free(wf_global* g) {
  if (g->func != NULL) wf_obj_decref(g->func);
  if (g->metadata != NULL) wf_obj_decref(g->metadata);
  free(g->name);
  free(g);
}

static int wf_global_set(const TVMFFIByteArray* name, TVMFFIObject* f,
                         const TVMFFIByteArray* metadata, int allow_override) {
  if (name == NULL || (name->data == NULL && name->size != 0) || f == NULL) {
    return wf_err_raise("ValueError", "TVMFFIFunctionSetGlobal: name and function must not be NULL");
  }
  if (!wf_type_is_instance(f->type_index, kTVMFFIFunction)) {
    return wf_err_raise("TypeError", "TVMFFIFunctionSetGlobal: expected `ffi.Function` but got `%s`",
                        wf_type_key(f->type_index));
  }
  TVMFFIObject* meta = NULL;
  if (metadata != NULL && metadata->size > 0) {
    meta = wf_str_new_object(kTVMFFIStr, metadata->data, metadata->size);
    if (meta == NULL) return -1;
  }
  wf_global* g = wf_strmap_get(&wf_globals_by_name, name->data, name->size);
  if (g != NULL) {
    if (!allow_override) {
      if (meta != NULL) wf_obj_decref(meta);
      return wf_err_raise("RuntimeError", "Global Function `%.*s` is already registered",
                          (int)name->size, name->data);
    }
    wf_obj_incref(f);
    wf_obj_decref(g->func);
    g->func = f;
    if (g->metadata != NULL) wf_obj_decref(g->metadata);
    g->metadata = meta;
    g->schema = NULL;
    return 0;
  }
  if (wf_globals_count == wf_globals_capacity) {
    size_t cap = wf_globals_capacity ? wf_globals_capacity * 2 : 64;
    wf_global** grown = (wf_global**)realloc(wf_globals, cap * sizeof(*grown));
    if (grown == NULL) {
      if (meta != NULL) wf_obj_decref(meta);
      return wf_err_raise_oom(cap * sizeof(*grown));
    }
    wf_globals = grown;
    wf_globals_capacity = cap;
  }
  g = (wf_global*)calloc(1, sizeof(wf_global));
  char* copy = (char*)malloc(name->size + 1);
  if (g == NULL || copy == NULL) {
    free(g);
    free(copy);
    if (meta != NULL) wf_obj_decref(meta);
    return wf_err_raise_oom(name->size + sizeof(wf_global));
  }
  memcpy(copy, name->data, name->size);
  copy[name->size] = '\0';
  g->name = copy;
  g->name_len = name->size;
  g->metadata = meta;
  /* a name of the runtime's own (its JS host registers some) has its schema */
  if (meta == NULL) g->schema = wf_global_schema_of(name->data, name->size);
  if (wf_strmap_put(&wf_globals_by_name, copy, name->size, g) != 0) {
    wf_global_free(g);
    return -1;
  }
  wf_obj_incref(f);
  g->func = f;
  wf_globals[wf_globals_count++] = g;
  return 0;
}

int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                            int allow_override) {
  if (wf_runtime_init() != 0) return -1;
  return wf_global_set(name, (TVMFFIObject*)f, NULL, allow_override);
}

int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* info, int allow_override) {
  if (info == NULL) {
    return wf_err_raise("ValueError", "TVMFFIFunctionSetGlobalFromMethodInfo: info is NULL");
  }
  if (wf_runtime_init() != 0) return -1;
  if (info->method.type_index != kTVMFFIFunction) {
    return wf_err_raise("TypeError",
                        "TVMFFIFunctionSetGlobalFromMethodInfo: method must be an `ffi.Function`");
  }
  return wf_global_set(&info->name, info->method.v_obj, &info->metadata, allow_override);
}

int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out) {
  if (name == NULL || out == NULL || (name->data == NULL && name->size != 0)) {
    return wf_err_raise("ValueError", "TVMFFIFunctionGetGlobal: NULL argument");
  }
  if (wf_runtime_init() != 0) return -1;
  wf_global* g = wf_strmap_get(&wf_globals_by_name, name->data, name->size);
  if (g == NULL) {
    *out = NULL;
    return 0;
  }
  wf_obj_incref(g->func);
  *out = g->func;
  return 0;
}

static int wf_global_register_impl(const char* name, TVMFFISafeCallType fn, void* self,
                                   const char* metadata) {
  TVMFFIObject* f = self != NULL ? wf_func_new(fn, self, NULL) : wf_func_new_builtin(fn);
  if (f == NULL) return -1;
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIByteArray m = {metadata != NULL ? metadata : "", metadata != NULL ? strlen(metadata) : 0};
  /* override: a retried init after a failure must not trip over itself */
  int rc = wf_global_set(&n, f, &m, 1);
  wf_obj_decref(f);
  if (rc == 0 && metadata == NULL) {
    /* the runtime's own: its schema, as upstream gives one for each */
    wf_global* g = wf_strmap_get(&wf_globals_by_name, n.data, n.size);
    g->schema = wf_global_schema_of(n.data, n.size);
  }
  return rc;
}

int wf_global_register(const char* name, TVMFFISafeCallType fn, const char* metadata) {
  return wf_global_register_impl(name, fn, NULL, metadata);
}

int wf_global_register_with_self(const char* name, TVMFFISafeCallType fn, void* self) {
  return wf_global_register_impl(name, fn, self, NULL);
}

/* --------------------------------------------- ffi.* registry functions */
static int wf_global_name_arg(const char* fn, const TVMFFIAny* args, int32_t n,
                              TVMFFIByteArray* name) {
  if (n != 1 || !wf_any_string_view(&args[0], name)) {
    return wf_err_raise("TypeError", "%s expects one `str` argument", fn);
  }
  return 0;
}

static int wf_global_remove(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray name;
  if (wf_global_name_arg("ffi.FunctionRemoveGlobal", args, n, &name) != 0) return -1;
  wf_global* g = wf_strmap_remove(&wf_globals_by_name, name.data, name.size);
  if (g != NULL) {
    for (size_t i = 0; i < wf_globals_count; ++i) {
      if (wf_globals[i] != g) continue;
      memmove(&wf_globals[i], &wf_globals[i + 1], (wf_globals_count - i - 1) * sizeof(*wf_globals));
      --wf_globals_count;
      break;
    }
    wf_global_free(g);
  }
  wf_any_set_bool(result, g != NULL);
  return 0;
}

static int wf_global_metadata(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray name;
  if (wf_global_name_arg("ffi.GetGlobalFuncMetadata", args, n, &name) != 0) return -1;
  wf_global* g = wf_strmap_get(&wf_globals_by_name, name.data, name.size);
  if (g == NULL) {
    return wf_err_raise("RuntimeError", "Global Function `%.*s` is not registered",
                        (int)name.size, name.data);
  }
  if (g->metadata == NULL) {
    return g->schema != NULL ? wf_global_schema_render(g->schema, result)
                             : wf_str_make(0, "{}", 2, result);
  }
  wf_obj_incref(g->metadata);
  wf_any_set_object(result, g->metadata);
  return 0;
}

/* The names functor owns a snapshot: later registrations do not shift it. */
typedef struct {
  size_t count;
  TVMFFIAny names[];
} wf_global_names;

static void wf_global_names_free(void* self) {
  wf_global_names* s = (wf_global_names*)self;
  for (size_t i = 0; i < s->count; ++i) wf_any_release(&s->names[i]);
  free(s);
}

static int wf_global_names_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  wf_global_names* s = (wf_global_names*)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt) {
    return wf_err_raise("TypeError", "ffi.FunctionListGlobalNamesFunctor(i) expects one `int`");
  }
  int64_t i = args[0].v_int64;
  if (i == -1) {
    wf_any_set_int(result, (int64_t)s->count);
    return 0;
  }
  if (i < 0 || (uint64_t)i >= s->count) {
    return wf_err_raise("IndexError", "index %lld out of range [0, %zu)", (long long)i, s->count);
  }
  return TVMFFIAnyViewToOwnedAny(&s->names[i], result);
}

static int wf_global_list_names(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  wf_global_names* s =
      (wf_global_names*)malloc(sizeof(wf_global_names) + wf_globals_count * sizeof(TVMFFIAny));
  if (s == NULL) return wf_err_raise_oom(wf_globals_count * sizeof(TVMFFIAny));
  s->count = 0;
  for (size_t i = 0; i < wf_globals_count; ++i) {
    if (wf_str_make(0, wf_globals[i]->name, wf_globals[i]->name_len, &s->names[i]) != 0) {
      wf_global_names_free(s);
      return -1;
    }
    s->count = i + 1;
  }
  TVMFFIObject* f = wf_func_new(wf_global_names_call, s, wf_global_names_free);
  if (f == NULL) {
    wf_global_names_free(s);
    return -1;
  }
  wf_any_set_object(result, f);
  return 0;
}

static int wf_identity_string(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray s;
  if (n != 1 || !wf_any_string_view(&args[0], &s)) {
    return wf_err_raise("TypeError", "ffi.String expects one `str` argument");
  }
  return wf_str_make(0, s.data, s.size, result);
}

static int wf_identity_bytes(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray s;
  if (n != 1 || !(wf_any_bytes_view(&args[0], &s) || wf_any_string_view(&args[0], &s))) {
    return wf_err_raise("TypeError", "ffi.Bytes expects one `bytes` argument");
  }
  return wf_str_make(1, s.data, s.size, result);
}

int wf_global_register_builtins(void) {
  if (wf_global_register("ffi.FunctionRemoveGlobal", wf_global_remove, NULL) != 0) return -1;
  if (wf_global_register("ffi.FunctionListGlobalNamesFunctor", wf_global_list_names, NULL) != 0) {
    return -1;
  }
  if (wf_global_register("ffi.GetGlobalFuncMetadata", wf_global_metadata, NULL) != 0) return -1;
  if (wf_global_register("ffi.String", wf_identity_string, NULL) != 0) return -1;
  if (wf_global_register("ffi.Bytes", wf_identity_bytes, NULL) != 0) return -1;
  return 0;
}
