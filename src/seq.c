/* Array and List storage and their ffi.* global functions. */
#include "seq.h"

#include <stdlib.h>
#include <string.h>
#include <webffi/typed_call.h>

#include "any.h"
#include "error.h"
#include "global_registry.h"
#include "nesting.h"

/* Elements live in a separate block so a List can grow in place. */
static void wf_seq_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFISeqCell* cell = WF_OBJ_CELL(self, TVMFFISeqCell);
    TVMFFIAny* data = (TVMFFIAny*)cell->data;
    for (int64_t i = 0; i < cell->size; ++i) {
      if (wf_any_is_object(&data[i])) wf_any_release(&data[i]);
    }
    if (cell->data_deleter != NULL) cell->data_deleter(cell->data);
    cell->data = NULL;
    cell->size = cell->capacity = 0;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

int32_t* wf_seq_nesting(TVMFFIObject* seq) {
  if (seq->deleter == wf_seq_deleter) return (int32_t*)(wf_seq_cell(seq) + 1);
  static _Thread_local int32_t foreign;
  foreign = 0;
  return &foreign;
}

static const char* wf_seq_name(TVMFFIObject* seq) {
  return seq->type_index == kTVMFFIList ? "ffi.List" : "ffi.Array";
}

/* Raises a ValueError unless seq can hold v without nesting too deep. */
static int wf_seq_take(TVMFFIObject* seq, const TVMFFIAny* v) {
  return wf_nesting_take(wf_seq_nesting(seq), v, wf_seq_name(seq));
}

static int wf_seq_reserve(TVMFFIObject* seq, int64_t need) {
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  if (need <= cell->capacity) return 0;
  if ((uint64_t)need > SIZE_MAX / sizeof(TVMFFIAny) / 2) {
    return wf_err_raise_oom((uint64_t)need > UINT64_MAX / sizeof(TVMFFIAny)
                                ? UINT64_MAX
                                : (uint64_t)need * sizeof(TVMFFIAny));
  }
  int64_t cap = cell->capacity ? cell->capacity : 4;
  while (cap < need) cap *= 2;
  void* data = realloc(cell->data, (size_t)cap * sizeof(TVMFFIAny));
  if (data == NULL) return wf_err_raise_oom((size_t)cap * sizeof(TVMFFIAny));
  cell->data = data;
  cell->capacity = cap;
  cell->data_deleter = free;
  return 0;
}

TVMFFIObject* wf_seq_new(int32_t type_index, int64_t capacity) {
  TVMFFIObject* seq = wf_obj_alloc(sizeof(TVMFFIObject) + sizeof(TVMFFISeqCell) + sizeof(int32_t),
                                   8, type_index, wf_seq_deleter);
  if (seq == NULL) return NULL;
  if (capacity > 0 && wf_seq_reserve(seq, capacity) != 0) {
    wf_obj_decref(seq);
    return NULL;
  }
  return seq;
}

int wf_seq_push_owned(TVMFFIObject* seq, TVMFFIAny* value) {
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  if (wf_seq_take(seq, value) != 0 || wf_seq_reserve(seq, cell->size + 1) != 0) {
    wf_any_release(value);
    return -1;
  }
  ((TVMFFIAny*)cell->data)[cell->size++] = *value;
  return 0;
}

int wf_seq_push(TVMFFIObject* seq, const TVMFFIAny* value) {
  TVMFFIAny owned;
  if (TVMFFIAnyViewToOwnedAny(value, &owned) != 0) return -1;
  return wf_seq_push_owned(seq, &owned);
}

int wf_seq_check_index(TVMFFIObject* seq, int64_t i) {
  int64_t size = wf_seq_size(seq);
  if (i < 0 || i >= size) {
    return wf_err_raise("IndexError", "Index %lld out of bounds %lld", (long long)i,
                        (long long)size);
  }
  return 0;
}

