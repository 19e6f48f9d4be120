/* Reflection: fields, methods, metadata, attributes and field access by name. */
#include <webffi/webffi.h>

#include "../../src/object.h"
#include "../../src/reflection.h"
#include "../../src/runtime_init.h"
#include "harness.h"

static int32_t type_index_of(const char* key) {
  CHECK(wf_runtime_init() == 0);
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = -1;
  CHECK(TVMFFITypeKeyToIndex(&k, &index) == 0);
  return index;
}

static const TVMFFIMethodInfo* method_named(const TVMFFITypeInfo* info, const char* name) {
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (strcmp(info->methods[i].name.data, name) == 0) return &info->methods[i];
  }
  return NULL;
}

/* testing.TestIntPair(a, b) through its static __ffi_init__ method. */
static TVMFFIObjectHandle make_pair(int64_t a, int64_t b) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index_of("testing.TestIntPair"));
  const TVMFFIMethodInfo* init = method_named(info, "__ffi_init__");
  CHECK(init != NULL);
  CHECK(init->flags & kTVMFFIFieldFlagBitMaskIsStaticMethod);
  TVMFFIAny args[2] = {any_int(a), any_int(b)}, r = any_none();
  CHECK(TVMFFIFunctionCall(init->method.v_obj, args, 2, &r) == 0);
  return r.v_obj;
}

static int64_t call_field(const char* maker, const char* type, const char* field,
                          TVMFFIAny* args, int32_t n) {
  TVMFFIAny mk[2] = {any_cstr(type), any_cstr(field)}, f, r = any_none();
  CHECK(call_global(maker, mk, 2, &f) == 0);
  CHECK(TVMFFIFunctionCall(f.v_obj, args, n, &r) == 0);
  TVMFFIObjectDecRef(f.v_obj);
  return r.v_int64;
}

void reflection_test_int_pair_fields_and_methods(void) {
  int32_t index = type_index_of("testing.TestIntPair");
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  CHECK_EQ_INT(info->num_fields, 2);
  CHECK_EQ_STR(info->fields[0].name.data, "a");
  CHECK_EQ_STR(info->fields[1].name.data, "b");
  CHECK(info->metadata != NULL && info->metadata->creator != NULL);
  TVMFFIObjectHandle pair = make_pair(3, 7);
  CHECK_EQ_INT(((TVMFFIObject*)pair)->type_index, index);
  /* the getter reads the field at its offset */
  TVMFFIAny v = any_none();
  CHECK(info->fields[1].getter((char*)pair + info->fields[1].offset, &v) == 0);
  CHECK_EQ_INT(v.v_int64, 7);
  TVMFFIAny self = any_obj(pair), r = any_none();
  CHECK(TVMFFIFunctionCall(method_named(info, "sum")->method.v_obj, &self, 1, &r) == 0);
  CHECK_EQ_INT(r.v_int64, 10);
  TVMFFIObjectDecRef(pair);
}

void reflection_field_getter_and_setter_by_name(void) {
  TVMFFIObjectHandle pair = make_pair(1, 2);
  TVMFFIAny args[2] = {any_obj(pair), any_int(42)};
  CHECK_EQ_INT(call_field("ffi.MakeFieldGetter", "testing.TestIntPair", "b", args, 1), 2);
  call_field("ffi.MakeFieldSetter", "testing.TestIntPair", "b", args, 2);
  CHECK_EQ_INT(call_field("ffi.MakeFieldGetter", "testing.TestIntPair", "b", args, 1), 42);
  /* a setter checks the value's type */
  TVMFFIAny mk[2] = {any_cstr("testing.TestIntPair"), any_cstr("a")}, f, r = any_none();
  CHECK(call_global("ffi.MakeFieldSetter", mk, 2, &f) == 0);
  args[1] = any_cstr("x");
  CHECK(TVMFFIFunctionCall(f.v_obj, args, 2, &r) == -1);
  CHECK_RAISED("TypeError", "Cannot convert from type `str` to `int`");
  /* and the object's type */
  args[0] = any_int(1);
  args[1] = any_int(1);
  CHECK(TVMFFIFunctionCall(f.v_obj, args, 2, &r) == -1);
  CHECK_RAISED("TypeError",
               "Mismatched type on argument #0 when calling: `a(0: testing.TestIntPair, 1: Any) "
               "-> None`. Expected `testing.TestIntPair` but got `int`");
  TVMFFIObjectDecRef(f.v_obj);
  mk[1] = any_cstr("nope");
  CHECK(call_global("ffi.MakeFieldGetter", mk, 2, &f) == -1);
  CHECK_RAISED("AttributeError", "Type `testing.TestIntPair` has no field `nope`");
  mk[0] = any_cstr("no.Such");
  CHECK(call_global("ffi.MakeFieldGetter", mk, 2, &f) == -1);
  CHECK_RAISED("KeyError", "Cannot find type `no.Such`");
  TVMFFIObjectDecRef(pair);
}

