/* The server functions TVM's client asks for by name: see rpc_server.h.
 *
 * TVM's own server keeps uploads in a directory on disk; a browser tab has
 * none, so files live in memory, per endpoint, and load_module hands their
 * bytes to the runtime's wasm module loader (ffi.Module.load_from_bytes.wasm,
 * registered by the JS glue). Every function holds the policy, never the
 * endpoint: a function the peer passed to some global may outlive it. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <webffi/device_api.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "peer_budget.h"
#include "rpc_server.h"
#include "str.h"

#define WF_RPC_DEFAULT_MAX_FILES_BYTES ((uint64_t)256 << 20)
#define WF_RPC_MAX_FILES 1024
#define WF_RPC_MAX_FILE_NAME 1024

typedef struct {
  char* name;
  size_t name_len;
  char* data;
  size_t size;
} wf_rpc_file;

struct wf_rpc_policy {
  int32_t refs;
  char** allow_list;
  int32_t allow_count;
  int (*allow)(void* ctx, const char* name, size_t size);
  void* allow_ctx;
  int enable_upload;
  uint64_t max_bytes;
  uint64_t max_packet;
  wf_rpc_file* files;
  int32_t file_count;
  uint64_t file_bytes;
};

/* ------------------------------------------------------------------ policy */
wf_rpc_policy* wf_rpc_policy_new(const char* const* allow_list, int32_t allow_count,
                                 int (*allow)(void* ctx, const char* name, size_t size),
                                 void* allow_ctx, int enable_upload, uint64_t max_bytes,
                                 uint64_t max_packet) {
  wf_rpc_policy* p = (wf_rpc_policy*)calloc(1, sizeof(wf_rpc_policy));
  if (p == NULL) goto oom;
  p->refs = 1;
  if (allow_count > 0) {
    p->allow_list = (char**)calloc((size_t)allow_count, sizeof(char*));
    if (p->allow_list == NULL) goto oom;
    for (int32_t i = 0; i < allow_count; ++i) {
      size_t n = strlen(allow_list[i]);
      p->allow_list[i] = (char*)malloc(n + 1);
      if (p->allow_list[i] == NULL) goto oom;
      memcpy(p->allow_list[i], allow_list[i], n + 1);
      p->allow_count = i + 1;
    }
  }
  p->allow = allow;
  p->allow_ctx = allow_ctx;
  p->enable_upload = enable_upload;
  p->max_bytes = max_bytes ? max_bytes : WF_RPC_DEFAULT_MAX_FILES_BYTES;
  p->max_packet = max_packet;
  return p;
oom:
  wf_rpc_policy_release(p);
  wf_err_raise_oom(0);
  return NULL;
}

void wf_rpc_policy_detach(wf_rpc_policy* p) {
  if (p == NULL) return;
  p->allow = NULL;
  p->allow_ctx = NULL;
}

static void wf_rpc_files_clear(wf_rpc_policy* p) {
  for (int32_t i = 0; i < p->file_count; ++i) {
    free(p->files[i].name);
    free(p->files[i].data);
  }
  free(p->files);
  p->files = NULL;
  p->file_count = 0;
  p->file_bytes = 0;
}

void wf_rpc_policy_release(wf_rpc_policy* p) {
  if (p == NULL || --p->refs > 0) return;
  for (int32_t i = 0; i < p->allow_count; ++i) free(p->allow_list[i]);
  free(p->allow_list);
  wf_rpc_files_clear(p);
  free(p);
}

static void wf_rpc_policy_release_void(void* p) { wf_rpc_policy_release((wf_rpc_policy*)p); }

int wf_rpc_policy_allows(const wf_rpc_policy* p, const char* name, size_t size) {
  for (int32_t i = 0; i < p->allow_count; ++i) {
    const char* a = p->allow_list[i];
    size_t n = strlen(a);
    if (n > 0 && a[n - 1] == '*') {
      if (size >= n - 1 && memcmp(name, a, n - 1) == 0) return 1;
    } else if (n == size && memcmp(name, a, n) == 0) {
      return 1;
    }
  }
  return p->allow != NULL && p->allow(p->allow_ctx, name, size) != 0;
}

