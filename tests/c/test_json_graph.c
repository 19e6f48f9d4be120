/* The JSON graph: exact output, dedup, round trips and hostile input. */
#include "../../src/object.h"
#include "harness.h"

static TVMFFIAny make(const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(ctor, args, n, &result) == 0);
  return result;
}

static TVMFFIAny make_obj(const char* type_key, TVMFFIAny* args, int32_t n) {
  TVMFFIByteArray key = {type_key, strlen(type_key)};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, "__ffi_init__") != 0) continue;
    TVMFFIAny r = any_none();
    CHECK(TVMFFIFunctionCall(info->methods[i].method.v_obj, args, n, &r) == 0);
    return r;
  }
  CHECK(0);
  return any_none();
}

static void check_to_graph_string(TVMFFIAny value, const char* want) {
  TVMFFIAny r;
  CHECK(call_global("ffi.ToJSONGraphString", &value, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), want);
  release(&r);
}

/* String form, read back, compared structurally and re-serialised. */
static void check_round_trip(TVMFFIAny value) {
  TVMFFIAny text, back, again, eq_args[2];
  CHECK(call_global("ffi.ToJSONGraphString", &value, 1, &text) == 0);
  CHECK(call_global("ffi.FromJSONGraphString", &text, 1, &back) == 0);
  eq_args[0] = value;
  eq_args[1] = back;
  TVMFFIAny eq;
  CHECK(call_global("ffi.RecursiveEq", eq_args, 2, &eq) == 0);
  CHECK(eq.v_int64 == 1);
  CHECK(call_global("ffi.ToJSONGraphString", &back, 1, &again) == 0);
  CHECK_EQ_STR(any_str(&again), any_str(&text));
  release(&text);
  release(&back);
  release(&again);
}

static void check_from_error(const char* json, const char* kind, const char* message) {
  TVMFFIAny arg = any_cstr(json), r;
  CHECK(call_global("ffi.FromJSONGraphString", &arg, 1, &r) == -1);
  CHECK_RAISED(kind, message);
}

void json_graph_dedups_equal_values(void) {
  TVMFFIAny three[3] = {any_int(42), any_int(42), any_int(42)};
  TVMFFIAny arr = make("ffi.Array", three, 3);
  check_to_graph_string(arr, "{\"root_index\":1,\"nodes\":[{\"type\":\"int\",\"data\":42},"
                             "{\"type\":\"ffi.Array\",\"data\":[0,0,0]}]}");
  /* 1, true and 1.0 stay three nodes; equal strings are one */
  TVMFFIAny mixed[5] = {any_int(1), any_bool(1), any_float(1.0), any_cstr("a long string!"),
                        any_cstr("a long string!")};
  TVMFFIAny m = make("ffi.Array", mixed, 5);
  check_to_graph_string(
      m, "{\"root_index\":4,\"nodes\":[{\"type\":\"int\",\"data\":1},{\"type\":\"bool\",\"data\":"
         "true},{\"type\":\"float\",\"data\":1.0},{\"type\":\"ffi.String\",\"data\":\"a long "
         "string!\"},{\"type\":\"ffi.Array\",\"data\":[0,1,2,3,3]}]}");
  /* the same object twice is one node */
  TVMFFIAny twice[2] = {arr, arr};
  TVMFFIAny outer = make("ffi.List", twice, 2);
  check_to_graph_string(outer, "{\"root_index\":2,\"nodes\":[{\"type\":\"int\",\"data\":42},"
                               "{\"type\":\"ffi.Array\",\"data\":[0,0,0]},{\"type\":\"ffi.List\","
                               "\"data\":[1,1]}]}");
  release(&arr);
  release(&m);
  release(&outer);
}

