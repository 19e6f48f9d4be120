// Bulk readers for the by-value codec (js/clone.js), which must tell an FFI
// float 1.0 from an int 1 and reads containers straight from their cells.
// They push onto the array they are given: a packed array, which
// structured clone copies far faster than a holey one. The heap views are
// read from `heap` at each use (calls.js's fresh() keeps them current).

export function install(state) {
  const { L, heap, hooks, readAny, readInt64 } = state;
  const { ANY, OBJ, MAP, T_INT } = L;
  const SEQ_DATA = L.off['TVMFFISeqCell.data'];
  const SEQ_SIZE = L.off['TVMFFISeqCell.size'];
  const SHAPE_DATA = L.off['TVMFFIShapeCell.data'];
  const SHAPE_SIZE = L.off['TVMFFIShapeCell.size'];

  /** [elements address, count] of an Array or List. */
  const seqCell = (wrapper) => {
    const cell = hooks.ptrOf(wrapper) + OBJ;
    return [heap.u32[(cell + SEQ_DATA) >> 2], readInt64(cell + SEQ_SIZE)];
  };
  /** The Any at p as JS, for the codec: int32s without a call (the common case), objects as new handles. */
  const readItem = (p) => {
    const w = p >> 2;
    const i32 = heap.i32;
    return i32[w] === T_INT && i32[w + 3] === i32[w + 2] >> 31 ? i32[w + 2] : readAny(p, false);
  };
  Object.assign(hooks, {
    /** Pushes the elements of an Array or List onto out, read straight from its cell (objects as new handles). */
    seqItems(wrapper, out) {
      const [data, n] = seqCell(wrapper);
      for (let i = 0; i < n; i++) out.push(readItem(data + ANY * i));
      return out;
    },
    /** An Array's or List's elements as an Int32Array when every one is an int32-range int, else null. */
    seqInt32(wrapper) {
      const [data, n] = seqCell(wrapper);
      const out = new Int32Array(n);
      const words = heap.i32; // nothing below calls into wasm
      for (let i = 0, w = data >> 2; i < n; i++, w += ANY >> 2) {
        const lo = words[w + 2];
        if (words[w] !== T_INT || words[w + 3] !== lo >> 31) return null;
        out[i] = lo;
      }
      return out;
    },
    /** Pushes a Map's or Dict's keys and values onto out, flat and in insertion order, read straight from its storage. */
    mapItems(wrapper, out) {
      const obj = hooks.ptrOf(wrapper);
      const data = heap.u32[(obj + MAP.data) >> 2];
      const count = readInt64(obj + MAP.size);
      if (heap.u32[(obj + MAP.slots + 4) >> 2] & 0x80000000) {
        for (let e = data, end = data + MAP.entrySize * count; e < end; e += MAP.entrySize) {
          out.push(readItem(e + MAP.key), readItem(e + MAP.value));
        }
        return out;
      }
      // dense: slot indices are below 2^32 in a 32-bit memory; a high word
      // of all ones is the end of the list
      let slot = heap.u32[(obj + MAP.head) >> 2];
      let high = heap.u32[(obj + MAP.head + 4) >> 2];
      for (let n = 0; n < count && high !== 0xffffffff; n++) {
        const item = data + (slot >>> 4) * MAP.blockSize + MAP.blockItems + (slot & 15) * MAP.itemSize;
        out.push(readItem(item + MAP.key), readItem(item + MAP.value));
        slot = heap.u32[(item + MAP.itemNext) >> 2];
        high = heap.u32[(item + MAP.itemNext + 4) >> 2];
      }
      return out;
    },
    /** A Shape's dimensions. */
    shapeDims(wrapper) {
      const cell = hooks.ptrOf(wrapper) + OBJ;
      const data = heap.u32[(cell + SHAPE_DATA) >> 2];
      const n = heap.u32[(cell + SHAPE_SIZE) >> 2];
      const dims = new Array(n);
      for (let i = 0; i < n; i++) dims[i] = readInt64(data + 8 * i);
      return dims;
    },
  });
}
