/*
 * webffi: the stable tvm-ffi C ABI (0.1.x).
 *
 * Code written against upstream tvm-ffi's c_api.h compiles unchanged against
 * this header. Names, numbers and layouts are the ABI's; the layouts are
 * checked by static asserts at the end of this file on every target
 * (wasm32 included, where pointers are 4 bytes).
 *
 * The include guard is upstream's: when upstream's c_api.h is included first
 * this file is a no-op, and when this one is first upstream's C++ headers
 * find every name they use here (the C++-only accessors at the end too).
 */
#ifndef TVM_FFI_C_API_H_
#define TVM_FFI_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#define TVM_FFI_VERSION_MAJOR 0
#define TVM_FFI_VERSION_MINOR 1
#define TVM_FFI_VERSION_PATCH 14

/* Export macros. Under wasm a symbol must also be kept alive by the linker. */
#if defined(__EMSCRIPTEN__) || defined(__wasm__)
#define TVM_FFI_ATTRIBUTE_EXPORT __attribute__((visibility("default"), used))
#elif defined(_MSC_VER)
#define TVM_FFI_ATTRIBUTE_EXPORT __declspec(dllexport)
#else
#define TVM_FFI_ATTRIBUTE_EXPORT __attribute__((visibility("default")))
#endif

#ifndef TVM_FFI_DLL
#define TVM_FFI_DLL TVM_FFI_ATTRIBUTE_EXPORT
#endif
#ifndef TVM_FFI_DLL_EXPORT
#define TVM_FFI_DLL_EXPORT TVM_FFI_ATTRIBUTE_EXPORT
#endif

/* A definition the linker may merge with others of the same name. */
#ifndef TVM_FFI_WEAK
#ifdef _MSC_VER
#define TVM_FFI_WEAK __declspec(selectany)
#else
#define TVM_FFI_WEAK __attribute__((weak))
#endif
#endif

/* No side effects; the result depends only on the arguments and memory. */
#ifndef TVM_FFI_ATTRIBUTE_PURE
#if defined(__GNUC__) || defined(__clang__)
#define TVM_FFI_ATTRIBUTE_PURE __attribute__((__pure__))
#else
#define TVM_FFI_ATTRIBUTE_PURE
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */
typedef struct {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} TVMFFIVersion;

TVM_FFI_DLL void TVMFFIGetVersion(TVMFFIVersion* out_version);

/* ------------------------------------------------------------ type index */
#ifdef __cplusplus
enum TVMFFITypeIndex : int32_t {
#else
typedef enum {
#endif
  kTVMFFIAny = -1,
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIBool = 2,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDataType = 5,
  kTVMFFIDevice = 6,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFIRawStr = 8,
  kTVMFFIByteArrayPtr = 9,
  kTVMFFIObjectRValueRef = 10,
  kTVMFFISmallStr = 11,
  kTVMFFISmallBytes = 12,
  kTVMFFIStaticObjectBegin = 64,
  kTVMFFIObject = 64,
  kTVMFFIStr = 65,
  kTVMFFIBytes = 66,
  kTVMFFIError = 67,
  kTVMFFIFunction = 68,
  kTVMFFIShape = 69,
  kTVMFFITensor = 70,
  kTVMFFIArray = 71,
  kTVMFFIMap = 72,
  kTVMFFIModule = 73,
  kTVMFFIOpaquePyObject = 74,
  kTVMFFIList = 75,
  kTVMFFIDict = 76,
  kTVMFFIVisitInterrupt = 77,
  kTVMFFIStaticObjectEnd,
  kTVMFFIDynObjectBegin = 128
#ifdef __cplusplus
};
#else
} TVMFFITypeIndex;
#endif

/* ----------------------------------------------------------------- objects */
typedef void* TVMFFIObjectHandle;

#ifdef __cplusplus
enum TVMFFIObjectDeleterFlagBitMask : int32_t {
#else
typedef enum {
#endif
  kTVMFFIObjectDeleterFlagBitMaskStrong = 1 << 0,
  kTVMFFIObjectDeleterFlagBitMaskWeak = 1 << 1,
  kTVMFFIObjectDeleterFlagBitMaskBoth = (1 << 0) | (1 << 1),
#ifdef __cplusplus
};
#else
} TVMFFIObjectDeleterFlagBitMask;
#endif

/* The header every object starts with. */
typedef struct {
  /* strong count in the low 32 bits, weak count in the high 32 bits */
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t __padding;
  union {
    /* flags: a TVMFFIObjectDeleterFlagBitMask combination */
    void (*deleter)(void* self, int flags);
    int64_t __ensure_align;
  };
} TVMFFIObject;