static int collect_field_name(const TVMFFIFieldInfo* field, void* ctx) {
  strcat((char*)ctx, field->name.data);
  return 0;
}

void reflection_derived_type_inherits_fields(void) {
  int32_t base = type_index_of("testing.TestIntPair");
  int32_t derived = type_index_of("testing.TestIntPairDerived");
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(derived);
  CHECK_EQ_INT(info->type_depth, 2);
  CHECK_EQ_INT(info->type_ancestors[1]->type_index, base);
  CHECK_EQ_INT(info->num_fields, 1); /* its own: c */
  char names[16] = "";
  wf_reflect_visit_fields(derived, collect_field_name, names);
  CHECK_EQ_STR(names, "abc");
  const TVMFFIMethodInfo* init = method_named(info, "__ffi_init__");
  TVMFFIAny args[3] = {any_int(4), any_int(5), any_cstr("note")}, r = any_none();
  CHECK(TVMFFIFunctionCall(init->method.v_obj, args, 3, &r) == 0);
  TVMFFIAny self = any_obj(r.v_obj);
  /* inherited field and method work on the derived object */
  CHECK_EQ_INT(call_field("ffi.MakeFieldGetter", "testing.TestIntPairDerived", "a", &self, 1), 4);
  CHECK(wf_reflect_find_method(derived, "sum", 3) != NULL);
  TVMFFIAny mk[2] = {any_cstr("testing.TestIntPairDerived"), any_cstr("c")}, f, c = any_none();
  CHECK(call_global("ffi.MakeFieldGetter", mk, 2, &f) == 0);
  CHECK(TVMFFIFunctionCall(f.v_obj, &self, 1, &c) == 0);
  CHECK_EQ_STR(any_str(&c), "note");
  TVMFFIObjectDecRef(f.v_obj);
  TVMFFIObjectDecRef(r.v_obj);
}

/* A C library's own type: a read-only field with a default, metadata, attrs. */
typedef struct {
  TVMFFIObject header;
  int64_t x;
} point;

static int point_create(TVMFFIObjectHandle* out) {
  (void)out;
  return -1;
}