/* ----------------------------------------------------------------- helpers */
static int wf_rpc_arg_string(const char* fn, const TVMFFIAny* args, int32_t n, int32_t i,
                             TVMFFIByteArray* out) {
  if (i >= n || !wf_any_string_view(&args[i], out)) {
    return wf_err_raise("TypeError", "%s: argument %d must be a string", fn, (int)i);
  }
  return 0;
}

static int wf_rpc_arg_int(const char* fn, const TVMFFIAny* args, int32_t n, int32_t i,
                          int64_t* out) {
  if (i >= n || (args[i].type_index != kTVMFFIInt && args[i].type_index != kTVMFFIBool)) {
    return wf_err_raise("TypeError", "%s: argument %d must be an int", fn, (int)i);
  }
  *out = args[i].v_int64;
  return 0;
}

static int wf_rpc_nargs(const char* fn, int32_t n, int32_t want) {
  if (n != want) {
    return wf_err_raise("TypeError", "%s takes %d arguments, got %d", fn, (int)want, (int)n);
  }
  return 0;
}

/* The file called name, or NULL; a name is a path relative to the work
 * directory (TVM's "/abs" paths name the same in-memory files). */
static wf_rpc_file* wf_rpc_file_find(wf_rpc_policy* p, TVMFFIByteArray name) {
  if (name.size > 0 && name.data[0] == '/') {
    name.data++;
    name.size--;
  }
  for (int32_t i = 0; i < p->file_count; ++i) {
    if (p->files[i].name_len == name.size && memcmp(p->files[i].name, name.data, name.size) == 0) {
      return &p->files[i];
    }
  }
  return NULL;
}

static int wf_rpc_missing_file(const char* fn, TVMFFIByteArray name) {
  return wf_err_raise("ValueError", "%s: no file '%.*s' in the server's work directory", fn,
                      (int)(name.size > 200 ? 200 : name.size), name.data);
}

static wf_rpc_policy* wf_rpc_self(void* func) { return (wf_rpc_policy*)wf_func_self(func); }

/* -------------------------------------------------------- work directory */
static int wf_rpc_upload(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char fn[] = "tvm.rpc.server.upload";
  (void)result;
  wf_rpc_policy* p = wf_rpc_self(func);
  TVMFFIByteArray name, data;
  if (wf_rpc_nargs(fn, n, 2) != 0 || wf_rpc_arg_string(fn, args, n, 0, &name) != 0) return -1;
  if (!wf_any_bytes_view(&args[1], &data) && !wf_any_string_view(&args[1], &data)) {
    return wf_err_raise("TypeError", "%s: argument 1 must be bytes", fn);
  }
  if (name.size > 0 && name.data[0] == '/') {
    name.data++;
    name.size--;
  }
  /* listdir answers the names joined by commas: a comma in one would split it */
  if (name.size == 0 || name.size > WF_RPC_MAX_FILE_NAME || memchr(name.data, '\0', name.size) ||
      memchr(name.data, ',', name.size)) {
    return wf_err_raise("ValueError", "%s: a file name is 1 to %d bytes, no NUL and no comma", fn,
                        WF_RPC_MAX_FILE_NAME);
  }
  wf_rpc_file* f = wf_rpc_file_find(p, name);
  uint64_t held = p->file_bytes - (f != NULL ? f->size : 0);
  if (data.size > p->max_bytes || held > p->max_bytes - data.size) {
    return wf_err_raise("MemoryError",
                        "%s: %llu bytes would pass the work directory's limit of %llu bytes", fn,
                        (unsigned long long)data.size, (unsigned long long)p->max_bytes);
  }
  char* copy = (char*)malloc(data.size ? data.size : 1);
  if (copy == NULL) return wf_err_raise_oom(data.size);
  memcpy(copy, data.data, data.size);
  if (f == NULL) {
    if (p->file_count >= WF_RPC_MAX_FILES) {
      free(copy);
      return wf_err_raise("ValueError", "%s: the work directory holds %d files already", fn,
                          WF_RPC_MAX_FILES);
    }
    wf_rpc_file* files =
        (wf_rpc_file*)realloc(p->files, (size_t)(p->file_count + 1) * sizeof(wf_rpc_file));
    char* fname = (char*)malloc(name.size + 1);
    if (files != NULL) p->files = files;
    if (files == NULL || fname == NULL) {
      free(copy);
      free(fname);
      return wf_err_raise_oom(name.size);
    }
    memcpy(fname, name.data, name.size);
    fname[name.size] = '\0';
    f = &p->files[p->file_count++];
    f->name = fname;
    f->name_len = name.size;
    f->data = NULL;
    f->size = 0;
  }
  free(f->data);
  f->data = copy;
  f->size = data.size;
  p->file_bytes = held + data.size;
  return 0;
}

