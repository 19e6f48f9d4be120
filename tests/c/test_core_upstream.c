/* The rest of what upstream's core registers: names, attribute columns,
 * access paths, enum types, sentinels, MakeObjectFromPackedArgs,
 * FunctionFromExternC, ContainerFindFirstNonCPUDevice, StructuralWalk and
 * VisitErrorContext.FindAccessPaths. */
#include <stddef.h>

#include "harness.h"

static TVMFFIAny make(const char* ctor, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  CHECK(call_global(ctor, args, n, &result) == 0);
  return result;
}

void core_registers_upstream_names(void) {
  static const char* const names[] = {
      "ffi.StructuralEqual", "ffi.StructuralHash", "ffi.GetFirstStructuralMismatch",
      "ffi.StructuralKey", "ffi.StructuralKeyEqual", "ffi.RecursiveEq", "ffi.RecursiveHash",
      "ffi.RecursiveLt", "ffi.RecursiveLe", "ffi.RecursiveGt", "ffi.RecursiveGe",
      "ffi.VisitInterrupt", "ffi.StructuralVisitorVisit", "ffi.StructuralVisitorDefRegionKind",
      "ffi.StructuralVisitorWithDefRegionKind", "ffi.StructuralWalk",
      "ffi.VisitErrorContext.FindAccessPaths", "ffi.GetKwargsObject", "ffi.GetInvalidObject",
      "ffi.MakeObjectFromPackedArgs", "ffi.FunctionFromExternC",
      "ffi.ContainerFindFirstNonCPUDevice", "ffi.ModuleClearImports", "ffi.ModuleGetPropertyMask",
      "ffi.ModuleGetWriteFormats", "ffi.ModuleInspectSource", "ffi.ModuleWriteToFile",
      "ffi.ModuleGlobalsAdd", "ffi.ModuleGlobalsRemove", "ffi.ModuleGetFunctionMetadata",
      "ffi.ModuleGetFunctionDoc",
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    TVMFFIByteArray key = {names[i], strlen(names[i])};
    TVMFFIObjectHandle f = NULL;
    CHECK(TVMFFIFunctionGetGlobal(&key, &f) == 0);
    if (f == NULL) fprintf(stderr, "missing global %s\n", names[i]);
    CHECK(f != NULL);
    TVMFFIObjectDecRef(f);
  }
  static const char* const types[] = {
      "ffi.reflection.AccessStep", "ffi.reflection.AccessPath", "ffi.StructuralKey",
      "ffi.EnumState", "ffi.Enum", "ffi.IntEnum", "ffi.StrEnum", "ffi.VisitInterrupt",
      "ffi.StructuralVisitor", "ffi.VisitErrorContext",
  };
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); ++i) {
    TVMFFIByteArray key = {types[i], strlen(types[i])};
    int32_t index;
    CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
    CHECK(TVMFFIGetTypeInfo(index)->metadata != NULL);
  }
  TVMFFIByteArray key = {"ffi.VisitInterrupt", 18};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  CHECK_EQ_INT(index, kTVMFFIVisitInterrupt);
}

