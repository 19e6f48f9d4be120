/* TVMFFIHandleInitOnce / TVMFFIHandleDeinitOnce: static handles for code
 * without static initialisers (DSL output). One process-wide lock
 * serialises the init functions; deinit takes the handle out atomically,
 * so exactly one caller runs deinit_func on it. */
#include <stddef.h>
#include <tvm/ffi/c_api.h>

#include "error.h"
#include "platform.h"
#include "unwind.h"

static int wf_once_lock; /* 0 free, 1 held (compiler atomics) */
/* Set while this thread runs an init function: a nested call would
 * wait forever on the lock it holds, so it raises instead. */
#define wf_once_holder (wf_counters.once_held) /* unwind.h */

static int wf_once_acquire(void) {
  if (wf_once_holder) {
    return wf_err_raise("RuntimeError",
                        "TVMFFIHandleInitOnce: called from inside another handle's init_func");
  }
  while (__atomic_test_and_set(&wf_once_lock, __ATOMIC_ACQUIRE)) {
  }
  wf_once_holder = 1;
  return 0;
}

static void wf_once_release(void) {
  wf_once_holder = 0;
  __atomic_clear(&wf_once_lock, __ATOMIC_RELEASE);
}

/* After an unwind (unwind.h): a lock taken by a skipped frame is freed. */
void wf_once_unwind(int32_t held) {
  if (!held && wf_once_holder) wf_once_release();
}

int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result)) {
  if (handle_addr == NULL || init_func == NULL) {
    return wf_err_raise("ValueError", "TVMFFIHandleInitOnce: NULL argument");
  }
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) != NULL) return 0;
  if (wf_once_acquire() != 0) return -1;
  int rc = 0;
  if (*handle_addr == NULL) {
    void* result = NULL;
    rc = init_func(&result);
    if (rc == 0 && result == NULL) {
      rc = wf_err_raise("RuntimeError", "init_func must return a non-NULL handle");
    }
    if (rc == 0) __atomic_store_n(handle_addr, result, __ATOMIC_RELEASE);
  }
  wf_once_release();
  return rc;
}

int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit_func)(void* handle)) {
  if (handle_addr == NULL || deinit_func == NULL) {
    return wf_err_raise("ValueError", "TVMFFIHandleDeinitOnce: NULL argument");
  }
  void* handle = __atomic_exchange_n(handle_addr, NULL, __ATOMIC_ACQ_REL);
  return handle != NULL ? deinit_func(handle) : 0;
}
