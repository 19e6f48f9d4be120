/* Reflection tables kept in each type's TVMFFITypeInfo, type attribute
 * columns, and the ffi.* functions that read and write fields by name. */
#include "reflection.h"

#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "object.h"
#include "runtime_init.h"
#include "seq.h"
#include "str.h"
#include "strmap.h"
#include "type_registry.h"

/* Registered names and docs are copied: callers may pass stack strings.
 * An empty text becomes a static "" and is never freed. NULL entries are
 * skipped. */
static void wf_reflect_free_texts(TVMFFIByteArray* a, TVMFFIByteArray* b, TVMFFIByteArray* c) {
  TVMFFIByteArray* texts[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    if (texts[i] != NULL && texts[i]->size > 0) free((void*)texts[i]->data);
  }
}

static int wf_reflect_dup_texts(TVMFFIByteArray* a, TVMFFIByteArray* b, TVMFFIByteArray* c) {
  TVMFFIByteArray* texts[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    TVMFFIByteArray* s = texts[i];
    if (s == NULL) continue;
    if (s->data == NULL || s->size == 0) {
      s->data = "";
      s->size = 0;
      continue;
    }
    char* copy = (char*)malloc(s->size + 1);
    if (copy == NULL) {
      wf_reflect_free_texts(i > 0 ? a : NULL, i > 1 ? b : NULL, NULL);
      return wf_err_raise_oom(s->size + 1);
    }
    memcpy(copy, s->data, s->size);
    copy[s->size] = '\0';
    s->data = copy;
  }
  return 0;
}

static TVMFFITypeInfo* wf_reflect_type(int32_t type_index, const char* what) {
  TVMFFITypeInfo* info = wf_type_info_mut(type_index);
  if (info == NULL) {
    wf_err_raise("ValueError", "%s: unknown type index %d", what, (int)type_index);
  }
  return info;
}

static int wf_reflect_same_name(const TVMFFIByteArray* a, const TVMFFIByteArray* b) {
  return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info) {
  if (info == NULL || info->name.data == NULL || info->getter == NULL) {
    return wf_err_raise("ValueError", "TVMFFITypeRegisterField: a field needs a name and a getter");
  }
  TVMFFITypeInfo* type = wf_reflect_type(type_index, "TVMFFITypeRegisterField");
  if (type == NULL) return -1;
  for (int32_t i = 0; i < type->num_fields; ++i) {
    if (wf_reflect_same_name(&type->fields[i].name, &info->name)) {
      return wf_err_raise("ValueError", "Field `%.*s` is already registered in type `%s`",
                          (int)info->name.size, info->name.data, type->type_key.data);
    }
  }
  TVMFFIFieldInfo copy = *info;
  if (wf_reflect_dup_texts(&copy.name, &copy.doc, &copy.metadata) != 0) return -1;
  TVMFFIFieldInfo* fields = (TVMFFIFieldInfo*)realloc(
      (void*)type->fields, (size_t)(type->num_fields + 1) * sizeof(TVMFFIFieldInfo));
  if (fields != NULL) type->fields = fields;
  if (fields == NULL ||
      TVMFFIAnyViewToOwnedAny(&info->default_value_or_factory, &copy.default_value_or_factory)) {
    wf_reflect_free_texts(&copy.name, &copy.doc, &copy.metadata);
    return fields == NULL ? wf_err_raise_oom(sizeof(TVMFFIFieldInfo)) : -1;
  }
  if ((copy.flags & kTVMFFIFieldFlagBitMaskSetterIsFunctionObj) && copy.setter != NULL) {
    wf_obj_incref((TVMFFIObject*)copy.setter);
  }
  fields[type->num_fields++] = copy;
  return 0;
}

