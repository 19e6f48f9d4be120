/*
 * A C module that records the metadata tvm-ffi tools read (what
 * TVM_FFI_DLL_EXPORT_TYPED_FUNC with TVM_FFI_DLL_EXPORT_INCLUDE_METADATA and
 * the reflection registry write for C++), for `webffi types`
 * (tests/node/types_gen.test.mjs):
 *   scale(x: float, k: int) -> float          exported, with metadata (as written
 *                                             for C++) and a doc
 *   greet(name: str) -> str                   exported, with metadata from its
 *                                             C signature (WebFFISignatureMetadata)
 *   untyped(...)                              exported, no metadata
 *   typed.join(parts: Array<str>, sep: Optional<str>) -> str   a global
 *   typed.Point: fields x (float, writable), y (float), label (str);
 *     norm2(self) -> float, __ffi_init__(x: float, y: float) -> typed.Point
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <webffi/typed_call.h>

TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = NULL;

/* A metadata string as the exported getters return it (a new String). */
static int metadata(const char* text, TVMFFIAny* result) {
  TVMFFIByteArray b = {text, strlen(text)};
  return TVMFFIStringFromByteArray(&b, result);
}

static void set_float(TVMFFIAny* out, double v) {
  out->type_index = kTVMFFIFloat;
  out->zero_padding = 0;
  out->v_float64 = v;
}

static const char* const scale_types[] = {"float", "int"};
static const WebFFISignature scale_sig = {"scale", 2, scale_types, "float"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_scale(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  (void)self;
  double x;
  int64_t k;
  if (WebFFICheckNumArgs(&scale_sig, n) != 0 || WebFFIArgToFloat(&scale_sig, args, 0, &x) != 0 ||
      WebFFIArgToInt(&scale_sig, args, 1, &k) != 0) {
    return -1;
  }
  set_float(result, x * (double)k);
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_scale(void* self, const TVMFFIAny* args, int32_t n,
                                                 TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  return metadata("{\"type_schema\":\"{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":["
                  "{\\\"type\\\":\\\"float\\\"},{\\\"type\\\":\\\"float\\\"},{\\\"type\\\":\\\"int\\\"}]}\"}",
                  result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__doc_scale(void* self, const TVMFFIAny* args, int32_t n,
                                            TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  return metadata("x times k.", result);
}

static const char* const greet_types[] = {"str"};
static const WebFFISignature greet_sig = {"greet", 1, greet_types, "str"};

TVM_FFI_DLL_EXPORT int __tvm_ffi_greet(void* self, const TVMFFIAny* args, int32_t n,
                                       TVMFFIAny* result) {
  (void)self;
  TVMFFIByteArray name;
  if (WebFFICheckNumArgs(&greet_sig, n) != 0 || WebFFIArgToString(&greet_sig, args, 0, &name) != 0) {
    return -1;
  }
  char text[96] = "hello, ";
  size_t len = name.size < 80 ? name.size : 80;
  memcpy(text + 7, name.data, len);
  TVMFFIByteArray b = {text, 7 + len};
  return TVMFFIStringFromByteArray(&b, result);
}

/* (the same from the C signature) */
TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_greet(void* self, const TVMFFIAny* args, int32_t n,
                                                 TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  return WebFFISignatureMetadata(&greet_sig, result);
}

/* untyped(...) -> the number of arguments: no metadata, so an untyped function */
TVM_FFI_DLL_EXPORT int __tvm_ffi_untyped(void* self, const TVMFFIAny* args, int32_t n,
                                         TVMFFIAny* result) {
  (void)self, (void)args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = n;
  return 0;
}

/* ------------------------------------------------------------ a global */
static int call_global(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0) return -1;
  if (f == NULL) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", name);
    return -1;
  }
  int rc = TVMFFIFunctionCall(f, args, n, result);
  TVMFFIObjectDecRef(f);
  return rc;
}

static void release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(v->v_obj);
}

/* typed.join(parts, sep=None): the strings of parts joined by sep (", ") */
static int join(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  static const char* const types[] = {"Array<str>", "Optional<str>"};
  const WebFFISignature sig = {"typed.join", n == 1 ? 1 : 2, types, "str"};
  TVMFFIObjectHandle parts;
  TVMFFIByteArray sep = {", ", 2};
  if (WebFFICheckNumArgs(&sig, n) != 0 || WebFFIArgToObject(&sig, args, 0, kTVMFFIArray, &parts) != 0) {
    return -1;
  }
  if (n == 2 && args[1].type_index != kTVMFFINone && WebFFIArgToString(&sig, args, 1, &sep) != 0) {
    return -1;
  }
  TVMFFIAny size_arg[1] = {args[0]}, size;
  memset(&size, 0, sizeof(size));
  if (call_global("ffi.ArraySize", size_arg, 1, &size) != 0) return -1;
  char text[256];
  size_t at = 0;
  for (int64_t i = 0; i < size.v_int64; ++i) {
    TVMFFIAny get[2] = {args[0], {0}}, item;
    get[1].type_index = kTVMFFIInt;
    get[1].v_int64 = i;
    memset(&item, 0, sizeof(item));
    if (call_global("ffi.ArrayGetItem", get, 2, &item) != 0) return -1;
    const WebFFISignature item_sig = {"typed.join item", 1, types, "str"};
    TVMFFIByteArray s;
    int rc = WebFFIArgToString(&item_sig, &item, 0, &s);
    if (rc == 0 && at + sep.size + s.size < sizeof(text)) {
      if (i > 0) memcpy(text + at, sep.data, sep.size), at += sep.size;
      memcpy(text + at, s.data, s.size);
      at += s.size;
    }
    release(&item);
    if (rc != 0) return -1;
  }
  (void)parts;
  TVMFFIByteArray b = {text, at};
  return TVMFFIStringFromByteArray(&b, result);
}

/* --------------------------------------------------------------- a type */
typedef struct {
  TVMFFIObject header;
  double x;
  double y;
  TVMFFIAny label;
} point;

static int32_t point_index = -1;

static void point_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) release(&((point*)self)->label);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int get_double(void* field, TVMFFIAny* out) {
  set_float(out, *(double*)field);
  return 0;
}

static int set_double(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIFloat && value->type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "typed.Point: x is a float");
    return -1;
  }
  *(double*)field = value->type_index == kTVMFFIInt ? (double)value->v_int64 : value->v_float64;
  return 0;
}

