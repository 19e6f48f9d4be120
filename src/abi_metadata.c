/* The ABI identity of this build: version numbers and the JSON description
 * of indices, sizes and offsets that hosts read instead of hard-coding. */
#include <stddef.h>
#include <webffi/module.h>
#include <webffi/webffi.h>

#include "buffer.h"
#include "device.h"
#include "runtime_init.h"
#include "map.h"
#include "type_registry.h"

void TVMFFIGetVersion(TVMFFIVersion* out) {
  if (out == NULL) return;
  out->major = TVM_FFI_VERSION_MAJOR;
  out->minor = TVM_FFI_VERSION_MINOR;
  out->patch = TVM_FFI_VERSION_PATCH;
}

static void wf_meta_type(const TVMFFITypeInfo* info, void* ctx) {
  wf_buf* b = (wf_buf*)ctx;
  wf_buf_printf(b, "%s\"%s\":%d", b->data[b->size - 1] == '{' ? "" : ",", info->type_key.data,
                (int)info->type_index);
}

static void wf_meta_device(int32_t type, const char* name, void* ctx) {
  wf_buf* b = (wf_buf*)ctx;
  wf_buf_printf(b, "%s\"%s\":%d", b->data[b->size - 1] == '{' ? "" : ",", name, (int)type);
}

#define WF_META_FIELD(b, first, name, value) \
  wf_buf_printf(b, "%s\"%s\":%lld", (first) ? "" : ",", name, (long long)(value))

static wf_buf wf_meta_text;

