// fast-check arbitraries for the JS boundary fuzzer (tests/node/boundary_fuzz.test.mjs):
// ordinary JS values and hostile ones (throwing and mutating getters, Proxies,
// cycles, sparse and huge arrays, detached buffers, lying typed arrays,
// handles from another runtime, disposed handles, out-of-range BigInts, lone
// surrogates). Every hostile throw is a value recorded in `thrownByInputs`,
// so the property can tell the inputs' own exceptions from the runtime's.
import fc from 'fast-check';

/** Errors (and other values) the generated inputs throw themselves. */
export const thrownByInputs = new WeakSet();

export class InputError extends Error {}

function boom(what) {
  const e = new InputError(`thrown by a hostile input: ${what}`);
  thrownByInputs.add(e);
  return e;
}

/** A Proxy whose every trap throws. */
function throwingProxy(target) {
  const p = new Proxy(target, {
    get() { throw boom('get trap'); },
    has() { throw boom('has trap'); },
    getPrototypeOf() { throw boom('getPrototypeOf trap'); },
    ownKeys() { throw boom('ownKeys trap'); },
    getOwnPropertyDescriptor() { throw boom('getOwnPropertyDescriptor trap'); },
    defineProperty() { throw boom('defineProperty trap'); },
    apply() { throw boom('apply trap'); },
  });
  thrownByInputs.add(p);
  return p;
}

function detached(kind) {
  const buf = new ArrayBuffer(16);
  const view = new Uint8Array(buf);
  structuredClone(buf, { transfer: [buf] });
  return kind === 'buffer' ? buf : view;
}

class LyingBytes extends Uint8Array {
  get length() { return 1 << 30; }
  get byteLength() { return 1 << 30; }
  get byteOffset() { return 1 << 20; }
}

const strings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\ud800', 'a\udc00b', 'x\0y', '\0', 'é'.repeat(300), 'long string with a lone \ud83d surrogate'),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c).repeat(9)),
);

const numbers = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, NaN, Infinity, -Infinity, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 63, -(2 ** 63), 2 ** 64, Number.MAX_VALUE),
);

const bigints = fc.oneof(
  fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
  fc.constantFrom(1n << 63n, -(1n << 63n) - 1n, 1n << 200n, -(1n << 64n)),
);

const SPECIALS = [
  'symbol', 'date', 'regexp', 'weakmap', 'int32array', 'dataview', 'detached-buffer', 'detached-bytes',
  'lying-bytes', 'bytes', 'sparse-2^27', 'sparse-2^32-1', 'throwing-proxy', 'throwing-proxy-array',
  'revoked-proxy', 'throwing-getter', 'throwing-toString', 'throwing-toPrimitive', 'ffi-error',
  'other-runtime-handle', 'other-runtime-function', 'disposed-handle', 'fresh-handle', 'fresh-function',
  'device', 'dtype', 'asInt-big', 'asFloat', 'proxy-of-handle', 'forged-handle', 'callback-throws-proxy',
  'callback-returns-foreign', 'callback-returns-cycle', 'callback-throws-error', 'big-string',
];

/**
 * Recipes for values, as plain data (fast-check inspects what it generates,
 * which a hostile value would break): `build(recipe, ctx)` makes the value.
 */
export function boundaryRecipes() {
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(null, undefined, true, false).map((v) => ['lit', v]),
      numbers.map((v) => ['lit', v]),
      bigints.map((v) => ['lit', v]),
      strings.map((v) => ['lit', v]),
      fc.constantFrom(...SPECIALS).map((kind) => ['special', kind]),
      tie('array'),
      tie('map'),
      tie('record'),
      tie('mutating'),
      tie('cycle'),
    ),
    array: fc.array(tie('value'), { maxLength: 5 }).map((items) => ['array', items]),
    map: fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 4 }).map((es) => ['map', es]),
    record: fc.array(fc.tuple(fc.string({ maxLength: 6 }), tie('value')), { maxLength: 4 }).map((es) => ['record', es]),
    // A container whose getter adds entries to it while it is converted.
    mutating: fc.tuple(tie('value'), fc.constantFrom('record', 'map-key', 'array')).map(([v, how]) => ['mutating', how, v]),
    // A structure that contains itself, directly or through a Map or object.
    cycle: fc.tuple(tie('value'), fc.constantFrom('array', 'record', 'map')).map(([v, how]) => ['cycle', how, v]),
  }));
  return value;
}

