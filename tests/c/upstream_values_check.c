/* The text and numbers upstream tvm-ffi's library gives, against ours:
 * ffi.ReprPrint, ffi.json.Stringify, ffi.ToJSONGraphString,
 * ffi.StructuralHash, ffi.RecursiveHash and ffi.GetGlobalFuncMetadata on
 * the same values, and the kinds of errors some C ABI calls raise. It uses the stable C ABI only, so this one source
 * builds against upstream's library, which is how
 * tests/fixtures/upstream_values.tsv was recorded
 * (tests/upstream/record_values.sh), and against webffi: natively (ctest,
 * comparing with the fixture itself) and in wasm
 * (tests/node/upstream_values.test.mjs compares its output).
 *
 * Output: one `section<TAB>case<TAB>value` line per value, the value with
 * backslash, newline, tab and CR escaped. `upstream_values_check FIXTURE`
 * compares instead: every line of the fixture must come out the same,
 * except `meta` lines for globals this runtime does not have (listed). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* ------------------------------------------------------------- plumbing */
static void die(const char* what) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  fprintf(stderr, "upstream_values_check: %s failed\n", what);
  if (err != NULL) {
    TVMFFIByteArray* kind = (TVMFFIByteArray*)((char*)err + sizeof(TVMFFIObject));
    TVMFFIByteArray* message = kind + 1;
    fprintf(stderr, "  %.*s: %.*s\n", (int)kind->size, kind->data, (int)message->size,
            message->data);
    TVMFFIObjectDecRef(err);
  }
  exit(2);
}

/* Every value made here, released at the end (leak checkers watch). */
static TVMFFIAny made[1024];
static int num_made;

static TVMFFIAny keep(TVMFFIAny v) {
  if (num_made == (int)(sizeof(made) / sizeof(made[0]))) die("keep (pool full)");
  made[num_made++] = v;
  return v;
}

static void release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(v->v_obj);
  v->type_index = kTVMFFINone;
}

static TVMFFIAny call(const char* name, TVMFFIAny* args, int32_t n) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0 || f == NULL) die(name);
  TVMFFIAny result;
  memset(&result, 0, sizeof(result));
  if (TVMFFIFunctionCall(f, args, n, &result) != 0) die(name);
  TVMFFIObjectDecRef(f);
  return result;
}

static TVMFFIAny none(void) {
  TVMFFIAny v;
  memset(&v, 0, sizeof(v));
  return v;
}

static TVMFFIAny pod(int32_t type_index, uint64_t bits) {
  TVMFFIAny v = none();
  v.type_index = type_index;
  v.v_uint64 = bits;
  return v;
}

static TVMFFIAny i64(int64_t x) { return pod(kTVMFFIInt, (uint64_t)x); }
static TVMFFIAny boolean(int x) { return pod(kTVMFFIBool, x != 0); }

static TVMFFIAny f64(double x) {
  TVMFFIAny v = pod(kTVMFFIFloat, 0);
  v.v_float64 = x;
  return v;
}

static TVMFFIAny str_n(const char* s, size_t n) {
  TVMFFIByteArray text = {s, n};
  TVMFFIAny v = none();
  if (TVMFFIStringFromByteArray(&text, &v) != 0) die("TVMFFIStringFromByteArray");
  return keep(v);
}

static TVMFFIAny str(const char* s) { return str_n(s, strlen(s)); }

static TVMFFIAny bytes(const char* s, size_t n) {
  TVMFFIByteArray text = {s, n};
  TVMFFIAny v = none();
  if (TVMFFIBytesFromByteArray(&text, &v) != 0) die("TVMFFIBytesFromByteArray");
  return keep(v);
}

static TVMFFIAny device(int32_t type, int32_t id) {
  TVMFFIAny v = pod(kTVMFFIDevice, 0);
  v.v_device.device_type = (DLDeviceType)type;
  v.v_device.device_id = id;
  return v;
}