void json_graph_reflected_object_fields_inline(void) {
  TVMFFIAny ab[2] = {any_int(3), any_int(7)};
  TVMFFIAny pair = make_obj("testing.TestIntPair", ab, 2);
  check_to_graph_string(pair, "{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPair\","
                              "\"data\":{\"a\":3,\"b\":7}}]}");
  check_round_trip(pair);
  /* a non-POD field is a node index */
  TVMFFIAny abc[3] = {any_int(1), any_int(2), any_cstr("note")};
  TVMFFIAny derived = make_obj("testing.TestIntPairDerived", abc, 3);
  check_to_graph_string(derived,
                        "{\"root_index\":1,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"note\"},"
                        "{\"type\":\"testing.TestIntPairDerived\",\"data\":{\"a\":1,\"b\":2,\"c\":"
                        "0}}]}");
  check_round_trip(derived);
  /* a field with a default may be left out; a required one may not */
  TVMFFIAny arg = any_cstr("{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPairDerived\","
                           "\"data\":{\"a\":1,\"b\":2}}]}"),
            r;
  CHECK(call_global("ffi.FromJSONGraphString", &arg, 1, &r) == 0);
  release(&r);
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPair\",\"data\":{\"a\":1}}]}",
                   "TypeError", "Required field `b` not set in type `testing.TestIntPair`");
  release(&pair);
  release(&derived);
}

void json_graph_round_trips_every_kind(void) {
  TVMFFIByteArray b = {"\x00\x01\xff bytes!", 10};
  TVMFFIAny bytes, dtype = any_none(), device = any_none();
  CHECK(TVMFFIBytesFromByteArray(&b, &bytes) == 0);
  TVMFFIByteArray dt = {"float32x4", 9};
  dtype.type_index = kTVMFFIDataType;
  CHECK(TVMFFIDataTypeFromString(&dt, &dtype.v_dtype) == 0);
  device.type_index = kTVMFFIDevice;
  device.v_device.device_type = kDLWebGPU;
  device.v_device.device_id = 1;
  TVMFFIAny kv[4] = {any_cstr("k"), any_float(5.0), any_int(2), any_none()};
  TVMFFIAny map = make("ffi.Map", kv, 4), dict = make("ffi.Dict", kv, 4);
  TVMFFIAny dims[2] = {any_int(5), any_int(6)};
  TVMFFIAny shape = make("ffi.Shape", dims, 2);
  TVMFFIAny list = make("ffi.List", dims, 2);
  TVMFFIAny abc[3] = {any_int(1), any_int(2), list};
  TVMFFIAny derived = make_obj("testing.TestIntPairDerived", abc, 3);
  TVMFFIAny all[13] = {any_none(), any_bool(0), any_int(-9), any_float(0.25), dtype, device,
                       any_cstr("short"), any_cstr("a string of some length"), bytes, map, dict,
                       shape, derived};
  TVMFFIAny arr = make("ffi.Array", all, 13);
  check_round_trip(arr);
  TVMFFIAny one[1] = {device};
  TVMFFIAny d = make("ffi.Array", one, 1);
  check_to_graph_string(d, "{\"root_index\":1,\"nodes\":[{\"type\":\"Device\",\"data\":[15,1]},"
                           "{\"type\":\"ffi.Array\",\"data\":[0]}]}");
  TVMFFIAny rel[] = {bytes, map, dict, shape, list, derived, arr, d};
  for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); ++i) release(&rel[i]);
}

