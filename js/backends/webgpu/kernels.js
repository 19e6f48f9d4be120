// The backend's compute kernels: argument checks, pipeline cache and
// dispatch. Kernels take tensor descriptions { data, shape, dtype,
// byteOffset? } whose `data` is an allocation handle, write into a caller
// allocated `out` (the runtime allocates it from `output(...)` in KERNELS)
// and record their work in the current command batch.

import { elementwiseWGSL, broadcastWGSL, matmulWGSL, reduceWGSL, softmaxWGSL, ELEMENTWISE_WG, MATMUL_TILE } from './wgsl.js';
import { BufferUsage } from './gpu_flags.js';

const DTYPES = {
  float32: { wgsl: 'f32', bytes: 4, index: 0 },
  float16: { wgsl: 'f16', bytes: 2, index: 1 },
};
const NEG_INF_BITS = 0xff800000;
const REDUCE_CHUNK = 4096; // elements one workgroup reduces in a partial pass
const MIN_PARALLEL_OUTPUTS = 256; // fewer outputs than this: reduce in passes

const BINARY = { add: '+', sub: '-', mul: '*', div: '/' };
// WGSL source makers per operator (made once: no closure per dispatch).
const SOURCES = Object.fromEntries(Object.values(BINARY).map((op) => [op, {
  binary: (t) => elementwiseWGSL(op, t, false),
  scalar: (t) => elementwiseWGSL(op, t, true),
  broadcast: (t) => broadcastWGSL(op, t),
}]));
const KERNEL_IDS = {
  add: 0, sub: 1, mul: 2, div: 3,
  addScalar: 4, subScalar: 5, mulScalar: 6, divScalar: 7,
  matmul: 8, sum: 9, max: 10, sumPartial: 11, maxPartial: 12, softmax: 13,
  addBroadcast: 14, subBroadcast: 15, mulBroadcast: 16, divBroadcast: 17,
};

// ---- shape and dtype checks (no GPU needed; used by KERNELS[].output) ----

function fail(kind, message) {
  const e = new Error(message);
  e.kind = kind;
  throw e;
}

/** 'float32' | 'float16' from a string or a DLDataType-like {code, bits, lanes}. */
function dtypeName(dtype, where) {
  let name = dtype;
  if (dtype && typeof dtype === 'object') {
    const { code, bits, lanes = 1 } = dtype;
    const base = { 0: 'int', 1: 'uint', 2: 'float', 4: 'bfloat', 6: 'bool' }[code] ?? `code${code}`;
    name = `${base}${bits}${lanes !== 1 ? `x${lanes}` : ''}`;
  }
  if (!Object.hasOwn(DTYPES, name)) {
    fail('TypeError', `${where}: unsupported dtype ${String(name)}; WebGPU kernels take float32 (and float16 where the adapter has shader-f16)`);
  }
  return name;
}

function shapeOf(t, arg, where) {
  if (!t || typeof t !== 'object') fail('TypeError', `${where}: argument ${arg} must be a tensor, got ${t === null ? 'null' : typeof t}`);
  const { shape } = t;
  if (!Array.isArray(shape)) fail('TypeError', `${where}: ${arg}.shape must be an array of integers`);
  for (const d of shape) {
    if (!(Number.isSafeInteger(d) && d >= 0)) fail('ValueError', `${where}: ${arg}.shape ${fmt(shape)} has an invalid dimension ${String(d)}`);
  }
  if (t.strides != null && !isContiguous(shape, t.strides)) {
    fail('ValueError', `${where}: ${arg} is not contiguous (shape ${fmt(shape)}, strides ${fmt(t.strides)}); WebGPU kernels need compact row-major tensors`);
  }
  return shape;
}

function isContiguous(shape, strides) {
  let expect = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && Number(strides[i]) !== expect) return false;
    expect *= shape[i];
  }
  return true;
}