static TVMFFIAny dtype(uint8_t code, uint8_t bits, uint16_t lanes) {
  TVMFFIAny v = pod(kTVMFFIDataType, 0);
  v.v_dtype.code = code;
  v.v_dtype.bits = bits;
  v.v_dtype.lanes = lanes;
  return v;
}

/* A container from its constructor global (ffi.Array, ffi.Map, ...). */
static TVMFFIAny make(const char* ctor, int32_t n, const TVMFFIAny* items) {
  TVMFFIAny args[16];
  if (n > 16) die("make (too many items)");
  for (int32_t i = 0; i < n; ++i) args[i] = items[i];
  return keep(call(ctor, args, n));
}

#define ITEMS(...) ((TVMFFIAny[]){__VA_ARGS__})
#define COUNT(...) ((int32_t)(sizeof(ITEMS(__VA_ARGS__)) / sizeof(TVMFFIAny)))
#define ARRAY(...) make("ffi.Array", COUNT(__VA_ARGS__), ITEMS(__VA_ARGS__))
#define LIST(...) make("ffi.List", COUNT(__VA_ARGS__), ITEMS(__VA_ARGS__))
#define MAP(...) make("ffi.Map", COUNT(__VA_ARGS__), ITEMS(__VA_ARGS__))
#define DICT(...) make("ffi.Dict", COUNT(__VA_ARGS__), ITEMS(__VA_ARGS__))
#define SHAPE(...) make("ffi.Shape", COUNT(__VA_ARGS__), ITEMS(__VA_ARGS__))
#define EMPTY(ctor) make(ctor, 0, NULL)

/* ------------------------------------------------------ object types */
/* Objects of the types below: up to four Any fields after the header. */
typedef struct {
  TVMFFIObject header;
  TVMFFIAny field[4];
} vobj;

static void vobj_delete(void* self, int flags) {
  vobj* o = (vobj*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (int i = 0; i < 4; ++i) release(&o->field[i]);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(o);
}

static int vobj_get(void* field, TVMFFIAny* out) { return TVMFFIAnyViewToOwnedAny(field, out); }

static int32_t define_type(const char* key, int32_t parent, TVMFFISEqHashKind kind) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, parent == kTVMFFIObject ? 1 : 2, 0, 1, parent);
  if (index < 0) die(key);
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.structural_eq_hash_kind = kind;
  if (TVMFFITypeRegisterMetadata(index, &meta) != 0) die(key);
  return index;
}

static void define_field(int32_t type, const char* name, int slot, int64_t flags) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.flags = flags;
  f.size = sizeof(TVMFFIAny);
  f.alignment = 8;
  f.offset = (int64_t)offsetof(vobj, field) + slot * (int64_t)sizeof(TVMFFIAny);
  f.getter = vobj_get;
  f.field_static_type_index = kTVMFFIAny;
  if (TVMFFITypeRegisterField(type, &f) != 0) die(name);
}

static int32_t t_pair, t_node, t_var, t_func, t_hidden, t_base, t_derived, t_empty;