void json_graph_metadata_only_when_given(void) {
  TVMFFIAny kv[2] = {any_cstr("v"), any_int(1)};
  TVMFFIAny meta = make("ffi.Map", kv, 2);
  TVMFFIAny args[2] = {any_int(5), meta}, r;
  CHECK(call_global("ffi.ToJSONGraphString", args, 2, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":5}],"
                            "\"metadata\":{\"v\":1}}");
  release(&r);
  args[1] = any_none();
  CHECK(call_global("ffi.ToJSONGraphString", args, 2, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":5}]}");
  release(&r);
  /* ToJSONGraph gives the graph as a Map */
  CHECK(call_global("ffi.ToJSONGraph", args, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIMap);
  TVMFFIAny back;
  CHECK(call_global("ffi.FromJSONGraph", &r, 1, &back) == 0);
  CHECK_EQ_INT(back.v_int64, 5);
  release(&r);
  release(&meta);
}

void json_graph_types_without_creator_are_type_errors(void) {
  TVMFFIByteArray name = {"testing.nop", 11};
  TVMFFIObjectHandle f;
  CHECK(TVMFFIFunctionGetGlobal(&name, &f) == 0);
  TVMFFIAny one[1] = {any_obj(f)}, r;
  TVMFFIAny arr = make("ffi.Array", one, 1);
  CHECK(call_global("ffi.ToJSONGraph", &arr, 1, &r) == -1);
  CHECK_RAISED("TypeError", "Type `ffi.Function` does not support ToJSONGraph (no native creator "
                            "or __ffi_new__ type attr)");
  TVMFFIObjectDecRef(f);
  release(&arr);
  TVMFFIObjectHandle opaque;
  CHECK(TVMFFIObjectCreateOpaque(NULL, kTVMFFIOpaquePyObject, NULL, &opaque) == 0);
  TVMFFIAny o = any_obj(opaque);
  CHECK(call_global("ffi.ToJSONGraph", &o, 1, &r) == -1);
  CHECK_RAISED("TypeError", "Type `ffi.OpaquePyObject` does not support ToJSONGraph (no native "
                            "creator or __ffi_new__ type attr)");
  TVMFFIObjectDecRef(opaque);
  /* the reader never makes such objects either */
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Function\",\"data\":{}}]}",
                   "TypeError", "Type `ffi.Function` does not support FromJSONGraph (no native "
                                "creator or __ffi_new__ type attr)");
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Error\",\"data\":{}}]}",
                   "TypeError", "Type `ffi.Error` does not support FromJSONGraph (no native "
                                "creator or __ffi_new__ type attr)");
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"void*\",\"data\":0}]}", "TypeError",
                   "Type `void*` does not support FromJSONGraph (no native creator or "
                   "__ffi_new__ type attr)");
}

void json_graph_self_containing_list_or_dict_is_value_error(void) {
  TVMFFIAny list = make("ffi.List", NULL, 0), r;
  TVMFFIAny push[2] = {list, list};
  CHECK(call_global("ffi.ListAppend", push, 2, &r) == 0);
  CHECK(call_global("ffi.ToJSONGraph", &list, 1, &r) == -1);
  CHECK_RAISED("ValueError", "Cycle detected during serialization: a List contains itself");
  CHECK(call_global("ffi.ListClear", &list, 1, &r) == 0);
  release(&list);
  TVMFFIAny dict = make("ffi.Dict", NULL, 0);
  TVMFFIAny set[3] = {dict, any_cstr("me"), dict};
  CHECK(call_global("ffi.DictSetItem", set, 3, &r) == 0);
  CHECK(call_global("ffi.ToJSONGraphString", &dict, 1, &r) == -1);
  CHECK_RAISED("ValueError", "Cycle detected during serialization: a Dict contains itself");
  CHECK(call_global("ffi.DictClear", &dict, 1, &r) == 0);
  release(&dict);
}