function numel(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function fmt(shape) {
  return `[${Array.from(shape, String).join(', ')}]`;
}

function sameShape(x, y) {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function sameDtype(where, a, b) {
  const da = dtypeName(a.dtype, where);
  const db = dtypeName(b.dtype, where);
  if (da !== db) fail('TypeError', `${where}: dtypes differ: a is ${da}, b is ${db}`);
  return da;
}

function binaryOutput(where) {
  return (a, b) => {
    const sa = shapeOf(a, 'a', where);
    const sb = shapeOf(b, 'b', where);
    const dtype = sameDtype(where, a, b);
    if (sameShape(sa, sb)) return { shape: [...sa], dtype };
    const shape = broadcastShape(where, sa, sb);
    // Planned here so too many dimensions are refused before the runtime
    // allocates; the kernel then uses this plan.
    return { shape, dtype, plan: broadcastPlan(where, sa, sb, shape) };
  };
}

/** NumPy's broadcast of two shapes: right-aligned, each dimension equal or 1. */
function broadcastShape(where, sa, sb) {
  const rank = Math.max(sa.length, sb.length);
  const shape = new Array(rank);
  for (let i = 1; i <= rank; i++) {
    const x = sa[sa.length - i] ?? 1;
    const y = sb[sb.length - i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      fail('ValueError', `${where}: shapes ${fmt(sa)} and ${fmt(sb)} cannot be broadcast (dimension -${i}: ${x} vs ${y})`);
    }
    shape[rank - i] = x === 1 ? y : x;
  }
  return shape;
}

// The broadcasting kernel reads the shape from its 64-byte parameter slot,
// so the shape is reduced first: output dimensions of size 1 are dropped and
// neighbours that broadcast alike (both inputs advance, only a, only b) merge
// into one, as row-major memory allows. [M, N] + [N], [M, 1] * [1, N] and
// [B, M, N] + [B, 1, N] then need 2 or 3 dimensions; 4 fit in the slot
// (5 words of sizes and offsets, 3 inner output sizes, 4 strides per input).
const BROADCAST_RANK = 4;

/**
 * The merged dimensions of a broadcast, innermost first, with each input's
 * element stride per dimension (0 where that input repeats).
 */
function broadcastPlan(where, sa, sb, shape) {
  const dims = [];
  const aStrides = [];
  const bStrides = [];
  let aStride = 1;
  let bStride = 1;
  let prev = -1;
  for (let i = 1; i <= shape.length; i++) {
    const d = shape[shape.length - i];
    if (d === 1) continue;
    const inA = (sa[sa.length - i] ?? 1) === d;
    const inB = (sb[sb.length - i] ?? 1) === d;
    const kind = (inA ? 1 : 0) + (inB ? 2 : 0);
    if (kind === prev) {
      dims[dims.length - 1] *= d;
    } else {
      dims.push(d);
      aStrides.push(inA ? aStride : 0);
      bStrides.push(inB ? bStride : 0);
      prev = kind;
    }
    if (inA) aStride *= d;
    if (inB) bStride *= d;
  }
  if (dims.length > BROADCAST_RANK) {
    fail('ValueError', `${where}: broadcasting ${fmt(sa)} with ${fmt(sb)} needs ${dims.length} dimensions after merging neighbours that broadcast alike; the kernel supports ${BROADCAST_RANK}`);
  }
  return { dims, aStrides, bStrides };
}

function scalarOutput(where) {
  return (a, scalar) => {
    const shape = shapeOf(a, 'a', where);
    if (typeof scalar !== 'number') fail('TypeError', `${where}: scalar must be a number, got ${typeof scalar}`);
    return { shape: [...shape], dtype: dtypeName(a.dtype, where) };
  };
}

function matmulOutput(a, b) {
  const where = 'webgpu.matmul';
  const sa = shapeOf(a, 'a', where);
  const sb = shapeOf(b, 'b', where);
  const dtype = sameDtype(where, a, b);
  if (sa.length !== 2 || sb.length !== 2) {
    fail('ValueError', `${where}: expects 2-D tensors, got a ${fmt(sa)} and b ${fmt(sb)}`);
  }
  if (sa[1] !== sb[0]) {
    fail('ValueError', `${where}: inner dimensions differ: a is ${fmt(sa)}, b is ${fmt(sb)} (${sa[1]} != ${sb[0]})`);
  }
  return { shape: [sa[0], sb[1]], dtype };
}

function normalizeAxis(where, axis, rank) {
  if (axis === null || axis === undefined) return null;
  if (!Number.isInteger(axis)) fail('TypeError', `${where}: axis must be an integer or null, got ${typeof axis}`);
  if (axis < -rank || axis >= rank) fail('ValueError', `${where}: axis ${axis} is out of range for a ${rank}-D tensor`);
  return axis < 0 ? axis + rank : axis;
}

function reduceOutput(where) {
  return (a, axis) => {
    const shape = shapeOf(a, 'a', where);
    const dtype = dtypeName(a.dtype, where);
    const ax = normalizeAxis(where, axis, shape.length);
    const reduced = ax === null ? numel(shape) : shape[ax];
    if (where === 'webgpu.max' && reduced === 0) {
      fail('ValueError', `${where}: cannot reduce an empty ${ax === null ? 'tensor' : `axis ${ax}`} (shape ${fmt(shape)}); max has no identity`);
    }
    return { shape: ax === null ? [] : shape.filter((_, i) => i !== ax), dtype };
  };
}

function softmaxOutput(a) {
  const where = 'webgpu.softmax';
  const shape = shapeOf(a, 'a', where);
  if (shape.length === 0) fail('ValueError', `${where}: needs at least one dimension (softmax runs over the last axis)`);
  return { shape: [...shape], dtype: dtypeName(a.dtype, where) };
}

const T = { name: 'a', type: 'Tensor' };
const TB = { name: 'b', type: 'Tensor' };
const SCALAR = { name: 'scalar', type: 'float' };
const AXIS = { name: 'axis', type: 'Optional[int]' };

function entry(name, method, args, output, doc) {
  return Object.freeze({ name, method, args: Object.freeze(args), returns: 'Tensor', output, doc });
}

/**
 * The kernels the runtime registers as global functions. `method` names the
 * backend method, called as backend[method](...args, out); `output(...args)`
 * checks the inputs and returns the { shape, dtype } of `out`.
 */
export const KERNELS = Object.freeze([
  ...Object.keys(BINARY).map((op) =>
    entry(`webgpu.${op}`, op, [T, TB], binaryOutput(`webgpu.${op}`), `elementwise a ${BINARY[op]} b (same dtype; shapes broadcast as in NumPy)`)),
  ...Object.keys(BINARY).map((op) =>
    entry(`webgpu.${op}_scalar`, `${op}Scalar`, [T, SCALAR], scalarOutput(`webgpu.${op}_scalar`), `elementwise a ${BINARY[op]} scalar`)),
  entry('webgpu.matmul', 'matmul', [T, TB], matmulOutput, 'matrix product of 2-D a[M, K] and b[K, N]'),
  entry('webgpu.sum', 'sum', [T, AXIS], reduceOutput('webgpu.sum'), 'sum over one axis, or over all elements when axis is null'),
  entry('webgpu.max', 'max', [T, AXIS], reduceOutput('webgpu.max'), 'maximum over one axis, or over all elements when axis is null'),
  entry('webgpu.softmax', 'softmax', [T], softmaxOutput, 'softmax over the last axis'),
]);
const KERNEL_BY_METHOD = Object.fromEntries(KERNELS.map((k) => [k.method, k]));

// ---- dispatch ----

/**
 * Checks inputs and `out`, rethrowing check failures as the runtime's
 * errors. `spec`, when given, is what KERNELS[].output returned for these
 * very arguments and `out` was allocated from it (the runtime's path), so
 * the shape checks are not repeated; the handles are checked either way.
 */
function prepare(be, method, args, out, spec) {
  const k = KERNEL_BY_METHOD[method];
  if (spec === undefined) {
    try {
      spec = k.output(...args);
      const so = shapeOf(out, 'out', k.name);
      const dout = dtypeName(out.dtype, k.name);
      if (dout !== spec.dtype) fail('TypeError', `${k.name}: out has dtype ${dout}, expected ${spec.dtype}`);
      if (!sameShape(so, spec.shape)) fail('ValueError', `${k.name}: out has shape ${fmt(so)}, expected ${fmt(spec.shape)}`);
    } catch (e) {
      if (e.kind) throw be._error(e.kind, e.message);
      throw e;
    }
  }
  const state = be._checkHandle(out?.data, k.name);
  for (let i = 0; i < args.length; i++) {
    const t = args[i];
    if (t && typeof t === 'object') be._checkHandle(t.data, k.name);
  }
  if (spec.dtype === 'float16' && !state.hasF16) {
    throw be._error('TypeError', `${k.name}: float16 needs the shader-f16 feature, which this WebGPU adapter lacks`);
  }
  return { state, dtype: DTYPES[spec.dtype], name: k.name, plan: spec.plan };
}

/** A storage binding covering the tensor, and the element offset within it. */
function bindTensor(be, state, t, count, dtype, name) {
  const handle = t.data;
  const byteOffset = t.byteOffset ?? 0;
  if (count === 0) return { binding: storage(handle.buffer, 0, 4, handle.id), elemOffset: 0 };
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset % dtype.bytes) {
    throw be._error('ValueError', `${name}: byteOffset ${byteOffset} is not a multiple of the element size ${dtype.bytes}`);
  }
  const end = byteOffset + count * dtype.bytes;
  if (end > handle.nbytes) {
    throw be._error('ValueError', `${name}: tensor needs bytes [${byteOffset}, ${end}) but its allocation has ${handle.nbytes}`);
  }
  const limits = state.limits;
  const start = byteOffset - (byteOffset % limits.minStorageBufferOffsetAlignment);
  const size = Math.ceil((end - start) / 4) * 4;
  if (size > limits.maxStorageBufferBindingSize) {
    throw be._error('ValueError', `${name}: a tensor of ${end - byteOffset} bytes exceeds the device's maxStorageBufferBindingSize (${limits.maxStorageBufferBindingSize})`);
  }
  return { binding: storage(handle.buffer, start, size, handle.id), elemOffset: (byteOffset - start) / dtype.bytes };
}

/** A buffer binding; `id` (the allocation's, -1 for scratch) lets bind groups over allocations be cached. */
function storage(buffer, offset, size, id = -1) {
  return { buffer, offset, size, id };
}

/**
 * The cached pipeline for kernel `id` from input type ti to output type to,
 * with `inputs` read-only tensors, then the output, then the parameters:
 * a slot of the batch's ring (dynamic offset), or with `fixed` a uniform
 * buffer of their own (see paramsBuffer).
 */
function pipeline(state, id, inputs, ti, to, makeSource, fixed = false) {
  const key = ((id * 2 + ti.index) * 2 + to.index) * 2 + (fixed ? 1 : 0);
  let p = state.pipelines.get(key);
  if (!p) {
    const device = state.device;
    const layout = (state.layouts[inputs * 2 + (fixed ? 1 : 0)] ??= bindGroupLayout(device, inputs, !fixed));
    const module = device.createShaderModule({ code: makeSource(ti.wgsl, to.wgsl) });
    const pipe = device.createComputePipeline({
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: 'main' },
    });
    p = { pipe, layout, fixed, bindGroups: new Map(), recent: [], lastParams: null };
    state.pipelines.set(key, p);
  }
  return p;
}