static int wf_rpc_download(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char fn[] = "tvm.rpc.server.download";
  TVMFFIByteArray name;
  if (wf_rpc_nargs(fn, n, 1) != 0 || wf_rpc_arg_string(fn, args, n, 0, &name) != 0) return -1;
  wf_rpc_file* f = wf_rpc_file_find(wf_rpc_self(func), name);
  if (f == NULL) return wf_rpc_missing_file(fn, name);
  return wf_str_make(1, f->data, f->size, result);
}

static int wf_rpc_remove(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char fn[] = "tvm.rpc.server.remove";
  (void)result;
  wf_rpc_policy* p = wf_rpc_self(func);
  TVMFFIByteArray name;
  if (wf_rpc_nargs(fn, n, 1) != 0 || wf_rpc_arg_string(fn, args, n, 0, &name) != 0) return -1;
  wf_rpc_file* f = wf_rpc_file_find(p, name);
  if (f == NULL) return wf_rpc_missing_file(fn, name);
  p->file_bytes -= f->size;
  free(f->name);
  free(f->data);
  *f = p->files[--p->file_count];
  return 0;
}

/* TVM's listdir answers "a,b," (each name followed by a comma). */
static int wf_rpc_listdir(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char fn[] = "tvm.rpc.server.listdir";
  wf_rpc_policy* p = wf_rpc_self(func);
  TVMFFIByteArray dir = {"", 0};
  if (n > 1) return wf_rpc_nargs(fn, n, 1);
  if (n == 1 && wf_rpc_arg_string(fn, args, n, 0, &dir) != 0) return -1;
  if (dir.size > 0 && !(dir.size == 1 && (dir.data[0] == '.' || dir.data[0] == '/'))) {
    return wf_err_raise("ValueError", "%s: the work directory is flat; list '' or '.'", fn);
  }
  size_t total = 0;
  for (int32_t i = 0; i < p->file_count; ++i) total += p->files[i].name_len + 1;
  char* s = (char*)malloc(total + 1);
  if (s == NULL) return wf_err_raise_oom(total);
  size_t at = 0;
  for (int32_t i = 0; i < p->file_count; ++i) {
    memcpy(s + at, p->files[i].name, p->files[i].name_len);
    at += p->files[i].name_len;
    s[at++] = ',';
  }
  int rc = wf_str_make(0, s, at, result);
  free(s);
  return rc;
}

/* Calls global `name` with args; an absent global is a RuntimeError saying why. */
static int wf_rpc_call_global(const char* name, const char* why, const TVMFFIAny* args, int32_t n,
                              TVMFFIAny* result) {
  TVMFFIByteArray gname = {name, strlen(name)};
  TVMFFIObjectHandle g = NULL;
  if (TVMFFIFunctionGetGlobal(&gname, &g) != 0) return -1;
  if (g == NULL) return wf_err_raise("RuntimeError", "%s: %s is not registered", why, name);
  int rc = TVMFFIFunctionCall(g, (TVMFFIAny*)args, n, result);
  TVMFFIObjectDecRef(g);
  return rc;
}

