// Tensors in JS: a wrapper over ffi.Tensor objects (a DLTensor in the
// object's cell). Memory is allocated by the C core (TVMFFIEnvTensorAlloc),
// so C and JS share one device registry: CPU data lives in the wasm heap
// (64-byte aligned), device data behind the backend's allocation handle.
import { FFIObject, INTERNALS, AS_POD, CLONE_GUARD, BY_VALUE_AS, RELEASE, INSPECT, PTR, inspectWith, stampRuntime } from './objects.js';
import { makeError } from './errors.js';
import { describe, optionsOf, typedArrayParts, textOf, MAX_NDIM } from './runtime/checks.js';

/** dtype name -> the typed array that holds its elements (raw bits for float16/bfloat16). */
const DTYPE_ARRAYS = {
  int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  float16: Uint16Array, bfloat16: Uint16Array, float32: Float32Array, float64: Float64Array,
  bool: Uint8Array,
  // the 8-bit floats as their raw bits, as float16
  float8_e3m4: Uint8Array, float8_e4m3: Uint8Array, float8_e4m3b11fnuz: Uint8Array, float8_e4m3fn: Uint8Array,
  float8_e4m3fnuz: Uint8Array, float8_e5m2: Uint8Array, float8_e5m2fnuz: Uint8Array, float8_e8m0fnu: Uint8Array,
};

/** The dtype a typed array implies when none is given. */
const ARRAY_DTYPES = new Map([
  [Int8Array, 'int8'], [Int16Array, 'int16'], [Int32Array, 'int32'], [BigInt64Array, 'int64'],
  [Uint8Array, 'uint8'], [Uint8ClampedArray, 'uint8'], [Uint16Array, 'uint16'], [Uint32Array, 'uint32'],
  [BigUint64Array, 'uint64'], [Float32Array, 'float32'], [Float64Array, 'float64'],
]);

const CPU = 1;
/** The DLTensor description a tensor or view reads its fields from. */
const DESC = Symbol('webffi.tensorDesc');
/** A typed array over the data as it lies in wasm memory, for the copies the API makes at once. */
const RAW_VIEW = Symbol('webffi.rawView');
/**
 * Makes a typed array from Tensor.view() hold its tensor, so the memory
 * outlives neither: a private field stamped on the array (invisible, as a
 * property would not be to util.inspect and Object.keys).
 */
class Base {
  constructor(target) {
    return target;
  }
}
class ViewOf extends Base {
  #tensor;

  constructor(array, tensor) {
    super(array);
    this.#tensor = tensor;
  }
}

/**
 * Adds tensor support to a runtime: registers the Tensor wrapper class and
 * returns { Tensor, tensor(), empty() } bound to it.
 * @param {object} runtime the object createRuntime returned
 * @param {object} devices the backend registry (ensure, requireReady, deviceFor)
 */