int wf_seq_insert(TVMFFIObject* seq, int64_t i, const TVMFFIAny* value) {
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  if (i < 0 || i > cell->size) {
    return wf_err_raise("IndexError", "Index %lld out of bounds %lld", (long long)i,
                        (long long)cell->size);
  }
  if (wf_seq_take(seq, value) != 0) return -1;
  TVMFFIAny owned;
  if (TVMFFIAnyViewToOwnedAny(value, &owned) != 0) return -1;
  if (wf_seq_reserve(seq, cell->size + 1) != 0) {
    wf_any_release(&owned);
    return -1;
  }
  TVMFFIAny* data = (TVMFFIAny*)cell->data;
  memmove(&data[i + 1], &data[i], (size_t)(cell->size - i) * sizeof(TVMFFIAny));
  data[i] = owned;
  ++cell->size;
  return 0;
}

int wf_seq_set(TVMFFIObject* seq, int64_t i, const TVMFFIAny* value) {
  if (wf_seq_check_index(seq, i) != 0 || wf_seq_take(seq, value) != 0) return -1;
  TVMFFIAny owned;
  if (TVMFFIAnyViewToOwnedAny(value, &owned) != 0) return -1;
  /* Release after storing: the old element may be what keeps value alive. */
  TVMFFIAny old = wf_seq_data(seq)[i];
  wf_seq_data(seq)[i] = owned;
  wf_any_release(&old);
  return 0;
}

void wf_seq_erase(TVMFFIObject* seq, int64_t i) {
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  TVMFFIAny* data = (TVMFFIAny*)cell->data;
  TVMFFIAny old = data[i];
  memmove(&data[i], &data[i + 1], (size_t)(cell->size - i - 1) * sizeof(TVMFFIAny));
  if (--cell->size == 0) *wf_seq_nesting(seq) = 0;
  wf_any_release(&old);
}

void wf_seq_clear(TVMFFIObject* seq) {
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  /* Detach first: releasing an element may run code that reads this list. */
  *wf_seq_nesting(seq) = 0;
  while (cell->size > 0) {
    TVMFFIAny old = ((TVMFFIAny*)cell->data)[--cell->size];
    wf_any_release(&old);
  }
}

TVMFFIObject* wf_seq_copy(TVMFFIObject* seq, int32_t type_index) {
  int64_t n = wf_seq_size(seq);
  TVMFFIObject* out = wf_seq_new(type_index, n);
  if (out == NULL) return NULL;
  for (int64_t i = 0; i < n; ++i) {
    if (wf_seq_push(out, &wf_seq_data(seq)[i]) != 0) {
      wf_obj_decref(out);
      return NULL;
    }
  }
  return out;
}

int wf_seq_make_unique(TVMFFIObject** seq) {
  if (wf_obj_strong_count(*seq) == 1) return 0;
  TVMFFIObject* copy = wf_seq_copy(*seq, (*seq)->type_index);
  if (copy == NULL) return -1;
  wf_obj_decref(*seq);
  *seq = copy;
  return 0;
}

/* ------------------------------------------------------ global functions */
static int wf_seq_from_args(int32_t type_index, const TVMFFIAny* args, int32_t n,
                            TVMFFIAny* result) {
  TVMFFIObject* seq = wf_seq_new(type_index, n);
  if (seq == NULL) return -1;
  /* The capacity is reserved: elements go straight in, values below
   * kTVMFFIRawStr (None, numbers, pointers, dtypes, devices) by plain copy.
   * The common all-POD loop does nothing else per element: the size and the
   * nesting (1 for any element, more under a container) are stored once. */
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  TVMFFIAny* data = (TVMFFIAny*)cell->data;
  int32_t nesting = n > 0 ? 1 : 0;
  for (int32_t i = 0; i < n; ++i) {
    const TVMFFIAny* a = &args[i];
    if (a->type_index < kTVMFFIRawStr) {
      data[i] = *a;
      continue;
    }
    cell->size = i; /* what a failure below releases */
    if (wf_nesting_take(&nesting, a, wf_seq_name(seq)) != 0 ||
        TVMFFIAnyViewToOwnedAny(a, &data[i]) != 0) {
      wf_obj_decref(seq);
      return -1;
    }
  }
  cell->size = n;
  *wf_seq_nesting(seq) = nesting;
  wf_any_set_object(result, seq);
  return 0;
}

