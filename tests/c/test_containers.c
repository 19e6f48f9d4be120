/* Array, List, Map, Dict and Shape: storage rules and ffi.* functions. */
#include "../../src/map.h"
#include "../../src/seq.h"
#include "../../src/str.h"
#include "harness.h"

static TVMFFIObjectHandle make(const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(ctor, args, n, &result) == 0);
  CHECK(result.type_index >= kTVMFFIStaticObjectBegin);
  return result.v_obj;
}

static int64_t call_int(const char* name, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(name, args, n, &result) == 0);
  CHECK(result.type_index == kTVMFFIInt || result.type_index == kTVMFFIBool);
  return result.v_int64;
}

/* Keys of a Map/Dict in iteration order, as ints. */
static void check_int_keys(TVMFFIObjectHandle map, const int64_t* want, int64_t n) {
  CHECK_EQ_INT(wf_map_size((TVMFFIObject*)map), n);
  int64_t pos = 0, i = 0;
  for (wf_map_entry* e; (e = wf_map_next((TVMFFIObject*)map, &pos)) != NULL; ++i) {
    CHECK(i < n);
    CHECK_EQ_INT(e->key.type_index, kTVMFFIInt);
    CHECK_EQ_INT(e->key.v_int64, want[i]);
  }
  CHECK_EQ_INT(i, n);
}

void array_get_size_contains(void) {
  TVMFFIAny args[3] = {any_int(1), any_cstr("a long string"), any_float(2.5)};
  TVMFFIObjectHandle arr = make("ffi.Array", args, 3);
  CHECK_EQ_INT(((TVMFFIObject*)arr)->type_index, kTVMFFIArray);
  TVMFFIAny a[2] = {any_obj(arr), any_int(1)};
  CHECK_EQ_INT(call_int("ffi.ArraySize", a, 1), 3);
  TVMFFIAny item;
  CHECK(call_global("ffi.ArrayGetItem", a, 2, &item) == 0);
  /* the RawStr argument was stored as an owned String */
  CHECK_EQ_INT(item.type_index, kTVMFFIStr);
  CHECK_EQ_STR(any_str(&item), "a long string");
  TVMFFIObjectDecRef(item.v_obj);
  /* elements are unboxed Anys in the ABI's SeqCell */
  TVMFFISeqCell* cell = (TVMFFISeqCell*)((char*)arr + sizeof(TVMFFIObject));
  CHECK_EQ_INT(cell->size, 3);
  CHECK_EQ_INT(((TVMFFIAny*)cell->data)[0].type_index, kTVMFFIInt);
  a[1] = any_cstr("a long string");
  CHECK_EQ_INT(call_int("ffi.ArrayContains", a, 2), 1);
  a[1] = any_float(1.0); /* 1.0 is not 1 */
  CHECK_EQ_INT(call_int("ffi.ArrayContains", a, 2), 0);
  TVMFFIObjectDecRef(arr);
}

