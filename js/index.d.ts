// Types for webffi's public JavaScript API. They check with or without the
// DOM library and with or without @types/node: host types (URL,
// WebAssembly.Module, AbortSignal) are taken from the host when it declares
// them, and stand for what webffi uses of them when it does not.
/// <reference lib="es2022" />
/// <reference lib="esnext.disposable" />

/**
 * The tvm-ffi object, function and error system in WebAssembly: `load()` a
 * runtime, call its global functions and your C modules with plain JS
 * values, get FFI errors as JS error classes, move values and calls to
 * workers, and serve a runtime to TVM RPC clients.
 *
 * @example
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load();
 * const array = rt.getGlobal('ffi.Array')(1, 'two', [3]);
 * console.log(String(array), array.toJS());
 * ```
 * <!-- doc: output -->
 * ```text
 * (1, "two", (3,)) [ 1, 'two', [ 3 ] ]
 * ```
 * @module webffi
 */

/**
 * The host's type of a global class (`URL`, ...), or Fallback where the host
 * declares none: the types check with or without the DOM library and
 * @types/node.
 * @group Host types
 */
type HostClass<Name extends string, Fallback> =
  typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : Fallback;
/**
 * The host's `URL` (the DOM's or Node's), or anything with an `href` where
 * the host declares none.
 * @group Host types
 */
type HostURL = HostClass<'URL', { readonly href: string }>;
/**
 * The host's `AbortSignal`, or what webffi reads of one where the host
 * declares none.
 * @group Host types
 */
type HostAbortSignal = HostClass<'AbortSignal', { readonly aborted: boolean; readonly reason: unknown }>;
/**
 * The host's `WebAssembly.Module`, or any object where the host declares none.
 * @group Host types
 */
type HostWasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : object;
/**
 * The host's `GPUDevice` (@webgpu/types, or the DOM library where it has
 * WebGPU), else what webffi reads of one.
 * @group Host types
 */
type HostGPUDevice = HostClass<'GPUDevice', { readonly queue: object; readonly limits: object; readonly features: { has(name: string): boolean } }>;
/**
 * The host's `GPUBuffer` (@webgpu/types, or the DOM library where it has
 * WebGPU), else what webffi reads of one.
 * @group Host types
 */
type HostGPUBuffer = HostClass<'GPUBuffer', { readonly size: number; readonly usage: number; readonly mapState: string; destroy(): void }>;
import type { RuntimeGlobals as GeneratedGlobals } from './globals.js';
/**
 * The runtime's own global functions by name, typed from their metadata
 * (`js/globals.d.ts`, written by `webffi types --runtime-globals`):
 * `rt.getGlobal(name)` has the signature listed here.
 *
 * @group Runtime
 * @example
 * ```ts
 * import { load, type RuntimeGlobals } from 'webffi';
 * const rt = await load();
 * const size: RuntimeGlobals['ffi.ArraySize'] = rt.getGlobal('ffi.ArraySize');
 * console.log(size([1, 2, 3]));
 * ```
 * <!-- doc: output -->
 * ```text
 * 3
 * ```
 */
export type RuntimeGlobals = GeneratedGlobals;

/**
 * What a transfer list holds: ArrayBuffers, MessagePorts, ... (the DOM's
 * `Transferable`, Node's `TransferListItem`).
 *
 * @group By value
 * @example
 * ```ts
 * import { encodeValue, type TransferItem } from 'webffi';
 * const transfer: TransferItem[] = [];
 * const data = encodeValue(new Float32Array([1, 2]), { transfer });
 * console.log(transfer.length, transfer[0] instanceof ArrayBuffer);
 * // postMessage(data, transfer) would move the buffer instead of copying it
 * ```
 * <!-- doc: output -->
 * ```text
 * 1 true
 * ```
 */
export type TransferItem = object;

/**
 * Any JS value the runtime converts to an FFI value: what a call's
 * arguments may be. Numbers become `int` when they are integers and `float`
 * otherwise (`asInt` / `asFloat` force one), bigints `int`, strings
 * `ffi.String`, `Uint8Array` and `ArrayBuffer` `ffi.Bytes`, arrays
 * `ffi.Array`, `Map`s and plain objects `ffi.Map`, JS functions
 * `ffi.Function`s, errors `ffi.Error`s; handles pass their object.
 *
 * @group Values
 * @example
 * ```ts
 * import { load, type FFIInput } from 'webffi';
 * const rt = await load();
 * const repr = rt.getGlobal('ffi.ReprPrint');
 * const values: FFIInput[] = [7, 2.5, 'text', [1, [2]], new Map([['k', true]]), null];
 * for (const v of values) console.log(repr(v));
 * ```
 * <!-- doc: output -->
 * ```text
 * 7
 * 2.5
 * "text"
 * (1, (2,))
 * {"k": True}
 * None
 * ```
 */
export type FFIInput =
  | number | bigint | boolean | string | null | undefined
  | Uint8Array | ArrayBuffer | Device | DataType | IntValue | FloatValue
  | FFIObject | FFIFunction | ((...args: any[]) => unknown) | Error
  | DLTensorRef | TensorView
  | FFIInput[] | Map<FFIInput, FFIInput> | { [key: string]: FFIInput };

/**
 * What FFI values become in JS: `int` a number (a bigint past 2^53),
 * `float` a number, `bool` a boolean, `ffi.String` a string, `ffi.Bytes` a
 * `Uint8Array`, `None` null; functions, containers and other objects come
 * back as handles (`FFIFunction`, `ArrayObject`, ... `FFIObject`), raised
 * errors as thrown JS errors.
 *
 * @group Values
 * @example
 * ```ts
 * import { load, ArrayObject } from 'webffi';
 * const rt = await load();
 * const array = rt.getGlobal('ffi.Array')(1, 'two', 2 ** 60);
 * console.log(array instanceof ArrayObject, array.at(0), array.at(1), array.at(2));
 * ```
 * <!-- doc: output -->
 * ```text
 * true 1 two 1152921504606846976n
 * ```
 */
export type FFIValue =
  | number | bigint | boolean | string | null | Uint8Array | Device | DataType
  | FFIFunction | FFIObject | TensorView | Error | unknown;

/**
 * Every handle on an FFI object: functions and objects alike hold one
 * reference, released by `dispose()` (or `using`, or a FinalizationRegistry
 * once the handle is garbage-collected).
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, type Handle } from 'webffi';
 * const rt = await load();
 * {
 *   using array: Handle = rt.toFFI([1, 2]);
 *   console.log(array.typeKey, array.disposed);
 * } // disposed here
 * const f: Handle = rt.getGlobal('ffi.ArraySize');
 * f.dispose();
 * console.log(f.disposed);
 * ```
 * <!-- doc: output -->
 * ```text
 * ffi.Array false
 * true
 * ```
 */
export interface Handle extends Disposable {
  /** Releases the handle's reference now; later use throws. Idempotent. */
  dispose(): void;
  /** Whether `dispose()` was called. */
  readonly disposed: boolean;
  /** The type key, e.g. `ffi.Function`. */
  readonly typeKey: string;
  /** The object's address in wasm memory; throws once disposed. */
  readonly handle: number;
}

/**
 * A callable FFI Function: a global (`rt.getGlobal`), a module's function,
 * a JS function converted with `rt.toFFI`, or a function C returned. Calls
 * convert their arguments (`FFIInput`) and result (`FFIValue`); an error
 * raised in C is thrown as its JS class.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, type FFIFunction } from 'webffi';
 * const rt = await load();
 * const twice: FFIFunction = rt.toFFI((x: number) => 2 * x);
 * const array: FFIFunction = rt.getGlobal('ffi.Array');
 * console.log(twice(21), array(twice, twice).length, twice.typeKey);
 * ```
 * <!-- doc: output -->
 * ```text
 * 42 2 ffi.Function
 * ```
 */
export interface FFIFunction extends Handle {
  (...args: FFIInput[]): any;
}

/**
 * The JS class of FFI objects: every object handle but functions is an
 * instance (containers, modules, tensors and reflected types have
 * subclasses). Handles are made by the runtime, never with `new`.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, FFIObject } from 'webffi';
 * const rt = await load();
 * const map = rt.toFFI(new Map([['a', 1]]));
 * console.log(map instanceof FFIObject, map.typeKey, map.typeIndex, String(map));
 * map.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * true ffi.Map 72 {"a": 1}
 * ```
 */
export class FFIObject implements Handle {
  protected constructor();
  /** Releases the handle's reference now; later use throws a ValueError. Idempotent. */
  dispose(): void;
  /** `using x = ...`: dispose() at the end of the scope. */
  [Symbol.dispose](): void;
  /** Whether `dispose()` was called. */
  readonly disposed: boolean;
  /** The type key, e.g. `ffi.Array`. */
  readonly typeKey: string;
  /** The runtime's index of the object's type. */
  readonly typeIndex: number;
  /** The object's address in wasm memory; throws once disposed. */
  readonly handle: number;
  /** The object as `ffi.ReprPrint` prints it: `(1, 2)`, `{"a": 1}`, `float32[3]@cpu:0`. */
  toString(): string;
}

/**
 * What the containers share: structural equality with FFI and JS values.
 * @group Objects
 */
declare class ContainerObject extends FFIObject {
  /** Structural equality (ffi.RecursiveEq); `other` may be a plain JS value. */
  equals(other: FFIInput): boolean;
}

/**
 * An `ffi.Array`: an immutable sequence (what a JS array becomes). Elements
 * read as JS values; containers inside stay handles until `toJS()`.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, ArrayObject } from 'webffi';
 * const rt = await load();
 * const array = rt.toFFI([1, 'two', [3]]);
 * console.log(array instanceof ArrayObject, array.length, array.at(-1).toJS(), array.toJS());
 * for (const item of array) console.log(String(item));
 * console.log(array.equals([1, 'two', [3]]));
 * ```
 * <!-- doc: output -->
 * ```text
 * true 3 [ 3 ] [ 1, 'two', [ 3 ] ]
 * 1
 * two
 * (3,)
 * true
 * ```
 */
export class ArrayObject extends ContainerObject implements Iterable<any> {
  /** The number of elements. */
  readonly length: number;
  /** The element at `index` (negative: from the end); out of range is an IndexError. */
  at(index: number): any;
  /** The same as `at`. */
  get(index: number): any;
  /** A JS array, containers inside converted too. */
  toJS(): any[];
  /** The elements in order. */
  [Symbol.iterator](): Iterator<any>;
}

/**
 * An `ffi.List`: a mutable sequence, shared by every handle on it (made by
 * `ffi.List`, or by C).
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, ListObject } from 'webffi';
 * const rt = await load();
 * const list: ListObject = rt.getGlobal('ffi.List')(1, 2);
 * list.push(3, 4);
 * list.insert(0, 0);
 * list.set(1, 'one');
 * console.log(String(list), list.pop(), list.pop(0), list.length);
 * ```
 * <!-- doc: output -->
 * ```text
 * [0, "one", 2, 3, 4] 4 0 3
 * ```
 */
export class ListObject extends ArrayObject {
  /** Replaces the element at `index`. */
  set(index: number, value: FFIInput): void;
  /** Appends values; returns the new length. */
  push(...values: FFIInput[]): number;
  /** Removes and returns the element at `index` (default: the last). */
  pop(index?: number): any;
  /** Inserts before `index`. */
  insert(index: number, value: FFIInput): void;
  /** Removes every element. */
  clear(): void;
}

/**
 * An `ffi.Map`: an immutable map in insertion order (what a JS `Map` or
 * plain object becomes). Strings and bytes compare by content, everything
 * else by type and value, so `1`, `true` and `1.5` are three keys.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, MapObject } from 'webffi';
 * const rt = await load();
 * const map = rt.toFFI({ a: 1, b: [2] });
 * console.log(map instanceof MapObject, map.size, map.has('a'), map.get('a'), map.get('missing'));
 * for (const [key, value] of map) console.log(key, String(value));
 * console.log(map.toJS());
 * ```
 * <!-- doc: output -->
 * ```text
 * true 2 true 1 undefined
 * a 1
 * b (2,)
 * Map(2) { 'a' => 1, 'b' => [ 2 ] }
 * ```
 */
export class MapObject extends ContainerObject implements Iterable<[any, any]> {
  /** The number of entries. */
  readonly size: number;
  /** Whether `key` is there. */
  has(key: FFIInput): boolean;
  /** The value of `key`, or undefined. */
  get(key: FFIInput): any;
  /** `[key, value]` pairs in insertion order. */
  entries(): IterableIterator<[any, any]>;
  /** The keys in insertion order. */
  keys(): IterableIterator<any>;
  /** The values in insertion order. */
  values(): IterableIterator<any>;
  /** A JS `Map`, containers inside converted too. */
  toJS(): Map<any, any>;
  /** The same as `entries()`. */
  [Symbol.iterator](): Iterator<[any, any]>;
}

/**
 * An `ffi.Dict`: a mutable map, shared by every handle on it (made by
 * `ffi.Dict`, or by C).
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, DictObject } from 'webffi';
 * const rt = await load();
 * const dict: DictObject = rt.getGlobal('ffi.Dict')();
 * dict.set('x', 1).set('y', 2);
 * console.log(String(dict), dict.delete('x'), dict.delete('x'), dict.size);
 * ```
 * <!-- doc: output -->
 * ```text
 * {"x": 1, "y": 2} true false 1
 * ```
 */
export class DictObject extends MapObject {
  /** Sets `key` (a new key goes last); returns the dict. */
  set(key: FFIInput, value: FFIInput): this;
  /** Removes `key`; whether it was there. */
  delete(key: FFIInput): boolean;
  /** Removes every entry. */
  clear(): void;
}

/**
 * An `ffi.Shape`: an immutable sequence of int64 extents.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, ShapeObject } from 'webffi';
 * const rt = await load();
 * const shape: ShapeObject = rt.getGlobal('ffi.Shape')(2, 3, 4);
 * console.log(String(shape), shape.length, shape.at(-1), [...shape]);
 * ```
 * <!-- doc: output -->
 * ```text
 * Shape(2, 3, 4) 3 4 [ 2, 3, 4 ]
 * ```
 */
export class ShapeObject extends ContainerObject implements Iterable<number | bigint> {
  /** The number of dimensions. */
  readonly length: number;
  /** The extent at `index` (negative: from the end). */
  at(index: number): number | bigint | undefined;
  /** The same as `at`. */
  get(index: number): number | bigint | undefined;
  /** The extents as a JS array. */
  toJS(): Array<number | bigint>;
  /** The extents in order. */
  [Symbol.iterator](): Iterator<number | bigint>;
}

