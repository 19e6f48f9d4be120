// Running model libraries TVM compiled (MLC/web-llm) on a webffi runtime:
// parameters from web-llm's tensor cache, the library's WebGPU pipelines
// compiled ahead, and the Relax VM's steps as plain calls. Everything here
// is ordinary webffi code over the library's own globals; the steps can be
// called by hand too (docs/model-libraries.md).
import { makeError } from './errors.js';
import { optionsOf, describe } from './runtime/checks.js';
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

/** The bytes at url: fetched, or read from the file system for file: URLs in Node. */
async function readURL(url, signal) {
  if (url.protocol === 'file:' && isNode()) {
    try {
      return new Uint8Array(await nodeModule('node:fs/promises').readFile(url, { signal }));
    } catch (e) {
      if (e?.code === 'ENOENT') throw makeError('ValueError', `tensor cache: ${url.href} does not exist`);
      throw e;
    }
  }
  const response = await fetch(url, { signal });
  if (!response.ok) throw makeError('ValueError', `tensor cache: cannot fetch ${url.href}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** A shard store: where fetched shards are kept between visits. */
function openCache(option) {
  if (option === false || option === 'none') return null;
  if (option && typeof option === 'object' && option.dir !== undefined) {
    if (!isNode()) throw makeError('ValueError', 'tensor cache: cache.dir needs Node (a directory on disk)');
    const fs = nodeModule('node:fs/promises');
    const path = nodeModule('node:path');
    const file = (url) => path.join(String(option.dir), encodeURIComponent(url.href));
    return {
      async get(url) {
        try {
          return new Uint8Array(await fs.readFile(file(url)));
        } catch {
          return null;
        }
      },
      async put(url, bytes) {
        await fs.mkdir(String(option.dir), { recursive: true });
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
    async get(url) {
      opened ??= caches.open(name);
      const hit = await (await opened).match(url.href);
      return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
    },
    async put(url, bytes) {
      opened ??= caches.open(name);
      await (await opened).put(url.href, new Response(bytes));
    },
  };
}

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/** Checks web-llm's tensor-cache.json; returns its shards with their records. */
function checkIndex(index) {
  if (!index || typeof index !== 'object' || !Array.isArray(index.records)) {
    throw makeError('ValueError', 'tensor cache: the index has no `records` list (expected tensor-cache.json or ndarray-cache.json)');
  }
  const names = new Set();
  index.records.forEach((shard, s) => {
    const where = `tensor cache: shard ${s}`;
    if (!shard || typeof shard.dataPath !== 'string' || !shard.dataPath) throw makeError('ValueError', `${where} has no dataPath`);
    if (!isCount(shard.nbytes)) throw makeError('ValueError', `${where} (${shard.dataPath}) has an invalid nbytes ${describe(shard.nbytes)}`);
    if (!Array.isArray(shard.records)) throw makeError('ValueError', `${where} (${shard.dataPath}) has no records`);
    for (const r of shard.records) {
      const at = `${where} (${shard.dataPath}), record ${r?.name ?? '?'}`;
      if (!r || typeof r.name !== 'string') throw makeError('ValueError', `${where} (${shard.dataPath}) has a record without a name`);
      if (names.has(r.name)) throw makeError('ValueError', `${at}: the name appears twice`);
      names.add(r.name);
      if (!Array.isArray(r.shape) || !r.shape.every(isCount)) throw makeError('ValueError', `${at}: invalid shape ${describe(r.shape)}`);
      const bytes = DTYPE_BYTES[r.dtype];
      if (!bytes) throw makeError('TypeError', `${at}: unsupported dtype ${JSON.stringify(r.dtype)}`);
      if (!isCount(r.byteOffset) || !isCount(r.nbytes)) throw makeError('ValueError', `${at}: invalid byteOffset or nbytes`);
      if (r.byteOffset + r.nbytes > shard.nbytes) {
        throw makeError('ValueError', `${at}: bytes [${r.byteOffset}, ${r.byteOffset + r.nbytes}) lie outside the shard's ${shard.nbytes}`);
      }
      const count = r.shape.reduce((a, b) => a * b, 1);
      const format = r.format ?? 'raw';
      let stored;
      if (format === 'raw') stored = count * bytes;
      else if (format === 'f32-to-bf16' && r.dtype === 'float32') stored = count * 2;
      else throw makeError('ValueError', `${at}: unsupported format ${JSON.stringify(format)} for dtype ${r.dtype} (supported: raw, f32-to-bf16 for float32)`);
      if (stored !== r.nbytes) throw makeError('ValueError', `${at}: ${r.nbytes} bytes stored, its shape and format need ${stored}`);
    }
  });
  return index.records;
}

