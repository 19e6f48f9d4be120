// The public headers compiled as C++ (what upstream's C++ headers see when
// ours come first): the C++-only accessors, the enum spellings and values.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdio>
#include <cstring>

static int failures = 0;
#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static_assert(kTVMFFIFieldFlagBitSetterIsFunctionObj == (1 << 11), "flag");
static_assert(kTVMFFIFieldFlagBitMaskSetterIsFunctionObj == kTVMFFIFieldFlagBitSetterIsFunctionObj,
              "old spelling");
static_assert(kTVMFFISEqHashKindUniqueInstance == 5, "SEqHashKind");
static_assert(kTVMFFIDefRegionKindNonRecursive == 2, "DefRegionKind");
static_assert(kDLTrn == 18 && kDLFloat4_e2m1fn == 17 && kDLFloat8_e3m4 == 7, "DLPack 1.2");
static_assert(sizeof(DLDeviceType) == 4, "DLDeviceType is int32");
static_assert(sizeof(TVMFFITypeMetadata::structural_eq_hash_kind) == 4, "metadata");

static int calls = 0;
static int counting_safe_call(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  ++calls;
  return 0;
}

int main() {
  TVMFFIByteArray text{"a string longer than seven bytes", 32};
  TVMFFIAny str{};
  EXPECT(TVMFFIStringFromByteArray(&text, &str) == 0);
  EXPECT(TVMFFIObjectGetTypeIndex(str.v_obj) == kTVMFFIStr);
  TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(str.v_obj);
  EXPECT(bytes->size == 32 && std::memcmp(bytes->data, text.data, 32) == 0);
  TVMFFIObjectDecRef(str.v_obj);

  TVMFFIByteArray small_text{"abc", 3};
  TVMFFIAny small{};
  EXPECT(TVMFFIStringFromByteArray(&small_text, &small) == 0);
  TVMFFIByteArray content = TVMFFISmallBytesGetContentByteArray(&small);
  EXPECT(content.size == 3 && std::memcmp(content.data, "abc", 3) == 0);

  TVMFFIObjectHandle func = nullptr;
  EXPECT(TVMFFIFunctionCreate(nullptr, counting_safe_call, nullptr, &func) == 0);
  // the cell's safe_call takes the Function itself (a trampoline here)
  TVMFFIAny result{};
  EXPECT(TVMFFIFunctionGetCellPtr(func)->safe_call(func, nullptr, 0, &result) == 0);
  EXPECT(calls == 1);
  TVMFFIObjectDecRef(func);

  TVMFFIErrorSetRaisedFromCStr("ValueError", "from C++");
  TVMFFIObjectHandle err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  EXPECT(err != nullptr && std::strcmp(TVMFFIErrorGetCellPtr(err)->message.data, "from C++") == 0);
  TVMFFIObjectDecRef(err);

  DLDevice dev = TVMFFIDLDeviceFromIntPair(kDLWebGPU, 3);
  EXPECT(dev.device_type == kDLWebGPU && dev.device_id == 3);

  void* handle = nullptr;
  EXPECT(TVMFFIHandleInitOnce(&handle, [](void** out) {
           static int token;
           *out = &token;
           return 0;
         }) == 0);
  EXPECT(handle != nullptr);
  EXPECT(TVMFFIHandleDeinitOnce(&handle, [](void*) { return 0; }) == 0 && handle == nullptr);

  if (failures == 0) std::puts("headers_cxx: ok");
  return failures == 0 ? 0 : 1;
}