/**
 * An `ffi.Module`: a C module loaded with `rt.loadModule` (built by
 * `webffi build --module`), or the system library (`ffi.SystemLib()`: the
 * functions linked into the runtime's wasm). Its functions are looked up by
 * name.
 *
 * @group Objects
 * @example
 * <!-- doc: fixture=typed -->
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load();
 * // typed.wasm: tests/modules/typed.c, built with `webffi build --module`
 * const mod = await rt.loadModule(new URL('./typed.wasm', import.meta.url));
 * console.log(mod.kind, mod.name, mod.implementsFunction('scale'), mod.functionDoc('scale'));
 * const scale = mod.getFunction('scale');
 * console.log(scale(1.5, 4));
 * console.log(mod.getFunction('missing', { optional: true }));
 * ```
 * <!-- doc: output -->
 * ```text
 * library typed true x times k.
 * 6
 * null
 * ```
 */
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
  /** Whether the module has function NAME (with `queryImports`: or a module it imports has it). */
  implementsFunction(name: string, options?: { queryImports?: boolean }): boolean;
  /** `library` for modules of C code. */
  readonly kind: string;
  /** The name the module was loaded under (`webffi build --name`), or null for the system library. */
  readonly name: string | null;
  /** Makes `other`'s functions reachable through this module with `queryImports`. */
  importModule(other: ModuleObject): void;
  /** The function's metadata as JSON text (`{"type_schema": ...}`), or null when it has none. */
  functionMetadata(name: string): string | null;
  /** The function's doc string, or null when it has none. */
  functionDoc(name: string): string | null;
}

/**
 * Whether `value` is a handle on an FFI object or function of a runtime
 * (what `rt.toFFI` and FFI calls return), as opposed to a plain JS value.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, isHandle } from 'webffi';
 * const rt = await load();
 * const array = rt.toFFI([1, 2]);
 * console.log(isHandle(array), isHandle(rt.getGlobal('ffi.Array')), isHandle([1, 2]), isHandle(array.toJS()));
 * ```
 * <!-- doc: output -->
 * ```text
 * true true false false
 * ```
 */
export function isHandle(value: unknown): value is Handle;

/**
 * A DLPack device: a device type (1 CPU, 15 WebGPU, ...) and an id. Made by
 * `rt.device(...)`; what FFI calls take and return for `Device` values, and
 * where a tensor lives.
 *
 * @group Values
 * @example
 * ```ts
 * import { load, Device } from 'webffi';
 * const rt = await load();
 * const gpu = rt.device('webgpu');
 * console.log(gpu instanceof Device, String(gpu), gpu.deviceType, gpu.deviceId, gpu.name);
 * console.log(rt.device(1, 0).equals(rt.device('cpu')), String(rt.tensor(new Int32Array(2)).device));
 * ```
 * <!-- doc: output -->
 * ```text
 * true webgpu:0 15 0 webgpu
 * true cpu:0
 * ```
 */
export class Device {
  /** The DLPack device type: 1 CPU, 15 WebGPU, ... */
  readonly deviceType: number;
  /** The device's index among those of its type. */
  readonly deviceId: number;
  /** The type's name: `cpu`, `webgpu`, ... */
  readonly name: string;
  /** `cpu:0`, `webgpu:0`. */
  toString(): string;
  /** Same type and id. */
  equals(other: unknown): boolean;
}

/**
 * A DLPack data type: type code, bits and lanes. Made by `rt.dtype(text)`;
 * what FFI calls take and return for `DataType` values, and a tensor's
 * element type.
 *
 * @group Values
 * @example
 * ```ts
 * import { load, DataType } from 'webffi';
 * const rt = await load();
 * const vec = rt.dtype('float32x4');
 * console.log(vec instanceof DataType, String(vec), vec.code, vec.bits, vec.lanes);
 * console.log(rt.dtype('int64').equals(rt.tensor(new BigInt64Array(1)).dtype));
 * ```
 * <!-- doc: output -->
 * ```text
 * true float32x4 2 32 4
 * true
 * ```
 */
export class DataType {
  /** DLPack's type code: 0 int, 1 uint, 2 float, 4 bfloat, ... */
  readonly code: number;
  /** Bits of one lane. */
  readonly bits: number;
  /** Lanes of a vector type (1 for scalars). */
  readonly lanes: number;
  /** The text form, as `toString()`. */
  readonly text: string;
  /** `float32`, `int64`, `float32x4`. */
  toString(): string;
  /** Same code, bits and lanes. */
  equals(other: unknown): boolean;
}

/**
 * A number marked to cross as an FFI `int` (what `asInt` returns).
 *
 * @group Values
 * @example
 * ```ts
 * import { load, IntValue } from 'webffi';
 * const rt = await load();
 * console.log(rt.getGlobal('ffi.json.Stringify')([new IntValue(5), 5.5]));
 * ```
 * <!-- doc: output -->
 * ```text
 * [5,5.5]
 * ```
 */
export class IntValue { readonly value: number | bigint; constructor(value: number | bigint); }
/**
 * A number marked to cross as an FFI `float` (what `asFloat` returns).
 *
 * @group Values
 * @example
 * ```ts
 * import { load, FloatValue } from 'webffi';
 * const rt = await load();
 * console.log(rt.getGlobal('ffi.json.Stringify')([new FloatValue(5), 5]));
 * ```
 * <!-- doc: output -->
 * ```text
 * [5.0,5]
 * ```
 */
export class FloatValue { readonly value: number; constructor(value: number); }
/**
 * Forces a value to cross as an FFI int (a whole JS number crosses as an
 * int anyway; this is for values computed as floats, or for clarity).
 *
 * @group Values
 * @example
 * ```ts
 * import { load, asInt } from 'webffi';
 * const rt = await load();
 * const stringify = rt.getGlobal('ffi.json.Stringify');
 * console.log(stringify([asInt(3), asInt(2n ** 40n)]));
 * ```
 * <!-- doc: output -->
 * ```text
 * [3,1099511627776]
 * ```
 */
export function asInt(value: number | bigint): IntValue;
/**
 * Forces a value to cross as an FFI float: a whole JS number such as `5`
 * would cross as an int.
 *
 * @group Values
 * @example
 * ```ts
 * import { load, asFloat } from 'webffi';
 * const rt = await load();
 * const stringify = rt.getGlobal('ffi.json.Stringify');
 * console.log(stringify([5, asFloat(5)]));
 * ```
 * <!-- doc: output -->
 * ```text
 * [5,5.0]
 * ```
 */
export function asFloat(value: number): FloatValue;

/**
 * Fields every FFI error has, whichever JS base class it extends.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, type FFIErrorFields } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('ValueError', 'raised in C');
 * } catch (e) {
 *   const { kind, backtrace } = e as FFIErrorFields;
 *   console.log(kind, backtrace.split('\n')[0].startsWith('  File "'));
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * ValueError true
 * ```
 */
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

/**
 * The constructor of an FFI error class: `new ValueError(message, { kind,
 * backtrace, cause })` makes an error of that class; its instances have the
 * base class's type (`Error`, `TypeError`, `RangeError`) and FFIErrorFields.
 * @group Errors
 */
type ErrorClass<Base extends new (message?: string) => Error> =
  new (message?: string, options?: { kind?: string; backtrace?: string; cause?: unknown }) => InstanceType<Base> & FFIErrorFields;

/**
 * The class every FFI error is an instance of, whatever its base class:
 * `e instanceof FFIError` tells an error raised through the FFI (or made
 * with one of the error classes) from any other JS error. An error of a
 * kind with no class (none registered with `registerError`) is a
 * RuntimeError that keeps its kind.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, FFIError, RuntimeError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('MyKindOfError', 'no class of its own');
 * } catch (e) {
 *   console.log(e instanceof FFIError, e instanceof RuntimeError, (e as FFIError).kind, (e as FFIError).message);
 * }
 * console.log(new TypeError('plain JS') instanceof FFIError);
 * ```
 * <!-- doc: output -->
 * ```text
 * true true MyKindOfError no class of its own
 * false
 * ```
 */
export class FFIError extends Error implements FFIErrorFields {
  /** The error kind, e.g. `ValueError`; also the error's `name`. */
  kind: string;
  /** ABI backtrace lines, most recent call first (see FFIErrorFields). */
  backtrace: string;
  /** Raised in C with an extra context: that object (its handle). */
  readonly extraContext?: unknown;
}
/**
 * tvm-ffi's `RuntimeError`: a failure that no other kind describes. The base
 * of apache/tvm's kinds (`InternalError`, `RPCError`, `OpError`, ...), so
 * `instanceof RuntimeError` catches them too.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, RuntimeError, InternalError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * const raise = rt.getGlobal('testing.test_raise_error');
 * for (const kind of ['RuntimeError', 'InternalError']) {
 *   try {
 *     raise(kind, 'raised in C');
 *   } catch (e) {
 *     console.log(e instanceof RuntimeError, e instanceof InternalError, `${(e as Error).name}: ${(e as Error).message}`);
 *   }
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true false RuntimeError: raised in C
 * true true InternalError: raised in C
 * ```
 */
export const RuntimeError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type RuntimeError = Error & FFIErrorFields;
/**
 * tvm-ffi's `ValueError`: an argument of the right type with a wrong value,
 * a missing global function, malformed input (JSON, wasm, a session
 * message).
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, ValueError } from 'webffi';
 * const rt = await load();
 * try {
 *   rt.getGlobal('ffi.json.Parse')('[1 2]');
 * } catch (e) {
 *   console.log(e instanceof ValueError, (e as ValueError).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true Expecting ',' delimiter: line 1 column 4 (char 3)
 * ```
 */
export const ValueError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type ValueError = Error & FFIErrorFields;
/**
 * tvm-ffi's `TypeError` (kind and `name` `TypeError`): an argument of the
 * wrong type. It extends JS's `TypeError`; exported as FFITypeError so as
 * not to shadow the global.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, FFITypeError } from 'webffi';
 * const rt = await load();
 * try {
 *   const input = JSON.parse('"not an array"'); // data from outside: typed any
 *   rt.getGlobal('ffi.ArraySize')(input);
 * } catch (e) {
 *   console.log(e instanceof FFITypeError, e instanceof TypeError, (e as FFITypeError).kind);
 *   console.log((e as FFITypeError).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true TypeError
 * Mismatched type on argument #0 when calling: `ffi.ArraySize(0: ffi.Array) -> int`. Expected `ffi.Array` but got `str`
 * ```
 */
export const FFITypeError: ErrorClass<TypeErrorConstructor>;
/** @hidden */
export type FFITypeError = TypeError & FFIErrorFields;
/**
 * tvm-ffi's `AttributeError`: a module has no function of that name, an
 * object no such field or method.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, AttributeError } from 'webffi';
 * const rt = await load();
 * const lib = rt.getGlobal('ffi.SystemLib')();
 * try {
 *   lib.getFunction('no_such_function');
 * } catch (e) {
 *   console.log(e instanceof AttributeError, (e as AttributeError).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true Module has no function 'no_such_function'
 * ```
 */
export const AttributeError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type AttributeError = Error & FFIErrorFields;
/**
 * tvm-ffi's `KeyError`: a key that is not in a map.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, KeyError } from 'webffi';
 * const rt = await load();
 * try {
 *   rt.getGlobal('ffi.MapGetItem')({ a: 1 }, 'b');
 * } catch (e) {
 *   console.log(e instanceof KeyError, (e as KeyError).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true key is not in Map
 * ```
 */
export const KeyError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type KeyError = Error & FFIErrorFields;
/**
 * tvm-ffi's `IndexError`: an index out of range. It extends JS's
 * `RangeError`.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, IndexError } from 'webffi';
 * const rt = await load();
 * try {
 *   rt.toFFI([1, 2, 3]).at(5);
 * } catch (e) {
 *   console.log(e instanceof IndexError, e instanceof RangeError, (e as IndexError).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true Index 5 out of bounds 3
 * ```
 */
export const IndexError: ErrorClass<RangeErrorConstructor>;
/** @hidden */
export type IndexError = RangeError & FFIErrorFields;
/**
 * tvm-ffi's `OverflowError`: a number that does not fit the FFI type (an int
 * past int64). It extends JS's `RangeError`.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, OverflowError } from 'webffi';
 * const rt = await load();
 * try {
 *   rt.getGlobal('ffi.Shape')(2n ** 64n);
 * } catch (e) {
 *   console.log(e instanceof OverflowError, (e as OverflowError).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true 18446744073709551616 does not fit in an int64
 * ```
 */
export const OverflowError: ErrorClass<RangeErrorConstructor>;
/** @hidden */
export type OverflowError = RangeError & FFIErrorFields;
/**
 * tvm-ffi's `MemoryError`: an allocation that failed (wasm memory, a device
 * buffer); the runtime keeps working.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, MemoryError } from 'webffi';
 * const rt = await load();
 * try {
 *   rt.empty([2 ** 33], 'uint8'); // 8 GiB: more than a wasm32 memory holds
 * } catch (e) {
 *   console.log(e instanceof MemoryError, (e as MemoryError).kind);
 * }
 * console.log(rt.empty([4], 'uint8').nbytes); // and the runtime works on
 * ```
 * <!-- doc: output -->
 * ```text
 * true MemoryError
 * 4
 * ```
 */
export const MemoryError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type MemoryError = Error & FFIErrorFields;
/**
 * tvm-ffi's `AssertionError`: a check in C (or C++: `TVM_FFI_ICHECK`)
 * failed.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, AssertionError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('AssertionError', 'x > 0');
 * } catch (e) {
 *   console.log(e instanceof AssertionError, `${(e as AssertionError).name}: ${(e as AssertionError).message}`);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true AssertionError: x > 0
 * ```
 */
export const AssertionError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type AssertionError = Error & FFIErrorFields;
/**
 * `InternalError`: a bug, not a bad argument (C++ code raises it from failed
 * internal checks). One of apache/tvm's error kinds (its Python package
 * registers them under TVMError, a RuntimeError; tvm-ffi itself registers
 * only the built-in kinds, and its C++ raises `InternalError` too): here it
 * extends RuntimeError, so `instanceof RuntimeError` catches it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, InternalError, RuntimeError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('InternalError', 'raised in C');
 * } catch (e) {
 *   console.log(e instanceof InternalError, e instanceof RuntimeError, `${(e as Error).name}: ${(e as Error).message}`);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true InternalError: raised in C
 * ```
 */
export const InternalError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type InternalError = RuntimeError;
/**
 * `RPCError`: a remote call failed for a reason other than the remote
 * function's own error (the session closed, the worker crashed, a limit was
 * reached, the peer broke the protocol). One of apache/tvm's error kinds
 * (its Python package registers them under TVMError, a RuntimeError; tvm-ffi
 * itself registers only the built-in kinds, and its C++ raises
 * `InternalError` too): here it extends RuntimeError, so `instanceof
 * RuntimeError` catches it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, serve, connectRuntime, RPCError } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1); // a worker would serve its runtime so
 * const remote = await connectRuntime(port2);
 * remote.close();
 * try {
 *   await remote.getGlobal('ffi.ArraySize')([1, 2]);
 * } catch (e) {
 *   console.log(e instanceof RPCError, (e as RPCError).message);
 * }
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true webffi session: the session was closed
 * ```
 */
export const RPCError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type RPCError = RuntimeError;
/**
 * `RPCSessionTimeoutError`: a remote call or session ran out of time (also
 * `instanceof RPCError`). One of apache/tvm's error kinds (its Python
 * package registers them under TVMError, a RuntimeError; tvm-ffi itself
 * registers only the built-in kinds, and its C++ raises `InternalError`
 * too): here it extends RuntimeError, so `instanceof RuntimeError` catches
 * it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, serve, connect, RPCError, RPCSessionTimeoutError } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1, { functions: { slow: () => new Promise((resolve) => setTimeout(resolve, 1000)) } });
 * const session = await connect(port2);
 * try {
 *   await session.call('slow', [], { timeout: 50 });
 * } catch (e) {
 *   console.log(e instanceof RPCSessionTimeoutError, e instanceof RPCError, (e as Error).message);
 * }
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true true webffi session: the call to `slow` timed out after 50 ms
 * ```
 */