const char* WebFFIGetABIMetadata(void) {
  if (wf_meta_text.data != NULL && !wf_meta_text.failed) return wf_meta_text.data;
  /* The runtime's own reflected types are listed too. */
  if (wf_runtime_init() != 0) return NULL;
  wf_buf* b = &wf_meta_text;
  wf_buf_reset(b);
  wf_buf_printf(b, "{\"metadata_version\":%d,\"tvm_ffi_version\":[%d,%d,%d],",
                WEBFFI_ABI_METADATA_VERSION, TVM_FFI_VERSION_MAJOR, TVM_FFI_VERSION_MINOR,
                TVM_FFI_VERSION_PATCH);
  wf_buf_printf(b, "\"module_abi_version\":%d,", WEBFFI_MODULE_ABI_VERSION);
  wf_buf_printf(b, "\"pointer_size\":%d,", (int)sizeof(void*));

  wf_buf_puts(b, "\"type_index\":{");
  wf_type_for_each(wf_meta_type, b);
  WF_META_FIELD(b, 0, "ffi.StaticObjectBegin", kTVMFFIStaticObjectBegin);
  WF_META_FIELD(b, 0, "ffi.DynObjectBegin", kTVMFFIDynObjectBegin);
  wf_buf_puts(b, "},");

  wf_buf_puts(b, "\"sizeof\":{");
  WF_META_FIELD(b, 1, "TVMFFIAny", sizeof(TVMFFIAny));
  WF_META_FIELD(b, 0, "TVMFFIObject", sizeof(TVMFFIObject));
  WF_META_FIELD(b, 0, "TVMFFIByteArray", sizeof(TVMFFIByteArray));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell", sizeof(TVMFFIErrorCell));
  WF_META_FIELD(b, 0, "TVMFFIShapeCell", sizeof(TVMFFIShapeCell));
  WF_META_FIELD(b, 0, "TVMFFISeqCell", sizeof(TVMFFISeqCell));
  WF_META_FIELD(b, 0, "DLTensor", sizeof(DLTensor));
  WF_META_FIELD(b, 0, "DLDataType", sizeof(DLDataType));
  WF_META_FIELD(b, 0, "DLDevice", sizeof(DLDevice));
  WF_META_FIELD(b, 0, "TVMFFITypeInfo", sizeof(TVMFFITypeInfo));
  WF_META_FIELD(b, 0, "TVMFFIFieldInfo", sizeof(TVMFFIFieldInfo));
  WF_META_FIELD(b, 0, "TVMFFIMethodInfo", sizeof(TVMFFIMethodInfo));
  WF_META_FIELD(b, 0, "TVMFFITypeMetadata", sizeof(TVMFFITypeMetadata));
  /* Map/Dict storage, read in bulk by the JS by-value codec. */
  WF_META_FIELD(b, 0, "wf_map_entry", sizeof(wf_map_entry));
  WF_META_FIELD(b, 0, "wf_map_item", sizeof(wf_map_item));
  WF_META_FIELD(b, 0, "wf_map_block", sizeof(wf_map_block));
  wf_buf_puts(b, "},");

  wf_buf_puts(b, "\"offsetof\":{");
  WF_META_FIELD(b, 1, "TVMFFIAny.type_index", offsetof(TVMFFIAny, type_index));
  WF_META_FIELD(b, 0, "TVMFFIAny.small_str_len", offsetof(TVMFFIAny, small_str_len));
  WF_META_FIELD(b, 0, "TVMFFIAny.v_int64", offsetof(TVMFFIAny, v_int64));
  WF_META_FIELD(b, 0, "TVMFFIObject.combined_ref_count",
                offsetof(TVMFFIObject, combined_ref_count));
  WF_META_FIELD(b, 0, "TVMFFIObject.type_index", offsetof(TVMFFIObject, type_index));
  WF_META_FIELD(b, 0, "TVMFFIObject.deleter", offsetof(TVMFFIObject, deleter));
  WF_META_FIELD(b, 0, "TVMFFIByteArray.data", offsetof(TVMFFIByteArray, data));
  WF_META_FIELD(b, 0, "TVMFFIByteArray.size", offsetof(TVMFFIByteArray, size));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell.kind", offsetof(TVMFFIErrorCell, kind));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell.message", offsetof(TVMFFIErrorCell, message));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell.backtrace", offsetof(TVMFFIErrorCell, backtrace));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell.update_backtrace",
                offsetof(TVMFFIErrorCell, update_backtrace));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell.cause_chain", offsetof(TVMFFIErrorCell, cause_chain));
  WF_META_FIELD(b, 0, "TVMFFIErrorCell.extra_context", offsetof(TVMFFIErrorCell, extra_context));
  WF_META_FIELD(b, 0, "TVMFFIFunctionCell.safe_call", offsetof(TVMFFIFunctionCell, safe_call));
  WF_META_FIELD(b, 0, "TVMFFIShapeCell.data", offsetof(TVMFFIShapeCell, data));
  WF_META_FIELD(b, 0, "TVMFFIShapeCell.size", offsetof(TVMFFIShapeCell, size));
  WF_META_FIELD(b, 0, "TVMFFISeqCell.data", offsetof(TVMFFISeqCell, data));
  WF_META_FIELD(b, 0, "TVMFFISeqCell.size", offsetof(TVMFFISeqCell, size));
  WF_META_FIELD(b, 0, "TVMFFISeqCell.capacity", offsetof(TVMFFISeqCell, capacity));
  WF_META_FIELD(b, 0, "TVMFFIOpaqueObjectCell.handle", offsetof(TVMFFIOpaqueObjectCell, handle));
  WF_META_FIELD(b, 0, "DLTensor.data", offsetof(DLTensor, data));
  WF_META_FIELD(b, 0, "DLTensor.device", offsetof(DLTensor, device));
  WF_META_FIELD(b, 0, "DLTensor.ndim", offsetof(DLTensor, ndim));
  WF_META_FIELD(b, 0, "DLTensor.dtype", offsetof(DLTensor, dtype));
  WF_META_FIELD(b, 0, "DLTensor.shape", offsetof(DLTensor, shape));
  WF_META_FIELD(b, 0, "DLTensor.strides", offsetof(DLTensor, strides));
  WF_META_FIELD(b, 0, "DLTensor.byte_offset", offsetof(DLTensor, byte_offset));
  WF_META_FIELD(b, 0, "DLDataType.code", offsetof(DLDataType, code));
  WF_META_FIELD(b, 0, "DLDataType.bits", offsetof(DLDataType, bits));
  WF_META_FIELD(b, 0, "DLDataType.lanes", offsetof(DLDataType, lanes));
  WF_META_FIELD(b, 0, "DLDevice.device_type", offsetof(DLDevice, device_type));
  WF_META_FIELD(b, 0, "DLDevice.device_id", offsetof(DLDevice, device_id));