static void define_types(void) {
  /* a tree node with three fields */
  t_pair = define_type("vcheck.Pair", kTVMFFIObject, kTVMFFISEqHashKindTreeNode);
  define_field(t_pair, "a", 0, 0);
  define_field(t_pair, "b", 1, 0);
  define_field(t_pair, "c", 2, 0);
  /* a DAG node: sharing shows in its structural hash */
  t_node = define_type("vcheck.Node", kTVMFFIObject, kTVMFFISEqHashKindDAGNode);
  define_field(t_node, "value", 0, 0);
  define_field(t_node, "next", 1, 0);
  /* a free variable and a function that defines its parameters */
  t_var = define_type("vcheck.Var", kTVMFFIObject, kTVMFFISEqHashKindFreeVar);
  define_field(t_var, "name", 0, kTVMFFIFieldFlagBitMaskSEqHashIgnore);
  t_func = define_type("vcheck.Func", kTVMFFIObject, kTVMFFISEqHashKindTreeNode);
  define_field(t_func, "params", 0, kTVMFFIFieldFlagBitMaskSEqHashDefRecursive);
  define_field(t_func, "body", 1, 0);
  /* fields left out of repr, of hashes and of comparison */
  t_hidden = define_type("vcheck.Hidden", kTVMFFIObject, kTVMFFISEqHashKindTreeNode);
  define_field(t_hidden, "shown", 0, 0);
  define_field(t_hidden, "no_repr", 1, kTVMFFIFieldFlagBitMaskReprOff);
  define_field(t_hidden, "no_hash", 2, kTVMFFIFieldFlagBitMaskHashOff);
  define_field(t_hidden, "no_compare", 3, kTVMFFIFieldFlagBitMaskCompareOff);
  /* a derived type that declares its parent's field again */
  t_base = define_type("vcheck.Base", kTVMFFIObject, kTVMFFISEqHashKindTreeNode);
  define_field(t_base, "x", 0, 0);
  t_derived = define_type("vcheck.Derived", t_base, kTVMFFISEqHashKindTreeNode);
  define_field(t_derived, "x", 1, 0);
  define_field(t_derived, "y", 2, 0);
  t_empty = define_type("vcheck.Empty", kTVMFFIObject, kTVMFFISEqHashKindTreeNode);
}

static TVMFFIAny object(int32_t type, int n, const TVMFFIAny* fields) {
  vobj* o = (vobj*)calloc(1, sizeof(vobj));
  if (o == NULL) die("calloc");
  o->header.combined_ref_count = 1 | (1ull << 32); /* one strong, one weak reference */
  o->header.type_index = type;
  o->header.deleter = vobj_delete;
  for (int i = 0; i < n; ++i) {
    if (TVMFFIAnyViewToOwnedAny(&fields[i], &o->field[i]) != 0) die("field");
  }
  TVMFFIAny v = none();
  v.type_index = type;
  v.v_obj = &o->header;
  return keep(v);
}

#define OBJECT(type, ...) object(type, COUNT(__VA_ARGS__), ITEMS(__VA_ARGS__))

/* A CPU tensor over static data (float32 0..n-1). */
static float tensor_data[12];

static void no_delete(DLManagedTensor* self) { (void)self; }

static TVMFFIAny tensor(int64_t rows, int64_t cols) {
  static int64_t shapes[8][2];
  static DLManagedTensor managed[8];
  static int used;
  if (used == 8) die("tensor (too many)");
  for (int i = 0; i < 12; ++i) tensor_data[i] = (float)i;
  int64_t* shape = shapes[used];
  shape[0] = rows;
  shape[1] = cols;
  DLManagedTensor* m = &managed[used++];
  memset(m, 0, sizeof(*m));
  m->dl_tensor.data = tensor_data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = shape;
  m->deleter = no_delete;
  TVMFFIObjectHandle t = NULL;
  if (TVMFFITensorFromDLPack(m, 0, 0, &t) != 0) die("TVMFFITensorFromDLPack");
  TVMFFIAny v = none();
  v.type_index = kTVMFFITensor;
  v.v_obj = t;
  return keep(v);
}

static int no_op(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  return 0;
}

/* ------------------------------------------------------------- output */
typedef struct {
  char* text;
  size_t size, cap;
} text_buf;

static text_buf out;

static void put(const char* s, size_t n) {
  if (out.size + n + 1 > out.cap) {
    size_t cap = out.cap ? out.cap * 2 : 1 << 16;
    while (cap < out.size + n + 1) cap *= 2;
    char* grown = (char*)realloc(out.text, cap);
    if (grown == NULL) die("realloc");
    out.text = grown;
    out.cap = cap;
  }
  memcpy(out.text + out.size, s, n);
  out.size += n;
  out.text[out.size] = '\0';
}