void array_index_out_of_range_is_index_error(void) {
  TVMFFIAny args[2] = {any_int(7), any_int(8)};
  TVMFFIObjectHandle arr = make("ffi.Array", args, 2);
  TVMFFIAny a[2] = {any_obj(arr), any_int(2)}, item;
  CHECK(call_global("ffi.ArrayGetItem", a, 2, &item) == -1);
  CHECK_RAISED("IndexError", "Index 2 out of bounds 2");
  a[1] = any_int(-1);
  CHECK(call_global("ffi.ArrayGetItem", a, 2, &item) == -1);
  CHECK_RAISED("IndexError", "Index -1 out of bounds 2");
  a[0] = any_int(3);
  CHECK(call_global("ffi.ArrayGetItem", a, 2, &item) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `ffi.ArrayGetItem(0: ffi.Array, 1: "
               "int) -> Any`. Expected `ffi.Array` but got `int`");
  TVMFFIObjectDecRef(arr);
}

void array_copy_on_write(void) {
  TVMFFIAny args[2] = {any_int(1), any_int(2)};
  TVMFFIObject* arr = (TVMFFIObject*)make("ffi.Array", args, 2);
  TVMFFIObject* alias = arr;
  wf_obj_incref(alias);
  /* shared: writing goes to a copy and leaves the other holder's view alone */
  CHECK(wf_seq_make_unique(&arr) == 0);
  CHECK(arr != alias);
  TVMFFIAny nine = any_int(9);
  CHECK(wf_seq_set(arr, 0, &nine) == 0);
  CHECK_EQ_INT(wf_seq_data(alias)[0].v_int64, 1);
  CHECK_EQ_INT(wf_seq_data(arr)[0].v_int64, 9);
  /* unique: written in place */
  TVMFFIObject* before = arr;
  CHECK(wf_seq_make_unique(&arr) == 0);
  CHECK(arr == before);
  wf_obj_decref(arr);
  wf_obj_decref(alias);
}

void list_mutations_are_shared(void) {
  TVMFFIObjectHandle list = make("ffi.List", NULL, 0);
  TVMFFIObjectHandle alias = list;
  TVMFFIObjectIncRef(alias);
  TVMFFIAny a[3] = {any_obj(list), any_int(10)};
  CHECK(call_global("ffi.ListAppend", a, 2, &a[2]) == 0);
  a[1] = any_int(30);
  CHECK(call_global("ffi.ListAppend", a, 2, &a[2]) == 0);
  TVMFFIAny ins[3] = {any_obj(list), any_int(1), any_int(20)}, r;
  CHECK(call_global("ffi.ListInsert", ins, 3, &r) == 0);
  TVMFFIAny s[1] = {any_obj(alias)};
  CHECK_EQ_INT(call_int("ffi.ListSize", s, 1), 3);
  TVMFFIAny get[2] = {any_obj(alias), any_int(1)};
  CHECK_EQ_INT(call_int("ffi.ListGetItem", get, 2), 20);
  TVMFFIAny set[3] = {any_obj(list), any_int(2), any_int(33)};
  CHECK(call_global("ffi.ListSetItem", set, 3, &r) == 0);
  get[1] = any_int(0);
  CHECK_EQ_INT(call_int("ffi.ListPop", get, 2), 10);
  CHECK_EQ_INT(call_int("ffi.ListSize", s, 1), 2);
  get[1] = any_int(1);
  CHECK_EQ_INT(call_int("ffi.ListGetItem", get, 2), 33);
  CHECK(call_global("ffi.ListErase", get, 2, &r) == 0);
  CHECK_EQ_INT(call_int("ffi.ListSize", s, 1), 1);
  CHECK(call_global("ffi.ListClear", s, 1, &r) == 0);
  CHECK_EQ_INT(call_int("ffi.ListSize", s, 1), 0);
  CHECK(call_global("ffi.ListPop", get, 2, &r) == -1);
  CHECK_RAISED("IndexError", "Index 1 out of bounds 0");
  ins[1] = any_int(2);
  CHECK(call_global("ffi.ListInsert", ins, 3, &r) == -1);
  CHECK_RAISED("IndexError", "Index 2 out of bounds 0");
  TVMFFIObjectDecRef(alias);
  TVMFFIObjectDecRef(list);
}

void map_lookup_and_missing_key(void) {
  TVMFFIAny args[4] = {any_cstr("a"), any_int(1), any_cstr("bbbbbbbbbbbb"), any_int(2)};
  TVMFFIObjectHandle map = make("ffi.Map", args, 4);
  CHECK_EQ_INT(((TVMFFIObject*)map)->type_index, kTVMFFIMap);
  TVMFFIAny a[2] = {any_obj(map), any_cstr("bbbbbbbbbbbb")}, r;
  CHECK_EQ_INT(call_int("ffi.MapGetItem", a, 2), 2);
  CHECK_EQ_INT(call_int("ffi.MapCount", a, 2), 1);
  CHECK_EQ_INT(call_int("ffi.MapSize", a, 1), 2);
  a[1] = any_cstr("zz");
  CHECK(call_global("ffi.MapGetItem", a, 2, &r) == -1);
  CHECK_RAISED("KeyError", "key is not in Map");
  CHECK_EQ_INT(call_int("ffi.MapCount", a, 2), 0);
  /* the missing sentinel is one object, the same every time */
  TVMFFIAny m1, m2;
  CHECK(call_global("ffi.MapGetItemOrMissing", a, 2, &m1) == 0);
  CHECK(call_global("ffi.MapGetItemOrMissing", a, 2, &m2) == 0);
  CHECK_EQ_INT(m1.type_index, kTVMFFIObject);
  CHECK(m1.v_obj == m2.v_obj);
  TVMFFIObjectDecRef(m1.v_obj);
  TVMFFIObjectDecRef(m2.v_obj);
  TVMFFIAny odd[1] = {any_int(1)};
  CHECK(call_global("ffi.Map", odd, 1, &r) == -1);
  CHECK_RAISED("ValueError", "ffi.Map expects key-value pairs, got 1 arguments");
  TVMFFIObjectDecRef(map);
}

void map_key_rules(void) {
  /* 1, true and 1.0 are three keys; small and heap strings compare by content */
  TVMFFIAny args[6] = {any_int(1), any_cstr("int"), any_bool(1), any_cstr("bool"),
                       any_float(1.0), any_cstr("float")};
  TVMFFIObjectHandle map = make("ffi.Map", args, 6);
  CHECK_EQ_INT(wf_map_size((TVMFFIObject*)map), 3);
  wf_map_entry* e = wf_map_find((TVMFFIObject*)map, &args[2]);
  CHECK(e != NULL);
  CHECK_EQ_STR(any_str(&e->value), "bool");
  TVMFFIObjectDecRef(map);

  TVMFFIAny small = any_cstr("abc"), heap;
  TVMFFIObject* heap_str = wf_str_new_object(kTVMFFIStr, "abc", 3);
  heap = any_obj(heap_str);
  TVMFFIAny kv[2] = {small, any_int(5)};
  map = make("ffi.Map", kv, 2);
  e = wf_map_find((TVMFFIObject*)map, &heap);
  CHECK(e != NULL);
  CHECK_EQ_INT(e->value.v_int64, 5);
  TVMFFIObjectDecRef(heap_str);
  TVMFFIObjectDecRef(map);
}

void map_last_duplicate_wins_in_initialiser(void) {
  TVMFFIAny args[6] = {any_int(1), any_int(10), any_int(2), any_int(20), any_int(1), any_int(11)};
  TVMFFIObjectHandle map = make("ffi.Map", args, 6);
  static const int64_t keys[] = {1, 2};
  check_int_keys(map, keys, 2);
  TVMFFIAny a[2] = {any_obj(map), any_int(1)};
  CHECK_EQ_INT(call_int("ffi.MapGetItem", a, 2), 11);
  TVMFFIObjectDecRef(map);
}

/* Erases key `gone` from a Dict of 0..n-1 and checks the remaining order,
 * then re-inserts it and checks it went last. */
static void check_order_after_erase(int64_t n, int64_t gone) {
  TVMFFIObjectHandle d = make("ffi.Dict", NULL, 0);
  for (int64_t i = 0; i < n; ++i) {
    TVMFFIAny a[3] = {any_obj(d), any_int(i), any_int(i * 10)}, r;
    CHECK(call_global("ffi.DictSetItem", a, 3, &r) == 0);
  }
  TVMFFIAny a[2] = {any_obj(d), any_int(gone)}, r;
  CHECK(call_global("ffi.DictErase", a, 2, &r) == 0);
  int64_t want[32], k = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i != gone) want[k++] = i;
  }
  check_int_keys(d, want, k);
  TVMFFIAny set[3] = {any_obj(d), any_int(gone), any_int(-1)};
  CHECK(call_global("ffi.DictSetItem", set, 3, &r) == 0);
  want[k++] = gone;
  check_int_keys(d, want, k);
  CHECK_EQ_INT(call_int("ffi.DictGetItem", a, 2), -1);
  TVMFFIObjectDecRef(d);
}

