/* What upstream's core registers for structural work: ffi.StructuralEqual,
 * ffi.StructuralHash, ffi.GetFirstStructuralMismatch (with access paths),
 * ffi.StructuralKey / StructuralKeyEqual and ffi.RecursiveLt/Le/Gt/Ge. */
#include <stddef.h>

#include "../../src/memo.h"
#include "harness.h"

static TVMFFIAny make(const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(ctor, args, n, &result) == 0);
  return result;
}

static int sequal(TVMFFIAny a, TVMFFIAny b, int map_free_vars) {
  TVMFFIAny args[4] = {a, b, any_bool(map_free_vars), any_bool(0)}, r;
  CHECK(call_global("ffi.StructuralEqual", args, 4, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIBool);
  return (int)r.v_int64;
}

static int64_t shash(TVMFFIAny a, int map_free_vars) {
  TVMFFIAny args[3] = {a, any_bool(map_free_vars), any_bool(0)}, r;
  CHECK(call_global("ffi.StructuralHash", args, 3, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIInt);
  return r.v_int64;
}

/* The repr of an access path, built here from its fields: <root>.a[0]... */
static void path_text(TVMFFIAny path, char* out, size_t cap) {
  TVMFFIAny steps_args[1] = {path}, steps;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(path.type_index);
  CHECK(info != NULL && strcmp(info->type_key.data, "ffi.reflection.AccessPath") == 0);
  TVMFFIObjectHandle to_steps = NULL;
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, "_to_steps") == 0) to_steps = info->methods[i].method.v_obj;
  }
  CHECK(to_steps != NULL);
  steps.type_index = kTVMFFINone;
  CHECK(TVMFFIFunctionCall(to_steps, steps_args, 1, &steps) == 0);
  TVMFFIAny size_args[1] = {steps}, size;
  CHECK(call_global("ffi.ArraySize", size_args, 1, &size) == 0);
  snprintf(out, cap, "<root>");
  for (int64_t i = 0; i < size.v_int64; ++i) {
    TVMFFIAny get_args[2] = {steps, any_int(i)}, step;
    CHECK(call_global("ffi.ArrayGetItem", get_args, 2, &step) == 0);
    /* AccessStep: kind (int32) then key (Any), after the object header */
    int32_t kind = *(int32_t*)((char*)step.v_obj + sizeof(TVMFFIObject));
    TVMFFIAny* key = (TVMFFIAny*)((char*)step.v_obj + sizeof(TVMFFIObject) + 8);
    size_t len = strlen(out);
    if (kind == 0) snprintf(out + len, cap - len, ".%s", any_str(key));
    if (kind == 1) snprintf(out + len, cap - len, "[%lld]", (long long)key->v_int64);
    if (kind == 2) snprintf(out + len, cap - len, "[%s]", any_str(key));
    if (kind == 4) snprintf(out + len, cap - len, "[<missing:%lld>]", (long long)key->v_int64);
    if (kind == 5) snprintf(out + len, cap - len, "[<missing:%s>]", any_str(key));
    release(&step);
  }
  release(&steps);
}

/* GetFirstStructuralMismatch as "lhs-path rhs-path", or "equal". */
static void mismatch_text(TVMFFIAny a, TVMFFIAny b, char* out, size_t cap) {
  TVMFFIAny args[4] = {a, b, any_bool(0), any_bool(0)}, r;
  CHECK(call_global("ffi.GetFirstStructuralMismatch", args, 4, &r) == 0);
  if (r.type_index == kTVMFFINone) {
    snprintf(out, cap, "equal");
    return;
  }
  CHECK_EQ_INT(r.type_index, kTVMFFIArray);
  TVMFFIAny g0[2] = {r, any_int(0)}, g1[2] = {r, any_int(1)}, lp, rp;
  CHECK(call_global("ffi.ArrayGetItem", g0, 2, &lp) == 0);
  CHECK(call_global("ffi.ArrayGetItem", g1, 2, &rp) == 0);
  char lt[128], rt[128];
  path_text(lp, lt, sizeof(lt));
  path_text(rp, rt, sizeof(rt));
  snprintf(out, cap, "%s %s", lt, rt);
  release(&lp);
  release(&rp);
  release(&r);
}