export const RPCSessionTimeoutError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type RPCSessionTimeoutError = RPCError;
/**
 * `OpError`: an operator failed (apache/tvm's kind for errors in operator
 * code). One of apache/tvm's error kinds (its Python package registers them
 * under TVMError, a RuntimeError; tvm-ffi itself registers only the built-in
 * kinds, and its C++ raises `InternalError` too): here it extends
 * RuntimeError, so `instanceof RuntimeError` catches it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, OpError, RuntimeError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('OpError', 'raised in C');
 * } catch (e) {
 *   console.log(e instanceof OpError, e instanceof RuntimeError, `${(e as Error).name}: ${(e as Error).message}`);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true OpError: raised in C
 * ```
 */
export const OpError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type OpError = RuntimeError;
/**
 * `DiagnosticError`: compilation diagnostics were reported (apache/tvm's
 * kind). One of apache/tvm's error kinds (its Python package registers them
 * under TVMError, a RuntimeError; tvm-ffi itself registers only the built-in
 * kinds, and its C++ raises `InternalError` too): here it extends
 * RuntimeError, so `instanceof RuntimeError` catches it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, DiagnosticError, RuntimeError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('DiagnosticError', 'raised in C');
 * } catch (e) {
 *   console.log(e instanceof DiagnosticError, e instanceof RuntimeError, `${(e as Error).name}: ${(e as Error).message}`);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true DiagnosticError: raised in C
 * ```
 */
export const DiagnosticError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type DiagnosticError = RuntimeError;
/**
 * `ScheduleError`: a schedule primitive failed (apache/tvm's kind). One of
 * apache/tvm's error kinds (its Python package registers them under
 * TVMError, a RuntimeError; tvm-ffi itself registers only the built-in
 * kinds, and its C++ raises `InternalError` too): here it extends
 * RuntimeError, so `instanceof RuntimeError` catches it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, ScheduleError, RuntimeError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('ScheduleError', 'raised in C');
 * } catch (e) {
 *   console.log(e instanceof ScheduleError, e instanceof RuntimeError, `${(e as Error).name}: ${(e as Error).message}`);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true ScheduleError: raised in C
 * ```
 */
export const ScheduleError: ErrorClass<ErrorConstructor>;
/** @hidden */
export type ScheduleError = RuntimeError;

/**
 * Thrown by every call once a wasm trap (an out-of-bounds access, an
 * `abort()`, `unreachable`) has poisoned the instance: its memory can no
 * longer be trusted, so every later call refuses. Load a new runtime.
 * Not an FFIError: no C code raised it.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, FatalError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.trap')();
 * } catch (e) {
 *   console.log(e instanceof FatalError, (e as Error).message);
 * }
 * try {
 *   rt.toFFI([1]);
 * } catch (e) {
 *   console.log((e as Error).message);
 * }
 * console.log((await load()).toFFI([1]).length); // a new runtime works
 * ```
 * <!-- doc: output -->
 * ```text
 * true webffi: wasm trap (unreachable); the instance is poisoned and refuses every later call
 * webffi: the wasm instance was poisoned by an earlier trap (unreachable); load a new runtime
 * 1
 * ```
 */
export class FatalError extends Error {}

/**
 * Makes errors of `kind` instances of `cls` (constructed as `new
 * cls(message)`), wherever they are raised: in C, in a worker, on a TVM RPC
 * device. They get `kind` and `backtrace` as every FFI error does (and are
 * `instanceof FFIError`). Errors of a kind without a class are
 * RuntimeErrors that keep their kind.
 *
 * @group Errors
 * @example
 * ```ts
 * import { load, registerError, FFIError } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * class ShapeMismatch extends Error {}
 * registerError('ShapeMismatch', ShapeMismatch);
 * const rt = await loadTesting(await load());
 * try {
 *   rt.getGlobal('testing.test_raise_error')('ShapeMismatch', 'expected [2, 3]');
 * } catch (e) {
 *   console.log(e instanceof ShapeMismatch, e instanceof FFIError, (e as Error).name, (e as Error).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true true ShapeMismatch expected [2, 3]
 * ```
 */
export function registerError(kind: string, cls: new (message?: string) => Error): void;

/**
 * Where a runtime writes: the core's stdout (`printf` in C) through
 * `log`, load and backend warnings through `warn` (`LoadOptions.logger`;
 * default: the console).
 *
 * @group Runtime
 * @example
 * ```ts
 * import { load, type Logger } from 'webffi';
 * const warnings: string[] = [];
 * const logger: Logger = { warn: (message) => warnings.push(message) };
 * await load({ debugInfo: new Uint8Array([1, 2, 3]), logger }); // not a line table: one warning
 * console.log(warnings.length);
 * ```
 * <!-- doc: output -->
 * ```text
 * 1
 * ```
 */
export interface Logger {
  /** A line the core printed. */
  log?(message: string): void;
  /** A warning (a line table refused, a backend that failed to initialise, ...). */
  warn?(message: string): void;
}

/**
 * Memory operations of a backend that serves a device type, installed in C
 * through `webffi.SetDeviceAPI` once the backend is initialised: the C core
 * allocates tensors on the device through them, and `tensor.set()`,
 * `tensor.data()` and `toDevice()` move bytes through them.
 *
 * @group Backends
 * @example
 * ```ts
 * import { load, type Backend } from 'webffi';
 * // Device memory for ext_dev (DLPack device type 12) held in JS, behind integer handles.
 * const buffers = new Map<number, Uint8Array>();
 * let next = 1;
 * const hostMemory: Backend = {
 *   name: 'host-memory',
 *   deviceType: 'ext_dev',
 *   init() {},
 *   device: {
 *     alloc(nbytes) {
 *       buffers.set(next, new Uint8Array(nbytes));
 *       return next++;
 *     },
 *     free: (handle) => { buffers.delete(handle); },
 *     upload: (handle, offset, bytes) => buffers.get(handle)!.set(bytes, offset),
 *     download: async (handle, offset, nbytes) => buffers.get(handle)!.slice(offset, offset + nbytes),
 *     copy: (src, srcOffset, dst, dstOffset, nbytes) =>
 *       buffers.get(dst)!.set(buffers.get(src)!.subarray(srcOffset, srcOffset + nbytes), dstOffset),
 *   },
 *   globals: () => ({ 'host_memory.live_buffers': () => buffers.size }),
 * };
 * const rt = await load({ backends: [hostMemory] });
 * const t = await rt.tensor(new Int32Array([1, 2, 3])).toDevice('ext_dev');
 * console.log(String(t.device), t.dataPtr, await t.data());
 * console.log(rt.getGlobal('host_memory.live_buffers')());
 * ```
 * <!-- doc: output -->
 * ```text
 * ext_dev:0 1 Int32Array(3) [ 1, 2, 3 ]
 * 1
 * ```
 */
export interface BackendDevice {
  /** A non-zero integer handle: the data pointer C sees. */
  alloc(nbytes: number): number;
  /** Releases an allocation. */
  free(handle: number): void;
  /** Host to device: writes `bytes` at `byteOffset`. */
  upload(handle: number, byteOffset: number, bytes: Uint8Array): void;
  /** Device to host: reads `nbytes` at `byteOffset` (into `out` when given). */
  download(handle: number, byteOffset: number, nbytes: number, out?: Uint8Array): Promise<Uint8Array>;
  /** Device to device. */
  copy(src: number, srcOffset: number, dst: number, dstOffset: number, nbytes: number): void;
  /** The GPUBuffer behind a handle, for another library (`tensor.gpuBuffer`). */
  exportBuffer?(handle: number): HostGPUBuffer;
  /** The GPUDevice in use (`rt.gpuDevice`). */
  readonly gpuDevice?: HostGPUDevice | null;
}

/**
 * A device backend: what serves a device type other than the CPU (the built-
 * in WebGPU backend is one). Registered with `load({ backends })`,
 * `rt.backends.register`, an npm package that declares `"webffi": {
 * "backend": "./backend.js" }`, or `globalThis.webffiBackends` in a page;
 * initialised on first use.
 *
 * @group Backends
 * @example
 * ```ts
 * import { load, type Backend } from 'webffi';
 * // Device memory for ext_dev (DLPack device type 12) held in JS, behind integer handles.
 * const buffers = new Map<number, Uint8Array>();
 * let next = 1;
 * const hostMemory: Backend = {
 *   name: 'host-memory',
 *   deviceType: 'ext_dev',
 *   init() {},
 *   device: {
 *     alloc(nbytes) {
 *       buffers.set(next, new Uint8Array(nbytes));
 *       return next++;
 *     },
 *     free: (handle) => { buffers.delete(handle); },
 *     upload: (handle, offset, bytes) => buffers.get(handle)!.set(bytes, offset),
 *     download: async (handle, offset, nbytes) => buffers.get(handle)!.slice(offset, offset + nbytes),
 *     copy: (src, srcOffset, dst, dstOffset, nbytes) =>
 *       buffers.get(dst)!.set(buffers.get(src)!.subarray(srcOffset, srcOffset + nbytes), dstOffset),
 *   },
 *   globals: () => ({ 'host_memory.live_buffers': () => buffers.size }),
 * };
 * const rt = await load();
 * console.log(rt.backends.register(hostMemory));
 * const t = rt.tensor(new Float32Array([0.5]));
 * console.log(String((await t.toDevice('ext_dev')).device), rt.backends.get('host-memory') === hostMemory);
 * ```
 * <!-- doc: output -->
 * ```text
 * host-memory
 * ext_dev:0 true
 * ```
 */