static int wf_rpc_load_module(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char fn[] = "tvm.rpc.server.load_module";
  TVMFFIByteArray name;
  if (wf_rpc_nargs(fn, n, 1) != 0 || wf_rpc_arg_string(fn, args, n, 0, &name) != 0) return -1;
  wf_rpc_file* f = wf_rpc_file_find(wf_rpc_self(func), name);
  if (f == NULL) return wf_rpc_missing_file(fn, name);
  TVMFFIAny bytes;
  memset(&bytes, 0, sizeof(bytes));
  TVMFFIByteArray view = {f->data, f->size};
  bytes.type_index = kTVMFFIByteArrayPtr;
  bytes.v_ptr = &view;
  return wf_rpc_call_global("ffi.Module.load_from_bytes.wasm",
                            "tvm.rpc.server.load_module (no wasm module loader)", &bytes, 1,
                            result);
}

/* ----------------------------------------------------------- the others */
static int wf_rpc_module_get_function(void* func, const TVMFFIAny* args, int32_t n,
                                      TVMFFIAny* result) {
  (void)func;
  if (wf_rpc_nargs("tvm.rpc.server.ModuleGetFunction", n, 3) != 0) return -1;
  return wf_rpc_call_global("ffi.ModuleGetFunction", "tvm.rpc.server.ModuleGetFunction", args, 3,
                            result);
}

static int wf_rpc_max_packet(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args;
  if (wf_rpc_nargs("tvm.rpc.server.GetCRTMaxPacketSize", n, 0) != 0) return -1;
  /* the client sizes its copy chunks by this, less the packet overhead */
  wf_any_set_int(result, (int64_t)wf_rpc_self(func)->max_packet);
  return 0;
}

/* --------------------------------------------------------- time evaluator */

static void wf_rpc_timer_free(void* self) {
  wf_rpc_timer* t = (wf_rpc_timer*)self;
  if (t == NULL) return;
  if (t->pf != NULL) wf_obj_decref(t->pf);
  if (t->preproc != NULL) wf_obj_decref(t->preproc);
  free(t);
}

int64_t wf_rpc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int wf_rpc_call_discard(TVMFFIObject* f, const TVMFFIAny* args, int32_t n) {
  TVMFFIAny rv;
  wf_any_set_none(&rv);
  if (wf_func_call(f, args, n, &rv) != 0) return -1;
  wf_any_release(&rv);
  return 0;
}

/* The device's synchronous wait (the CPU has none to do). */
static int wf_rpc_device_sync(DLDevice dev) {
  if (dev.device_type == kDLCPU) return 0;
  const WebFFIDeviceAPI* api = WebFFIDeviceAPIGet(dev.device_type);
  if (api == NULL) return -1;
  return api->sync(api->ctx, dev, NULL);
}

/* TVM's timing loop: one warm-up call, then per repeat `number` calls timed
 * together (number grows until a repeat lasts min_repeat_ms); the result is
 * Bytes of `repeat` doubles, seconds per call. */
int wf_rpc_timer_over(int64_t spent_ns) {
  uint32_t budget = wf_peer_timer_ms();
  if (spent_ns <= (int64_t)budget * 1000000) return 0;
  return wf_err_raise("RPCError",
                      "runtime.RPCTimeEvaluator: stopped after %lld ms, past the runtime's timer "
                      "budget of %u ms (the device serves every peer)",
                      (long long)(spent_ns / 1000000), (unsigned)budget);
}