const COMPUTE = 0x4; // GPUShaderStage.COMPUTE

function bindGroupLayout(device, inputs, dynamic) {
  const entries = [];
  for (let i = 0; i < inputs; i++) entries.push({ binding: i, visibility: COMPUTE, buffer: { type: 'read-only-storage' } });
  entries.push({ binding: inputs, visibility: COMPUTE, buffer: { type: 'storage' } });
  entries.push({ binding: inputs + 1, visibility: COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: dynamic } });
  return device.createBindGroupLayout({ entries });
}

// Parameters that depend only on shapes and offsets (not on a scalar
// argument) live in a small uniform buffer made once per distinct content:
// a chain of same-shaped kernels then records no parameter writes at all,
// and its bind groups (tensors + that buffer) repeat. Kernels fill PARAMS
// and call fixedParams(state, words).
const PARAMS = new Uint32Array(16);
const PARAMS_CACHE_SIZE = 1024; // distinct parameter blocks per device; cleared when full

function fixedParams(state, p, words) {
  // A chain repeats one kernel on one shape: compare with the pipeline's last block first.
  const last = p.lastParams;
  if (last !== null && last.words === words && sameWords(last.data, words)) return last;
  let key = `${PARAMS[0]}`;
  for (let i = 1; i < words; i++) key += `,${PARAMS[i]}`;
  const cache = state.params;
  let entry = cache.get(key);
  if (!entry) {
    if (cache.size >= PARAMS_CACHE_SIZE) {
      for (const e of cache.values()) state.batch.destroyAfterSubmit(e.buffer);
      cache.clear();
      for (const q of state.pipelines.values()) {
        if (q.fixed) {
          q.bindGroups.clear();
          q.recent.length = 0;
        }
        q.lastParams = null;
      }
    }
    const buffer = state.device.createBuffer({ size: 16 * 4, usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST });
    state.device.queue.writeBuffer(buffer, 0, PARAMS, 0, 16);
    entry = { buffer, resource: { buffer }, id: state.nextParamsId++, words, data: PARAMS.slice(0, words) };
    cache.set(key, entry);
  }
  p.lastParams = entry;
  return entry;
}