void map_order_after_erase_front_middle_end(void) {
  static const int64_t sizes[] = {4, 17};
  for (int s = 0; s < 2; ++s) {
    int64_t n = sizes[s];
    check_order_after_erase(n, 0);
    check_order_after_erase(n, n / 2);
    check_order_after_erase(n, n - 1);
  }
}

void map_copy_on_write(void) {
  TVMFFIAny args[2] = {any_int(1), any_int(10)};
  TVMFFIObject* map = (TVMFFIObject*)make("ffi.Map", args, 2);
  TVMFFIObject* alias = map;
  wf_obj_incref(alias);
  CHECK(wf_map_make_unique(&map) == 0);
  CHECK(map != alias);
  TVMFFIAny k = any_int(2), v = any_int(20);
  CHECK(wf_map_set(map, &k, &v) == 0);
  CHECK_EQ_INT(wf_map_size(map), 2);
  CHECK_EQ_INT(wf_map_size(alias), 1);
  wf_obj_decref(map);
  wf_obj_decref(alias);
}

void dict_is_shared_and_clears(void) {
  TVMFFIObjectHandle d = make("ffi.Dict", NULL, 0);
  TVMFFIObjectHandle alias = d;
  TVMFFIObjectIncRef(alias);
  TVMFFIAny set[3] = {any_obj(d), any_cstr("key"), any_cstr("value")}, r;
  CHECK(call_global("ffi.DictSetItem", set, 3, &r) == 0);
  TVMFFIAny a[2] = {any_obj(alias), any_cstr("key")};
  CHECK_EQ_INT(call_int("ffi.DictCount", a, 2), 1);
  CHECK(call_global("ffi.DictGetItem", a, 2, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "value");
  CHECK(call_global("ffi.DictClear", a, 1, &r) == 0);
  CHECK_EQ_INT(call_int("ffi.DictSize", set, 1), 0);
  CHECK(call_global("ffi.DictGetItem", a, 2, &r) == -1);
  CHECK_RAISED("KeyError", "key is not in Map");
  TVMFFIObjectDecRef(alias);
  TVMFFIObjectDecRef(d);
}

void map_forward_iter_functor(void) {
  TVMFFIAny args[4] = {any_int(3), any_int(2), any_int(4), any_int(3)};
  TVMFFIObjectHandle map = make("ffi.Map", args, 4);
  TVMFFIAny a[1] = {any_obj(map)}, it;
  CHECK(call_global("ffi.MapForwardIterFunctor", a, 1, &it) == 0);
  TVMFFIObjectDecRef(map); /* the functor keeps the map alive */
  int64_t seen[4], n = 0;
  for (int more = 1; more; ++n) {
    TVMFFIAny cmd = any_int(0), r = any_none();
    CHECK(TVMFFIFunctionCall(it.v_obj, &cmd, 1, &r) == 0);
    seen[2 * n] = r.v_int64;
    cmd = any_int(1);
    CHECK(TVMFFIFunctionCall(it.v_obj, &cmd, 1, &r) == 0);
    seen[2 * n + 1] = r.v_int64;
    cmd = any_int(2);
    CHECK(TVMFFIFunctionCall(it.v_obj, &cmd, 1, &r) == 0);
    CHECK_EQ_INT(r.type_index, kTVMFFIBool);
    more = (int)r.v_int64;
  }
  CHECK_EQ_INT(n, 2);
  CHECK_EQ_INT(seen[0], 3);
  CHECK_EQ_INT(seen[1], 2);
  CHECK_EQ_INT(seen[2], 4);
  CHECK_EQ_INT(seen[3], 3);
  TVMFFIObjectDecRef(it.v_obj);
}

void map_many_keys_match_a_reference(void) {
  /* Inserts and erases 20000 keys in a pattern and compares with an array. */
  enum { N = 20000 };
  static int64_t present[N];
  TVMFFIObject* d = wf_map_new(kTVMFFIDict, 0);
  CHECK(d != NULL);
  for (int64_t i = 0; i < N; ++i) {
    TVMFFIAny k = any_int(i * 7919 % N), v = any_int(i);
    CHECK(wf_map_set(d, &k, &v) == 0);
    present[i * 7919 % N] = 1;
    if (i % 3 == 0) {
      TVMFFIAny g = any_int(i / 2);
      CHECK_EQ_INT(wf_map_erase(d, &g), present[i / 2]);
      present[i / 2] = 0;
    }
  }
  int64_t live = 0;
  for (int64_t k = 0; k < N; ++k) {
    TVMFFIAny key = any_int(k);
    CHECK_EQ_INT(wf_map_find(d, &key) != NULL, present[k]);
    live += present[k];
  }
  CHECK_EQ_INT(wf_map_size(d), live);
  wf_obj_decref(d);
}

void shape_holds_int64s(void) {
  TVMFFIAny args[2] = {any_int(5), any_int(INT64_C(1) << 40)};
  TVMFFIObjectHandle shape = make("ffi.Shape", args, 2);
  CHECK_EQ_INT(((TVMFFIObject*)shape)->type_index, kTVMFFIShape);
  TVMFFIShapeCell* cell = (TVMFFIShapeCell*)((char*)shape + sizeof(TVMFFIObject));
  CHECK_EQ_INT(cell->size, 2);
  CHECK_EQ_INT(cell->data[0], 5);
  CHECK_EQ_INT(cell->data[1], INT64_C(1) << 40);
  TVMFFIObjectDecRef(shape);
  TVMFFIAny bad[1] = {any_float(1.5)}, r;
  CHECK(call_global("ffi.Shape", bad, 1, &r) == -1);
  CHECK_RAISED("TypeError", "Cannot convert from type `float` to `int`");
}

/* The list's elements as ints, e.g. "1,2,3". */
static void check_list(TVMFFIObjectHandle list, const char* want) {
  char got[128] = "";
  TVMFFIObject* seq = (TVMFFIObject*)list;
  for (int64_t i = 0; i < wf_seq_size(seq); ++i) {
    snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld", i ? "," : "",
             (long long)wf_seq_data(seq)[i].v_int64);
  }
  CHECK_EQ_STR(got, want);
}

