/* Error objects and the raised-error slot. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"
#include "object.h"
#include "peer_budget.h"
#include "platform.h"
#include <webffi/webffi.h>

/* Kind and message live inline after the cell; the backtrace is replaceable. */
typedef struct {
  TVMFFIErrorCell cell;
  char* backtrace_storage; /* malloc'd, NUL-terminated; NULL for "" */
  /*
   * A deferred capture (wf_bt_capture_pending) standing for the backtrace,
   * or 0. Only errors raised from C strings have one, and only while they
   * sit in the raised slot: the JS glue takes them from there without the
   * text (it formats the capture itself, when read); C code can only reach
   * it through TVMFFIErrorMoveFromRaised, which formats it first. A capture
   * never formatted is dropped with the error, so the host forgets it.
   */
  int32_t pending_backtrace;
} wf_err_payload;

static WF_THREAD_LOCAL TVMFFIObject* wf_err_raised;

/* ------------------------------------------------------------ objects */
static void wf_err_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    wf_err_payload* p = WF_OBJ_CELL(self, wf_err_payload);
    free(p->backtrace_storage);
    p->backtrace_storage = NULL;
    if (p->pending_backtrace != 0) wf_bt_drop_pending(p->pending_backtrace);
    if (p->cell.cause_chain != NULL) wf_obj_decref((TVMFFIObject*)p->cell.cause_chain);
    if (p->cell.extra_context != NULL) wf_obj_decref((TVMFFIObject*)p->cell.extra_context);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

/* On allocation failure the old backtrace stays: the hook cannot report. */
static void wf_err_update_backtrace(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                                    int32_t update_mode) {
  wf_err_payload* p = WF_OBJ_CELL(self, wf_err_payload);
  size_t keep = update_mode == kTVMFFIBacktraceUpdateModeAppend ? p->cell.backtrace.size : 0;
  size_t add = backtrace != NULL ? backtrace->size : 0;
  if (keep + add == 0) {
    free(p->backtrace_storage);
    p->backtrace_storage = NULL;
    p->cell.backtrace.data = "";
    p->cell.backtrace.size = 0;
    return;
  }
  char* buf = (char*)malloc(keep + add + 1);
  if (buf == NULL) return;
  memcpy(buf, p->cell.backtrace.data, keep);
  if (add) memcpy(buf + keep, backtrace->data, add);
  buf[keep + add] = '\0';
  free(p->backtrace_storage);
  p->backtrace_storage = buf;
  p->cell.backtrace.data = buf;
  p->cell.backtrace.size = keep + add;
}

static size_t wf_err_len(const TVMFFIByteArray* s) { return s != NULL ? s->size : 0; }

int TVMFFIErrorCreateWithCauseAndExtraContext(const TVMFFIByteArray* kind,
                                              const TVMFFIByteArray* message,
                                              const TVMFFIByteArray* backtrace,
                                              TVMFFIObjectHandle cause_chain,
                                              TVMFFIObjectHandle extra_context,
                                              TVMFFIObjectHandle* out) {
  if (out == NULL) return -1;
  size_t kind_len = wf_err_len(kind), msg_len = wf_err_len(message);
  if (kind_len > SIZE_MAX / 4 || msg_len > SIZE_MAX / 4) return -1;
  size_t size = sizeof(TVMFFIObject) + sizeof(wf_err_payload) + kind_len + msg_len + 2;
  /* Not wf_obj_alloc: creating an error must leave the raised slot alone. */
  TVMFFICustomAllocator* a = TVMFFIGetCustomAllocator();
  TVMFFIObject* obj = (TVMFFIObject*)a->allocate(size, 8, kTVMFFIError, a->context);
  if (obj == NULL) return -1;
  memset(obj, 0, sizeof(TVMFFIObject) + sizeof(wf_err_payload));
  obj->combined_ref_count = 1ull | (1ull << 32);
  obj->type_index = kTVMFFIError;
  obj->deleter = wf_err_deleter;
  wf_err_payload* p = WF_OBJ_CELL(obj, wf_err_payload);
  char* text = (char*)(p + 1);
  if (kind_len) memcpy(text, kind->data, kind_len);
  text[kind_len] = '\0';
  char* msg = text + kind_len + 1;
  if (msg_len) memcpy(msg, message->data, msg_len);
  msg[msg_len] = '\0';
  p->cell.kind.data = text;
  p->cell.kind.size = kind_len;
  p->cell.message.data = msg;
  p->cell.message.size = msg_len;
  p->cell.backtrace.data = "";
  p->cell.update_backtrace = wf_err_update_backtrace;
  if (backtrace != NULL && backtrace->size > 0) {
    wf_err_update_backtrace(obj, backtrace, kTVMFFIBacktraceUpdateModeReplace);
    if (p->backtrace_storage == NULL) {
      wf_obj_free_space(obj);
      return -1;
    }
  }
  if (cause_chain != NULL) wf_obj_incref((TVMFFIObject*)cause_chain);
  if (extra_context != NULL) wf_obj_incref((TVMFFIObject*)extra_context);
  p->cell.cause_chain = cause_chain;
  p->cell.extra_context = extra_context;
  *out = obj;
  return 0;
}

int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                      const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out) {
  return TVMFFIErrorCreateWithCauseAndExtraContext(kind, message, backtrace, NULL, NULL, out);
}

/* Turns a deferred backtrace into the cell's text (errors of this file only). */
static void wf_err_format_pending(TVMFFIObject* obj) {
  if (obj == NULL || obj->deleter != wf_err_deleter) return;
  wf_err_payload* p = WF_OBJ_CELL(obj, wf_err_payload);
  if (p->pending_backtrace == 0) return;
  wf_buf text = {0};
  wf_bt_format_pending(p->pending_backtrace, &text);
  p->pending_backtrace = 0;
  if (!text.failed && text.size > 0) {
    TVMFFIByteArray bt = {text.data, text.size};
    wf_err_update_backtrace(obj, &bt, kTVMFFIBacktraceUpdateModeReplace);
  }
  wf_buf_free(&text);
}