void reflection_register_type_from_c(void) {
  CHECK(wf_runtime_init() == 0);
  TVMFFIByteArray key = {"test.Point", 10};
  int32_t index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  CHECK(index >= kTVMFFIDynObjectBegin);
  char name[2] = "x"; /* names are copied: the caller's buffer may go away */
  TVMFFIFieldInfo field;
  memset(&field, 0, sizeof(field));
  field.name.data = name;
  field.name.size = 1;
  field.flags = kTVMFFIFieldFlagBitMaskHasDefault;
  field.offset = offsetof(point, x);
  field.getter = wf_reflect_get_int64;
  field.setter = (void*)wf_reflect_set_int64;
  field.default_value_or_factory = any_int(9);
  CHECK(TVMFFITypeRegisterField(index, &field) == 0);
  name[0] = 'y';
  CHECK(wf_reflect_find_field(index, "x", 1) != NULL);
  CHECK_EQ_INT(wf_reflect_find_field(index, "x", 1)->default_value_or_factory.v_int64, 9);
  CHECK(TVMFFITypeRegisterField(index, &field) == 0); /* now named y */
  CHECK(TVMFFITypeRegisterField(index, &field) == -1);
  CHECK_RAISED("ValueError", "Field `y` is already registered in type `test.Point`");
  CHECK(TVMFFITypeRegisterField(99999, &field) == -1);
  CHECK_RAISED("ValueError", "TVMFFITypeRegisterField: unknown type index 99999");

  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.doc.data = "a point";
  meta.doc.size = 7;
  meta.creator = point_create;
  meta.total_size = sizeof(point);
  CHECK(TVMFFITypeRegisterMetadata(index, &meta) == 0);
  CHECK_EQ_STR(TVMFFIGetTypeInfo(index)->metadata->doc.data, "a point");
  CHECK(wf_reflect_creator(index) == point_create);

  TVMFFIAny mk[2] = {any_cstr("test.Point"), any_cstr("x")}, f;
  CHECK(call_global("ffi.MakeFieldSetter", mk, 2, &f) == -1);
  CHECK_RAISED("AttributeError", "Field `x` of type `test.Point` is read-only");

  TVMFFIByteArray attr = {"test.repr_kind", 14};
  CHECK(TVMFFIGetTypeAttrColumn(&attr) == NULL);
  TVMFFIAny value = any_int(3);
  CHECK(TVMFFITypeRegisterAttr(index, &attr, &value) == 0);
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&attr);
  CHECK(col != NULL);
  CHECK(index >= col->begin_index && index < col->begin_index + col->size);
  CHECK_EQ_INT(col->data[index - col->begin_index].v_int64, 3);
  CHECK_EQ_INT(col->data[kTVMFFIStr - col->begin_index].type_index, kTVMFFINone);
  CHECK(TVMFFITypeRegisterAttr(index, &attr, &value) == -1);
  CHECK_RAISED("RuntimeError", "Attribute `test.repr_kind` of type `test.Point` is already registered");
}

void reflection_registered_type_keys(void) {
  TVMFFIAny keys;
  CHECK(call_global("ffi.GetRegisteredTypeKeys", NULL, 0, &keys) == 0);
  CHECK_EQ_INT(keys.type_index, kTVMFFIArray);
  TVMFFISeqCell* cell = (TVMFFISeqCell*)((char*)keys.v_obj + sizeof(TVMFFIObject));
  int found_pair = 0, found_map = 0;
  for (int64_t i = 0; i < cell->size; ++i) {
    const char* k = any_str(&((TVMFFIAny*)cell->data)[i]);
    found_pair |= strcmp(k, "testing.TestIntPair") == 0;
    found_map |= strcmp(k, "ffi.Map") == 0;
  }
  CHECK(found_pair && found_map);
  TVMFFIObjectDecRef(keys.v_obj);
}

void abi_metadata_describes_reflection_layouts(void) {
  const char* meta = WebFFIGetABIMetadata();
  char want[96];
  snprintf(want, sizeof(want), "\"TVMFFIFieldInfo.getter\":%d", (int)offsetof(TVMFFIFieldInfo, getter));
  CHECK(strstr(meta, want) != NULL);
  snprintf(want, sizeof(want), "\"TVMFFITypeInfo.metadata\":%d", (int)offsetof(TVMFFITypeInfo, metadata));
  CHECK(strstr(meta, want) != NULL);
  snprintf(want, sizeof(want), "\"TVMFFIMethodInfo\":%d", (int)sizeof(TVMFFIMethodInfo));
  CHECK(strstr(meta, want) != NULL);
  CHECK(strstr(meta, "\"TVMFFITypeMetadata.creator\":") != NULL);
  CHECK(strstr(meta, "\"field_flags\":{\"writable\":1,") != NULL);
  /* the runtime's reflected test types are listed with their indices */
  CHECK(strstr(meta, "\"testing.TestIntPair\":") != NULL);
}