void core_attribute_columns_exist_at_start(void) {
  static const char* const columns[] = {
      "__any_hash__", "__any_equal__", "__ffi_shallow_copy__", "__ffi_repr__", "__ffi_hash__",
      "__ffi_eq__", "__ffi_compare__", "__ffi_new__", "__ffi_init__", "__ffi_convert__",
      "__data_to_json__", "__data_from_json__", "__s_equal__", "__s_hash__", "__s_visit__",
      "__ffi_enum__",
  };
  TVMFFIAny none = any_none(), r;
  CHECK(call_global("ffi.GetKwargsObject", &none, 0, &r) == 0); /* the runtime is up */
  for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); ++i) {
    TVMFFIByteArray name = {columns[i], strlen(columns[i])};
    if (TVMFFIGetTypeAttrColumn(&name) == NULL) fprintf(stderr, "missing column %s\n", columns[i]);
    CHECK(TVMFFIGetTypeAttrColumn(&name) != NULL);
  }
  /* the containers visit their children */
  TVMFFIByteArray visit = {"__s_visit__", 11};
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&visit);
  int32_t kinds[4] = {kTVMFFIArray, kTVMFFIList, kTVMFFIMap, kTVMFFIDict};
  for (int i = 0; i < 4; ++i) {
    CHECK(col->size > kinds[i]);
    CHECK_EQ_INT(col->data[kinds[i]].type_index, kTVMFFIOpaquePtr);
  }
  /* upstream's EnsureTypeAttrColumn: None on type 0 makes a column, sets nothing */
  TVMFFIByteArray fresh = {"__test_column__", 15};
  CHECK(TVMFFIGetTypeAttrColumn(&fresh) == NULL);
  CHECK(TVMFFITypeRegisterAttr(kTVMFFINone, &fresh, &none) == 0);
  CHECK(TVMFFITypeRegisterAttr(kTVMFFINone, &fresh, &none) == 0);
  CHECK(TVMFFIGetTypeAttrColumn(&fresh) != NULL);
}

static TVMFFIObjectHandle method(TVMFFIAny obj, const char* name) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj.type_index);
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, name) == 0) return info->methods[i].method.v_obj;
  }
  CHECK(0);
  return NULL;
}

static TVMFFIAny call_method(TVMFFIAny self, const char* name, TVMFFIAny arg, int with_arg) {
  TVMFFIAny args[2] = {self, arg}, r = any_none();
  CHECK(TVMFFIFunctionCall(method(self, name), args, with_arg ? 2 : 1, &r) == 0);
  return r;
}

static int32_t path_depth(TVMFFIAny path) {
  return *(int32_t*)((char*)path.v_obj + sizeof(TVMFFIObject) + 2 * sizeof(void*));
}

void access_path_methods(void) {
  TVMFFIByteArray key = {"ffi.reflection.AccessPath", 25};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  TVMFFIObjectHandle root_fn = NULL;
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, "_root") == 0) {
      CHECK(info->methods[i].flags & kTVMFFIFieldFlagBitMaskIsStaticMethod);
      root_fn = info->methods[i].method.v_obj;
    }
  }
  TVMFFIAny root = any_none();
  CHECK(TVMFFIFunctionCall(root_fn, NULL, 0, &root) == 0);
  CHECK_EQ_INT(path_depth(root), 0);
  TVMFFIAny a = call_method(root, "_attr", any_cstr("body"), 1);
  TVMFFIAny b = call_method(a, "_array_item", any_int(3), 1);
  TVMFFIAny a2 = call_method(root, "_attr", any_cstr("body"), 1);
  TVMFFIAny b2 = call_method(a2, "_array_item", any_int(3), 1);
  release(&a2);
  CHECK_EQ_INT(path_depth(b), 2);
  TVMFFIAny r = call_method(b, "_path_equal", b2, 1);
  CHECK(r.type_index == kTVMFFIBool && r.v_int64 == 1);
  r = call_method(a, "_is_prefix_of", b, 1);
  CHECK(r.v_int64 == 1);
  r = call_method(b, "_is_prefix_of", a, 1);
  CHECK(r.v_int64 == 0);
  TVMFFIAny c = call_method(a, "_array_item", any_int(4), 1);
  r = call_method(b, "_path_equal", c, 1);
  CHECK(r.v_int64 == 0);
  TVMFFIAny steps = call_method(b, "_to_steps", any_none(), 0);
  TVMFFIAny n;
  CHECK(call_global("ffi.ArraySize", &steps, 1, &n) == 0 && n.v_int64 == 2);
  /* fields through reflection: parent, step, depth */
  const TVMFFIFieldInfo* depth = NULL;
  for (int32_t i = 0; i < info->num_fields; ++i) {
    if (strcmp(info->fields[i].name.data, "depth") == 0) depth = &info->fields[i];
  }
  CHECK(depth != NULL && !(depth->flags & kTVMFFIFieldFlagBitMaskWritable));
  TVMFFIAny d;
  CHECK(depth->getter((char*)b.v_obj + depth->offset, &d) == 0 && d.v_int64 == 2);
  /* a wrong argument names the method */
  TVMFFIAny bad[2] = {b, any_cstr("x")};
  CHECK(TVMFFIFunctionCall(method(b, "_array_item"), bad, 2, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #1 when calling: "
               "`ffi.reflection.AccessPath._array_item(0: ffi.reflection.AccessPath, 1: int) -> "
               "ffi.reflection.AccessPath`. Expected `int` but got `str`");
  release(&steps), release(&c), release(&b2), release(&b), release(&a), release(&root);
}