int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info) {
  if (info == NULL || info->name.data == NULL || info->method.type_index != kTVMFFIFunction) {
    return wf_err_raise("ValueError",
                        "TVMFFITypeRegisterMethod: a method needs a name and an `ffi.Function`");
  }
  TVMFFITypeInfo* type = wf_reflect_type(type_index, "TVMFFITypeRegisterMethod");
  if (type == NULL) return -1;
  TVMFFIMethodInfo copy = *info;
  if (wf_reflect_dup_texts(&copy.name, &copy.doc, &copy.metadata) != 0) return -1;
  TVMFFIMethodInfo* methods = (TVMFFIMethodInfo*)realloc(
      (void*)type->methods, (size_t)(type->num_methods + 1) * sizeof(TVMFFIMethodInfo));
  if (methods == NULL) {
    wf_reflect_free_texts(&copy.name, &copy.doc, &copy.metadata);
    return wf_err_raise_oom(sizeof(TVMFFIMethodInfo));
  }
  type->methods = methods;
  wf_obj_incref(copy.method.v_obj);
  methods[type->num_methods++] = copy;
  return 0;
}

int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata) {
  if (metadata == NULL) {
    return wf_err_raise("ValueError", "TVMFFITypeRegisterMetadata: metadata is NULL");
  }
  TVMFFITypeInfo* type = wf_reflect_type(type_index, "TVMFFITypeRegisterMetadata");
  if (type == NULL) return -1;
  TVMFFITypeMetadata* copy = (TVMFFITypeMetadata*)type->metadata;
  if (copy == NULL) {
    copy = (TVMFFITypeMetadata*)calloc(1, sizeof(TVMFFITypeMetadata));
    if (copy == NULL) return wf_err_raise_oom(sizeof(TVMFFITypeMetadata));
    type->metadata = copy;
  }
  TVMFFIByteArray doc = metadata->doc;
  if (wf_reflect_dup_texts(&doc, NULL, NULL) != 0) return -1;
  wf_reflect_free_texts(&copy->doc, NULL, NULL);
  *copy = *metadata;
  copy->doc = doc;
  return 0;
}

/* ------------------------------------------------------- attribute columns */
static wf_strmap wf_attr_columns; /* name -> TVMFFITypeAttrColumn* */

int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* name,
                           const TVMFFIAny* value) {
  if (name == NULL || name->data == NULL || value == NULL) {
    return wf_err_raise("ValueError", "TVMFFITypeRegisterAttr: NULL argument");
  }
  TVMFFITypeInfo* type = wf_reflect_type(type_index, "TVMFFITypeRegisterAttr");
  if (type == NULL) return -1;
  TVMFFITypeAttrColumn* col = wf_strmap_get(&wf_attr_columns, name->data, name->size);
  if (col == NULL) {
    col = (TVMFFITypeAttrColumn*)calloc(1, sizeof(TVMFFITypeAttrColumn));
    if (col == NULL) return wf_err_raise_oom(sizeof(TVMFFITypeAttrColumn));
    if (wf_strmap_put(&wf_attr_columns, name->data, name->size, col) != 0) {
      free(col);
      return -1;
    }
  }
  /* Columns start at index 0 and grow to cover the largest index seen. */
  if (type_index >= col->size) {
    int32_t size = type_index + 1 > 2 * col->size ? type_index + 1 : 2 * col->size;
    TVMFFIAny* data = (TVMFFIAny*)realloc((void*)col->data, (size_t)size * sizeof(TVMFFIAny));
    if (data == NULL) return wf_err_raise_oom((size_t)size * sizeof(TVMFFIAny));
    for (int32_t i = col->size; i < size; ++i) wf_any_set_none(&data[i]);
    col->data = data;
    col->size = size;
  }
  TVMFFIAny* slot = (TVMFFIAny*)&col->data[type_index];
  if (slot->type_index != kTVMFFINone) {
    /* RuntimeError, as upstream raises */
    return wf_err_raise("RuntimeError", "Attribute `%.*s` of type `%s` is already registered",
                        (int)name->size, name->data, type->type_key.data);
  }
  return TVMFFIAnyViewToOwnedAny(value, slot);
}

