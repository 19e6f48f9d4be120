/* Errors: creation, backtraces, and the raised slot's ownership rules. */
#include <webffi/webffi.h>

#include "harness.h"

static TVMFFIErrorCell* cell_of(TVMFFIObjectHandle err) {
  return (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
}

static TVMFFIObjectHandle make_error(const char* kind, const char* message, const char* bt) {
  TVMFFIByteArray k = {kind, strlen(kind)}, m = {message, strlen(message)},
                  b = {bt, strlen(bt)};
  TVMFFIObjectHandle err = NULL;
  CHECK(TVMFFIErrorCreate(&k, &m, &b, &err) == 0);
  return err;
}

void error_create_holds_kind_message_backtrace(void) {
  TVMFFIObjectHandle err = make_error("ValueError", "bad value", "  File \"a.c\", line 1, in f\n");
  CHECK_EQ_INT(((TVMFFIObject*)err)->type_index, kTVMFFIError);
  TVMFFIErrorCell* cell = cell_of(err);
  CHECK_EQ_STR(cell->kind.data, "ValueError");
  CHECK_EQ_INT(cell->kind.size, 10);
  CHECK_EQ_STR(cell->message.data, "bad value");
  CHECK_EQ_STR(cell->backtrace.data, "  File \"a.c\", line 1, in f\n");
  CHECK(cell->cause_chain == NULL && cell->extra_context == NULL);
  TVMFFIObjectDecRef(err);
}

void error_update_backtrace_replace_and_append(void) {
  TVMFFIObjectHandle err = make_error("RuntimeError", "m", "  File \"inner.c\", line 2, in g\n");
  TVMFFIErrorCell* cell = cell_of(err);
  TVMFFIByteArray outer = {"  File \"outer.c\", line 9, in h\n", 32};
  cell->update_backtrace(err, &outer, kTVMFFIBacktraceUpdateModeAppend);
  CHECK_EQ_STR(cell->backtrace.data,
               "  File \"inner.c\", line 2, in g\n  File \"outer.c\", line 9, in h\n");
  cell->update_backtrace(err, &outer, kTVMFFIBacktraceUpdateModeReplace);
  CHECK_EQ_STR(cell->backtrace.data, "  File \"outer.c\", line 9, in h\n");
  TVMFFIObjectDecRef(err);
}

void error_cause_and_extra_context_are_held(void) {
  TVMFFIObjectHandle cause = make_error("KeyError", "inner", "");
  TVMFFIObjectHandle extra = make_error("RuntimeError", "context", "");
  TVMFFIByteArray k = {"ValueError", 10}, m = {"outer", 5};
  TVMFFIObjectHandle err = NULL;
  CHECK(TVMFFIErrorCreateWithCauseAndExtraContext(&k, &m, NULL, cause, extra, &err) == 0);
  CHECK(cell_of(err)->cause_chain == cause);
  CHECK(cell_of(err)->extra_context == extra);
  CHECK_EQ_INT(WebFFIObjectStrongCount(cause), 2);
  TVMFFIObjectDecRef(err);
  CHECK_EQ_INT(WebFFIObjectStrongCount(cause), 1);
  CHECK_EQ_INT(WebFFIObjectStrongCount(extra), 1);
  TVMFFIObjectDecRef(cause);
  TVMFFIObjectDecRef(extra);
}

void error_set_raised_takes_its_own_reference(void) {
  TVMFFIObjectHandle err = make_error("TypeError", "t", "");
  TVMFFIErrorSetRaised(err);
  CHECK_EQ_INT(WebFFIObjectStrongCount(err), 2);
  TVMFFIObjectDecRef(err);
  TVMFFIObjectHandle moved = NULL;
  TVMFFIErrorMoveFromRaised(&moved);
  CHECK(moved == err);
  CHECK_EQ_INT(WebFFIObjectStrongCount(moved), 1);
  /* the slot is empty now */
  TVMFFIObjectHandle again = (TVMFFIObjectHandle)1;
  TVMFFIErrorMoveFromRaised(&again);
  CHECK(again == NULL);
  TVMFFIObjectDecRef(moved);
}

void error_set_raised_replaces_previous(void) {
  TVMFFIObjectHandle first = make_error("TypeError", "first", "");
  TVMFFIErrorSetRaised(first);
  TVMFFIErrorSetRaisedFromCStr("ValueError", "second");
  CHECK_EQ_INT(WebFFIObjectStrongCount(first), 1);
  CHECK_RAISED("ValueError", "second");
  TVMFFIObjectDecRef(first);
}

void error_from_cstr_parts_concatenates_skipping_null(void) {
  const char* parts[] = {"a", NULL, "b", "", "c"};
  TVMFFIErrorSetRaisedFromCStrParts("IndexError", parts, 5);
  CHECK_RAISED("IndexError", "abc");
}

/* Not static: with -rdynamic the native backtrace can name it. The empty asm
 * after the call keeps optimised builds from turning it into a tail call. */
__attribute__((noinline)) void raise_from_named_frame(void) {
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "from C");
  __asm__ volatile("");
}