static int get_any(void* field, TVMFFIAny* out) { return TVMFFIAnyViewToOwnedAny(field, out); }

static const char* const init_types[] = {"float", "float"};
static const WebFFISignature init_sig = {"typed.Point.__ffi_init__", 2, init_types, "typed.Point"};

static int point_init(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  double x, y;
  if (WebFFICheckNumArgs(&init_sig, n) != 0 || WebFFIArgToFloat(&init_sig, args, 0, &x) != 0 ||
      WebFFIArgToFloat(&init_sig, args, 1, &y) != 0) {
    return -1;
  }
  point* p = (point*)calloc(1, sizeof(point));
  if (p == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "typed.Point: out of memory");
    return -1;
  }
  p->header.combined_ref_count = 1 | (1ull << 32);
  p->header.type_index = point_index;
  p->header.deleter = point_delete;
  p->x = x;
  p->y = y;
  TVMFFIByteArray label = {"point", 5};
  if (TVMFFIStringFromByteArray(&label, &p->label) != 0) return -1;
  result->type_index = point_index;
  result->zero_padding = 0;
  result->v_obj = &p->header;
  return 0;
}

static const char* const norm_types[] = {"typed.Point"};
static const WebFFISignature norm_sig = {"typed.Point.norm2", 1, norm_types, "float"};

static int point_norm2(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  TVMFFIObjectHandle obj;
  if (WebFFICheckNumArgs(&norm_sig, n) != 0 ||
      WebFFIArgToObject(&norm_sig, args, 0, point_index, &obj) != 0) {
    return -1;
  }
  point* p = (point*)obj;
  set_float(result, p->x * p->x + p->y * p->y);
  return 0;
}

#define SCHEMA(x) "{\"type_schema\":\"" x "\"}"
#define T(name) "{\\\"type\\\":\\\"" name "\\\"}"

static int register_field(const char* name, int64_t offset, int writable, int any,
                          const char* meta) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name.data = name;
  f.name.size = strlen(name);
  f.metadata.data = meta;
  f.metadata.size = strlen(meta);
  f.flags = writable ? kTVMFFIFieldFlagBitMaskWritable : 0;
  f.size = any ? (int64_t)sizeof(TVMFFIAny) : 8;
  f.alignment = 8;
  f.offset = offset;
  f.getter = any ? get_any : get_double;
  f.setter = writable ? (void*)set_double : NULL;
  f.field_static_type_index = any ? kTVMFFIAny : kTVMFFIFloat;
  return TVMFFITypeRegisterField(point_index, &f);
}

static int make_method(TVMFFISafeCallType fn, const char* name, const char* meta, int flags,
                       TVMFFIMethodInfo* m) {
  memset(m, 0, sizeof(*m));
  if (TVMFFIFunctionCreate(NULL, fn, NULL, (TVMFFIObjectHandle*)&m->method.v_obj) != 0) return -1;
  m->method.type_index = kTVMFFIFunction;
  m->name.data = name;
  m->name.size = strlen(name);
  m->metadata.data = meta;
  m->metadata.size = strlen(meta);
  m->flags = flags;
  return 0;
}

static int register_method(TVMFFISafeCallType fn, const char* name, const char* meta, int flags) {
  TVMFFIMethodInfo m;
  if (make_method(fn, name, meta, flags, &m) != 0) return -1;
  int rc = TVMFFITypeRegisterMethod(point_index, &m);
  TVMFFIObjectDecRef(m.method.v_obj);
  return rc;
}

__attribute__((constructor)) static void register_all(void) {
  TVMFFIMethodInfo g;
  if (make_method(join, "typed.join",
                  SCHEMA("{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":[" T("ffi.String")
                         ",{\\\"type\\\":\\\"ffi.Array\\\",\\\"args\\\":[" T("ffi.String") "]},"
                         "{\\\"type\\\":\\\"Optional\\\",\\\"args\\\":[" T("ffi.String") "]}]}"),
                  0, &g) != 0) {
    return;
  }
  TVMFFIFunctionSetGlobalFromMethodInfo(&g, 1);
  TVMFFIObjectDecRef(g.method.v_obj);

  TVMFFIByteArray key = {"typed.Point", 11};
  if (TVMFFITypeKeyToIndex(&key, &point_index) == 0) return; /* loaded before */
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) TVMFFIObjectDecRef(err);
  point_index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  if (point_index < 0) return;
  register_field("x", offsetof(point, x), 1, 0, SCHEMA(T("float")));
  register_field("y", offsetof(point, y), 0, 0, SCHEMA(T("float")));
  register_field("label", offsetof(point, label), 0, 1, SCHEMA(T("ffi.String")));
  register_method(point_norm2, "norm2",
                  SCHEMA("{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":[" T("float") "," T("typed.Point") "]}"),
                  0);
  register_method(point_init, "__ffi_init__",
                  SCHEMA("{\\\"type\\\":\\\"ffi.Function\\\",\\\"args\\\":[" T("typed.Point") "," T("float")
                         "," T("float") "]}"),
                  kTVMFFIFieldFlagBitMaskIsStaticMethod);
}
