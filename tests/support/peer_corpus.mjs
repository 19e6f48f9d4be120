// Payloads and protocol messages that once broke a peer (or are the class of
// one that did): the regression corpus of the by-value codec and the session
// protocol, used by tests/support/session_suite.mjs (Node and Chromium) and
// as seeds of the fuzzers (tests/node/*_fuzz.test.mjs).
// Each decode case: [what, build(webffi) -> data, expected message pattern, needs a runtime].

const LONG = 2 ** 22 + 1;

/** A chain of `n` errors, each the cause of the one before. */
function causeChain(n) {
  let e = ['E', 'ValueError', 'leaf', ''];
  for (let i = 0; i < n; i++) e = ['E', 'ValueError', `level ${i}`, '', e];
  return e;
}

/** `n` nested JS arrays. */
function nested(n) {
  let v = ['a', 1];
  for (let i = 0; i < n; i++) v = ['a', v];
  return v;
}

export const BAD_PAYLOADS = [
  ['packed ints claiming a billion elements', () => ['Ai', { length: 1e9 }], /packed ints are an Int32Array, not Object \(at value\[1\]\)/],
  ['packed ints inside an array', () => ['a', 1, ['Li', { length: 1e9 }]], /packed ints are an Int32Array.*\(at value\[2\]\[1\]\)/],
  ['packed ints of the wrong typed-array kind', () => ['Li', new Float64Array(4)], /packed ints are an Int32Array, not Float64Array/],
  ['a sparse array of length 2^30', () => { const a = ['a']; a.length = 2 ** 30; return a; }, /array of length 1073741824 is not data/],
  ['a sparse array of length 2^23', () => { const a = ['a', 1]; a.length = 2 ** 23; return a; }, /an array with holes is not data made by encodeValue \(at value\[2\]\)/],
  ['a sparse ffi.Map', () => { const a = ['M', 'k']; a.length = 2 ** 20 + 1; return a; }, /an array with holes .*\(at value\[2\]\)/],
  ['an unknown tag', () => ['zz', 1], /tag "zz"/],
  ['a tag that is not a string', () => [{ length: 5 }], /tag Object/],
  ['an empty array', () => [], /empty array is not data made by encodeValue/],
  ['a plain object at the root', () => ({ wrpc: 'x' }), /a Object is not data made by encodeValue/],
  ['a function', () => () => 1, /a function is not data made by encodeValue/],
  ['nesting past 256 levels', () => nested(300), /nesting deeper than 256 levels/],
  ['an error cause chain 300 deep', () => causeChain(300), /nesting deeper than 256 levels/],
  ['an error kind that is not a string', () => ['E', 5, 'm', ''], /an error kind is a non-empty string.*not number/],
  ['an error with an empty kind', () => ['E', '', 'm', ''], /an error kind is a non-empty string/],
  ['an error without a backtrace', () => ['E', 'ValueError', 'm'], /`E` node has 4 or 5 elements, not 3/],
  ['an error with extra elements', () => ['E', 'ValueError', 'm', '', null, 1], /`E` node has 4 or 5 elements, not 6/],
  ['an error message past the text limit', () => ['E', 'ValueError', 'x'.repeat(LONG), ''], /an error message is a string of at most 4194304 characters, not one of 4194305/],
  ['an error backtrace that is an object', () => ['E', 'ValueError', 'm', { text: 'x' }], /an error backtrace is a string/],
  ['a cause that is malformed', () => ['E', 'ValueError', 'm', '', ['Ai', 5]], /packed ints are an Int32Array, not number \(at value\.cause\[1\]\)/],
  ['an object with an own __proto__ field', () => ['o', JSON.parse('{"a": 1, "__proto__": {"polluted": true}}')], /has a `__proto__` field/],
  ['an object with a getter', () => ['o', { get x() { throw new Error('getter ran'); } }], /field `x` of an encoded object is an accessor, not data/],
  ['an object that is a Map', () => ['o', new Map([['a', 1]])], /an encoded object is a plain object, not Map/],
  ['an object that is an array', () => ['o', [1, 2]], /an encoded object is a plain object, not array/],
  ['a Proxy whose traps throw', () => ['o', new Proxy({}, { ownKeys() { throw new Error('trap ran'); } })], /malformed data: trap ran/],
  ['a Proxy whose trap throws an unreadable Proxy', () => {
    const unreadable = new Proxy({}, { getPrototypeOf() { throw unreadable; }, get() { throw unreadable; } });
    return ['o', new Proxy({}, { ownKeys() { throw unreadable; } })];
  }, /malformed data: a value that cannot be read was thrown/],
  ['a tagged array behind a throwing Proxy', () => new Proxy(['a', 1], { get() { throw new Error('get trap'); } }), /malformed data: get trap/],
  ['a float that is a string', () => ['f', '1.5'], /a float is a number, not string/],
  ['an int that is not an integer', () => ['i', 1.5], /an int is an integer number or BigInt, not number 1.5/],
  ['a device with a negative id', () => ['dev', 1, -1, 'cpu'], /a device id is an integer in \[0, 2147483647\], not -1/],
  ['a device without a name', () => ['dev', 1, 0], /`dev` node has 4 elements, not 3/],
  ['a dtype with 300 bits', () => ['dt', 2, 300, 1, 'float300'], /a dtype bits is an integer in \[0, 255\], not 300/],
  ['a JS Map with a key and no value', () => ['m', 'k'], /`m` node has a key without a value/],
  ['an ffi.Map with a key and no value', () => ['M', 'k', 1, 'j'], /`M` node has a key without a value/],
  ['a Shape with a string dimension', () => ['S', 2, 'x'], /a Shape dimension is an integer, not string \(at value\[2\]\)/],
  ['a tensor whose shape does not match its data', () => ['X', 'ffi.Tensor', { shape: [2, 2], dtype: 'float32', data: new Float32Array(3) }],
    /ffi.Tensor: a tensor of shape \[2, 2\] does not hold 3 elements/],
  ['a tensor whose shape overflows', () => ['X', 'ffi.Tensor', { shape: [2 ** 40, 2 ** 40, 0], dtype: 'float32', data: new Float32Array(1) }],
    /does not hold 1 elements/],
  ['a tensor whose shape claims a billion dimensions', () => ['X', 'ffi.Tensor', { shape: { length: 1e9 }, dtype: 'float32', data: new Float32Array(1) }],
    /the shape of a tensor is an array of at most 64 dimensions/],
  ['a tensor with a negative dimension', () => ['X', 'ffi.Tensor', { shape: [-1], dtype: 'float32', data: new Float32Array(1) }],
    /dimension 0 of a tensor is a non-negative integer, not -1/],
  ['a tensor whose dimension is a sparse array (its text would be a billion commas)', () => {
    const sparse = ['a'];
    sparse.length = 2 ** 30;
    return ['X', 'ffi.Tensor', { shape: [2, sparse], dtype: 'float32', data: new Float32Array(2) }];
  }, /dimension 1 of a tensor is a non-negative integer, not an array/],
  ['a tensor whose data is a DataView', () => ['X', 'ffi.Tensor', { shape: [1], dtype: 'uint8', data: new DataView(new ArrayBuffer(1)) }],
    /the data of a tensor is a typed array/],
  ['a tensor with an extra field', () => ['X', 'ffi.Tensor', { shape: [1], dtype: 'uint8', data: new Uint8Array(1), device: 'webgpu' }],
    /a tensor has no field `device`/],
  ['a codec nobody registered', () => ['X', 'no.such.Codec', 1], /no value codec is registered for `no.such.Codec`/],
  ['a reflected object with a field its type lacks', () => ['O', 'testing.TestIntPair', { a: 1, evil: 2 }],
    /`evil` is not a field of `testing.TestIntPair` \(its fields: a, b\)/, true],
  ['a reflected object with a `constructor` field', () => ['O', 'testing.TestIntPair', { constructor: 1 }],
    /`constructor` is not a field of `testing.TestIntPair`/, true],
  ['a reflected object whose fields are an array', () => ['O', 'testing.TestIntPair', [1, 2]],
    /the fields of `testing.TestIntPair` is a plain object, not array/, true],
  ['a reflected object without a runtime', () => ['O', 'testing.TestIntPair', { a: 1 }],
    /rebuilding a `testing.TestIntPair` object needs a webffi runtime/],
];