void json_graph_malformed_input_is_value_error(void) {
  static const struct {
    const char* json;
    const char* message;
  } cases[] = {
      {"[]", "Invalid JSON Object Graph: expected a JSON object"},
      {"{\"nodes\":[]}", "Invalid JSON Object Graph: missing `root_index`"},
      {"{\"root_index\":0}", "Invalid JSON Object Graph: missing `nodes`"},
      {"{\"root_index\":\"0\",\"nodes\":[]}", "Invalid JSON Object Graph: `root_index` must be an integer"},
      {"{\"root_index\":0,\"nodes\":{}}", "Invalid JSON Object Graph: `nodes` must be an array"},
      {"{\"root_index\":0,\"nodes\":[]}", "Invalid JSON Object Graph: invalid node index 0"},
      {"{\"root_index\":-1,\"nodes\":[{\"type\":\"None\"}]}", "Invalid JSON Object Graph: invalid node index -1"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[0]}]}",
       "Invalid JSON Object Graph: cycle through node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[1]},{\"type\":\"ffi.List\",\"data\":[0]}]}",
       "Invalid JSON Object Graph: cycle through node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[1]},{\"type\":5}]}",
       "Invalid JSON Object Graph: missing `type` in node 1"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.List\",\"data\":[7]}]}",
       "Invalid JSON Object Graph: invalid node index 7"},
      {"{\"root_index\":1,\"nodes\":[{\"type\":\"int\",\"data\":1},{\"type\":\"ffi.Map\",\"data\":[0]}]}",
       "Invalid JSON Object Graph: odd-length data for `ffi.Map` in node 1"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"Device\",\"data\":[1]}]}",
       "Invalid JSON Object Graph: Device data must be [device_type, device_id] in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"data\":1}]}", "Invalid JSON Object Graph: missing `type` in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":5}]}", "Invalid JSON Object Graph: missing `type` in node 0"},
      {"{\"root_index\":0,\"nodes\":[7]}", "Invalid JSON Object Graph: node 0 is not an object"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":\"1\"}]}",
       "Invalid JSON Object Graph: invalid data for `int` in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"int\"}]}", "Invalid JSON Object Graph: invalid data for `int` in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Bytes\",\"data\":\"abc\"}]}",
       "Invalid JSON Object Graph: invalid base64 in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Shape\",\"data\":[1,\"x\"]}]}",
       "Invalid JSON Object Graph: invalid data for `ffi.Shape` in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"no.SuchType\",\"data\":{}}]}",
       "Invalid JSON Object Graph: unknown type `no.SuchType` in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPair\",\"data\":[]}]}",
       "Invalid JSON Object Graph: invalid data for `testing.TestIntPair` in node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPair\",\"data\":{\"a\":1,\"b\":2,\"z\":3}}]}",
       "Invalid JSON Object Graph: type `testing.TestIntPair` has no field `z`"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPairDerived\",\"data\":{\"a\":1,\"b\":2,\"c\":0}}]}",
       "Invalid JSON Object Graph: cycle through node 0"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"DataType\",\"data\":\"float32x0\"}]}",
       "unknown dtype `float32x0`"},
      {"not json", "Expecting value: line 1 column 1 (char 0)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    check_from_error(cases[i].json, "ValueError", cases[i].message);
  }
}

/* Upstream reads nodes lazily: references may point forwards, a shared
 * node is read once, and nodes the root does not reach are never read. */