/* Precedes an object body allocated through a TVMFFICustomAllocator. */
typedef struct {
  void (*delete_space)(void* ptr);
} TVMFFIObjectAllocHeader;

typedef struct {
  /* returns the body; the TVMFFIObjectAllocHeader lies right before it */
  void* (*allocate)(size_t size, size_t alignment, int32_t type_index, void* context);
  void* context;
} TVMFFICustomAllocator;

/* ------------------------------------------------------------------- values */
typedef struct {
  const char* data;
  size_t size;
} TVMFFIByteArray;

typedef struct {
  int32_t type_index;
  union {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    TVMFFIObject* v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} TVMFFIAny;

/* --------------------------------------------------------------- payloads */
typedef struct {
  const int64_t* data;
  size_t size;
} TVMFFIShapeCell;

typedef struct {
  void* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
} TVMFFISeqCell;

#ifdef __cplusplus
enum TVMFFIBacktraceUpdateMode : int32_t {
#else
typedef enum {
#endif
  kTVMFFIBacktraceUpdateModeReplace = 0,
  kTVMFFIBacktraceUpdateModeAppend = 1,
#ifdef __cplusplus
};
#else
} TVMFFIBacktraceUpdateMode;
#endif

typedef struct {
  TVMFFIByteArray kind;
  TVMFFIByteArray message;
  /* lines `  File "F", line N, in FUNC\n`, most recent call first */
  TVMFFIByteArray backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                           int32_t update_mode);
  TVMFFIObjectHandle cause_chain;
  TVMFFIObjectHandle extra_context;
} TVMFFIErrorCell;

/* Arguments are borrowed views; the result is owned and pre-set to None by
 * the caller. Returns 0, or -1 with the error left in the raised slot. */
typedef int (*TVMFFISafeCallType)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);

typedef struct {
  TVMFFISafeCallType safe_call;
  void* cpp_call; /* NULL for functions not made by C++ */
} TVMFFIFunctionCell;

typedef struct {
  void* handle;
} TVMFFIOpaqueObjectCell;

/* ------------------------------------------------------------- object API */
TVM_FFI_DLL int TVMFFIObjectIncRef(TVMFFIObjectHandle obj);
TVM_FFI_DLL int TVMFFIObjectDecRef(TVMFFIObjectHandle obj);
TVM_FFI_DLL int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index,
                                         void (*deleter)(void* handle),
                                         TVMFFIObjectHandle* out);
TVM_FFI_DLL TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void);
/* NULL restores the built-in allocator. */
TVM_FFI_DLL int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator);

TVM_FFI_DLL int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out);

/* ----------------------------------------------------------- type registry */
/* How structural equality and hashing treat objects of a type. */
#ifdef __cplusplus
enum TVMFFISEqHashKind : int32_t {
#else
typedef enum {
#endif
  kTVMFFISEqHashKindUnsupported = 0,
  kTVMFFISEqHashKindTreeNode = 1,
  kTVMFFISEqHashKindFreeVar = 2,
  kTVMFFISEqHashKindDAGNode = 3,
  kTVMFFISEqHashKindConstTreeNode = 4,
  kTVMFFISEqHashKindUniqueInstance = 5,
#ifdef __cplusplus
};
#else
} TVMFFISEqHashKind;
#endif

/* Whether a field defines variables, and whether that reaches into its children. */
#ifdef __cplusplus
enum TVMFFIDefRegionKind : int32_t {
#else
typedef enum {
#endif
  kTVMFFIDefRegionKindNone = 0,
  kTVMFFIDefRegionKindRecursive = 1,
  kTVMFFIDefRegionKindNonRecursive = 2,
#ifdef __cplusplus
};
#else
} TVMFFIDefRegionKind;
#endif

typedef int (*TVMFFIObjectCreator)(TVMFFIObjectHandle* result);

typedef struct {
  TVMFFIByteArray doc;
  TVMFFIObjectCreator creator;
  int32_t total_size;
  TVMFFISEqHashKind structural_eq_hash_kind;
} TVMFFITypeMetadata;

