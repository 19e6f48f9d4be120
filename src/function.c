/* Function objects made from C callbacks, and calling them. */
#include "function.h"

#include <webffi/webffi.h>

#include "error.h"
#include "object.h"
#include "type_registry.h"

/* The cell's safe_call receives the Function itself (as upstream), so C
 * callbacks with their own `self` go through this trampoline. */
typedef struct {
  TVMFFIFunctionCell cell;
  TVMFFISafeCallType callback;
  void* self;
  void (*self_deleter)(void* self);
  TVMFFIObject* owner; /* kept alive while the function lives (a module) */
} wf_func_payload;

static int wf_func_trampoline(void* func, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  wf_func_payload* p = WF_OBJ_CELL(func, wf_func_payload);
  return p->callback(p->self, args, num_args, result);
}

static void wf_func_deleter(void* obj, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_func_payload* p = WF_OBJ_CELL(obj, wf_func_payload);
    if (p->self_deleter != NULL) p->self_deleter(p->self);
    if (p->owner != NULL) wf_obj_decref(p->owner);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(obj);
}

TVMFFIObject* wf_func_new(TVMFFISafeCallType safe_call, void* self, void (*deleter)(void*)) {
  TVMFFIObject* obj = wf_obj_alloc(sizeof(TVMFFIObject) + sizeof(wf_func_payload), 8,
                                   kTVMFFIFunction, wf_func_deleter);
  if (obj == NULL) return NULL;
  wf_func_payload* p = WF_OBJ_CELL(obj, wf_func_payload);
  p->cell.safe_call = wf_func_trampoline;
  p->cell.cpp_call = NULL;
  p->callback = safe_call;
  p->self = self;
  p->self_deleter = deleter;
  return obj;
}

TVMFFIObject* wf_func_new_owned(TVMFFISafeCallType safe_call, TVMFFIObject* owner) {
  TVMFFIObject* f = wf_func_new(safe_call, NULL, NULL);
  if (f == NULL) return NULL;
  wf_obj_incref(owner);
  WF_OBJ_CELL(f, wf_func_payload)->owner = owner;
  return f;
}

TVMFFIObject* wf_func_new_direct(TVMFFISafeCallType safe_call, void* self,
                                 void (*deleter)(void*)) {
  TVMFFIObject* f = wf_func_new(safe_call, self, deleter);
  /* The cell points at the callback itself, so calls skip the trampoline's
   * extra indirect call; the callback gets the Function (wf_func_self). */
  if (f != NULL) WF_OBJ_CELL(f, wf_func_payload)->cell.safe_call = safe_call;
  return f;
}

TVMFFIObject* wf_func_new_builtin(TVMFFISafeCallType safe_call) {
  return wf_func_new_direct(safe_call, NULL, NULL);
}

void* wf_func_self(TVMFFIObject* f) { return WF_OBJ_CELL(f, wf_func_payload)->self; }

int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void* self),
                         TVMFFIObjectHandle* out) {
  if (safe_call == NULL || out == NULL) {
    return wf_err_raise("ValueError", "TVMFFIFunctionCreate: safe_call and out must not be NULL");
  }
  /* Without state the callback is the cell's safe_call itself, as upstream
   * makes it: one indirect call fewer per call, and the callback receives
   * the Function as `self` (upstream's contract for a NULL self). */
  TVMFFIObject* f = self == NULL && deleter == NULL ? wf_func_new_direct(safe_call, NULL, NULL)
                                                     : wf_func_new(safe_call, self, deleter);
  if (f == NULL) return -1;
  *out = f;
  return 0;
}

/* Out of line so the checked path needs no stack frame for the messages. */
static __attribute__((noinline)) int wf_func_call_rejected(TVMFFIObject* f, int32_t num_args,
                                                           const TVMFFIAny* result) {
  if (f == NULL) {
    return wf_err_raise("ValueError", "WebFFIFunctionCallWords: function handle is NULL");
  }
  if (!wf_type_is_instance(f->type_index, kTVMFFIFunction)) {
    return wf_err_raise("TypeError", "WebFFIFunctionCallWords: expected `ffi.Function` but got `%s`",
                        wf_type_key(f->type_index));
  }
  if (result == NULL) return wf_err_raise("ValueError", "WebFFIFunctionCallWords: result is NULL");
  return wf_err_raise("ValueError", "WebFFIFunctionCallWords: invalid arguments (num_args %d)",
                      (int)num_args);
}

