/* Typed argument reads with upstream's mismatch messages. */
#include <string.h>
#include <webffi/typed_call.h>

#include "buffer.h"
#include "error.h"
#include "global_schemas.h"
#include "object.h"
#include "str.h"
#include "tensor.h"
#include "type_registry.h"

/* `add_one(0: int, 1: float) -> int` */
static void wf_typed_schema(const WebFFISignature* sig, wf_buf* out) {
  wf_buf_printf(out, "%s(", sig->name);
  for (int32_t i = 0; i < sig->num_args; ++i) {
    wf_buf_printf(out, "%s%d: %s", i ? ", " : "", (int)i, sig->arg_types[i]);
  }
  wf_buf_printf(out, ") -> %s", sig->ret_type != NULL ? sig->ret_type : "void");
}

/* Every string form reads as `str` and every bytes form as `bytes`, the
 * names signatures use, rather than storage details such as `ffi.SmallStr`. */
static const char* wf_typed_got_name(const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFIRawStr:
    case kTVMFFISmallStr:
    case kTVMFFIStr:
      return "str";
    case kTVMFFIByteArrayPtr:
    case kTVMFFISmallBytes:
    case kTVMFFIBytes:
      return "bytes";
    default:
      return wf_type_key(v->type_index);
  }
}

static int wf_typed_mismatch(const WebFFISignature* sig, int32_t i, const char* expected,
                             const TVMFFIAny* got) {
  const char* got_key = wf_typed_got_name(got);
  if (sig == NULL) {
    return wf_err_raise("TypeError", "Cannot convert from type `%s` to `%s`", got_key, expected);
  }
  wf_buf schema = {0};
  wf_typed_schema(sig, &schema);
  wf_err_raise("TypeError",
               "Mismatched type on argument #%d when calling: `%s`. Expected `%s` but got `%s`",
               (int)i, schema.failed ? sig->name : schema.data, expected, got_key);
  wf_buf_free(&schema);
  return -1;
}

int WebFFICheckNumArgs(const WebFFISignature* sig, int32_t num_args) {
  if (num_args == sig->num_args) return 0;
  wf_buf schema = {0};
  wf_typed_schema(sig, &schema);
  wf_err_raise("TypeError",
               "Mismatched number of arguments when calling: `%s`. Expected %d but got %d "
               "arguments",
               schema.failed ? sig->name : schema.data, (int)sig->num_args, (int)num_args);
  wf_buf_free(&schema);
  return -1;
}

static const char* wf_typed_expected(const WebFFISignature* sig, int32_t i, const char* fallback) {
  return sig != NULL && i < sig->num_args ? sig->arg_types[i] : fallback;
}

int WebFFIArgToInt(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i, int64_t* out) {
  const TVMFFIAny* a = &args[i];
  if (a->type_index == kTVMFFIInt || a->type_index == kTVMFFIBool) {
    *out = a->v_int64;
    return 0;
  }
  return wf_typed_mismatch(sig, i, wf_typed_expected(sig, i, "int"), a);
}

int WebFFIArgToFloat(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i, double* out) {
  const TVMFFIAny* a = &args[i];
  if (a->type_index == kTVMFFIFloat) {
    *out = a->v_float64;
    return 0;
  }
  if (a->type_index == kTVMFFIInt || a->type_index == kTVMFFIBool) {
    *out = (double)a->v_int64;
    return 0;
  }
  return wf_typed_mismatch(sig, i, wf_typed_expected(sig, i, "float"), a);
}

int WebFFIArgToBool(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i, int* out) {
  const TVMFFIAny* a = &args[i];
  if (a->type_index == kTVMFFIBool || a->type_index == kTVMFFIInt) {
    *out = a->v_int64 != 0;
    return 0;
  }
  return wf_typed_mismatch(sig, i, wf_typed_expected(sig, i, "bool"), a);
}

int WebFFIArgToString(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                      TVMFFIByteArray* out) {
  if (wf_any_string_view(&args[i], out)) return 0;
  return wf_typed_mismatch(sig, i, wf_typed_expected(sig, i, "str"), &args[i]);
}

