// Types for webffi's public JavaScript API. They check with or without the
// DOM library and with or without @types/node: host types (URL,
// WebAssembly.Module, AbortSignal) are taken from the host when it declares
// them, and stand for what webffi uses of them when it does not.
/// <reference lib="es2022" />
/// <reference lib="esnext.disposable" />

/** The host's type of a global class (`URL`, ...), or Fallback where the host declares none. */
type HostClass<Name extends string, Fallback> =
  typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : Fallback;
type HostURL = HostClass<'URL', { readonly href: string }>;
type HostAbortSignal = HostClass<'AbortSignal', { readonly aborted: boolean; readonly reason: unknown }>;
type HostWasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : object;
/** The host's GPUDevice and GPUBuffer (@webgpu/types, or the DOM library where it has WebGPU), else what webffi uses of them. */
type HostGPUDevice = HostClass<'GPUDevice', { readonly queue: object; readonly limits: object; readonly features: { has(name: string): boolean } }>;
type HostGPUBuffer = HostClass<'GPUBuffer', { readonly size: number; readonly usage: number; readonly mapState: string; destroy(): void }>;
import type { RuntimeGlobals as GeneratedGlobals } from './globals.js';
/** The runtime's own global functions by name, typed from their metadata (js/globals.d.ts). */
export type RuntimeGlobals = GeneratedGlobals;

/** What a transfer list holds: ArrayBuffers, MessagePorts, ... (the DOM's `Transferable`, Node's `TransferListItem`). */
export type TransferItem = object;

/** Any JS value the runtime converts to an FFI value. */
export type FFIInput =
  | number | bigint | boolean | string | null | undefined
  | Uint8Array | ArrayBuffer | Device | DataType | IntValue | FloatValue
  | FFIObject | FFIFunction | ((...args: any[]) => unknown) | Error
  | DLTensorRef | TensorView
  | FFIInput[] | Map<FFIInput, FFIInput> | { [key: string]: FFIInput };

/** What FFI values become in JS. */
export type FFIValue =
  | number | bigint | boolean | string | null | Uint8Array | Device | DataType
  | FFIFunction | FFIObject | TensorView | Error | unknown;

/** Every handle on an FFI object. */
export interface Handle extends Disposable {
  /** Releases the handle's reference now; later use throws. Idempotent. */
  dispose(): void;
  readonly disposed: boolean;
  /** The type key, e.g. `ffi.Function`. */
  readonly typeKey: string;
  /** The object's address in wasm memory; throws once disposed. */
  readonly handle: number;
}

/** A callable FFI Function. */
export interface FFIFunction extends Handle {
  (...args: FFIInput[]): any;
}

export class FFIObject implements Handle {
  protected constructor();
  dispose(): void;
  [Symbol.dispose](): void;
  readonly disposed: boolean;
  readonly typeKey: string;
  readonly typeIndex: number;
  readonly handle: number;
  toString(): string;
}

declare class ContainerObject extends FFIObject {
  /** Structural equality (ffi.RecursiveEq); `other` may be a plain JS value. */
  equals(other: FFIInput): boolean;
}

export class ArrayObject extends ContainerObject implements Iterable<any> {
  readonly length: number;
  at(index: number): any;
  get(index: number): any;
  toJS(): any[];
  [Symbol.iterator](): Iterator<any>;
}

export class ListObject extends ArrayObject {
  set(index: number, value: FFIInput): void;
  push(...values: FFIInput[]): number;
  pop(index?: number): any;
  insert(index: number, value: FFIInput): void;
  clear(): void;
}

export class MapObject extends ContainerObject implements Iterable<[any, any]> {
  readonly size: number;
  has(key: FFIInput): boolean;
  get(key: FFIInput): any;
  entries(): IterableIterator<[any, any]>;
  keys(): IterableIterator<any>;
  values(): IterableIterator<any>;
  toJS(): Map<any, any>;
  [Symbol.iterator](): Iterator<[any, any]>;
}

export class DictObject extends MapObject {
  set(key: FFIInput, value: FFIInput): this;
  delete(key: FFIInput): boolean;
  clear(): void;
}

export class ShapeObject extends ContainerObject implements Iterable<number | bigint> {
  readonly length: number;
  at(index: number): number | bigint | undefined;
  get(index: number): number | bigint | undefined;
  toJS(): Array<number | bigint>;
  [Symbol.iterator](): Iterator<number | bigint>;
}

export class ModuleObject extends FFIObject {
  /**
   * NAME as a callable that keeps the module alive. One rule for lookups by
   * name: a miss throws (here an AttributeError, `Module has no function
   * 'NAME'`; `Runtime.getGlobal`'s is a ValueError), and `{ optional: true }`
   * returns null instead.
   */
  getFunction(name: string, options?: { queryImports?: boolean; optional?: false }): FFIFunction;
  getFunction(name: string, options: { queryImports?: boolean; optional: true }): FFIFunction | null;
  getFunction(name: string, options?: { queryImports?: boolean; optional?: boolean }): FFIFunction | null;
  implementsFunction(name: string, options?: { queryImports?: boolean }): boolean;
  /** `library` for modules of C code. */
  readonly kind: string;
  /** The name the module was loaded under (`webffi build --name`), or null for the system library. */
  readonly name: string | null;
  importModule(other: ModuleObject): void;
  functionMetadata(name: string): string | null;
  functionDoc(name: string): string | null;
}

export function isHandle(value: unknown): value is Handle;

export class Device {
  readonly deviceType: number;
  readonly deviceId: number;
  readonly name: string;
  /** `cpu:0`, `webgpu:0`. */
  toString(): string;
  equals(other: unknown): boolean;
}

export class DataType {
  readonly code: number;
  readonly bits: number;
  readonly lanes: number;
  readonly text: string;
  /** `float32`, `int64`, `float32x4`. */
  toString(): string;
  equals(other: unknown): boolean;
}

