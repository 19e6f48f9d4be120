// Types for js/model_library.js: running model libraries TVM compiled
// (MLC/web-llm) on a webffi runtime.
/**
 * Model libraries TVM compiled for the web (MLC/web-llm's `.wasm`, loaded as
 * the core: `load({ wasm: library })`), driven as web-llm drives them, in
 * plain webffi code: the Relax VM (`RelaxVM`), the weights from web-llm's
 * tensor cache (`loadTensorCache`), and the library's WebGPU pipelines
 * compiled ahead (`compilePipelines`, `libraryNeeds`).
 *
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { RelaxVM } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' }); // snowflake-arctic-embed-s, web-llm's library
 * const vm = await RelaxVM.create(rt);              // executable, VM on webgpu:0
 * await vm.loadParams('arctic-s-weights/');          // tensor-cache.json and its shards
 * const ids = rt.empty([1, 4], 'int32', 'webgpu').set(new Int32Array([101, 7592, 2088, 102]));
 * const mask = rt.empty([1, 4], 'int32', 'webgpu').set(new Int32Array([1, 1, 1, 1]));
 * const embeddings = vm.getFunction('prefill')(ids, mask, vm.params);
 * console.log(embeddings.shape, String(embeddings.device));
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 1, 4, 384 ] webgpu:0
 * ```
 * @module webffi/js/model_library
 */

import type { ArrayObject, Device, FFIFunction, ModuleObject, Runtime } from './index.js';

/**
 * The host's type of a global class, or Fallback (as webffi's HostClass).
 * @hidden
 */
type HostClass<Name extends string, Fallback> =
  typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : Fallback;
/**
 * The host's `URL` (as webffi's HostURL).
 * @hidden
 */
type HostURL = HostClass<'URL', { readonly href: string }>;
/**
 * The host's `AbortSignal` (as webffi's HostAbortSignal).
 * @hidden
 */
type HostAbortSignal = HostClass<'AbortSignal', { readonly aborted: boolean; readonly reason: unknown }>;

/**
 * What `loadTensorCache` reports after each shard (and once before the
 * first): bytes, records and shards loaded so far, and their totals.
 *
 * @group Weights
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { loadTensorCache, type TensorCacheProgress } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * const seen: TensorCacheProgress[] = [];
 * await loadTensorCache(rt, 'arctic-s-weights/', { device: 'cpu', onProgress: (p) => seen.push(p) });
 * const last = seen[seen.length - 1];
 * console.log(seen[0].loadedShards, last.loadedShards === last.totalShards, last.loadedBytes === last.totalBytes, last.totalRecords);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 0 true true 149
 * ```
 */
export interface TensorCacheProgress {
  loadedBytes: number;
  totalBytes: number;
  loadedRecords: number;
  totalRecords: number;
  loadedShards: number;
  totalShards: number;
}

/**
 * web-llm's `tensor-cache.json` (or the older `ndarray-cache.json`): shards,
 * each a file of records (a named tensor's shape, dtype, format and bytes).
 *
 * @group Weights
 * @example
 * ```ts
 * import { load } from 'webffi';
 * import { loadTensorCache, type TensorCacheIndex } from 'webffi/js/model_library.js';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const index: TensorCacheIndex = {
 *   metadata: { source: 'by hand' },
 *   records: [{
 *     dataPath: 'params_shard_0.bin', format: 'raw-shard', nbytes: 8,
 *     records: [{ name: 'w', shape: [2], dtype: 'float32', format: 'raw', nbytes: 8, byteOffset: 0 }],
 *   }],
 * };
 * const rt = await load();
 * // a webffi core has no vm.builtin.tensor_cache; give it one to see the tensors arrive
 * const cache = new Map<string, unknown>();
 * rt.registerGlobal('vm.builtin.tensor_cache.update', (name: string, t: any) => { cache.set(name, t.toTypedArray()); });
 * rt.registerGlobal('vm.builtin.tensor_cache.remove', (name: string) => { cache.delete(name); });
 * const shard = new Float32Array([0.5, 1.5]);
 * const result = await loadTensorCache(rt, { index, shards: { 'params_shard_0.bin': shard } }, { device: 'cpu' });
 * console.log(result, cache.get('w'));
 * ```
 * <!-- doc: output -->
 * ```text
 * {
 *   names: [ 'w' ],
 *   records: 1,
 *   bytes: 8,
 *   metadata: { source: 'by hand' }
 * } Float32Array(2) [ 0.5, 1.5 ]
 * ```
 */
export interface TensorCacheIndex {
  metadata?: Record<string, unknown>;
  records: {
    dataPath: string;
    format?: string;
    nbytes: number;
    records: {
      name: string;
      shape: number[];
      dtype: string;
      /** `raw` (default), or `f32-to-bf16` (a float32 tensor stored as bfloat16). */
      format?: string;
      nbytes: number;
      byteOffset: number;
    }[];
  }[];
}

