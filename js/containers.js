// Wrappers for Array, List, Map, Dict and Shape: iterable, indexable
// (`at`, `get`), sized, deep-convertible to plain JS (`toJS`), with
// structural equality (`equals`, through ffi.RecursiveEq). They call the
// core's global functions by their upstream names.
import { FFIObject, RUNTIME, PTR, INSPECT, inspectWith } from './objects.js';

const call = (self, name, ...args) => self[RUNTIME].global(name)(self, ...args);

/** Deep conversion of anything a container may hold. */
function toJS(value) {
  return value instanceof FFIObject && typeof value.toJS === 'function' ? value.toJS() : value;
}

class ContainerObject extends FFIObject {
  /** Structural equality (ffi.RecursiveEq); `other` may be a plain JS value. */
  equals(other) {
    return this[RUNTIME].global('ffi.RecursiveEq')(this, other);
  }

  toString() {
    if (!this[PTR]) return `${this.typeKey} <disposed>`;
    // a core without ffi.ReprPrint (model libraries do not register it): the type key, as upstream's repr of an unknown object
    const repr = this[RUNTIME].global('ffi.ReprPrint', true);
    return repr ? repr(this) : this.typeKey;
  }
}

/** `ffi.Array [1, 'two', ffi.Array [3]]`: the first maxArrayLength items, then `... M more items`. */
function inspectSequence(depth, options, inspect) {
  return inspectWith(this, depth, options, inspect, (ctx, key) => {
    const n = this.length;
    const shown = Math.min(n, ctx.max);
    const parts = [];
    for (let i = 0; i < shown; i++) parts.push(ctx.child(this.at(i)));
    if (n > shown) parts.push(ctx.more(n - shown));
    return `${key} [${parts.join(', ')}]`;
  });
}

/** `ffi.Map { 'a' => 1 }`, bounded like a sequence. */
function inspectMapping(depth, options, inspect) {
  return inspectWith(this, depth, options, inspect, (ctx, key) => {
    const n = this.size;
    const parts = [];
    if (n > 0 && ctx.max > 0) {
      for (const [k, v] of this.entries()) {
        parts.push(`${ctx.child(k)} => ${ctx.child(v)}`);
        if (parts.length >= ctx.max) break;
      }
    }
    if (n > parts.length) parts.push(ctx.more(n - parts.length));
    return parts.length ? `${key} { ${parts.join(', ')} }` : `${key} {}`;
  });
}

class SequenceObject extends ContainerObject {
  get length() {
    return call(this, this.constructor.ops.size);
  }

  /** Element i; negative i counts from the end. */
  at(i) {
    const n = this.length;
    const k = typeof i === 'number' && i < 0 ? i + n : i;
    return call(this, this.constructor.ops.get, k);
  }

  get(i) {
    return this.at(i);
  }

  *[Symbol.iterator]() {
    const n = this.length;
    for (let i = 0; i < n; i++) yield this.at(i);
  }

  toJS() {
    return Array.from(this, toJS);
  }

  [INSPECT](depth, options, inspect) {
    return inspectSequence.call(this, depth, options, inspect);
  }
}

export class ArrayObject extends SequenceObject {
  static ops = { size: 'ffi.ArraySize', get: 'ffi.ArrayGetItem' };
}

export class ListObject extends SequenceObject {
  static ops = { size: 'ffi.ListSize', get: 'ffi.ListGetItem' };

  set(i, value) {
    call(this, 'ffi.ListSetItem', i, value);
  }

  push(...values) {
    for (const v of values) call(this, 'ffi.ListAppend', v);
    return this.length;
  }

  /** Removes and returns element i (default: the last). */
  pop(i = this.length - 1) {
    return call(this, 'ffi.ListPop', i);
  }

  insert(i, value) {
    call(this, 'ffi.ListInsert', i, value);
  }

  clear() {
    call(this, 'ffi.ListClear');
  }
}

class MappingObject extends ContainerObject {
  get size() {
    return call(this, this.constructor.ops.size);
  }

  has(key) {
    return call(this, this.constructor.ops.count, key) > 0;
  }

  /** The value for key, or undefined when absent (as a JS Map). */
  get(key) {
    return this.has(key) ? call(this, this.constructor.ops.get, key) : undefined;
  }

  *entries() {
    const n = this.size;
    if (n === 0) return;
    const it = call(this, this.constructor.ops.iter);
    try {
      for (let i = 0; i < n; i++) {
        yield [it(0), it(1)];
        it(2);
      }
    } finally {
      it.dispose();
    }
  }

  *keys() {
    for (const [k] of this.entries()) yield k;
  }

  *values() {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator]() {
    return this.entries();
  }

  /** A JS Map with keys and values converted deeply. */
  toJS() {
    const out = new Map();
    for (const [k, v] of this.entries()) out.set(toJS(k), toJS(v));
    return out;
  }

  [INSPECT](depth, options, inspect) {
    return inspectMapping.call(this, depth, options, inspect);
  }
}

export class MapObject extends MappingObject {
  static ops = { size: 'ffi.MapSize', count: 'ffi.MapCount', get: 'ffi.MapGetItem', iter: 'ffi.MapForwardIterFunctor' };
}

export class DictObject extends MappingObject {
  static ops = { size: 'ffi.DictSize', count: 'ffi.DictCount', get: 'ffi.DictGetItem', iter: 'ffi.DictForwardIterFunctor' };

  set(key, value) {
    call(this, 'ffi.DictSetItem', key, value);
    return this;
  }

  delete(key) {
    const had = this.has(key);
    if (had) call(this, 'ffi.DictErase', key);
    return had;
  }

  clear() {
    call(this, 'ffi.DictClear');
  }
}

export class ShapeObject extends ContainerObject {
  /** The dimensions as JS numbers (BigInt past 2^53). */
  toJS() {
    return this[RUNTIME].shapeDims(this);
  }

  get length() {
    return this.toJS().length;
  }

  at(i) {
    return this.toJS().at(i);
  }

  get(i) {
    return this.at(i);
  }

  [Symbol.iterator]() {
    return this.toJS()[Symbol.iterator]();
  }

  /** `ffi.Shape [2, 3]`. */
  [INSPECT](depth, options, inspect) {
    return inspectWith(this, depth, options, inspect, (ctx, key) => {
      const dims = this.toJS();
      const parts = dims.slice(0, ctx.max).map((d) => ctx.child(d));
      if (dims.length > parts.length) parts.push(ctx.more(dims.length - parts.length));
      return `${key} [${parts.join(', ')}]`;
    });
  }
}

/** The wrapper class for each built-in container type key. */
export const containerClasses = {
  'ffi.Array': ArrayObject,
  'ffi.List': ListObject,
  'ffi.Map': MapObject,
  'ffi.Dict': DictObject,
  'ffi.Shape': ShapeObject,
};
