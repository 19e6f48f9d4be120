// Running model libraries TVM compiled (MLC/web-llm) on a webffi runtime:
// parameters from web-llm's tensor cache, the library's WebGPU pipelines
// compiled ahead, and the Relax VM's steps as plain calls. Everything here
// is ordinary webffi code over the library's own globals; the steps can be
// called by hand too (docs/model-libraries.md).
import { makeError } from './errors.js';
import { optionsOf, describe } from './runtime/checks.js';
import { typedArrayParts, arrayBufferLength } from './buffers.js';
import { combineNeeds, missingNeeds, shaderNeeds } from './backends/webgpu/tvm_shaders.js';

const CPU = 1;
// TVM's VM allocator kinds: the pooled allocator for the device and the host.
const POOLED = 2;
const CACHE_NAME = 'webffi-tensor-cache';
const DTYPE_BYTES = {
  float32: 4, float16: 2, bfloat16: 2, float64: 8, int8: 1, int16: 2, int32: 4, int64: 8,
  uint8: 1, uint16: 2, uint32: 4, uint64: 8, bool: 1,
};
// float8 kinds, one byte each
for (const k of ['float8_e4m3fn', 'float8_e5m2', 'float8_e4m3', 'float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e8m0fnu']) DTYPE_BYTES[k] = 1;

const isNode = () => typeof globalThis.process?.getBuiltinModule === 'function';
const nodeModule = (name) => globalThis.process.getBuiltinModule(name);

/** The most bytes a tensor cache's index (tensor-cache.json) may have. */
const INDEX_LIMIT = 64 << 20;

/** The error for bytes that go on past what was declared (read no further). */
const tooLong = (what, limit) => makeError('ValueError', `tensor cache: ${what} has more than the ${limit} bytes ${what.startsWith('shard') ? 'the index says' : 'an index may have'}`);

/** What a failed read of a file: URL says, as webffi's error (Node's codes named, never rethrown raw). */
function fileError(e, url) {
  if (e?.name === 'AbortError' || e?.kind) return e;
  const why = {
    ENOENT: 'does not exist',
    ENOTDIR: 'does not exist (a part of its path is not a directory)',
    EISDIR: 'is a directory, not a file',
    ENAMETOOLONG: 'cannot be read: its path is too long for the file system',
    EACCES: 'cannot be read: permission denied',
    EPERM: 'cannot be read: permission denied',
    ELOOP: 'cannot be read: too many symbolic links',
  }[e?.code] ?? `cannot be read (${e?.code ?? e?.message ?? e})`;
  const error = makeError('ValueError', `tensor cache: ${url.href} ${why}`);
  if (e?.code === 'ENOENT' || e?.code === 'ENOTDIR') error[MISSING] = true;
  return error;
}
const MISSING = Symbol('missing');

/**
 * A regular file's bytes, at most `limit` of them (a file: URL in Node):
 * anything else (a directory, a device such as /dev/zero, a pipe) is
 * refused before a byte is read, and a file over the limit too.
 */