/* A long path is released without recursing once per level. */
void access_path_long_chain_releases(void) {
  TVMFFIByteArray key = {"ffi.reflection.AccessPath", 25};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  TVMFFIAny mk[7] = {any_cstr("ffi.reflection.AccessPath"), any_cstr("depth"), any_int(0),
                     any_cstr("parent"), any_none(), any_cstr("step"), any_none()};
  TVMFFIAny path = make("ffi.MakeObjectFromPackedArgs", mk, 7);
  for (int i = 0; i < 1000000; ++i) {
    TVMFFIAny next = call_method(path, "_array_item", any_int(i), 1);
    release(&path);
    path = next;
  }
  CHECK_EQ_INT(path_depth(path), 1000000);
  release(&path);
}

void enum_types_in_upstream_layout(void) {
  static const char* const keys[] = {"ffi.Enum", "ffi.IntEnum", "ffi.StrEnum"};
  int32_t index[3];
  for (int i = 0; i < 3; ++i) {
    TVMFFIByteArray key = {keys[i], strlen(keys[i])};
    CHECK(TVMFFITypeKeyToIndex(&key, &index[i]) == 0);
    CHECK_EQ_INT(TVMFFIGetTypeInfo(index[i])->metadata->structural_eq_hash_kind,
                 kTVMFFISEqHashKindUniqueInstance);
  }
  const TVMFFITypeInfo* ints = TVMFFIGetTypeInfo(index[1]);
  CHECK_EQ_INT(ints->type_depth, 2);
  CHECK_EQ_INT(ints->type_ancestors[1]->type_index, index[0]);
  const TVMFFITypeInfo* base = TVMFFIGetTypeInfo(index[0]);
  CHECK_EQ_INT(base->num_fields, 2);
  CHECK_EQ_STR(base->fields[0].name.data, "_int_index");
  CHECK_EQ_INT(base->fields[0].offset, sizeof(TVMFFIObject));
  CHECK_EQ_STR(base->fields[1].name.data, "_str_index");
  CHECK_EQ_INT(base->fields[1].offset, sizeof(TVMFFIObject) + 8);
  CHECK_EQ_STR(ints->fields[0].name.data, "value");
  /* an EnumState starts with empty containers */
  TVMFFIByteArray state_key = {"ffi.EnumState", 13};
  int32_t state_index;
  CHECK(TVMFFITypeKeyToIndex(&state_key, &state_index) == 0);
  TVMFFIObjectHandle made = NULL;
  CHECK(TVMFFIGetTypeInfo(state_index)->metadata->creator(&made) == 0);
  TVMFFIAny state = any_obj(made);
  TVMFFIObject** cells = (TVMFFIObject**)((char*)state.v_obj + sizeof(TVMFFIObject));
  CHECK_EQ_INT(cells[0]->type_index, kTVMFFIList);
  CHECK_EQ_INT(cells[1]->type_index, kTVMFFIDict);
  CHECK_EQ_INT(cells[2]->type_index, kTVMFFIDict);
  release(&state);
}