function sameWords(data, words) {
  for (let i = 0; i < words; i++) if (data[i] !== PARAMS[i]) return false;
  return true;
}

/** Workgroup grid (x, y) for `groups` groups within the per-dimension limit. */
function grid(be, state, groups, name) {
  const maxDim = state.limits.maxComputeWorkgroupsPerDimension;
  const x = Math.min(groups, maxDim);
  const y = Math.ceil(groups / x);
  if (y > maxDim) throw be._error('ValueError', `${name}: the work is too large for one dispatch (${groups} workgroups)`);
  return [x, y];
}

const BIND_GROUP_CACHE_SIZE = 256; // per pipeline; cleared when full

/** The bind group cache key of `bindings` (null when one is not allocation-backed). */
function groupKey(bindings, prefix) {
  let key = prefix;
  for (let i = 0; i < bindings.length; i++) {
    const b = bindings[i];
    if (b.id < 0) return null;
    key += `|${b.id}@${b.offset}+${b.size}`;
  }
  return key;
}

// The bind groups a pipeline used last, matched field by field before any
// key is built: a chain alternates between two or three of them.
const RECENT_GROUPS = 4;

function recentGroup(p, bindings, params) {
  const recent = p.recent;
  for (let j = 0; j < recent.length; j++) {
    const e = recent[j];
    if (e.params !== params) continue;
    const was = e.bindings;
    if (was.length !== bindings.length) continue;
    let i = 0;
    for (; i < was.length; i++) {
      const a = was[i];
      const b = bindings[i];
      if (a.buffer !== b.buffer || a.offset !== b.offset || a.size !== b.size) break;
    }
    if (i === was.length) return e.group;
  }
  return null;
}