/* A type as upstream's ObjectDef describes one, with field flags: a plain,
 * b InitOff with a default, c KwOnly, d with a default, e a factory. */
typedef struct {
  TVMFFIObject header;
  int64_t a, b, c, d;
  TVMFFIAny e;
} init_obj;

static int32_t g_init_index = -1;
static int g_factory_calls;

static void init_obj_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) release(&((init_obj*)self)->e);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) wf_obj_free_space(self);
}

static int init_obj_create(TVMFFIObjectHandle* out) {
  init_obj* o = (init_obj*)wf_obj_alloc(sizeof(init_obj), 8, g_init_index, init_obj_deleter);
  if (o == NULL) return -1;
  o->b = -1;
  *out = o;
  return 0;
}

static int init_factory(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  ++g_factory_calls;
  *result = any_int(1000 + g_factory_calls);
  return 0;
}

static void add_init_field(int32_t index, const char* name, size_t offset, int64_t flags,
                           TVMFFIAny dflt, int any_kind) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.flags = flags | kTVMFFIFieldFlagBitMaskWritable;
  f.offset = (int64_t)offset;
  f.size = any_kind ? sizeof(TVMFFIAny) : 8;
  f.alignment = 8;
  f.getter = any_kind ? wf_reflect_get_any : wf_reflect_get_int64;
  f.setter = (void*)(any_kind ? wf_reflect_set_any : wf_reflect_set_int64);
  f.field_static_type_index = any_kind ? kTVMFFIAny : kTVMFFIInt;
  f.default_value_or_factory = dflt;
  CHECK(TVMFFITypeRegisterField(index, &f) == 0);
}

/* The `__ffi_init__` function ffi._RegisterFFIInit gave the type. */
static TVMFFIObjectHandle init_of(int32_t index) {
  TVMFFIByteArray name = {"__ffi_init__", 12};
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&name);
  CHECK(col != NULL && index - col->begin_index < col->size);
  const TVMFFIAny* v = &col->data[index - col->begin_index];
  CHECK_EQ_INT(v->type_index, kTVMFFIFunction);
  return v->v_obj;
}

static int32_t define_init_type(void) {
  if (g_init_index >= 0) return g_init_index;
  CHECK(wf_runtime_init() == 0);
  TVMFFIByteArray key = {"test.AutoInitC", 14};
  int32_t index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  g_init_index = index;
  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.creator = init_obj_create;
  meta.total_size = sizeof(init_obj);
  CHECK(TVMFFITypeRegisterMetadata(index, &meta) == 0);
  const int64_t has_default = kTVMFFIFieldFlagBitMaskHasDefault;
  add_init_field(index, "a", offsetof(init_obj, a), 0, any_none(), 0);
  add_init_field(index, "b", offsetof(init_obj, b), kTVMFFIFieldFlagBitMaskInitOff | has_default,
                 any_int(42), 0);
  add_init_field(index, "c", offsetof(init_obj, c), kTVMFFIFieldFlagBitMaskKwOnly, any_none(), 0);
  add_init_field(index, "d", offsetof(init_obj, d), has_default, any_int(99), 0);
  TVMFFIObjectHandle factory = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, init_factory, NULL, &factory) == 0);
  add_init_field(index, "e", offsetof(init_obj, e),
                 has_default | kTVMFFIFieldFlagBitMaskDefaultFromFactory, any_obj(factory), 1);
  TVMFFIObjectDecRef(factory);
  TVMFFIAny arg = any_int(index), r = any_none();
  CHECK(call_global("ffi._RegisterFFIInit", &arg, 1, &r) == 0);
  CHECK_EQ_INT(r.type_index, kTVMFFINone);
  return index;
}

static init_obj* auto_init(TVMFFIAny* args, int32_t n) {
  TVMFFIAny r = any_none();
  CHECK(TVMFFIFunctionCall(init_of(define_init_type()), args, n, &r) == 0);
  CHECK_EQ_INT(r.type_index, g_init_index);
  return (init_obj*)r.v_obj;
}