void json_graph_reads_nodes_in_any_order(void) {
  TVMFFIAny arg = any_cstr(
      "{\"root_index\":1,\"nodes\":[{\"type\":\"no.SuchType\"},"
      "{\"type\":\"ffi.Map\",\"data\":[4,2,3,2]},{\"type\":\"ffi.List\",\"data\":[5,5]},"
      "{\"type\":\"ffi.String\",\"data\":\"a\"},{\"type\":\"ffi.String\",\"data\":\"b\"},"
      "{\"type\":\"int\",\"data\":42},{\"type\":7}]}"),
            r, text;
  CHECK(call_global("ffi.FromJSONGraphString", &arg, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIMap);
  /* both keys hold the very same List */
  TVMFFIAny get[2] = {r, any_cstr("a")}, a, b;
  CHECK(call_global("ffi.MapGetItem", get, 2, &a) == 0);
  get[1] = any_cstr("b");
  CHECK(call_global("ffi.MapGetItem", get, 2, &b) == 0);
  CHECK(a.type_index == kTVMFFIList && a.v_obj == b.v_obj);
  release(&a);
  release(&b);
  CHECK(call_global("ffi.ToJSONGraphString", &r, 1, &text) == 0);
  CHECK_EQ_STR(any_str(&text),
               "{\"root_index\":4,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"b\"},"
               "{\"type\":\"int\",\"data\":42},{\"type\":\"ffi.List\",\"data\":[1,1]},"
               "{\"type\":\"ffi.String\",\"data\":\"a\"},{\"type\":\"ffi.Map\",\"data\":[0,2,3,2]}]}");
  release(&text);
  release(&r);
  /* a reflected object's fields may refer forwards too */
  TVMFFIAny fwd = any_cstr(
      "{\"root_index\":0,\"nodes\":[{\"type\":\"testing.TestIntPairDerived\","
      "\"data\":{\"a\":1,\"b\":2,\"c\":1}},{\"type\":\"ffi.String\",\"data\":\"note\"}]}");
  CHECK(call_global("ffi.FromJSONGraphString", &fwd, 1, &r) == 0);
  TVMFFIAny mk[2] = {any_cstr("testing.TestIntPairDerived"), any_cstr("c")}, getter, c;
  CHECK(call_global("ffi.MakeFieldGetter", mk, 2, &getter) == 0);
  c = any_none();
  CHECK(TVMFFIFunctionCall(getter.v_obj, &r, 1, &c) == 0);
  CHECK_EQ_STR(any_str(&c), "note");
  release(&c);
  release(&getter);
  release(&r);
}

void json_graph_deep_nesting_is_value_error(void) {
  /* Each node wraps the previous one: cheap to write, deep to free. */
  enum { N = 300 };
  static char json[N * 48];
  size_t at = (size_t)sprintf(json, "{\"root_index\":%d,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[]}", N - 1);
  for (int i = 1; i < N; ++i) {
    at += (size_t)sprintf(json + at, ",{\"type\":\"ffi.Array\",\"data\":[%d]}", i - 1);
  }
  sprintf(json + at, "]}");
  check_from_error(json, "ValueError",
                   "Invalid JSON Object Graph: nesting deeper than 256 levels in node 256");
}

/* Calls name(arg) with object allocations failing after `budget`: it either
 * succeeds or raises MemoryError, and leaks nothing (ASan checks). */
static int call_with_budget(const char* name, TVMFFIAny arg, int budget) {
  TVMFFIAny r;
  install_counting_allocator();
  g_alloc.fail_after = budget;
  int rc = call_global(name, &arg, 1, &r);
  restore_allocator();
  if (rc == 0) {
    release(&r);
    return 1;
  }
  CHECK_RAISED("MemoryError", "Out of memory");
  return 0;
}

void json_graph_allocation_failures_are_memory_errors(void) {
  TVMFFIAny ab[2] = {any_int(1), any_int(2)}, two[2] = {any_int(1), any_int(2)};
  TVMFFIAny pair = make_obj("testing.TestIntPair", ab, 2), list = make("ffi.List", two, 2);
  TVMFFIAny kv[2] = {any_cstr("a key of some length"), list};
  TVMFFIAny map = make("ffi.Map", kv, 2), shape = make("ffi.Shape", two, 2);
  TVMFFIAny items[4] = {map, pair, any_cstr("a string of some length"), shape};
  TVMFFIAny value = make("ffi.Array", items, 4), text;
  CHECK(call_global("ffi.ToJSONGraphString", &value, 1, &text) == 0);
  static const char* const names[] = {"ffi.ToJSONGraphString", "ffi.FromJSONGraphString",
                                      "ffi.json.Parse", "ffi.DeepCopy", "ffi.ReprPrint"};
  for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); ++f) {
    TVMFFIAny arg = f == 1 || f == 2 ? text : value;
    int budget = 1;
    while (!call_with_budget(names[f], arg, budget)) ++budget;
    CHECK(budget < 200);
  }
  /* and the runtime still works */
  check_round_trip(value);
  TVMFFIAny all[] = {pair, list, map, shape, value, text};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) release(&all[i]);
}

/* A type with float, bool and DataType fields, all written inline. */
typedef struct {
  TVMFFIObject header;
  double f;
  int64_t flag;
  DLDataType dt;
} inline_obj;