static int wf_rpc_timer_call(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  wf_rpc_timer* t = (wf_rpc_timer*)wf_func_self(func);
  int64_t began = wf_rpc_now_ns();
  if (wf_rpc_call_discard(t->pf, args, n) != 0 || wf_rpc_device_sync(t->dev) != 0) return -1;
  /* The budget is looked at every `stride` calls: about a millisecond of
   * them by the warm-up's measure (a huge `number` stops at the budget, not
   * after all its calls), rarely enough that the clock costs nothing. */
  int64_t warm = wf_rpc_now_ns() - began;
  int64_t stride = 1;
  while (stride < ((int64_t)1 << 20) && warm * stride * 2 <= 1000000) stride *= 2;
  double* out = (double*)calloc((size_t)t->repeat, sizeof(double));
  if (out == NULL) return wf_err_raise_oom((size_t)t->repeat * sizeof(double));
  int64_t number = t->number;
  for (int64_t i = 0; i < t->repeat; ++i) {
    if (t->preproc != NULL && wf_rpc_call_discard(t->preproc, args, n) != 0) goto fail;
    double ms = 0.0;
    int64_t zeros = 0;
    do {
      if (ms > 0.0) {
        double grown = (double)t->min_repeat_ms / (ms / (double)number) + 1;
        double golden = (double)number * 1.618;
        double next = grown > golden ? grown : golden;
        number = next < 1e12 ? (int64_t)next : (int64_t)1e12; /* the budget stops it first */
      }
      int64_t start = wf_rpc_now_ns();
      for (int64_t j = 0; j < number; ++j) {
        if (wf_rpc_call_discard(t->pf, args, n) != 0) goto fail;
        if (((j + 1) & (stride - 1)) == 0 && wf_rpc_timer_over(wf_rpc_now_ns() - began) != 0) goto fail;
      }
      if (wf_rpc_device_sync(t->dev) != 0) goto fail;
      int64_t ns = wf_rpc_now_ns() - start;
      if (wf_rpc_timer_over(wf_rpc_now_ns() - began) != 0) goto fail;
      if (ns == 0) zeros++;
      ms = (double)ns / 1e6;
    } while (ms < (double)t->min_repeat_ms && zeros < t->limit_zero);
    out[i] = ms / 1e3 / (double)number;
  }
  int rc = wf_str_make(1, (const char*)out, (size_t)t->repeat * sizeof(double), result);
  free(out);
  return rc;
fail:
  free(out);
  return -1;
}

const wf_rpc_timer* wf_rpc_timer_of(TVMFFIObject* f) {
  TVMFFIFunctionCell* cell = (TVMFFIFunctionCell*)((char*)f + sizeof(TVMFFIObject));
  return cell->safe_call == wf_rpc_timer_call ? (const wf_rpc_timer*)wf_func_self(f) : NULL;
}

/* runtime.RPCTimeEvaluator(module | None, name, device_type, device_id,
 * number, repeat, min_repeat_ms, limit_zero_time_iterations,
 * cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes,
 * f_preproc_name) -> the timer. Without a module, `name` (and the
 * preprocessor) must be exposed globals. Cooldown and cache flushing are
 * not done (a browser cannot sleep synchronously). */