export function createTensorSupport(runtime, devices) {
  const { hooks, inFrame, alloc, check, poisonCheck, guarded } = runtime[INTERNALS];
  const meta = runtime.metadata;
  const x = runtime.exports;
  const off = meta.offsetof;
  const OBJ = meta.sizeof.TVMFFIObject;
  const T_TENSOR = meta.type_index['ffi.Tensor'];
  const T_DLTENSOR_PTR = meta.type_index['DLTensor*'];
  const DL = {
    data: off['DLTensor.data'], device: off['DLTensor.device'], ndim: off['DLTensor.ndim'],
    dtype: off['DLTensor.dtype'], shape: off['DLTensor.shape'], strides: off['DLTensor.strides'],
    byteOffset: off['DLTensor.byte_offset'], size: meta.sizeof.DLTensor,
  };
  const DEV_TYPE = off['DLDevice.device_type'];
  const DEV_ID = off['DLDevice.device_id'];
  const DT = { code: off['DLDataType.code'], bits: off['DLDataType.bits'], lanes: off['DLDataType.lanes'] };
  const memory = x.memory;
  let dv = new DataView(memory.buffer);
  const view = () => (dv.buffer === memory.buffer ? dv : (dv = new DataView(memory.buffer)));

  if (smallFloatNames === null) {
    const names = new Map();
    for (const name of SMALL_FLOATS) names.set(runtime.dtype(name).code, name);
    smallFloatNames = names;
  }
  const dtypes = new Map(); // (code, bits, lanes) -> { dtype: DataType, Arr: its element array class }
  // Parsed names ('float32', 'webgpu'), so a tensor's creation parses none.
  const dtypeNames = new Map();
  const deviceNames = new Map();
  const devicesByType = new Map(); // type * 65536 + id -> Device
  const parsed = (cache, spec, parse) => {
    if (typeof spec !== 'string') return parse(spec);
    let v = cache.get(spec);
    if (v === undefined) cache.set(spec, (v = parse(spec)));
    return v;
  };
  const deviceOf = (type, id) => {
    const key = type * 65536 + id;
    let v = devicesByType.get(key);
    if (v === undefined) devicesByType.set(key, (v = runtime.device(type, id)));
    return v;
  };
  const u32 = (p) => view().getUint32(p, true);

  /** The fields of the DLTensor at dl (fixed for the tensor's life). */
  function describeTensor(dl) {
    const d = view();
    const ndim = d.getInt32(dl + DL.ndim, true);
    const shape = readDims(d.getUint32(dl + DL.shape, true), ndim);
    const stridesPtr = d.getUint32(dl + DL.strides, true);
    const compact = compactStrides(shape);
    const strides = stridesPtr ? readDims(stridesPtr, ndim) : compact;
    const q = dl + DL.dtype;
    const code = d.getUint8(q + DT.code);
    const bits = d.getUint8(q + DT.bits);
    const lanes = d.getUint16(q + DT.lanes, true);
    const key = code | (bits << 8) | (lanes << 16);
    let known = dtypes.get(key);
    if (known === undefined) {
      known = { dtype: runtime.dtype(dtypeText(code, bits, lanes)), Arr: DTYPE_ARRAYS[dtypeText(code, bits, 1)] };
      dtypes.set(key, known);
    }
    const dtype = known.dtype;
    let size = 1;
    for (let i = 0; i < ndim; i++) size *= shape[i];
    return {
      dl, shape, strides, dtype, size,
      count: size * lanes,
      nbytes: Math.ceil((size * bits * lanes) / 8),
      contiguous: shape.every((n, i) => n === 1 || strides[i] === compact[i]),
      device: deviceOf(d.getInt32(dl + DL.device + DEV_TYPE, true), d.getInt32(dl + DL.device + DEV_ID, true)),
      byteOffset: d.getUint32(dl + DL.byteOffset + 4, true) * 2 ** 32 + d.getUint32(dl + DL.byteOffset, true),
      dataPtr: d.getUint32(dl + DL.data, true),
      Arr: known.Arr,
    };
  }

  /**
   * The API Tensor (an ffi.Tensor object) and TensorView (a borrowed
   * DLTensor*) share: everything reads the DLTensor through this[DESC].
   */
  const tensorAPI = (Base) => class extends Base {
    get ndim() {
      return this[DESC].shape.length;
    }

    /** Extents, outermost first. */
    get shape() {
      return this[DESC].shape.slice();
    }

    /** Strides in elements (compact row-major unless the tensor is a view). */
    get strides() {
      return this[DESC].strides.slice();
    }

    /** A DataType: `float32`, `int64`, `bool`, ... */
    get dtype() {
      return this[DESC].dtype;
    }

    /** A Device: `cpu:0`, `webgpu:0`. */
    get device() {
      return this[DESC].device;
    }

    /** Bytes from the data pointer to the first element. */
    get byteOffset() {
      return this[DESC].byteOffset;
    }

    /** The data pointer: a wasm address on CPU, the backend's allocation handle elsewhere. */
    get dataPtr() {
      return this[DESC].dataPtr;
    }

    /** Where the data lives: 'cpu' (the wasm heap) or the backend's device name ('webgpu'). */
    get location() {
      return this[DESC].device.name;
    }

    /** Number of elements. */
    get size() {
      return this[DESC].size;
    }

    get nbytes() {
      return this[DESC].nbytes;
    }

    /** A typed array over the CPU data in wasm memory now (checked; for a copy made before any call). */
    [RAW_VIEW](what) {
      const d = this[DESC];
      if (d.device.deviceType !== CPU || !d.contiguous || !d.Arr) this.#requireCPU(what);
      return new d.Arr(memory.buffer, d.dataPtr + d.byteOffset, d.count);
    }

    /**
     * The GPUBuffer holding a WebGPU tensor's data, starting at byteOffset,
     * for another library on the same device (no copy). The work recorded so
     * far is submitted first, so the other library's later work sees its
     * results. The buffer stays valid while this tensor lives; once the
     * tensor is disposed webffi neither reuses nor destroys it (the other
     * library may still hold it; it is released with the last reference).
     */
    get gpuBuffer() {
      const d = this[DESC];
      const dev = d.device.deviceType === CPU ? null : devices.deviceFor(d.device.deviceType);
      if (typeof dev?.exportBuffer !== 'function') {
        throw makeError('ValueError', `Tensor.gpuBuffer: the data lives on ${d.device}, not in a GPUBuffer; move it with \`await tensor.toDevice('webgpu')\``);
      }
      return dev.exportBuffer(d.dataPtr);
    }

    /** A copy of the CPU data as a typed array (GPU data: use `await data()`). */
    toTypedArray() {
      return this[RAW_VIEW]('toTypedArray()').slice();
    }

    /** A copy of the data as a typed array (into `out` when given), downloaded when it lives on a device. */
    async data(out) {
      const Arr = arrayFor(this.dtype);
      const count = this.size * this.dtype.lanes;
      if (out !== undefined && !(out instanceof Arr && out.length === count)) {
        throw makeError('TypeError', `Tensor.data(out): out must be a ${Arr.name} of ${count} elements`);
      }
      if (out !== undefined) typedArrayParts(out, 'Tensor.data(out)'); // a detached out is a TypeError
      if (this.device.deviceType === CPU) {
        const v = this[RAW_VIEW]('data()');
        return out ? (out.set(v), out) : v.slice();
      }
      this.#requireCompact('data()');
      const dev = deviceImpl(this.device.deviceType, 'data()');
      const into = out && new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      const bytes = await dev.download(this.dataPtr, this.byteOffset, this.nbytes, into);
      if (out) {
        if (bytes !== into) into.set(bytes);
        return out;
      }
      return new Arr(bytes.buffer, bytes.byteOffset, count);
    }

    /**
     * Overwrites the tensor's data with a typed array of its dtype and size
     * (on a device: an upload, ordered before later work on it).
     */
    set(data) {
      const Arr = arrayFor(this.dtype);
      // Lengths as the engine sees them: a subclass's getters cannot make the copy overrun the tensor.
      const parts = data instanceof Arr ? typedArrayParts(data, 'Tensor.set()') : null;
      if (!parts || parts.length !== this.size * this.dtype.lanes || parts.byteLength !== this.nbytes) {
        throw makeError('TypeError', `Tensor.set(): expected a ${Arr.name} of ${this.size * this.dtype.lanes} elements, got ${describe(data)}${parts ? ` of ${parts.length}` : ''}`);
      }
      this.#requireCompact('set()');
      const bytes = new Uint8Array(parts.buffer, parts.byteOffset, parts.byteLength);
      if (this.device.deviceType === CPU) {
        new Uint8Array(memory.buffer, this.dataPtr + this.byteOffset, bytes.length).set(bytes);
      } else {
        deviceImpl(this.device.deviceType, 'set()').upload(this.dataPtr, this.byteOffset, bytes);
      }
      return this;
    }

    /**
     * A copy of this tensor on `device` (e.g. 'webgpu', 'cpu'), initialising
     * the device's backend on first use.
     */
    async toDevice(device) {
      const target = runtime.device(device);
      await devices.ensure(target.deviceType);
      this.#requireCompact('toDevice()');
      const out = empty(this.shape, this.dtype, target);
      try {
        if (this.device.deviceType !== CPU && target.deviceType === CPU) {
          // Device to host is asynchronous: C's synchronous copy cannot do it.
          const dev = deviceImpl(this.device.deviceType, 'toDevice()');
          const bytes = await dev.download(this.dataPtr, this.byteOffset, this.nbytes);
          new Uint8Array(memory.buffer, out.dataPtr, bytes.byteLength).set(bytes);
        } else {
          copyTensor(this, out);
        }
      } catch (e) {
        out.dispose();
        throw e;
      }
      return out;
    }

    /**
     * Passes this tensor to C as a borrowed `DLTensor*` (kTVMFFIDLTensorPtr).
     * The pointer is taken when it is passed, from the tensor it holds: once
     * the tensor is disposed, passing it is refused.
     */
    asDLTensorPtr() {
      this[DESC]; // eslint-disable-line no-unused-expressions -- refuses a disposed tensor now
      return stampRuntime(new DLTensorRef(this, T_DLTENSOR_PTR), hooks);
    }

    #requireCPU(what) {
      if (this.device.deviceType !== CPU) {
        throw makeError('RuntimeError',
          `Tensor.${what}: the data lives on ${this.device}; reading it synchronously is not possible, use \`await tensor.data()\` or \`await tensor.toDevice('cpu')\``);
      }
      this.#requireCompact(what);
      arrayFor(this.dtype);
    }

    #requireCompact(what) {
      if (!this[DESC].contiguous) {
        throw makeError('ValueError', `Tensor.${what}: the tensor is not contiguous (strides [${this.strides}])`);
      }
    }
  };

  class Tensor extends tensorAPI(FFIObject) {
    #d = null;
    #viewed = false;

    /** The DLTensor's fields, read once; throws once disposed. */
    get [DESC]() {
      const p = hooks.ptrOf(this);
      return (this.#d ??= describeTensor(p + OBJ));
    }

    /**
     * A zero-copy typed array over the tensor's CPU data, at a cost
     * independent of the size. The array holds the tensor: its memory is
     * not released, nor reused, while the array is reachable, disposed or
     * not (dispose() then releases it when the last such array is
     * collected). A call that grows wasm memory detaches the array (length
     * 0), as it does every view of wasm memory: call view() again then.
     */
    view() {
      const v = this[RAW_VIEW]('view()');
      new ViewOf(v, this); // eslint-disable-line no-new
      this.#viewed = true;
      hooks.register(this); // dispose() now leaves the reference to the finalizer
      return v;
    }

    /**
     * Releases the tensor; later use throws. Once view() has handed out
     * arrays, the memory itself is released when they and this wrapper are
     * collected (the finalizer holds the reference until then).
     */
    dispose() {
      if (this.#viewed && this[PTR]) this[PTR] = 0;
      else super.dispose();
    }

    /** `ffi.Tensor float32[2, 3] @cpu:0`. */
    [INSPECT](depth, options, inspect) {
      return inspectWith(this, depth, options, inspect, (ctx, key) => {
        const d = this[DESC];
        return `${key} ${d.dtype}[${d.shape.join(', ')}] @${d.device}`;
      });
    }
  }

  /**
   * A `DLTensor*` (kTVMFFIDLTensorPtr) that C passed to JS, with Tensor's
   * API over memory C owns. One a JS callback receives as an argument is
   * BORROWED for the call: once the callback returns, every use throws
   * (keep a copy with toTensor() or toTypedArray() instead). One returned
   * by a C function or read from a container is valid while C keeps that
   * DLTensor alive, which only the C side knows.
   */
  class TensorView extends tensorAPI(Object) {
    #d;
    #borrowed;
    #copies = null; // [copy, snapshot] pairs view() handed out during the borrow

    constructor(dl, borrowed = false) {
      super();
      stampRuntime(this, hooks); // written as its DLTensor* only to this runtime
      this.#d = describeForeign(dl);
      this.#borrowed = borrowed;
      this.webffiHandle = CLONE_GUARD; // postMessage(view) throws
    }

    get [DESC]() {
      if (!this.#d) {
        throw makeError('ValueError', 'Cannot use a `DLTensor*` view after the callback it was passed to has returned; copy what you need during the call (toTensor(), toTypedArray())');
      }
      if (this.#copies !== null) this.#writeBack();
      return this.#d;
    }

    /** The data as a typed array, checked to lie in wasm memory (C gave the pointer). */
    [RAW_VIEW](what) {
      const d = this[DESC];
      const start = d.dataPtr + d.byteOffset;
      if (d.device.deviceType === CPU && !(start > 0 && start + d.nbytes <= memory.buffer.byteLength)) {
        throw makeError('ValueError', `DLTensor* 0x${d.dl.toString(16)}: its data lies outside wasm memory`);
      }
      return super[RAW_VIEW](what);
    }

    /**
     * The CPU data as a typed array. Of a `DLTensor*` a callback was passed
     * (borrowed for the call), a COPY taken now: the elements you change in
     * it are written to the tensor before any other use of the data through
     * this view and when the callback returns; after that the array is
     * plain JS memory, yours, no longer connected to C (a kept array never
     * reaches the memory C reuses). Of a `DLTensor*` a C function returned,
     * a zero-copy array over C's memory, valid while C keeps that DLTensor.
     */
    view() {
      const v = this[RAW_VIEW]('view()');
      if (!this.#borrowed) return v;
      const copy = v.slice();
      // (copy's bytes, the bytes as they were): only what changed is written back
      const bytes = new Uint8Array(copy.buffer);
      (this.#copies ??= []).push(bytes, bytes.slice());
      return copy;
    }

    /** Writes what changed in view()'s copies to the data (the bytes changed since the copy or the last write-back). */
    #writeBack() {
      const copies = this.#copies;
      const d = this.#d;
      let into = null;
      for (let k = 0; k < copies.length; k += 2) {
        const bytes = copies[k];
        const before = copies[k + 1];
        for (let i = 0, n = before.length; i < n; i++) {
          const b = bytes[i];
          if (b !== before[i]) {
            into ??= new Uint8Array(memory.buffer, d.dataPtr + d.byteOffset, n);
            into[i] = b;
            before[i] = b;
          }
        }
        into = null;
      }
    }

    /** Encoded by value like a tensor (js/tensor_codec.js). */
    get [BY_VALUE_AS]() {
      return 'ffi.Tensor';
    }

    /** Passed to C as the same `DLTensor*` (also when returned from a callback). */
    [AS_POD]() {
      return [this[DESC].dl, T_DLTENSOR_PTR];
    }

    /** An ffi.Tensor on the same device holding a copy of the data. */
    toTensor() {
      const d = this[DESC];
      if (!d.contiguous) throw makeError('ValueError', `TensorView.toTensor(): the view is not contiguous (strides [${d.strides}])`);
      const out = empty(d.shape, d.dtype, d.device);
      try {
        copyTensor(this, out);
      } catch (e) {
        out.dispose();
        throw e;
      }
      return out;
    }

    /** Ends the borrow (the runtime calls this when the callback returns): what view()'s copies changed is written back. */
    [RELEASE]() {
      try {
        if (this.#copies !== null) this.#writeBack();
      } finally {
        this.#copies = null;
        this.#d = null;
      }
    }

    toString() {
      const d = this.#d;
      return d ? `TensorView(${d.dtype}[${d.shape.join(', ')}]@${d.device})` : 'TensorView(released)';
    }

    /** `TensorView float32[2] @cpu:0`, or `TensorView <released>` once its callback returned. */
    [INSPECT]() {
      const d = this.#d;
      return d ? `TensorView ${d.dtype}[${d.shape.join(', ')}] @${d.device}` : 'TensorView <released>';
    }
  }

  function deviceImpl(type, what) {
    const dev = devices.deviceFor(type);
    if (!dev) throw makeError('ValueError', `Tensor.${what}: no backend serves device type ${runtime.device(type)}`);
    return dev;
  }

  /**
   * describeTensor for a DLTensor C made: its header, shape and strides must
   * lie in wasm memory (a bad pointer from C is a ValueError, not a RangeError
   * from deep inside a DataView).
   */
  function describeForeign(dl) {
    const end = memory.buffer.byteLength;
    const inside = (p, n) => p > 0 && p + n <= end;
    const bad = (what) => makeError('ValueError', `DLTensor* 0x${dl.toString(16)}: ${what} lies outside wasm memory`);
    if (!inside(dl, DL.size)) throw bad('the DLTensor');
    const d = view();
    const ndim = d.getInt32(dl + DL.ndim, true);
    if (ndim < 0 || ndim > 64) throw makeError('ValueError', `DLTensor* 0x${dl.toString(16)}: ndim ${ndim} is not valid`);
    if (ndim > 0 && !inside(d.getUint32(dl + DL.shape, true), 8 * ndim)) throw bad('its shape');
    const strides = d.getUint32(dl + DL.strides, true);
    if (strides && !inside(strides, 8 * ndim)) throw bad('its strides');
    return describeTensor(dl);
  }

  function readDims(p, n) {
    const d = view();
    const dims = new Array(n);
    // Two 32-bit reads, no BigInt: exact up to 2^53, as Number(BigInt) is.
    for (let i = 0; i < n; i++) dims[i] = d.getInt32(p + 8 * i + 4, true) * 2 ** 32 + d.getUint32(p + 8 * i, true);
    return dims;
  }

  runtime.registerObjectClass(T_TENSOR, Tensor);
  runtime[INTERNALS].setDLTensorReader((dl, borrowed) => new TensorView(dl, borrowed));
  runtime[INTERNALS].setTypedArrayConverter((array) => runtime[INTERNALS].handOff(tensor(array)));

  /** Writes a prototype DLTensor for (shape, dtype, device) in the current frame. */
  function prototype(shape, dtype, device) {
    const n = shape.length;
    const dims = alloc(8 * Math.max(n, 1));
    const proto = alloc(DL.size);
    const d = view();
    // Extents are safe integers (checkShape): two words each, no BigInt.
    for (let i = 0; i < n; i++) {
      const e = shape[i];
      d.setUint32(dims + 8 * i, e % 2 ** 32, true);
      d.setUint32(dims + 8 * i + 4, Math.floor(e / 2 ** 32), true);
    }
    for (let i = 0; i < DL.size; i += 4) d.setUint32(proto + i, 0, true);
    d.setInt32(proto + DL.device + DEV_TYPE, device.deviceType, true);
    d.setInt32(proto + DL.device + DEV_ID, device.deviceId, true);
    d.setInt32(proto + DL.ndim, n, true);
    d.setUint8(proto + DL.dtype + DT.code, dtype.code);
    d.setUint8(proto + DL.dtype + DT.bits, dtype.bits);
    d.setUint16(proto + DL.dtype + DT.lanes, dtype.lanes, true);
    d.setUint32(proto + DL.shape, dims, true);
    return proto;
  }

  /** An uninitialised tensor, allocated by the C core through the device's backend. */
  function empty(shape, dtype = 'float32', device = 'cpu') {
    return new Tensor(hooks, allocTensor(shape, dtype, device), T_TENSOR);
  }

  // A tensor's fields as read once (shape and strides arrays are shared:
  // read them, never change them): for the backends' kernels, which read
  // several fields of each argument per call.
  runtime[INTERNALS].tensorFields = (t) => t[DESC];
  // For a callback that returns a new tensor (the backends' kernels): the
  // tensor goes straight to C, without a wrapper registered with the
  // finalizer only to be handed off again.
  runtime[INTERNALS].emptyHandOff = (shape, dtype, device) =>
    runtime[INTERNALS].handOffPtr(allocTensor(shape, dtype, device), T_TENSOR);

  /**
   * A tensor over memory a backend already has (an imported GPUBuffer):
   * allocated as empty() is, inside within(), which makes the backend's
   * alloc() hand out that memory; holds(dataPtr) confirms it did. The
   * DLTensor's byte_offset is set before anything reads it.
   */
  function tensorOver(shape, dtype, device, byteOffset, within, holds) {
    const p = within(() => allocTensor(shape, dtype, device));
    const t = new Tensor(hooks, p, T_TENSOR);
    const at = p + OBJ + DL.byteOffset;
    const d = view();
    d.setUint32(at, byteOffset % 2 ** 32, true);
    d.setUint32(at + 4, Math.floor(byteOffset / 2 ** 32), true);
    if (!holds(t.dataPtr)) {
      t.dispose();
      throw makeError('RuntimeError', 'tensorFromGPUBuffer: the core did not allocate the tensor through its device backend');
    }
    return t;
  }

  /** empty()'s tensor as the address of a new reference. */
  function allocTensor(shape, dtype, device) {
    poisonCheck();
    const dims = checkShape(shape);
    const dt = parsed(dtypeNames, dtype, runtime.dtype);
    const dev = parsed(deviceNames, device, runtime.device);
    if (dev.deviceType !== CPU) devices.requireReady(dev.deviceType);
    if (libraryAlloc) return libraryAlloc(dims, dt, dev);
    return inFrame(() => {
      const proto = prototype(dims, dt, dev);
      const out = alloc(8);
      check(guarded.TVMFFIEnvTensorAlloc(proto, out));
      return u32(out);
    });
  }

  /**
   * A CPU tensor holding a copy of a typed array; `shape` defaults to 1-D,
   * `dtype` to the array's (float16/bfloat16 take Uint16Array bits, bool a Uint8Array).
   */
  function tensor(data, options) {
    const { shape, dtype } = optionsOf(options, 'tensor()');
    if (!ArrayBuffer.isView(data) || data instanceof DataView) {
      throw makeError('TypeError', `tensor(): data must be a typed array, got ${describe(data)}`);
    }
    const name = dtype === undefined ? ARRAY_DTYPES.get(data.constructor) : textOf(dtype, 'tensor()');
    const Arr = DTYPE_ARRAYS[name];
    if (!Arr) throw makeError('TypeError', `tensor(): unsupported dtype ${name}; supported: ${Object.keys(DTYPE_ARRAYS).join(', ')}`);
    if (!(data instanceof Arr) && !(Arr === Uint8Array && data instanceof Uint8ClampedArray)) {
      throw makeError('TypeError', `tensor(): dtype ${name} needs a ${Arr.name}, got a ${data.constructor.name}`);
    }
    // The shape first: reading it may run code (getters) that detaches the data.
    const given = shape === undefined ? undefined : checkShape(shape);
    // Read once, through the engine's accessors (not the object's own getters).
    const parts = typedArrayParts(data, 'tensor()');
    const dims = given ?? [parts.length];
    const count = dims.reduce((a, b) => a * b, 1);
    if (count !== parts.length) {
      throw makeError('ValueError', `tensor(): shape [${dims}] has ${count} elements, the data ${parts.length}`);
    }
    const t = empty(dims, name, 'cpu');
    if (t.nbytes !== parts.byteLength) {
      t.dispose();
      throw makeError('ValueError', `tensor(): the data holds ${parts.byteLength} bytes, a ${name} tensor of shape [${dims}] ${t.nbytes}`);
    }
    new Uint8Array(memory.buffer, t.dataPtr, parts.byteLength).set(new Uint8Array(parts.buffer, parts.byteOffset, parts.byteLength));
    return t;
  }

  /** Copies all bytes of `from` into `to` (tensors or views) through the C core. */
  function copyTensor(from, to) {
    if (libraryAlloc) return copyThroughBackends(from, to);
    check(guarded.WebFFIDLTensorCopy(from[DESC].dl, to[DESC].dl));
  }

  // A library TVM compiled has no default tensor allocator (and a C function
  // pointer cannot be added to its table): tensors come from TVM's
  // `runtime.TVMTensorAllocWithScope`, which allocates through the same
  // device protocol, and copies go straight to the backends.
  const libraryAlloc = runtime.coreKind === 'webffi' ? null : (() => {
    let allocate = null;
    let makeShape = null;
    return (dims, dt, dev) => {
      allocate ??= runtime.getGlobal('runtime.TVMTensorAllocWithScope');
      makeShape ??= runtime.getGlobal('ffi.Shape');
      const made = runtime.scope(() => allocate(makeShape(...dims), dt, dev, null));
      const p = hooks.ptrOf(made);
      guarded.TVMFFIObjectIncRef(p);
      made.dispose();
      return p;
    };
  })();

  /** copyTensor for a library's tensors: compact data, copied by the backends (or in memory). */
  function copyThroughBackends(from, to) {
    const f = from[DESC];
    const t = to[DESC];
    if (!f.contiguous || !t.contiguous) throw makeError('ValueError', 'copy: both tensors must be contiguous');
    const nbytes = f.nbytes;
    const fromCPU = f.device.deviceType === CPU;
    const toCPU = t.device.deviceType === CPU;
    if (fromCPU && toCPU) {
      new Uint8Array(memory.buffer).copyWithin(t.dataPtr + t.byteOffset, f.dataPtr + f.byteOffset, f.dataPtr + f.byteOffset + nbytes);
    } else if (fromCPU) {
      deviceImpl(t.device.deviceType, 'copy').upload(t.dataPtr, t.byteOffset, new Uint8Array(memory.buffer, f.dataPtr + f.byteOffset, nbytes));
    } else if (toCPU) {
      throw makeError('RuntimeError', `Copying from ${f.device} to the CPU is asynchronous: use \`await tensor.data()\` or \`await tensor.toDevice('cpu')\``);
    } else {
      deviceImpl(t.device.deviceType, 'copy').copy(f.dataPtr, f.byteOffset, t.dataPtr, t.byteOffset, nbytes);
    }
  }

  return { Tensor, TensorView, tensor, empty, copyTensor, tensorOver };
}

/**
 * A tensor passed as a borrowed `DLTensor*`: it holds the tensor, and the
 * pointer is read from it at each use, so a disposed tensor is refused.
 */
class DLTensorRef {
  constructor(tensor, typeIndex) {
    this.tensor = tensor;
    this[AS_POD] = () => [tensor[DESC].dl, typeIndex];
  }
}

export function checkShape(shape) {
  if (!Array.isArray(shape) && !ArrayBuffer.isView(shape)) {
    throw makeError('TypeError', `shape must be an array of non-negative integers, got ${describe(shape)}`);
  }
  const n = Array.isArray(shape) ? shape.length : typedArrayParts(shape, 'shape').length;
  if (!(n <= MAX_NDIM)) throw makeError('ValueError', `shape has ${n} dimensions, at most ${MAX_NDIM} are supported`);
  const dims = new Array(n);
  for (let i = 0; i < n; i++) {
    const d = shape[i];
    if (typeof d === 'number') dims[i] = d;
    else if (typeof d === 'bigint') dims[i] = Number(d);
    else throw makeError('TypeError', `shape must be an array of non-negative integers, got ${describe(d)} at ${i}`);
  }
  for (let i = 0; i < n; i++) {
    const d = dims[i];
    if (!Number.isSafeInteger(d) || d < 0) throw makeError('ValueError', `shape [${dims}] has an invalid extent ${d}`);
  }
  return dims;
}

function compactStrides(shape) {
  const s = new Array(shape.length);
  let stride = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = stride;
    stride *= shape[i];
  }
  return s;
}

/** The small floats, which carry no width digits (their codes come from the core: see smallFloatNames). */
const SMALL_FLOATS = ['float8_e3m4', 'float8_e4m3', 'float8_e4m3b11fnuz', 'float8_e4m3fn', 'float8_e4m3fnuz',
  'float8_e5m2', 'float8_e5m2fnuz', 'float8_e8m0fnu', 'float6_e2m3fn', 'float6_e3m2fn', 'float4_e2m1fn'];
let smallFloatNames = null; // code -> name, filled from the first runtime

function dtypeText(code, bits, lanes) {
  const small = smallFloatNames?.get(code);
  const base = code === 6 ? 'bool' : small ?? `${{ 0: 'int', 1: 'uint', 2: 'float', 4: 'bfloat' }[code] ?? `code${code}_`}${bits}`;
  return lanes === 1 ? base : `${base}x${lanes}`;
}

function arrayFor(dtype) {
  const Arr = DTYPE_ARRAYS[dtype.lanes === 1 ? dtype.text : dtypeText(dtype.code, dtype.bits, 1)];
  if (!Arr) throw makeError('TypeError', `Tensor: no typed array holds dtype ${dtype}`);
  return Arr;
}