static int32_t inline_obj_index;

static void inline_obj_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* Made the way a C library without webffi's allocator would. */
static int inline_obj_create(TVMFFIObjectHandle* out) {
  inline_obj* o = (inline_obj*)calloc(1, sizeof(inline_obj));
  CHECK(o != NULL);
  o->header.combined_ref_count = 1 | (UINT64_C(1) << 32); /* one strong, one weak */
  o->header.type_index = inline_obj_index;
  o->header.deleter = inline_obj_delete;
  *out = o;
  return 0;
}

static int get_f(void* field, TVMFFIAny* r) {
  *r = any_float(*(double*)field);
  return 0;
}
static int set_f(void* field, const TVMFFIAny* v) {
  if (v->type_index != kTVMFFIFloat) return -1;
  *(double*)field = v->v_float64;
  return 0;
}
static int get_flag(void* field, TVMFFIAny* r) {
  *r = any_bool((int)*(int64_t*)field);
  return 0;
}
static int set_flag(void* field, const TVMFFIAny* v) {
  *(int64_t*)field = v->v_int64;
  return 0;
}
static int get_dt(void* field, TVMFFIAny* r) {
  *r = any_none();
  r->type_index = kTVMFFIDataType;
  r->v_dtype = *(DLDataType*)field;
  return 0;
}
static int set_dt(void* field, const TVMFFIAny* v) {
  *(DLDataType*)field = v->v_dtype;
  return 0;
}

static void register_inline_field(const char* name, int64_t offset, TVMFFIFieldGetter get,
                                  TVMFFIFieldSetter set, int32_t type) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.offset = offset;
  f.getter = get;
  f.setter = (void*)set;
  f.field_static_type_index = type;
  CHECK(TVMFFITypeRegisterField(inline_obj_index, &f) == 0);
}

void json_graph_inline_float_bool_and_dtype_fields(void) {
  TVMFFIByteArray key = {"test.Inline", 11};
  TVMFFIAny nop;
  CHECK(call_global("testing.nop", NULL, 0, &nop) == 0); /* the runtime is up */
  inline_obj_index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  register_inline_field("f", offsetof(inline_obj, f), get_f, set_f, kTVMFFIFloat);
  register_inline_field("flag", offsetof(inline_obj, flag), get_flag, set_flag, kTVMFFIBool);
  register_inline_field("dt", offsetof(inline_obj, dt), get_dt, set_dt, kTVMFFIDataType);
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.creator = inline_obj_create;
  CHECK(TVMFFITypeRegisterMetadata(inline_obj_index, &meta) == 0);

  TVMFFIObjectHandle made;
  CHECK(inline_obj_create(&made) == 0);
  inline_obj* o = (inline_obj*)made;
  o->f = 5.0;
  o->flag = 1;
  o->dt = (DLDataType){kDLBfloat, 16, 1};
  check_to_graph_string(any_obj(made), "{\"root_index\":0,\"nodes\":[{\"type\":\"test.Inline\","
                                       "\"data\":{\"f\":5.0,\"flag\":true,\"dt\":\"bfloat16\"}}]}");
  TVMFFIAny text, back, arg = any_obj(made);
  CHECK(call_global("ffi.ToJSONGraphString", &arg, 1, &text) == 0);
  CHECK(call_global("ffi.FromJSONGraphString", &text, 1, &back) == 0);
  inline_obj* b = (inline_obj*)back.v_obj;
  CHECK(b->f == 5.0 && b->flag == 1 && b->dt.code == kDLBfloat && b->dt.bits == 16);
  release(&text);
  release(&back);
  TVMFFIObjectDecRef(made);
}

/* Enum classes as upstream's EnumDef makes them: a type derived from
 * ffi.IntEnum or ffi.StrEnum whose `__ffi_enum__` EnumState indexes each
 * singleton by its int and its name. */
typedef struct {
  TVMFFIObject header;
  int64_t int_index;
  TVMFFIAny str_index;
} enum_obj;