export class IntValue { readonly value: number | bigint; constructor(value: number | bigint); }
export class FloatValue { readonly value: number; constructor(value: number); }
/** Forces a value to cross as an FFI int. */
export function asInt(value: number | bigint): IntValue;
/** Forces a value to cross as an FFI float. */
export function asFloat(value: number): FloatValue;

/** Fields every FFI error has. */
export interface FFIErrorFields {
  /** The error kind, e.g. `ValueError`; also the error's `name`. */
  kind: string;
  /**
   * ABI backtrace lines (`  File "FILE", line N, in FUNC`), most recent call
   * first, as `stack`: C frames (file and line from a module's line table,
   * inlined calls marked `[inlined]`; `line unknown` without one) and the JS
   * frames the error passed through.
   */
  backtrace: string;
  /** Raised in C with a cause chain: the cause, as a JS error. */
  cause?: unknown;
  /** Raised in C with an extra context: that object (its handle). */
  readonly extraContext?: unknown;
}

type ErrorClass<Base extends new (message?: string) => Error> =
  new (message?: string, options?: { kind?: string; backtrace?: string; cause?: unknown }) => InstanceType<Base> & FFIErrorFields;

/** `e instanceof FFIError` holds for every FFI error, whatever its base class. */
export class FFIError extends Error implements FFIErrorFields {
  kind: string;
  backtrace: string;
  readonly extraContext?: unknown;
}
export const RuntimeError: ErrorClass<ErrorConstructor>;
export type RuntimeError = Error & FFIErrorFields;
export const ValueError: ErrorClass<ErrorConstructor>;
export type ValueError = Error & FFIErrorFields;
export const FFITypeError: ErrorClass<TypeErrorConstructor>;
export type FFITypeError = TypeError & FFIErrorFields;
export const AttributeError: ErrorClass<ErrorConstructor>;
export type AttributeError = Error & FFIErrorFields;
export const KeyError: ErrorClass<ErrorConstructor>;
export type KeyError = Error & FFIErrorFields;
export const IndexError: ErrorClass<RangeErrorConstructor>;
export type IndexError = RangeError & FFIErrorFields;
export const OverflowError: ErrorClass<RangeErrorConstructor>;
export type OverflowError = RangeError & FFIErrorFields;
export const MemoryError: ErrorClass<ErrorConstructor>;
export type MemoryError = Error & FFIErrorFields;
export const AssertionError: ErrorClass<ErrorConstructor>;
export type AssertionError = Error & FFIErrorFields;
/**
 * The kinds below are apache/tvm's error classes (its Python package
 * registers them, each under TVMError, a RuntimeError); tvm-ffi registers
 * only the built-in kinds above (C++ code raises `InternalError` too). Here
 * they extend RuntimeError, so `instanceof RuntimeError` catches every one.
 */
export const InternalError: ErrorClass<ErrorConstructor>;
export type InternalError = RuntimeError;
/** A remote call failed for a reason other than the remote function's own error. */
export const RPCError: ErrorClass<ErrorConstructor>;
export type RPCError = RuntimeError;
/** A remote call or session ran out of time (also `instanceof RPCError`). */
export const RPCSessionTimeoutError: ErrorClass<ErrorConstructor>;
export type RPCSessionTimeoutError = RPCError;
export const OpError: ErrorClass<ErrorConstructor>;
export type OpError = RuntimeError;
export const DiagnosticError: ErrorClass<ErrorConstructor>;
export type DiagnosticError = RuntimeError;
export const ScheduleError: ErrorClass<ErrorConstructor>;
export type ScheduleError = RuntimeError;

/** Thrown by every call once a wasm trap has poisoned the instance. */
export class FatalError extends Error {}

/** Makes errors of `kind` instances of `cls` (constructed as `new cls(message)`). */
export function registerError(kind: string, cls: new (message?: string) => Error): void;

export interface Logger {
  log?(message: string): void;
  warn?(message: string): void;
}

/** Memory operations of a backend that serves a device type (installed in C through `webffi.SetDeviceAPI`). */
export interface BackendDevice {
  /** A non-zero integer handle: the data pointer C sees. */
  alloc(nbytes: number): number;
  free(handle: number): void;
  upload(handle: number, byteOffset: number, bytes: Uint8Array): void;
  download(handle: number, byteOffset: number, nbytes: number, out?: Uint8Array): Promise<Uint8Array>;
  copy(src: number, srcOffset: number, dst: number, dstOffset: number, nbytes: number): void;
  /** The GPUBuffer behind a handle, for another library (`tensor.gpuBuffer`). */
  exportBuffer?(handle: number): HostGPUBuffer;
  /** The GPUDevice in use (`rt.gpuDevice`). */
  readonly gpuDevice?: HostGPUDevice | null;
}

export interface Backend {
  name: string;
  /** The device type it serves ('webgpu', 'ext_dev', 15, ...). */
  deviceType?: string | number;
  /** Among backends of one device type the highest that initialises wins (default 0). */
  priority?: number;
  /** Lazy and single-flight; a failure is remembered and reported once. */
  init(runtime: Runtime): unknown | Promise<unknown>;
  device?: BackendDevice;
  /** Global functions registered with the backend, with their metadata (`registerGlobal`) when given. */
  globals?(runtime: Runtime): Record<string, ((...args: any[]) => unknown)
    | { fn: (...args: any[]) => unknown; metadata?: string | object }>;
  /** false once its device is lost: the next use initialises it again. */
  readonly ready?: boolean;
  /** Called by `runtime.dispose()`: release the device and everything allocated on it. */
  dispose?(): void;
  /** WebGPU: submits the work recorded so far without waiting for it, so other libraries' later work sees it. */
  flush?(): void;
}

export type BackendOrFactory = Backend | ((runtime: Runtime) => Backend);

export interface BackendStatus {
  name: string;
  device: string | null;
  priority: number;
  status: 'ready' | 'registered' | 'initialising' | 'failed' | 'lost' | 'disposed';
  error: unknown;
}