void sentinels_are_distinct_singletons(void) {
  TVMFFIAny none = any_none(), inv, inv2, kw, kw2;
  CHECK(call_global("ffi.GetInvalidObject", &none, 0, &inv) == 0);
  CHECK(call_global("ffi.GetInvalidObject", &none, 0, &inv2) == 0);
  CHECK(call_global("ffi.GetKwargsObject", &none, 0, &kw) == 0);
  CHECK(call_global("ffi.GetKwargsObject", &none, 0, &kw2) == 0);
  CHECK(inv.v_obj == inv2.v_obj && kw.v_obj == kw2.v_obj && inv.v_obj != kw.v_obj);
  /* the invalid object is what a map answers for a missing key */
  TVMFFIAny m = make("ffi.Map", NULL, 0), args[2] = {m, any_int(5)}, missing;
  CHECK(call_global("ffi.MapGetItemOrMissing", args, 2, &missing) == 0);
  CHECK(missing.v_obj == inv.v_obj);
  CHECK(call_global("ffi.GetKwargsObject", &none, 1, &kw2) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched number of arguments when calling: `ffi.GetKwargsObject() -> "
               "ffi.Object`. Expected 0 but got 1 arguments");
  release(&missing), release(&m), release(&inv), release(&inv2), release(&kw), release(&kw2);
}

void make_object_from_packed_args(void) {
  TVMFFIAny args[5] = {any_cstr("ffi.reflection.AccessStep"), any_cstr("kind"), any_int(2),
                       any_cstr("key"), any_cstr("k")};
  TVMFFIAny step = make("ffi.MakeObjectFromPackedArgs", args, 5);
  CHECK_EQ_INT(*(int32_t*)((char*)step.v_obj + sizeof(TVMFFIObject)), 2);
  CHECK_EQ_STR(any_str((TVMFFIAny*)((char*)step.v_obj + sizeof(TVMFFIObject) + 8)), "k");
  /* by type index too */
  TVMFFIAny by_index[5] = {any_int(step.type_index), any_cstr("key"), any_int(7),
                           any_cstr("kind"), any_int(1)};
  TVMFFIAny step2 = make("ffi.MakeObjectFromPackedArgs", by_index, 5);
  CHECK_EQ_INT(((TVMFFIAny*)((char*)step2.v_obj + sizeof(TVMFFIObject) + 8))->v_int64, 7);
  TVMFFIAny r;
  args[3] = any_cstr("nope");
  CHECK(call_global("ffi.MakeObjectFromPackedArgs", args, 5, &r) != 0);
  CHECK_RAISED("TypeError", "Required field `key` not set in type `ffi.reflection.AccessStep`");
  TVMFFIAny extra[7] = {args[0], any_cstr("kind"), any_int(2), any_cstr("key"), any_int(1),
                        any_cstr("other"), any_int(3)};
  CHECK(call_global("ffi.MakeObjectFromPackedArgs", extra, 7, &r) != 0);
  CHECK_RAISED("TypeError", "Type `ffi.reflection.AccessStep` does not have field `other`");
  CHECK(call_global("ffi.MakeObjectFromPackedArgs", args, 2, &r) != 0);
  CHECK_RAISED("TypeError",
               "ffi.MakeObjectFromPackedArgs expects a type and name/value pairs, got 2 "
               "arguments");
  release(&step), release(&step2);
}

static int extern_deleted;
static int extern_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  CHECK(n == 1);
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + *(int64_t*)self;
  return 0;
}
static void extern_delete(void* self) {
  CHECK(*(int64_t*)self == 100);
  ++extern_deleted;
}

static TVMFFIAny any_ptr(void* p) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIOpaquePtr;
  a.v_ptr = p;
  return a;
}