static void enum_obj_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) release(&((enum_obj*)self)->str_index);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

static int32_t index_of(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&k, &index) == 0);
  return index;
}

/* Defines enum class KEY under PARENT with one singleton (i, name). */
static TVMFFIAny define_enum(const char* key, const char* parent, int64_t i, const char* name) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t base = index_of(parent);
  int32_t index =
      TVMFFITypeGetOrAllocIndex(&k, -1, TVMFFIGetTypeInfo(base)->type_depth + 1, 0, 1, base);
  CHECK(index >= kTVMFFIDynObjectBegin);
  enum_obj* e = (enum_obj*)wf_obj_alloc(sizeof(enum_obj), 8, index, enum_obj_deleter);
  CHECK(e != NULL);
  e->int_index = i;
  TVMFFIByteArray text = {name, strlen(name)};
  CHECK(TVMFFIStringFromByteArray(&text, &e->str_index) == 0);
  TVMFFIObjectHandle state = NULL;
  CHECK(TVMFFIGetTypeInfo(index_of("ffi.EnumState"))->metadata->creator(&state) == 0);
  TVMFFIObject* indexes = ((TVMFFIObject**)((char*)state + sizeof(TVMFFIObject)))[1];
  TVMFFIAny set[3] = {any_obj(indexes), any_int(i), any_obj(e)}, r;
  CHECK(call_global("ffi.DictSetItem", set, 3, &r) == 0);
  set[1] = e->str_index;
  CHECK(call_global("ffi.DictSetItem", set, 3, &r) == 0);
  TVMFFIByteArray attr = {"__ffi_enum__", 12};
  TVMFFIAny sv = any_obj(state);
  CHECK(TVMFFITypeRegisterAttr(index, &attr, &sv) == 0);
  TVMFFIObjectDecRef(state);
  return any_obj(e);
}

static void check_graph_singleton(TVMFFIAny value, const char* graph) {
  check_to_graph_string(value, graph);
  TVMFFIAny arg = any_cstr(graph), back;
  CHECK(call_global("ffi.FromJSONGraphString", &arg, 1, &back) == 0);
  CHECK(back.v_obj == value.v_obj);
  release(&back);
}

void json_graph_enums_are_their_singletons(void) {
  TVMFFIAny seven = define_enum("test.GraphIntEnum", "ffi.IntEnum", 7, "Seven");
  TVMFFIAny alpha = define_enum("test.GraphStrEnum", "ffi.StrEnum", 0, "alpha");
  TVMFFIAny plain = define_enum("test.GraphEnum", "ffi.Enum", 0, "Plain");
  check_graph_singleton(seven, "{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphIntEnum\","
                               "\"data\":7}]}");
  check_graph_singleton(alpha, "{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphStrEnum\","
                               "\"data\":\"alpha\"}]}");
  check_graph_singleton(plain, "{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphEnum\","
                               "\"data\":\"Plain\"}]}");
  /* inside a container, still the singleton */
  TVMFFIAny items[2] = {seven, seven};
  TVMFFIAny arr = make("ffi.Array", items, 2), text, back, get[2], item;
  CHECK(call_global("ffi.ToJSONGraphString", &arr, 1, &text) == 0);
  CHECK(call_global("ffi.FromJSONGraphString", &text, 1, &back) == 0);
  get[0] = back;
  get[1] = any_int(1);
  CHECK(call_global("ffi.ArrayGetItem", get, 2, &item) == 0);
  CHECK(item.v_obj == seven.v_obj);
  release(&item), release(&back), release(&text), release(&arr);
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphIntEnum\",\"data\":8}]}",
                   "ValueError", "Enum `test.GraphIntEnum` has no instance with index 8");
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphIntEnum\",\"data\":\"Seven\"}]}",
                   "ValueError", "Invalid JSON Object Graph: invalid data for `test.GraphIntEnum` in node 0");
  check_from_error("{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphStrEnum\",\"data\":\"beta\"}]}",
                   "ValueError", "Enum `test.GraphStrEnum` has no instance with index beta");
  release(&seven), release(&alpha), release(&plain);
}