export interface Backends {
  /** Registers a backend: its name, or null (one warning through the logger) when it throws. */
  register(backend: BackendOrFactory): string | null;
  init(name: string): Promise<Backend>;
  /** Initialises the best backend for a device; CPU needs none (resolves null). */
  ensure(device: string | number | Device): Promise<Backend | null>;
  get(name: string): Backend | null;
  /** CPU first, then every registered backend. */
  list(): BackendStatus[];
}

export type DTypeName =
  | 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64'
  | 'float16' | 'bfloat16' | 'float32' | 'float64' | 'bool';

export type TensorData =
  | Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array | Uint8ClampedArray
  | Uint16Array | Uint32Array | BigUint64Array | Float32Array | Float64Array;

/** The typed array that holds each dtype's elements (float16/bfloat16 as raw bits). */
export interface DTypeArrays {
  int8: Int8Array; int16: Int16Array; int32: Int32Array; int64: BigInt64Array;
  uint8: Uint8Array; uint16: Uint16Array; uint32: Uint32Array; uint64: BigUint64Array;
  float16: Uint16Array; bfloat16: Uint16Array; float32: Float32Array; float64: Float64Array;
  bool: Uint8Array;
}
/** The array a view of a tensor made from T is (Uint8ClampedArray data is uint8). */
type ViewOf<T extends TensorData> = T extends Uint8ClampedArray ? Uint8Array : T;
type ArrayOfDType<D> = D extends DTypeName ? DTypeArrays[D] : TensorData;

/** A tensor passed to C as a borrowed `DLTensor*`. */
export interface DLTensorRef { readonly tensor: Tensor | TensorView; }

/**
 * The API an `ffi.Tensor` and a borrowed `DLTensor*` view share; A is the
 * typed array its elements read as (known from `rt.tensor(data)` and
 * `rt.empty(shape, dtype)`, the union where the dtype is only known at run time).
 */
export interface TensorLike<A extends TensorData = TensorData> {
  readonly ndim: number;
  readonly shape: number[];
  /** In elements. */
  readonly strides: number[];
  readonly dtype: DataType;
  readonly device: Device;
  readonly byteOffset: number;
  /** A wasm address on CPU; the backend's allocation handle elsewhere. */
  readonly dataPtr: number;
  /** 'cpu' or the device's name ('webgpu'). */
  readonly location: string;
  /**
   * A WebGPU tensor's GPUBuffer (its data starts at `byteOffset`), for
   * another library on the same device: no copy. webffi's pending work is
   * submitted first. Valid while the tensor lives; after it is disposed
   * webffi neither reuses nor destroys the buffer. A CPU tensor throws a ValueError.
   */
  readonly gpuBuffer: HostGPUBuffer;
  readonly size: number;
  readonly nbytes: number;
  /** Zero-copy and BORROWED: a call that grows wasm memory detaches it; call view() again. CPU only. */
  view(): A;
  /** A copy of the CPU data (a device tensor throws: use `await data()`). */
  toTypedArray(): A;
  /** A copy of the data, downloaded from a device; into `out` when given. */
  data(): Promise<A>;
  data<T extends TensorData>(out: T): Promise<T>;
  /** Overwrites the data (an upload on a device). */
  set(data: TensorData): this;
  /** A copy on another device, initialising its backend on first use. */
  toDevice(device: string | number | Device): Promise<Tensor<A>>;
  asDLTensorPtr(): DLTensorRef;
}

/** An `ffi.Tensor`: a DLTensor whose data the C core allocated through a device backend. */
export interface Tensor<A extends TensorData = TensorData> extends FFIObject, TensorLike<A> {}

/**
 * A `DLTensor*` that C passed to JS. As a callback argument it is BORROWED
 * for the call: every use after the callback returns throws a ValueError.
 * Passed back to C it is the same `DLTensor*`.
 */
export interface TensorView extends TensorLike {
  /** An `ffi.Tensor` on the same device holding a copy of the data. */
  toTensor(): Tensor;
}

export interface LoadOptions {
  /** Where the core is; default: webffi.wasm next to the package's JS. */
  wasm?: HostURL | string | ArrayBuffer | ArrayBufferView | HostWasmModule;
  /** Receives the core's output and load warnings (default: console). */
  logger?: Logger;
  /** Device backends registered and initialised once the core is up. */
  backends?: BackendOrFactory[];
  /** false: no backend discovery (in Node WEBFFI_BACKEND_AUTOLOAD=0 does the same). */
  autoloadBackends?: boolean;
  /** Node: the app whose package.json dependencies are searched for backends (default: the nearest package.json above the entry module, else cwd). */
  appDir?: string | HostURL;
  /**
   * false: errors raised in C capture no C frames (`backtrace` is empty;
   * kind, message and the JS stack stay), which makes them cost about what
   * `new Error()` does. Default true. `Runtime.setBacktraces` switches it later.
   */
  backtraces?: boolean;
  /**
   * The runtime's own line table (`dist/webffi.lines`; `true`: the file
   * beside the wasm), so frames in the runtime show file and line; a file
   * made for another build is refused with one warning. Modules built with
   * `webffi build -g` carry their own.
   */
  debugInfo?: true | string | HostURL | ArrayBuffer | ArrayBufferView;
  /**
   * A GPUDevice another library made (onnxruntime-web, TensorFlow.js):
   * webffi's WebGPU backend uses it instead of acquiring its own, after
   * checking it has the limits and features webffi's kernels (and a model
   * library's) need; load() rejects with a RuntimeError naming what is
   * missing. webffi never destroys it, and does not replace it once lost.
   */
  gpuDevice?: HostGPUDevice;
}

/** Options of `Runtime.tensorFromGPUBuffer`. */
export interface GPUBufferTensorOptions {
  shape: number[];
  /** Default float32; elements of whole bytes. */
  dtype?: DTypeName | DataType;
  /** Where the tensor starts in the buffer: a multiple of the element size (default 0). */
  byteOffset?: number;
  /** true: disposing the tensor destroys the buffer (webffi owns it). Default false: it stays the other library's. */
  dispose?: boolean;
}