void function_from_extern_c(void) {
  static int64_t offset = 100;
  TVMFFIAny args[3] = {any_ptr(&offset), any_ptr((void*)(uintptr_t)extern_call),
                       any_ptr((void*)(uintptr_t)extern_delete)};
  TVMFFIAny f = make("ffi.FunctionFromExternC", args, 3);
  CHECK_EQ_INT(f.type_index, kTVMFFIFunction);
  TVMFFIAny x = any_int(5), r = any_none();
  CHECK(TVMFFIFunctionCall(f.v_obj, &x, 1, &r) == 0 && r.v_int64 == 105);
  release(&f);
  CHECK_EQ_INT(extern_deleted, 1);
  args[1] = any_none();
  CHECK(call_global("ffi.FunctionFromExternC", args, 3, &r) != 0);
  CHECK_RAISED("ValueError", "ffi.FunctionFromExternC: safe_call must not be NULL");
  args[1] = any_int(3);
  CHECK(call_global("ffi.FunctionFromExternC", args, 3, &r) != 0);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #1 when calling: `ffi.FunctionFromExternC(0: void*, "
               "1: void*, 2: void*) -> ffi.Function`. Expected `void*` but got `int`");
}

/* A tensor on another device, held through DLPack (nothing is read). */
static float fake_data[4];
static int64_t fake_shape[1] = {4};
static void fake_deleter(DLManagedTensor* self) { (void)self; }

static TVMFFIAny device_tensor(int32_t device_type) {
  static DLManagedTensor managed[4];
  static int used;
  DLManagedTensor* m = &managed[used++];
  memset(m, 0, sizeof(*m));
  m->dl_tensor.data = fake_data;
  m->dl_tensor.device.device_type = device_type;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = fake_shape;
  m->deleter = fake_deleter;
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFITensorFromDLPack(m, 0, 0, &t) == 0);
  return any_obj(t);
}

void container_find_first_non_cpu_device(void) {
  TVMFFIAny cpu = device_tensor(kDLCPU), gpu = device_tensor(kDLWebGPU);
  TVMFFIAny inner[2] = {cpu, gpu};
  TVMFFIAny list = make("ffi.List", inner, 2);
  TVMFFIAny kv[2] = {any_cstr("t"), list};
  TVMFFIAny outer[2] = {cpu, make("ffi.Dict", kv, 2)}, r;
  TVMFFIAny arr = make("ffi.Array", outer, 2);
  CHECK(call_global("ffi.ContainerFindFirstNonCPUDevice", &arr, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIDevice);
  CHECK_EQ_INT(r.v_device.device_type, kDLWebGPU);
  CHECK(call_global("ffi.ContainerFindFirstNonCPUDevice", &cpu, 1, &r) == 0);
  CHECK_EQ_INT(r.v_device.device_type, kDLCPU);
  release(&arr), release(&outer[1]), release(&list), release(&cpu), release(&gpu);
}

/* ------------------------------------------------------------ walking */
static int walk_ints, walk_fail_at;
static int walk_cb(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  ++walk_ints;
  if (args[0].v_int64 == walk_fail_at) {
    TVMFFIByteArray kind = {"ValueError", 10}, msg = {"bad leaf", 8};
    TVMFFIErrorSetRaisedFromCStrParts(kind.data, &msg.data, 1);
    return -1;
  }
  if (args[0].v_int64 == 99) {
    TVMFFIAny payload = any_cstr("stop");
    return call_global("ffi.VisitInterrupt", &payload, 1, result);
  }
  result->type_index = kTVMFFINone;
  return 0;
}

static TVMFFIAny callbacks_for(int32_t type_index) {
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, walk_cb, NULL, &f) == 0);
  TVMFFIAny pair[2] = {any_int(type_index), any_obj(f)};
  TVMFFIAny entry = make("ffi.Array", pair, 2);
  TVMFFIObjectDecRef(f);
  TVMFFIAny list = make("ffi.Array", &entry, 1);
  release(&entry);
  return list;
}

