// TVM RPC's wire format (tvm-ffi era, protocol "0.8.0") for the client side:
// packets (u64 length, i32 RPCCode, body), argument lists of tvm-ffi type
// indices, the handshake. These numbers are the protocol's, fixed by TVM
// (src/runtime/rpc/rpc_protocol.h, tvm/ffi/c_api.h); the server side speaks
// the same format in C (src/rpc_codec.c).
import { makeError } from '../errors.js';
import { Device, DataType } from '../values.js';

export const RPC_MAGIC = 0xff271;
export const RPC_SUCCESS = RPC_MAGIC;
export const RPC_DUPLICATE = RPC_MAGIC + 1;
export const RPC_MISMATCH = RPC_MAGIC + 2;
export const RPC_PROTOCOL_VERSION = '0.8.0';

export const CODE = Object.freeze({
  Shutdown: 1, InitServer: 2, CallFunc: 3, Return: 4, Exception: 5, CopyFromRemote: 6,
  CopyToRemote: 7, CopyAck: 8, GetGlobalFunc: 9, FreeHandle: 10, DevSetDevice: 11,
  DevGetAttr: 12, DevAllocData: 13, DevFreeData: 14, DevStreamSync: 15, CopyAmongRemote: 16,
  DevAllocDataWithScope: 17, DevCreateStream: 18, DevFreeStream: 19, DevSetStream: 20,
  DevGetCurrentStream: 21,
});

// tvm-ffi type indices as they stand on the wire
export const T = Object.freeze({
  None: 0, Int: 1, Bool: 2, Float: 3, OpaquePtr: 4, DataType: 5, Device: 6, DLTensorPtr: 7,
  RawStr: 8, ByteArrayPtr: 9, SmallStr: 11, SmallBytes: 12, Object: 64, Str: 65, Bytes: 66,
  Function: 68, Tensor: 70, Module: 73, ObjectRef: 115,
});

const DEVICE_NAMES = { 1: 'cpu', 2: 'cuda', 4: 'opencl', 7: 'vulkan', 8: 'metal', 13: 'ext_dev', 15: 'webgpu' };
const DEVICE_TYPES = Object.fromEntries(Object.entries(DEVICE_NAMES).map(([k, v]) => [v, Number(k)]));
const DTYPE_CODES = { int: 0, uint: 1, float: 2, bfloat: 4, bool: 6 };
const DTYPE_NAMES = Object.fromEntries(Object.entries(DTYPE_CODES).map(([k, v]) => [v, k]));

/** A Device from 'webgpu:0', 'cpu', a type number, or a Device. */
export function deviceOf(spec, id = 0) {
  if (spec instanceof Device) return spec;
  if (typeof spec === 'number') return new Device(spec, id, DEVICE_NAMES[spec] ?? `device${spec}`);
  const m = /^([a-z_]+)(?::(\d+))?$/.exec(String(spec));
  if (!m || !(m[1] in DEVICE_TYPES)) throw makeError('ValueError', `Unknown device: ${spec}`);
  return new Device(DEVICE_TYPES[m[1]], m[2] === undefined ? id : Number(m[2]), m[1]);
}

/** A DataType from 'float32', 'int64', 'float32x4', 'bool', or a DataType. */
export function dtypeOf(spec) {
  if (spec instanceof DataType) return spec;
  const text = String(spec);
  if (text === 'bool') return new DataType(6, 8, 1, 'bool');
  const m = /^(int|uint|float|bfloat)(\d+)(?:x(\d+))?$/.exec(text);
  if (!m) throw makeError('ValueError', `Unknown dtype: ${text}`);
  return new DataType(DTYPE_CODES[m[1]], Number(m[2]), m[3] ? Number(m[3]) : 1, text);
}

function dtypeAt(code, bits, lanes) {
  const base = code === 6 && bits === 8 ? 'bool' : `${DTYPE_NAMES[code] ?? `code${code}_`}${bits}`;
  return new DataType(code, bits, lanes, lanes === 1 ? base : `${base}x${lanes}`);
}

