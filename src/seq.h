/* Array (immutable, copy-on-write) and List (mutable, shared): both hold a
 * TVMFFISeqCell of unboxed TVMFFIAny elements. */
#ifndef WEBFFI_SRC_SEQ_H_
#define WEBFFI_SRC_SEQ_H_

#include <tvm/ffi/c_api.h>

#include "object.h"

static inline TVMFFISeqCell* wf_seq_cell(TVMFFIObject* seq) {
  return WF_OBJ_CELL(seq, TVMFFISeqCell);
}
static inline TVMFFIAny* wf_seq_data(TVMFFIObject* seq) {
  return (TVMFFIAny*)wf_seq_cell(seq)->data;
}
static inline int64_t wf_seq_size(TVMFFIObject* seq) { return wf_seq_cell(seq)->size; }
/* The nesting recorded for the sequence (src/nesting.h), after its cell.
 * An Array or List C++ made on upstream's headers (its own layout, no such
 * record) gets a scratch record reading 0: writes to it are dropped, and
 * the recursive operations still count their own depth. */
int32_t* wf_seq_nesting(TVMFFIObject* seq);

/* An empty Array or List (type_index) with room for `capacity` elements;
 * NULL with MemoryError raised on failure. */
TVMFFIObject* wf_seq_new(int32_t type_index, int64_t capacity);

/* Appends a copy of a value (views become owned: RawStr -> String). */
int wf_seq_push(TVMFFIObject* seq, const TVMFFIAny* value);
/* Appends an owned value, taking over its reference (also on failure). */
int wf_seq_push_owned(TVMFFIObject* seq, TVMFFIAny* value);
/* Inserts before index i (0 <= i <= size). */
int wf_seq_insert(TVMFFIObject* seq, int64_t i, const TVMFFIAny* value);
/* Replaces element i with a copy of value. */
int wf_seq_set(TVMFFIObject* seq, int64_t i, const TVMFFIAny* value);
/* Removes element i. */
void wf_seq_erase(TVMFFIObject* seq, int64_t i);
void wf_seq_clear(TVMFFIObject* seq);

/* IndexError `Index I out of bounds SIZE` unless 0 <= i < size. */
int wf_seq_check_index(TVMFFIObject* seq, int64_t i);

/* A new sequence of type_index with the same elements (shallow). */
TVMFFIObject* wf_seq_copy(TVMFFIObject* seq, int32_t type_index);

/* Copy-on-write for Arrays: makes *seq exclusively owned by the caller,
 * copying it (and dropping the caller's reference) when it is shared. */
int wf_seq_make_unique(TVMFFIObject** seq);

/* Registers the ffi.Array* / ffi.List* global functions. */
int wf_seq_register(void);

#endif /* WEBFFI_SRC_SEQ_H_ */