export interface Runtime {
  /** The core's ABI metadata (indices, sizes, offsets, versions). */
  readonly metadata: any;
  readonly exports: Record<string, any>;
  /**
   * A global function; a miss throws `Cannot find global function NAME`.
   * The runtime's own are typed from their metadata (`RuntimeGlobals`,
   * written by `webffi types --runtime-globals`).
   */
  getGlobal<N extends string>(name: N): GlobalOf<RuntimeGlobals, N>;
  getGlobal<N extends string>(name: N, options: { optional: true }): GlobalOf<RuntimeGlobals, N> | null;
  /**
   * `metadata` is what `ffi.GetGlobalFuncMetadata` gives for it (JSON
   * text, or a value to JSON.stringify), e.g. `{ type_schema }`.
   */
  registerGlobal(name: string, fn: ((...args: any[]) => unknown) | FFIFunction,
    options?: { override?: boolean; metadata?: string | object }): void;
  listGlobals(): string[];
  removeGlobal(name: string): boolean;
  device(spec: string | number, id?: number): Device;
  dtype(text: string | DataType): DataType;
  /** Runs fn and disposes every handle made meanwhile, except its result. */
  scope<T>(fn: () => T): T;
  /** Converts a JS value to an FFI value (a JS function becomes a Function handle). */
  toFFI<T extends (...args: any[]) => unknown>(value: T): FFIFunction;
  toFFI(value: FFIInput[]): ArrayObject;
  toFFI(value: FFIInput): any;
  /**
   * The JS class of a registered (reflected) type: its fields are accessors
   * on the instances, its methods instance methods, its static methods
   * (`__ffi_init__`, ...) static. Pass an interface to name them.
   */
  objectClass<T extends FFIObject = ReflectedObject>(typeKey: string): ReflectedClass<T>;
  registerObjectClass(typeKey: string | number, cls: typeof FFIObject): void;
  /**
   * Loads a C module built with `webffi build --module` (a URL, a path in
   * Node, bytes or a compiled module). The same module (the same bytes)
   * already loaded under its name is returned; a different one under that
   * name is a ValueError unless `replace` is true, which unloads the old one.
   */
  loadModule(source: string | HostURL | ArrayBuffer | ArrayBufferView | HostWasmModule,
    options?: { replace?: boolean }): Promise<ModuleObject>;
  /** Removes a module from the loaded table; true when it was loaded. */
  unloadModule(name: string): boolean;
  /** How many JS values C holds references to. */
  readonly liveJSValues: number;
  /**
   * Switches C backtraces on or off (for validation in hot loops); returns
   * the previous setting. Off, errors raised in C keep kind, message and JS
   * stack, and `backtrace` is empty.
   */
  setBacktraces(on: boolean): boolean;
  /** Whether errors raised in C capture their C frames. */
  readonly backtraces: boolean;
  /** The trap that poisoned this instance, or null. */
  readonly poisoned: unknown;
  /**
   * Releases what the runtime holds outside its wasm memory (each backend's
   * `dispose()`: the GPU device the WebGPU backend created, with its
   * buffers); every later use of the runtime throws a ValueError, and its
   * handles dispose as no-ops. Idempotent.
   */
  dispose(): void;
  /** `using rt = await load()`: dispose() at the end of the scope. */
  [Symbol.dispose](): void;
  /** Whether dispose() was called. */
  readonly disposed: boolean;
  /** Device backends: discovered at load, initialised on first use. */
  readonly backends: Backends;
  /** The GPUDevice webffi's WebGPU backend uses (null before it is initialised, after a loss or dispose()). */
  readonly gpuDevice: HostGPUDevice | null;
  /**
   * A webgpu:0 tensor over a GPUBuffer another library made on the same
   * device: no copy, never in webffi's reuse pool. Rejects (ValueError /
   * TypeError) a buffer of another device, a destroyed or mapped one, one
   * without STORAGE usage, and a shape, dtype or byteOffset that does not
   * fit it or is misaligned.
   */
  tensorFromGPUBuffer(buffer: HostGPUBuffer, options: GPUBufferTensorOptions): Promise<Tensor>;
  /** The Tensor wrapper class of this runtime (for instanceof). */
  readonly Tensor: abstract new (...args: never[]) => Tensor;
  /** The class of `DLTensor*` views C passes to JS (for instanceof). */
  readonly TensorView: abstract new (...args: never[]) => TensorView;
  /** A CPU tensor holding a copy of `data` (float16/bfloat16 as Uint16Array bits, bool as Uint8Array). */
  tensor<T extends TensorData>(data: T, options?: { shape?: number[] }): Tensor<ViewOf<T>>;
  tensor<D extends DTypeName>(data: DTypeArrays[D], options: { shape?: number[]; dtype: D }): Tensor<DTypeArrays[D]>;
  tensor(data: TensorData, options?: { shape?: number[]; dtype?: DTypeName | DataType }): Tensor;
  /** An uninitialised tensor (float32 by default); a non-CPU device needs its backend initialised (`backends.ensure`). */
  empty<D extends DTypeName = 'float32'>(shape: number[], dtype?: D, device?: string | number | Device): Tensor<ArrayOfDType<D>>;
  empty(shape: number[], dtype?: DTypeName | DataType, device?: string | number | Device): Tensor;
}

export function load(options?: LoadOptions): Promise<Runtime>;

/**
 * The type of global NAME in a table of typed globals (`RuntimeGlobals`, or
 * what `webffi types` writes for a module): its signature when the table has
 * it, else an untyped `FFIFunction`.
 */
export type GlobalOf<Table, N extends string> = N extends keyof Table ? Handle & Table[N] : FFIFunction;

/** An instance of a reflected type: fields and methods by name. */
export interface ReflectedObject extends FFIObject {
  [member: string]: any;
}
/**
 * The class of a reflected type; static methods such as `__ffi_init__` make
 * instances, and so does `new` (through `__ffi_init__`, a TypeError when
 * the type has none).
 */