void structural_equal_compares_containers_by_content(void) {
  TVMFFIAny kv1[4] = {any_cstr("k"), any_int(1), any_cstr("longer key"), any_float(2.5)};
  TVMFFIAny kv2[4] = {any_cstr("longer key"), any_float(2.5), any_cstr("k"), any_int(1)};
  TVMFFIAny m1 = make("ffi.Map", kv1, 4), m2 = make("ffi.Map", kv2, 4);
  TVMFFIAny e1[3] = {any_int(1), m1, any_cstr("a string longer than 7")};
  TVMFFIAny e2[3] = {any_int(1), m2, any_cstr("a string longer than 7")};
  TVMFFIAny x = make("ffi.Array", e1, 3), y = make("ffi.Array", e2, 3);
  CHECK(sequal(x, y, 0));
  CHECK_EQ_INT(shash(x, 0), shash(y, 0));
  /* a List with the same elements is another kind of value */
  TVMFFIAny l = make("ffi.List", e1, 3);
  CHECK(!sequal(x, l, 0));
  /* NaN equals NaN; 1 and 1.0 differ */
  CHECK(sequal(any_float(0.0 / 0.0), any_float(0.0 / 0.0), 0));
  CHECK(!sequal(any_int(1), any_float(1.0), 0));
  /* a small string equals the same text given as a C string */
  TVMFFIAny abc = any_cstr("abc"), small = make("ffi.String", &abc, 1);
  CHECK(small.type_index == kTVMFFISmallStr && sequal(abc, small, 0));
  e2[0] = any_int(2);
  TVMFFIAny z = make("ffi.Array", e2, 3);
  CHECK(!sequal(x, z, 0));
  CHECK(shash(x, 0) != shash(z, 0));
  release(&x), release(&y), release(&z), release(&l), release(&m1), release(&m2);
}