void error_from_cstr_captures_backtrace(void) {
  raise_from_named_frame();
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  TVMFFIErrorCell* cell = cell_of(err);
  CHECK_EQ_STR(cell->kind.data, "RuntimeError");
  const char* bt = cell->backtrace.data;
  /* most recent first: the raising frame leads, runtime frames are left out */
  CHECK(strncmp(bt, "  File \"", 8) == 0);
  CHECK(strstr(bt, "in raise_from_named_frame\n") != NULL);
  CHECK(strstr(bt, "in TVMFFIErrorSetRaisedFromCStr") == NULL);
  CHECK(strstr(bt, "in wf_") == NULL);
  CHECK(strstr(bt, "in raise_from_named_frame") < strstr(bt, "in error_from_cstr_captures_backtrace"));
  TVMFFIObjectDecRef(err);
}

void error_backtrace_leads_with_given_frame(void) {
  const TVMFFIByteArray* bt = TVMFFIBacktrace("kernel.c", 12, "my_kernel", 0);
  CHECK(strncmp(bt->data, "  File \"kernel.c\", line 12, in my_kernel\n", 41) == 0);
}

/* Not static (named by the native backtrace with -rdynamic): the frame a
 * TVMFFIBacktrace call names stands for this function's own. */
__attribute__((noinline)) const TVMFFIByteArray* name_a_frame(const char* file, int line) {
  const TVMFFIByteArray* bt = TVMFFIBacktrace(file, line, "named", 0);
  __asm__ volatile("");
  return bt;
}

void error_backtrace_named_frame_stands_for_its_caller(void) {
  const TVMFFIByteArray* bt = name_a_frame("kernel.c", 12);
  const char* want = "  File \"kernel.c\", line 12, in named\n";
  CHECK(strncmp(bt->data, want, strlen(want)) == 0);
  /* upstream counts the named frame as its caller's: not listed twice */
  CHECK(strstr(bt->data, "in name_a_frame") == NULL);
  CHECK(strstr(bt->data, "in error_backtrace_named_frame_stands_for_its_caller") != NULL);
}

void error_backtrace_says_when_a_frame_has_no_line(void) {
  const TVMFFIByteArray* bt = name_a_frame("kernel.c", 0);
  const char* want = "  File \"kernel.c\", line unknown, in named\n";
  CHECK(strncmp(bt->data, want, strlen(want)) == 0);
  CHECK(strstr(bt->data, "line 0,") == NULL);
}

void error_backtrace_leaves_out_a_named_plumbing_frame(void) {
  /* TVM_FFI_THROW inside upstream's typed-function wrappers: left out, as upstream does */
  const TVMFFIByteArray* bt = name_a_frame("/tvm-ffi/include/tvm/ffi/function_details.h", 5);
  CHECK(strstr(bt->data, "function_details.h") == NULL);
  CHECK(strstr(bt->data, "in name_a_frame") == NULL);
}

void error_create_failure_leaves_slot_untouched(void) {
  TVMFFIErrorSetRaisedFromCStr("KeyError", "still here");
  install_counting_allocator();
  g_alloc.fail = 1;
  TVMFFIByteArray k = {"ValueError", 10}, m = {"lost", 4};
  TVMFFIObjectHandle err = NULL;
  CHECK(TVMFFIErrorCreate(&k, &m, NULL, &err) == -1);
  CHECK(err == NULL);
  restore_allocator();
  CHECK_RAISED("KeyError", "still here");
}