/** A value whose graph is a DAG: `levels` levels, each node shared by both slots of its parent. */
export function sharedGraph(levels) {
  let v = [1];
  for (let i = 0; i < levels; i++) v = [v, v];
  return v;
}

/**
 * Raw protocol messages a peer might post to a server: [what, message,
 * expected reply: null (none) or [kind, message pattern]]. Ids 9000+ are used
 * so that nothing here answers a real client's call.
 */
export const BAD_CALLS = [
  ['args not an array', { wrpc: 'call', id: 9001, name: 'test.busy', args: 5 }, ['TypeError', /the arguments of the call to `test.busy` are an encoded array/]],
  ['args a plain array, not encoded', { wrpc: 'call', id: 9002, name: 'test.busy', args: [0] }, ['TypeError', /are an encoded array/]],
  ['args missing', { wrpc: 'call', id: 9003, name: 'test.busy' }, ['TypeError', /are an encoded array/]],
  ['a name that is a number', { wrpc: 'call', id: 9004, name: 42, args: ['a'] }, ['TypeError', /names a global function with a non-empty string/]],
  ['a name missing', { wrpc: 'call', id: 9005, args: ['a'] }, ['TypeError', /names a global function/]],
  ['a name of 100,000 characters', { wrpc: 'call', id: 9006, name: 'x'.repeat(100000), args: ['a'] }, ['TypeError', /at most 1024 characters/]],
  ['huge packed ints in args', { wrpc: 'call', id: 9007, name: 'test.busy', args: ['a', ['Ai', { length: 1e9 }]] },
    ['TypeError', /decodeValue: packed ints are an Int32Array, not Object \(at value\[1\]\[1\]\)/]],
  ['the trap, not exposed by default', { wrpc: 'call', id: 9008, name: 'testing.trap', args: ['a'] }, ['ValueError', /^webffi session: this worker does not expose `testing.trap` \(serve's expose option/]],
  ['module loading, not exposed by default', { wrpc: 'call', id: 9009, name: 'ffi.ModuleLoadFromFile', args: ['a', '/etc/passwd'] },
    ['ValueError', /^webffi session: this worker does not expose `ffi.ModuleLoadFromFile` \(serve's expose option/]],
  ['registry mutation, not exposed by default', { wrpc: 'call', id: 9010, name: 'ffi.FunctionRemoveGlobal', args: ['a', 'test.busy'] },
    ['ValueError', /^webffi session: this worker does not expose `ffi.FunctionRemoveGlobal` \(serve's expose option/]],
  ['a missing global', { wrpc: 'call', id: 9011, name: 'no.such.function', args: ['a'] }, ['ValueError', /^Cannot find global function no.such.function$/]],
  ['an id that is not a safe integer', { wrpc: 'call', id: 2 ** 60, name: 'test.busy', args: ['a', 0] }, null],
  ['an id that is a string', { wrpc: 'call', id: '9012', name: 'test.busy', args: ['a', 0] }, null],
  ['an id that is negative', { wrpc: 'call', id: -3, name: 'test.busy', args: ['a', 0] }, null],
  ['an id that is zero (the handshake)', { wrpc: 'call', id: 0, name: 'test.busy', args: ['a', 0] }, null],
  ['no id', { wrpc: 'call', name: 'test.busy', args: ['a', 0] }, null],
  ['a cancel for an unknown id', { wrpc: 'cancel', id: 123456 }, null],
  ['a cancel with an object id', { wrpc: 'cancel', id: { n: 1 } }, null],
  ['a reply sent to the server', { wrpc: 'ok', id: 9013, value: 1 }, null],
  ['an unknown kind', { wrpc: 'explode', id: 9014 }, null],
  ['a wrpc that is not a string', { wrpc: 7, id: 9015 }, null],
  ['null', null, null],
  ['a number', 5, null],
  ['a string', 'call', null],
  ['an array', ['call', 9016], null],
];

/** Garbage a misbehaving server might post to a client (ids far from any real call). */
export const BAD_REPLIES = [
  { wrpc: 'ok', id: 987654, value: 1 },
  { wrpc: 'err', id: 987655, error: ['E', 5] },
  { wrpc: 'err', id: -1, error: null },
  { wrpc: 'ok', id: 0, value: 'not the handshake' },
  { wrpc: 'hello', version: 99 },
  { wrpc: 'call', id: 1, name: 'x', args: ['a'] },
  { wrpc: 'cancel', id: 1 },
  { wrpc: 'ok', id: 2 ** 70, value: ['Ai', { length: 1e9 }] },
  { wrpc: 'err', id: '1', error: ['E', 'RuntimeError', 'm', ''] },
  null, 0, 'ok', [], {},
];