void structural_equal_arity_is_upstreams(void) {
  TVMFFIAny args[2] = {any_int(1), any_int(1)}, r;
  CHECK(call_global("ffi.StructuralEqual", args, 2, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `ffi.StructuralEqual(0: Any, 1: Any, "
               "2: bool, 3: bool) -> bool`. Expected 4 but got 2 arguments");
  CHECK(call_global("ffi.StructuralHash", args, 1, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `ffi.StructuralHash(0: Any, 1: bool, "
               "2: bool) -> int`. Expected 3 but got 1 arguments");
}

void structural_mismatch_names_the_first_difference(void) {
  char text[300];
  TVMFFIAny a[3] = {any_int(1), any_int(2), any_int(3)}, b[3] = {any_int(1), any_int(5), any_int(3)};
  TVMFFIAny x = make("ffi.Array", a, 3), y = make("ffi.Array", b, 3), s = make("ffi.Array", a, 2);
  mismatch_text(x, y, text, sizeof(text));
  CHECK_EQ_STR(text, "<root>[1] <root>[1]");
  mismatch_text(x, s, text, sizeof(text));
  CHECK_EQ_STR(text, "<root>[2] <root>[<missing:2>]");
  TVMFFIAny x2 = make("ffi.Array", a, 3);
  mismatch_text(x, x2, text, sizeof(text));
  CHECK_EQ_STR(text, "equal");
  release(&x2);
  /* inside a map: the key on the left, missing on the right */
  TVMFFIAny kv1[2] = {any_cstr("k"), x}, kv2[2] = {any_cstr("j"), x};
  TVMFFIAny m1 = make("ffi.Map", kv1, 2), m2 = make("ffi.Map", kv2, 2);
  mismatch_text(m1, m2, text, sizeof(text));
  CHECK_EQ_STR(text, "<root>[k] <root>[<missing:k>]");
  TVMFFIAny kv3[2] = {any_cstr("k"), y};
  TVMFFIAny m3 = make("ffi.Map", kv3, 2);
  mismatch_text(m1, m3, text, sizeof(text));
  CHECK_EQ_STR(text, "<root>[k][1] <root>[k][1]");
  release(&x), release(&y), release(&s), release(&m1), release(&m2), release(&m3);
}

/* ------------------------------------------------- a tiny IR for binding */
typedef struct {
  TVMFFIObject header;
  TVMFFIAny name;
} test_var;

typedef struct {
  TVMFFIObject header;
  TVMFFIAny param;
  TVMFFIAny body;
} test_lambda;

static int32_t var_index = -1, lambda_index = -1;

static int get_any(void* field, TVMFFIAny* out) { return TVMFFIAnyViewToOwnedAny(field, out); }

static void free_var(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) release(&((test_var*)self)->name);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static void free_lambda(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    release(&((test_lambda*)self)->param);
    release(&((test_lambda*)self)->body);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int32_t define_type(const char* key, TVMFFISEqHashKind kind) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, kTVMFFIObject);
  CHECK(index >= 0);
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.structural_eq_hash_kind = kind;
  CHECK(TVMFFITypeRegisterMetadata(index, &meta) == 0);
  return index;
}

static void define_field(int32_t type, const char* name, int64_t offset, int64_t flags) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.flags = flags;
  f.size = sizeof(TVMFFIAny);
  f.alignment = 8;
  f.offset = offset;
  f.getter = get_any;
  f.field_static_type_index = kTVMFFIAny;
  CHECK(TVMFFITypeRegisterField(type, &f) == 0);
}

static void define_ir(void) {
  if (var_index >= 0) return;
  var_index = define_type("test.structural.Var", kTVMFFISEqHashKindFreeVar);
  lambda_index = define_type("test.structural.Lambda", kTVMFFISEqHashKindTreeNode);
  define_field(var_index, "name", offsetof(test_var, name), kTVMFFIFieldFlagBitMaskSEqHashIgnore);
  define_field(lambda_index, "param", offsetof(test_lambda, param),
               kTVMFFIFieldFlagBitMaskSEqHashDefRecursive);
  define_field(lambda_index, "body", offsetof(test_lambda, body), 0);
}

static TVMFFIObject* new_header(size_t size, int32_t type, void (*deleter)(void*, int)) {
  TVMFFIObject* obj = (TVMFFIObject*)calloc(1, size);
  CHECK(obj != NULL);
  obj->combined_ref_count = 1 | (1ull << 32); /* one strong, one weak reference */
  obj->type_index = type;
  obj->deleter = deleter;
  return obj;
}

static TVMFFIAny new_var(const char* name) {
  test_var* v = (test_var*)new_header(sizeof(test_var), var_index, free_var);
  v->name = any_none();
  TVMFFIAny n = any_cstr(name);
  CHECK(TVMFFIAnyViewToOwnedAny(&n, &v->name) == 0);
  return any_obj(v);
}

static TVMFFIAny new_lambda(TVMFFIAny param, TVMFFIAny body) {
  test_lambda* l = (test_lambda*)new_header(sizeof(test_lambda), lambda_index, free_lambda);
  l->param = any_none();
  l->body = any_none();
  CHECK(TVMFFIAnyViewToOwnedAny(&param, &l->param) == 0);
  CHECK(TVMFFIAnyViewToOwnedAny(&body, &l->body) == 0);
  return any_obj(l);
}

void structural_equal_binds_free_vars_in_definitions(void) {
  define_ir();
  TVMFFIAny x = new_var("x"), y = new_var("y"), z = new_var("z");
  /* lambda x: x == lambda y: y, though x and y differ: the parameter is a definition */
  TVMFFIAny fx = new_lambda(x, x), fy = new_lambda(y, y), fz = new_lambda(y, z);
  CHECK(sequal(fx, fy, 0));
  CHECK_EQ_INT(shash(fx, 0), shash(fy, 0));
  /* lambda y: z uses a free variable that is not its parameter */
  CHECK(!sequal(fx, fz, 0));
  char text[300];
  mismatch_text(fx, fz, text, sizeof(text));
  CHECK_EQ_STR(text, "<root>.body <root>.body");
  /* bare variables: equal only when the caller maps free variables */
  CHECK(!sequal(x, y, 0));
  CHECK(sequal(x, y, 1));
  CHECK(sequal(x, x, 0));
  CHECK_EQ_INT(shash(x, 1), shash(y, 1));
  /* once bound, a variable must keep mapping to the same one */
  TVMFFIAny p1[2] = {x, x}, p2[2] = {x, y};
  TVMFFIAny a1 = make("ffi.Array", p1, 2), a2 = make("ffi.Array", p2, 2);
  CHECK(!sequal(a1, a2, 1));
  release(&a1), release(&a2), release(&fx), release(&fy), release(&fz);
  release(&x), release(&y), release(&z);
}

void structural_equal_refuses_types_without_a_kind(void) {
  TVMFFIByteArray key = {"testing.TestIntPair", 19};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  TVMFFIAny pair = any_none();
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, "__ffi_init__") != 0) continue;
    TVMFFIAny args[2] = {any_int(1), any_int(2)};
    CHECK(TVMFFIFunctionCall(info->methods[i].method.v_obj, args, 2, &pair) == 0);
  }
  CHECK(pair.type_index == index);
  TVMFFIAny args[4] = {pair, pair, any_bool(0), any_bool(0)}, r;
  CHECK(call_global("ffi.StructuralEqual", args, 4, &r) != 0);
  CHECK_RAISED("TypeError",
               "_type_s_eq_hash_kind is not set for type `testing.TestIntPair`, so "
               "StructuralHash is not supported for this type");
  args[1] = any_bool(0);
  CHECK(call_global("ffi.StructuralHash", args, 3, &r) != 0);
  CHECK_RAISED("TypeError",
               "_type_s_eq_hash_kind is not set for type `testing.TestIntPair`, so "
               "StructuralHash is not supported for this type");
  release(&pair);
}

