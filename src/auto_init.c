/* ffi._RegisterFFIInit(type_index): gives a reflected type the
 * `__ffi_init__` that binds call arguments to its fields, as upstream's
 * ObjectDef asks for on every type without an explicit init.
 *
 * The generated init takes the fields whose InitOff flag is clear:
 * positionally those without KwOnly (required ones first, then those with a
 * default, each group in field order), and after the KWARGS marker
 * (ffi.GetKwargsObject) any of them as name/value pairs. Unbound fields
 * take their defaults; a field without one is a missing argument unless it
 * is InitOff, which then keeps what the creator left. */
#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "buffer.h"
#include "error.h"
#include "function.h"
#include "global_registry.h"
#include "object.h"
#include "reflection.h"
#include "runtime_init.h"
#include "sentinels.h"
#include "str.h"
#include "type_registry.h"

typedef struct {
  const TVMFFIFieldInfo* field;
  int init, kw_only, has_default;
  int set;
} wf_init_slot;

typedef struct {
  wf_init_slot* slots;
  int32_t n, capacity;
} wf_init_fields;

static int wf_init_count(const TVMFFIFieldInfo* field, void* ctx) {
  (void)field;
  ++*(int32_t*)ctx;
  return 0;
}

static int wf_init_collect(const TVMFFIFieldInfo* f, void* ctx) {
  wf_init_fields* c = (wf_init_fields*)ctx;
  if (c->n == c->capacity) return 0; /* fields cannot change during a call */
  wf_init_slot* s = &c->slots[c->n++];
  s->field = f;
  s->init = !(f->flags & kTVMFFIFieldFlagBitMaskInitOff);
  s->kw_only = (f->flags & kTVMFFIFieldFlagBitMaskKwOnly) != 0;
  s->has_default = (f->flags & kTVMFFIFieldFlagBitMaskHasDefault) != 0;
  s->set = 0;
  return 0;
}

/* Raises the setter's error again, prefixed with the init and the field
 * (the original error becomes the cause and keeps its backtrace). */
static int wf_init_field_error(const char* type_key, const TVMFFIFieldInfo* f) {
  TVMFFIObjectHandle cause = NULL;
  TVMFFIErrorMoveFromRaised(&cause);
  if (cause == NULL) return wf_err_raise("RuntimeError", "%s.__ffi_init__() failed", type_key);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)cause + sizeof(TVMFFIObject));
  wf_buf msg = {0};
  wf_buf_printf(&msg, "%s.__ffi_init__() field '%.*s':\n  ", type_key, (int)f->name.size,
                f->name.data);
  /* the nested message, each of its lines indented */
  for (size_t i = 0; i < cell->message.size; ++i) {
    wf_buf_append(&msg, &cell->message.data[i], 1);
    if (cell->message.data[i] == '\n') wf_buf_append(&msg, "  ", 2);
  }
  int rc = -1;
  if (msg.failed) {
    wf_err_raise_oom(msg.capacity * 2);
  } else {
    TVMFFIByteArray text = {msg.data, msg.size};
    TVMFFIObjectHandle err = NULL;
    if (TVMFFIErrorCreateWithCauseAndExtraContext(&cell->kind, &text, &cell->backtrace, cause,
                                                  NULL, &err) == 0) {
      TVMFFIErrorSetRaised(err);
      TVMFFIObjectDecRef(err);
    } else {
      wf_err_raise_oom(msg.size);
    }
  }
  wf_buf_free(&msg);
  TVMFFIObjectDecRef(cause);
  return rc;
}

static int wf_init_set(TVMFFIObject* obj, const char* type_key, wf_init_slot* s,
                       const TVMFFIAny* value) {
  if (wf_reflect_set(obj, s->field, value) != 0) return wf_init_field_error(type_key, s->field);
  s->set = 1;
  return 0;
}