export interface Backend {
  /** Unique among the runtime's backends. */
  name: string;
  /** The device type it serves ('webgpu', 'ext_dev', 15, ...). */
  deviceType?: string | number;
  /** Among backends of one device type the highest that initialises wins (default 0). */
  priority?: number;
  /** Lazy and single-flight; a failure is remembered and reported once. */
  init(runtime: Runtime): unknown | Promise<unknown>;
  /** Its device memory (no `device`: a backend of global functions only). */
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

/**
 * A backend, or a function of the runtime that makes one (called once per
 * runtime that registers it, so each runtime gets its own state).
 *
 * @group Backends
 * @example
 * ```ts
 * import { load, type BackendOrFactory } from 'webffi';
 * const counter: BackendOrFactory = (rt) => {
 *   let calls = 0;
 *   return { name: 'counter', init() {}, globals: () => ({ 'counter.next': () => ++calls }) };
 * };
 * const rt = await load({ backends: [counter] });
 * const next = rt.getGlobal('counter.next');
 * console.log(next(), next(), rt.backends.list().map((b) => b.name));
 * ```
 * <!-- doc: output -->
 * ```text
 * 1 2 [ 'cpu', 'webgpu', 'counter' ]
 * ```
 */
export type BackendOrFactory = Backend | ((runtime: Runtime) => Backend);

/**
 * A backend as `rt.backends.list()` reports it.
 *
 * @group Backends
 * @example
 * ```ts
 * import { load, type BackendStatus } from 'webffi';
 * const rt = await load({ autoloadBackends: false });
 * const [cpu]: BackendStatus[] = rt.backends.list();
 * console.log(cpu.name, cpu.device, cpu.priority, cpu.status, cpu.error);
 * ```
 * <!-- doc: output -->
 * ```text
 * cpu cpu 0 ready null
 * ```
 */
export interface BackendStatus {
  /** The backend's name. */
  name: string;
  /** The device type it serves (`cpu`, `webgpu`, ...), or null. */
  device: string | null;
  /** Among backends of one device type the highest that initialises wins. */
  priority: number;
  /** `registered` until first used; `failed` with `error`; `lost` after a device loss. */
  status: 'ready' | 'registered' | 'initialising' | 'failed' | 'lost' | 'disposed';
  /** Why it failed, or null. */
  error: unknown;
}

/**
 * A runtime's device backends (`rt.backends`): discovered at load,
 * initialised on first use.
 *
 * @group Backends
 * @example
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load();
 * console.log(rt.backends.list().map((b) => `${b.name}: ${b.status}`));
 * console.log(await rt.backends.ensure('cpu')); // CPU needs no backend
 * const gpu = await rt.backends.ensure('webgpu');  // initialises the WebGPU backend (Dawn in Node)
 * console.log(gpu?.name, rt.backends.get('webgpu')?.ready);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 'cpu: ready', 'webgpu: registered' ]
 * null
 * webgpu true
 * ```
 */
export interface Backends {
  /** Registers a backend: its name, or null (one warning through the logger) when it throws. */
  register(backend: BackendOrFactory): string | null;
  /** Initialises the backend NAME (once; a failure is remembered and rejects again). */
  init(name: string): Promise<Backend>;
  /** Initialises the best backend for a device; CPU needs none (resolves null). */
  ensure(device: string | number | Device): Promise<Backend | null>;
  /** The backend NAME, or null. */
  get(name: string): Backend | null;
  /** CPU first, then every registered backend. */
  list(): BackendStatus[];
}

/**
 * The dtypes tensors take by name (`rt.empty(shape, dtype)`,
 * `rt.tensor(data, { dtype })`).
 *
 * @group Tensors
 * @example
 * ```ts
 * import { load, type DTypeName } from 'webffi';
 * const rt = await load();
 * const names: DTypeName[] = ['int8', 'uint64', 'float16', 'bfloat16', 'bool'];
 * console.log(names.map((d) => rt.empty([2], d).nbytes));
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 2, 16, 4, 4, 2 ]
 * ```
 */
export type DTypeName =
  | 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64'
  | 'float16' | 'bfloat16' | 'float32' | 'float64' | 'bool';

/**
 * The typed arrays a tensor is made from and read into; each has its dtype
 * (a `Float32Array` is float32, a `BigInt64Array` int64, a
 * `Uint8ClampedArray` uint8).
 *
 * @group Tensors
 * @example
 * ```ts
 * import { load, type TensorData } from 'webffi';
 * const rt = await load();
 * const arrays: TensorData[] = [new Float64Array(1), new BigUint64Array(1), new Uint8ClampedArray(1)];
 * console.log(arrays.map((a) => String(rt.tensor(a).dtype)));
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 'float64', 'uint64', 'uint8' ]
 * ```
 */
export type TensorData =
  | Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array | Uint8ClampedArray
  | Uint16Array | Uint32Array | BigUint64Array | Float32Array | Float64Array;

/**
 * The typed array that holds each dtype's elements (float16 and bfloat16 as
 * their raw bits, bool as bytes): what `view()`, `toTypedArray()` and
 * `data()` give.
 *
 * @group Tensors
 * @example
 * ```ts
 * import { load, type DTypeArrays } from 'webffi';
 * const rt = await load();
 * const half = rt.tensor(new Uint16Array([0x3c00, 0x4000]), { dtype: 'float16' }); // 1.0, 2.0
 * const bits: DTypeArrays['float16'] = half.toTypedArray();
 * console.log(String(half.dtype), bits);
 * ```
 * <!-- doc: output -->
 * ```text
 * float16 Uint16Array(2) [ 15360, 16384 ]
 * ```
 */
export interface DTypeArrays {
  int8: Int8Array; int16: Int16Array; int32: Int32Array; int64: BigInt64Array;
  uint8: Uint8Array; uint16: Uint16Array; uint32: Uint32Array; uint64: BigUint64Array;
  float16: Uint16Array; bfloat16: Uint16Array; float32: Float32Array; float64: Float64Array;
  bool: Uint8Array;
}
/**
 * The array a view of a tensor made from T is (Uint8ClampedArray data is uint8).
 * @group Tensors
 */
type ViewOf<T extends TensorData> = T extends Uint8ClampedArray ? Uint8Array : T;
/**
 * The array a tensor of dtype D reads as (DTypeArrays), or any TensorData
 * when D is only known at run time.
 * @group Tensors
 */
type ArrayOfDType<D> = D extends DTypeName ? DTypeArrays[D] : TensorData;

/**
 * A tensor passed to C as a borrowed `DLTensor*` (`tensor.asDLTensorPtr()`)
 * instead of as an `ffi.Tensor` object: for C functions that take a raw
 * `DLTensor*`, as kernels compiled by TVM do.
 *
 * @group Tensors
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load();
 * // add_one.wasm: tests/modules/add_one.c, built with `webffi build --module`
 * const addOne = (await rt.loadModule(new URL('./add_one.wasm', import.meta.url))).getFunction('add_one');
 * const x = rt.tensor(new Float32Array([1, 2, 3]));
 * const y = rt.empty([3], 'float32');
 * addOne(x.asDLTensorPtr(), y.asDLTensorPtr()); // two DLTensor*, as a TVM kernel takes them
 * console.log(y.toTypedArray());
 * ```
 * <!-- doc: output -->
 * ```text
 * Float32Array(3) [ 2, 3, 4 ]
 * ```
 */
export interface DLTensorRef { readonly tensor: Tensor | TensorView; }

/**
 * The API an `ffi.Tensor` and a borrowed `DLTensor*` view share; A is the
 * typed array its elements read as (known from `rt.tensor(data)` and
 * `rt.empty(shape, dtype)`, the union where the dtype is only known at run
 * time).
 *
 * @group Tensors
 * @example
 * ```ts
 * import { load, type TensorLike } from 'webffi';
 * const rt = await load();
 * const describe = (t: TensorLike) => `${t.shape} ${t.strides} ${t.dtype} ${t.device} ${t.size} ${t.nbytes}`;
 * console.log(describe(rt.tensor(new Float32Array(6), { shape: [2, 3] })));
 * const x = rt.tensor(new Int32Array([1, 2, 3, 4]), { shape: [2, 2] });
 * x.view()[0] = 10;                     // zero-copy: writes the tensor
 * console.log(x.toTypedArray(), await x.data());
 * ```
 * <!-- doc: output -->
 * ```text
 * 2,3 3,1 float32 cpu:0 6 24
 * Int32Array(4) [ 10, 2, 3, 4 ] Int32Array(4) [ 10, 2, 3, 4 ]
 * ```
 */
export interface TensorLike<A extends TensorData = TensorData> {
  /** The number of dimensions. */
  readonly ndim: number;
  /** The extents, one per dimension. */
  readonly shape: number[];
  /** In elements. */
  readonly strides: number[];
  /** The element type. */
  readonly dtype: DataType;
  /** Where the data lives. */
  readonly device: Device;
  /** Bytes from `dataPtr` to the first element. */
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
  /** The number of elements. */
  readonly size: number;
  /** The bytes the elements take. */
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
  /** Passes the tensor to C as a raw `DLTensor*` instead of an `ffi.Tensor` object. */
  asDLTensorPtr(): DLTensorRef;
}

/**
 * An `ffi.Tensor`: a DLTensor whose data the C core allocated through a
 * device backend (the wasm heap on the CPU). Made by `rt.tensor(data)` (a
 * copy), `rt.empty(shape, dtype, device)` and `toDevice`, or returned by C;
 * `instanceof rt.Tensor`.
 *
 * @group Tensors
 * @example
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load();
 * const x = rt.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3] });
 * console.log(String(x), x instanceof rt.Tensor, x.typeKey);
 * const onGPU = await x.toDevice('webgpu');         // a copy on the GPU (WebGPU: Dawn in Node)
 * const sum = rt.getGlobal('webgpu.sum')(onGPU, 1);  // a kernel on the GPU: sums along axis 1
 * console.log(String(sum.device), await sum.data()); // downloaded
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * float32[2, 3]@cpu:0 true ffi.Tensor
 * webgpu:0 Float32Array(2) [ 6, 15 ]
 * ```
 */
export interface Tensor<A extends TensorData = TensorData> extends FFIObject, TensorLike<A> {}

/**
 * A `DLTensor*` that C passed to JS (a callback argument, a result): the
 * tensor API over memory C owns (`set()` writes it). As a callback argument
 * it is BORROWED for the call: every use after the callback returns throws a
 * ValueError, so keep a copy (`toTensor()`, `toTypedArray()`). Passed back
 * to C it is the same `DLTensor*`; `instanceof rt.TensorView`.
 *
 * @group Tensors
 * @example
 * ```ts
 * import { load, type TensorView } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * let kept: TensorView | undefined;
 * // testing.call_with_dltensor(f): calls f with a DLTensor* over a float32[2, 2] on its C stack,
 * // then returns the sum of the elements
 * const sum = rt.getGlobal('testing.call_with_dltensor')((view: TensorView) => {
 *   console.log(view instanceof rt.TensorView, view.shape, view.toTypedArray());
 *   view.set(new Float32Array([10, 20, 30, 40])); // writes C's memory
 *   kept = view;
 * });
 * console.log(sum);
 * try {
 *   kept!.toTypedArray();
 * } catch (e) {
 *   console.log((e as Error).name);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * true [ 2, 2 ] Float32Array(4) [ 1, 2, 3, 4 ]
 * 100
 * ValueError
 * ```
 */
export interface TensorView extends TensorLike {
  /** An `ffi.Tensor` on the same device holding a copy of the data. */
  toTensor(): Tensor;
}

/**
 * What `load()` takes: where the core is, where its output goes, which
 * device backends it gets, and what its errors carry.
 *
 * @group Runtime
 * @example
 * ```ts
 * import { load, type LoadOptions } from 'webffi';
 * const lines: string[] = [];
 * const options: LoadOptions = {
 *   wasm: new URL(import.meta.resolve('webffi/webffi.wasm')), // or bytes, or a compiled module
 *   logger: { log: (line) => lines.push(line), warn: (line) => lines.push(`warning: ${line}`) },
 *   autoloadBackends: false, // CPU only: no WebGPU
 *   backtraces: false,       // errors raised in C capture no C frames (cheaper)
 * };
 * const rt = await load(options);
 * console.log(rt.backends.list().map((b) => b.name), rt.backtraces, lines.length);
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 'cpu' ] false 0
 * ```
 */
export interface LoadOptions {
  /**
   * Where the core is: a URL (or a path in Node), bytes, a `Response` or a
   * compiled module. Default: webffi.wasm next to the package's JS (a
   * bundler that moves the JS and not the wasm needs it given here). A model
   * library TVM compiled (MLC/web-llm's `.wasm`) is a core too.
   */
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
  /**
   * Threads for C's parallel-for (`TVMBackendParallelLaunch`), the
   * caller's included: `n` loads the threaded core (`dist/webffi-mt.wasm`,
   * or a `wasm` built with `webffi build --threads`) with `n - 1` workers
   * started now, or rejects with a RuntimeError naming the two headers a
   * page needs where threads cannot exist; `'auto'` takes every core where
   * threads can exist, else warns once and loads the single-threaded core.
   * Default 1: the single-threaded core (docs/threads.md).
   */
  threads?: number | 'auto';
}

/**
 * Options of `Runtime.tensorFromGPUBuffer`: the tensor's shape and dtype,
 * where it starts in the buffer, and whether disposing it destroys the
 * buffer.
 *
 * @group Tensors
 * @example
 * ```ts
 * /// <reference types="@webgpu/types" />
 * import { load, type GPUBufferTensorOptions } from 'webffi';
 * const rt = await load(); // WebGPU: navigator.gpu, or npm `webgpu` in Node
 * await rt.backends.ensure('webgpu');
 * const device = rt.gpuDevice!; // the device another library would use too
 * // a buffer another library made: STORAGE | COPY_SRC | COPY_DST
 * const buffer = device.createBuffer({ size: 16, usage: 0x80 | 0x4 | 0x8 });
 * device.queue.writeBuffer(buffer, 0, new Float32Array([1, 2, 3, 4]));
 * const options: GPUBufferTensorOptions = { shape: [2], dtype: 'float32', byteOffset: 8 };
 * const t = await rt.tensorFromGPUBuffer(buffer, options); // no copy
 * const doubled = rt.getGlobal('webgpu.mul_scalar')(t, 2);
 * console.log(String(t), t.gpuBuffer === buffer, await doubled.data());
 * t.dispose(); // dispose: false (the default) leaves the buffer to its owner
 * console.log(buffer.size);
 * buffer.destroy();
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * float32[2]@webgpu:0 true Float32Array(2) [ 6, 8 ]
 * 16
 * ```
 */
export interface GPUBufferTensorOptions {
  shape: number[];
  /** Default float32; elements of whole bytes. */
  dtype?: DTypeName | DataType;
  /** Where the tensor starts in the buffer: a multiple of the element size (default 0). */
  byteOffset?: number;
  /** true: disposing the tensor destroys the buffer (webffi owns it). Default false: it stays the other library's. */
  dispose?: boolean;
}

/**
 * A loaded runtime: one wasm instance of the core (webffi's, or a model
 * library's tvm-ffi core), its global functions, modules, objects, tensors
 * and backends. Made by `load()`; disposed with `dispose()` or `using`.
 *
 * @group Runtime
 * @example
 * ```ts
 * import { load } from 'webffi';
 * using rt = await load();
 * rt.registerGlobal('js.twice', (x: number) => 2 * x);      // a JS function as a global
 * console.log(rt.getGlobal('js.twice')(21), rt.listGlobals().length > 90);
 * const inScope = rt.scope(() => rt.toFFI([rt.toFFI([1]), 2]).toJS()); // handles made inside are disposed
 * console.log(inScope, rt.liveJSValues >= 1);
 * const x = rt.tensor(new Float32Array([1, 2, 3]));
 * console.log(String(x), String(rt.device('cpu')), String(rt.dtype('int8')));
 * ```
 * <!-- doc: output -->
 * ```text
 * 42 true
 * [ [ 1 ], 2 ] true
 * float32[3]@cpu:0 cpu:0 int8
 * ```
 */
export interface Runtime {
  /** The core's ABI metadata (indices, sizes, offsets, versions). */
  readonly metadata: any;
  /** The wasm instance's exports (its memory, the C API): for tools, not for everyday use. */
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
  /** The names of every global function. */
  listGlobals(): string[];
  /** Removes a global function; whether it was there. */
  removeGlobal(name: string): boolean;
  /** A device: `rt.device('webgpu')`, `rt.device('webgpu:1')`, `rt.device(15, 0)`. */
  device(spec: string | number, id?: number): Device;
  /** A data type from its text (`float32`, `int64`, `float32x4`). */
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
  /** Makes handles of `typeKey` instances of `cls` (a subclass of FFIObject). */
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
  /**
   * The threads a parallel launch (`TVMBackendParallelLaunch`) runs on,
   * the caller's included: 1 on the single-threaded core.
   */
  readonly threads: number;
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

/**
 * Loads a runtime: compiles and instantiates the core (by default
 * `dist/webffi.wasm`, found next to the package's JS), registers the device
 * backends it finds, and resolves once the runtime can be called. Each call
 * makes an independent runtime. A failed fetch says where it looked and
 * how to pass the wasm (`load({ wasm })`) when a bundler moved it.
 *
 * `wasm` may also be a model library TVM compiled for the web (MLC/web-llm's
 * `.wasm`, with its own tvm-ffi core inside): the runtime then drives that
 * core through its C ABI alone, with the same API (see
 * `webffi/js/model_library.js` for its Relax VM and weights).
 *
 * @group Runtime
 * @example
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load();
 * console.log(rt.getGlobal('ffi.Array')(1, 2, 3).toJS(), rt.metadata.tvm_ffi_version.length);
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 1, 2, 3 ] 3
 * ```
 * @example
 * A model library as the core (snowflake-arctic-embed-s, web-llm's build):
 * <!-- doc: fixture=arctic-s -->
 * ```ts
 * import { load } from 'webffi';
 * const rt = await load({ wasm: 'arctic-s.wasm' }); // a path in Node; a URL in a page
 * console.log(rt.metadata.tvm_ffi_version.join('.'), rt.listGlobals().includes('vm.builtin.tensor_cache.update'));
 * const executable = rt.getGlobal('ffi.SystemLib')().getFunction('vm_load_executable')();
 * console.log(executable.typeKey);
 * rt.dispose();
 * ```
 * <!-- doc: output -->
 * ```text
 * 0.1.3 true
 * ffi.Module
 * ```
 */
export function load(options?: LoadOptions): Promise<Runtime>;

/**
 * The type of global NAME in a table of typed globals (`RuntimeGlobals`, or
 * what `webffi types` writes for a module): its signature when the table has
 * it, else an untyped `FFIFunction`.
 *
 * @group Runtime
 * @example
 * ```ts
 * import { load, type GlobalOf, type RuntimeGlobals } from 'webffi';
 * const rt = await load();
 * const parse: GlobalOf<RuntimeGlobals, 'ffi.json.Parse'> = rt.getGlobal('ffi.json.Parse'); // (text: string) => any
 * const untyped: GlobalOf<RuntimeGlobals, 'not.in.the.table'> = rt.toFFI(() => 1);       // an FFIFunction
 * console.log(parse('{"a": [1]}').get('a').toJS(), untyped());
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 1 ] 1
 * ```
 */
export type GlobalOf<Table, N extends string> = N extends keyof Table ? Handle & Table[N] : FFIFunction;

/**
 * An instance of a reflected type (a type C registered with fields and
 * methods, `TVMFFITypeRegisterField` / `TVMFFITypeRegisterMethod`): fields
 * read (and, when writable, write) as properties, methods are called as
 * methods.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, type ReflectedObject } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * const rt = await loadTesting(await load());
 * const pair: ReflectedObject = rt.objectClass('testing.TestIntPair').__ffi_init__(3, 4);
 * console.log(pair.typeKey, pair.a, pair.b, pair.sum(), String(pair));
 * ```
 * <!-- doc: output -->
 * ```text
 * testing.TestIntPair 3 4 7 testing.TestIntPair(a=3, b=4)
 * ```
 */
export interface ReflectedObject extends FFIObject {
  [member: string]: any;
}
/**
 * The class of a reflected type (`rt.objectClass(typeKey)`); static methods
 * such as `__ffi_init__` make instances, and so does `new` (through
 * `__ffi_init__`, a TypeError when the type has none). Handles of the type
 * returned by C are instances too.
 *
 * @group Objects
 * @example
 * ```ts
 * import { load, type ReflectedClass, type FFIObject } from 'webffi';
 * import { loadTesting } from 'webffi/js/testing.js';
 * interface Pair extends FFIObject { a: number; b: number; sum(): number }
 * const rt = await loadTesting(await load());
 * const Pair: ReflectedClass<Pair> = rt.objectClass<Pair>('testing.TestIntPair');
 * const p = new Pair(1, 2);
 * console.log(Pair.name, p instanceof Pair, p.sum(), rt.getGlobal('ffi.DeepCopy')(p) instanceof Pair);
 * ```
 * <!-- doc: output -->
 * ```text
 * testing.TestIntPair true 3 true
 * ```
 */
export interface ReflectedClass<T extends FFIObject = ReflectedObject> {
  new (...args: FFIInput[]): T;
  readonly prototype: T;
  readonly name: string;
  __ffi_init__(...args: FFIInput[]): T;
  [staticMethod: string]: any;
}

// ---------------------------------------------------------------- by value
/**
 * How `encodeValue` treats the buffers it meets: by default every typed
 * array and Bytes is copied; with `transfer` their ArrayBuffers are listed
 * for `postMessage`'s transfer list, so they move instead.
 *
 * @group By value
 * @example
 * ```ts
 * import { encodeValue, type EncodeOptions } from 'webffi';
 * const data = new Float64Array([1, 2, 3]);
 * const options: EncodeOptions = { transfer: [] };
 * const encoded = encodeValue({ data }, options);
 * console.log(options.transfer!.length, options.transfer![0] === data.buffer);
 * const { port1, port2 } = new MessageChannel();
 * port1.postMessage(encoded, options.transfer!); // moved: data is detached now
 * console.log(data.length);
 * port1.close();
 * port2.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 1 true
 * 0
 * ```
 */
export interface EncodeOptions {
  /** An array to push the ArrayBuffers of typed arrays and Bytes onto (to transfer them); without it, data is copied. */
  transfer?: TransferItem[];
  /** An array for the buffers encoding makes itself (a CPU tensor's copy of its data): they can move even when the caller's own must not. Defaults to `transfer`. */
  fresh?: TransferItem[];
}
/**
 * A webffi value or error as structured-clone-safe data, for `postMessage`,
 * IndexedDB or any other structured clone: FFI containers, reflected
 * objects, CPU tensors and errors (kind, message, backtrace, cause) with
 * what they hold. Live resources (Functions, Modules, opaque objects,
 * device memory) throw a TypeError:
 * ``cannot clone `ffi.Function` object [contained in `Array`]: REASON``.
 *
 * @group By value
 * @example
 * ```ts
 * import { load, encodeValue, decodeValue, ValueError } from 'webffi';
 * const rt = await load();
 * const data = encodeValue([rt.toFFI({ a: [1, 2] }), new ValueError('bad input')]);
 * const copy = structuredClone(data);                // what postMessage does
 * const [map, error] = decodeValue(copy);            // plain JS: Map, array, the error class
 * console.log(map, error instanceof ValueError, error.message);
 * try {
 *   encodeValue(rt.getGlobal('ffi.Array'));
 * } catch (e) {
 *   console.log((e as Error).name);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * Map(1) { 'a' => [ 1, 2 ] } true bad input
 * TypeError
 * ```
 */
export function encodeValue(value: unknown, options?: EncodeOptions): unknown;
/**
 * Rebuilds encoded data: errors as their registered class (no runtime
 * needed); FFI containers and reflected objects as handles of `runtime`, or
 * as plain JS without one. Data is validated first (it may come from an
 * untrusted peer): anything encodeValue cannot have made, or past
 * VALUE_LIMITS, throws a ValueError or TypeError saying what and where.
 *
 * @group By value
 * @example
 * ```ts
 * import { load, encodeValue, decodeValue } from 'webffi';
 * const rt = await load();
 * const data = encodeValue(rt.toFFI([1, [2, 3]]));
 * console.log(decodeValue(data));                      // plain JS
 * const handle = decodeValue(data, { runtime: rt });   // an ffi.Array of this runtime
 * console.log(String(handle), handle.typeKey);
 * try {
 *   decodeValue(['Q', 1]);
 * } catch (e) {
 *   console.log(`${(e as Error).name}: ${(e as Error).message}`);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 1, [ 2, 3 ] ]
 * (1, (2, 3)) ffi.Array
 * ValueError: decodeValue: not data made by encodeValue (tag "Q")
 * ```
 */
export function decodeValue(data: unknown, options?: { runtime?: Runtime | null }): any;
/**
 * Bounds of one encoded value, enforced by both encodeValue and decodeValue
 * (and so by every worker session): past one, encoding throws and decoding
 * refuses the data with a ValueError.
 *
 * @group By value
 * @example
 * ```ts
 * import { encodeValue, VALUE_LIMITS } from 'webffi';
 * console.log(VALUE_LIMITS.depth, VALUE_LIMITS.name);
 * let deep: unknown[] = [];
 * for (let i = 0; i < VALUE_LIMITS.depth + 1; i++) deep = [deep];
 * try {
 *   encodeValue(deep);
 * } catch (e) {
 *   console.log((e as Error).name);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * 256 256
 * ValueError
 * ```
 */
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

/**
 * What a `ValueCodec`'s `encode` is given: the caller's transfer list, a way
 * to encode nested values, and a way to refuse a value that cannot travel.
 *
 * @group By value
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { load, registerValueCodec, encodeValue, decodeValue, type ModuleObject } from 'webffi';
 * // Modules cannot travel (their code lives in one instance); this codec sends a
 * // module's name, and the receiving side finds the module it loaded under that name.
 * registerValueCodec('ffi.Module', {
 *   encode(module, ctx) {
 *     const name = (module as ModuleObject).name;
 *     if (name === null) ctx.refuse('the system library has no name to send');
 *     return name;
 *   },
 *   decode(name, ctx) {
 *     if (typeof name !== 'string') throw ctx.invalid('a module is sent as its name');
 *     if (!ctx.runtime) return name;
 *     return ctx.runtime.getGlobal('webffi.ModuleFindLoaded')(name) ?? name;
 *   },
 * });
 * const rt = await load();
 * const mod = await rt.loadModule(new URL('./add_one.wasm', import.meta.url));
 * const data = encodeValue({ mod });
 * const back = decodeValue(data, { runtime: rt });
 * console.log(JSON.stringify(data), back.mod.name, back.mod.getFunction('add_int')(1));
 * ```
 * <!-- doc: output -->
 * ```text
 * ["o",{"mod":["X","ffi.Module","add_one"]}] add_one 2
 * ```
 */
export interface ValueEncodeContext {
  /** The caller's transfer list when it asked to transfer, else null. */
  transfer: TransferItem[] | null;
  /** Encodes a nested value (a field of the object). */
  encode(value: unknown): unknown;
  /** Refuses the value: encodeValue throws a TypeError naming the type and `reason`. */
  refuse(reason: string): never;
}
/**
 * What a `ValueCodec`'s `decode` is given: the runtime to make handles in
 * (null: decode to plain JS), a way to decode nested data, and the error for
 * malformed data (which may come from an untrusted peer).
 *
 * @group By value
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { load, registerValueCodec, encodeValue, decodeValue, type ModuleObject } from 'webffi';
 * // Modules cannot travel (their code lives in one instance); this codec sends a
 * // module's name, and the receiving side finds the module it loaded under that name.
 * registerValueCodec('ffi.Module', {
 *   encode(module, ctx) {
 *     const name = (module as ModuleObject).name;
 *     if (name === null) ctx.refuse('the system library has no name to send');
 *     return name;
 *   },
 *   decode(name, ctx) {
 *     if (typeof name !== 'string') throw ctx.invalid('a module is sent as its name');
 *     if (!ctx.runtime) return name;
 *     return ctx.runtime.getGlobal('webffi.ModuleFindLoaded')(name) ?? name;
 *   },
 * });
 * const rt = await load();
 * const mod = await rt.loadModule(new URL('./add_one.wasm', import.meta.url));
 * const data = encodeValue({ mod });
 * const back = decodeValue(data, { runtime: rt });
 * console.log(JSON.stringify(data), back.mod.name, back.mod.getFunction('add_int')(1));
 * ```
 * <!-- doc: output -->
 * ```text
 * ["o",{"mod":["X","ffi.Module","add_one"]}] add_one 2
 * ```
 */
export interface ValueDecodeContext {
  /** The runtime to make handles in, or null (decode to plain JS). */
  runtime: Runtime | null;
  /** Decodes nested data. */
  decode(data: unknown): any;
  /** A ValueError about malformed `data` (throw it); decodeValue adds where it was. */
  invalid(what: string): Error;
}
/**
 * The by-value form of an FFI object type, by type key (how CPU tensors
 * travel): `encode` turns a handle into structured-clone-safe data, `decode`
 * turns that data back, validating it first.
 *
 * @group By value
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { load, registerValueCodec, encodeValue, decodeValue, type ModuleObject } from 'webffi';
 * // Modules cannot travel (their code lives in one instance); this codec sends a
 * // module's name, and the receiving side finds the module it loaded under that name.
 * registerValueCodec('ffi.Module', {
 *   encode(module, ctx) {
 *     const name = (module as ModuleObject).name;
 *     if (name === null) ctx.refuse('the system library has no name to send');
 *     return name;
 *   },
 *   decode(name, ctx) {
 *     if (typeof name !== 'string') throw ctx.invalid('a module is sent as its name');
 *     if (!ctx.runtime) return name;
 *     return ctx.runtime.getGlobal('webffi.ModuleFindLoaded')(name) ?? name;
 *   },
 * });
 * const rt = await load();
 * const mod = await rt.loadModule(new URL('./add_one.wasm', import.meta.url));
 * const data = encodeValue({ mod });
 * const back = decodeValue(data, { runtime: rt });
 * console.log(JSON.stringify(data), back.mod.name, back.mod.getFunction('add_int')(1));
 * ```
 * <!-- doc: output -->
 * ```text
 * ["o",{"mod":["X","ffi.Module","add_one"]}] add_one 2
 * ```
 */
export interface ValueCodec {
  /** The handle as structured-clone-safe data (or `ctx.refuse(reason)`). */
  encode(handle: FFIObject, ctx: ValueEncodeContext): unknown;
  /** The value back from that data, which it validates (`throw ctx.invalid(what)`). */
  decode(data: any, ctx: ValueDecodeContext): unknown;
}
/**
 * Registers how objects of `typeKey` travel by value (`encodeValue`,
 * `decodeValue`, worker sessions), in this thread: register it on both
 * sides. webffi registers one for `ffi.Tensor` (CPU tensors).
 *
 * @group By value
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { load, registerValueCodec, encodeValue, decodeValue, type ModuleObject } from 'webffi';
 * // Modules cannot travel (their code lives in one instance); this codec sends a
 * // module's name, and the receiving side finds the module it loaded under that name.
 * registerValueCodec('ffi.Module', {
 *   encode(module, ctx) {
 *     const name = (module as ModuleObject).name;
 *     if (name === null) ctx.refuse('the system library has no name to send');
 *     return name;
 *   },
 *   decode(name, ctx) {
 *     if (typeof name !== 'string') throw ctx.invalid('a module is sent as its name');
 *     if (!ctx.runtime) return name;
 *     return ctx.runtime.getGlobal('webffi.ModuleFindLoaded')(name) ?? name;
 *   },
 * });
 * const rt = await load();
 * const mod = await rt.loadModule(new URL('./add_one.wasm', import.meta.url));
 * const data = encodeValue({ mod });
 * const back = decodeValue(data, { runtime: rt });
 * console.log(JSON.stringify(data), back.mod.name, back.mod.getFunction('add_int')(1));
 * ```
 * <!-- doc: output -->
 * ```text
 * ["o",{"mod":["X","ffi.Module","add_one"]}] add_one 2
 * ```
 */
export function registerValueCodec(typeKey: string, codec: ValueCodec): void;

// --------------------------------------------------------- worker sessions
/**
 * What sessions talk through: a Worker, a MessagePort, a worker's global
 * (`self`), or a Node worker_threads `Worker`, `parentPort` or
 * `MessagePort`. Anything with `postMessage` and message events.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, type MessagePortLike } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * const server: MessagePortLike = port1; // in a worker: self, or parentPort
 * const client: MessagePortLike = port2; // in the page: the Worker
 * serve(await load(), server);
 * const session = await connect(client);
 * console.log(await session.call('ffi.ArraySize', [[1, 2, 3]]));
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 3
 * ```
 */
export interface MessagePortLike {
  postMessage(message: any, transfer?: readonly TransferItem[]): void;
}
/**
 * A message port behind one interface (`transportOf(port)`): sending with a
 * transfer list, and listening with a way to stop and to hear that the other
 * side is gone. What a `Session` is made on.
 *
 * @group Workers
 * @example
 * ```ts
 * import { transportOf, type Transport } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * const a: Transport = transportOf(port1);
 * const b: Transport = transportOf(port2);
 * const stop = b.listen((message) => {
 *   console.log('received', message);
 *   stop();
 *   port1.close();
 * }, (why) => console.log('gone:', why));
 * a.post({ hello: 'world' });
 * ```
 * <!-- doc: output -->
 * ```text
 * received { hello: 'world' }
 * ```
 */
export interface Transport {
  /** Sends a message, moving the items of `transfer`. */
  post(message: unknown, transfer?: TransferItem[]): void;
  /** Returns a function that stops listening; onFailure says the other side is gone. */
  listen(onMessage: (message: any) => void, onFailure: (why: string) => void): () => void;
}
/**
 * The `Transport` over a port: a Worker, a MessagePort, a worker global or a
 * Node worker_threads port. On Node's `Worker` it also hears the worker's
 * `error` and `exit` events, so a session learns that the worker died.
 *
 * @group Workers
 * @example
 * <!-- doc: file=worker.mjs -->
 * ```js
 * import { parentPort } from 'node:worker_threads';
 * import { load, serve } from 'webffi';
 * serve(load(), parentPort);
 * ```
 * ```ts
 * import { transportOf, Session } from 'webffi';
 * import { Worker } from 'node:worker_threads';
 * const worker = new Worker(new URL('./worker.mjs', import.meta.url));
 * const session = new Session(transportOf(worker), { timeout: 10000 }); // what connect(worker) does
 * await session.ready;
 * console.log(await session.call('ffi.ArraySize', [[1, 2]]));
 * session.close();
 * await worker.terminate();
 * ```
 * <!-- doc: output -->
 * ```text
 * 2
 * ```
 */
export function transportOf(port: MessagePortLike): Transport;
/**
 * The worker-session protocol version; both ends must speak the same
 * (`connect` fails with an RPCError naming both versions otherwise).
 *
 * @group Workers
 * @example
 * ```ts
 * import { PROTOCOL_VERSION } from 'webffi';
 * console.log(PROTOCOL_VERSION);
 * ```
 * <!-- doc: output -->
 * ```text
 * 2
 * ```
 */
export const PROTOCOL_VERSION: number;

/**
 * What `connect`, `connectRuntime` and `new Session` take: timeouts, the
 * runtime results are decoded into, and what error messages call the other
 * side.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, type SessionOptions, RPCSessionTimeoutError } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * const options: SessionOptions = { timeout: 5000, handshakeTimeout: 100, name: 'model worker' };
 * try {
 *   await connect(port2, options); // nothing serves port1 yet
 * } catch (e) {
 *   console.log(e instanceof RPCSessionTimeoutError, (e as Error).message);
 * }
 * const rt = await load();
 * serve(rt, port1);
 * const session = await connect(port2, { ...options, runtime: rt }); // results: handles of rt
 * const array = await session.call('ffi.Array', [1, 2]);
 * console.log(array.typeKey, String(array));
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true webffi session: the model worker did not answer the handshake within 100 ms: does it call serve(rt, self) (or serve(rt, parentPort) in Node)? One that loads for longer before serving needs a longer handshakeTimeout (0: no limit)
 * ffi.Array (1, 2)
 * ```
 */
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
/**
 * Options of one remote call (`session.call`, a remote global, a remote
 * handle's methods): its timeout, an AbortSignal, moving its buffers, and
 * how its result comes back.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, type CallOptions } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1, { functions: { 'my.total': (t: any) => t.toTypedArray().reduce((a: number, x: number) => a + x, 0) } });
 * const session = await connect(port2);
 * const data = new Float32Array([1, 2, 3]);
 * const options: CallOptions = { timeout: 1000, transfer: true };
 * console.log(await session.call('my.total', [data], options), data.length); // data moved to the other side
 * const controller = new AbortController();
 * const pending = session.call('my.total', [new Float32Array(1)], { signal: controller.signal });
 * controller.abort(new Error('not needed any more'));
 * console.log(await pending.catch((e) => (e as Error).message));
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 6 0
 * not needed any more
 * ```
 */
export interface CallOptions {
  /** ms before the call rejects with an RPCSessionTimeoutError (default: the session's `timeout`; 0: none). */
  timeout?: number;
  /** Cancels the call: it rejects with the signal's reason, and the worker aborts the served function's `this.signal`. */
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
/**
 * A reply as `session.callEncoded` gives it: the result or the error, still
 * encoded (`decodeValue` rebuilds them); `local` when the failure happened
 * on this side (a timeout, a closed session). For forwarding calls without
 * decoding them.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, encodeValue, decodeValue, type EncodedReply } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1);
 * const session = await connect(port2);
 * const reply: EncodedReply = await session.callEncoded('ffi.ArraySize', encodeValue([[1, 2, 3]]));
 * console.log(reply.ok, reply.ok && decodeValue(reply.value));
 * const failed = await session.callEncoded('no.such.global', encodeValue([]));
 * console.log(failed.ok, !failed.ok && decodeValue(failed.error).name);
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true 3
 * false ValueError
 * ```
 */
export type EncodedReply = { ok: true; value: unknown } | { ok: false; error: unknown; local?: boolean };

/**
 * The calling side of a worker session: calls the global functions the other
 * side serves (`serve`), with promises; arguments and results travel by
 * value, and results that cannot (GPU tensors, functions, modules) come back
 * as remote handles. Made by `connect(port)`.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, RemoteFunction } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1);
 * const session = await connect(port2);
 * console.log(await session.call('ffi.ArraySize', [[1, 2, 3]]));
 * const parse = session.getGlobal('ffi.json.Parse');
 * console.log(await parse('{"a": [1, 2]}'));                  // a map comes back by value: a JS Map
 * const f = await session.call('ffi.Array', [], { result: 'remote' }); // a handle instead of the value
 * console.log(f.type, await f.fetch(), await session.remoteCount());
 * session.close();
 * console.log(session.closed);
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 3
 * Map(1) { 'a' => [ 1, 2 ] }
 * ffi.Array [] 1
 * true
 * ```
 */
export class Session {
  /** A session over a transport (`connect` makes one and awaits `ready`). */
  constructor(transport: Transport, options?: SessionOptions);
  /** Settles when the handshake is done (rejects on a version mismatch or timeout). */
  readonly ready: Promise<void>;
  /** Whether `close()` was called or the other side is gone. */
  readonly closed: boolean;
  /** Calls a remote global function; remote errors reject as their own class. */
  call(name: string, args?: unknown[], options?: CallOptions): Promise<any>;
  /** The call with encoded arguments and an encoded reply (for forwarding); `op` names a session operation instead. */
  callEncoded(name: string | undefined, args: unknown, options?: CallOptions & { op?: string }, transfer?: TransferItem[]): Promise<EncodedReply>;
  /** A session operation ('tensor', 'loadModule', 'fetch', 'call', 'getFunction', 'info'; see serve) with plain arguments. */
  callOp(op: string, args: unknown[], options?: CallOptions): Promise<any>;
  /** An async function that calls the remote global `name`. */
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
 *
 * @group Remote objects
 * @example
 * ```ts
 * import { load, serve, connect, RemoteObject } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * const served = serve(await load(), port1);
 * const session = await connect(port2);
 * const list = await session.call('ffi.List', [1, 2], { result: 'remote' }); // stays in the worker
 * console.log(list instanceof RemoteObject, list.type, served.remoteCount);
 * console.log(await session.call('ffi.ListSize', [list]));  // passed back: the worker's own object
 * console.log(await list.fetch());                         // its value, by value
 * list.dispose();                                          // released in the worker
 * console.log(await session.remoteCount());
 * session.close();
 * console.log(list.sessionClosed);
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true ffi.List 1
 * 2
 * [ 1, 2 ]
 * 0
 * true
 * ```
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
/**
 * A remote tensor: shape, dtype and device are known locally; the data stays
 * in the worker (what a call returns for a GPU tensor, or
 * `remote.tensor(...)`), until `data()` downloads it.
 *
 * @group Remote objects
 * @example
 * ```ts
 * import { load, serve, connectRuntime, RemoteTensor } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1, { expose: ['webgpu.*'] });
 * const remote = await connectRuntime(port2);
 * const a = await remote.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2], device: 'webgpu' });
 * const b = await remote.getGlobal('webgpu.matmul')(a, a); // on the worker's GPU
 * console.log(b instanceof RemoteTensor, b.shape, b.dtype, b.device, b.size);
 * console.log(await b.data());
 * remote.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true [ 2, 2 ] float32 webgpu:0 4
 * Float32Array(4) [ 7, 10, 15, 22 ]
 * ```
 */
export class RemoteTensor extends RemoteObject {
  /** The extents, one per dimension. */
  readonly shape: readonly number[];
  /** e.g. 'float32'. */
  readonly dtype: string;
  /** e.g. 'webgpu:0', 'cpu:0'. */
  readonly device: string;
  /** The number of elements. */
  readonly size: number;
  /** The data as a typed array (downloaded in the worker, then transferred). */
  data(options?: CallOptions): Promise<TensorData>;
}
/**
 * A remote function: an ffi.Function or a JS function the worker keeps (what
 * a call returns for a function).
 *
 * @group Remote objects
 * @example
 * ```ts
 * import { load, serve, connect, RemoteFunction } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1, { functions: { 'my.adder': (n: number) => (x: number) => x + n } });
 * const session = await connect(port2);
 * const addTen = await session.call('my.adder', [10]);
 * console.log(addTen instanceof RemoteFunction, addTen.type, await addTen.call([5]));
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true function 15
 * ```
 */
export class RemoteFunction extends RemoteObject {
  /** Calls it in the worker. */
  call(args?: unknown[], options?: CallOptions): Promise<any>;
}
/**
 * A remote module: a C module loaded in the worker (`remote.loadModule`,
 * when the worker exposes `webffi.loadModule`).
 *
 * @group Remote objects
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { load, serve, connectRuntime, RemoteModule } from 'webffi';
 * import { readFileSync } from 'node:fs';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1, { expose: ['webffi.loadModule'] });
 * const remote = await connectRuntime(port2);
 * const mod = await remote.loadModule(readFileSync('add_one.wasm')); // its bytes (or a URL the worker can fetch)
 * const addInt = await mod.getFunction('add_int');
 * console.log(mod instanceof RemoteModule, mod.type, await addInt.call([41]));
 * console.log(await mod.getFunction('missing', { optional: true }));
 * remote.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * true ffi.Module 42
 * null
 * ```
 */
export class RemoteModule extends RemoteObject {
  /** The module's function; a miss rejects with an AttributeError, or resolves null with `{ optional: true }`. */
  getFunction(name: string, options?: CallOptions & { optional?: false }): Promise<RemoteFunction>;
  getFunction(name: string, options: CallOptions & { optional: true }): Promise<RemoteFunction | null>;
}
/**
 * Whether `value` is a remote handle (a `RemoteObject`: an object a worker
 * keeps for a session) rather than a value that travelled.
 *
 * @group Remote objects
 * @example
 * ```ts
 * import { load, serve, connect, isRemote } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1);
 * const session = await connect(port2);
 * const byValue = await session.call('ffi.Array', [1, 2]);
 * const remote = await session.call('ffi.Array', [1, 2], { result: 'remote' });
 * console.log(isRemote(byValue), isRemote(remote));
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * false true
 * ```
 */
export function isRemote(value: unknown): value is RemoteObject;

/**
 * A runtime served by a worker, behind one object (`connectRuntime`): its
 * globals as async functions, tensors made in the worker, modules loaded
 * there. Results that cannot travel by value (GPU tensors, functions,
 * modules) come back as remote handles.
 *
 * @group Workers
 * @example
 * <!-- doc: file=worker.mjs -->
 * ```js
 * // worker.mjs: loads the runtime and serves it
 * import { parentPort } from 'node:worker_threads';
 * import { load, serve } from 'webffi';
 * serve(load(), parentPort, { functions: { 'my.add': (a, b) => a + b } });
 * ```
 * ```ts
 * import { connectRuntime } from 'webffi';
 * import { Worker } from 'node:worker_threads';
 * const worker = new Worker(new URL('./worker.mjs', import.meta.url)); // in a page: new Worker(url, { type: 'module' })
 * {
 *   using remote = await connectRuntime(worker, { timeout: 10000 });
 *   console.log(await remote.getGlobal('my.add')(40, 2));
 *   const t = await remote.tensor(new Float32Array([1, 2, 3]));
 *   console.log(t.device, await t.data(), await remote.remoteCount());
 * } // closed here: the worker released every object of the session
 * await worker.terminate();
 * ```
 * <!-- doc: output -->
 * ```text
 * 42
 * cpu:0 Float32Array(3) [ 1, 2, 3 ] 1
 * ```
 */
export class RemoteRuntime {
  /** The session underneath. */
  readonly session: Session;
  /** Whether `close()` was called or the worker is gone. */
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
/**
 * Connects to a Worker (browser module Worker, Node worker_threads) that
 * serves its runtime with `serve()`, and resolves once the worker answered
 * the handshake (after `handshakeTimeout`: an RPCSessionTimeoutError; a
 * worker that crashed or failed to load its imports: an RPCError that says
 * so).
 *
 * @group Workers
 * @example
 * <!-- doc: file=worker.mjs -->
 * ```js
 * // worker.mjs (in a browser module Worker: serve(load(), self))
 * import { parentPort } from 'node:worker_threads';
 * import { load, serve } from 'webffi';
 * serve(load(), parentPort);
 * ```
 * ```ts
 * import { connectRuntime } from 'webffi';
 * import { Worker } from 'node:worker_threads';
 * const worker = new Worker(new URL('./worker.mjs', import.meta.url)); // in a page: new Worker(url, { type: 'module' })
 * const remote = await connectRuntime(worker);
 * const parse = remote.getGlobal('ffi.json.Parse');
 * console.log(await parse('[1, 2.5, "x"]'));
 * remote.close();
 * await worker.terminate();
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 1, 2.5, 'x' ]
 * ```
 */
export function connectRuntime(worker: MessagePortLike, options?: SessionOptions): Promise<RemoteRuntime>;
/**
 * Connects to a worker that serves a runtime (or forwards to one) and
 * resolves with the `Session` once the handshake is done. `connectRuntime`
 * wraps the session in a runtime-like object.
 *
 * @group Workers
 * @example
 * <!-- doc: file=worker.mjs -->
 * ```js
 * // worker.mjs (in a browser module Worker: serve(load(), self))
 * import { parentPort } from 'node:worker_threads';
 * import { load, serve } from 'webffi';
 * serve(load(), parentPort);
 * ```
 * ```ts
 * import { connect, ValueError } from 'webffi';
 * import { Worker } from 'node:worker_threads';
 * const worker = new Worker(new URL('./worker.mjs', import.meta.url));
 * const session = await connect(worker, { timeout: 10000 });
 * console.log(await session.call('ffi.ArraySize', [[1, 2, 3]]));
 * try {
 *   await session.call('ffi.ModuleLoadFromFile', ['x.wasm']); // not exposed to peers by default
 * } catch (e) {
 *   console.log(e instanceof ValueError, (e as Error).message);
 * }
 * session.close();
 * await worker.terminate();
 * ```
 * <!-- doc: output -->
 * ```text
 * 3
 * true webffi session: this worker does not expose `ffi.ModuleLoadFromFile` (serve's expose option lists the globals a peer may call)
 * ```
 */
export function connect(port: MessagePortLike, options?: SessionOptions): Promise<Session>;
/**
 * Protocol bounds: calls in flight per server (default of `maxInFlight`),
 * characters of a function name, remote objects per session (default of
 * `maxRemotes`), ids per release message, and the default handshake
 * timeout (ms).
 *
 * @group Workers
 * @example
 * ```ts
 * import { SESSION_LIMITS } from 'webffi';
 * console.log(SESSION_LIMITS);
 * ```
 * <!-- doc: output -->
 * ```text
 * {
 *   inFlight: 1024,
 *   name: 1024,
 *   remotes: 65536,
 *   release: 4096,
 *   handshake: 30000
 * }
 * ```
 */
export const SESSION_LIMITS: Readonly<{ inFlight: number; name: number; remotes: number; release: number; handshake: number }>;
/**
 * Globals a peer cannot call unless `serve`'s `expose` names them, on every
 * kind of runtime (webffi's core and a model library): the test fixtures,
 * module loading, the function registry and type mutation; what hands out
 * or takes raw addresses (`wasm.*`, device APIs, streams, raw copies, RPC
 * internals); a model library's VM internals, caches and registries
 * (`vm.builtin.*`, `tvmjs.*`, `relax.*`, parameter files); timers and
 * profilers that run as long as they are told (docs/security.md).
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, PEER_DENIED } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * console.log(PEER_DENIED.join(' '));
 * const { port1 } = new MessageChannel();
 * // expose everything by default, and module loading too
 * serve(await load(), port1, { expose: (name, exposedByDefault) => exposedByDefault || name === 'webffi.loadModule' });
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * testing.* webffi.* ffi.Module* ffi.SystemLib ffi.Function* ffi.GetGlobalFuncMetadata ffi.MakeField* ffi._* wasm.* device_api.* runtime.Device_* runtime.TVMSetStream runtime.TVMTensorCopyFromBytes runtime.TVMTensorCopyToBytes runtime.TVMTensorCreateView rpc.* tvm.rpc.* vm.builtin.* tvmjs.* relax.* runtime.LoadParams* runtime.SaveParams* cache_flush_* __* runtime.RPCTimeEvaluator profiling.* runtime.profiling.*
 * ```
 */
export const PEER_DENIED: readonly string[];
/**
 * The runtime-wide budget every peer of a runtime (TVM RPC clients, worker
 * session peers) is charged against together, whatever each one's own
 * limits allow: what is left is the owner's (docs/security.md).
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, peerBudget, type PeerBudget } from 'webffi';
 * const rt = await load();
 * const budget: PeerBudget = peerBudget(rt)!;
 * const MiB = 2 ** 20;
 * console.log(budget.memoryBytes / MiB, budget.deviceBytes / MiB, budget.timerMs, budget.keptBytes / MiB);
 * console.log(budget.active, budget.deviceHeld, budget.heapInUse > 0);
 * ```
 * <!-- doc: output -->
 * ```text
 * 1536 1024 2000 512
 * 0 0 true
 * ```
 */
export interface PeerBudget {
  /**
   * How many bytes the wasm heap may hold in use while a peer's request runs
   * (default 1.5 GiB of the 2 GiB a build reaches; the rest is the owner's).
   * Over a model library, whose allocator webffi cannot count, the size of
   * wasm memory: a peer's request may not grow it past this, and peers are
   * not served while it is past.
   */
  memoryBytes: number;
  /**
   * Device memory all peers may hold together (default 1 GiB): what their
   * requests allocated (kDevAllocData, kernel outputs, tensors a session
   * keeps) and has not been freed.
   */
  deviceBytes: number;
  /** Device memory they hold now. */
  readonly deviceHeld: number;
  /** How long one runtime.RPCTimeEvaluator evaluation may run synchronously (default 2000 ms). */
  timerMs: number;
  /** Peer requests running now. */
  readonly active: number;
  /** Bytes of the wasm heap in use now (all of it, the owner's included; over a model library, the size of wasm memory). */
  readonly heapInUse: number;
  /** JS data (strings, bytes) the worker sessions of this thread may keep for their peers together (default 512 MiB). */
  keptBytes: number;
  /** Kept now. */
  readonly kept: number;
}
/**
 * The runtime's peer budget (what every peer of it may use together, and
 * what they use now), for every kind of runtime; null for what is not a runtime.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, peerBudget } from 'webffi';
 * const rt = await load();
 * const { memoryBytes, timerMs, active } = peerBudget(rt)!;
 * console.log(memoryBytes === 1.5 * 2 ** 30, timerMs, active);
 * ```
 * <!-- doc: output -->
 * ```text
 * true 2000 0
 * ```
 */
export function peerBudget(rt: Runtime): PeerBudget | null;
/**
 * Changes the runtime's peer budget: the fields given (each a positive
 * integer) replace the current ones; returns the budget. A bad value is a
 * TypeError and changes nothing.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, setPeerBudget, FFIError } from 'webffi';
 * const rt = await load();
 * // peers may take the heap to 256 MiB and time evaluations for 500 ms at most
 * const budget = setPeerBudget(rt, { memoryBytes: 256 * 2 ** 20, timerMs: 500 });
 * console.log(budget.memoryBytes / 2 ** 20, budget.timerMs);
 * try {
 *   setPeerBudget(rt, { timerMs: 0 });
 * } catch (e) {
 *   console.log(e instanceof FFIError && e.kind, (e as Error).message);
 * }
 * ```
 * <!-- doc: output -->
 * ```text
 * 256 500
 * TypeError setPeerBudget: timerMs is an integer from 1 to 2147483647
 * ```
 */
export function setPeerBudget(rt: Runtime, budget: Partial<Pick<PeerBudget, 'memoryBytes' | 'deviceBytes' | 'timerMs' | 'keptBytes'>>): PeerBudget;
/**
 * What `serve` takes: which globals a peer may call, the bounds of what it
 * may hold and run at once, and JS functions served by name.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, type ServeOptions } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * const options: ServeOptions = {
 *   expose: ['ffi.Array*', 'my.*'],
 *   maxInFlight: 8,
 *   maxRemotes: 100,
 *   functions: { 'my.hello': (name: string) => `hello, ${name}` },
 * };
 * serve(await load(), port1, options);
 * const session = await connect(port2);
 * console.log(await session.call('my.hello', ['worker']), await session.call('ffi.ArraySize', [[1]]));
 * console.log(await session.call('ffi.MapSize', [{}]).catch((e) => e.name)); // not in `expose`
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * hello, worker 1
 * ValueError
 * ```
 */
export interface ServeOptions {
  /**
   * The globals a peer may call: names and `prefix*` patterns (`'*'`: all),
   * exactly those; or a predicate given the name and whether the default
   * exposes it. Default: every global except PEER_DENIED when serving a
   * runtime; everything when forwarding (the next server or the TVM RPC
   * device decides). A call to a global not exposed is answered with a
   * ValueError saying so (`this worker does not expose NAME`); when
   * forwarding, a list given here also governs module loading
   * (`webffi.loadModule`).
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
/**
 * `this` inside a served function (`serve`'s `functions`): the signal that
 * aborts when the caller cancels the call or it times out, and the runtime
 * served.
 *
 * @group Workers
 * @example
 * ```ts
 * import { load, serve, connect, type ServedCallContext } from 'webffi';
 * import { MessageChannel } from 'node:worker_threads';
 * const { port1, port2 } = new MessageChannel();
 * serve(await load(), port1, {
 *   functions: {
 *     async 'my.wait'(this: ServedCallContext, ms: number) {
 *       await new Promise((resolve, reject) => {
 *         const timer = setTimeout(resolve, ms);
 *         this.signal.addEventListener('abort', () => { clearTimeout(timer); reject(this.signal.reason); });
 *       });
 *       return this.runtime.toFFI([ms]);
 *     },
 *   },
 * });
 * const session = await connect(port2);
 * console.log(await session.call('my.wait', [10]));
 * console.log(await session.call('my.wait', [60000], { timeout: 20 }).catch((e) => e.name));
 * session.close();
 * port1.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * [ 10 ]
 * RPCSessionTimeoutError
 * ```
 */
export interface ServedCallContext {
  /** Aborts when the caller cancels the call or it times out. */
  readonly signal: HostAbortSignal;
  /** The runtime served. */
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
 * Returns `close()` (stop serving, release every remote object) and the
 * number of objects held for the peer.
 *
 * @group Workers
 * @example
 * <!-- doc: file=worker.mjs -->
 * ```js
 * // worker.mjs (in a browser module Worker: serve(load(), self, ...))
 * import { parentPort } from 'node:worker_threads';
 * import { load, serve } from 'webffi';
 * const rt = load().then((rt) => {
 *   rt.registerGlobal('my.norm', (t) => Math.hypot(...t.toTypedArray()));
 *   return rt;
 * });
 * serve(rt, parentPort, { expose: ['my.*'] }); // listens at once; calls wait for the runtime
 * ```
 * ```ts
 * import { connect } from 'webffi';
 * import { Worker } from 'node:worker_threads';
 * const worker = new Worker(new URL('./worker.mjs', import.meta.url));
 * const session = await connect(worker);
 * console.log(await session.call('my.norm', [new Float32Array([3, 4])])); // a typed array arrives as a CPU tensor
 * session.close();
 * await worker.terminate();
 * ```
 * <!-- doc: output -->
 * ```text
 * 5
 * ```
 */
export function serve(target: Runtime | Session | RPCSession | Promise<Runtime | Session | RPCSession>, port: MessagePortLike,
  options?: ServeOptions): { close(): void; readonly remoteCount: number };

// ------------------------------------------------------------------ TVM RPC
/**
 * Limits of a served TVM RPC device (each can be set per server, `limits`):
 * the largest packet, the handles and device bytes a peer may hold, and the
 * bytes of its in-memory work directory.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, RPC_LIMITS } from 'webffi';
 * console.log(RPC_LIMITS);
 * const device = await listenRPC(await load(), { port: 0, limits: { maxDeviceBytes: 64 << 20, maxHandles: 1024 } });
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * {
 *   maxPacketBytes: 67108864,
 *   maxHandles: 65536,
 *   maxDeviceBytes: 1073741824,
 *   maxUploadBytes: 268435456
 * }
 * ```
 */
export const RPC_LIMITS: Readonly<{ maxPacketBytes: number; maxHandles: number; maxDeviceBytes: number; maxUploadBytes: number }>;
/**
 * What a TVM RPC device serves and to whom (`listenRPC`, `joinRPCProxy`,
 * `createRPCEndpoint`): its key, the globals a peer may reach, the work
 * directory, limits, the owner's own functions, and chained sessions.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC, type RPCServeOptions } from 'webffi';
 * const rt = await load();
 * rt.registerGlobal('demo.add', (a: number, b: number) => a + b);
 * const options: RPCServeOptions = {
 *   key: 'lab-device',
 *   expose: ['demo.*'],
 *   functions: { 'demo.whoami': () => 'served by the owner' },
 *   onError: (error, where) => console.error(where, error.message),
 * };
 * const device = await listenRPC(rt, { ...options, port: 0 });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'lab-device');
 * console.log(await session.call('demo.add', [1, 2]), await session.call('demo.whoami'));
 * console.log(await session.lookupGlobal('ffi.String')); // not exposed: reads as missing
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 3 served by the owner
 * null
 * ```
 */
export interface RPCServeOptions {
  /** The server key (default 'webffi'): TVM's client connects with key 'webffi' (it sends 'client:webffi'). */
  key?: string;
  /** The globals the peer may reach, as ServeOptions.expose (default every global but PEER_DENIED). */
  expose?: readonly string[] | ((name: string, exposedByDefault: boolean) => boolean);
  /** Serve tvm.rpc.server.upload/download/remove/listdir/load_module (in-memory files, webffi wasm modules). Default false. */
  allowUpload?: boolean;
  /** Per-server RPC_LIMITS. */
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
/**
 * A TVM tracker to register a TCP device with (`listenRPC`'s `tracker`):
 * 'host:port', or its address and settings.
 *
 * @group TVM RPC
 * @example
 * <!-- doc: not-run="needs a TVM tracker (python -m tvm.exec.rpc_tracker --port 9190)" -->
 * ```ts
 * import { load, listenRPC, type RPCTrackerSpec } from 'webffi';
 * const tracker: RPCTrackerSpec = { address: '127.0.0.1:9190', customAddr: '10.0.0.5', pingMs: 1000 };
 * const device = await listenRPC(await load(), { port: 9090, key: 'webgpu-box', tracker });
 * await device.tracker!.ready; // registered: TVM's clients ask the tracker for key 'webgpu-box'
 * console.log(device.tracker!.matchKey !== null);
 * await device.close();
 * ```
 */
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
/**
 * What `listenRPC` takes: the serve options, the TCP address, the
 * connections served at once, and a tracker to register with.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, type RPCListenOptions } from 'webffi';
 * const options: RPCListenOptions = { port: 0, host: '127.0.0.1', maxConnections: 4, expose: ['ffi.Array*'] };
 * const device = await listenRPC(await load(), options);
 * console.log(device.host, device.port > 0, device.connections, device.tracker);
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 127.0.0.1 true 0 null
 * ```
 */
export interface RPCListenOptions extends RPCServeOptions {
  /** Registers with a TVM tracker under `key`; it hands out one session at a time. */
  tracker?: RPCTrackerSpec;
  /** Default 9090; 0 picks a free port. */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /**
   * Connections served at once (default 16). A connection past it takes the
   * slot of the oldest one still in its handshake, else of the served
   * session idle the longest (owed no reply, quiet for a second at least);
   * when every slot is busy, it is refused.
   */
  maxConnections?: number;
  /** How long a connection may take to send its handshake (ms; default 10000); past it, it is closed. */
  handshakeMs?: number;
  /**
   * How long a served session may send nothing while the server owes it
   * nothing (ms; default 0: no limit, an idle session keeps its slot until a
   * newcomer needs it); past it, it is closed.
   */
  idleMs?: number;
}
/**
 * Serves a runtime to TVM RPC clients on TCP (Node): TVM's Python client
 * (`tvm.rpc.connect(host, port, key='webffi')`) or `connectRPC` reach its
 * exposed globals, its devices (CPU, WebGPU) and, with `allowUpload`,
 * modules they upload. Resolves once listening.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const rt = await load();
 * rt.registerGlobal('demo.scale', (t: any, k: number) => rt.tensor(t.toTypedArray().map((x: number) => x * k)));
 * const device = await listenRPC(rt, { port: 0, expose: ['demo.*'] });
 * // the client side: TVM's Python client, or connectRPC
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const x = await session.tensor(new Float32Array([1, 2, 3]));
 * const y = await session.call('demo.scale', [x, 10]);
 * console.log(await y.data(), device.connections);
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * Float32Array(3) [ 10, 20, 30 ] 1
 * ```
 */
export function listenRPC(rt: Runtime, options?: RPCListenOptions): Promise<{
  port: number; host: string; readonly connections: number;
  /** With options.tracker: the first registration, and the match key the tracker has now (null while a tracker session runs). */
  tracker: { ready: Promise<void>; readonly matchKey: string | null } | null;
  close(): Promise<void>;
}>;
/**
 * What `joinRPCProxy` takes: the serve options, a WebSocket class where the
 * host has none, and the delay before joining again.
 *
 * @group TVM RPC
 * @example
 * <!-- doc: not-run="needs a TVM RPC proxy (python -m tvm.exec.rpc_proxy --port 9190)" -->
 * ```ts
 * import { load, joinRPCProxy, type RPCProxyOptions } from 'webffi';
 * // Node 20 has no global WebSocket: pass the `ws` package's class there
 * const options: RPCProxyOptions = { key: 'browser-gpu', WebSocket: globalThis.WebSocket, retryMs: 2000, expose: ['webgpu.*'] };
 * const device = joinRPCProxy(await load(), 'ws://127.0.0.1:9190/ws', options);
 * await device.ready;
 * device.close();
 * ```
 */
export interface RPCProxyOptions extends RPCServeOptions {
  /** A WebSocket class (Node 20 has no global one: e.g. the `ws` package's). */
  WebSocket?: unknown;
  /** Delay before joining again after a failure (default 1000 ms; 0: give up). */
  retryMs?: number;
  /**
   * How long a paired client may send nothing while the device owes it
   * nothing (ms; default 1800000, 30 minutes: the device serves no one else
   * meanwhile, and sees no newcomer to give way to; 0: no limit).
   */
  idleMs?: number;
}
/**
 * Joins a TVM RPC proxy (ws://host:port/ws, or host:port over TCP in Node)
 * as a device, as TVM's web runtime does from a browser tab; joins again
 * after each session. TVM's client then reaches it through the proxy
 * (`tvm.rpc.connect(proxy_host, proxy_port, key='webffi')`).
 *
 * @group TVM RPC
 * @example
 * <!-- doc: not-run="needs a TVM RPC proxy (python -m tvm.exec.rpc_proxy --port 9190)" -->
 * ```ts
 * import { load, joinRPCProxy } from 'webffi';
 * const rt = await load(); // in a page: navigator.gpu makes it a WebGPU device
 * const device = joinRPCProxy(rt, 'ws://127.0.0.1:9190/ws', { key: 'webffi' });
 * await device.ready;        // joined; TVM's client can connect now
 * console.log(device.sessions);
 * device.close();
 * ```
 */
export function joinRPCProxy(rt: Runtime, url: string, options?: RPCProxyOptions): { ready: Promise<void>; readonly sessions: number; close(): void };
/**
 * One TVM RPC server endpoint over any byte stream (a socket, a WebSocket, a
 * WebRTC channel): feed it what arrives, send what it gives. One endpoint
 * serves one connection; `listenRPC` and `joinRPCProxy` are built on it.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, createRPCEndpoint, connectRPC } from 'webffi';
 * import { createServer } from 'node:net';
 * const rt = await load();
 * rt.registerGlobal('demo.hello', () => 'hello over my own transport');
 * const server = createServer((socket) => {
 *   const endpoint = createRPCEndpoint(rt, {
 *     expose: ['demo.*'],
 *     send: (bytes) => { socket.write(bytes.slice()); }, // copied: the bytes are reused after send returns
 *     onClose: () => socket.end(),
 *   });
 *   socket.on('data', (chunk) => {
 *     if (endpoint.feed(new Uint8Array(chunk)) === 'closed') socket.end();
 *   });
 *   socket.on('close', () => endpoint.close());
 * });
 * await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
 * const { port } = server.address() as { port: number };
 * const session = await connectRPC(`127.0.0.1:${port}`, 'webffi');
 * console.log(await session.call('demo.hello'));
 * await session.close();
 * server.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * hello over my own transport
 * ```
 */
export function createRPCEndpoint(rt: Runtime, options: RPCServeOptions & { /** A large reply comes in pieces reused once release() is called (call it when done with bytes kept past the call, or never). */
  send(bytes: Uint8Array, release?: () => void): void; onClose?(error?: Error): void }):
  { feed(bytes: Uint8Array): 'open' | 'closed'; close(): void; readonly closed: boolean; readonly handleCount: number };
/**
 * Serves one open transport until it ends: a connection your own server
 * accepted, wrapped by `socketTransport` (a Node socket) or
 * `webSocketTransport` (an open WebSocket) from
 * `webffi/js/rpc/transport.js`. Resolves with the error that ended it, if
 * any.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, serveConnection, connectRPC } from 'webffi';
 * import { socketTransport } from 'webffi/js/rpc/transport.js';
 * import { createServer } from 'node:net';
 * const rt = await load();
 * const server = createServer((socket) => {
 *   serveConnection(rt, socketTransport(socket), { key: 'webffi' }).then(({ error }) => console.log('served', error ?? 'cleanly'));
 * });
 * await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
 * const { port } = server.address() as { port: number };
 * const session = await connectRPC(`127.0.0.1:${port}`, 'webffi');
 * console.log(await session.call('ffi.String', ['over my socket']));
 * await session.close();
 * server.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * over my socket
 * served cleanly
 * ```
 */
export function serveConnection(rt: Runtime, transport: unknown, options?: RPCServeOptions): Promise<{ error?: Error }>;

/**
 * A remote object of a TVM RPC session: a handle on the server (what a
 * remote call returns for an object). It stays on the server; passed back in
 * a later call of the same session, the server gets its own object.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0 });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const array = await session.call('ffi.Array', [1, 2, 3]);
 * console.log(array.constructor.name, array.typeIndex, await session.call('ffi.ArraySize', [array]));
 * array.dispose(); // freed on the server
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * RPCObject 71 3
 * ```
 */
export class RPCObject implements Disposable {
  /** The session it belongs to. */
  readonly session: RPCSession;
  /** The object's type index on the server. */
  readonly typeIndex: number;
  /** The server's handle (an id, never a pointer on a webffi device). */
  readonly handle: number | bigint;
  /** Whether `dispose()` was called. */
  readonly disposed: boolean;
  /** Frees it on the server (in order with the session's requests). */
  dispose(): void;
  [Symbol.dispose](): void;
  /** TVM RPC keeps objects on the server: rejects with an RPCError. */
  fetch(): Promise<never>;
}
/**
 * A module on a TVM RPC server (`session.loadModule`, or a call that
 * returned one): its functions and timers.
 *
 * @group TVM RPC
 * @example
 * <!-- doc: fixture=add_one -->
 * ```ts
 * import { readFileSync } from 'node:fs';
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0, allowUpload: true }); // uploads run code: the owner allows them
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const mod = await session.loadModule(readFileSync('add_one.wasm'), { name: 'add_one.wasm' }); // uploaded, then loaded
 * const addInt = await mod.getFunction('add_int');
 * console.log(await addInt(41), await mod.getFunction('missing', { optional: true }));
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 42 null
 * ```
 */
export class RPCModule extends RPCObject {
  /** The module's function; a miss rejects with an AttributeError, or resolves null with `{ optional: true }`. */
  getFunction(name: string, options?: { queryImports?: boolean; optional?: false }): Promise<RPCFunction>;
  getFunction(name: string, options: { queryImports?: boolean; optional: true }): Promise<RPCFunction | null>;
  /** A timer of the module's function NAME on the server (TVM's `time_evaluator`). */
  timeEvaluator(name: string, device?: Device | string, options?: TimeEvaluatorOptions): RPCTimer;
}
/**
 * A tensor in the memory of a TVM RPC server's device (`session.tensor`,
 * `session.empty`, or a call that returned one).
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0 });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const t = await session.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] });
 * console.log(String(t.device), String(t.dtype), t.shape, t.nbytes);
 * await t.set(new Float32Array([4, 3, 2, 1]));
 * console.log(await t.data());
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * cpu:0 float32 [ 2, 2 ] 16
 * Float32Array(4) [ 4, 3, 2, 1 ]
 * ```
 */
export class RPCTensor extends RPCObject {
  /** The server's device it lives on. */
  readonly device: Device;
  /** The element type. */
  readonly dtype: DataType;
  /** The extents, one per dimension. */
  readonly shape: readonly number[];
  /** The bytes the elements take. */
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
/**
 * A function on a TVM RPC server: an async callable (`session.getGlobal`,
 * `module.getFunction`).
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0 });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const shape = session.getGlobal('ffi.Shape'); // resolved on the first call
 * const s = await shape(2, 3);                  // an ffi.Shape on the server: an RPCObject
 * console.log(await session.call('ffi.ReprPrint', [s]));
 * shape.dispose();
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * Shape(2, 3)
 * ```
 */
export interface RPCFunction extends Disposable {
  (...args: unknown[]): Promise<any>;
  dispose(): void;
}
/**
 * TVM's timing loop (`runtime.RPCTimeEvaluator`): `repeat` measurements of
 * `number` calls each, `number` growing until one lasts `minRepeatMs`, after
 * a warm-up call.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0 });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const timer = session.timeEvaluator('ffi.String', 'cpu', { number: 100, repeat: 3, minRepeatMs: 0 });
 * const seconds = await timer('timed');
 * console.log(seconds.length, seconds.every((s) => s > 0 && s < 0.01));
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 3 true
 * ```
 */
export interface TimeEvaluatorOptions { number?: number; repeat?: number; minRepeatMs?: number; limitZeroTimeIterations?: number }
/**
 * A timer of a function on a TVM RPC server: resolves to `repeat`
 * measurements, seconds per call (on WebGPU the time covers the GPU work).
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0 });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * const timer = session.timeEvaluator('ffi.String', 'cpu', { repeat: 5 });
 * console.log((await timer('timed')).length);
 * timer.dispose();
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 5
 * ```
 */
export interface RPCTimer extends Disposable { (...args: unknown[]): Promise<Float64Array>; dispose(): void }
/**
 * A TVM RPC client session (`connectRPC`, `requestRPC`): the server's
 * globals as async functions, its devices' memory as tensors, its work
 * directory, modules and timers. Works with webffi devices and with TVM's
 * own RPC servers.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0, allowUpload: true });
 * await using session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * console.log(session.serverKey, await session.deviceExists('cpu'), await session.lookupGlobal('no.such'));
 * const t = await session.empty([2, 3], 'int32');
 * console.log(t.shape, String(t.dtype));
 * await session.upload('notes.txt', new TextEncoder().encode('hello'));
 * console.log(await session.listdir(), new TextDecoder().decode(await session.download('notes.txt')));
 * await session.remove('notes.txt');
 * await session.sync('cpu');
 * console.log(await session.listdir());
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * server:webffi true null
 * [ 2, 3 ] int32
 * [ 'notes.txt' ] hello
 * []
 * ```
 */
export class RPCSession implements AsyncDisposable {
  /** Whether the session has ended. */
  readonly closed: boolean;
  /** The key the server answered the handshake with. */
  readonly serverKey: string;
  /** The server's global NAME as an async function (looked up on its first call; missing: it rejects with a ValueError). */
  getGlobal(name: string): RPCFunction;
  /** The server's global NAME, or null when it has none (or does not expose it). */
  lookupGlobal(name: string): Promise<RPCFunction | null>;
  /** Calls the server's global NAME. */
  call(name: string, args?: unknown[]): Promise<any>;
  /** Whether the server has the device. */
  deviceExists(device: Device | string): Promise<boolean>;
  /** A device attribute (TVM's DeviceAttrKind: 1 max threads per block, 2 warp size, ...), or null. */
  deviceAttr(device: Device | string, kind: number): Promise<any>;
  /** Waits for the device's queued work (default: CPU). */
  sync(device?: Device | string): Promise<void>;
  /** An uninitialised tensor on the server's device (default float32 on its CPU). */
  empty(shape: readonly number[], dtype?: DataType | string, device?: Device | string): Promise<RPCTensor>;
  /** A tensor on the server's device holding a copy of `values`. */
  tensor(values: ArrayBufferView, options?: { shape?: readonly number[]; dtype?: DataType | string; device?: Device | string }): Promise<RPCTensor>;
  /** Writes a file to the server's work directory (a webffi device: `allowUpload`). */
  upload(name: string, bytes: Uint8Array | ArrayBuffer): Promise<void>;
  /** Reads a file of the server's work directory. */
  download(name: string): Promise<Uint8Array>;
  /** Removes a file of the server's work directory. */
  remove(name: string): Promise<void>;
  /** The files of the server's work directory. */
  listdir(path?: string): Promise<string[]>;
  /** Loads a module on the server: a file in its work directory, or bytes (uploaded as options.name). */
  loadModule(source: string | Uint8Array, options?: { name?: string }): Promise<RPCModule>;
  /** A timer of the server's global NAME (TVM's `time_evaluator`). */
  timeEvaluator(name: string, device?: Device | string, options?: TimeEvaluatorOptions): RPCTimer;
  /** Ends the session (the server frees everything it held for it). */
  close(): Promise<void>;
  /** `await using session = await connectRPC(...)`: close() at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}
/**
 * What `connectRPC` and `requestRPC` take: a timeout, a WebSocket class, the
 * packet size, and chained or constructed sessions.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC, type RPCConnectOptions } from 'webffi';
 * const device = await listenRPC(await load(), { port: 0 });
 * const options: RPCConnectOptions = { timeout: 5000, maxPacketBytes: 1 << 20, sessionConstructor: ['rpc.LocalSession'] };
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi', options);
 * const big = await session.tensor(new Uint8Array(3 << 20)); // copies larger than a packet are split
 * console.log(big.nbytes);
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * 3145728
 * ```
 */
export interface RPCConnectOptions {
  /** ms a request may take; past it the session ends with an RPCSessionTimeoutError. */
  timeout?: number;
  /** A WebSocket class for ws:// targets (Node 20 has no global one: e.g. the `ws` package's). */
  WebSocket?: unknown;
  /** Largest packet accepted from the server (default RPC_LIMITS.maxPacketBytes); copies are split to fit. */
  maxPacketBytes?: number;
  /** A chained session: on the last of these servers, each reached from the one before (rpc.Connect); the servers on the way must allow it (their forward option). */
  chain?: readonly { target: string; key: string }[];
  /** TVM's session_constructor_args as they are (a name, then its arguments), e.g. ['rpc.LocalSession']. */
  sessionConstructor?: readonly (string | number | boolean | null)[];
}
/**
 * Connects to a TVM RPC server ('host:port' over TCP in Node, or a ws:// URL
 * of a TVM proxy) with `key` (default 'webffi'), and resolves with the
 * session once the server accepted it. A request past options.timeout ms
 * ends the session with an RPCSessionTimeoutError.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { load, listenRPC, connectRPC } from 'webffi';
 * const rt = await load();
 * rt.registerGlobal('demo.fail', () => { throw new RangeError('raised on the device'); });
 * const device = await listenRPC(rt, { port: 0, key: 'webffi' });
 * const session = await connectRPC(`127.0.0.1:${device.port}`, 'webffi');
 * console.log(await session.call('ffi.String', ['hello']));
 * await session.call('demo.fail').catch((e) => console.log(e.kind, e.message)); // errors keep their kind
 * await session.close();
 * await device.close();
 * ```
 * <!-- doc: output -->
 * ```text
 * hello
 * RangeError raised on the device
 * ```
 */
export function connectRPC(target: string, key?: string, options?: RPCConnectOptions): Promise<RPCSession>;
/**
 * Asks a TVM tracker ('host:port') for a device with `key` and connects to
 * it (TVM's `tracker.request`); the device is held until the session closes.
 * options.timeout also bounds the wait for a free device.
 *
 * @group TVM RPC
 * @example
 * <!-- doc: not-run="needs a TVM tracker (python -m tvm.exec.rpc_tracker --port 9190)" -->
 * ```ts
 * import { requestRPC } from 'webffi';
 * const session = await requestRPC('127.0.0.1:9190', 'webgpu-box', { timeout: 60000, priority: 1 });
 * console.log(await session.deviceExists('webgpu'));
 * await session.close(); // the device goes back to the tracker
 * ```
 */
export function requestRPC(tracker: string, key: string, options?: RPCConnectOptions & { priority?: number }): Promise<RPCSession>;
/**
 * A TVM tracker's SUMMARY: the devices it knows by key (free, pending
 * requests) and the servers registered.
 *
 * @group TVM RPC
 * @example
 * <!-- doc: not-run="needs a TVM tracker (python -m tvm.exec.rpc_tracker --port 9190)" -->
 * ```ts
 * import { trackerSummary } from 'webffi';
 * const { queue_info } = await trackerSummary('127.0.0.1:9190');
 * for (const [key, { free, pending }] of Object.entries(queue_info)) console.log(key, free, pending);
 * ```
 */
export function trackerSummary(tracker: string): Promise<{ queue_info: Record<string, { free: number; pending: number }>; server_info: unknown[] }>;
/**
 * A raw connection to a TVM tracker: JSON messages (`[TRACKER_CODE.X,
 * ...]`), each answered in order. For what `requestRPC` and `trackerSummary`
 * do not cover.
 *
 * @group TVM RPC
 * @example
 * <!-- doc: not-run="needs a TVM tracker (python -m tvm.exec.rpc_tracker --port 9190)" -->
 * ```ts
 * import { connectTracker, TRACKER_CODE } from 'webffi';
 * const tracker = await connectTracker('127.0.0.1:9190');
 * console.log(await tracker.send([TRACKER_CODE.PING])); // TRACKER_CODE.SUCCESS
 * tracker.close();
 * ```
 */
export function connectTracker(tracker: string): Promise<{ send(message: unknown): Promise<unknown>; close(): void; readonly closed: boolean }>;
/**
 * TVM's TrackerCode values: the first element of each tracker message
 * (`connectTracker`).
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { TRACKER_CODE } from 'webffi';
 * console.log(TRACKER_CODE.REQUEST, TRACKER_CODE.SUMMARY);
 * ```
 * <!-- doc: output -->
 * ```text
 * 4 6
 * ```
 */
export const TRACKER_CODE: Readonly<{ FAIL: -1; SUCCESS: 0; PING: 1; STOP: 2; PUT: 3; REQUEST: 4; UPDATE_INFO: 5; SUMMARY: 6; GET_PENDING_MATCHKEYS: 7 }>;
/**
 * The word a TVM tracker connection opens with (TVM's `RPC_TRACKER_MAGIC`),
 * both ways.
 *
 * @group TVM RPC
 * @example
 * ```ts
 * import { RPC_TRACKER_MAGIC } from 'webffi';
 * console.log(RPC_TRACKER_MAGIC.toString(16));
 * ```
 * <!-- doc: output -->
 * ```text
 * 2f271
 * ```
 */
export const RPC_TRACKER_MAGIC: number;