async function readFileBounded(url, limit, what, signal) {
  const fs = nodeModule('node:fs/promises');
  const { O_RDONLY, O_NONBLOCK = 0 } = nodeModule('node:fs').constants;
  let handle;
  try {
    signal?.throwIfAborted();
    handle = await fs.open(url, O_RDONLY | O_NONBLOCK); // a pipe must not block the open
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    if (!stat.isFile()) throw makeError('ValueError', `tensor cache: ${url.href} is not a regular file`);
    if (stat.size > limit) throw tooLong(what, limit);
    const bytes = new Uint8Array(stat.size); // a file that grows meanwhile is read to its size then
    let at = 0;
    while (at < bytes.length) {
      signal?.throwIfAborted();
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === bytes.length ? bytes : bytes.subarray(0, at);
  } catch (e) {
    throw fileError(e, url);
  } finally {
    await handle?.close();
  }
}

/**
 * A response's body, at most `limit` bytes: a declared length over it is
 * refused before the body is read, and the body is counted while it
 * streams (the read stops at the first byte past the limit).
 */
async function readResponse(response, limit, what) {
  const declared = response.headers?.get?.('content-length');
  if (declared !== null && declared !== undefined && Number(declared) > limit) {
    await response.body?.cancel().catch(() => {});
    throw tooLong(what, limit);
  }
  if (!response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLong(what, limit);
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLong(what, limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/**
 * The bytes at url, at most `limit` (`what` names them in errors): fetched,
 * or read from the file system for file: URLs in Node. Resolves to null for
 * a file or page that is not there when `optional`.
 */
async function readURL(url, limit, what, signal, optional = false) {
  if (url.protocol === 'file:' && isNode()) {
    try {
      return await readFileBounded(url, limit, what, signal);
    } catch (e) {
      if (optional && e[MISSING]) return null;
      throw e;
    }
  }
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    if (e?.name === 'AbortError' || e?.name === 'TimeoutError') throw e;
    throw makeError('ValueError', `tensor cache: cannot fetch ${url.href} (${e?.cause?.code ?? e?.cause?.message ?? e?.message ?? e})`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    if (optional && response.status === 404) return null;
    throw makeError('ValueError', `tensor cache: cannot fetch ${url.href}: HTTP ${response.status}`);
  }
  return readResponse(response, limit, what);
}

/**
 * Where a shard is: its dataPath resolved against the index's base, which
 * must stay where the index is (the same origin; for a file: index, a
 * file: URL). An index fetched over http cannot send the reader to a local
 * file, another server or another scheme.
 */
function shardURL(base, dataPath) {
  let url;
  try {
    url = new URL(dataPath, base);
  } catch {
    throw makeError('ValueError', `tensor cache: shard ${JSON.stringify(dataPath)} is not a URL path`);
  }
  const same = base.protocol === 'file:' ? url.protocol === 'file:' : url.protocol === base.protocol && url.origin === base.origin;
  if (!same) {
    throw makeError('ValueError',
      `tensor cache: shard ${JSON.stringify(dataPath)} resolves to ${url.href}, outside the index's origin (${base.protocol === 'file:' ? 'file:' : base.origin}); shards are read only from where the index is`);
  }
  return url;
}

/** A shard store: where fetched shards are kept between visits. */
function openCache(option) {
  if (option === false || option === 'none') return null;
  if (option && typeof option === 'object' && option.dir !== undefined) {
    if (!isNode()) throw makeError('ValueError', 'tensor cache: cache.dir needs Node (a directory on disk)');
    const fs = nodeModule('node:fs/promises');
    const path = nodeModule('node:path');
    const { pathToFileURL } = nodeModule('node:url');
    const dir = String(option.dir);
    // Named by a digest of the URL: any dataPath gives a short, valid file name.
    const file = (url) => path.join(dir, `${nodeModule('node:crypto').createHash('sha256').update(url.href).digest('hex')}.bin`);
    return {
      async get(url, nbytes) {
        try {
          return await readFileBounded(pathToFileURL(file(url)), nbytes, 'a cached shard');
        } catch {
          return null; // absent or stale: fetched again
        }
      },
      async put(url, bytes) {
        await fs.mkdir(dir, { recursive: true });
        const tmp = `${file(url)}.${Math.random().toString(36).slice(2)}.tmp`;
        await fs.writeFile(tmp, bytes);
        await fs.rename(tmp, file(url)); // whole or absent: never a torn shard
      },
    };
  }
  const name = typeof option === 'string' && option !== 'cache-api' ? option : CACHE_NAME;
  if (option === undefined && typeof globalThis.caches === 'undefined') return null;
  if (typeof globalThis.caches === 'undefined') throw makeError('ValueError', 'tensor cache: the Cache API is not available here');
  let opened = null;
  return {
    async get(url, nbytes) {
      opened ??= caches.open(name);
      const hit = await (await opened).match(url.href);
      if (!hit) return null;
      try {
        return await readResponse(hit, nbytes, 'a cached shard');
      } catch {
        return null;
      }
    },
    async put(url, bytes) {
      opened ??= caches.open(name);
      await (await opened).put(url.href, new Response(bytes));
    },
  };
}

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/** A caller's list, read once: its length, then each element once. */
function listOf(v) {
  if (!Array.isArray(v)) return null;
  const n = v.length;
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = v[i];
  return out;
}

/**
 * Checks web-llm's tensor-cache.json and returns a snapshot of it: every
 * field is read once from the caller's objects, checked, and kept in
 * frozen objects of our own, so nothing the caller changes later (a getter,
 * onProgress, another task) reaches what is allocated and copied.
 * @returns {{ shards: object[], metadata: object }}
 */
function snapshotIndex(index) {
  const shardList = index && typeof index === 'object' ? listOf(index.records) : null;
  if (!shardList) {
    throw makeError('ValueError', 'tensor cache: the index has no `records` list (expected tensor-cache.json or ndarray-cache.json)');
  }
  const metadata = index.metadata ?? {};
  const names = new Set();
  const shards = shardList.map((shard, s) => {
    const where = `tensor cache: shard ${s}`;
    const dataPath = shard && typeof shard === 'object' ? shard.dataPath : undefined;
    if (typeof dataPath !== 'string' || !dataPath) throw makeError('ValueError', `${where} has no dataPath`);
    const shardBytes = shard.nbytes;
    if (!isCount(shardBytes)) throw makeError('ValueError', `${where} (${dataPath}) has an invalid nbytes ${describe(shardBytes)}`);
    const recordList = listOf(shard.records);
    if (!recordList) throw makeError('ValueError', `${where} (${dataPath}) has no records`);
    const records = recordList.map((r) => {
      const name = r && typeof r === 'object' ? r.name : undefined;
      if (typeof name !== 'string') throw makeError('ValueError', `${where} (${dataPath}) has a record without a name`);
      const at = `${where} (${dataPath}), record ${name}`;
      if (names.has(name)) throw makeError('ValueError', `${at}: the name appears twice`);
      names.add(name);
      const shape = listOf(r.shape);
      if (!shape || !shape.every(isCount)) throw makeError('ValueError', `${at}: invalid shape ${describe(r.shape)}`);
      const dtype = r.dtype;
      const bytes = typeof dtype === 'string' && Object.hasOwn(DTYPE_BYTES, dtype) ? DTYPE_BYTES[dtype] : 0;
      if (!bytes) throw makeError('TypeError', `${at}: unsupported dtype ${typeof dtype === 'string' ? JSON.stringify(dtype) : describe(dtype)}`);
      const byteOffset = r.byteOffset;
      const nbytes = r.nbytes;
      if (!isCount(byteOffset) || !isCount(nbytes)) throw makeError('ValueError', `${at}: invalid byteOffset or nbytes`);
      if (byteOffset + nbytes > shardBytes) {
        throw makeError('ValueError', `${at}: bytes [${byteOffset}, ${byteOffset + nbytes}) lie outside the shard's ${shardBytes}`);
      }
      const count = shape.reduce((a, b) => a * b, 1);
      const format = r.format ?? 'raw';
      let stored;
      if (format === 'raw') stored = count * bytes;
      else if (format === 'f32-to-bf16' && dtype === 'float32') stored = count * 2;
      else throw makeError('ValueError', `${at}: unsupported format ${typeof format === 'string' ? JSON.stringify(format) : describe(format)} for dtype ${dtype} (supported: raw, f32-to-bf16 for float32)`);
      if (stored !== nbytes) throw makeError('ValueError', `${at}: ${nbytes} bytes stored, its shape and format need ${stored}`);
      return Object.freeze({ name, shape: Object.freeze(shape), dtype, byteOffset, nbytes, format, tensorBytes: count * bytes });
    });
    return Object.freeze({ dataPath, nbytes: shardBytes, records: Object.freeze(records) });
  });
  return { shards, metadata };
}

/** The bytes a record holds, as its dtype's bytes (bf16 widened to float32). */
function decodeRecord(bytes, r) {
  const stored = bytes.subarray(r.byteOffset, r.byteOffset + r.nbytes);
  if (r.format === 'raw') return stored;
  const n = r.nbytes / 2;
  const out = new Uint32Array(n);
  const dv = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  for (let i = 0; i < n; i++) out[i] = dv.getUint16(2 * i, true) << 16;
  return new Uint8Array(out.buffer);
}

/**
 * Refuses, before anything is read or allocated, a record whose name the
 * cache already holds: without `override` (the library's own refusal
 * aborts its call and keeps the tensor passed to it), and with `override`
 * when the shape or dtype differ (the library copies into the tensor it
 * has). A core without `vm.builtin.tensor_cache.get` is not asked.
 */
function checkCached(rt, shards, override) {
  const get = rt.getGlobal('vm.builtin.tensor_cache.get', { optional: true });
  if (!get) return;
  for (const shard of shards) {
    for (const r of shard.records) {
      const held = get(r.name);
      if (held === null || held === undefined) continue;
      try {
        if (!override) {
          throw makeError('ValueError', `tensor cache: ${r.name} is already in the cache (pass override: true to replace the cached tensors)`);
        }
        const shape = held.shape;
        if (String(held.dtype) !== r.dtype || shape.length !== r.shape.length || shape.some((d, i) => d !== r.shape[i])) {
          throw makeError('ValueError',
            `tensor cache: ${r.name} is cached as ${held.dtype}[${shape}]; override copies into it, and the record is ${r.dtype}[${r.shape}]`);
        }
      } finally {
        held.dispose?.();
      }
    }
  }
}

/**
 * Loads web-llm's tensor cache into the library's `vm.builtin.tensor_cache`:
 * every record becomes a tensor on `device`, added under its name once all
 * shards have arrived (on any failure nothing is added and the tensors made
 * so far are released).
 * @param {object} rt a runtime over a tvm-ffi library
 * @param {string|URL|{ index: object|string, shards: Record<string, ArrayBuffer|ArrayBufferView> }} source
 *   the base URL of tensor-cache.json (or ndarray-cache.json) and its shards,
 *   or the index and the shards' bytes by dataPath
 * @param {object} [options] { device = 'webgpu', onProgress, concurrency = 4,
 *   cache (browser: the Cache API by default; Node: { dir }), override, signal }
 * @returns {Promise<{ names: string[], records: number, bytes: number, metadata: object }>}
 */
export async function loadTensorCache(rt, source, options) {
  const opts = optionsOf(options, 'loadTensorCache');
  const device = rt.device(opts.device ?? 'webgpu');
  if (device.deviceType !== CPU) await rt.backends.ensure(device);
  const concurrency = opts.concurrency ?? 4;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw makeError('ValueError', `loadTensorCache: concurrency must be a positive integer, got ${describe(concurrency)}`);
  const onProgress = opts.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') throw makeError('TypeError', 'loadTensorCache: onProgress must be a function');
  const override = opts.override === true;
  const signal = opts.signal;

  let index;
  let shardBytes; // dataPath -> bytes, or null to fetch
  let base = null;
  if (typeof source === 'string' || source instanceof URL) {
    base = toBaseURL(source);
    index = parseIndex(new TextDecoder().decode(await readIndex(base, signal)));
    shardBytes = null;
  } else if (source && typeof source === 'object' && 'index' in source) {
    const given = source.index;
    index = typeof given === 'string' ? parseIndex(given) : given;
    shardBytes = source.shards ?? {};
  } else {
    throw makeError('TypeError', `loadTensorCache: source must be a URL or { index, shards }, got ${describe(source)}`);
  }
  const { shards, metadata } = snapshotIndex(index);
  const urls = base ? shards.map((s) => shardURL(base, s.dataPath)) : null;
  checkCached(rt, shards, override);
  const cache = base ? openCache(opts.cache) : null;
  const totalBytes = shards.reduce((a, s) => a + s.nbytes, 0);
  const totalRecords = shards.reduce((a, s) => a + s.records.length, 0);
  const progress = { loadedBytes: 0, totalBytes, loadedRecords: 0, totalRecords, loadedShards: 0, totalShards: shards.length };
  const report = () => onProgress?.({ ...progress });
  report();

  const made = []; // [name, tensor]
  const upload = device.deviceType === CPU ? null : rt.backends.deviceFor(device.deviceType);

  async function shardOf(s) {
    const shard = shards[s];
    if (!base) {
      const b = shardBytes[shard.dataPath];
      if (b === undefined) throw makeError('ValueError', `tensor cache: shard ${shard.dataPath} is missing`);
      if (ArrayBuffer.isView(b)) {
        const { buffer, byteOffset, byteLength } = typedArrayParts(b, `tensor cache: shard ${shard.dataPath}`);
        return new Uint8Array(buffer, byteOffset, byteLength);
      }
      if (b instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && b instanceof SharedArrayBuffer)) {
        arrayBufferLength(b, `tensor cache: shard ${shard.dataPath}`);
        return new Uint8Array(b);
      }
      throw makeError('TypeError', `tensor cache: shard ${shard.dataPath} must be an ArrayBuffer or a typed array, got ${describe(b)}`);
    }
    const url = urls[s];
    let bytes = await cache?.get(url, shard.nbytes);
    if (bytes && bytes.byteLength !== shard.nbytes) bytes = null; // a stale entry: fetch again
    if (!bytes) {
      bytes = await readURL(url, shard.nbytes, `shard ${shard.dataPath}`, signal);
      if (bytes.byteLength === shard.nbytes) await cache?.put(url, bytes);
    }
    return bytes;
  }

  function place(shard, bytes) {
    if (bytes.byteLength !== shard.nbytes) {
      throw makeError('ValueError', `tensor cache: shard ${shard.dataPath} has ${bytes.byteLength} bytes, the index says ${shard.nbytes}`);
    }
    for (const r of shard.records) {
      const data = decodeRecord(bytes, r);
      const t = rt.empty(r.shape, r.dtype, device);
      made.push([r.name, t]);
      if (data.byteLength !== r.tensorBytes || t.nbytes !== r.tensorBytes) {
        throw makeError('InternalError', `tensor cache: ${r.name}: ${data.byteLength} bytes for a tensor of ${t.nbytes}`);
      }
      if (upload) {
        upload.upload(t.dataPtr, t.byteOffset, data);
      } else {
        new Uint8Array(rt.exports.memory.buffer, t.dataPtr + t.byteOffset, r.tensorBytes).set(data);
      }
      progress.loadedRecords++;
    }
    progress.loadedBytes += shard.nbytes;
    progress.loadedShards++;
    report();
  }

  try {
    let next = 0;
    const worker = async () => {
      while (next < shards.length) {
        const s = next++;
        place(shards[s], await shardOf(s));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, shards.length) }, worker));
    // Checked again with nothing awaited before the updates: another load
    // may have added a name while the shards arrived.
    checkCached(rt, shards, override);
    const update = rt.getGlobal('vm.builtin.tensor_cache.update');
    const added = [];
    try {
      for (const [name, t] of made) {
        update(name, t, override);
        added.push(name);
      }
    } catch (e) {
      const remove = rt.getGlobal('vm.builtin.tensor_cache.remove');
      for (const name of added) remove(name);
      throw e;
    }
    return { names: made.map(([name]) => name), records: made.length, bytes: totalBytes, metadata };
  } finally {
    for (const [, t] of made) t.dispose(); // the cache holds its own references
  }
}

/** The names a tensor cache's index goes by: web-llm's, then its older one. */
const INDEX_NAMES = Object.freeze(['tensor-cache.json', 'ndarray-cache.json']);

/** The bytes of the index at base, under the first of INDEX_NAMES that is there; none there names every one looked for. */
async function readIndex(base, signal) {
  for (const name of INDEX_NAMES) {
    const bytes = await readURL(new URL(name, base), INDEX_LIMIT, 'the index', signal, true);
    if (bytes) return bytes;
  }
  throw makeError('ValueError', `tensor cache: no index at ${base.href}: looked for ${INDEX_NAMES.join(' and ')} (neither is there)`);
}

function toBaseURL(source) {
  const text = String(source);
  const withSlash = text.endsWith('/') ? text : `${text}/`;
  if (source instanceof URL || /^[a-z][a-z0-9+.-]*:/i.test(text)) return new URL(withSlash);
  const base = globalThis.location?.href;
  if (base) return new URL(withSlash, base);
  if (isNode()) return nodeModule('node:url').pathToFileURL(withSlash);
  return new URL(withSlash);
}

function parseIndex(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw makeError('ValueError', `tensor cache: the index is not JSON (${e.message})`);
  }
}