const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* name) {
  if (name == NULL || name->data == NULL) return NULL;
  /* Columns the core creates at start must be there for a first lookup
   * (C++ static initialisers look columns up before anything else runs). */
  if (wf_runtime_init() != 0) return NULL;
  return wf_strmap_get(&wf_attr_columns, name->data, name->size);
}

const TVMFFIAny* wf_reflect_attr(int32_t type_index, const TVMFFIByteArray* name) {
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(name);
  if (col == NULL || type_index < 0 || type_index >= col->size) return NULL;
  return &col->data[type_index];
}

const TVMFFIAny* wf_reflect_attr_func(int32_t type_index, const TVMFFIByteArray* name) {
  const TVMFFIAny* v = wf_reflect_attr(type_index, name);
  return v != NULL && v->type_index == kTVMFFIFunction ? v : NULL;
}

/* ------------------------------------------------------------- lookups */
int wf_reflect_visit_fields(int32_t type_index,
                            int (*fn)(const TVMFFIFieldInfo* field, void* ctx), void* ctx) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) return 0;
  for (int32_t d = 0; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    for (int32_t i = 0; i < t->num_fields; ++i) {
      int rc = fn(&t->fields[i], ctx);
      if (rc != 0) return rc;
    }
  }
  return 0;
}

const TVMFFIFieldInfo* wf_reflect_find_field(int32_t type_index, const char* name, size_t n) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  TVMFFIByteArray want = {name, n};
  /* The most derived definition wins, so search from the type upwards. */
  for (int32_t d = info != NULL ? info->type_depth : -1; d >= 0; --d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    for (int32_t i = 0; i < t->num_fields; ++i) {
      if (wf_reflect_same_name(&t->fields[i].name, &want)) return &t->fields[i];
    }
  }
  return NULL;
}

const TVMFFIMethodInfo* wf_reflect_find_method(int32_t type_index, const char* name, size_t n) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  TVMFFIByteArray want = {name, n};
  for (int32_t d = info != NULL ? info->type_depth : -1; d >= 0; --d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    for (int32_t i = 0; i < t->num_methods; ++i) {
      if (wf_reflect_same_name(&t->methods[i].name, &want)) return &t->methods[i];
    }
  }
  return NULL;
}

int (*wf_reflect_creator(int32_t type_index))(TVMFFIObjectHandle* result) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  return info != NULL && info->metadata != NULL ? info->metadata->creator : NULL;
}

static const TVMFFIByteArray wf_attr_new = {"__ffi_new__", 11};

int wf_reflect_can_create(int32_t type_index) {
  return wf_reflect_creator(type_index) != NULL ||
         wf_reflect_attr_func(type_index, &wf_attr_new) != NULL;
}

int wf_reflect_create(int32_t type_index, TVMFFIObject** out) {
  *out = NULL;
  int (*creator)(TVMFFIObjectHandle*) = wf_reflect_creator(type_index);
  if (creator != NULL) {
    TVMFFIObjectHandle made = NULL;
    if (creator(&made) != 0) return -1;
    *out = (TVMFFIObject*)made;
    return 0;
  }
  const TVMFFIAny* make = wf_reflect_attr_func(type_index, &wf_attr_new);
  if (make == NULL) {
    return wf_err_raise("RuntimeError",
                        "Type `%s` does not support reflection creation (no native creator or "
                        "__ffi_new__ type attr)",
                        wf_type_key(type_index));
  }
  TVMFFIAny made;
  wf_any_set_none(&made);
  if (wf_func_call(make->v_obj, NULL, 0, &made) != 0) return -1;
  if (!wf_any_is_object(&made) || !wf_type_is_instance(made.type_index, type_index)) {
    const char* got = wf_type_key(made.type_index);
    wf_any_release(&made);
    return wf_err_raise("TypeError", "`__ffi_new__` of type `%s` returned `%s`",
                        wf_type_key(type_index), got);
  }
  *out = made.v_obj;
  return 0;
}