static void puts_escaped(const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const char* esc = s[i] == '\\' ? "\\\\" : s[i] == '\n' ? "\\n" : s[i] == '\t' ? "\\t"
                    : s[i] == '\r' ? "\\r" : NULL;
    if (esc != NULL) put(esc, 2);
    else put(s + i, 1);
  }
}

static void emit_text(const char* section, const char* name, const char* s, size_t n) {
  put(section, strlen(section));
  put("\t", 1);
  put(name, strlen(name));
  put("\t", 1);
  puts_escaped(s, n);
  put("\n", 1);
}

/* A string result (small or an object) as text. */
static void emit_string(const char* section, const char* name, TVMFFIAny r) {
  if (r.type_index == kTVMFFISmallStr) {
    emit_text(section, name, r.v_bytes, r.small_str_len);
  } else if (r.type_index == kTVMFFIStr) {
    TVMFFIByteArray* b = (TVMFFIByteArray*)((char*)r.v_obj + sizeof(TVMFFIObject));
    emit_text(section, name, b->data, b->size);
  } else {
    die(name);
  }
  release(&r);
}

static void emit_int(const char* section, const char* name, TVMFFIAny r) {
  if (r.type_index != kTVMFFIInt) die(name);
  char text[32];
  snprintf(text, sizeof(text), "%lld", (long long)r.v_int64);
  emit_text(section, name, text, strlen(text));
}

static void repr(const char* name, TVMFFIAny v) { emit_string("repr", name, call("ffi.ReprPrint", &v, 1)); }

static void json(const char* name, TVMFFIAny v, int indent) {
  TVMFFIAny args[2] = {v, indent < 0 ? none() : i64(indent)};
  emit_string("json", name, call("ffi.json.Stringify", args, 2));
}

static void graph(const char* name, TVMFFIAny v) {
  TVMFFIAny args[2] = {v, none()}; /* no metadata */
  emit_string("graph", name, call("ffi.ToJSONGraphString", args, 2));
}

static void hashes(const char* name, TVMFFIAny v) {
  TVMFFIAny args[3] = {v, boolean(0), boolean(0)};
  emit_int("shash", name, call("ffi.StructuralHash", args, 3));
  args[1] = boolean(1);
  emit_int("shash_free", name, call("ffi.StructuralHash", args, 3));
  args[1] = boolean(0);
  args[2] = boolean(1);
  emit_int("shash_no_content", name, call("ffi.StructuralHash", args, 3));
  emit_int("rhash", name, call("ffi.RecursiveHash", &v, 1));
}