/* A type whose `__data_to_json__` / `__data_from_json__` hooks choose its
 * JSON form (here {"tenfold": 10 * v}) instead of its fields. */
typedef struct {
  TVMFFIObject header;
  int64_t v;
} hooked_obj;

static int32_t g_hooked_index;

static int hooked_to_json(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  TVMFFIAny kv[2] = {any_cstr("tenfold"), any_int(10 * ((hooked_obj*)args[0].v_obj)->v)};
  return call_global("ffi.Map", kv, 2, result);
}

static int hooked_from_json(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  TVMFFIAny get[2] = {args[0], any_cstr("tenfold")}, x;
  if (call_global("ffi.MapGetItem", get, 2, &x) != 0) return -1;
  hooked_obj* o =
      (hooked_obj*)wf_obj_alloc(sizeof(hooked_obj), 8, g_hooked_index, wf_obj_plain_deleter);
  if (o == NULL) return -1;
  o->v = x.v_int64 / 10;
  *result = any_obj(o);
  return 0;
}

void json_graph_data_json_hooks_choose_the_form(void) {
  TVMFFIByteArray key = {"test.GraphHooked", 16};
  g_hooked_index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  static const char* const names[2] = {"__data_to_json__", "__data_from_json__"};
  TVMFFISafeCallType hooks[2] = {hooked_to_json, hooked_from_json};
  for (int i = 0; i < 2; ++i) {
    TVMFFIObjectHandle f = NULL;
    CHECK(TVMFFIFunctionCreate(NULL, hooks[i], NULL, &f) == 0);
    TVMFFIByteArray attr = {names[i], strlen(names[i])};
    TVMFFIAny fv = any_obj(f);
    CHECK(TVMFFITypeRegisterAttr(g_hooked_index, &attr, &fv) == 0);
    TVMFFIObjectDecRef(f);
  }
  hooked_obj* o =
      (hooked_obj*)wf_obj_alloc(sizeof(hooked_obj), 8, g_hooked_index, wf_obj_plain_deleter);
  CHECK(o != NULL);
  o->v = 3;
  /* no creator and no fields: the hooks alone serialize it */
  TVMFFIAny value = any_obj(o), back;
  check_to_graph_string(value, "{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphHooked\","
                               "\"data\":{\"tenfold\":30}}]}");
  TVMFFIAny arg = any_cstr("{\"root_index\":0,\"nodes\":[{\"type\":\"test.GraphHooked\","
                           "\"data\":{\"tenfold\":50}}]}");
  CHECK(call_global("ffi.FromJSONGraphString", &arg, 1, &back) == 0);
  CHECK_EQ_INT(back.type_index, g_hooked_index);
  CHECK_EQ_INT(((hooked_obj*)back.v_obj)->v, 5);
  release(&back);
  release(&value);
}

/* ReprPrint as upstream's: an enum singleton prints as `Class.name`. */
void enum_singletons_print_as_class_dot_name(void) {
  TVMFFIAny red = define_enum("test.ReprIntEnum", "ffi.IntEnum", 1, "Red");
  TVMFFIAny items[2] = {red, red};
  TVMFFIAny arr = make("ffi.Array", items, 2), r;
  CHECK(call_global("ffi.ReprPrint", &arr, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "(test.ReprIntEnum.Red, test.ReprIntEnum.Red)");
  release(&r), release(&arr), release(&red);
}

/* The graph's text is written by json::Stringify's rules (upstream's
 * ToJSONGraphString is Stringify(ToJSONGraph)), so '/' is escaped. */
void json_graph_string_escapes_as_stringify(void) {
  TVMFFIAny s = any_cstr("a/b\x7f");
  check_to_graph_string(s, "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.String\","
                           "\"data\":\"a\\/b\\u007f\"}]}");
  check_round_trip(s);
  release(&s);
}