function rememberGroup(p, bindings, params, group) {
  const recent = p.recent;
  if (recent.length >= RECENT_GROUPS) recent.shift();
  recent.push({ bindings, params, group });
}

/** The bind group of `bindings` and `params`: a recent one, a cached one, or a new one. */
function groupFor(state, p, bindings, paramsId, params) {
  const hit = recentGroup(p, bindings, params);
  if (hit !== null) return hit;
  const key = groupKey(bindings, paramsId === null ? '' : `${paramsId}`);
  const group = bindGroupFor(state, p, bindings, key, params);
  // only allocation-backed bindings, as the cache (a scratch buffer is used once)
  if (key !== null) rememberGroup(p, bindings, params, group);
  return group;
}

function bindGroupFor(state, p, bindings, key, params) {
  // Bind groups over allocations are reused: repeated calls on the same
  // tensors (the common loop) skip createBindGroup, the largest per-call cost.
  let group = key === null ? undefined : p.bindGroups.get(key);
  if (!group) {
    const entries = bindings.map((b, binding) => ({ binding, resource: { buffer: b.buffer, offset: b.offset, size: b.size } }));
    entries.push({ binding: bindings.length, resource: params });
    group = state.device.createBindGroup({ layout: p.layout, entries });
    if (key !== null) {
      if (p.bindGroups.size >= BIND_GROUP_CACHE_SIZE) {
        p.bindGroups.clear();
        p.recent.length = 0;
      }
      p.bindGroups.set(key, group);
    }
  }
  return group;
}