/* -------------------------------------------------------------- cases */
static void repr_cases(void) {
  repr("int", i64(42));
  repr("int_zero", i64(0));
  repr("int_negative", i64(-1));
  repr("int_large", i64((int64_t)1 << 62));
  repr("none", none());
  repr("true", boolean(1));
  repr("false", boolean(0));
  repr("float", f64(3.14));
  repr("float_zero", f64(0.0));
  repr("float_negative_zero", f64(-0.0));
  repr("float_whole", f64(1.0));
  repr("float_1e10", f64(1e10));
  repr("float_negative", f64(-1.5));
  repr("float_small", f64(1e-5));
  repr("float_many_digits", f64(123456789.0));
  repr("float_tenth", f64(0.1));
  repr("float_1e100", f64(1e100));
  repr("float_nan", f64(NAN));
  repr("float_inf", f64(INFINITY));
  repr("float_negative_inf", f64(-INFINITY));
  repr("str", str("hello"));
  repr("str_empty", str(""));
  repr("str_spaces", str("a b c"));
  repr("str_latin1", str("caf\xc3\xa9"));
  repr("str_cjk", str("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"));
  repr("str_emoji", str("\xf0\x9f\x98\x80"));
  repr("str_escapes", str("tab\tnl\nq\"bs\\cr\r"));
  repr("str_control", str("\x01\x7f\x08\x0c"));
  repr("str_ansi", str("\x1b[31mred\x1b[0m\x1b[2K"));
  repr("str_not_ansi", str("\x1b[31x"));
  repr("str_bad_utf8", str_n("\xff\xc3(\xe6\x97", 5));
  repr("str_heap", str("a longer string, caf\xc3\xa9!"));
  repr("bytes_small", bytes("hi", 2));
  repr("bytes", bytes("ab\"\\\x00\xff\n~", 8));
  repr("array_one", ARRAY(i64(42)));
  repr("array_empty", EMPTY("ffi.Array"));
  repr("array", ARRAY(i64(1), i64(2), i64(3)));
  repr("array_nested", ARRAY(ARRAY(ARRAY(ARRAY(i64(1))))));
  repr("array_strings", ARRAY(str("a"), str("b")));
  repr("array_mixed", ARRAY(i64(1), str("hello"), boolean(1), none()));
  repr("array_of_arrays", ARRAY(ARRAY(i64(1), i64(2)), ARRAY(i64(3))));
  repr("list_one", LIST(i64(99)));
  repr("list_empty", EMPTY("ffi.List"));
  repr("list_nested", LIST(LIST(LIST(LIST(i64(1))))));
  repr("map", MAP(str("key"), str("value")));
  repr("map_empty", EMPTY("ffi.Map"));
  repr("map_int_keys", MAP(i64(1), ARRAY(i64(10), i64(20)), i64(2), f64(0.5)));
  repr("map_nested", MAP(str("nested"), ARRAY(LIST(i64(1), i64(2)))));
  repr("dict", DICT(str("key"), str("value")));
  repr("dict_empty", EMPTY("ffi.Dict"));
  repr("shape", SHAPE(i64(5), i64(6)));
  repr("tensor", tensor(3, 4));
  repr("device_cpu", device(kDLCPU, 0));
  repr("device_cuda", device(kDLCUDA, 1));
  repr("device_trn", device(kDLTrn, 0));
  repr("device_webgpu", device(kDLWebGPU, 0));
  repr("device_unknown", device(5, 2));
  repr("dtype_float32", dtype(kDLFloat, 32, 1));
  repr("dtype_int8", dtype(kDLInt, 8, 1));
  repr("dtype_bool", dtype(kDLBool, 8, 1));
  repr("dtype_float16x4", dtype(kDLFloat, 16, 4));
  TVMFFIAny pair = OBJECT(t_pair, i64(1), str("x"), f64(2.0));
  repr("object", pair);
  repr("object_hidden", OBJECT(t_hidden, i64(1), i64(2), i64(3), i64(4)));
  repr("object_redeclared_field", OBJECT(t_derived, i64(1), i64(2), i64(3)));
  repr("object_no_fields", OBJECT(t_empty, none()));
  repr("object_shared", ARRAY(pair, ARRAY(pair), MAP(str("p"), pair)));
  TVMFFIAny missing_args[2] = {EMPTY("ffi.Map"), i64(0)};
  TVMFFIAny missing = keep(call("ffi.MapGetItemOrMissing", missing_args, 2));
  repr("missing", missing);
  repr("missing_in_array", ARRAY(missing, i64(1)));
  repr("kwargs", keep(call("ffi.GetKwargsObject", NULL, 0)));
  TVMFFIObjectHandle fn = NULL;
  if (TVMFFIFunctionCreate(NULL, no_op, NULL, &fn) != 0) die("TVMFFIFunctionCreate");
  TVMFFIAny fv = none();
  fv.type_index = kTVMFFIFunction;
  fv.v_obj = fn;
  repr("function", keep(fv));
  TVMFFIByteArray kind = {"ValueError", 10}, message = {"bad \"x\"", 7}, trace = {"", 0};
  TVMFFIObjectHandle err = NULL;
  if (TVMFFIErrorCreate(&kind, &message, &trace, &err) != 0) die("TVMFFIErrorCreate");
  TVMFFIAny ev = none();
  ev.type_index = kTVMFFIError;
  ev.v_obj = err;
  repr("error", keep(ev));
  TVMFFIAny opaque = pod(kTVMFFIOpaquePtr, 0);
  opaque.v_ptr = &tensor_data;
  repr("opaque_ptr", opaque);
  /* cycles: a List in itself, a Dict in itself, an object through a List */
  TVMFFIAny list = EMPTY("ffi.List"), dict = EMPTY("ffi.Dict");
  TVMFFIAny append[2] = {list, list}, set[3] = {dict, str("self"), dict};
  call("ffi.ListAppend", append, 2);
  call("ffi.DictSetItem", set, 3);
  repr("cycle_list", list);
  repr("cycle_dict", dict);
  TVMFFIAny holder = EMPTY("ffi.List");
  TVMFFIAny looped = OBJECT(t_pair, i64(7), holder, none());
  TVMFFIAny hold[2] = {holder, looped};
  call("ffi.ListAppend", hold, 2);
  repr("cycle_object", looped);
  /* break the cycles so everything is freed */
  call("ffi.ListClear", &list, 1);
  call("ffi.DictClear", &dict, 1);
  call("ffi.ListClear", &holder, 1);
}