/**
 * Where `loadTensorCache` reads from: the base URL of `tensor-cache.json` and
 * its shards (fetched; a path or `file:` URL in Node is read from disk), or
 * the index and the shards' bytes by dataPath.
 *
 * @group Weights
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { loadTensorCache, type TensorCacheSource } from 'webffi/js/model_library.js';
 * import { readFileSync } from 'node:fs';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * const fromDisk: TensorCacheSource = new URL('./arctic-s-weights/', import.meta.url);
 * const index = JSON.parse(readFileSync('arctic-s-weights/tensor-cache.json', 'utf8'));
 * const shards = Object.fromEntries(index.records.map((s: { dataPath: string }) => [s.dataPath, readFileSync(`arctic-s-weights/${s.dataPath}`)]));
 * const fromBytes: TensorCacheSource = { index, shards };
 * const a = await loadTensorCache(rt, fromDisk, { device: 'cpu' });
 * const b = await loadTensorCache(rt, fromBytes, { device: 'cpu', override: true });
 * console.log(a.records === b.records, a.bytes === b.bytes);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true true
 * ```
 */
export type TensorCacheSource = string | HostURL
  | { index: TensorCacheIndex | string; shards?: Record<string, ArrayBuffer | ArrayBufferView> };

/**
 * What `loadTensorCache` takes: the device the tensors go to, progress, how
 * many shards are fetched at once, where fetched shards are kept, whether a
 * name already in the cache is replaced, and an AbortSignal.
 *
 * @group Weights
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { loadTensorCache, type TensorCacheOptions } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * const options: TensorCacheOptions = {
 *   device: 'webgpu',                 // the default: records go straight from the shard to the GPU
 *   concurrency: 2,                   // shards fetched at once (default 4)
 *   cache: { dir: 'shard-cache' },    // Node: kept on disk; a page: the Cache API by default
 *   signal: AbortSignal.timeout(60000),
 * };
 * console.log((await loadTensorCache(rt, 'arctic-s-weights/', options)).records);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 149
 * ```
 */
export interface TensorCacheOptions {
  /** Where the tensors go (default `'webgpu'`). */
  device?: string | number | Device;
  /** Called before the first shard and after each one. */
  onProgress?: (progress: TensorCacheProgress) => void;
  /** Shards fetched at once (default 4). */
  concurrency?: number;
  /**
   * Where fetched shards are kept between visits: in a page the Cache API
   * (default; a string names the cache), in Node `{ dir }` (default: none);
   * `false` or `'none'`: not kept.
   */
  cache?: false | 'none' | 'cache-api' | string | { dir: string | HostURL };
  /**
   * Replace tensors already in the cache under a name, copying into them
   * (their shape and dtype must match); default: a name already there is a
   * ValueError, raised before anything is read.
   */
  override?: boolean;
  /** Aborts the fetches. */
  signal?: HostAbortSignal;
}

/**
 * Loads web-llm's tensor cache into the library's `vm.builtin.tensor_cache`:
 * every record becomes a tensor on `device`, added under its name once all
 * shards have arrived (on any failure nothing is added and the tensors made
 * so far are released). Records in `raw` and `f32-to-bf16` are read; a
 * missing or short shard, a record whose size does not match its shape, or
 * an unknown format is a ValueError. Resolves with the names added, the
 * record and byte counts, and the index's metadata.
 *
 * The index is read once (each field of each record, then only that
 * snapshot is used: a getter or `onProgress` that changes it later changes
 * nothing). Shards are read from where the index is and no further than it
 * says: a dataPath that resolves to another origin or scheme (an http index
 * naming `file:`, another host or port, `https:`, `data:`) is refused before
 * anything is read; a response is counted while it streams and stops at the
 * first byte past the shard's `nbytes`; a local shard must be a regular file
 * of at most that size (a directory, `/dev/zero` or a pipe is refused);
 * the index itself is at most 64 MiB. A name the cache already holds is
 * refused before anything is read unless `override` is set (then its shape
 * and dtype must match: the library copies into the tensor it holds).
 * Local read failures are webffi's ValueError naming the URL and the reason
 * (missing, a directory, a path too long).
 *
 * @group Weights
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { loadTensorCache } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * const { names, records, bytes } = await loadTensorCache(rt, 'arctic-s-weights/', { device: 'webgpu' });
 * console.log(records, names.length, bytes > 100e6);
 * // the parameters as the Array the VM's functions take (RelaxVM.loadParams does this)
 * const weights = rt.getGlobal('vm.builtin.param_module_from_cache_by_name')(names).getFunction('get_params')();
 * console.log(weights.length);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 149 149 true
 * 149
 * ```
 */