static int wf_array_ctor(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_seq_from_args(kTVMFFIArray, args, n, result);
}

static int wf_list_ctor(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  return wf_seq_from_args(kTVMFFIList, args, n, result);
}

/* One signature per function; `self` of each Function points at it. */
typedef struct {
  WebFFISignature sig;
  int32_t seq_type; /* kTVMFFIArray or kTVMFFIList */
} wf_seq_fn;

static int wf_seq_args(const wf_seq_fn* fn, const TVMFFIAny* args, int32_t n,
                       TVMFFIObject** seq) {
  if (WebFFICheckNumArgs(&fn->sig, n) != 0) return -1;
  return WebFFIArgToObject(&fn->sig, args, 0, fn->seq_type, (TVMFFIObjectHandle*)seq);
}

/* The sequence (argument 0) and an int index (argument 1). */
static int wf_seq_index_args(const wf_seq_fn* fn, const TVMFFIAny* args, int32_t n,
                             TVMFFIObject** seq, int64_t* i) {
  if (wf_seq_args(fn, args, n, seq) != 0) return -1;
  return WebFFIArgToInt(&fn->sig, args, 1, i);
}

static int wf_seq_get_item(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* seq;
  int64_t i;
  if (wf_seq_index_args((const wf_seq_fn*)self, args, n, &seq, &i) != 0) return -1;
  if (wf_seq_check_index(seq, i) != 0) return -1;
  return TVMFFIAnyViewToOwnedAny(&wf_seq_data(seq)[i], result);
}

static int wf_seq_size_fn(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* seq;
  if (wf_seq_args((const wf_seq_fn*)self, args, n, &seq) != 0) return -1;
  wf_any_set_int(result, wf_seq_size(seq));
  return 0;
}

static int wf_seq_contains(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* seq;
  if (wf_seq_args((const wf_seq_fn*)self, args, n, &seq) != 0) return -1;
  int found = 0;
  for (int64_t i = 0; i < wf_seq_size(seq) && !found; ++i) {
    found = wf_any_equal(&wf_seq_data(seq)[i], &args[1]);
  }
  wf_any_set_bool(result, found);
  return 0;
}

static int wf_list_append(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* seq;
  if (wf_seq_args((const wf_seq_fn*)self, args, n, &seq) != 0) return -1;
  return wf_seq_push(seq, &args[1]);
}

static int wf_list_set_item(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* seq;
  int64_t i;
  if (wf_seq_index_args((const wf_seq_fn*)self, args, n, &seq, &i) != 0) return -1;
  return wf_seq_set(seq, i, &args[2]);
}

static int wf_list_insert(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* seq;
  int64_t i;
  if (wf_seq_index_args((const wf_seq_fn*)self, args, n, &seq, &i) != 0) return -1;
  return wf_seq_insert(seq, i, &args[2]);
}

static int wf_list_pop(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* seq;
  int64_t i;
  if (wf_seq_index_args((const wf_seq_fn*)self, args, n, &seq, &i) != 0) return -1;
  if (wf_seq_check_index(seq, i) != 0) return -1;
  if (TVMFFIAnyViewToOwnedAny(&wf_seq_data(seq)[i], result) != 0) return -1;
  wf_seq_erase(seq, i);
  return 0;
}

static int wf_list_erase(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* seq;
  int64_t i;
  if (wf_seq_index_args((const wf_seq_fn*)self, args, n, &seq, &i) != 0) return -1;
  if (wf_seq_check_index(seq, i) != 0) return -1;
  wf_seq_erase(seq, i);
  return 0;
}