#ifdef __cplusplus
enum TVMFFIFieldFlagBitMask : int32_t {
#else
typedef enum {
#endif
  kTVMFFIFieldFlagBitMaskWritable = 1 << 0,
  kTVMFFIFieldFlagBitMaskHasDefault = 1 << 1,
  kTVMFFIFieldFlagBitMaskIsStaticMethod = 1 << 2,
  kTVMFFIFieldFlagBitMaskSEqHashIgnore = 1 << 3,
  kTVMFFIFieldFlagBitMaskSEqHashDefRecursive = 1 << 4,
  kTVMFFIFieldFlagBitMaskDefaultFromFactory = 1 << 5,
  kTVMFFIFieldFlagBitMaskReprOff = 1 << 6,
  kTVMFFIFieldFlagBitMaskCompareOff = 1 << 7,
  kTVMFFIFieldFlagBitMaskHashOff = 1 << 8,
  kTVMFFIFieldFlagBitMaskInitOff = 1 << 9,
  kTVMFFIFieldFlagBitMaskKwOnly = 1 << 10,
  kTVMFFIFieldFlagBitSetterIsFunctionObj = 1 << 11,
  kTVMFFIFieldFlagBitMaskSEqHashDefNonRecursive = 1 << 12,
  /* webffi's earlier spelling of kTVMFFIFieldFlagBitSetterIsFunctionObj */
  kTVMFFIFieldFlagBitMaskSetterIsFunctionObj = kTVMFFIFieldFlagBitSetterIsFunctionObj,
#ifdef __cplusplus
};
#else
} TVMFFIFieldFlagBitMask;
#endif

typedef int (*TVMFFIFieldGetter)(void* field, TVMFFIAny* result);
typedef int (*TVMFFIFieldSetter)(void* field, const TVMFFIAny* value);

typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata;
  int64_t flags;
  int64_t size;
  int64_t alignment;
  int64_t offset;
  TVMFFIFieldGetter getter;
  /* a TVMFFIFieldSetter, or a Function handle with kTVMFFIFieldFlagBitSetterIsFunctionObj */
  void* setter;
  TVMFFIAny default_value_or_factory;
  int32_t field_static_type_index;
} TVMFFIFieldInfo;

typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata;
  int64_t flags;
  TVMFFIAny method; /* a Function taking self first */
} TVMFFIMethodInfo;

typedef struct TVMFFITypeInfo {
  int32_t type_index;
  int32_t type_depth;
  TVMFFIByteArray type_key;
  /* type_depth entries: [0] is Object, [type_depth - 1] the parent */
  const struct TVMFFITypeInfo** type_ancestors;
  uint64_t type_key_hash;
  int32_t num_fields;
  int32_t num_methods;
  const TVMFFIFieldInfo* fields;
  const TVMFFIMethodInfo* methods;
  const TVMFFITypeMetadata* metadata;
} TVMFFITypeInfo;

typedef struct {
  const TVMFFIAny* data;
  int32_t size;
  int32_t begin_index;
} TVMFFITypeAttrColumn;

TVM_FFI_DLL int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex);
/* parent_type_index -1: a root type; -2: query only (returns -2 on a miss). */
TVM_FFI_DLL int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key,
                                              int32_t static_type_index, int32_t type_depth,
                                              int32_t num_child_slots,
                                              int32_t child_slots_can_overflow,
                                              int32_t parent_type_index);
TVM_FFI_DLL TVM_FFI_ATTRIBUTE_PURE const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index);
TVM_FFI_DLL int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info);
TVM_FFI_DLL int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info);
TVM_FFI_DLL int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata);
TVM_FFI_DLL int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* attr_name,
                                       const TVMFFIAny* attr_value);
TVM_FFI_DLL const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* attr_name);

/* --------------------------------------------------------------- functions */
TVM_FFI_DLL int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call,
                                     void (*deleter)(void* self), TVMFFIObjectHandle* out);
TVM_FFI_DLL int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);
TVM_FFI_DLL int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                                        int allow_override);
/* A miss returns 0 with *out = NULL; a hit hands over a new reference. */
TVM_FFI_DLL int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out);
TVM_FFI_DLL int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* method_info,
                                                      int allow_override);

/* ------------------------------------------------------------------ errors */
TVM_FFI_DLL void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result);
TVM_FFI_DLL void TVMFFIErrorSetRaised(TVMFFIObjectHandle error);
TVM_FFI_DLL void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
TVM_FFI_DLL void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts,
                                                   int32_t num_parts);
TVM_FFI_DLL int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                                  const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out);
TVM_FFI_DLL int TVMFFIErrorCreateWithCauseAndExtraContext(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace,
    TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out);
TVM_FFI_DLL const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno,
                                                   const char* func, int cross_ffi_boundary);

/* --------------------------------------------------- strings and PODs */
TVM_FFI_DLL int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
TVM_FFI_DLL int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
TVM_FFI_DLL int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out);
TVM_FFI_DLL int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out);