void list_ranges_slices_and_reverse(void) {
  TVMFFIAny five[5] = {any_int(1), any_int(2), any_int(3), any_int(4), any_int(5)}, r;
  TVMFFIObjectHandle list = make("ffi.List", five, 5);
  TVMFFIAny erase[3] = {any_obj(list), any_int(1), any_int(3)};
  CHECK(call_global("ffi.ListEraseRange", erase, 3, &r) == 0);
  check_list(list, "1,4,5");
  erase[2] = any_int(9);
  CHECK(call_global("ffi.ListEraseRange", erase, 3, &r) == -1);
  CHECK_RAISED("IndexError", "Range [1, 9) out of bounds 3");
  TVMFFIAny two[2] = {any_int(7), any_int(8)};
  TVMFFIObjectHandle repl = make("ffi.List", two, 2);
  TVMFFIAny slice[4] = {any_obj(list), any_int(0), any_int(1), any_obj(repl)};
  CHECK(call_global("ffi.ListReplaceSlice", slice, 4, &r) == 0);
  check_list(list, "7,8,4,5");
  /* the replacement may be the list itself */
  TVMFFIAny self_slice[4] = {any_obj(list), any_int(1), any_int(3), any_obj(list)};
  CHECK(call_global("ffi.ListReplaceSlice", self_slice, 4, &r) == 0);
  check_list(list, "7,7,8,4,5,5");
  TVMFFIAny one[1] = {any_obj(list)};
  CHECK(call_global("ffi.ListReverse", one, 1, &r) == 0);
  check_list(list, "5,5,4,8,7,7");
  TVMFFIObjectDecRef(repl);
  TVMFFIObjectDecRef(list);
}

