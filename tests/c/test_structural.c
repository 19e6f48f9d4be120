/* ffi.RecursiveEq, ffi.RecursiveHash, ffi.ReprPrint and ffi.DeepCopy. */
#include "harness.h"

static TVMFFIAny make(const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(ctor, args, n, &result) == 0);
  return result;
}

static int recursive_eq(TVMFFIAny a, TVMFFIAny b) {
  TVMFFIAny args[2] = {a, b}, r;
  CHECK(call_global("ffi.RecursiveEq", args, 2, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIBool);
  return (int)r.v_int64;
}

static int64_t recursive_hash(TVMFFIAny a) {
  TVMFFIAny r;
  CHECK(call_global("ffi.RecursiveHash", &a, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIInt);
  return r.v_int64;
}

/* ReprPrint of v, compared with want. */
static void check_repr(TVMFFIAny v, const char* want) {
  TVMFFIAny r;
  CHECK(call_global("ffi.ReprPrint", &v, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), want);
  release(&r);
}

static TVMFFIAny make_pair(int64_t a, int64_t b) {
  TVMFFIByteArray key = {"testing.TestIntPair", 19};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, "__ffi_init__") != 0) continue;
    TVMFFIAny args[2] = {any_int(a), any_int(b)}, r = any_none();
    CHECK(TVMFFIFunctionCall(info->methods[i].method.v_obj, args, 2, &r) == 0);
    return r;
  }
  CHECK(0);
  return any_none();
}

void structural_eq_and_hash_of_containers(void) {
  TVMFFIAny inner1[2] = {any_cstr("a"), any_float(1.5)}, inner2[2] = {any_cstr("a"), any_float(1.5)};
  TVMFFIAny m1 = make("ffi.Map", inner1, 2), m2 = make("ffi.Map", inner2, 2);
  TVMFFIAny a1[3] = {any_int(1), m1, any_cstr("a string longer than 7")};
  TVMFFIAny a2[3] = {any_int(1), m2, any_cstr("a string longer than 7")};
  TVMFFIAny x = make("ffi.Array", a1, 3), y = make("ffi.Array", a2, 3);
  CHECK(x.v_obj != y.v_obj);
  CHECK(recursive_eq(x, y));
  CHECK_EQ_INT(recursive_hash(x), recursive_hash(y));
  /* a List with the same elements is a different kind of value */
  TVMFFIAny l = make("ffi.List", a1, 3);
  CHECK(!recursive_eq(x, l));
  a2[0] = any_int(2);
  TVMFFIAny z = make("ffi.Array", a2, 3);
  CHECK(!recursive_eq(x, z));
  CHECK(recursive_hash(x) != recursive_hash(z));
  /* 1 and 1.0 differ; NaN equals NaN; map order does not matter */
  CHECK(!recursive_eq(any_int(1), any_float(1.0)));
  CHECK(recursive_eq(any_float(0.0 / 0.0), any_float(0.0 / 0.0)));
  CHECK_EQ_INT(recursive_hash(any_float(0.0)), recursive_hash(any_float(-0.0)));
  TVMFFIAny kv1[4] = {any_int(1), any_int(2), any_int(3), any_int(4)};
  TVMFFIAny kv2[4] = {any_int(3), any_int(4), any_int(1), any_int(2)};
  TVMFFIAny p = make("ffi.Map", kv1, 4), q = make("ffi.Map", kv2, 4);
  CHECK(recursive_eq(p, q));
  CHECK_EQ_INT(recursive_hash(p), recursive_hash(q));
  TVMFFIAny all[] = {m1, m2, x, y, l, z, p, q};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) release(&all[i]);
}

void structural_eq_of_reflected_objects(void) {
  TVMFFIAny p = make_pair(1, 2), q = make_pair(1, 2), r = make_pair(1, 3);
  CHECK(recursive_eq(p, q));
  CHECK(!recursive_eq(p, r));
  CHECK_EQ_INT(recursive_hash(p), recursive_hash(q));
  release(&p);
  release(&q);
  release(&r);
}

void structural_eq_of_cycles_is_value_error(void) {
  TVMFFIAny a = make("ffi.List", NULL, 0), b = make("ffi.List", NULL, 0), r;
  TVMFFIAny push_a[2] = {a, a}, push_b[2] = {b, b};
  CHECK(call_global("ffi.ListAppend", push_a, 2, &r) == 0);
  CHECK(call_global("ffi.ListAppend", push_b, 2, &r) == 0);
  CHECK(recursive_eq(a, a)); /* the same object */
  TVMFFIAny args[2] = {a, b};
  CHECK(call_global("ffi.RecursiveEq", args, 2, &r) == -1);
  CHECK_RAISED("ValueError", "RecursiveEq: nesting deeper than 256 levels (or a cycle)");
  /* hashing a cycle gives a value, as upstream's does (the list inside
   * itself counts as its type key) */
  CHECK_EQ_INT(recursive_hash(a), recursive_hash(b));
  check_repr(a, "[...]");
  /* break the cycles so the lists are freed */
  CHECK(call_global("ffi.ListClear", &a, 1, &r) == 0);
  CHECK(call_global("ffi.ListClear", &b, 1, &r) == 0);
  release(&a);
  release(&b);
}