/* [start, stop) must lie within the list. */
static int wf_list_range(TVMFFIObject* seq, int64_t start, int64_t stop) {
  int64_t size = wf_seq_size(seq);
  if (start < 0 || start > stop || stop > size) {
    return wf_err_raise("IndexError", "Range [%lld, %lld) out of bounds %lld", (long long)start,
                        (long long)stop, (long long)size);
  }
  return 0;
}

/* Removes [start, stop); the elements are released after the list is
 * consistent again, since releasing may run code that reads it. */
static int wf_list_cut(TVMFFIObject* seq, int64_t start, int64_t stop) {
  int64_t n = stop - start;
  if (n == 0) return 0;
  TVMFFIAny* removed = (TVMFFIAny*)malloc((size_t)n * sizeof(TVMFFIAny));
  if (removed == NULL) return wf_err_raise_oom((size_t)n * sizeof(TVMFFIAny));
  TVMFFISeqCell* cell = wf_seq_cell(seq);
  TVMFFIAny* data = (TVMFFIAny*)cell->data;
  memcpy(removed, &data[start], (size_t)n * sizeof(TVMFFIAny));
  memmove(&data[start], &data[stop], (size_t)(cell->size - stop) * sizeof(TVMFFIAny));
  cell->size -= n;
  for (int64_t i = 0; i < n; ++i) wf_any_release(&removed[i]);
  free(removed);
  return 0;
}

static int wf_list_erase_range(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  const wf_seq_fn* fn = (const wf_seq_fn*)self;
  TVMFFIObject* seq;
  int64_t start, stop;
  if (wf_seq_index_args(fn, args, n, &seq, &start) != 0 ||
      WebFFIArgToInt(&fn->sig, args, 2, &stop) != 0 || wf_list_range(seq, start, stop) != 0) {
    return -1;
  }
  return wf_list_cut(seq, start, stop);
}

/* list[start:stop] = replacement, where replacement may be the list itself. */
static int wf_list_replace_slice(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  const wf_seq_fn* fn = (const wf_seq_fn*)self;
  TVMFFIObject *seq, *replacement;
  int64_t start, stop;
  if (wf_seq_index_args(fn, args, n, &seq, &start) != 0 ||
      WebFFIArgToInt(&fn->sig, args, 2, &stop) != 0 ||
      WebFFIArgToObject(&fn->sig, args, 3, kTVMFFIList, (TVMFFIObjectHandle*)&replacement) != 0 ||
      wf_list_range(seq, start, stop) != 0) {
    return -1;
  }
  /* A snapshot keeps the elements alive and unchanged while seq changes. */
  TVMFFIObject* items = wf_seq_copy(replacement, kTVMFFIList);
  if (items == NULL) return -1;
  int64_t m = wf_seq_size(items);
  int rc = 0;
  for (int64_t i = 0; i < m && rc == 0; ++i) rc = wf_seq_take(seq, &wf_seq_data(items)[i]);
  if (rc == 0) rc = wf_seq_reserve(seq, wf_seq_size(seq) - (stop - start) + m);
  if (rc == 0) rc = wf_list_cut(seq, start, stop);
  if (rc == 0) {
    /* open a gap of m at start and fill it; items are owned, so the copies
     * only add references and cannot fail */
    TVMFFISeqCell* cell = wf_seq_cell(seq);
    TVMFFIAny* data = (TVMFFIAny*)cell->data;
    memmove(&data[start + m], &data[start], (size_t)(cell->size - start) * sizeof(TVMFFIAny));
    for (int64_t i = 0; i < m; ++i) TVMFFIAnyViewToOwnedAny(&wf_seq_data(items)[i], &data[start + i]);
    cell->size += m;
  }
  wf_obj_decref(items);
  return rc;
}