export interface ReflectedClass<T extends FFIObject = ReflectedObject> {
  new (...args: FFIInput[]): T;
  readonly prototype: T;
  readonly name: string;
  __ffi_init__(...args: FFIInput[]): T;
  [staticMethod: string]: any;
}

// ---------------------------------------------------------------- by value
export interface EncodeOptions {
  /** An array to push the ArrayBuffers of typed arrays and Bytes onto (to transfer them); without it, data is copied. */
  transfer?: TransferItem[];
  /** An array for the buffers encoding makes itself (a CPU tensor's copy of its data): they can move even when the caller's own must not. Defaults to `transfer`. */
  fresh?: TransferItem[];
}
/**
 * A webffi value or error as structured-clone-safe data. Live resources
 * (Functions, Modules, opaque objects, device memory) throw a TypeError:
 * ``cannot clone `ffi.Function` object [contained in `Array`]: REASON``.
 */
export function encodeValue(value: unknown, options?: EncodeOptions): unknown;
/**
 * Rebuilds encoded data: errors as their registered class (no runtime
 * needed); FFI containers and reflected objects as handles of `runtime`, or
 * as plain JS without one. Data is validated first (it may come from an
 * untrusted peer): anything encodeValue cannot have made, or past
 * VALUE_LIMITS, throws a ValueError or TypeError saying what and where.
 */
export function decodeValue(data: unknown, options?: { runtime?: Runtime | null }): any;
/** Bounds of one encoded value, enforced by both encodeValue and decodeValue. */
export const VALUE_LIMITS: Readonly<{
  /** Nesting of containers and error causes (256, as in the C core). */
  depth: number;
  /** Elements in all containers of one value together (typed arrays not counted). */
  items: number;
  /** Characters of an error's message and of its backtrace (encodeValue cuts longer ones). */
  text: number;
  /** Characters of an error kind, type key, dtype or device name. */
  name: number;
}>;

export interface ValueEncodeContext {
  /** The caller's transfer list when it asked to transfer, else null. */
  transfer: TransferItem[] | null;
  encode(value: unknown): unknown;
  refuse(reason: string): never;
}
export interface ValueDecodeContext {
  runtime: Runtime | null;
  decode(data: unknown): any;
  /** A ValueError about malformed `data` (throw it); decodeValue adds where it was. */
  invalid(what: string): Error;
}
/** The by-value form of an FFI object type, by type key (how CPU tensors travel). */
export interface ValueCodec {
  encode(handle: FFIObject, ctx: ValueEncodeContext): unknown;
  decode(data: any, ctx: ValueDecodeContext): unknown;
}
export function registerValueCodec(typeKey: string, codec: ValueCodec): void;

// --------------------------------------------------------- worker sessions
/** A Worker, MessagePort, worker global or Node worker_threads port. */
export interface MessagePortLike {
  postMessage(message: any, transfer?: readonly TransferItem[]): void;
}
export interface Transport {
  post(message: unknown, transfer?: TransferItem[]): void;
  /** Returns a function that stops listening; onFailure says the other side is gone. */
  listen(onMessage: (message: any) => void, onFailure: (why: string) => void): () => void;
}
export function transportOf(port: MessagePortLike): Transport;
/** The session protocol version; both ends must speak the same. */
export const PROTOCOL_VERSION: number;

export interface SessionOptions {
  /** ms, the default for each call (0, the default: none), and for the handshake unless `handshakeTimeout` is given. */
  timeout?: number;
  /**
   * ms to wait for the worker to answer the handshake, then reject with an
   * RPCSessionTimeoutError (0: no limit). Default: `timeout` when set, else
   * `SESSION_LIMITS.handshake` (30 s).
   */
  handshakeTimeout?: number;
  /** Decode results into handles of this runtime (default: plain JS). */
  runtime?: Runtime | null;
  /** What error messages call the other side (default `worker`). */
  name?: string;
}
export interface CallOptions {
  timeout?: number;
  signal?: HostAbortSignal;
  /** Move the ArrayBuffers of typed-array arguments instead of copying them. */
  transfer?: boolean;
  /**
   * How the result comes back: 'auto' (default: by value where it can, a
   * remote handle for GPU tensors, functions, modules and other live
   * objects), 'remote' (a handle even for what could travel by value),
   * 'value' (by value; device tensors are downloaded in the worker).
   */
  result?: 'auto' | 'remote' | 'value';
}
export type EncodedReply = { ok: true; value: unknown } | { ok: false; error: unknown; local?: boolean };

export class Session {
  constructor(transport: Transport, options?: SessionOptions);
  /** Settles when the handshake is done (rejects on a version mismatch or timeout). */
  readonly ready: Promise<void>;
  readonly closed: boolean;
  /** Calls a remote global function; remote errors reject as their own class. */
  call(name: string, args?: unknown[], options?: CallOptions): Promise<any>;
  /** The call with encoded arguments and an encoded reply (for forwarding); `op` names a session operation instead. */
  callEncoded(name: string | undefined, args: unknown, options?: CallOptions & { op?: string }, transfer?: TransferItem[]): Promise<EncodedReply>;
  /** A session operation ('tensor', 'loadModule', 'fetch', 'call', 'getFunction', 'info'; see serve) with plain arguments. */
  callOp(op: string, args: unknown[], options?: CallOptions): Promise<any>;
  getGlobal(name: string, options?: CallOptions): (...args: unknown[]) => Promise<any>;
  /** How many objects the worker keeps for this session's remote handles (a round trip). */
  remoteCount(options?: CallOptions): Promise<number>;
  /** Forwarding: releases remote ids on the next server. */
  releaseRemote(ids: readonly number[]): void;
  /**
   * Rejects every pending call with an RPCError and stops listening; the
   * worker releases every object this session's remote handles named.
   */
  close(reason?: Error | string): void;
}