void repr_forms(void) {
  TVMFFIAny three[3] = {any_int(1), any_int(2), any_int(3)};
  TVMFFIAny arr = make("ffi.Array", three, 3);
  check_repr(arr, "(1, 2, 3)");
  TVMFFIAny list = make("ffi.List", three, 3);
  check_repr(list, "[1, 2, 3]");
  TVMFFIAny kv[4] = {any_int(3), any_int(2), any_int(4), any_int(3)};
  TVMFFIAny map = make("ffi.Map", kv, 4);
  check_repr(map, "{3: 2, 4: 3}");
  TVMFFIAny skv[2] = {any_cstr("a"), any_int(1)};
  TVMFFIAny smap = make("ffi.Map", skv, 2);
  check_repr(smap, "{\"a\": 1}");
  TVMFFIAny dims[2] = {any_int(5), any_int(6)};
  TVMFFIAny shape = make("ffi.Shape", dims, 2);
  check_repr(shape, "Shape(5, 6)");
  TVMFFIAny pair = make_pair(1, 2);
  check_repr(pair, "testing.TestIntPair(a=1, b=2)");
  TVMFFIAny mixed[7] = {any_none(), any_bool(1), any_float(5.0), any_float(0.1),
                        any_cstr("q\"\n"), any_float(-1.0 / 0.0), any_int(-7)};
  TVMFFIAny m = make("ffi.Array", mixed, 7);
  check_repr(m, "(None, True, 5, 0.1, \"q\\\"\\n\", -inf, -7)"); /* floats as upstream: %g */
  TVMFFIAny dev = any_none();
  dev.type_index = kTVMFFIDevice;
  dev.v_device.device_type = kDLWebGPU;
  check_repr(dev, "webgpu:0");
  TVMFFIAny all[] = {arr, list, map, smap, shape, pair, m};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) release(&all[i]);
}

void repr_tensor_form(void) {
  /* A tensor cell is a DLTensor: enough to print one without a tensor API. */
  struct {
    TVMFFIObject header;
    DLTensor t;
  } tensor;
  int64_t shape[2] = {3, 4};
  memset(&tensor, 0, sizeof(tensor));
  tensor.header.type_index = kTVMFFITensor;
  tensor.header.combined_ref_count = 1;
  tensor.t.device.device_type = kDLCPU;
  tensor.t.ndim = 2;
  tensor.t.dtype.code = kDLFloat;
  tensor.t.dtype.bits = 32;
  tensor.t.dtype.lanes = 1;
  tensor.t.shape = shape;
  check_repr(any_obj(&tensor.header), "float32[3, 4]@cpu:0");
}

void deepcopy_copies_containers_and_keeps_sharing(void) {
  TVMFFIAny inner = make("ffi.List", NULL, 0), r;
  TVMFFIAny two[2] = {inner, inner};
  TVMFFIAny outer = make("ffi.List", two, 2);
  TVMFFIAny self_push[2] = {outer, outer};
  CHECK(call_global("ffi.ListAppend", self_push, 2, &r) == 0); /* a cycle */
  TVMFFIAny copy;
  CHECK(call_global("ffi.DeepCopy", &outer, 1, &copy) == 0);
  CHECK(copy.v_obj != outer.v_obj);
  TVMFFISeqCell* c = (TVMFFISeqCell*)((char*)copy.v_obj + sizeof(TVMFFIObject));
  TVMFFIAny* e = (TVMFFIAny*)c->data;
  CHECK_EQ_INT(c->size, 3);
  CHECK(e[0].v_obj != inner.v_obj);   /* copied */
  CHECK(e[0].v_obj == e[1].v_obj);    /* still shared */
  CHECK(e[2].v_obj == copy.v_obj);    /* the cycle points at the copy */
  /* mutating the copy leaves the original alone */
  TVMFFIAny push[2] = {e[0], any_int(1)}, size;
  CHECK(call_global("ffi.ListAppend", push, 2, &r) == 0);
  CHECK(call_global("ffi.ListSize", &inner, 1, &size) == 0);
  CHECK_EQ_INT(size.v_int64, 0);
  CHECK(call_global("ffi.ListClear", &copy, 1, &r) == 0);
  CHECK(call_global("ffi.ListClear", &outer, 1, &r) == 0);
  release(&copy);
  release(&outer);
  release(&inner);
}

void deepcopy_reflected_object(void) {
  TVMFFIAny pair = make_pair(3, 4), copy;
  TVMFFIAny one[1] = {pair};
  TVMFFIAny arr = make("ffi.Array", one, 1);
  CHECK(call_global("ffi.DeepCopy", &arr, 1, &copy) == 0);
  TVMFFIAny* e = (TVMFFIAny*)((TVMFFISeqCell*)((char*)copy.v_obj + sizeof(TVMFFIObject)))->data;
  CHECK(e[0].v_obj != pair.v_obj);
  CHECK(recursive_eq(e[0], pair));
  /* a function is shared, not copied */
  TVMFFIByteArray name = {"testing.nop", 11};
  TVMFFIObjectHandle f;
  CHECK(TVMFFIFunctionGetGlobal(&name, &f) == 0);
  TVMFFIAny fa = any_obj(f), fcopy;
  CHECK(call_global("ffi.DeepCopy", &fa, 1, &fcopy) == 0);
  CHECK(fcopy.v_obj == f);
  TVMFFIObjectDecRef(fcopy.v_obj);
  TVMFFIObjectDecRef(f);
  release(&copy);
  release(&arr);
  release(&pair);
}