int WebFFIArgToObject(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                      int32_t type_index, TVMFFIObjectHandle* out) {
  const TVMFFIAny* a = &args[i];
  if (a->type_index >= kTVMFFIStaticObjectBegin && wf_type_is_instance(a->type_index, type_index)) {
    *out = a->v_obj;
    return 0;
  }
  return wf_typed_mismatch(sig, i, wf_typed_expected(sig, i, wf_type_key(type_index)), a);
}

int WebFFIArgToDLTensor(const WebFFISignature* sig, const TVMFFIAny* args, int32_t i,
                        DLTensor** out) {
  const TVMFFIAny* a = &args[i];
  if (a->type_index == kTVMFFITensor) {
    *out = wf_tensor_dl(a->v_obj);
    return 0;
  }
  if (a->type_index == kTVMFFIDLTensorPtr && a->v_ptr != NULL) {
    *out = (DLTensor*)a->v_ptr;
    return 0;
  }
  return wf_typed_mismatch(sig, i, wf_typed_expected(sig, i, "Tensor"), a);
}

/* ----------------------------------------------------------- metadata */
/* One type name of a signature in upstream's spelling, into out. */
static void wf_typed_schema_name(const char* name, size_t n, wf_buf* out) {
  static const char* const short_names[][2] = {
      {"str", "ffi.String"},     {"bytes", "ffi.Bytes"},  {"Tensor", "ffi.Tensor"},
      {"Array", "ffi.Array"},    {"List", "ffi.List"},    {"Map", "ffi.Map"},
      {"Dict", "ffi.Dict"},      {"Shape", "ffi.Shape"},  {"Function", "ffi.Function"},
      {"Object", "ffi.Object"},  {"Module", "ffi.Module"}, {"dtype", "DataType"},
  };
  for (size_t i = 0; i < sizeof(short_names) / sizeof(short_names[0]); ++i) {
    if (strlen(short_names[i][0]) == n && memcmp(short_names[i][0], name, n) == 0) {
      wf_buf_puts(out, short_names[i][1]);
      return;
    }
  }
  wf_buf_append(out, name, n);
}

/* A signature type (`Optional[int]`, `Array<str>`) in the compact form
 * src/global_schemas.c renders: names mapped, brackets as <>, no spaces. */
static void wf_typed_schema_type(const char* type, wf_buf* out) {
  if (type == NULL || *type == '\0') type = "Any";
  for (const char* p = type; *p != '\0';) {
    if (strchr("[<", *p) != NULL) {
      wf_buf_append(out, "<", 1);
      ++p;
    } else if (strchr("]>", *p) != NULL) {
      wf_buf_append(out, ">", 1);
      ++p;
    } else if (*p == ',' || *p == ' ') {
      if (*p == ',') wf_buf_append(out, ",", 1);
      ++p;
    } else {
      size_t n = strcspn(p, "[]<>, ");
      wf_typed_schema_name(p, n, out);
      p += n;
    }
  }
}

int WebFFISignatureMetadata(const WebFFISignature* sig, TVMFFIAny* result) {
  if (sig == NULL || result == NULL || sig->num_args < 0 ||
      (sig->num_args > 0 && sig->arg_types == NULL)) {
    return wf_err_raise("ValueError", "WebFFISignatureMetadata: NULL or bad signature");
  }
  wf_buf compact = {0};
  wf_typed_schema_type(sig->ret_type, &compact);
  wf_buf_append(&compact, "(", 1);
  for (int32_t i = 0; i < sig->num_args; ++i) {
    if (i) wf_buf_append(&compact, ",", 1);
    wf_typed_schema_type(sig->arg_types[i], &compact);
  }
  wf_buf_append(&compact, ")", 1);
  int rc = compact.failed ? wf_err_raise_oom(compact.capacity * 2)
                          : wf_global_schema_render(compact.data, result);
  wf_buf_free(&compact);
  return rc;
}