// ---------------------------------------------------------- remote objects
/**
 * An object that lives in a worker, named by id in its session's table:
 * what a call returns when its result cannot (or should not) travel by
 * value. Passed to a later call on the same session, the worker receives
 * its own object; another session or a local function refuses it with a
 * TypeError. After the session ended (closed, worker crashed) its
 * operations reject with an RPCError that says so.
 */
export class RemoteObject {
  protected constructor();
  /** Unique within its session; never reused. */
  readonly id: number;
  /** The object's type in the worker: `ffi.Tensor`, `ffi.Function`, `ffi.Module`, a type key, `function`, or a JS class name. */
  readonly type: string;
  readonly disposed: boolean;
  /** Whether its session has ended. */
  readonly sessionClosed: boolean;
  /** Its value, by value (device tensors are downloaded in the worker). */
  fetch(options?: CallOptions): Promise<any>;
  /** Releases it in the worker (idempotent); a FinalizationRegistry does it for handles never disposed. */
  dispose(): void;
  [Symbol.dispose](): void;
}
/** A remote tensor: shape, dtype and device are known locally; the data stays in the worker. */
export class RemoteTensor extends RemoteObject {
  readonly shape: readonly number[];
  /** e.g. 'float32'. */
  readonly dtype: string;
  /** e.g. 'webgpu:0', 'cpu:0'. */
  readonly device: string;
  readonly size: number;
  /** The data as a typed array (downloaded in the worker, then transferred). */
  data(options?: CallOptions): Promise<TensorData>;
}
/** A remote function (an ffi.Function or a JS function the worker keeps). */
export class RemoteFunction extends RemoteObject {
  call(args?: unknown[], options?: CallOptions): Promise<any>;
}
/** A remote module (remote.loadModule). */
export class RemoteModule extends RemoteObject {
  /** The module's function; a miss rejects with an AttributeError, or resolves null with `{ optional: true }`. */
  getFunction(name: string, options?: CallOptions & { optional?: false }): Promise<RemoteFunction>;
  getFunction(name: string, options: CallOptions & { optional: true }): Promise<RemoteFunction | null>;
}
export function isRemote(value: unknown): value is RemoteObject;

/** A runtime served by a worker, behind one object (connectRuntime). */
export class RemoteRuntime {
  /** The session underneath. */
  readonly session: Session;
  readonly closed: boolean;
  /** An async function calling the worker's global (or served function) `name`. */
  getGlobal(name: string, options?: CallOptions): (...args: unknown[]) => Promise<any>;
  /** A tensor made in the worker from a typed array (copied, or transferred), on `device` when given. */
  tensor(data: ArrayBufferView, options?: { shape?: readonly number[]; dtype?: string; device?: string } & CallOptions): Promise<RemoteTensor>;
  /** Loads a C module in the worker (its URL or bytes); the worker must expose `webffi.loadModule`. */
  loadModule(source: string | ArrayBuffer | ArrayBufferView, options?: CallOptions): Promise<RemoteModule>;
  /** How many objects the worker keeps for this runtime's remote handles. */
  remoteCount(options?: CallOptions): Promise<number>;
  /** Ends the session (the worker releases every remote object); terminating the worker is the caller's. */
  close(): void;
  /** `using remote = await connectRuntime(worker)`: close() at the end of the scope. */
  [Symbol.dispose](): void;
}
/** Connects to a Worker (browser module Worker, Node worker_threads) that serves its runtime with serve(). */
export function connectRuntime(worker: MessagePortLike, options?: SessionOptions): Promise<RemoteRuntime>;
/** Connects to a worker that serves a runtime (or forwards to one). */
export function connect(port: MessagePortLike, options?: SessionOptions): Promise<Session>;
/**
 * Protocol bounds: calls in flight per server (default of `maxInFlight`),
 * characters of a function name, remote objects per session (default of
 * `maxRemotes`), ids per release message.
 */
export const SESSION_LIMITS: Readonly<{ inFlight: number; name: number; remotes: number; release: number; handshake: number }>;
/**
 * Globals a peer cannot call unless `serve`'s `expose` names them:
 * `testing.*`, `webffi.*`, `ffi.Module*`, `ffi.SystemLib`, `ffi.Function*`,
 * `ffi.GetGlobalFuncMetadata`, `ffi.MakeField*`, `ffi._*` (registry and
 * type mutation).
 */
