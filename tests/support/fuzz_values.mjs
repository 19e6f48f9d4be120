// Arbitraries and helpers shared by the by-value codec and session fuzzers
// (tests/node/codec_fuzz.test.mjs, tests/node/session_fuzz.test.mjs):
// random webffi values, mutations of their encodings, and the run settings
// (fixed seed, then a random one that is printed; WEBFFI_FUZZ_RUNS scales).
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { makeError } from '../../js/errors.js';

/** How many runs a property gets: `base` in CI, WEBFFI_FUZZ_RUNS for longer runs. */
export function runs(base) {
  const n = Number(process.env.WEBFFI_FUZZ_RUNS);
  return Number.isInteger(n) && n > 0 ? n : base;
}

/** The seeds a property runs with: a fixed one (the same inputs every time) and a random one, printed. */
export function seeds() {
  const fixed = 20261201;
  const env = Number(process.env.WEBFFI_FUZZ_SEED);
  const random = Number.isInteger(env) ? env : (Math.random() * 2 ** 31) | 0;
  return [fixed, random];
}

const KINDS = ['ValueError', 'TypeError', 'KeyError', 'IndexError', 'RuntimeError', 'RPCError', 'test.Custom'];
const key = fc.string({ maxLength: 6 }).filter((k) => k !== '__proto__');

/** Random JS values encodeValue takes: primitives, typed arrays, arrays, Maps, plain objects, errors, webffi values. */
export const jsValue = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.integer(), fc.double(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), fc.string({ maxLength: 12 }),
    fc.boolean(), fc.constant(null), fc.constant(undefined),
    fc.uint8Array({ maxLength: 8 }), fc.int32Array({ maxLength: 8 }), fc.float64Array({ maxLength: 4 }),
    fc.double().map((x) => webffi.asFloat(x)), fc.integer().map((x) => webffi.asInt(x)),
  ),
  value: fc.oneof({ depthSize: 'small', maxDepth: 5 }, tie('leaf'), tie('array'), tie('object'), tie('map'), tie('error')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true }),
  map: fc.array(fc.tuple(tie('leaf'), tie('value')), { maxLength: 3 }).map((entries) => new Map(entries)),
  error: fc.tuple(fc.constantFrom(...KINDS), fc.string({ maxLength: 20 }), fc.option(tie('value'), { nil: undefined }))
    .map(([kind, message, cause]) => {
      const e = makeError(kind, message);
      if (cause !== undefined) Object.defineProperty(e, 'cause', { value: cause, configurable: true, writable: true });
      return e;
    }),
})).value;

/** Random JS data that can become FFI containers (rt.toFFI): ints, floats, strings, arrays, Maps with string keys. */
export const ffiData = fc.letrec((tie) => ({
  leaf: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null), fc.double({ noNaN: true }).map(webffi.asFloat)),
  value: fc.oneof({ depthSize: 'small', maxDepth: 4 }, tie('leaf'), tie('array'), tie('map')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  map: fc.array(fc.tuple(fc.string({ maxLength: 4 }), tie('value')), { maxLength: 3 }).map((e) => new Map(e)),
})).value;

const TAGS = ['a', 'E', 'o', 'm', 'f', 'i', 'dev', 'dt', 'A', 'L', 'S', 'M', 'D', 'Ai', 'Li', 'O', 'X', '', 'zz', 'a\u0000', 'constructor', '__proto__'];

/** Hostile values that mutations put into encodings. */
export const garbage = fc.oneof(
  fc.constantFrom(
    1e9, -1, 2 ** 31, 2 ** 53, -(2 ** 53), NaN, Infinity, -0, 1.5, 2n ** 64n, -(2n ** 70n), '', 'x'.repeat(300), null, undefined, true,
    'testing.TestIntPair', 'ffi.Tensor', 'no.such.Type', 'ffi.Array', 'ValueError',
  ),
  fc.constantFrom(...TAGS),
  fc.constant(0).map(() => ({ length: 1e9 })),
  fc.constant(0).map(() => JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}')),
  fc.constant(0).map(() => ['o', JSON.parse('{"__proto__": ["a", 1]}')]),
  // Sparse arrays (lengths whose structured clone is quick: V8 copies a mid-sized sparse array slowly).
  fc.constant(0).map(() => { const a = ['a']; a.length = 2 ** 30; return a; }),
  fc.constant(0).map(() => { const a = ['a', 1]; a.length = 2 ** 12; return a; }),
  fc.constant(0).map(() => new Float64Array(3)),
  fc.constant(0).map(() => new Int32Array([1, 2, 3])),
  fc.constant(0).map(() => new ArrayBuffer(4)),
  fc.constant(0).map(() => ({ shape: [2 ** 40, 2 ** 40], dtype: 'float32', data: new Float32Array(1) })),
  fc.constant(0).map(() => ({ shape: [2], dtype: 'float32', data: new Float32Array(2) })),
  fc.constant(0).map(() => ({ a: 1, b: 2 })),
  fc.constant(0).map(() => new Map([[1, 2]])),
  fc.constant(0).map(() => { let v = ['a', 1]; for (let i = 0; i < 300; i++) v = ['a', v]; return v; }),
  fc.constant(0).map(() => { let e = ['E', 'ValueError', 'm', '']; for (let i = 0; i < 260; i++) e = ['E', 'KeyError', 'c', '', e]; return e; }),
  fc.tuple(fc.constantFrom(...TAGS), fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), { maxLength: 4 })).map(([t, xs]) => [t, ...xs]),
);