/** A dispatch whose parameters are in the ring slot reserved last. */
function dispatch(state, p, bindings, gx, gy) {
  const group = groupFor(state, p, bindings, null, state.batch.paramsBinding);
  state.batch.dispatch(p.pipe, group, gx, gy);
}

/** A dispatch of a `fixed` pipeline with the first `words` of PARAMS. */
function dispatchFixed(state, p, bindings, words, gx, gy) {
  const params = fixedParams(state, p, words);
  const group = groupFor(state, p, bindings, params.id, params.resource);
  state.batch.dispatchStatic(p.pipe, group, gx, gy);
}

/**
 * Where a kernel writes: `out` itself, or a scratch buffer when `out`
 * shares a buffer with an input (WebGPU forbids binding one buffer both
 * read-only and writable in a dispatch); `finish()` copies scratch to out.
 */
function target(be, state, out, inputs, count, dtype, name) {
  const bound = bindTensor(be, state, out, count, dtype, name);
  const buf = out.data.buffer;
  let shared = false;
  for (let i = 0; i < inputs.length; i++) shared ||= inputs[i].data.buffer === buf;
  if (!shared) {
    bound.finish = noFinish;
    return bound;
  }
  const byteOffset = out.byteOffset ?? 0;
  const exact = count * dtype.bytes;
  if (byteOffset % 4 || (exact % 4 && byteOffset + exact !== out.data.nbytes)) {
    throw be._error('ValueError', `${name}: out shares its allocation with an input, which needs out to start and end on 4-byte boundaries`);
  }
  const nbytes = Math.ceil(exact / 4) * 4;
  const buffer = scratch(state, nbytes);
  return {
    binding: storage(buffer, 0, nbytes),
    elemOffset: 0,
    finish() {
      state.batch.copy(buffer, 0, out.data.buffer, byteOffset, nbytes);
      state.batch.destroyAfterSubmit(buffer);
    },
  };
}

function noFinish() {}

function scratch(state, nbytes) {
  return state.device.createBuffer({
    size: Math.max(4, nbytes),
    usage: BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST,
  });
}

function elementwise(be, method, op, a, b, scalar, out, spec) {
  const { state, dtype, name, plan } = prepare(be, method, b === null ? [a, scalar] : [a, b], out, spec);
  const n = numel(out.shape);
  if (n === 0) return out;
  const inputs = b === null ? [a] : [a, b];
  const na = numel(a.shape);
  const nb = b === null ? n : numel(b.shape);
  const ba = bindTensor(be, state, a, na, dtype, name);
  const bb = b === null ? null : bindTensor(be, state, b, nb, dtype, name);
  // As many elements as out: the same row-major layout, so no broadcasting.
  if (na !== n || nb !== n) return broadcast(be, state, method, op, plan, a, b, ba, bb, out, n, dtype, name);
  const dst = target(be, state, out, inputs, n, dtype, name);
  const [gx, gy] = grid(be, state, Math.ceil(n / ELEMENTWISE_WG), name);
  if (b === null) {
    // The scalar varies from call to call: its parameters take a ring slot.
    const pipe = pipeline(state, KERNEL_IDS[method], 1, dtype, dtype, SOURCES[op].scalar);
    const w = state.batch.reserveParams();
    const u32 = state.batch.u32;
    u32[w] = n;
    u32[w + 1] = ba.elemOffset;
    u32[w + 3] = dst.elemOffset;
    u32[w + 4] = gx * ELEMENTWISE_WG;
    state.batch.f32[w + 5] = scalar;
    dispatch(state, pipe, [ba.binding, dst.binding], gx, gy);
  } else {
    const pipe = pipeline(state, KERNEL_IDS[method], 2, dtype, dtype, SOURCES[op].binary, true);
    PARAMS[0] = n;
    PARAMS[1] = ba.elemOffset;
    PARAMS[2] = bb.elemOffset;
    PARAMS[3] = dst.elemOffset;
    PARAMS[4] = gx * ELEMENTWISE_WG;
    PARAMS[5] = 0;
    dispatchFixed(state, pipe, [ba.binding, bb.binding, dst.binding], 6, gx, gy);
  }
  dst.finish();
  return out;
}