/* --------------------------------------------------------- raised slot */
void TVMFFIErrorSetRaised(TVMFFIObjectHandle error) {
  if (error != NULL) wf_obj_incref((TVMFFIObject*)error);
  TVMFFIObject* old = wf_err_raised;
  wf_err_raised = (TVMFFIObject*)error;
  if (old != NULL) wf_obj_decref(old);
}

void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result) {
  if (result == NULL) return;
  wf_err_format_pending(wf_err_raised);
  *result = wf_err_raised;
  wf_err_raised = NULL;
}

int32_t WebFFIErrorMoveFromRaisedPending(TVMFFIObjectHandle* result) {
  if (result == NULL) return 0;
  TVMFFIObject* err = wf_err_raised;
  int32_t token = 0;
  if (err != NULL && err->deleter == wf_err_deleter) {
    wf_err_payload* p = WF_OBJ_CELL(err, wf_err_payload);
    token = p->pending_backtrace;
    p->pending_backtrace = 0; /* now the caller's, to format or drop */
  }
  *result = err;
  wf_err_raised = NULL;
  return token;
}

/*
 * Raised when even the error could not be allocated. It is never freed: the
 * runtime holds one reference to it for ever.
 */
static void wf_err_static_update_backtrace(TVMFFIObjectHandle self,
                                           const TVMFFIByteArray* backtrace,
                                           int32_t update_mode) {
  (void)self;
  (void)backtrace;
  (void)update_mode;
}

static struct {
  TVMFFIObject header;
  TVMFFIErrorCell cell;
} wf_err_oom_static = {
    {1, kTVMFFIError, 0, {.deleter = NULL}},
    {{"MemoryError", 11},
     {"Out of memory", 13},
     {"", 0},
     wf_err_static_update_backtrace,
     NULL,
     NULL},
};

/*
 * Inlined into each raising entry point: the host captures the stack at the
 * raise, and V8 spends most of that on the frames it walks, one frame per
 * call level (the entry point's is left out of backtraces anyway).
 */
static inline __attribute__((always_inline)) int wf_err_set_raised_inline(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message) {
  TVMFFIObjectHandle err = NULL;
  /* Most raised errors are caught without a look at their backtrace. */
  int32_t pending = wf_bt_capture_pending();
  const TVMFFIByteArray* bt = pending != 0 ? NULL : TVMFFIBacktrace(NULL, 0, NULL, 1);
  if (pending < 0) pending = 0; /* backtraces off: the error has none */
  if (TVMFFIErrorCreate(kind, message, bt, &err) != 0) {
    if (pending != 0) wf_bt_drop_pending(pending);
    TVMFFIErrorSetRaised(&wf_err_oom_static.header);
    return -1;
  }
  WF_OBJ_CELL(err, wf_err_payload)->pending_backtrace = pending;
  TVMFFIErrorSetRaised(err);
  wf_obj_decref((TVMFFIObject*)err);
  return -1;
}

int wf_err_set_raised(const TVMFFIByteArray* kind, const TVMFFIByteArray* message) {
  return wf_err_set_raised_inline(kind, message);
}

static inline __attribute__((always_inline)) void wf_err_set_raised_bytes(const char* kind,
                                                                           const char* message,
                                                                           size_t message_len) {
  if (kind == NULL) kind = "RuntimeError";
  TVMFFIByteArray k = {kind, strlen(kind)};
  TVMFFIByteArray m = {message != NULL ? message : "", message != NULL ? message_len : 0};
  wf_err_set_raised_inline(&k, &m);
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  wf_err_set_raised_bytes(kind, message, message != NULL ? strlen(message) : 0);
}

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts,
                                       int32_t num_parts) {
  size_t total = 0;
  for (int32_t i = 0; i < num_parts; ++i) {
    if (message_parts[i] != NULL) total += strlen(message_parts[i]);
  }
  char* buf = (char*)malloc(total + 1);
  if (buf == NULL) {
    TVMFFIErrorSetRaised(&wf_err_oom_static.header);
    return;
  }
  size_t at = 0;
  for (int32_t i = 0; i < num_parts; ++i) {
    if (message_parts[i] == NULL) continue;
    size_t n = strlen(message_parts[i]);
    memcpy(buf + at, message_parts[i], n);
    at += n;
  }
  buf[at] = '\0';
  wf_err_set_raised_bytes(kind, buf, at);
  free(buf);
}

int wf_err_raise(const char* kind, const char* fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof(small)) {
    wf_err_set_raised_bytes(kind, small, (size_t)n);
    return -1;
  }
  char* big = (char*)malloc((size_t)n + 1);
  if (big == NULL) {
    wf_err_set_raised_bytes(kind, small, sizeof(small) - 1);
    return -1;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  wf_err_set_raised_bytes(kind, big, (size_t)n);
  free(big);
  return -1;
}

int wf_err_raise_oom(uint64_t size) {
  uint64_t ceiling = wf_peer_take_refusal();
  if (ceiling != 0) {
    return wf_err_raise("MemoryError",
                        "Failed to allocate %llu bytes: a peer's request may not take the heap past "
                        "the runtime's peer budget of %llu bytes in use (the rest is kept for the owner)",
                        (unsigned long long)size, (unsigned long long)ceiling);
  }
  return wf_err_raise("MemoryError", "Failed to allocate %llu bytes", (unsigned long long)size);
}
