// The facts every runtime section reads from the core's ABI metadata: type
// indices, struct offsets and sizes, and the constants derived from them.
// Built once per runtime into a frozen record.

/**
 * @param {object} meta the core's ABI metadata (already checked by js/loader.js)
 * @param {number} opaqueTypeIndex the type of the objects that hold JS values for C
 */
export function layoutOf(meta, opaqueTypeIndex = meta.type_index['ffi.OpaquePyObject']) {
  const T = meta.type_index;
  const off = meta.offsetof;
  const size = meta.sizeof;
  const ANY = size.TVMFFIAny;
  // The Any's type index and small length are read as words 0 and 1 of the
  // Any, its payload from word 2 on: js/loader.js refuses any other layout.
  const PAYLOAD = off['TVMFFIAny.v_int64'];
  return Object.freeze({
    T, off, size, ANY, PAYLOAD,
    OBJ: size.TVMFFIObject,
    BA: size.TVMFFIByteArray,
    BA_DATA: off['TVMFFIByteArray.data'],
    BA_SIZE: off['TVMFFIByteArray.size'],
    OBJ_TI: off['TVMFFIObject.type_index'],
    ERR: {
      kind: off['TVMFFIErrorCell.kind'],
      message: off['TVMFFIErrorCell.message'],
      backtrace: off['TVMFFIErrorCell.backtrace'],
      extra: off['TVMFFIErrorCell.extra_context'],
      cause: off['TVMFFIErrorCell.cause_chain'],
      update: off['TVMFFIErrorCell.update_backtrace'],
    },
    OPAQUE_HANDLE: off['TVMFFIOpaqueObjectCell.handle'],
    DT: { code: off['DLDataType.code'], bits: off['DLDataType.bits'], lanes: off['DLDataType.lanes'] },
    DEV: { type: off['DLDevice.device_type'], id: off['DLDevice.device_id'] },
    // Maps have upstream tvm-ffi's layout (src/map.c): small (pairs in an
    // array) or dense (blocks of 16 slot states and 16 items, walked by the
    // items' insertion-order links).
    MAP: {
      data: off['wf_map_obj.data'],
      size: off['wf_map_obj.size'],
      slots: off['wf_map_obj.slots'],
      head: off['wf_map_obj.iter_head'],
      entrySize: size.wf_map_entry,
      key: off['wf_map_entry.key'],
      value: off['wf_map_entry.value'],
      itemSize: size.wf_map_item,
      itemNext: off['wf_map_item.next'],
      blockSize: size.wf_map_block,
      blockItems: off['wf_map_block.item'],
    },
    T_NONE: T.None,
    T_INT: T.int,
    T_BOOL: T.bool,
    T_FLOAT: T.float,
    T_PTR: T['void*'],
    T_DLTENSOR_PTR: T['DLTensor*'],
    T_DTYPE: T.DataType,
    T_DEVICE: T.Device,
    T_RAW_STR: T['const char*'],
    T_BYTE_ARRAY: T['TVMFFIByteArray*'],
    T_SMALL_STR: T['ffi.SmallStr'],
    T_SMALL_BYTES: T['ffi.SmallBytes'],
    T_OBJECT: T['ffi.StaticObjectBegin'],
    T_STR: T['ffi.String'],
    T_BYTES: T['ffi.Bytes'],
    T_ERROR: T['ffi.Error'],
    T_FUNCTION: T['ffi.Function'],
    T_OPAQUE: opaqueTypeIndex,
    T_MODULE: T['ffi.Module'],
    SMALL_MAX: ANY - PAYLOAD - 1, // inline bytes, NUL included
    typeKeys: new Map(Object.entries(T).filter(([k]) => !k.endsWith('ObjectBegin')).map(([k, v]) => [v, k])),
    deviceNames: new Map(Object.entries(meta.device_type).map(([k, v]) => [v, k])),
  });
}