function broadcast(be, state, method, op, { dims, aStrides, bStrides }, a, b, ba, bb, out, n, dtype, name) {
  const dst = target(be, state, out, [a, b], n, dtype, name);
  const [gx, gy] = grid(be, state, Math.ceil(n / ELEMENTWISE_WG), name);
  const pipe = pipeline(state, KERNEL_IDS[`${method}Broadcast`], 2, dtype, dtype, SOURCES[op].broadcast, true);
  PARAMS.fill(0);
  PARAMS[0] = n;
  PARAMS[1] = ba.elemOffset;
  PARAMS[2] = bb.elemOffset;
  PARAMS[3] = dst.elemOffset;
  PARAMS[4] = gx * ELEMENTWISE_WG;
  // Outermost first, padded with size-1 dimensions; the outermost size is implied by n.
  for (let k = 0; k < BROADCAST_RANK; k++) {
    const j = BROADCAST_RANK - 1 - k;
    if (k > 0) PARAMS[4 + k] = dims[j] ?? 1;
    PARAMS[8 + k] = aStrides[j] ?? 0;
    PARAMS[12 + k] = bStrides[j] ?? 0;
  }
  dispatchFixed(state, pipe, [ba.binding, bb.binding, dst.binding], 16, gx, gy);
  dst.finish();
  return out;
}

function reduce(be, kind, a, axis, out, spec) {
  const { state, dtype, name } = prepare(be, kind, [a, axis], out, spec);
  const shape = a.shape;
  const ax = normalizeAxis(name, axis, shape.length);
  const outer = ax === null ? 1 : numel(shape.slice(0, ax));
  let r = ax === null ? numel(shape) : shape[ax];
  const inner = ax === null ? 1 : numel(shape.slice(ax + 1));
  const outputs = outer * inner;
  if (outputs === 0) return out;
  const f32 = DTYPES.float32;
  let src = bindTensor(be, state, a, numel(shape), dtype, name);
  const dst = target(be, state, out, [a], outputs, dtype, name);
  let srcType = dtype;
  let partials = null; // the scratch buffer src reads, destroyed after its last reader
  // Few outputs over a long axis: first reduce chunks in parallel into f32
  // partials [outer, chunks, inner], until one workgroup per output is enough.
  while (r > REDUCE_CHUNK && outputs < MIN_PARALLEL_OUTPUTS) {
    const chunks = Math.ceil(r / REDUCE_CHUNK);
    const nbytes = outputs * chunks * 4;
    const buffer = scratch(state, nbytes);
    const next = { binding: storage(buffer, 0, Math.max(4, nbytes)), elemOffset: 0 };
    const pipe = pipeline(state, KERNEL_IDS[`${kind}Partial`], 1, srcType, f32, (ti) => reduceWGSL(kind, ti, 'f32'));
    reducePass(be, state, pipe, src, next, outer, r, inner, REDUCE_CHUNK, chunks, name);
    if (partials) state.batch.destroyAfterSubmit(partials);
    partials = buffer;
    src = next;
    srcType = f32;
    r = chunks;
  }
  const pipe = pipeline(state, KERNEL_IDS[kind], 1, srcType, dtype, (ti, to) => reduceWGSL(kind, ti, to));
  reducePass(be, state, pipe, src, dst, outer, r, inner, Math.max(r, 1), 1, name);
  if (partials) state.batch.destroyAfterSubmit(partials);
  dst.finish();
  return out;
}