static void json_cases(void) {
  TVMFFIAny floats = ARRAY(f64(0.1), f64(1.0), f64(1e300), f64(-0.0), f64(1.5),
                           f64(1.2345678901234567e20), f64(5e-324), f64(9007199254740992.0),
                           f64(4503599627370495.5), f64(-2.5e-7), f64(100.0));
  json("floats", floats, -1);
  json("floats_special", ARRAY(f64(NAN), f64(INFINITY), f64(-INFINITY)), -1);
  TVMFFIAny nested = MAP(str("a"), EMPTY("ffi.Array"), str("b"), EMPTY("ffi.Map"), str("c"),
                         ARRAY(i64(1), MAP(str("d"), EMPTY("ffi.Array")), none()), str("e"),
                         str("s\"/\\\x01\x7f caf\xc3\xa9"), str("f"), LIST(boolean(1), f64(2.5)));
  json("nested", nested, -1);
  json("nested_indent_0", nested, 0);
  json("nested_indent_2", nested, 2);
  json("nested_indent_4", nested, 4);
  json("empty_array_indent_2", EMPTY("ffi.Array"), 2);
  json("empty_map_indent_2", EMPTY("ffi.Map"), 2);
  json("scalar_float", f64(0.3), 2);
  graph("floats", ARRAY(f64(0.1), f64(2.0), f64(-1e-10)));
  graph("map", MAP(str("k"), f64(1.5), str("s/\x7f"), str("\xc3\xa9")));
}

