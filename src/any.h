/* Helpers on TVMFFIAny values: ownership, equality, hashing. */
#ifndef WEBFFI_SRC_ANY_H_
#define WEBFFI_SRC_ANY_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

static inline int wf_any_is_object(const TVMFFIAny* v) {
  return v->type_index >= kTVMFFIStaticObjectBegin;
}

/* Pointers fill only the low bytes on wasm32: zero the whole payload first,
 * since equality and hashing read all eight bytes. */
static inline void wf_any_set_object(TVMFFIAny* v, TVMFFIObject* obj) {
  v->type_index = obj->type_index;
  v->zero_padding = 0;
  v->v_uint64 = 0;
  v->v_obj = obj;
}

static inline void wf_any_set_none(TVMFFIAny* v) {
  v->type_index = kTVMFFINone;
  v->zero_padding = 0;
  v->v_uint64 = 0;
}

static inline void wf_any_set_int(TVMFFIAny* v, int64_t x) {
  v->type_index = kTVMFFIInt;
  v->zero_padding = 0;
  v->v_int64 = x;
}

static inline void wf_any_set_bool(TVMFFIAny* v, int x) {
  v->type_index = kTVMFFIBool;
  v->zero_padding = 0;
  v->v_int64 = x != 0;
}

static inline void wf_any_set_float(TVMFFIAny* v, double x) {
  v->type_index = kTVMFFIFloat;
  v->zero_padding = 0;
  v->v_float64 = x;
}

/* Drops the reference an owned Any holds and leaves None behind. */
void wf_any_release(TVMFFIAny* v);

/* Value equality: strings and bytes by content (small == heap), everything
 * else by (type_index, payload), so 1, true and 1.0 differ. */
int wf_any_equal(const TVMFFIAny* a, const TVMFFIAny* b);
/* Map and Dict keys hash with wf_map_hash (src/map.h). */
/* Deterministic, the same in every run: for structural hashes. */
uint64_t wf_any_hash_stable(const TVMFFIAny* v);

#endif /* WEBFFI_SRC_ANY_H_ */