/**
 * Makes the value a recipe describes.
 * @param {object} ctx { webffi, rt, other, freshHandle(), disposedHandle(), otherHandle() }
 */
export function build(recipe, ctx) {
  const [tag, a, b] = recipe;
  switch (tag) {
    case 'lit': return a;
    case 'special': return special(a, ctx);
    case 'array': return a.map((r) => build(r, ctx));
    case 'map': return new Map(a.map(([k, v]) => [build(k, ctx), build(v, ctx)]));
    case 'record': {
      const o = {};
      for (const [k, v] of a) o[k] = build(v, ctx);
      return o;
    }
    case 'mutating': {
      const v = build(b, ctx);
      if (a === 'record') {
        const o = { a: v, get b() { for (let i = 0; i < 64; i++) o[`k${i}`] = i; return v; } };
        return o;
      }
      if (a === 'array') {
        const arr = [v, v];
        Object.defineProperty(arr, 0, { get() { for (let i = 0; i < 64; i++) arr.push(i); return v; }, enumerable: true });
        return arr;
      }
      const m = new Map([['a', v]]);
      m.set({ get k() { for (let i = 0; i < 64; i++) m.set(`added${i}`, i); return 1; } }, v);
      return m;
    }
    case 'cycle': {
      const v = build(b, ctx);
      if (a === 'array') { const arr = [v]; arr.push([arr]); return arr; }
      if (a === 'record') { const o = { v }; o.me = { o }; return o; }
      const m = new Map([[1, v]]);
      m.set(2, m);
      return m;
    }
    default: throw new Error(`unknown recipe ${tag}`);
  }
}

function special(kind, ctx) {
  const { webffi } = ctx;
  switch (kind) {
    case 'symbol': return Symbol('s');
    case 'date': return new Date(0);
    case 'regexp': return /x/;
    case 'weakmap': return new WeakMap();
    case 'int32array': return new Int32Array([1, 2]);
    case 'dataview': return new DataView(new ArrayBuffer(4));
    case 'detached-buffer': return detached('buffer');
    case 'detached-bytes': return detached('view');
    case 'lying-bytes': return new LyingBytes(8);
    case 'bytes': return new Uint8Array([1, 2, 3, 255]);
    case 'sparse-2^27': { const a = []; a.length = 2 ** 27; return a; }
    case 'sparse-2^32-1': { const a = [1]; a.length = 2 ** 32 - 1; return a; }
    case 'throwing-proxy': return throwingProxy({});
    case 'throwing-proxy-array': return throwingProxy([1, 2]);
    case 'revoked-proxy': { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; }
    case 'throwing-getter': return { a: 1, get b() { throw boom('getter'); } };
    case 'throwing-toString': return { toString() { throw boom('toString'); }, valueOf() { throw boom('valueOf'); } };
    case 'throwing-toPrimitive': return { [Symbol.toPrimitive]() { throw boom('toPrimitive'); } };
    case 'ffi-error': return new webffi.ValueError('an error passed as a value');
    case 'other-runtime-handle': return ctx.otherHandle();
    case 'other-runtime-function': return ctx.other.getGlobal('testing.add_one');
    case 'disposed-handle': return ctx.disposedHandle();
    case 'fresh-handle': return ctx.freshHandle();
    case 'fresh-function': return ctx.rt.toFFI((...a) => a.length);
    case 'device': return ctx.rt.device('cpu:0');
    case 'dtype': return ctx.rt.dtype('float32');
    case 'asInt-big': return webffi.asInt(1n << 70n);
    case 'asFloat': return webffi.asFloat(1);
    case 'proxy-of-handle': return new Proxy(ctx.freshHandle(), {});
    case 'forged-handle': return Object.create(webffi.FFIObject.prototype);
    case 'callback-throws-proxy': return () => { throw throwingProxy({}); };
    case 'callback-returns-foreign': return () => ctx.otherHandle();
    case 'callback-returns-cycle': return () => { const a = []; a.push(a); return a; };
    case 'callback-throws-error': return () => { throw boom('callback'); };
    case 'big-string': return 'w'.repeat(1 << 20);
    default: throw new Error(kind);
  }
}