static void hash_cases(void) {
  hashes("none", none());
  hashes("true", boolean(1));
  hashes("false", boolean(0));
  hashes("int_zero", i64(0));
  hashes("int", i64(1));
  hashes("int_negative", i64(-1));
  hashes("int_large", i64((int64_t)1 << 40));
  hashes("float", f64(1.5));
  hashes("float_zero", f64(0.0));
  hashes("float_negative_zero", f64(-0.0));
  hashes("float_nan", f64(NAN));
  hashes("float_inf", f64(INFINITY));
  hashes("str_empty", str(""));
  hashes("str", str("abc"));
  hashes("str_7", str("1234567"));
  hashes("str_8", str("12345678"));
  hashes("str_long", str("a string longer than a word, caf\xc3\xa9"));
  hashes("bytes_small", bytes("hi", 2));
  hashes("bytes_7", bytes("1234567", 7));
  hashes("bytes_long", bytes("bytes longer than a word\x00\xff", 26));
  hashes("device", device(kDLCUDA, 1));
  hashes("dtype", dtype(kDLFloat, 32, 1));
  hashes("array", ARRAY(i64(1), i64(2), i64(3)));
  hashes("array_empty", EMPTY("ffi.Array"));
  hashes("list", LIST(i64(1), str("a")));
  hashes("map", MAP(str("a"), i64(1), str("b"), i64(2)));
  hashes("map_reordered", MAP(str("b"), i64(2), str("a"), i64(1)));
  hashes("map_int_keys", MAP(i64(1), str("x"), i64(2), str("y")));
  hashes("map_mixed_keys", MAP(i64(1), str("x"), str("1"), str("y"), f64(1.0), none()));
  hashes("dict", DICT(str("a"), i64(1)));
  hashes("shape", SHAPE(i64(2), i64(3)));
  hashes("tensor", tensor(2, 3));
  hashes("nested", ARRAY(MAP(str("k"), LIST(i64(1), f64(0.5))), SHAPE(i64(4)), str("z")));
  TVMFFIAny pair = OBJECT(t_pair, i64(1), str("x"), none());
  hashes("object", pair);
  hashes("object_hidden", OBJECT(t_hidden, i64(1), i64(2), i64(3), i64(4)));
  hashes("object_redeclared_field", OBJECT(t_derived, i64(1), i64(2), i64(3)));
  hashes("object_shared", ARRAY(pair, pair));
  TVMFFIAny n1 = OBJECT(t_node, i64(1), none()), n2 = OBJECT(t_node, i64(1), none());
  hashes("dag_shared", ARRAY(n1, n1));
  hashes("dag_distinct", ARRAY(n1, n2));
  hashes("dag_chain", OBJECT(t_node, i64(2), OBJECT(t_node, i64(3), n1)));
  TVMFFIAny x = OBJECT(t_var, str("x")), y = OBJECT(t_var, str("y"));
  hashes("func", OBJECT(t_func, ARRAY(x, y), ARRAY(y, x, i64(1))));
  hashes("func_other_names",
         OBJECT(t_func, ARRAY(OBJECT(t_var, str("a")), OBJECT(t_var, str("b"))), ARRAY(i64(1))));
  /* a Map key that is an object counts when it was hashed before */
  TVMFFIAny keyed = MAP(pair, i64(1));
  hashes("map_object_key", keyed);
  hashes("map_object_key_after", ARRAY(pair, keyed));
  hashes("map_object_key_before", ARRAY(keyed, pair));
  hashes("map_object_key_twice", ARRAY(keyed, pair, keyed));
  /* RecursiveHash only: cycles hash, and values StructuralHash refuses */
  TVMFFIAny list = EMPTY("ffi.List"), append[2] = {list, list};
  call("ffi.ListAppend", append, 2);
  TVMFFIAny hargs[1] = {list};
  emit_int("rhash", "cycle_list", call("ffi.RecursiveHash", hargs, 1));
  call("ffi.ListClear", &list, 1);
  TVMFFIAny kwargs = keep(call("ffi.GetKwargsObject", NULL, 0));
  emit_int("rhash", "kwargs", call("ffi.RecursiveHash", &kwargs, 1));
}

/* The kind of error a C ABI call raises (its message is each library's own). */
static void error_cases(void) {
  TVMFFIAny one = i64(1);
  TVMFFIByteArray name = {"vcheck.attr", 11};
  if (TVMFFITypeRegisterAttr(t_pair, &name, &one) != 0) die("TVMFFITypeRegisterAttr");
  const char* kind = "none raised";
  TVMFFIObjectHandle err = NULL;
  if (TVMFFITypeRegisterAttr(t_pair, &name, &one) != 0) TVMFFIErrorMoveFromRaised(&err);
  TVMFFIByteArray* k = err != NULL ? (TVMFFIByteArray*)((char*)err + sizeof(TVMFFIObject)) : NULL;
  emit_text("error", "type_attr_registered_twice", k != NULL ? k->data : kind,
            k != NULL ? k->size : strlen(kind));
  if (err != NULL) TVMFFIObjectDecRef(err);
}

