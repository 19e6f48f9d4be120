/* The environment API: streams, the DLPack tensor allocator, signals and
 * symbol tables for system libraries and C API extensions. */
#include "env.h"

#include <stdlib.h>
#include <string.h>
#include <webffi/module.h>

#include "error.h"
#include "platform.h"
#include "strmap.h"

/* ----------------------------------------------------------------- streams */
typedef struct {
  int32_t device_type;
  int32_t device_id;
  TVMFFIStreamHandle stream;
} wf_env_stream;

static WF_THREAD_LOCAL wf_env_stream* wf_env_streams;
static WF_THREAD_LOCAL size_t wf_env_streams_count;

static wf_env_stream* wf_env_find_stream(int32_t device_type, int32_t device_id) {
  for (size_t i = 0; i < wf_env_streams_count; ++i) {
    if (wf_env_streams[i].device_type == device_type && wf_env_streams[i].device_id == device_id) {
      return &wf_env_streams[i];
    }
  }
  return NULL;
}

int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                       TVMFFIStreamHandle* opt_out_original_stream) {
  wf_env_stream* s = wf_env_find_stream(device_type, device_id);
  if (opt_out_original_stream != NULL) *opt_out_original_stream = s != NULL ? s->stream : NULL;
  if (s != NULL) {
    s->stream = stream;
    return 0;
  }
  wf_env_stream* grown = (wf_env_stream*)realloc(
      wf_env_streams, (wf_env_streams_count + 1) * sizeof(wf_env_stream));
  if (grown == NULL) return wf_err_raise_oom((wf_env_streams_count + 1) * sizeof(wf_env_stream));
  wf_env_streams = grown;
  wf_env_streams[wf_env_streams_count++] = (wf_env_stream){device_type, device_id, stream};
  return 0;
}

TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  wf_env_stream* s = wf_env_find_stream(device_type, device_id);
  return s != NULL ? s->stream : NULL;
}

/* -------------------------------------------------------- tensor allocator */
/* The thread's own setting wins over the global one. */
static DLPackManagedTensorAllocator wf_env_global_allocator;
static WF_THREAD_LOCAL DLPackManagedTensorAllocator wf_env_thread_allocator;

int TVMFFIEnvSetDLPackManagedTensorAllocator(DLPackManagedTensorAllocator allocator,
                                             int write_to_global_context,
                                             DLPackManagedTensorAllocator* opt_out_original) {
  if (opt_out_original != NULL) *opt_out_original = TVMFFIEnvGetDLPackManagedTensorAllocator();
  if (write_to_global_context) {
    wf_env_global_allocator = allocator;
  } else {
    wf_env_thread_allocator = allocator;
  }
  return 0;
}

DLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void) {
  return wf_env_thread_allocator != NULL ? wf_env_thread_allocator : wf_env_global_allocator;
}

/* ----------------------------------------------------------------- signals */
/* There are no asynchronous signals in wasm; hosts interrupt between calls. */
int TVMFFIEnvCheckSignals(void) { return 0; }

/* ----------------------------------------------------------------- symbols */
static wf_strmap wf_env_capi_symbols;
static wf_strmap wf_env_system_lib_symbols;
static wf_strmap wf_env_context_symbols;

static int wf_env_register(wf_strmap* table, const char* what, const char* name, void* symbol) {
  if (name == NULL || symbol == NULL) {
    return wf_err_raise("ValueError", "%s: name and symbol must not be NULL", what);
  }
  size_t n = 0;
  while (name[n] != '\0') ++n;
  return wf_strmap_put(table, name, n, symbol);
}

int TVMFFIEnvRegisterCAPI(const char* name, void* symbol) {
  return wf_env_register(&wf_env_capi_symbols, "TVMFFIEnvRegisterCAPI", name, symbol);
}

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol) {
  return wf_env_register(&wf_env_system_lib_symbols, "TVMFFIEnvModRegisterSystemLibSymbol", name,
                         symbol);
}

/* Context symbols also in registration order (a name again is listed
 * again), for WebFFIEnvVisitContextSymbols. */
typedef struct {
  char* name;
  void* symbol;
} wf_env_context_entry;

static wf_env_context_entry* wf_env_context_list;
static size_t wf_env_context_count;

int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol) {
  if (wf_env_register(&wf_env_context_symbols, "TVMFFIEnvModRegisterContextSymbol", name,
                      symbol) != 0) {
    return -1;
  }
  size_t n = strlen(name);
  char* copy = (char*)malloc(n + 1);
  wf_env_context_entry* grown = (wf_env_context_entry*)realloc(
      wf_env_context_list, (wf_env_context_count + 1) * sizeof(wf_env_context_entry));
  if (grown != NULL) wf_env_context_list = grown;
  if (copy == NULL || grown == NULL) {
    free(copy);
    return wf_err_raise_oom(n + 1 + sizeof(wf_env_context_entry));
  }
  memcpy(copy, name, n + 1);
  wf_env_context_list[wf_env_context_count++] = (wf_env_context_entry){copy, symbol};
  return 0;
}

int WebFFIEnvVisitContextSymbols(int (*visit)(const char* name, void* symbol, void* ctx),
                                 void* ctx) {
  if (visit == NULL) return wf_err_raise("ValueError", "WebFFIEnvVisitContextSymbols: visit is NULL");
  /* a count taken first: symbols registered by the visitor are not visited */
  size_t count = wf_env_context_count;
  for (size_t i = 0; i < count; ++i) {
    int rc = visit(wf_env_context_list[i].name, wf_env_context_list[i].symbol, ctx);
    if (rc != 0) return rc;
  }
  return 0;
}

void* wf_env_system_lib_symbol(const char* name, size_t name_len) {
  return wf_strmap_get(&wf_env_system_lib_symbols, name, name_len);
}

void* wf_env_context_symbol(const char* name, size_t name_len) {
  return wf_strmap_get(&wf_env_context_symbols, name, name_len);
}