static int wf_list_reverse(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* seq;
  if (wf_seq_args((const wf_seq_fn*)self, args, n, &seq) != 0) return -1;
  TVMFFIAny* data = wf_seq_data(seq);
  for (int64_t i = 0, j = wf_seq_size(seq) - 1; i < j; ++i, --j) {
    TVMFFIAny t = data[i];
    data[i] = data[j];
    data[j] = t;
  }
  return 0;
}

static int wf_list_clear(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* seq;
  if (wf_seq_args((const wf_seq_fn*)self, args, n, &seq) != 0) return -1;
  wf_seq_clear(seq);
  return 0;
}

static const char* const wf_seq_array_int[] = {"ffi.Array", "int"};
static const char* const wf_seq_array_any[] = {"ffi.Array", "Any"};
static const char* const wf_seq_list_int[] = {"ffi.List", "int"};
static const char* const wf_seq_list_any[] = {"ffi.List", "Any"};
static const char* const wf_seq_list_int_any[] = {"ffi.List", "int", "Any"};
static const char* const wf_seq_list_range[] = {"ffi.List", "int", "int", "ffi.List"};

static const struct {
  wf_seq_fn fn;
  TVMFFISafeCallType call;
} wf_seq_globals[] = {
    {{{"ffi.ArrayGetItem", 2, wf_seq_array_int, "Any"}, kTVMFFIArray}, wf_seq_get_item},
    {{{"ffi.ArraySize", 1, wf_seq_array_any, "int"}, kTVMFFIArray}, wf_seq_size_fn},
    {{{"ffi.ArrayContains", 2, wf_seq_array_any, "bool"}, kTVMFFIArray}, wf_seq_contains},
    {{{"ffi.ListGetItem", 2, wf_seq_list_int, "Any"}, kTVMFFIList}, wf_seq_get_item},
    {{{"ffi.ListSize", 1, wf_seq_list_any, "int"}, kTVMFFIList}, wf_seq_size_fn},
    {{{"ffi.ListContains", 2, wf_seq_list_any, "bool"}, kTVMFFIList}, wf_seq_contains},
    {{{"ffi.ListAppend", 2, wf_seq_list_any, "None"}, kTVMFFIList}, wf_list_append},
    {{{"ffi.ListSetItem", 3, wf_seq_list_int_any, "None"}, kTVMFFIList}, wf_list_set_item},
    {{{"ffi.ListInsert", 3, wf_seq_list_int_any, "None"}, kTVMFFIList}, wf_list_insert},
    {{{"ffi.ListPop", 2, wf_seq_list_int, "Any"}, kTVMFFIList}, wf_list_pop},
    {{{"ffi.ListErase", 2, wf_seq_list_int, "None"}, kTVMFFIList}, wf_list_erase},
    {{{"ffi.ListClear", 1, wf_seq_list_any, "None"}, kTVMFFIList}, wf_list_clear},
    {{{"ffi.ListEraseRange", 3, wf_seq_list_range, "None"}, kTVMFFIList}, wf_list_erase_range},
    {{{"ffi.ListReplaceSlice", 4, wf_seq_list_range, "None"}, kTVMFFIList},
     wf_list_replace_slice},
    {{{"ffi.ListReverse", 1, wf_seq_list_any, "None"}, kTVMFFIList}, wf_list_reverse},
};

int wf_seq_register(void) {
  if (wf_global_register("ffi.Array", wf_array_ctor, NULL) != 0) return -1;
  if (wf_global_register("ffi.List", wf_list_ctor, NULL) != 0) return -1;
  for (size_t i = 0; i < sizeof(wf_seq_globals) / sizeof(wf_seq_globals[0]); ++i) {
    if (wf_global_register_with_self(wf_seq_globals[i].fn.sig.name, wf_seq_globals[i].call,
                                     (void*)&wf_seq_globals[i].fn) != 0) {
      return -1;
    }
  }
  return 0;
}