export const PEER_DENIED: readonly string[];
/** The runtime-wide budget every peer of a runtime is charged against together (docs/security.md). */
export interface PeerBudget {
  /** How many bytes the wasm heap may hold in use while a peer's request runs (default 1.5 GiB of the 2 GiB a build reaches; the rest is the owner's). */
  memoryBytes: number;
  /** Device memory all TVM RPC sessions may hold together (default 1 GiB). */
  deviceBytes: number;
  /** Device memory they hold now. */
  readonly deviceHeld: number;
  /** How long one runtime.RPCTimeEvaluator evaluation may run synchronously (default 2000 ms). */
  timerMs: number;
  /** Peer requests running now. */
  readonly active: number;
  /** Bytes of the wasm heap in use now (all of it, the owner's included). */
  readonly heapInUse: number;
  /** JS data (strings, bytes) the worker sessions of this thread may keep for their peers together (default 512 MiB). */
  keptBytes: number;
  /** Kept now. */
  readonly kept: number;
}
/** The runtime's peer budget, or null for a core without one. */
export function peerBudget(rt: Runtime): PeerBudget | null;
/** Changes the runtime's peer budget (each field a positive integer); returns it. */
export function setPeerBudget(rt: Runtime, budget: Partial<Pick<PeerBudget, 'memoryBytes' | 'deviceBytes' | 'timerMs' | 'keptBytes'>>): PeerBudget;
export interface ServeOptions {
  /**
   * The globals a peer may call: names and `prefix*` patterns (`'*'`: all),
   * exactly those; or a predicate given the name and whether the default
   * exposes it. Default: every global except PEER_DENIED when serving a
   * runtime; everything when forwarding (the next server or the TVM RPC
   * device decides). A call to a global not exposed is answered like one to
   * a missing global; when forwarding, a list given here also governs module
   * loading (`webffi.loadModule`).
   */
  expose?: readonly string[] | ((name: string, exposedByDefault: boolean) => boolean);
  /** Calls accepted at once, async ones included (default SESSION_LIMITS.inFlight); more are answered with an RPCError. */
  maxInFlight?: number;
  /** Objects the peer may hold remote handles to at once (default SESSION_LIMITS.remotes); more: an RPCError. */
  maxRemotes?: number;
  /** Move the ArrayBuffers of results instead of copying them. */
  transferResults?: boolean;
  /**
   * JS functions served by name (looked up before the runtime's globals, and
   * exposed by being listed): called with the decoded arguments (typed
   * arrays but Uint8Array as CPU tensors) and `this` = { signal, runtime };
   * they may return a promise, which is awaited. `signal` aborts when the
   * caller cancels the call or it times out.
   */
  functions?: Record<string, (this: ServedCallContext, ...args: any[]) => unknown>;
}
/** `this` inside a served function. */
export interface ServedCallContext {
  /** Aborts when the caller cancels the call or it times out. */
  readonly signal: HostAbortSignal;
  readonly runtime: Runtime;
}
/**
 * Serves calls arriving on `port`: a runtime's global functions, forwarded
 * to a Session, or run on a TVM RPC device through an RPCSession
 * (connectRPC; a worker as the middle hop: page -> worker -> device, the
 * device's objects held by the peer as remote handles, typed arrays passed
 * as CPU tensors on the device, errors with their kind); a promise of one
 * starts listening at once (calls wait for it; one that rejects answers
 * every call with its error). Every message is validated; a malformed call
 * is answered with an error (or ignored when it has no id) and serving goes on.
 */
export function serve(target: Runtime | Session | RPCSession | Promise<Runtime | Session | RPCSession>, port: MessagePortLike,
  options?: ServeOptions): { close(): void; readonly remoteCount: number };

// ------------------------------------------------------------------ TVM RPC
/** Limits of a served TVM RPC device (each can be set per server). */
export const RPC_LIMITS: Readonly<{ maxPacketBytes: number; maxHandles: number; maxDeviceBytes: number; maxUploadBytes: number }>;
export interface RPCServeOptions {
  /** The server key (default 'webffi'): TVM's client connects with key 'webffi' (it sends 'client:webffi'). */
  key?: string;
  /** The globals the peer may reach, as ServeOptions.expose (default every global but PEER_DENIED). */
  expose?: readonly string[] | ((name: string, exposedByDefault: boolean) => boolean);
  /** Serve tvm.rpc.server.upload/download/remove/listdir/load_module (in-memory files, webffi wasm modules). Default false. */
  allowUpload?: boolean;
  limits?: Partial<{ maxPacketBytes: number; maxHandles: number; maxDeviceBytes: number; maxUploadBytes: number }>;
  /** Functions served by name before everything else (the owner's own server functions). */
  functions?: Record<string, (...args: any[]) => any>;
  /** Called with a connection's error (a peer that broke the protocol, a lost proxy). */
  onError?: (error: Error, where: string) => void;
  /**
   * Chained sessions (a client's kInitServer naming rpc.Connect, as TVM chains sessions): where this device
   * may connect onward and forward the session. true: anywhere; a list of 'host:port', 'host:*' or ws:// URLs;
   * or a predicate. Default: nowhere (such a session is refused with a ValueError).
   */
  forward?: boolean | readonly string[] | ((hop: { host: string; port: number; key: string; target: string }) => boolean);
  /** How long a chained session's opening at the next hop may take (ms; default 0: no limit); past it the client gets an RPCSessionTimeoutError naming the hop. */
  forwardTimeout?: number;
}
/** A TVM tracker to register a TCP device with: 'host:port', or its address and settings. */
export type RPCTrackerSpec = string | {
  address: string;
  /** The address the tracker hands out (TVM's custom_addr; default: the one it sees the device connect from). */
  customAddr?: string | null;
  /** How often the device checks its match key is still pending (default 2000 ms). */
  pingMs?: number;
  /** A match key handed out that nobody came with is renewed after this long (default 4000 ms). */
  unmatchedMs?: number;
  /** Delay before registering again after a lost tracker (default 1000 ms). */
  retryMs?: number;
};
export interface RPCListenOptions extends RPCServeOptions {
  /** Registers with a TVM tracker under `key`; it hands out one session at a time. */
  tracker?: RPCTrackerSpec;
  /** Default 9090; 0 picks a free port. */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /**
   * Connections served at once (default 16). A connection past it takes the
   * slot of the oldest one still in its handshake, if any; else it is refused.
   */
  maxConnections?: number;
  /** How long a connection may take to send its handshake (ms; default 10000); past it, it is closed. */
  handshakeMs?: number;
  /** How long a connection may send nothing while the server owes it nothing (ms; default 300000; 0: no limit). */
  idleMs?: number;
}
/** Serves a runtime to TVM RPC clients on TCP (Node). */
export function listenRPC(rt: Runtime, options?: RPCListenOptions): Promise<{
  port: number; host: string; readonly connections: number;
  /** With options.tracker: the first registration, and the match key the tracker has now (null while a tracker session runs). */
  tracker: { ready: Promise<void>; readonly matchKey: string | null } | null;
  close(): Promise<void>;
}>;
export interface RPCProxyOptions extends RPCServeOptions {
  /** A WebSocket class (Node 20 has no global one: e.g. the `ws` package's). */
  WebSocket?: unknown;
  /** Delay before joining again after a failure (default 1000 ms; 0: give up). */
  retryMs?: number;
}
/** Joins a TVM RPC proxy (ws://host:port/ws, or host:port over TCP in Node) as a device; joins again after each session. */
export function joinRPCProxy(rt: Runtime, url: string, options?: RPCProxyOptions): { ready: Promise<void>; readonly sessions: number; close(): void };
/** One server endpoint over any byte stream: feed it what arrives, send what it gives. */
export function createRPCEndpoint(rt: Runtime, options: RPCServeOptions & { /** A large reply comes in pieces reused once release() is called (call it when done with bytes kept past the call, or never). */
  send(bytes: Uint8Array, release?: () => void): void; onClose?(error?: Error): void }):
  { feed(bytes: Uint8Array): 'open' | 'closed'; close(): void; readonly closed: boolean; readonly handleCount: number };