/* Upstream's dispatch and nothing more: the cell's safe_call, called with
 * the Function. C code is trusted with its handles, as in tvm-ffi, and each
 * check here cost 5-10% of a call (bench/call_loop.mjs); the entries that
 * take handles from outside check them before calling (WebFFIFunctionCallWords
 * below for JS, the RPC endpoint for its peers, testing.apply). */
int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                       TVMFFIAny* result) {
  return wf_func_call((TVMFFIObject*)func, args, num_args, result);
}

static void wf_func_set_int(TVMFFIAny* any, int32_t value) {
  any->type_index = kTVMFFIInt;
  any->zero_padding = 0;
  any->v_int64 = value;
}

static int wf_func_set_word(TVMFFIAny* any, int32_t kind, int32_t word, int32_t index) {
  any->zero_padding = 0;
  switch (kind & ((1 << WEBFFI_WORD_BITS) - 1)) {
    case WEBFFI_WORD_INT:
      any->type_index = kTVMFFIInt;
      any->v_int64 = word;
      return 0;
    case WEBFFI_WORD_NONE:
      any->type_index = kTVMFFINone;
      any->v_int64 = 0;
      return 0;
    case WEBFFI_WORD_BOOL:
      any->type_index = kTVMFFIBool;
      any->v_int64 = word != 0;
      return 0;
    case WEBFFI_WORD_OBJECT: /* a handle: its header knows its type */
      if (word == 0) {
        return wf_err_raise("ValueError", "WebFFIFunctionCallWords: argument %d is a NULL handle",
                            (int)index);
      }
      any->v_int64 = 0;
      any->v_obj = (TVMFFIObject*)(uintptr_t)(uint32_t)word;
      any->type_index = any->v_obj->type_index;
      return 0;
    case WEBFFI_WORD_RAW_STR:
      if (word == 0) {
        return wf_err_raise("ValueError", "WebFFIFunctionCallWords: argument %d is a NULL string",
                            (int)index);
      }
      any->type_index = kTVMFFIRawStr;
      any->v_int64 = 0;
      any->v_c_str = (const char*)(uintptr_t)(uint32_t)word;
      return 0;
    default:
      return wf_err_raise("ValueError", "WebFFIFunctionCallWords: argument %d has an unknown kind %d",
                          (int)index, (int)(kind & ((1 << WEBFFI_WORD_BITS) - 1)));
  }
}

int WebFFIFunctionCallWords(TVMFFIObjectHandle func, int32_t num_args, int32_t kinds, int32_t w0,
                            int32_t w1, int32_t w2, int32_t w3, TVMFFIAny* result) {
  TVMFFIObject* f = (TVMFFIObject*)func;
  if (f == NULL ||
      (f->type_index != kTVMFFIFunction && !wf_type_is_instance(f->type_index, kTVMFFIFunction)) ||
      num_args < 0 || num_args > 4 || result == NULL) {
    return wf_func_call_rejected(f, num_args, result);
  }
  TVMFFIAny args[4];
  if (kinds == 0) { /* all ints, the common case; unused slots too: cheaper than branching */
    wf_func_set_int(&args[0], w0);
    wf_func_set_int(&args[1], w1);
    wf_func_set_int(&args[2], w2);
    wf_func_set_int(&args[3], w3);
  } else {
    const int32_t words[4] = {w0, w1, w2, w3};
    for (int32_t i = 0; i < num_args; ++i) {
      if (wf_func_set_word(&args[i], kinds >> (WEBFFI_WORD_BITS * i), words[i], i) != 0) return -1;
    }
  }
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  if (wf_func_call(f, args, num_args, result) != 0) return -1;
  return result->type_index != kTVMFFINone;
}