/* Binds args to the fields of obj (see the file comment). */
static int wf_init_bind(TVMFFIObject* obj, const char* type_key, wf_init_fields* fs,
                        int32_t* pos, int32_t num_pos, const TVMFFIAny* args, int32_t n) {
  TVMFFIObject* kwargs = wf_kwargs_object();
  int32_t marker = -1;
  for (int32_t i = 0; i < n && marker < 0; ++i) {
    if (wf_any_is_object(&args[i]) && args[i].v_obj == kwargs) marker = i;
  }
  int32_t given = marker < 0 ? n : marker;
  if (given > num_pos) {
    return wf_err_raise("TypeError",
                        "%s.__ffi_init__() takes at most %d positional argument(s), but %d were "
                        "given",
                        type_key, (int)num_pos, (int)given);
  }
  for (int32_t i = 0; i < given; ++i) {
    if (wf_init_set(obj, type_key, &fs->slots[pos[i]], &args[i]) != 0) return -1;
  }
  if (marker >= 0) {
    if ((n - marker - 1) % 2 != 0) {
      return wf_err_raise("TypeError",
                          "%s.__ffi_init__() KWARGS requires an even number of key-value "
                          "arguments",
                          type_key);
    }
    for (int32_t i = marker + 1; i < n; i += 2) {
      TVMFFIByteArray key;
      if (!wf_any_string_view(&args[i], &key)) {
        return wf_err_raise("TypeError", "%s.__ffi_init__() keyword argument names must be str, got `%s`",
                            type_key, wf_type_key(args[i].type_index));
      }
      wf_init_slot* s = NULL;
      for (int32_t k = 0; k < fs->n && s == NULL; ++k) {
        const TVMFFIByteArray* name = &fs->slots[k].field->name;
        if (fs->slots[k].init && name->size == key.size &&
            memcmp(name->data, key.data, key.size) == 0) {
          s = &fs->slots[k];
        }
      }
      if (s == NULL) {
        return wf_err_raise("TypeError", "%s.__ffi_init__() got an unexpected keyword argument '%.*s'",
                            type_key, (int)key.size, key.data);
      }
      if (s->set) {
        return wf_err_raise("TypeError", "%s.__ffi_init__() got multiple values for argument '%.*s'",
                            type_key, (int)key.size, key.data);
      }
      if (wf_init_set(obj, type_key, s, &args[i + 1]) != 0) return -1;
    }
  }
  for (int32_t k = 0; k < fs->n; ++k) {
    wf_init_slot* s = &fs->slots[k];
    if (s->set) continue;
    if (s->has_default) {
      if (wf_reflect_set_default(obj, s->field) != 0) return wf_init_field_error(type_key, s->field);
    } else if (s->init) {
      return wf_err_raise("TypeError", "%s.__ffi_init__() missing required %sargument: '%.*s'",
                          type_key, s->kw_only ? "keyword-only " : "", (int)s->field->name.size,
                          s->field->name.data);
    }
  }
  return 0;
}

static int wf_auto_init_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  int32_t type_index = (int32_t)(intptr_t)self;
  const char* type_key = wf_type_key(type_index);
  int32_t count = 0;
  wf_reflect_visit_fields(type_index, wf_init_count, &count);
  /* Small types (nearly all) bind on the stack. */
  wf_init_slot stack_slots[32];
  int32_t stack_pos[32];
  wf_init_fields fs = {stack_slots, 0, count};
  int32_t* pos = stack_pos;
  if (count > 32) {
    fs.slots = (wf_init_slot*)malloc((size_t)count * sizeof(wf_init_slot));
    pos = (int32_t*)malloc((size_t)count * sizeof(int32_t));
    if (fs.slots == NULL || pos == NULL) {
      free(fs.slots);
      free(pos);
      return wf_err_raise_oom((size_t)count * (sizeof(wf_init_slot) + sizeof(int32_t)));
    }
  }
  wf_reflect_visit_fields(type_index, wf_init_collect, &fs);
  int32_t num_pos = 0;
  for (int pass = 0; pass < 2; ++pass) { /* required first, then defaulted */
    for (int32_t k = 0; k < fs.n; ++k) {
      const wf_init_slot* s = &fs.slots[k];
      if (s->init && !s->kw_only && s->has_default == pass) pos[num_pos++] = k;
    }
  }
  TVMFFIObject* obj = NULL;
  int rc = wf_reflect_create(type_index, &obj);
  if (rc == 0) rc = wf_init_bind(obj, type_key, &fs, pos, num_pos, args, n);
  if (count > 32) {
    free(fs.slots);
    free(pos);
  }
  if (rc != 0) {
    if (obj != NULL) wf_obj_decref(obj);
    return -1;
  }
  wf_any_set_object(result, obj);
  return 0;
}

static const char* const wf_register_init_types[] = {"int"};
static const WebFFISignature wf_register_init_sig = {"ffi._RegisterFFIInit", 1,
                                                     wf_register_init_types, "None"};

static int wf_register_ffi_init(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)result;
  int64_t type_index;
  if (WebFFICheckNumArgs(&wf_register_init_sig, n) != 0 ||
      WebFFIArgToInt(&wf_register_init_sig, args, 0, &type_index) != 0) {
    return -1;
  }
  if (type_index < kTVMFFIStaticObjectBegin || type_index > INT32_MAX ||
      TVMFFIGetTypeInfo((int32_t)type_index) == NULL) {
    return wf_err_raise("ValueError", "ffi._RegisterFFIInit: %lld is not an object type index",
                        (long long)type_index);
  }
  TVMFFIObject* f = wf_func_new(wf_auto_init_call, (void*)(intptr_t)type_index, NULL);
  if (f == NULL) return -1;
  TVMFFIByteArray name = {"__ffi_init__", 12};
  TVMFFIAny v;
  wf_any_set_object(&v, f);
  int rc = TVMFFITypeRegisterAttr((int32_t)type_index, &name, &v);
  wf_obj_decref(f);
  return rc;
}

int wf_auto_init_register(void) {
  return wf_global_register("ffi._RegisterFFIInit", wf_register_ffi_init, NULL);
}