/* ----------------------------------------------------------------- tensors */
TVM_FFI_DLL int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                                       int32_t require_contiguous, TVMFFIObjectHandle* out);
TVM_FFI_DLL int TVMFFITensorToDLPack(TVMFFIObjectHandle from, DLManagedTensor** out);
TVM_FFI_DLL int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from,
                                                int32_t require_alignment,
                                                int32_t require_contiguous,
                                                TVMFFIObjectHandle* out);
TVM_FFI_DLL int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from,
                                              DLManagedTensorVersioned** out);
TVM_FFI_DLL int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                             TVMFFIObjectHandle* out);

/* ------------------------------------------------ handles set up once */
/* If *handle_addr is NULL, calls init_func and stores what it made there.
 * An init_func that fails raises an error and returns nonzero; that is
 * returned and *handle_addr stays NULL. For languages without static
 * initialisers (DSL-generated code). */
TVM_FFI_DLL int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result));
/* If *handle_addr is not NULL, calls deinit_func on it and sets it to NULL. */
TVM_FFI_DLL int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit_func)(void* handle));

/* --------------------------------------------------------- layout checks */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define TVM_FFI_STATIC_ASSERT_ _Static_assert
#else
#define TVM_FFI_STATIC_ASSERT_ static_assert
#endif
TVM_FFI_STATIC_ASSERT_(sizeof(TVMFFIAny) == 16, "TVMFFIAny is 16 bytes");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIAny, type_index) == 0, "Any.type_index");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIAny, small_str_len) == 4, "Any.small_str_len");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIAny, v_int64) == 8, "Any payload");
TVM_FFI_STATIC_ASSERT_(sizeof(TVMFFIObject) == 24, "TVMFFIObject is 24 bytes");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIObject, type_index) == 8, "Object.type_index");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIObject, deleter) == 16, "Object.deleter");
TVM_FFI_STATIC_ASSERT_(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
TVM_FFI_STATIC_ASSERT_(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
TVM_FFI_STATIC_ASSERT_(sizeof(TVMFFIByteArray) == 2 * sizeof(void*), "ByteArray");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFISeqCell, size) == 8, "SeqCell.size");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFISeqCell, capacity) == 16, "SeqCell.capacity");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIErrorCell, message) == sizeof(TVMFFIByteArray),
                       "ErrorCell.message");
TVM_FFI_STATIC_ASSERT_(offsetof(TVMFFIErrorCell, backtrace) == 2 * sizeof(TVMFFIByteArray),
                       "ErrorCell.backtrace");

#ifdef __cplusplus
} /* extern "C" */

/* Address arithmetic over the object layouts, for C++ bindings (C code
 * writes the same offsets itself). Each payload follows the TVMFFIObject. */
inline int32_t TVMFFIObjectGetTypeIndex(TVMFFIObjectHandle obj) {
  return static_cast<TVMFFIObject*>(obj)->type_index;
}
inline TVMFFIByteArray TVMFFISmallBytesGetContentByteArray(const TVMFFIAny* value) {
  return TVMFFIByteArray{value->v_bytes, static_cast<size_t>(value->small_str_len)};
}
inline TVMFFIByteArray* TVMFFIBytesGetByteArrayPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIByteArray*>(static_cast<char*>(obj) + sizeof(TVMFFIObject));
}
inline TVMFFIErrorCell* TVMFFIErrorGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIErrorCell*>(static_cast<char*>(obj) + sizeof(TVMFFIObject));
}
inline TVMFFIFunctionCell* TVMFFIFunctionGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIFunctionCell*>(static_cast<char*>(obj) + sizeof(TVMFFIObject));
}
inline TVMFFIOpaqueObjectCell* TVMFFIOpaqueObjectGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIOpaqueObjectCell*>(static_cast<char*>(obj) +
                                                   sizeof(TVMFFIObject));
}
inline TVMFFIShapeCell* TVMFFIShapeGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIShapeCell*>(static_cast<char*>(obj) + sizeof(TVMFFIObject));
}
inline DLTensor* TVMFFITensorGetDLTensorPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<DLTensor*>(static_cast<char*>(obj) + sizeof(TVMFFIObject));
}
inline DLDevice TVMFFIDLDeviceFromIntPair(int32_t device_type, int32_t device_id) {
  return DLDevice{static_cast<DLDeviceType>(device_type), device_id};
}
#endif /* __cplusplus */

#endif /* TVM_FFI_C_API_H_ */