export function loadTensorCache(rt: Runtime, source: TensorCacheSource, options?: TensorCacheOptions):
  Promise<{ names: string[]; records: number; bytes: number; metadata: Record<string, unknown> }>;

/**
 * What a library's WebGPU kernels need of the device, read from their WGSL
 * (`libraryNeeds`): the largest workgroup size and invocations, storage
 * buffers per stage and workgroup memory, and the features (`shader-f16`,
 * `subgroups`). Named as the device's limits are.
 *
 * @group WebGPU pipelines
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { libraryNeeds, type ShaderNeeds } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * const executable = rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')();
 * const needs: ShaderNeeds = libraryNeeds(executable);
 * console.log(needs.maxComputeInvocationsPerWorkgroup <= 256, needs.features);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true []
 * ```
 */
export interface ShaderNeeds {
  maxComputeWorkgroupSizeX: number;
  maxComputeWorkgroupSizeY: number;
  maxComputeWorkgroupSizeZ: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxStorageBuffersPerShaderStage: number;
  maxComputeWorkgroupStorageSize: number;
  /** GPU features the WGSL enables (`shader-f16`, `subgroups`). */
  features: string[];
}

/**
 * What every WebGPU kernel of a library needs (workgroup size and
 * invocations, storage buffers, workgroup memory, features), read from its
 * WGSL: the largest of each. `RelaxVM.create` compares it with the device's
 * limits and refuses a library that needs more, naming the limit, before
 * any dispatch.
 *
 * @group WebGPU pipelines
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { libraryNeeds } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * const executable = rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')();
 * const needs = libraryNeeds(executable); // compare with an adapter's limits before asking for a device
 * console.log(needs);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * {
 *   features: [],
 *   maxComputeWorkgroupSizeX: 256,
 *   maxComputeWorkgroupSizeY: 8,
 *   maxComputeWorkgroupSizeZ: 1,
 *   maxComputeInvocationsPerWorkgroup: 256,
 *   maxStorageBuffersPerShaderStage: 6,
 *   maxComputeWorkgroupStorageSize: 6336
 * }
 * ```
 */
export function libraryNeeds(module: ModuleObject): ShaderNeeds;

/**
 * What `RelaxVM.create` takes: the device, whether to compile every
 * pipeline ahead, and progress while they compile.
 *
 * @group Relax VM
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { RelaxVM, type RelaxVMOptions } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * let last = { compiled: 0, total: 0 };
 * const options: RelaxVMOptions = { device: 'webgpu', pipelines: true, onProgress: (p) => { last = p; } };
 * const vm = await RelaxVM.create(rt, options);
 * console.log(last.compiled === last.total && last.total > 0, String(vm.device));
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true webgpu:0
 * ```
 */
export interface RelaxVMOptions {
  /** Where the VM runs (default `'webgpu'`). */
  device?: string | number | Device;
  /** Called as the WebGPU pipelines compile ahead (`pipelines: true`). */
  onProgress?: (progress: { compiled: number; total: number }) => void;
  /**
   * true: compile every kernel's pipeline before `create` resolves (as
   * tvmjs's asyncLoadWebGPUPipelines does; no dispatch then waits for a
   * compile). false (the default): each when the VM first runs it, so a
   * kernel the model never runs never costs its compile, and the VM is
   * ready sooner.
   */
  pipelines?: boolean;
}

/**
 * The Relax VM of a model library: the executable loaded from the system
 * library, its kernels checked against the device, the VM initialised for
 * `device` with TVM's pooled allocators, and `_metadata`; its WebGPU
 * pipelines compiled as first used (or all ahead: `pipelines: true`).
 * Its functions (`prefill`, `decode`, `embed`, ... as the model has them)
 * are plain FFI functions.
 *
 * @group Relax VM
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { RelaxVM } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * {
 *   using vm = await RelaxVM.create(rt);
 *   console.log(vm.metadata.model_type, vm.metadata.params.length, 'parameters');
 *   const params = await vm.loadParams('arctic-s-weights/');
 *   const ids = rt.empty([1, 2], 'int32', 'webgpu').set(new Int32Array([101, 102]));
 *   const mask = rt.empty([1, 2], 'int32', 'webgpu').set(new Int32Array([1, 1]));
 *   console.log(vm.getFunction('prefill')(ids, mask, params).shape);
 * } // the VM's functions, parameters and executable released
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * bert 149 parameters
 * [ 1, 2, 384 ]
 * ```
 */