/** A growable little-endian byte writer, reused across packets. */
export class Writer {
  constructor(capacity = 256) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
    this.size = 0;
  }

  #reserve(n) {
    if (this.size + n <= this.bytes.length) return;
    let cap = this.bytes.length * 2;
    while (cap < this.size + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.bytes.subarray(0, this.size));
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }

  u32(v) {
    this.#reserve(4);
    this.view.setUint32(this.size, v >>> 0, true);
    this.size += 4;
  }

  i64(v) {
    this.#reserve(8);
    this.view.setBigInt64(this.size, BigInt(v), true);
    this.size += 8;
  }

  u64(v) {
    this.#reserve(8);
    if (typeof v === 'number' && v >= 0 && v <= 0xffffffff) {
      this.view.setUint32(this.size, v, true);
      this.view.setUint32(this.size + 4, 0, true);
    } else {
      this.view.setBigUint64(this.size, BigInt.asUintN(64, BigInt(v)), true);
    }
    this.size += 8;
  }

  f64(v) {
    this.#reserve(8);
    this.view.setFloat64(this.size, v, true);
    this.size += 8;
  }

  raw(bytes) {
    this.#reserve(bytes.length);
    this.bytes.set(bytes, this.size);
    this.size += bytes.length;
  }

  lenBytes(bytes) {
    this.u64(bytes.length);
    this.raw(bytes);
  }

  /** Starts a packet: the length is patched by end(). */
  begin(code) {
    this.size = 0;
    this.u64(0);
    this.u32(code);
  }

  /** Ends the packet; `extra` more bytes will follow it on the wire. */
  end(extra = 0) {
    this.view.setBigUint64(0, BigInt(this.size - 8 + extra), true);
    return this.bytes.subarray(0, this.size);
  }

  device(d) {
    this.u32(d.deviceType);
    this.u32(d.deviceId);
  }

  dtype(t) {
    this.#reserve(4);
    this.bytes[this.size] = t.code;
    this.bytes[this.size + 1] = t.bits;
    this.view.setUint16(this.size + 2, t.lanes, true);
    this.size += 4;
  }

  /** A DLTensor descriptor: data handle, device, ndim, dtype, shape, byte offset. */
  tensor(data, device, dtype, shape, byteOffset = 0) {
    this.u64(data);
    this.device(device);
    this.u32(shape.length);
    this.dtype(dtype);
    for (const s of shape) this.i64(s);
    this.u64(byteOffset);
  }
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Reads one packet body (after the length); every read is bounds-checked. */
export class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }

  #need(n, what) {
    if (this.at + n > this.bytes.length) {
      throw makeError('RPCError', `RPC: a truncated packet (${what} needs ${n} bytes, ${this.bytes.length - this.at} left)`);
    }
  }

  i32(what = 'an int32') {
    this.#need(4, what);
    const v = this.view.getInt32(this.at, true);
    this.at += 4;
    return v;
  }

  u32(what = 'a uint32') {
    return this.i32(what) >>> 0;
  }

  i64(what = 'an int64') {
    this.#need(8, what);
    const v = this.view.getBigInt64(this.at, true);
    this.at += 8;
    return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  }

  u64(what = 'a uint64') {
    this.#need(8, what);
    const lo = this.view.getUint32(this.at, true);
    const hi = this.view.getUint32(this.at + 4, true);
    this.at += 8;
    return hi === 0 ? lo : (BigInt(hi) << 32n) | BigInt(lo);
  }

  f64() {
    this.#need(8, 'a float');
    const v = this.view.getFloat64(this.at, true);
    this.at += 8;
    return v;
  }

  run(n, what) {
    if (typeof n === 'bigint' || n > this.bytes.length - this.at) {
      throw makeError('RPCError', `RPC: a truncated packet (${what} of ${n} bytes, ${this.bytes.length - this.at} left)`);
    }
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  lenBytes(what) {
    return this.run(this.u64(what), what);
  }

  rest() {
    return this.run(this.bytes.length - this.at, 'the rest');
  }

  done(what) {
    if (this.at !== this.bytes.length) {
      throw makeError('RPCError', `RPC: ${this.bytes.length - this.at} trailing bytes after ${what}`);
    }
  }

  /** One argument value as { type, value } (handles as numbers or BigInts). */
  value() {
    const type = this.i32('a type index');
    switch (type) {
      case T.None: return { type, value: null };
      case T.Int: return { type, value: this.i64() };
      case T.Bool: return { type, value: this.u64() !== 0 };
      case T.Float: return { type, value: this.f64() };
      case T.OpaquePtr: case T.Function: case T.Module: return { type, value: this.u64('a handle') };
      case T.DataType: {
        const b = this.run(4, 'a dtype');
        this.u32('padding');
        return { type, value: dtypeAt(b[0], b[1], b[2] | (b[3] << 8)) };
      }
      case T.Device: {
        const t = this.i32();
        return { type, value: deviceOf(t, this.i32()) };
      }
      case T.DLTensorPtr: {
        const data = this.u64('a data handle');
        const dt = this.i32();
        const device = deviceOf(dt, this.i32());
        const ndim = this.i32('ndim');
        if (ndim < 0 || ndim > 64) throw makeError('RPCError', `RPC: a tensor with ndim ${ndim}`);
        const b = this.run(4, 'a dtype');
        const dtype = dtypeAt(b[0], b[1], b[2] | (b[3] << 8));
        const shape = [];
        for (let i = 0; i < ndim; i++) shape.push(Number(this.i64('a dimension')));
        const byteOffset = Number(this.u64('a byte offset'));
        return { type, value: { data, device, dtype, shape, byteOffset } };
      }
      case T.RawStr: return { type, value: fromUtf8.decode(this.lenBytes('a string')) };
      case T.ByteArrayPtr: return { type, value: this.lenBytes('bytes').slice() };
      default: {
        if (type < T.Object && type !== T.SmallStr && type !== T.SmallBytes) {
          throw makeError('RPCError', `RPC: type index ${type} does not travel (an older TVM peer?)`);
        }
        const inner = this.u32('an object type index');
        if (inner === T.ObjectRef) return { type: T.ObjectRef, value: this.u64('a handle') };
        if (inner === T.Str) return { type: T.Str, value: fromUtf8.decode(this.lenBytes('a string')) };
        if (inner === T.Bytes) return { type: T.Bytes, value: this.lenBytes('bytes').slice() };
        throw makeError('RPCError', `RPC: an object of type index ${inner} does not travel`);
      }
    }
  }

  args(what) {
    const n = this.i32('an argument count');
    if (n < 0 || n * 4 > this.bytes.length - this.at) throw makeError('RPCError', `RPC: ${what} has an impossible argument count ${n}`);
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.value());
    return out;
  }
}

/** The client's opening: magic, key length, key. */
export function handshakeBytes(key) {
  const k = utf8.encode(key);
  const out = new Uint8Array(8 + k.length);
  const v = new DataView(out.buffer);
  v.setInt32(0, RPC_MAGIC, true);
  v.setInt32(4, k.length, true);
  out.set(k, 8);
  return out;
}

export { utf8 };