/** Serves one open transport (see js/rpc/transport.js) until it ends. */
export function serveConnection(rt: Runtime, transport: unknown, options?: RPCServeOptions): Promise<{ error?: Error }>;

/** A remote object of a TVM RPC session: a handle on the server. */
export class RPCObject implements Disposable {
  readonly session: RPCSession;
  readonly typeIndex: number;
  readonly handle: number | bigint;
  readonly disposed: boolean;
  /** Frees it on the server (in order with the session's requests). */
  dispose(): void;
  [Symbol.dispose](): void;
  /** TVM RPC keeps objects on the server: rejects with an RPCError. */
  fetch(): Promise<never>;
}
export class RPCModule extends RPCObject {
  /** The module's function; a miss rejects with an AttributeError, or resolves null with `{ optional: true }`. */
  getFunction(name: string, options?: { queryImports?: boolean; optional?: false }): Promise<RPCFunction>;
  getFunction(name: string, options: { queryImports?: boolean; optional: true }): Promise<RPCFunction | null>;
  timeEvaluator(name: string, device?: Device | string, options?: TimeEvaluatorOptions): RPCTimer;
}
export class RPCTensor extends RPCObject {
  readonly device: Device;
  readonly dtype: DataType;
  readonly shape: readonly number[];
  readonly nbytes: number;
  /**
   * Downloads the contents (into `out`, a typed array of nbytes bytes, when
   * given: over TCP the socket reads straight into it, so its buffer must not
   * be transferred until the promise settles).
   */
  data(): Promise<ArrayBufferView>;
  data<T extends ArrayBufferView>(out: T): Promise<T>;
  /** Uploads a typed array of the tensor's byte size. */
  set(values: ArrayBufferView): Promise<void>;
}
/** A remote function: an async callable. */
export interface RPCFunction extends Disposable {
  (...args: unknown[]): Promise<any>;
  dispose(): void;
}
export interface TimeEvaluatorOptions { number?: number; repeat?: number; minRepeatMs?: number; limitZeroTimeIterations?: number }
/** Resolves to `repeat` measurements, seconds per call. */
export interface RPCTimer extends Disposable { (...args: unknown[]): Promise<Float64Array>; dispose(): void }
export class RPCSession implements AsyncDisposable {
  readonly closed: boolean;
  readonly serverKey: string;
  getGlobal(name: string): RPCFunction;
  lookupGlobal(name: string): Promise<RPCFunction | null>;
  call(name: string, args?: unknown[]): Promise<any>;
  deviceExists(device: Device | string): Promise<boolean>;
  deviceAttr(device: Device | string, kind: number): Promise<any>;
  sync(device?: Device | string): Promise<void>;
  empty(shape: readonly number[], dtype?: DataType | string, device?: Device | string): Promise<RPCTensor>;
  tensor(values: ArrayBufferView, options?: { shape?: readonly number[]; dtype?: DataType | string; device?: Device | string }): Promise<RPCTensor>;
  upload(name: string, bytes: Uint8Array | ArrayBuffer): Promise<void>;
  download(name: string): Promise<Uint8Array>;
  remove(name: string): Promise<void>;
  listdir(path?: string): Promise<string[]>;
  /** Loads a module on the server: a file in its work directory, or bytes (uploaded as options.name). */
  loadModule(source: string | Uint8Array, options?: { name?: string }): Promise<RPCModule>;
  timeEvaluator(name: string, device?: Device | string, options?: TimeEvaluatorOptions): RPCTimer;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
/**
 * Connects to a TVM RPC server ('host:port' over TCP in Node, or a ws:// URL
 * of a TVM proxy). A request past options.timeout ms ends the session with
 * an RPCSessionTimeoutError.
 */
export interface RPCConnectOptions {
  timeout?: number;
  WebSocket?: unknown;
  /** Largest packet accepted from the server (default RPC_LIMITS.maxPacketBytes); copies are split to fit. */
  maxPacketBytes?: number;
  /** A chained session: on the last of these servers, each reached from the one before (rpc.Connect); the servers on the way must allow it (their forward option). */
  chain?: readonly { target: string; key: string }[];
  /** TVM's session_constructor_args as they are (a name, then its arguments), e.g. ['rpc.LocalSession']. */
  sessionConstructor?: readonly (string | number | boolean | null)[];
}
export function connectRPC(target: string, key?: string, options?: RPCConnectOptions): Promise<RPCSession>;
/** Asks a TVM tracker ('host:port') for a device with `key` and connects to it (TVM's tracker.request). options.timeout also bounds the wait for a free device. */
export function requestRPC(tracker: string, key: string, options?: RPCConnectOptions & { priority?: number }): Promise<RPCSession>;
/** A TVM tracker's SUMMARY: { queue_info: { [key]: { free, pending } }, server_info: [...] }. */
export function trackerSummary(tracker: string): Promise<{ queue_info: Record<string, { free: number; pending: number }>; server_info: unknown[] }>;
/** A raw connection to a TVM tracker: JSON messages, each answered in order. */
export function connectTracker(tracker: string): Promise<{ send(message: unknown): Promise<unknown>; close(): void; readonly closed: boolean }>;
/** TVM's TrackerCode values. */
export const TRACKER_CODE: Readonly<{ FAIL: -1; SUCCESS: 0; PING: 1; STOP: 2; PUT: 3; REQUEST: 4; UPDATE_INFO: 5; SUMMARY: 6; GET_PENDING_MATCHKEYS: 7 }>;
export const RPC_TRACKER_MAGIC: number;