/**
 * What every WebGPU kernel of a library needs (workgroup size and
 * invocations, storage buffers, workgroup memory, features), read from
 * its WGSL: the largest of each.
 * @param {object} module the library's executable (or system library) module
 */
export function libraryNeeds(module) {
  const fmap = JSON.parse(module.getFunction('webgpu.get_fmap')());
  const getShader = module.getFunction('webgpu.get_shader');
  try {
    return combineNeeds(Object.keys(fmap).map((name) => shaderNeeds(getShader(name))));
  } finally {
    getShader.dispose();
  }
}

/**
 * The Relax VM of a model library: the executable loaded from the system
 * library, its kernels checked against the device, the VM initialised for
 * `device` with TVM's pooled allocators, and `_metadata`; the WebGPU
 * pipelines compiled as first used, or all ahead with `pipelines: true`.
 */
export class RelaxVM {
  /**
   * @param {object} rt a runtime over a tvm-ffi model library
   * @param {object} [options] { device = 'webgpu', onProgress({ compiled, total }), pipelines = false }
   */
  static async create(rt, options) {
    const opts = optionsOf(options, 'RelaxVM.create');
    if (rt.coreKind !== 'tvm-ffi') throw makeError('TypeError', 'RelaxVM.create: the runtime must run a model library (load({ wasm: library }))');
    if (opts.pipelines !== undefined && typeof opts.pipelines !== 'boolean') {
      throw makeError('TypeError', `RelaxVM.create: pipelines must be true (all compiled ahead) or false (each when first used), got ${describe(opts.pipelines)}`);
    }
    const device = rt.device(opts.device ?? 'webgpu');
    if (device.deviceType !== CPU) await rt.backends.ensure(device);
    const executable = rt.scope(() => rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')());
    try {
      if (device.deviceType !== CPU) {
        const gpu = rt.backends.get('webgpu')?.engine?.device;
        const missing = gpu ? missingNeeds(gpu, libraryNeeds(executable)) : [];
        if (missing.length) throw makeError('RuntimeError', `this library needs more than the WebGPU device offers: ${missing.join(', ')}`);
        // Ahead when asked; by default each kernel's pipeline is compiled
        // when the VM first runs it: a kernel the model never runs costs
        // nothing (Dawn in Node compiles inside createComputePipelineAsync,
        // on the calling thread, so compiling all ahead is all paid before
        // the first call).
        if (opts.pipelines === true) await compilePipelines(rt, executable, opts.onProgress);
      }
      rt.scope(() => executable.getFunction('vm_initialization')(device.deviceType, device.deviceId, POOLED, CPU, 0, POOLED));
      return new RelaxVM(rt, executable, device);
    } catch (e) {
      executable.dispose();
      throw e;
    }
  }

  constructor(rt, executable, device) {
    this.runtime = rt;
    this.executable = executable;
    this.device = device;
    this.functions = new Map();
    /** The library's `_metadata()`, parsed (model type, params with names and shapes, ...). */
    this.metadata = JSON.parse(this.getFunction('_metadata')());
    this.params = null;
  }

  /** The VM function NAME (kept: each lookup is a registry search). */
  getFunction(name) {
    let f = this.functions.get(name);
    if (!f) {
      f = this.executable.getFunction(name);
      if (!f) throw makeError('AttributeError', `the model library has no function ${name}`);
      this.functions.set(name, f);
    }
    return f;
  }

  /**
   * Loads the parameters `_metadata` names from a tensor cache (see
   * loadTensorCache) and returns them as the Array the VM's functions take.
   */
  async loadParams(source, options) {
    await loadTensorCache(this.runtime, source, { device: this.device, ...optionsOf(options, 'loadParams') });
    const names = this.metadata.params.map((p) => p.name);
    this.params?.dispose();
    this.params = this.runtime.scope(() =>
      this.runtime.getGlobal('vm.builtin.param_module_from_cache_by_name')(names).getFunction('get_params')());
    return this.params;
  }

  /** Releases the VM's functions, parameters and executable. */
  dispose() {
    for (const f of this.functions.values()) f.dispose();
    this.functions.clear();
    this.params?.dispose();
    this.params = null;
    this.executable.dispose();
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}

/**
 * Compiles the pipelines of every WebGPU kernel of the library
 * asynchronously (in parallel, as tvmjs's asyncLoadWebGPUPipelines does)
 * and hands them to the library, so no dispatch waits for a compile.
 */
export async function compilePipelines(rt, module, onProgress) {
  const backend = rt.backends.get('webgpu');
  const fmap = JSON.parse(module.getFunction('webgpu.get_fmap')());
  const getShader = module.getFunction('webgpu.get_shader');
  const update = module.getFunction('webgpu.update_prebuild');
  const entries = Object.entries(fmap);
  let compiled = 0;
  try {
    await Promise.all(entries.map(async ([name, info]) => {
      const dispatch = await backend.createShaderAsync(info, getShader(name));
      update(name, dispatch);
      compiled++;
      onProgress?.({ compiled, total: entries.length });
    }));
  } finally {
    getShader.dispose();
    update.dispose();
  }
  return entries.length;
}

/** Deterministic floats in [-0.5, 0.5) from a 32-bit seed (an LCG: the same sequence in every engine). */
export function seededRandom(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

/**
 * Seeded random weights for a library's parameters (its `_metadata().params`),
 * in web-llm's tensor-cache format: norm scales (names ending in
 * `norm.weight`) 1, the rest uniform in [-scale/2, scale/2), packed into
 * shards of at most `shardBytes`; records named in `bf16` stored
 * `f32-to-bf16` (their values rounded down to what bf16 holds). For tests
 * and offline work: the same seed gives the same bytes everywhere.
 * @param {{ name: string, shape: number[], dtype: string }[]} params
 * @param {object} [options] { seed = 42, scale = 0.1, shardBytes = 32 MiB, bf16: Set of names }
 * @returns {{ index: object, shards: Record<string, Uint8Array>, values: Map<string, Float32Array> }}
 */
export function seededTensorCache(params, options) {
  const opts = optionsOf(options, 'seededTensorCache');
  const seed = opts.seed ?? 42;
  const scale = opts.scale ?? 0.1;
  const shardBytes = opts.shardBytes ?? 32 << 20;
  const bf16 = opts.bf16 ?? new Set();
  if (!Number.isSafeInteger(seed)) throw makeError('TypeError', `seededTensorCache: seed must be an integer, got ${describe(seed)}`);
  if (typeof scale !== 'number' || !Number.isFinite(scale)) throw makeError('TypeError', `seededTensorCache: scale must be a finite number, got ${describe(scale)}`);
  if (!Number.isSafeInteger(shardBytes) || shardBytes < 1) throw makeError('ValueError', `seededTensorCache: shardBytes must be a positive integer, got ${describe(shardBytes)}`);
  if (!(bf16 instanceof Set)) throw makeError('TypeError', 'seededTensorCache: bf16 must be a Set of parameter names');
  const list = listOf(params);
  if (!list) throw makeError('TypeError', `seededTensorCache: params must be an Array (the library's _metadata().params), got ${describe(params)}`);
  const next = seededRandom(seed);
  const shards = {};
  const index = { metadata: { ParamSize: list.length, ParamBytes: 0 }, records: [] };
  const values = new Map();
  let current = null;
  const close = () => {
    if (!current) return;
    const bytes = new Uint8Array(current.size);
    let at = 0;
    for (const part of current.parts) {
      bytes.set(part, at);
      at += part.byteLength;
    }
    shards[current.entry.dataPath] = bytes;
    current.entry.nbytes = bytes.byteLength;
    index.records.push(current.entry);
    current = null;
  };
  for (const p of list) {
    const name = p?.name;
    if (typeof name !== 'string' || values.has(name)) throw makeError('ValueError', `seededTensorCache: a parameter without a name, or a name twice: ${describe(name)}`);
    const shape = listOf(p.shape);
    if (!shape || !shape.every(isCount)) throw makeError('ValueError', `seededTensorCache: ${name} has an invalid shape ${describe(p.shape)}`);
    if (p.dtype !== 'float32') throw makeError('ValueError', `seededTensorCache: ${name} is ${p.dtype}; only float32 weights are made (a quantized model's weights must be fetched: webffi model fetch)`);
    const count = shape.reduce((a, b) => a * b, 1);
    if (count > 1 << 28) throw makeError('ValueError', `seededTensorCache: ${name} has ${count} elements, more than one record holds here`);
    const data = new Float32Array(count);
    if (/norm\.weight$/i.test(name)) data.fill(1);
    else for (let i = 0; i < count; i++) data[i] = next() * scale;
    let stored;
    let format = 'raw';
    if (bf16.has(name)) {
      // bfloat16: the high half of each float32 (the values then read back exactly)
      const words = new Uint32Array(data.buffer);
      const half = new Uint16Array(count);
      for (let i = 0; i < count; i++) {
        half[i] = words[i] >>> 16;
        words[i] = half[i] << 16;
      }
      stored = new Uint8Array(half.buffer);
      format = 'f32-to-bf16';
    } else {
      stored = new Uint8Array(data.buffer);
    }
    values.set(name, data);
    if (current && current.size + stored.byteLength > shardBytes) close();
    if (!current) {
      const dataPath = `params_shard_${index.records.length}.bin`;
      current = { entry: { dataPath, format: 'raw-shard', nbytes: 0, records: [] }, parts: [], size: 0 };
    }
    current.entry.records.push({
      name, shape, dtype: 'float32', format, nbytes: stored.byteLength, byteOffset: current.size,
    });
    current.parts.push(stored);
    current.size += stored.byteLength;
    index.metadata.ParamBytes += stored.byteLength;
  }
  close();
  return { index, shards, values };
}

/**
 * The parameters a model library's `_metadata` lists, read on the CPU (no
 * GPU needed): what `seededTensorCache` takes.
 * @param {object} rt a runtime over the library (load({ wasm: library }))
 */
export function libraryParams(rt) {
  if (rt.coreKind !== 'tvm-ffi') throw makeError('TypeError', 'libraryParams: the runtime must run a model library (load({ wasm: library }))');
  return rt.scope(() => {
    const exec = rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')();
    exec.getFunction('vm_initialization')(CPU, 0, POOLED, CPU, 0, POOLED);
    return JSON.parse(exec.getFunction('_metadata')()).params;
  });
}