/* A List laid out as upstream's C++ ListObj (header, then the cell, and
 * nothing after it), made outside the core. */
typedef struct {
  TVMFFIObject header;
  TVMFFISeqCell cell;
} foreign_list;

static void foreign_list_deleter(void* self, int flags) {
  foreign_list* list = (foreign_list*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) free(list->cell.data);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(list);
}

/* The core records a container's nesting after its cell; one C++ made has
 * no such record, and the core neither reads nor writes past it (ASan
 * sees any overflow). */
void list_made_outside_the_core_has_no_nesting_record(void) {
  foreign_list* list = malloc(sizeof(foreign_list));
  TVMFFIAny* data = calloc(4, sizeof(TVMFFIAny));
  CHECK(list != NULL && data != NULL);
  list->header.combined_ref_count = 1 | (UINT64_C(1) << 32); /* one strong, one weak */
  list->header.type_index = kTVMFFIList;
  list->header.__padding = 0;
  list->header.deleter = foreign_list_deleter;
  data[0] = any_int(5);
  list->cell = (TVMFFISeqCell){data, 1, 4, free};
  TVMFFIAny l = any_obj(&list->header), r;
  TVMFFIObjectHandle outer = make("ffi.Array", &l, 1); /* reads the child's nesting */
  TVMFFIAny append[2] = {l, any_int(7)};
  CHECK(call_global("ffi.ListAppend", append, 2, &r) == 0); /* updates the list's nesting */
  CHECK_EQ_INT(call_int("ffi.ListSize", &l, 1), 2);
  TVMFFIAny get[2] = {l, any_int(1)};
  CHECK_EQ_INT(call_int("ffi.ListGetItem", get, 2), 7);
  TVMFFIObjectDecRef(outer);
  TVMFFIObjectDecRef(&list->header);
}