static int wf_rpc_time_evaluator(void* func, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  static const char fn[] = "runtime.RPCTimeEvaluator";
  wf_rpc_policy* p = wf_rpc_self(func);
  TVMFFIByteArray name, preproc;
  int64_t v[9];
  if (wf_rpc_nargs(fn, n, 12) != 0 || wf_rpc_arg_string(fn, args, n, 1, &name) != 0 ||
      wf_rpc_arg_string(fn, args, n, 11, &preproc) != 0) {
    return -1;
  }
  for (int i = 0; i < 9; ++i) {
    if (wf_rpc_arg_int(fn, args, n, 2 + i, &v[i]) != 0) return -1;
  }
  if (v[2] < 1 || v[3] < 1 || v[3] > 100000 || v[4] < 0 || v[5] < 0) {
    return wf_err_raise("ValueError", "%s: number and repeat must be positive, min_repeat_ms and "
                                      "limit_zero_time_iterations not negative", fn);
  }
  /* A repeat lasts at least min_repeat_ms: more than the runtime's timer
   * budget could never be answered (it is the same for every peer). */
  uint32_t budget = wf_peer_timer_ms();
  if (v[4] > (int64_t)budget || v[3] * v[4] > (int64_t)budget) {
    return wf_err_raise("ValueError",
                        "%s: repeat %lld x min_repeat_ms %lld passes the runtime's timer budget of "
                        "%u ms, which every peer shares",
                        fn, (long long)v[3], (long long)v[4], (unsigned)budget);
  }
  wf_rpc_timer* t = (wf_rpc_timer*)calloc(1, sizeof(wf_rpc_timer));
  if (t == NULL) return wf_err_raise_oom(sizeof(wf_rpc_timer));
  t->dev.device_type = (DLDeviceType)v[0];
  t->dev.device_id = (int32_t)v[1];
  t->number = v[2];
  t->repeat = v[3];
  t->min_repeat_ms = v[4];
  t->limit_zero = v[5];
  TVMFFIAny found;
  wf_any_set_none(&found);
  int rc;
  if (args[0].type_index == kTVMFFIModule) {
    TVMFFIAny q[3] = {args[0], args[1], {0}};
    wf_any_set_bool(&q[2], 1);
    rc = wf_rpc_call_global("ffi.ModuleGetFunction", fn, q, 3, &found);
  } else if (args[0].type_index == kTVMFFINone) {
    rc = 0;
    if (wf_rpc_policy_allows(p, name.data, name.size)) {
      rc = TVMFFIFunctionGetGlobal(&name, (TVMFFIObjectHandle*)&found.v_obj);
      if (found.v_obj != NULL) found.type_index = kTVMFFIFunction;
    }
  } else {
    rc = wf_err_raise("TypeError", "%s: argument 0 must be a Module or None", fn);
  }
  if (rc == 0 && found.type_index != kTVMFFIFunction) {
    wf_any_release(&found);
    rc = wf_err_raise("ValueError", "%s: cannot find function '%.*s'", fn,
                      (int)(name.size > 200 ? 200 : name.size), name.data);
  }
  if (rc != 0) {
    wf_rpc_timer_free(t);
    return -1;
  }
  t->pf = found.v_obj;
  if (preproc.size > 0) {
    TVMFFIObjectHandle pre = NULL;
    if (wf_rpc_policy_allows(p, preproc.data, preproc.size) &&
        TVMFFIFunctionGetGlobal(&preproc, &pre) != 0) {
      wf_rpc_timer_free(t);
      return -1;
    }
    if (pre == NULL) {
      wf_rpc_timer_free(t);
      return wf_err_raise("ValueError", "%s: cannot find the preprocessor '%.*s'", fn,
                          (int)(preproc.size > 200 ? 200 : preproc.size), preproc.data);
    }
    t->preproc = (TVMFFIObject*)pre;
  }
  TVMFFIObject* timer = wf_func_new_direct(wf_rpc_timer_call, t, wf_rpc_timer_free);
  if (timer == NULL) {
    wf_rpc_timer_free(t);
    return -1;
  }
  wf_any_set_object(result, timer);
  return 0;
}

/* ------------------------------------------------------------------ lookup */
typedef struct {
  const char* name;
  TVMFFISafeCallType fn;
  int needs_upload; /* served only when the owner enables uploads */
} wf_rpc_server_entry;

static const wf_rpc_server_entry wf_rpc_server_entries[] = {
    {"tvm.rpc.server.upload", wf_rpc_upload, 1},
    {"tvm.rpc.server.download", wf_rpc_download, 1},
    {"tvm.rpc.server.remove", wf_rpc_remove, 1},
    {"tvm.rpc.server.listdir", wf_rpc_listdir, 1},
    {"tvm.rpc.server.load_module", wf_rpc_load_module, 1},
    {"tvm.rpc.server.ModuleGetFunction", wf_rpc_module_get_function, 0},
    {"tvm.rpc.server.GetCRTMaxPacketSize", wf_rpc_max_packet, 0},
    {"runtime.RPCTimeEvaluator", wf_rpc_time_evaluator, 0},
};

int wf_rpc_server_function(wf_rpc_policy* p, const char* name, size_t size, TVMFFIObject** out) {
  *out = NULL;
  for (size_t i = 0; i < sizeof(wf_rpc_server_entries) / sizeof(wf_rpc_server_entries[0]); ++i) {
    const wf_rpc_server_entry* e = &wf_rpc_server_entries[i];
    if (strlen(e->name) != size || memcmp(e->name, name, size) != 0) continue;
    if (e->needs_upload && !p->enable_upload) return 0;
    p->refs++;
    *out = wf_func_new_direct(e->fn, p, wf_rpc_policy_release_void);
    if (*out == NULL) {
      p->refs--;
      return -1;
    }
    return 0;
  }
  return 0;
}