static void auto_init_fails(TVMFFIAny* args, int32_t n, const char* kind, const char* message) {
  TVMFFIAny r = any_none();
  CHECK(TVMFFIFunctionCall(init_of(define_init_type()), args, n, &r) == -1);
  CHECK_RAISED(kind, message);
}

void reflection_auto_init_binds_positional_and_keyword_args(void) {
  TVMFFIAny kw;
  CHECK(call_global("ffi.GetKwargsObject", NULL, 0, &kw) == 0);
  /* positional: a, then d (c is keyword-only, b not in the init) */
  TVMFFIAny args1[5] = {any_int(1), any_int(3), kw, any_cstr("c"), any_int(2)};
  init_obj* o = auto_init(args1, 5);
  CHECK_EQ_INT(o->a, 1);
  CHECK_EQ_INT(o->b, 42);
  CHECK_EQ_INT(o->c, 2);
  CHECK_EQ_INT(o->d, 3);
  CHECK_EQ_INT(o->e.v_int64, 1000 + g_factory_calls);
  int calls = g_factory_calls;
  TVMFFIObjectDecRef(o);
  /* all by keyword; each object gets a fresh factory value */
  TVMFFIAny args2[7] = {kw, any_cstr("d"), any_int(25), any_cstr("a"), any_int(5), any_cstr("c"),
                        any_int(15)};
  o = auto_init(args2, 7);
  CHECK_EQ_INT(o->a, 5);
  CHECK_EQ_INT(o->c, 15);
  CHECK_EQ_INT(o->d, 25);
  CHECK_EQ_INT(g_factory_calls, calls + 1);
  TVMFFIObjectDecRef(o);
  /* the factory is not called for a value given */
  TVMFFIAny args3[6] = {any_int(1), kw, any_cstr("c"), any_int(2), any_cstr("e"), any_cstr("mine")};
  o = auto_init(args3, 6);
  CHECK_EQ_STR(any_str(&o->e), "mine");
  CHECK_EQ_INT(o->d, 99);
  CHECK_EQ_INT(g_factory_calls, calls + 1);
  TVMFFIObjectDecRef(o);
  release(&kw);
}

void reflection_auto_init_rejects_bad_arguments(void) {
  TVMFFIAny kw;
  CHECK(call_global("ffi.GetKwargsObject", NULL, 0, &kw) == 0);
  TVMFFIAny one = any_int(1);
  auto_init_fails(&one, 1, "TypeError",
                  "test.AutoInitC.__ffi_init__() missing required keyword-only argument: 'c'");
  TVMFFIAny only_c[3] = {kw, any_cstr("c"), any_int(1)};
  auto_init_fails(only_c, 3, "TypeError",
                  "test.AutoInitC.__ffi_init__() missing required argument: 'a'");
  TVMFFIAny three[4] = {any_int(1), any_int(2), any_int(3), any_int(4)};
  auto_init_fails(three, 4, "TypeError",
                  "test.AutoInitC.__ffi_init__() takes at most 3 positional argument(s), but 4 "
                  "were given");
  TVMFFIAny twice[6] = {any_int(1), kw, any_cstr("a"), any_int(2), any_cstr("c"), any_int(3)};
  auto_init_fails(twice, 6, "TypeError",
                  "test.AutoInitC.__ffi_init__() got multiple values for argument 'a'");
  TVMFFIAny unknown[5] = {any_int(1), kw, any_cstr("z"), any_int(2)};
  auto_init_fails(unknown, 4, "TypeError",
                  "test.AutoInitC.__ffi_init__() got an unexpected keyword argument 'z'");
  TVMFFIAny b_off[4] = {any_int(1), kw, any_cstr("b"), any_int(2)};
  auto_init_fails(b_off, 4, "TypeError",
                  "test.AutoInitC.__ffi_init__() got an unexpected keyword argument 'b'");
  TVMFFIAny odd[3] = {any_int(1), kw, any_cstr("c")};
  auto_init_fails(odd, 3, "TypeError",
                  "test.AutoInitC.__ffi_init__() KWARGS requires an even number of key-value "
                  "arguments");
  /* a setter's error names the field, indented under the init's */
  TVMFFIAny bad[4] = {any_cstr("x"), kw, any_cstr("c"), any_int(1)};
  auto_init_fails(bad, 4, "TypeError",
                  "test.AutoInitC.__ffi_init__() field 'a':\n  Cannot convert from type `str` to "
                  "`int`");
  release(&kw);
  TVMFFIAny not_a_type = any_int(kTVMFFIFloat), r = any_none();
  CHECK(call_global("ffi._RegisterFFIInit", &not_a_type, 1, &r) == -1);
  CHECK_RAISED("ValueError", "ffi._RegisterFFIInit: 3 is not an object type index");
}