/* 60 levels, each an Array holding the level below twice: 2^60 paths. */
static TVMFFIAny dag(int levels, int64_t leaf) {
  TVMFFIAny v = any_int(leaf);
  for (int i = 0; i < levels; ++i) {
    TVMFFIAny two[2] = {v, v};
    TVMFFIAny next = make("ffi.Array", two, 2);
    release(&v);
    v = next;
  }
  return v;
}

void structural_upstream_ops_are_linear_on_dags(void) {
  TVMFFIAny a = dag(60, 1), b = dag(60, 1), c = dag(60, 2);
  uint64_t before = wf_memo_lookups;
  CHECK(sequal(a, b, 0));
  CHECK_EQ_INT(shash(a, 0), shash(b, 0));
  char text[600];
  mismatch_text(a, c, text, sizeof(text));
  CHECK(strncmp(text, "<root>[0][0][0]", 15) == 0);
  TVMFFIAny args[2] = {a, c}, r;
  CHECK(call_global("ffi.RecursiveLt", args, 2, &r) == 0 && r.v_int64 == 1);
  CHECK(call_global("ffi.ContainerFindFirstNonCPUDevice", args, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIDevice);
  CHECK_EQ_INT(r.v_device.device_type, kDLCPU);
  CHECK(wf_memo_lookups - before < 10000);
  release(&a), release(&b), release(&c);
}

void structural_key_wraps_value_and_hash(void) {
  TVMFFIAny e[2] = {any_int(1), any_cstr("x")};
  TVMFFIAny x = make("ffi.Array", e, 2), y = make("ffi.Array", e, 2), z = make("ffi.Array", e, 1);
  TVMFFIAny kx = make("ffi.StructuralKey", &x, 1), ky = make("ffi.StructuralKey", &y, 1),
            kz = make("ffi.StructuralKey", &z, 1);
  /* StructuralKey: key (Any) then hash_i64 after the header */
  int64_t hx = *(int64_t*)((char*)kx.v_obj + sizeof(TVMFFIObject) + sizeof(TVMFFIAny));
  CHECK_EQ_INT(hx, shash(x, 0));
  TVMFFIAny args[2] = {kx, ky}, r;
  CHECK(call_global("ffi.StructuralKeyEqual", args, 2, &r) == 0 && r.v_int64 == 1);
  args[1] = kz;
  CHECK(call_global("ffi.StructuralKeyEqual", args, 2, &r) == 0 && r.v_int64 == 0);
  args[1] = x;
  CHECK(call_global("ffi.StructuralKeyEqual", args, 2, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #1 when calling: `ffi.StructuralKeyEqual(0: "
               "ffi.StructuralKey, 1: ffi.StructuralKey) -> bool`. Expected `ffi.StructuralKey` but "
               "got `ffi.Array`");
  release(&kx), release(&ky), release(&kz), release(&x), release(&y), release(&z);
}

static int order(const char* op, TVMFFIAny a, TVMFFIAny b) {
  TVMFFIAny args[2] = {a, b}, r;
  CHECK(call_global(op, args, 2, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIBool);
  return (int)r.v_int64;
}

void recursive_order_of_values(void) {
  CHECK(order("ffi.RecursiveLt", any_int(1), any_int(2)));
  CHECK(!order("ffi.RecursiveGt", any_int(1), any_int(2)));
  CHECK(order("ffi.RecursiveLe", any_int(2), any_int(2)));
  CHECK(order("ffi.RecursiveGe", any_int(2), any_int(2)));
  CHECK(order("ffi.RecursiveLt", any_none(), any_int(-5)));
  CHECK(order("ffi.RecursiveLt", any_cstr("abc"), any_cstr("abd")));
  CHECK(order("ffi.RecursiveLt", any_cstr("ab"), any_cstr("abc")));
  /* sequences compare lexicographically, then by length */
  TVMFFIAny a[3] = {any_int(1), any_int(2), any_int(3)}, b[2] = {any_int(1), any_int(3)};
  TVMFFIAny x = make("ffi.Array", a, 3), y = make("ffi.Array", b, 2), s = make("ffi.Array", a, 2);
  CHECK(order("ffi.RecursiveLt", x, y));
  CHECK(order("ffi.RecursiveLt", s, x));
  CHECK(order("ffi.RecursiveGe", x, s));
  TVMFFIAny args[2] = {any_int(1), any_cstr("x")}, r;
  CHECK(call_global("ffi.RecursiveLt", args, 2, &r) != 0);
  CHECK_RAISED("TypeError", "Cannot compare values of different types: int vs ffi.SmallStr");
  args[0] = any_float(0.0 / 0.0);
  args[1] = any_float(1);
  CHECK(call_global("ffi.RecursiveLe", args, 2, &r) != 0);
  CHECK_RAISED("TypeError", "Cannot order NaN values");
  TVMFFIAny kv1[2] = {any_cstr("k"), any_int(1)}, kv2[2] = {any_cstr("k"), any_int(2)};
  TVMFFIAny m1 = make("ffi.Map", kv1, 2), m2 = make("ffi.Map", kv2, 2);
  CHECK(order("ffi.RecursiveLe", m1, m1));
  args[0] = m1;
  args[1] = m2;
  CHECK(call_global("ffi.RecursiveLt", args, 2, &r) != 0);
  CHECK_RAISED("TypeError", "Cannot order Map/Dict values");
  CHECK(call_global("ffi.RecursiveLt", args, 1, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `ffi.RecursiveLt(0: Any, 1: Any) -> "
               "bool`. Expected 2 but got 1 arguments");
  release(&x), release(&y), release(&s), release(&m1), release(&m2);
}