#define WF_META_OFFSET(T, f) WF_META_FIELD(b, 0, #T "." #f, offsetof(T, f))
  WF_META_OFFSET(wf_map_obj, data);
  WF_META_OFFSET(wf_map_obj, size);
  WF_META_OFFSET(wf_map_obj, slots);
  WF_META_OFFSET(wf_map_obj, iter_head);
  WF_META_OFFSET(wf_map_entry, key);
  WF_META_OFFSET(wf_map_entry, value);
  WF_META_OFFSET(wf_map_item, next);
  WF_META_OFFSET(wf_map_block, item);
  WF_META_OFFSET(TVMFFITypeInfo, type_index);
  WF_META_OFFSET(TVMFFITypeInfo, type_depth);
  WF_META_OFFSET(TVMFFITypeInfo, type_key);
  WF_META_OFFSET(TVMFFITypeInfo, type_ancestors);
  WF_META_OFFSET(TVMFFITypeInfo, type_key_hash);
  WF_META_OFFSET(TVMFFITypeInfo, num_fields);
  WF_META_OFFSET(TVMFFITypeInfo, num_methods);
  WF_META_OFFSET(TVMFFITypeInfo, fields);
  WF_META_OFFSET(TVMFFITypeInfo, methods);
  WF_META_OFFSET(TVMFFITypeInfo, metadata);
  WF_META_OFFSET(TVMFFIFieldInfo, name);
  WF_META_OFFSET(TVMFFIFieldInfo, doc);
  WF_META_OFFSET(TVMFFIFieldInfo, metadata);
  WF_META_OFFSET(TVMFFIFieldInfo, flags);
  WF_META_OFFSET(TVMFFIFieldInfo, size);
  WF_META_OFFSET(TVMFFIFieldInfo, alignment);
  WF_META_OFFSET(TVMFFIFieldInfo, offset);
  WF_META_OFFSET(TVMFFIFieldInfo, getter);
  WF_META_OFFSET(TVMFFIFieldInfo, setter);
  WF_META_OFFSET(TVMFFIFieldInfo, default_value_or_factory);
  WF_META_OFFSET(TVMFFIFieldInfo, field_static_type_index);
  WF_META_OFFSET(TVMFFIMethodInfo, name);
  WF_META_OFFSET(TVMFFIMethodInfo, doc);
  WF_META_OFFSET(TVMFFIMethodInfo, metadata);
  WF_META_OFFSET(TVMFFIMethodInfo, flags);
  WF_META_OFFSET(TVMFFIMethodInfo, method);
  WF_META_OFFSET(TVMFFITypeMetadata, doc);
  WF_META_OFFSET(TVMFFITypeMetadata, creator);
  WF_META_OFFSET(TVMFFITypeMetadata, total_size);
  WF_META_OFFSET(TVMFFITypeMetadata, structural_eq_hash_kind);
#undef WF_META_OFFSET
  wf_buf_puts(b, "},");

  wf_buf_puts(b, "\"deleter_flags\":{");
  WF_META_FIELD(b, 1, "strong", kTVMFFIObjectDeleterFlagBitMaskStrong);
  WF_META_FIELD(b, 0, "weak", kTVMFFIObjectDeleterFlagBitMaskWeak);
  WF_META_FIELD(b, 0, "both", kTVMFFIObjectDeleterFlagBitMaskBoth);
  wf_buf_puts(b, "},");

  wf_buf_puts(b, "\"field_flags\":{");
  WF_META_FIELD(b, 1, "writable", kTVMFFIFieldFlagBitMaskWritable);
  WF_META_FIELD(b, 0, "has_default", kTVMFFIFieldFlagBitMaskHasDefault);
  WF_META_FIELD(b, 0, "is_static_method", kTVMFFIFieldFlagBitMaskIsStaticMethod);
  WF_META_FIELD(b, 0, "default_from_factory", kTVMFFIFieldFlagBitMaskDefaultFromFactory);
  WF_META_FIELD(b, 0, "repr_off", kTVMFFIFieldFlagBitMaskReprOff);
  WF_META_FIELD(b, 0, "compare_off", kTVMFFIFieldFlagBitMaskCompareOff);
  WF_META_FIELD(b, 0, "hash_off", kTVMFFIFieldFlagBitMaskHashOff);
  WF_META_FIELD(b, 0, "setter_is_function_obj", kTVMFFIFieldFlagBitMaskSetterIsFunctionObj);
  wf_buf_puts(b, "},");

  wf_buf_puts(b, "\"device_type\":{");
  wf_device_for_each_name(wf_meta_device, b);
  wf_buf_puts(b, "}}");
  return b->failed ? NULL : b->data;
}