void structural_walk_visits_and_interrupts(void) {
  TVMFFIAny leaves[3] = {any_int(1), any_int(2), any_int(3)};
  TVMFFIAny inner = make("ffi.Array", leaves, 3);
  TVMFFIAny top[3] = {any_int(0), inner, inner};
  TVMFFIAny root = make("ffi.Array", top, 3);
  TVMFFIAny cbs = callbacks_for(kTVMFFIInt), none = make("ffi.Array", NULL, 0), r;
  TVMFFIAny args[4] = {root, cbs, none, any_int(0)};
  walk_fail_at = -1;
  CHECK(call_global("ffi.StructuralWalk", args, 4, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFINone);
  /* 0, 1, 2, 3: the shared inner array is walked once */
  CHECK_EQ_INT(walk_ints, 4);
  /* an interrupt stops the walk and comes back */
  TVMFFIAny stop_leaves[2] = {any_int(99), any_int(5)};
  TVMFFIAny stop = make("ffi.Array", stop_leaves, 2);
  args[0] = stop;
  walk_ints = 0;
  CHECK(call_global("ffi.StructuralWalk", args, 4, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFIVisitInterrupt);
  CHECK_EQ_INT(walk_ints, 1);
  CHECK_EQ_STR(any_str((TVMFFIAny*)((char*)r.v_obj + sizeof(TVMFFIObject))), "stop");
  release(&r);
  /* an error stops it too, and is raised */
  walk_fail_at = 2;
  args[0] = root;
  CHECK(call_global("ffi.StructuralWalk", args, 4, &r) != 0);
  CHECK_RAISED("ValueError", "bad leaf");
  release(&stop), release(&cbs), release(&none), release(&root), release(&inner);
}

void visit_error_context_find_access_paths(void) {
  /* a walk that fails inside root[1][0] (an AccessStep object) */
  TVMFFIAny mk[5] = {any_cstr("ffi.reflection.AccessStep"), any_cstr("kind"), any_int(1),
                     any_cstr("key"), any_int(7)};
  TVMFFIAny step = make("ffi.MakeObjectFromPackedArgs", mk, 5);
  TVMFFIAny inner = make("ffi.Array", &step, 1);
  TVMFFIAny top[2] = {any_int(0), inner};
  TVMFFIAny root = make("ffi.Array", top, 2);
  TVMFFIAny cbs = callbacks_for(kTVMFFIInt), none = make("ffi.Array", NULL, 0), r;
  TVMFFIAny args[4] = {root, cbs, none, any_int(1)};
  walk_fail_at = 7;
  CHECK(call_global("ffi.StructuralWalk", args, 4, &r) != 0);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  CHECK(cell->extra_context != NULL);
  TVMFFIAny ctx = any_obj(cell->extra_context);
  TVMFFIAny find[3] = {root, ctx, any_bool(0)};
  CHECK(call_global("ffi.VisitErrorContext.FindAccessPaths", find, 3, &r) == 0);
  TVMFFIAny n;
  CHECK(call_global("ffi.ArraySize", &r, 1, &n) == 0);
  CHECK_EQ_INT(n.v_int64, 1);
  TVMFFIAny get[2] = {r, any_int(0)}, path;
  CHECK(call_global("ffi.ArrayGetItem", get, 2, &path) == 0);
  /* <root>[1][0] */
  CHECK_EQ_INT(path_depth(path), 2);
  release(&path), release(&r);
  TVMFFIObjectDecRef(err);
  release(&cbs), release(&none), release(&root), release(&inner), release(&step);
}

/* A C++ static initialiser may look a column up before anything else has
 * touched the runtime: the lookup itself brings the core up. */
void core_attribute_column_lookup_first_thing(void) {
  TVMFFIByteArray name = {"__ffi_enum__", 12};
  CHECK(TVMFFIGetTypeAttrColumn(&name) != NULL);
}

/* A partial match names the deepest object reached, not a container below it. */
void visit_error_context_prefix_match_stops_at_objects(void) {
  TVMFFIAny mk[5] = {any_cstr("ffi.reflection.AccessStep"), any_cstr("kind"), any_int(1),
                     any_cstr("key"), any_none()};
  TVMFFIAny empty = make("ffi.Array", NULL, 0);
  mk[4] = empty;
  TVMFFIAny child = make("ffi.MakeObjectFromPackedArgs", mk, 5);
  mk[4] = child;
  TVMFFIAny root = make("ffi.MakeObjectFromPackedArgs", mk, 5);
  TVMFFIAny unreachable = make("ffi.MakeObjectFromPackedArgs", mk, 5);
  /* the pattern, innermost first: unreachable, child, root */
  TVMFFIAny pattern[3] = {unreachable, child, root};
  TVMFFIAny list = make("ffi.List", pattern, 3);
  TVMFFIByteArray key = {"ffi.VisitErrorContext", 21};
  int32_t index;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) == 0);
  TVMFFIObjectHandle ctx = NULL;
  CHECK(TVMFFIGetTypeInfo(index)->metadata->creator(&ctx) == 0);
  TVMFFIObject** fields = (TVMFFIObject**)((char*)ctx + sizeof(TVMFFIObject));
  TVMFFIObjectDecRef(fields[0]);
  fields[0] = list.v_obj; /* takes the reference */
  TVMFFIAny find[3] = {root, any_obj(ctx), any_bool(0)}, r, n;
  CHECK(call_global("ffi.VisitErrorContext.FindAccessPaths", find, 3, &r) == 0);
  CHECK(call_global("ffi.ArraySize", &r, 1, &n) == 0 && n.v_int64 == 0);
  release(&r);
  find[2] = any_bool(1);
  CHECK(call_global("ffi.VisitErrorContext.FindAccessPaths", find, 3, &r) == 0);
  CHECK(call_global("ffi.ArraySize", &r, 1, &n) == 0 && n.v_int64 == 1);
  TVMFFIAny get[2] = {r, any_int(0)}, path;
  CHECK(call_global("ffi.ArrayGetItem", get, 2, &path) == 0);
  CHECK_EQ_INT(path_depth(path), 1); /* <root>.key, where child sits */
  release(&path), release(&r);
  TVMFFIObjectDecRef(ctx);
  release(&unreachable), release(&root), release(&child), release(&empty);
}

