// What console.log / util.inspect / String() show for handles: the type key
// and the value, bounded for big and deep containers, never the wrappers'
// internal symbols.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { load } from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const rt = await loadTesting(await load({ autoloadBackends: false }));
const g = (name) => rt.getGlobal(name);
const plain = (v, options) => inspect(v, { colors: false, ...options });

test('arrays and lists show their items, nested ones their own type', () => {
  const one = rt.toFFI([3]);
  assert.equal(plain(one), 'ffi.Array [3]');
  assert.equal(plain(rt.toFFI([1, 'two', [3]])), "ffi.Array [1, 'two', ffi.Array [3]]");
  assert.equal(plain(g('ffi.List')(1, 2n ** 60n, null)), 'ffi.List [1, 1152921504606846976n, null]');
  assert.equal(plain(rt.toFFI([])), 'ffi.Array []');
  // Inside plain JS values too, and not as a bag of Symbol(webffi.ptr) fields.
  const out = plain({ a: one });
  assert.equal(out, '{ a: ffi.Array [3] }');
  assert.doesNotMatch(plain([one, g('ffi.Dict')('k', 1)], { showHidden: true }), /Symbol\(webffi|typeIndex|webffiHandle/);
});

test('maps and dicts show their entries', () => {
  assert.equal(plain(g('ffi.Dict')('x', 1, 'y', rt.toFFI([1, 2]))), "ffi.Dict { 'x' => 1, 'y' => ffi.Array [1, 2] }");
  assert.equal(plain(g('ffi.Map')('k', 'v')), "ffi.Map { 'k' => 'v' }");
  assert.equal(plain(g('ffi.Dict')()), 'ffi.Dict {}');
});

test('big containers show the first maxArrayLength items, deep ones stop at depth', () => {
  const big = rt.toFFI(Array.from({ length: 250 }, (_, i) => i));
  const text = plain(big);
  assert.match(text, /^ffi\.Array \[0, 1, 2, .*, 99, \.\.\. 150 more items\]$/);
  assert.equal(plain(big, { maxArrayLength: 2 }), 'ffi.Array [0, 1, ... 248 more items]');
  const dict = g('ffi.Dict')('a', 1, 'b', 2, 'c', 3);
  assert.match(plain(dict, { maxArrayLength: 1 }), /^ffi\.Dict \{ '[abc]' => \d, \.\.\. 2 more items \}$/);

  const deep = rt.toFFI([[[[['core']]]]]);
  assert.equal(plain(deep), 'ffi.Array [ffi.Array [ffi.Array [[ffi.Array]]]]');
  assert.equal(plain(deep, { depth: 0 }), 'ffi.Array [[ffi.Array]]');
  assert.equal(plain(deep, { depth: Infinity }), "ffi.Array [ffi.Array [ffi.Array [ffi.Array [ffi.Array ['core']]]]]");
  // Called directly (no util.inspect formatter passed), the same bounds hold.
  const hook = Symbol.for('nodejs.util.inspect.custom');
  assert.equal(deep[hook](), "ffi.Array [ffi.Array [ffi.Array [[ffi.Array]]]]");
  assert.equal(rt.toFFI(['it\'s', 2n ** 60n])[hook](), "ffi.Array ['it\\'s', 1152921504606846976n]");
  // A list holding itself prints as circular, however deep inspect may go.
  const self = g('ffi.List')(1);
  self.push(self);
  assert.equal(plain(self, { depth: Infinity }), 'ffi.List [1, [Circular ffi.List]]');
  self.pop();
});

test('shapes, tensors, functions, modules and reflected objects', () => {
  assert.equal(plain(g('ffi.Shape')(2, 3)), 'ffi.Shape [2, 3]');
  const t = rt.empty([2, 3], 'float32');
  assert.equal(plain(t), 'ffi.Tensor float32[2, 3] @cpu:0');
  const f = g('testing.add_one');
  assert.equal(plain(f), 'ffi.Function');
  assert.equal(String(f), 'ffi.Function');
  const mod = g('ffi.SystemLib')('');
  assert.equal(plain(mod), 'ffi.Module (library)');
  const pair = rt.objectClass('testing.TestIntPair').__ffi_init__(1, 2);
  assert.equal(plain(pair), 'testing.TestIntPair { a: 1, b: 2 }');
  assert.equal(plain({ pair }, { depth: 0 }), '{ pair: [testing.TestIntPair] }');
});

test('disposed handles say so', () => {
  const a = rt.toFFI([3]);
  a.dispose();
  assert.equal(plain(a), 'ffi.Array <disposed>');
  assert.equal(String(a), 'ffi.Array <disposed>');
  const t = rt.empty([1], 'int8');
  t.dispose();
  assert.equal(plain(t), 'ffi.Tensor <disposed>');
  const f = g('testing.add_one');
  f.dispose();
  assert.equal(plain(f), 'ffi.Function <disposed>');
  assert.equal(String(f), 'ffi.Function <disposed>');
});

test('a DLTensor* view passed to a callback, during and after the call', () => {
  let view = null;
  let during = null;
  const cb = rt.toFFI((v) => {
    view = v;
    during = plain(v);
    return null;
  });
  g('testing.call_with_dltensor')(cb);
  assert.equal(during, 'TensorView float32[2, 2] @cpu:0');
  assert.equal(plain(view), 'TensorView <released>');
  cb.dispose();
});

test('a loaded module shows the name it was loaded under, in inspect and String()', async () => {
  const own = await load({ autoloadBackends: false });
  const mod = await own.loadModule(new URL('../../build/wasm/tests/modules/add_one.wasm', import.meta.url));
  assert.equal(mod.name, 'add_one');
  assert.equal(plain(mod), "ffi.Module 'add_one' (library)");
  assert.equal(String(mod), "ffi.Module 'add_one' (library)");
  assert.equal(plain({ mod }), "{ mod: ffi.Module 'add_one' (library) }");
  // the system library has no name; an unloaded module keeps the one it had
  const lib = own.getGlobal('ffi.SystemLib')();
  assert.equal(lib.name, null);
  assert.equal(String(lib), 'ffi.Module (library)');
  assert.equal(own.getGlobal('webffi.ModuleUnload')('add_one'), true);
  assert.equal(plain(mod), "ffi.Module 'add_one' (library)");
  assert.throws(() => own.getGlobal('webffi.ModuleGetName')(1), /Mismatched type on argument #0 .*Expected `ffi.Module` but got `int`/);
  mod.dispose();
  assert.equal(String(mod), 'ffi.Module <disposed>');
});

test('console.error(e) shows an error\'s kind, never its internal fields', async () => {
  const { Console } = await import('node:console');
  const { PassThrough } = await import('node:stream');
  const printed = (e) => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d) => { text += d; });
    new Console({ stdout: out, stderr: out, colorMode: false }).error(e);
    return text;
  };
  let raised;
  try {
    g('testing.test_raise_error')('IndexError', 'oops');
  } catch (e) {
    raised = e;
  }
  const { ValueError } = await import('../../js/index.js');
  for (const e of [raised, new ValueError('made in JS')]) {
    const text = printed(e);
    assert.match(text, /kind: '(IndexError|ValueError)'/);
    assert.doesNotMatch(text, /Symbol\(webffi/, text);
    assert.doesNotMatch(plain(e, { showHidden: false }), /Symbol\(webffi/);
  }
  // reading the backtrace (formatted then, and kept) adds nothing to show
  assert.ok(raised.backtrace.includes('testing_raise_error'));
  assert.doesNotMatch(printed(raised), /Symbol\(webffi/);
});