export class RelaxVM implements Disposable {
  /**
   * Loads the executable, checks the device can run every kernel, compiles
   * the pipelines ahead with `pipelines: true` and initialises the VM. The
   * runtime must run a model library (a TypeError otherwise).
   */
  static create(rt: Runtime, options?: RelaxVMOptions): Promise<RelaxVM>;
  /** Use RelaxVM.create. */
  protected constructor(rt: Runtime, executable: ModuleObject, device: Device);
  /** The runtime over the library. */
  readonly runtime: Runtime;
  /** The VM executable (`vm_load_executable()`). */
  readonly executable: ModuleObject;
  /** Where the VM runs. */
  readonly device: Device;
  /** The library's `_metadata()`, parsed (model type, params with names and shapes, ...). */
  readonly metadata: any;
  /** The parameters `loadParams` loaded, as the Array the VM's functions take; null before. */
  params: ArrayObject | null;
  /** The VM function NAME (kept: each lookup is a registry search); missing: an AttributeError. */
  getFunction(name: string): FFIFunction;
  /**
   * Loads the parameters `_metadata` names from a tensor cache (see
   * loadTensorCache; on the VM's device) and returns them as the Array the
   * VM's functions take (also `vm.params`).
   */
  loadParams(source: TensorCacheSource, options?: Omit<TensorCacheOptions, 'device'>): Promise<ArrayObject>;
  /** Releases the VM's functions, parameters and executable. */
  dispose(): void;
  /** `using vm = await RelaxVM.create(rt)`: dispose() at the end of the scope. */
  [Symbol.dispose](): void;
}

/**
 * Compiles the pipelines of every WebGPU kernel of the library
 * asynchronously (in parallel, as tvmjs's asyncLoadWebGPUPipelines does)
 * and hands them to the library, so no dispatch waits for a compile.
 * Resolves with the number of kernels. `RelaxVM.create` calls it with
 * `pipelines: true`; this is for a library driven by hand.
 *
 * @group WebGPU pipelines
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { compilePipelines } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm' });
 * await rt.backends.ensure('webgpu');
 * const executable = rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')();
 * let reports = 0;
 * const kernels = await compilePipelines(rt, executable, () => { reports += 1; });
 * console.log(kernels > 0, reports === kernels);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true true
 * ```
 */
export function compilePipelines(rt: Runtime, module: ModuleObject,
  onProgress?: (progress: { compiled: number; total: number }) => void): Promise<number>;

/**
 * Deterministic floats in [-0.5, 0.5) from a 32-bit seed (an LCG: the same
 * sequence in every engine).
 *
 * @group Weights
 * @example
 * ```ts
 * import { seededRandom } from 'webffi/js/model_library.js';
 * const next = seededRandom(42);
 * const first = next();
 * console.log(first === seededRandom(42)(), first >= -0.5 && first < 0.5);
 * ```
 * <!-- doc: output -->
 * ```text
 * true true
 * ```
 */
export function seededRandom(seed: number): () => number;

/**
 * Seeded random weights for a library's parameters (its
 * `_metadata().params`, or `libraryParams(rt)`) in web-llm's tensor-cache
 * format, for tests and offline work: norm scales (names ending in
 * `norm.weight`) 1, the rest uniform in [-scale/2, scale/2), in shards of at
 * most `shardBytes` (default 32 MiB); records named in `bf16` stored
 * `f32-to-bf16`. Only float32 parameters are made (a `ValueError`
 * otherwise). `npx webffi model weights LIBRARY.wasm --out DIR` writes
 * the same files for a library.
 *
 * @group Weights
 * @example
 * ```ts
 * import { seededTensorCache } from 'webffi/js/model_library.js';
 * const { index, shards, values } = seededTensorCache(
 *   [{ name: 'w', shape: [2, 3], dtype: 'float32' }, { name: 'ln.norm.weight', shape: [3], dtype: 'float32' }], { seed: 1 });
 * console.log(index.records[0].dataPath, shards['params_shard_0.bin'].byteLength, [...values.get('ln.norm.weight')!]);
 * ```
 * <!-- doc: output -->
 * ```text
 * params_shard_0.bin 36 [ 1, 1, 1 ]
 * ```
 */
export function seededTensorCache(
  params: readonly { name: string; shape: readonly number[]; dtype: string }[],
  options?: { seed?: number; scale?: number; shardBytes?: number; bf16?: ReadonlySet<string> },
): { index: any; shards: Record<string, Uint8Array>; values: Map<string, Float32Array> };

/**
 * The parameters a model library's `_metadata` lists (name, shape, dtype),
 * read on the CPU: no GPU needed.
 *
 * @group Weights
 * @example
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * import { libraryParams } from 'webffi/js/model_library.js';
 * const rt = await load({ wasm: 'arctic-s.wasm', autoloadBackends: false });
 * const params = libraryParams(rt);
 * console.log(params.length, params[0].name, params[0].shape, params[0].dtype);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 149 embeddings.word_embeddings.weight [ 30522, 384 ] float32
 * ```
 */
export function libraryParams(rt: Runtime): { name: string; shape: number[]; dtype: string }[];