int wf_reflect_set_default(TVMFFIObject* obj, const TVMFFIFieldInfo* field) {
  if (!(field->flags & kTVMFFIFieldFlagBitMaskDefaultFromFactory)) {
    return wf_reflect_set(obj, field, &field->default_value_or_factory);
  }
  const TVMFFIAny* factory = &field->default_value_or_factory;
  if (factory->type_index != kTVMFFIFunction) {
    return wf_err_raise("TypeError", "Default factory of field `%.*s` is not a function",
                        (int)field->name.size, field->name.data);
  }
  TVMFFIAny value;
  wf_any_set_none(&value);
  if (wf_func_call(factory->v_obj, NULL, 0, &value) != 0) return -1;
  int rc = wf_reflect_set(obj, field, &value);
  wf_any_release(&value);
  return rc;
}

int wf_reflect_get(TVMFFIObject* obj, const TVMFFIFieldInfo* field, TVMFFIAny* result) {
  return field->getter((char*)obj + field->offset, result);
}

int wf_reflect_set(TVMFFIObject* obj, const TVMFFIFieldInfo* field, const TVMFFIAny* value) {
  void* addr = (char*)obj + field->offset;
  if (field->setter == NULL) {
    return wf_err_raise("AttributeError", "Field `%s` of type `%s` has no setter",
                        field->name.data, wf_type_key(obj->type_index));
  }
  if (field->flags & kTVMFFIFieldFlagBitMaskSetterIsFunctionObj) {
    TVMFFIAny args[2] = {{0}, *value}, r;
    args[0].type_index = kTVMFFIOpaquePtr;
    args[0].v_ptr = addr;
    wf_any_set_none(&r);
    if (wf_func_call((TVMFFIObject*)field->setter, args, 2, &r) != 0) return -1;
    wf_any_release(&r);
    return 0;
  }
  return ((TVMFFIFieldSetter)field->setter)(addr, value);
}

int wf_reflect_get_int64(void* field, TVMFFIAny* result) {
  wf_any_set_int(result, *(int64_t*)field);
  return 0;
}

int wf_reflect_set_int64(void* field, const TVMFFIAny* value) {
  return WebFFIArgToInt(NULL, value, 0, (int64_t*)field);
}

int wf_reflect_get_any(void* field, TVMFFIAny* result) {
  return TVMFFIAnyViewToOwnedAny((const TVMFFIAny*)field, result);
}

int wf_reflect_set_any(void* field, const TVMFFIAny* value) {
  TVMFFIAny owned;
  if (TVMFFIAnyViewToOwnedAny(value, &owned) != 0) return -1;
  TVMFFIAny old = *(TVMFFIAny*)field;
  *(TVMFFIAny*)field = owned;
  wf_any_release(&old);
  return 0;
}

/* ------------------------------------------------------ global functions */
/* The owner's TypeInfo is stable but its field array may move when more
 * fields are registered, so the field is held by position. */
typedef struct {
  int32_t type_index;
  const TVMFFITypeInfo* owner;
  int32_t field_index;
} wf_field_access;

static const TVMFFIFieldInfo* wf_field_of(const wf_field_access* a) {
  return &a->owner->fields[a->field_index];
}

static int wf_field_access_object(const wf_field_access* a, const char* fn, const TVMFFIAny* args,
                                  int32_t n, int32_t want_n, TVMFFIObject** obj) {
  const char* key = wf_type_key(a->type_index);
  const char* types[2] = {key, "Any"};
  WebFFISignature sig = {fn, want_n, types, want_n == 1 ? "Any" : "None"};
  if (WebFFICheckNumArgs(&sig, n) != 0) return -1;
  return WebFFIArgToObject(&sig, args, 0, a->type_index, (TVMFFIObjectHandle*)obj);
}

static int wf_field_getter_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const wf_field_access* a = (const wf_field_access*)self;
  TVMFFIObject* obj;
  if (wf_field_access_object(a, wf_field_of(a)->name.data, args, n, 1, &obj) != 0) return -1;
  return wf_reflect_get(obj, wf_field_of(a), result);
}