/* Every global's metadata, by name. */
static int by_name(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static void metadata_cases(void) {
  TVMFFIAny names = call("ffi.FunctionListGlobalNamesFunctor", NULL, 0);
  TVMFFIAny count_arg = i64(-1);
  TVMFFIAny count;
  memset(&count, 0, sizeof(count));
  if (TVMFFIFunctionCall(names.v_obj, &count_arg, 1, &count) != 0) die("names(-1)");
  char** list = (char**)calloc((size_t)count.v_int64 + 1, sizeof(char*));
  if (list == NULL) die("calloc");
  for (int64_t i = 0; i < count.v_int64; ++i) {
    TVMFFIAny index = i64(i), name;
    memset(&name, 0, sizeof(name));
    if (TVMFFIFunctionCall(names.v_obj, &index, 1, &name) != 0) die("names(i)");
    const char* data = name.type_index == kTVMFFISmallStr
                           ? name.v_bytes
                           : ((TVMFFIByteArray*)((char*)name.v_obj + sizeof(TVMFFIObject)))->data;
    size_t len = strlen(data);
    if ((list[i] = (char*)malloc(len + 1)) == NULL) die("malloc");
    memcpy(list[i], data, len + 1);
    release(&name);
  }
  release(&names);
  qsort(list, (size_t)count.v_int64, sizeof(char*), by_name);
  for (int64_t i = 0; i < count.v_int64; ++i) {
    TVMFFIAny name = str(list[i]);
    emit_string("meta", list[i], call("ffi.GetGlobalFuncMetadata", &name, 1));
    free(list[i]);
  }
  free(list);
}

/* ------------------------------------------------------------ compare */
/* The line of `out` whose key (section TAB case) is key, or NULL. */
static const char* find_line(const char* key, size_t key_len) {
  for (const char* p = out.text; p != NULL && *p != '\0';) {
    if (strncmp(p, key, key_len) == 0 && p[key_len] == '\t') return p;
    p = strchr(p, '\n');
    if (p != NULL) ++p;
  }
  return NULL;
}

static int compare(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "upstream_values_check: cannot open %s\n", path);
    return 2;
  }
  char line[1 << 14];
  int checked = 0, differ = 0, absent = 0;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (line[0] == '#' || line[0] == '\n') continue;
    const char* tab1 = strchr(line, '\t');
    const char* tab2 = tab1 != NULL ? strchr(tab1 + 1, '\t') : NULL;
    if (tab2 == NULL) continue;
    size_t key_len = (size_t)(tab2 - line);
    const char* ours = find_line(line, key_len);
    if (ours == NULL) {
      if (strncmp(line, "meta\t", 5) == 0) {
        printf("not here: %.*s\n", (int)key_len, line);
        ++absent;
        continue;
      }
      printf("MISSING %.*s\n", (int)key_len, line);
      ++differ;
      continue;
    }
    const char* end = strchr(ours, '\n');
    size_t ours_len = end != NULL ? (size_t)(end - ours) + 1 : strlen(ours);
    ++checked;
    if (strlen(line) != ours_len || strncmp(line, ours, ours_len) != 0) {
      printf("DIFFERS upstream: %s        ours: %.*s", line, (int)ours_len, ours);
      ++differ;
    }
  }
  fclose(f);
  printf("%d values checked, %d differ, %d globals not here\n", checked, differ, absent);
  return differ == 0 && checked > 0 ? 0 : 1;
}

static int run(const char* fixture) {
  define_types();
  repr_cases();
  json_cases();
  hash_cases();
  error_cases();
  metadata_cases();
  for (int i = num_made; i-- > 0;) release(&made[i]);
  int rc = 0;
  if (fixture != NULL) {
    rc = compare(fixture);
  } else {
    fwrite(out.text, 1, out.size, stdout);
  }
  free(out.text);
  return rc;
}

#if defined(__wasm__)
/* (wasi-libc exits when a host passes no argv; wasm runs only print) */
int main(void) { return run(NULL); }
#else
int main(int argc, char** argv) { return run(argc > 1 ? argv[1] : NULL); }
#endif
