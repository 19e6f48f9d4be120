/* TVMFFIHandleInitOnce / TVMFFIHandleDeinitOnce. */
#include "harness.h"

static int g_inits, g_deinits;
static int g_token;
static void* g_nested_handle;

static int init_ok(void** result) {
  ++g_inits;
  *result = &g_token;
  return 0;
}

static int init_fails(void** result) {
  (void)result;
  ++g_inits;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "cannot make the handle");
  return -1;
}

static int init_returns_null(void** result) {
  *result = NULL;
  return 0;
}

static int init_nested(void** result) {
  /* would wait on the lock this call holds */
  if (TVMFFIHandleInitOnce(&g_nested_handle, init_ok) != 0) return -1;
  *result = &g_token;
  return 0;
}

static int deinit_ok(void* handle) {
  CHECK(handle == &g_token);
  ++g_deinits;
  return 0;
}

static int deinit_fails(void* handle) {
  (void)handle;
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "cannot release");
  return -1;
}

void handle_init_once_runs_init_once(void) {
  void* handle = NULL;
  g_inits = g_deinits = 0;
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_ok), 0);
  CHECK(handle == &g_token);
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_ok), 0);
  CHECK_EQ_INT(g_inits, 1);
  CHECK_EQ_INT(TVMFFIHandleDeinitOnce(&handle, deinit_ok), 0);
  CHECK(handle == NULL);
  CHECK_EQ_INT(TVMFFIHandleDeinitOnce(&handle, deinit_ok), 0);
  CHECK_EQ_INT(g_deinits, 1);
  /* a released handle can be made again */
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_ok), 0);
  CHECK_EQ_INT(g_inits, 2);
  CHECK_EQ_INT(TVMFFIHandleDeinitOnce(&handle, deinit_ok), 0);
}

void handle_init_once_failures_are_raised(void) {
  void* handle = NULL;
  g_inits = 0;
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_fails), -1);
  CHECK_RAISED("ValueError", "cannot make the handle");
  CHECK(handle == NULL);
  /* a failed init is tried again next time */
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_fails), -1);
  CHECK_RAISED("ValueError", "cannot make the handle");
  CHECK_EQ_INT(g_inits, 2);
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_returns_null), -1);
  CHECK_RAISED("RuntimeError", "init_func must return a non-NULL handle");
  CHECK(handle == NULL);
  CHECK_EQ_INT(TVMFFIHandleInitOnce(NULL, init_ok), -1);
  CHECK_RAISED("ValueError", "TVMFFIHandleInitOnce: NULL argument");
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, NULL), -1);
  CHECK_RAISED("ValueError", "TVMFFIHandleInitOnce: NULL argument");
  CHECK_EQ_INT(TVMFFIHandleDeinitOnce(NULL, deinit_ok), -1);
  CHECK_RAISED("ValueError", "TVMFFIHandleDeinitOnce: NULL argument");
  /* the handle is taken out before deinit_func runs, failed or not */
  handle = &g_token;
  CHECK_EQ_INT(TVMFFIHandleDeinitOnce(&handle, deinit_fails), -1);
  CHECK_RAISED("RuntimeError", "cannot release");
  CHECK(handle == NULL);
}

void handle_init_once_nested_call_raises(void) {
  void* handle = NULL;
  g_nested_handle = NULL;
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_nested), -1);
  CHECK_RAISED("RuntimeError",
               "TVMFFIHandleInitOnce: called from inside another handle's init_func");
  CHECK(handle == NULL);
  CHECK(g_nested_handle == NULL);
  /* the lock was released */
  CHECK_EQ_INT(TVMFFIHandleInitOnce(&handle, init_ok), 0);
  CHECK(handle == &g_token);
}