/** The bytes a record holds, as its dtype's bytes (bf16 widened to float32). */
function decodeRecord(bytes, r) {
  const stored = bytes.subarray(r.byteOffset, r.byteOffset + r.nbytes);
  if ((r.format ?? 'raw') === 'raw') return stored;
  const n = r.nbytes / 2;
  const out = new Uint32Array(n);
  const dv = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  for (let i = 0; i < n; i++) out[i] = dv.getUint16(2 * i, true) << 16;
  return new Uint8Array(out.buffer);
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

  let index;
  let shardBytes; // dataPath -> bytes, or null to fetch
  let base = null;
  if (typeof source === 'string' || source instanceof URL) {
    base = toBaseURL(source);
    let text;
    try {
      text = await readURL(new URL('tensor-cache.json', base), opts.signal);
    } catch (e) {
      if (e?.kind !== 'ValueError') throw e;
      text = await readURL(new URL('ndarray-cache.json', base), opts.signal); // web-llm's older name
    }
    index = parseIndex(new TextDecoder().decode(text));
    shardBytes = null;
  } else if (source && typeof source === 'object' && 'index' in source) {
    index = typeof source.index === 'string' ? parseIndex(source.index) : source.index;
    shardBytes = source.shards ?? {};
  } else {
    throw makeError('TypeError', `loadTensorCache: source must be a URL or { index, shards }, got ${describe(source)}`);
  }
  const shards = checkIndex(index);
  const cache = base ? openCache(opts.cache) : null;
  const totalBytes = shards.reduce((a, s) => a + s.nbytes, 0);
  const totalRecords = shards.reduce((a, s) => a + s.records.length, 0);
  const progress = { loadedBytes: 0, totalBytes, loadedRecords: 0, totalRecords, loadedShards: 0, totalShards: shards.length };
  const report = () => onProgress?.({ ...progress });
  report();

  const made = []; // [name, tensor]
  const upload = device.deviceType === CPU ? null : rt.backends.deviceFor(device.deviceType);

  async function shardOf(shard) {
    if (!base) {
      const b = shardBytes[shard.dataPath];
      if (b === undefined) throw makeError('ValueError', `tensor cache: shard ${shard.dataPath} is missing`);
      return ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
    }
    const url = new URL(shard.dataPath, base);
    let bytes = await cache?.get(url);
    if (bytes && bytes.byteLength !== shard.nbytes) bytes = null; // a stale entry: fetch again
    if (!bytes) {
      bytes = await readURL(url, opts.signal);
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
      if (upload) {
        upload.upload(t.dataPtr, t.byteOffset, data);
      } else {
        new Uint8Array(rt.exports.memory.buffer, t.dataPtr + t.byteOffset, data.byteLength).set(data);
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
        const shard = shards[next++];
        place(shard, await shardOf(shard));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, shards.length) }, worker));
    const update = rt.getGlobal('vm.builtin.tensor_cache.update');
    const added = [];
    try {
      for (const [name, t] of made) {
        update(name, t, opts.override === true);
        added.push(name);
      }
    } catch (e) {
      const remove = rt.getGlobal('vm.builtin.tensor_cache.remove');
      for (const name of added) remove(name);
      throw e;
    }
    return { names: made.map(([name]) => name), records: made.length, bytes: totalBytes, metadata: index.metadata ?? {} };
  } finally {
    for (const [, t] of made) t.dispose(); // the cache holds its own references
  }
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
 * library, its WebGPU pipelines compiled ahead (with progress), the VM
 * initialised for `device` with TVM's pooled allocators, and `_metadata`.
 */
export class RelaxVM {
  /**
   * @param {object} rt a runtime over a tvm-ffi model library
   * @param {object} [options] { device = 'webgpu', onProgress({ compiled, total }), pipelines = true }
   */
  static async create(rt, options) {
    const opts = optionsOf(options, 'RelaxVM.create');
    if (rt.coreKind !== 'tvm-ffi') throw makeError('TypeError', 'RelaxVM.create: the runtime must run a model library (load({ wasm: library }))');
    const device = rt.device(opts.device ?? 'webgpu');
    if (device.deviceType !== CPU) await rt.backends.ensure(device);
    const executable = rt.scope(() => rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')());
    try {
      if (device.deviceType !== CPU) {
        const gpu = rt.backends.get('webgpu')?.engine?.device;
        const missing = gpu ? missingNeeds(gpu, libraryNeeds(executable)) : [];
        if (missing.length) throw makeError('RuntimeError', `this library needs more than the WebGPU device offers: ${missing.join(', ')}`);
        if (opts.pipelines !== false) await compilePipelines(rt, executable, opts.onProgress);
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