function reducePass(be, state, pipe, src, dst, outer, r, inner, chunk, chunks, name) {
  const [gx, gy] = grid(be, state, outer * chunks * inner, name);
  const w = state.batch.reserveParams();
  const u32 = state.batch.u32;
  u32[w] = outer;
  u32[w + 1] = r;
  u32[w + 2] = inner;
  u32[w + 3] = chunk;
  u32[w + 4] = chunks;
  u32[w + 5] = src.elemOffset;
  u32[w + 6] = dst.elemOffset;
  u32[w + 7] = gx;
  u32[w + 8] = NEG_INF_BITS;
  dispatch(state, pipe, [src.binding, dst.binding], gx, gy);
}

/**
 * The kernels as backend methods: backend[method](...args, out, spec?),
 * where `spec` (optional) is KERNELS[].output(...args), already checked.
 */
export const kernelMethods = {
  ...Object.fromEntries(Object.entries(BINARY).flatMap(([method, op]) => [
    [method, function (a, b, out, spec) { return elementwise(this, method, op, a, b, 0, out, spec); }],
    [`${method}Scalar`, function (a, scalar, out, spec) { return elementwise(this, `${method}Scalar`, op, a, null, scalar, out, spec); }],
  ])),

  matmul(a, b, out, spec) {
    const { state, dtype, name } = prepare(this, 'matmul', [a, b], out, spec);
    const [M, K] = a.shape;
    const N = b.shape[1];
    if (M * N === 0) return out;
    const ba = bindTensor(this, state, a, M * K, dtype, name);
    const bb = bindTensor(this, state, b, K * N, dtype, name);
    const dst = target(this, state, out, [a, b], M * N, dtype, name);
    const gx = Math.ceil(N / MATMUL_TILE);
    const gy = Math.ceil(M / MATMUL_TILE);
    const maxDim = state.limits.maxComputeWorkgroupsPerDimension;
    if (gx > maxDim || gy > maxDim) throw this._error('ValueError', `${name}: ${M}x${N} output is too large for one dispatch`);
    const pipe = pipeline(state, KERNEL_IDS.matmul, 2, dtype, dtype, matmulWGSL, true);
    PARAMS[0] = M;
    PARAMS[1] = K;
    PARAMS[2] = N;
    PARAMS[3] = ba.elemOffset;
    PARAMS[4] = bb.elemOffset;
    PARAMS[5] = dst.elemOffset;
    dispatchFixed(state, pipe, [ba.binding, bb.binding, dst.binding], 6, gx, gy);
    dst.finish();
    return out;
  },

  sum(a, axis, out, spec) {
    return reduce(this, 'sum', a, axis, out, spec);
  },

  max(a, axis, out, spec) {
    return reduce(this, 'max', a, axis, out, spec);
  },

  softmax(a, out, spec) {
    const { state, dtype, name } = prepare(this, 'softmax', [a], out, spec);
    const cols = a.shape[a.shape.length - 1];
    const count = numel(a.shape);
    if (count === 0) return out;
    const rows = count / cols;
    const src = bindTensor(this, state, a, count, dtype, name);
    const dst = target(this, state, out, [a], count, dtype, name);
    const [gx, gy] = grid(this, state, rows, name);
    const pipe = pipeline(state, KERNEL_IDS.softmax, 1, dtype, dtype, softmaxWGSL, true);
    PARAMS[0] = rows;
    PARAMS[1] = cols;
    PARAMS[2] = src.elemOffset;
    PARAMS[3] = dst.elemOffset;
    PARAMS[4] = gx;
    PARAMS[5] = NEG_INF_BITS;
    dispatchFixed(state, pipe, [src.binding, dst.binding], 6, gx, gy);
    dst.finish();
    return out;
  },
};