/* ReprPrint uses a type's __ffi_repr__: access paths print as upstream's do. */
void access_path_repr_is_upstreams(void) {
  TVMFFIAny mk[7] = {any_cstr("ffi.reflection.AccessPath"), any_cstr("depth"), any_int(0),
                     any_cstr("parent"), any_none(), any_cstr("step"), any_none()};
  TVMFFIAny root = make("ffi.MakeObjectFromPackedArgs", mk, 7);
  TVMFFIAny p1 = call_method(root, "_attr", any_cstr("config"), 1);
  TVMFFIAny p2 = call_method(p1, "_array_item", any_int(0), 1);
  TVMFFIAny p3 = call_method(p2, "_map_item", any_cstr("name"), 1);
  TVMFFIAny p4 = call_method(p3, "_attr_missing", any_cstr("weights"), 1);
  TVMFFIAny p5 = call_method(p4, "_array_item_missing", any_int(3), 1);
  TVMFFIAny r;
  CHECK(call_global("ffi.ReprPrint", &p5, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "<root>.config[0][\"name\"][<missing:\"weights\">][<missing:3>]");
  release(&r);
  CHECK(call_global("ffi.ReprPrint", &root, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "<root>");
  /* inside a container, the hook still prints each path */
  TVMFFIAny two[2] = {p1, p2};
  TVMFFIAny arr = make("ffi.Array", two, 2);
  CHECK(call_global("ffi.ReprPrint", &arr, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "(<root>.config, <root>.config[0])");
  release(&r), release(&arr);
  release(&p5), release(&p4), release(&p3), release(&p2), release(&p1), release(&root);
}