/* A type with no native creator: `__ffi_new__` (as bindings register)
 * makes its empty objects for ffi.MakeObjectFromPackedArgs. */
static int new_via_attr(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  TVMFFIObjectHandle obj = NULL;
  if (init_obj_create(&obj) != 0) return -1;
  ((TVMFFIObject*)obj)->type_index = *(int32_t*)self;
  *result = any_obj(obj);
  return 0;
}

void reflection_ffi_new_attr_creates_objects(void) {
  TVMFFIByteArray key = {"test.NewByAttr", 14};
  static int32_t index;
  index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  add_init_field(index, "a", offsetof(init_obj, a), 0, any_none(), 0);
  TVMFFIAny args[3] = {any_cstr("test.NewByAttr"), any_cstr("a"), any_int(7)}, r = any_none();
  CHECK(call_global("ffi.MakeObjectFromPackedArgs", args, 3, &r) == -1);
  CHECK_RAISED("RuntimeError",
               "Type `test.NewByAttr` does not support reflection creation (no native creator or "
               "__ffi_new__ type attr)");
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(&index, new_via_attr, NULL, &f) == 0);
  TVMFFIByteArray attr = {"__ffi_new__", 11};
  TVMFFIAny fv = any_obj(f);
  CHECK(TVMFFITypeRegisterAttr(index, &attr, &fv) == 0);
  TVMFFIObjectDecRef(f);
  CHECK(call_global("ffi.MakeObjectFromPackedArgs", args, 3, &r) == 0);
  CHECK_EQ_INT(r.type_index, index);
  CHECK_EQ_INT(((init_obj*)r.v_obj)->a, 7);
  release(&r);
}

/* ReprPrint as upstream's: fields in parentheses, only the type key for an
 * object that shows none, `<KWARGS>` for the marker. */
void reflection_repr_prints_fields_or_the_type_key(void) {
  TVMFFIAny kw, r;
  CHECK(call_global("ffi.GetKwargsObject", NULL, 0, &kw) == 0);
  TVMFFIAny args[6] = {any_int(1), any_int(3), kw, any_cstr("c"), any_int(2)};
  args[5] = any_cstr("e");
  TVMFFIAny full[7] = {args[0], args[1], kw, args[3], args[4], args[5], any_cstr("x")};
  TVMFFIAny obj = any_obj(auto_init(full, 7));
  CHECK(call_global("ffi.ReprPrint", &obj, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "test.AutoInitC(a=1, b=42, c=2, d=3, e=\"x\")");
  release(&r);
  release(&obj);
  TVMFFIByteArray key = {"test.NoFields", 13};
  int32_t index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  TVMFFIAny bare = any_obj(wf_obj_alloc(sizeof(TVMFFIObject), 8, index, wf_obj_plain_deleter));
  TVMFFIAny pair[2] = {bare, kw}, arr;
  CHECK(call_global("ffi.Array", pair, 2, &arr) == 0);
  CHECK(call_global("ffi.ReprPrint", &arr, 1, &r) == 0);
  CHECK_EQ_STR(any_str(&r), "(test.NoFields, <KWARGS>)");
  release(&r), release(&arr), release(&bare), release(&kw);
}