static int wf_field_setter_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  const wf_field_access* a = (const wf_field_access*)self;
  TVMFFIObject* obj;
  if (wf_field_access_object(a, wf_field_of(a)->name.data, args, n, 2, &obj) != 0) return -1;
  return wf_reflect_set(obj, wf_field_of(a), &args[1]);
}

static const char* const wf_reflect_str2[] = {"str", "str"};
static const WebFFISignature wf_getter_sig = {"ffi.MakeFieldGetter", 2, wf_reflect_str2,
                                              "ffi.Function"};
static const WebFFISignature wf_setter_sig = {"ffi.MakeFieldSetter", 2, wf_reflect_str2,
                                              "ffi.Function"};

/* (type_key, field_name) -> a Function reading or writing that field. */
static int wf_make_field_access(const WebFFISignature* sig, int setter, const TVMFFIAny* args,
                                int32_t n, TVMFFIAny* result) {
  TVMFFIByteArray key, name;
  int32_t type_index;
  if (WebFFICheckNumArgs(sig, n) != 0 || WebFFIArgToString(sig, args, 0, &key) != 0 ||
      WebFFIArgToString(sig, args, 1, &name) != 0 || TVMFFITypeKeyToIndex(&key, &type_index)) {
    return -1;
  }
  const TVMFFIFieldInfo* field = wf_reflect_find_field(type_index, name.data, name.size);
  if (field == NULL) {
    return wf_err_raise("AttributeError", "Type `%.*s` has no field `%.*s`", (int)key.size,
                        key.data, (int)name.size, name.data);
  }
  if (setter && !(field->flags & kTVMFFIFieldFlagBitMaskWritable)) {
    return wf_err_raise("AttributeError", "Field `%.*s` of type `%.*s` is read-only",
                        (int)name.size, name.data, (int)key.size, key.data);
  }
  wf_field_access* a = (wf_field_access*)malloc(sizeof(wf_field_access));
  if (a == NULL) return wf_err_raise_oom(sizeof(wf_field_access));
  a->type_index = type_index;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  for (int32_t d = 0; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    if (t->num_fields > 0 && field >= t->fields && field < t->fields + t->num_fields) {
      a->owner = t;
      a->field_index = (int32_t)(field - t->fields);
    }
  }
  TVMFFIObject* f = wf_func_new(setter ? wf_field_setter_call : wf_field_getter_call, a, free);
  if (f == NULL) {
    free(a);
    return -1;
  }
  wf_any_set_object(result, f);
  return 0;
}

static int wf_make_field_getter(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_make_field_access(&wf_getter_sig, 0, args, n, result);
}

static int wf_make_field_setter(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_make_field_access(&wf_setter_sig, 1, args, n, result);
}

typedef struct {
  TVMFFIObject* keys;
  int failed;
} wf_type_keys_ctx;

static void wf_collect_type_key(const TVMFFITypeInfo* info, void* ctx) {
  wf_type_keys_ctx* c = (wf_type_keys_ctx*)ctx;
  if (c->failed) return;
  TVMFFIAny key;
  if (wf_str_make(0, info->type_key.data, info->type_key.size, &key) != 0 ||
      wf_seq_push_owned(c->keys, &key) != 0) {
    c->failed = 1;
  }
}

static int wf_registered_type_keys(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  wf_type_keys_ctx ctx = {wf_seq_new(kTVMFFIArray, 64), 0};
  if (ctx.keys == NULL) return -1;
  wf_type_for_each(wf_collect_type_key, &ctx);
  if (ctx.failed) {
    wf_obj_decref(ctx.keys);
    return -1;
  }
  wf_any_set_object(result, ctx.keys);
  return 0;
}

int wf_reflect_register(void) {
  if (wf_global_register("ffi.MakeFieldGetter", wf_make_field_getter, NULL) != 0 ||
      wf_global_register("ffi.MakeFieldSetter", wf_make_field_setter, NULL) != 0 ||
      wf_global_register("ffi.GetRegisteredTypeKeys", wf_registered_type_keys, NULL) != 0) {
    return -1;
  }
  return 0;
}