const OPS = ['tag', 'push', 'pop', 'set', 'nest', 'share', 'length', 'object'];
/** A list of mutations: [which node, what, which slot, a garbage value]. */
export const mutations = fc.array(fc.tuple(fc.nat(), fc.constantFrom(...OPS), fc.nat(), garbage), { minLength: 1, maxLength: 4 });

/** The arrays (tagged nodes) and plain objects inside encoded data, root first. */
function nodesOf(data) {
  const out = [];
  const seen = new Set();
  const walk = (x) => {
    if (x === null || typeof x !== 'object' || seen.has(x) || ArrayBuffer.isView(x) || x instanceof ArrayBuffer) return;
    seen.add(x);
    out.push(x);
    if (Array.isArray(x) && x.length > 64) return; // a sparse giant: not walked (its length is the mutation)
    const values = Array.isArray(x) ? x : Object.values(x);
    for (const v of values) walk(v);
  };
  walk(data);
  return out;
}

/** Applies mutations to (a copy of) encoded data; may return a new root. */
export function mutate(encoded, list) {
  let root = structuredClone(encoded);
  for (const [which, op, slot, value] of list) {
    if (root === null || typeof root !== 'object' || ArrayBuffer.isView(root)) {
      root = ['a', root, value];
      continue;
    }
    const nodes = nodesOf(root);
    const node = nodes[which % nodes.length];
    try {
      if (op === 'nest' && node === root) root = ['a', root];
      else apply(node, nodes, op, slot, value);
    } catch {
      // a mutation the node does not take (pushing onto an array of the largest length)
    }
  }
  return root;
}

function apply(node, nodes, op, slot, value) {
  const arr = Array.isArray(node);
  const keys = arr ? null : Object.keys(node);
  const len = arr ? node.length : keys.length;
  const at = arr ? (len ? slot % len : 0) : keys.length ? keys[slot % keys.length] : 'k';
  switch (op) {
    case 'tag':
      if (arr) node[0] = typeof value === 'string' ? value : TAGS[slot % TAGS.length];
      else node[at] = value;
      break;
    case 'push':
      if (arr) node.push(value);
      else node[`k${slot}`] = value;
      break;
    case 'pop':
      if (arr) node.pop();
      else delete node[at];
      break;
    case 'set':
      node[at] = value;
      break;
    case 'nest':
      node[at] = ['a', node[at]];
      break;
    case 'share':
      node[at] = nodes[slot % nodes.length]; // a DAG, or a cycle
      break;
    case 'length':
      if (arr) node.length = [0, 1, 3, 2 ** 12, 2 ** 30, 2 ** 32 - 1][slot % 6];
      else node[at] = { length: 2 ** 32 - 1 };
      break;
    case 'object':
      node[at] = ['o', value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { v: value }];
      break;
    default:
  }
}

/** Structural equality of a value and what came back from its encoding (no runtime on the decoding side). */
export function sameValue(a, b, key = false) {
  // A Map key is compared as Map compares them (SameValueZero: a key -0 is stored as 0).
  const is = key ? (x, y) => x === y || (x !== x && y !== y) : Object.is;
  if (a instanceof webffi.FloatValue || a instanceof webffi.IntValue) return is(a.value, b);
  if (typeof a !== 'object' || a === null) return is(a, b);
  if (ArrayBuffer.isView(a)) {
    return b?.constructor === a.constructor && a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  }
  if (a instanceof Error) {
    return b instanceof Error && b.kind === (a.kind ?? a.name) && b.message === a.message && sameValue(a.cause, b.cause);
  }
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    const x = [...a];
    const y = [...b];
    return x.every(([k, v], i) => sameValue(k, y[i][0], true) && sameValue(v, y[i][1]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameValue(a[k], b[k]));
}

/** What a decode outcome must be: a value, or an error of a webffi kind (never a plain JS error, never a fatal one). */
export function isWebffiError(e) {
  return e instanceof webffi.FFIError && typeof e.kind === 'string' && typeof e.message === 'string';
}
