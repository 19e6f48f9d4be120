// The JS runtime's core behaviour, as named tests that run unchanged in Node
// (tests/node/runtime.test.mjs) and in Chromium pages and workers
// (tests/browser/). `webffi` is the package's exports, `wasm` the core's bytes.
import { assert as ok, same, thrown as throws, rejected as rejects } from '../browser/harness_page.mjs';
import { loadTesting, TESTING_MODULE, THREADED_TESTING_MODULE } from './testing_module.mjs';

function sameBytes(actual, expected, what = '') {
  ok(actual instanceof Uint8Array, `${what} expected a Uint8Array, got ${String(actual)}`);
  same(actual.length, expected.length, `${what} length`);
  for (let i = 0; i < expected.length; i++) same(actual[i], expected[i], `${what}[${i}]`);
}


/** The core's bytes with the metadata key renamed, so the JS must refuse it. */
function incompatibleCopy(wasm) {
  const bytes = new Uint8Array(wasm).slice();
  const key = new TextEncoder().encode('metadata_version');
  outer: for (let i = 0; i + key.length <= bytes.length; i++) {
    for (let j = 0; j < key.length; j++) if (bytes[i + j] !== key[j]) continue outer;
    bytes[i + key.length - 1] = 'X'.charCodeAt(0);
    return bytes;
  }
  throw new Error('assertion failed: metadata_version not found in the wasm');
}

export function coreTests(webffi, wasm) {
  let rt;
  const g = (name) => rt.getGlobal(name);
  const echo = (v) => g('testing.echo')(v);
  const useCount = (h) => g('testing.object_use_count')(h);
  // a runtime with the test fixtures (testing.*) loaded
  const loadT = async (options) => loadTesting(await webffi.load(options));

  return {
    async 'load returns a runtime whose metadata matches the ABI'() {
      rt = await loadT({ wasm });
      same(rt.metadata.sizeof.TVMFFIAny, 16);
      same(rt.metadata.type_index['ffi.Function'], 68);
      same(g('testing.add_one')(41), 42);
    },

    async 'the runtime has no testing.* globals or types; the fixtures module adds them'() {
      const fresh = await webffi.load({ wasm });
      const testing = () => fresh.listGlobals().filter((name) => name.startsWith('testing.'));
      same(testing().length, 0, `testing.* globals in a fresh runtime: ${testing()}`);
      same(fresh.getGlobal('testing.add_one', { optional: true }), null);
      ok(!Object.keys(fresh.metadata.type_index).some((key) => key.startsWith('testing.')), 'no testing.* types in the metadata');
      const missing = throws(() => fresh.objectClass('testing.TestIntPair'), 'no fixture type');
      ok(missing instanceof webffi.KeyError, String(missing));
      const mod = await fresh.loadModule(fresh.threads > 1 ? THREADED_TESTING_MODULE : TESTING_MODULE);
      same(mod.name, 'webffi_testing');
      mod.dispose();
      for (const name of ['testing.echo', 'testing.nop', 'testing.add_one', 'testing.test_raise_error', 'testing.apply',
        'testing.object_use_count', 'testing.call_with_dltensor', 'testing.trap', 'testing.allocate_bytes']) {
        ok(testing().includes(name), `${name} after loading the fixtures: ${testing()}`);
      }
      same(fresh.getGlobal('testing.add_one')(41), 42);
      same(fresh.objectClass('testing.TestIntPair').__ffi_init__(3, 4).sum(), 7);
      same(fresh.objectClass('testing.TestIntPairDerived').__ffi_init__(1, 2, 'c').c, 'c');
      same(g('testing.add_one')(1), 2, 'other runtimes keep theirs');
    },

    async 'load accepts a compiled WebAssembly.Module'() {
      const other = await loadT({ wasm: await WebAssembly.compile(wasm) });
      same(other.getGlobal('testing.add_one')(1), 2);
    },

    async 'an incompatible wasm is refused with a clear error'() {
      const e = await rejects(webffi.load({ wasm: incompatibleCopy(wasm) }), 'load');
      ok(e instanceof webffi.RuntimeError, `a RuntimeError, got ${e}`);
      ok(/incompatible wasm: ABI metadata version undefined, expected 1/.test(e.message), e.message);
      const notOurs = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
      const e2 = await rejects(webffi.load({ wasm: notOurs }), 'load empty');
      ok(/neither webffi's core nor a tvm-ffi library: it exports nothing and imports nothing/.test(e2.message), e2.message);
    },

    'numbers: integers cross as int, others as float'() {
      same(echo(0), 0);
      same(echo(-7), -7);
      same(echo(2 ** 31), 2 ** 31);
      same(echo(-(2 ** 40) - 3), -(2 ** 40) - 3);
      same(echo(2 ** 53 - 1), 2 ** 53 - 1);
      same(echo(-(2 ** 53 - 1)), -(2 ** 53 - 1));
      same(echo(0.5), 0.5);
      same(echo(-0), -0);
      ok(Number.isNaN(echo(NaN)), 'NaN');
      same(echo(Infinity), Infinity);
      same(echo(-Infinity), -Infinity);
      // add_one takes an int: the integer-valued float -0 and 1.5 are floats
      const e = throws(() => g('testing.add_one')(1.5), 'add_one(1.5)');
      ok(/Expected `int` but got `float`/.test(e.message), e.message);
    },

    'int64 outside the safe range comes back as BigInt, never truncated'() {
      same(echo(2 ** 53), 9007199254740992n);
      same(echo(2 ** 53 + 2), 9007199254740994n);
      same(echo(9007199254740993n), 9007199254740993n);
      same(echo(9223372036854775807n), 9223372036854775807n);
      same(echo(-9223372036854775808n), -9223372036854775808n);
      same(echo(12n), 12);
      same(g('testing.add_one')(9007199254740991), 9007199254740992n);
      same(g('testing.add_one')(-9007199254740992n), -(2 ** 53 - 1));
      same(g('testing.add_one')(-9007199254740993n), -9007199254740992n);
    },

    'BigInt beyond int64 is an OverflowError (a RangeError), never wrapped'() {
      for (const big of [9223372036854775808n, -9223372036854775809n, 1n << 100n]) {
        const e = throws(() => echo(big), String(big));
        ok(e instanceof RangeError && e instanceof webffi.OverflowError, String(e));
        ok(e instanceof webffi.FFIError, 'an FFIError');
      }
      same(echo(1), 1, 'the runtime keeps working');
    },

    'asInt and asFloat force the FFI type'() {
      const e = throws(() => g('testing.add_one')(webffi.asFloat(2)), 'asFloat');
      ok(/got `float`/.test(e.message), e.message);
      same(g('testing.add_one')(webffi.asInt(2)), 3);
      same(g('testing.add_one')(webffi.asInt(5n)), 6);
      same(echo(webffi.asFloat(3)), 3);
      ok(throws(() => webffi.asInt(1.5), 'asInt(1.5)') instanceof RangeError, 'asInt(1.5)');
      ok(throws(() => echo(webffi.asInt(2 ** 64)), 'asInt(2^64)') instanceof RangeError, '2^64');
    },

    'booleans, null and undefined'() {
      same(echo(true), true);
      same(echo(false), false);
      same(echo(null), null);
      same(echo(undefined), null);
      same(g('testing.add_one')(true), 2, 'int accepts bool');
    },

    'strings are UTF-8 both ways, short and long'() {
      for (const s of ['', 'a', 'seven77', 'eight888', 'é', '日本語', '😀', 'a string longer than sixteen bytes',
        'ünïcödé '.repeat(40), 'x'.repeat(100000), 'a\0b', 'nul \0 in a long string']) {
        same(echo(s), s, `echo(${JSON.stringify(s).slice(0, 40)})`);
      }
    },

    'lone surrogates become U+FFFD'() {
      same(echo('\ud800'), '\ufffd');
      same(echo('a\udc00b'), 'a\ufffdb');
      same(echo('long text with a lone \ud83d surrogate'), 'long text with a lone \ufffd surrogate');
    },

    'Uint8Array and ArrayBuffer cross as Bytes and come back as copies'() {
      sameBytes(echo(new Uint8Array([])), []);
      sameBytes(echo(new Uint8Array([1, 0, 255])), [1, 0, 255]);
      const big = new Uint8Array(1000).map((_, i) => i & 255);
      sameBytes(echo(big), big);
      sameBytes(echo(new Uint8Array([9, 8]).buffer), [9, 8]);
      const back = echo(big);
      back[0] = 77;
      same(big[0], 0, 'the copy is independent');
    },

    'devices and dtypes are small immutable values'() {
      const d = rt.device('webgpu:0');
      same(String(d), 'webgpu:0');
      same(String(rt.device('cpu')), 'cpu:0');
      ok(Object.isFrozen(d), 'frozen');
      const back = echo(rt.device('cuda:3'));
      ok(back instanceof webffi.Device && back.deviceType === 2 && back.deviceId === 3, String(back));
      same(String(back), 'cuda:3');
      const t = echo(rt.dtype('float32'));
      ok(t instanceof webffi.DataType, 'a DataType');
      same(String(t), 'float32');
      same(String(rt.dtype('float32x4')), 'float32x4');
      same(String(rt.dtype('int')), 'int32');
      ok(rt.dtype('bfloat16').equals(echo(rt.dtype('bfloat16'))), 'equals');
      const bad = throws(() => rt.dtype('float32x0'), 'dtype');
      ok(bad instanceof webffi.ValueError, String(bad));
      same(bad.message, 'unknown dtype `float32x0`');
      same(throws(() => rt.device('tpu'), 'device').message, 'Unknown device: tpu');
    },

    'unsupported JS values are TypeErrors'() {
      const e = throws(() => echo(Symbol('s')), 'symbol');
      ok(e instanceof TypeError, String(e));
      const e2 = throws(() => echo(new Date()), 'date');
      ok(e2 instanceof TypeError && /Date/.test(e2.message), String(e2));
    },

    'global functions: get, miss, optional, register, override, list, remove'() {
      const e = throws(() => rt.getGlobal('no.such'), 'miss');
      same(e.message, 'Cannot find global function no.such');
      same(rt.getGlobal('no.such', { optional: true }), null);
      rt.registerGlobal('js.triple', (x) => 3 * x);
      same(g('js.triple')(5), 15);
      const dup = throws(() => rt.registerGlobal('js.triple', (x) => x), 'duplicate');
      same(String(dup), 'RuntimeError: Global Function `js.triple` is already registered');
      rt.registerGlobal('js.triple', (x) => 4 * x, { override: true });
      same(g('js.triple')(5), 20);
      ok(rt.listGlobals().includes('js.triple'), 'listed');
      ok(rt.listGlobals().includes('testing.echo'), 'listed');
      same(rt.removeGlobal('js.triple'), true);
      same(rt.removeGlobal('js.triple'), false);
      same(rt.getGlobal('js.triple', { optional: true }), null);
    },

    'Functions are callable handles with dispose'() {
      const f = rt.toFFI((x) => x + 1);
      same(typeof f, 'function');
      same(f.typeKey, 'ffi.Function');
      ok(f.handle > 0, 'a handle');
      same(useCount(f), 1, 'the wrapper holds one reference');
      const again = echo(f);
      same(useCount(f), 2, 'echo returned a second reference');
      same(again(1), 2);
      again.dispose();
      same(useCount(f), 1, 'dispose released it');
      f[Symbol.dispose ?? Symbol.for('Symbol.dispose')]();
      ok(f.disposed, 'disposed');
      const e = throws(() => f(1), 'use after dispose');
      ok(/disposed `ffi.Function`/.test(e.message), e.message);
      f.dispose();
    },

    'handle arguments keep their type and object; a disposed one is refused by name'() {
      const arr = rt.toFFI([1, 2, 3]);
      const back = echo(arr);
      same(back.typeKey, 'ffi.Array');
      same(back.handle, arr.handle, 'the same object');
      same(useCount(arr), 2, 'the result holds its own reference');
      back.dispose();
      same(g('testing.apply')((a, b, c) => `${a} ${b} ${c}`, -7, true, null), '-7 true null');
      arr.dispose();
      const e = throws(() => echo(arr), 'disposed argument');
      ok(/disposed `ffi.Array`/.test(e.message), e.message);
    },

    'JS callbacks: arguments and results cross both ways'() {
      const apply = g('testing.apply');
      same(apply((a, b) => a + b, 20, 22), 42);
      same(apply((s) => `${s}!`, 'héllo'), 'héllo!');
      same(apply(() => 'a result longer than seven bytes'), 'a result longer than seven bytes');
      same(apply((big) => big, 9223372036854775807n), 9223372036854775807n);
      same(apply(() => undefined), null);
      sameBytes(apply((b) => b, new Uint8Array([1, 2])), [1, 2]);
      same(String(apply((d) => d, rt.device('cpu:1'))), 'cpu:1');
      const inner = apply(() => (x) => x * 2);
      same(typeof inner, 'function');
      same(inner(21), 42, 'a returned JS function is callable');
      inner.dispose();
    },

    'a JS function argument is released after the call unless C keeps it'() {
      const before = rt.liveJSValues;
      g('testing.apply')((x) => x, 1);
      same(rt.liveJSValues, before, 'released after the call');
      rt.registerGlobal('js.kept', (x) => x);
      same(rt.liveJSValues, before + 1, 'kept by the registry');
      rt.removeGlobal('js.kept');
      same(rt.liveJSValues, before, 'released on removal');
      const f = rt.toFFI((x) => x + 1);
      same(rt.liveJSValues, before + 1, 'held by the handle');
      same(useCount(f), 1);
      same(g('testing.apply')(f, 1), 2);
      f.dispose();
      same(rt.liveJSValues, before, 'released by dispose');
    },

    'scope disposes the handles made inside it, except the result'() {
      let inner;
      const kept = rt.scope(() => {
        inner = g('testing.echo');
        return g('testing.add_one');
      });
      ok(inner.disposed, 'inner disposed');
      ok(!kept.disposed, 'result kept');
      same(kept(1), 2);
      let thrown;
      throws(() => rt.scope(() => {
        thrown = g('testing.nop');
        throw new Error('leave');
      }), 'scope rethrows');
      ok(thrown.disposed, 'disposed on throw');
    },

    'C errors are Error subclasses chosen by kind'() {
      const raise = g('testing.test_raise_error');
      const cases = [
        ['TypeError', TypeError, webffi.FFITypeError],
        ['IndexError', RangeError, webffi.IndexError],
        ['ValueError', Error, webffi.ValueError],
        ['KeyError', Error, webffi.KeyError],
        ['AttributeError', Error, webffi.AttributeError],
        ['MemoryError', Error, webffi.MemoryError],
        ['RuntimeError', Error, webffi.RuntimeError],
      ];
      for (const [kind, base, cls] of cases) {
        const e = throws(() => raise(kind, `a ${kind}`), kind);
        ok(e instanceof base && e instanceof cls && e instanceof webffi.FFIError, `${kind}: ${e}`);
        same(e.kind, kind);
        same(e.message, `a ${kind}`);
        same(String(e), `${kind}: a ${kind}`);
        ok(/^ {2}File "[^"]*wasm-function\[\d+\]:0x[0-9a-f]+", line unknown, in webffi_testing\.testing_raise_error\n/.test(e.backtrace), e.backtrace);
        ok(!/line 0\b/.test(e.backtrace), e.backtrace);
        ok(/^ {4}at webffi_testing\.testing_raise_error \([^)]*wasm-function\[\d+\]:0x[0-9a-f]+\)$/m.test(e.stack), e.stack);
      }
      ok(!(new Error('plain') instanceof webffi.FFIError), 'plain errors are not FFI errors');
    },

    'ffi.json: a syntax error is a ValueError saying what was expected and where, as upstream'() {
      const parse = g('ffi.json.Parse');
      const stringify = g('ffi.json.Stringify');
      same(parse('[1, 2.5, "a\\u00e9"]').length, 3);
      same(stringify('a/b "c"\u0001'), '"a\\/b \\"c\\"\\u0001"');
      const cases = [
        ['', 'Expecting value: line 1 column 1 (char 0)'],
        ['{"a": 1,\n "b" 2}', "Expecting ':' delimiter: line 2 column 6 (char 14)"],
        ['[1 2]', "Expecting ',' delimiter: line 1 column 4 (char 3)"],
        ['"abc', 'Unterminated string starting at: line 1 column 1 (char 0)'],
        ['[1] x', 'Extra data: line 1 column 5 (char 4)'],
      ];
      for (const [text, message] of cases) {
        const e = throws(() => parse(text), JSON.stringify(text));
        ok(e instanceof webffi.ValueError, String(e));
        same(e.message, message);
      }
      same(stringify(parse('{"k": [true, null]}')), '{"k":[true,null]}', 'the runtime works after the errors');
    },

    'a C error\'s stack starts with its C frames, then the caller; passed back to C it gains its JS frames'() {
      const raise = g('testing.test_raise_error');
      function userCallSite() {
        return raise('ValueError', 'where');
      }
      const e = throws(() => userCallSite(), 'raise');
      const lines = String(e.stack).split('\n');
      same(lines[0], 'ValueError: where');
      ok(/^ {4}at webffi_testing\.testing_raise_error \(/.test(lines[1]), e.stack);
      ok(/userCallSite/.test(lines[2]), e.stack);
      ok(!/webffi[A-Z]|wf_|TVMFFI/.test(e.stack), `no glue or runtime frames:\n${e.stack}`);
      e.stack = 'replaced';
      same(e.stack, 'replaced');
      const again = throws(() => userCallSite(), 'raise again');
      const text = again.backtrace;
      ok(/in webffi_testing\.testing_raise_error\n$/.test(text), text);
      ok(!/userCallSite/.test(text), 'only C frames before it crosses JS');
      same(echo(again), again, 'identity through C');
      // passed to C as a value it gains the JS frames it passed through, as upstream's convert()
      ok(again.backtrace.startsWith(text), again.backtrace);
      ok(/in userCallSite\n/.test(again.backtrace), again.backtrace);
      const once = again.backtrace;
      same(echo(again), again, 'identity again');
      same(again.backtrace, once, 'no frame twice');
      again.backtrace = 'set by the user';
      same(again.backtrace, 'set by the user');
    },

    'a C error\'s stack, formatted when read, is its C frames and then the stack an eager capture gives, also under a callback'() {
      const raise = g('testing.test_raise_error');
      const apply = g('testing.apply');
      // One call site for both modes: with backtraces on the stack is
      // formatted from the capture taken at the raise, off it is V8's own
      // capture at the throw.
      const at = (nested) => throws(() => (nested ? apply(() => raise('ValueError', 'm')) : raise('ValueError', 'm')), 'raise');
      const cFrame = /^ {4}at webffi_testing\.testing_(raise_error|apply) \(/;
      try {
        for (const nested of [false, true]) {
          const [lazy, eager] = [true, false].map((on) => {
            rt.setBacktraces(on);
            return at(nested);
          });
          const lazyLines = lazy.stack.split('\n');
          ok(cFrame.test(lazyLines[1]), lazy.stack);
          ok(!/wasm-function|webffi[A-Z]/.test(lazy.stack.replace(/^.*testing_(raise_error|apply) .*$/gm, '')), `only C frames of modules, no glue:\n${lazy.stack}`);
          // the JS frames are V8's (its capture without C frames shows the C and glue frames raw)
          const js = (stack) => stack.split('\n').filter((l) => !cFrame.test(l) && !/wasm-function|webffi[A-Z]/.test(l)).join('\n');
          same(js(lazy.stack), js(eager.stack), `nested: ${nested}`);
          ok(!/^\s*$/m.test(lazy.stack), `no empty lines:\n${lazy.stack}`);
          ok(/in webffi_testing\.testing_raise_error\n/.test(lazy.backtrace), lazy.backtrace);
        }
      } finally {
        rt.setBacktraces(true);
      }
    },

    async 'with C backtraces off an error keeps kind, message and JS stack, and has no C frames'() {
      const quiet = await loadT({ wasm, backtraces: false });
      same(quiet.backtraces, false);
      const raise = quiet.getGlobal('testing.test_raise_error');
      const apply = quiet.getGlobal('testing.apply');
      function validate() {
        return raise('KeyError', 'no such key');
      }
      const e = throws(() => validate(), 'raise');
      ok(e instanceof webffi.KeyError, String(e));
      same(e.kind, 'KeyError');
      same(e.message, 'no such key');
      same(e.backtrace, '');
      ok(/validate/.test(String(e.stack).split('\n')[1]), e.stack);
      const viaCallback = throws(() => apply(() => raise('ValueError', 'inner')), 'through C');
      same(viaCallback.kind, 'ValueError');
      same(viaCallback.backtrace, '');
      const js = new TypeError('from JS');
      same(throws(() => apply(() => { throw js; }), 'JS error'), js);
      same(js.backtrace, '', 'no C frames appended');
      same(quiet.setBacktraces(true), false);
      const on = throws(() => validate(), 'on again');
      ok(/in webffi_testing\.testing_raise_error\n$/.test(on.backtrace), on.backtrace);
      const typeError = throws(() => quiet.setBacktraces('yes'), 'not a boolean');
      ok(typeError instanceof webffi.FFITypeError, String(typeError));
      const bad = await rejects(webffi.load({ wasm, backtraces: 0 }), 'load');
      ok(bad instanceof webffi.FFITypeError && /backtraces must be a boolean/.test(bad.message), String(bad));
    },

    'an unknown kind keeps its string on RuntimeError; registerError adds classes'() {
      const raise = g('testing.test_raise_error');
      const e = throws(() => raise('ScheduleError', 'bad schedule'), 'unknown');
      ok(e instanceof webffi.RuntimeError, String(e));
      same(e.kind, 'ScheduleError');
      same(String(e), 'ScheduleError: bad schedule');
      class ScheduleError extends webffi.RuntimeError {}
      webffi.registerError('ScheduleError', ScheduleError);
      const e2 = throws(() => raise('ScheduleError', 'again'), 'registered');
      ok(e2 instanceof ScheduleError && e2 instanceof webffi.FFIError, String(e2));
      same(e2.kind, 'ScheduleError');
      class PlainError extends Error {}
      webffi.registerError('PlainKind', PlainError);
      const e3 = throws(() => raise('PlainKind', 'x'), 'plain class');
      ok(e3 instanceof PlainError && e3 instanceof webffi.FFIError, String(e3));
      same(String(e3), 'PlainKind: x');
    },

    'a JS exception crosses C and comes back as the same object, C frames appended'() {
      let boom;
      const e = throws(() => g('testing.apply')(function thrower() {
        boom = new TypeError('from JS');
        throw boom;
      }), 'apply');
      same(e, boom, 'identity');
      ok(/in thrower\n/.test(e.backtrace), e.backtrace);
      ok(/in webffi_testing\.testing_apply\n$/.test(e.backtrace), e.backtrace);
      const ffi = new webffi.KeyError('ffi kind from JS');
      same(throws(() => g('testing.apply')(() => { throw ffi; }), 'ffi error'), ffi);
      same(ffi.kind, 'KeyError');
      ok(/in webffi_testing\.testing_apply\n$/.test(ffi.backtrace), ffi.backtrace);
      const early = new Error('made before the call');
      same(throws(() => g('testing.apply')(() => { throw early; }), 'early'), early);
      ok(/in webffi_testing\.testing_apply\n$/.test(early.backtrace), early.backtrace);
    },

    'identity and backtraces survive nested JS -> C -> JS -> C -> JS calls'() {
      const apply = g('testing.apply');
      let boom;
      const e = throws(() => apply(function outer() {
        return apply(function inner() {
          boom = new Error('deep');
          throw boom;
        });
      }), 'nested');
      same(e, boom);
      const frames = e.backtrace.split('\n').filter(Boolean);
      const at = (re) => frames.findIndex((f) => re.test(f));
      ok(at(/in inner$/) >= 0 && at(/in outer$/) > at(/in inner$/), e.backtrace);
      same(frames.filter((f) => /in webffi_testing\.testing_apply$/.test(f)).length, 2, `two C frames:\n${e.backtrace}`);
      ok(at(/in webffi_testing\.testing_apply$/) > at(/in inner$/), 'C frames come after the JS frames');
    },

    'non-Error throws survive the crossing'() {
      const apply = g('testing.apply');
      same(throws(() => apply(() => { throw 'a string'; }), 'string'), 'a string');
      same(throws(() => apply(() => { throw 42; }), 'number'), 42);
      same(throws(() => apply(() => { throw null; }), 'null'), null);
      const obj = { plain: true };
      same(throws(() => apply(() => { throw obj; }), 'object'), obj);
      same(rt.liveJSValues, rt.liveJSValues, 'stable');
    },

    'a C error raised through a callback keeps its kind and backtrace'() {
      const apply = g('testing.apply');
      const raise = g('testing.test_raise_error');
      const e = throws(() => apply(() => raise('ValueError', 'inner C')), 'C in JS in C');
      ok(e instanceof webffi.ValueError, String(e));
      same(e.message, 'inner C');
      const frames = e.backtrace.split('\n').filter(Boolean);
      ok(/in webffi_testing\.testing_raise_error$/.test(frames[0]), e.backtrace);
      ok(/in webffi_testing\.testing_apply$/.test(frames[frames.length - 1]), e.backtrace);
    },

    'thrown values held by C are released'() {
      const before = rt.liveJSValues;
      for (let i = 0; i < 20; i++) throws(() => g('testing.apply')(() => { throw new Error('x'); }), 'throw');
      same(rt.liveJSValues, before);
    },

    'allocation failure is a MemoryError and the runtime keeps working'() {
      const e = throws(() => g('testing.allocate_bytes')(2 ** 32 - 64), 'huge');
      ok(e instanceof webffi.MemoryError, String(e));
      same(e.message, `Failed to allocate ${2 ** 32 - 64} bytes`);
      same(g('testing.allocate_bytes')(1024), 1024);
      same(echo('still working after OOM'), 'still working after OOM');
    },

    'views follow memory growth'() {
      const before = rt.exports.memory.buffer.byteLength;
      same(g('testing.allocate_bytes')(64 * 2 ** 20), 64 * 2 ** 20);
      ok(rt.exports.memory.buffer.byteLength > before, 'memory grew');
      same(echo('a string after growth, longer than 16'), 'a string after growth, longer than 16');
      sameBytes(echo(new Uint8Array([5, 6, 7])), [5, 6, 7]);
    },

    'views follow memory growth in a call that returns None'() {
      const list = g('ffi.List')();
      const append = g('ffi.ListAppend');
      const before = rt.exports.memory.buffer.byteLength;
      for (let i = 0; i < 2 ** 24 && rt.exports.memory.buffer.byteLength === before; i++) same(append(list, i), null);
      ok(rt.exports.memory.buffer.byteLength > before, 'memory grew');
      same(echo('short'), 'short');
      same(echo(2 ** 40), 2 ** 40);
      list.dispose();
    },

    'JS arrays, Maps and plain objects become Array and Map wrappers'() {
      const a = rt.toFFI([1, 'two', [3, 2 ** 60], null]);
      same(a.typeKey, 'ffi.Array');
      same(a.length, 4);
      same(a.at(1), 'two');
      same(a.at(-1), null);
      same(a.at(2).at(1), 1152921504606846976n);
      same(JSON.stringify(a.toJS().slice(0, 2)), '[1,"two"]');
      same([...a].length, 4);
      ok(a.equals([1, 'two', [3, 2 ** 60], null]), 'structural equality');
      ok(!a.equals([1, 'two']), 'inequality');
      same(String(a), '(1, "two", (3, 1152921504606846976), None)');
      ok(throws(() => a.at(9), 'out of range') instanceof webffi.IndexError, 'IndexError');
      const m = rt.toFFI(new Map([['k', 1], [2, [true]]]));
      same(m.typeKey, 'ffi.Map');
      same(m.size, 2);
      same(m.get('k'), 1);
      same(m.get('missing'), undefined);
      ok(m.has(2) && !m.has('2'), 'keys keep their types');
      same(JSON.stringify([...m.toJS()]), '[["k",1],[2,[true]]]');
      same(String(rt.toFFI({ a: 1 })), '{"a": 1}');
      same(echo([1, 2]).typeKey, 'ffi.Array', 'an array argument');
      same(g('testing.apply')((arr) => arr.at(0) + arr.length, [40, 0]), 42, 'containers in callbacks');
    },

    'List, Dict and Shape wrappers'() {
      const l = g('ffi.List')(1, 2);
      l.push(3);
      same(JSON.stringify(l.toJS()), '[1,2,3]');
      same(l.pop(), 3);
      l.set(0, 'x');
      same(l.at(0), 'x');
      const d = g('ffi.Dict')('a', 1);
      d.set('b', 2);
      same(d.size, 2);
      same(d.delete('a'), true);
      same(JSON.stringify([...d.entries()]), '[["b",2]]');
      const s = g('ffi.Shape')(2, 3);
      same(s.typeKey, 'ffi.Shape');
      same(JSON.stringify(s.toJS()), '[2,3]');
      same(s.length, 2);
      same(String(s), 'Shape(2, 3)');
    },

    'reflected objects expose fields as properties and methods as functions'() {
      const Pair = rt.objectClass('testing.TestIntPair');
      const p = Pair.__ffi_init__(1, 2);
      ok(p instanceof Pair && p instanceof webffi.FFIObject, 'instance');
      same(p.typeKey, 'testing.TestIntPair');
      same(p.a, 1);
      same(p.b, 2);
      same(p.sum(), 3);
      same(String(p), 'testing.TestIntPair(a=1, b=2)');
      same(echo(p).b, 2, 'round trip');
      const e = throws(() => rt.objectClass('no.Type'), 'unknown type');
      ok(e instanceof webffi.KeyError, String(e));
    },

    'new on a reflected class makes an object through its __ffi_init__, as upstream\'s Python classes do'() {
      const Pair = rt.objectClass('testing.TestIntPair');
      const p = new Pair(1, 2);
      ok(p instanceof Pair, 'instance');
      same(p.sum(), 3);
      same(String(p), 'testing.TestIntPair(a=1, b=2)');
      // the init's own checks apply
      const bad = throws(() => new Pair('x', 2), 'a str where an int goes');
      ok(bad instanceof TypeError && /__ffi_init__/.test(bad.message), String(bad));
      // a derived class runs its own init, not its parent's
      const Derived = rt.objectClass('testing.TestIntPairDerived');
      const d = new Derived(1, 2, 'c');
      ok(d instanceof Derived && d instanceof Pair, 'derived instance');
      same(d.c, 'c');
      // a JS subclass gets its instances
      class Mine extends Pair {
        twice() { return 2 * this.sum(); }
      }
      const m = new Mine(3, 4);
      ok(m instanceof Mine && m instanceof Pair, 'JS subclass instance');
      same(m.twice(), 14);
      // a type without __ffi_init__ refuses new with a TypeError naming it
      const Missing = rt.objectClass('ffi.reflection.AccessPath');
      const none = throws(() => new Missing(1), 'no init');
      ok(none instanceof TypeError && /ffi\.reflection\.AccessPath/.test(none.message), String(none));
      [p, d, m].forEach((x) => x.dispose());
    },

    // ---- the boundary holds: each test below is one class of hostile input
    async 'another runtime\'s handle is refused, never used as an address in this heap'() {
      const other = await loadT({ wasm });
      const mine = g('ffi.List')(1, 2, 3);
      const theirs = other.getGlobal('ffi.List')(7);
      for (const [what, call] of [
        ['general path', () => g('ffi.ListClear')(theirs)],
        ['as a nested element', () => echo([theirs])],
        ['toFFI', () => rt.toFFI(theirs)],
        ['a Function', () => g('testing.apply')(other.getGlobal('testing.add_one'), 1)],
        ['a callback result', () => g('testing.apply')(() => theirs)],
        ['registerGlobal', () => rt.registerGlobal('js.foreign', other.getGlobal('testing.nop'))],
      ]) {
        const e = throws(call, what);
        ok(e instanceof TypeError && e instanceof webffi.FFIError, `${what}: ${e}`);
        ok(/belongs to another webffi runtime instance/.test(e.message), `${what}: ${e.message}`);
      }
      same(JSON.stringify(mine.toJS()), '[1,2,3]', 'this runtime\'s List is untouched');
      same(JSON.stringify(theirs.toJS()), '[7]', 'the other runtime\'s List is untouched');
      const proxied = new Proxy(mine, {});
      ok(throws(() => echo(proxied), 'a Proxy of a handle') instanceof TypeError, 'a Proxy is not a handle');
      const tv = other.tensor(new Float32Array([1]));
      ok(/another webffi runtime/.test(throws(() => echo(tv.asDLTensorPtr()), 'DLTensor*').message), 'DLTensor*');
      ok(/another webffi runtime/.test(throws(() => echo(tv), 'tensor').message), 'tensor');
      same(rt.poisoned, null, 'not poisoned');
    },

    'a Map or object whose getters add entries while converted cannot write past the arguments'() {
      const canaries = Array.from({ length: 20 }, (_, i) => g('ffi.List')(i, `canary ${i}`));
      const m = new Map([['a', 1]]);
      const key = { get k() { for (let i = 0; i < 50; i++) m.set(`added ${i}`, i); return 1; } };
      m.set(key, 2);
      const made = rt.toFFI(m);
      same(made.size, 2, 'the Map as it was when the conversion started');
      const rec = { a: 1, get b() { rec.c = 3; rec.d = 4; return 2; } };
      same(rt.toFFI(rec).size, 2, 'the object as its keys were read');
      const arr = [1, 2];
      Object.defineProperty(arr, 0, { get() { for (let i = 0; i < 100; i++) arr.push(i); return 1; } });
      same(rt.toFFI(arr).length, 2, 'the array as its length was read');
      canaries.forEach((c, i) => same(JSON.stringify(c.toJS()), JSON.stringify([i, `canary ${i}`]), `canary ${i}`));
    },

    'huge sparse arrays and oversized requests are MemoryErrors, and the runtime keeps working'() {
      for (const n of [2 ** 27, 2 ** 28 + 1, 2 ** 32 - 1]) {
        const a = [];
        a.length = n;
        const e = throws(() => echo(a), `length ${n}`);
        ok(e instanceof webffi.MemoryError, `length ${n}: ${e}`);
      }
      const lie = new Proxy([], { get: (t, k) => (k === 'length' ? -5 : t[k]) });
      ok(throws(() => echo(lie), 'negative length') instanceof webffi.ValueError, 'negative length');
      same(echo('still working'), 'still working');
      same(rt.poisoned, null);
    },

    'a callback that throws a hostile Proxy does not poison: the same value comes back out'() {
      const hostile = new Proxy({}, {
        get() { throw new Error('get trap'); },
        getPrototypeOf() { throw new Error('getPrototypeOf trap'); },
        has() { throw new Error('has trap'); },
        defineProperty() { throw new Error('defineProperty trap'); },
      });
      const e = throws(() => g('testing.apply')(() => { throw hostile; }), 'hostile throw');
      ok(e === hostile, 'identity'); // (same() would print the Proxy, which throws)
      const big = new Error('x'.repeat(2 ** 20));
      same(throws(() => g('testing.apply')(() => { throw big; }), 'large message'), big);
      same(rt.poisoned, null, 'not poisoned');
      same(g('testing.add_one')(1), 2);
    },

    'cyclic and too deeply nested JS values are ValueErrors, not stack overflows'() {
      const a = [1];
      a.push(a);
      const o = { x: 1 };
      o.self = o;
      const m = new Map();
      m.set('m', m);
      for (const [what, v] of [['array', a], ['object', o], ['Map', m], ['indirect', [{ y: [a] }]]]) {
        const e = throws(() => echo(v), what);
        ok(e instanceof webffi.ValueError && /cyclic/.test(e.message), `${what}: ${e}`);
      }
      let deep = [];
      for (let i = 0; i < 10000; i++) deep = [deep];
      const e = throws(() => rt.toFFI(deep), 'deep');
      ok(e instanceof webffi.ValueError && /deeper than 256 levels/.test(e.message), String(e));
      let ok200 = [];
      for (let i = 0; i < 200; i++) ok200 = [ok200];
      same(rt.toFFI(ok200).length, 1, '200 levels convert');
      const shared = [1, 2];
      same(JSON.stringify(rt.toFFI([shared, shared]).toJS()), '[[1,2],[1,2]]', 'a shared (not cyclic) value converts');
    },

    'detached buffers are TypeErrors of ours'() {
      const buf = new ArrayBuffer(8);
      const view = new Uint8Array(buf);
      structuredClone(buf, { transfer: [buf] });
      for (const [what, v] of [['ArrayBuffer', buf], ['Uint8Array', view]]) {
        const e = throws(() => echo(v), what);
        ok(e instanceof TypeError && e instanceof webffi.FFIError && /detached/.test(e.message), `${what}: ${e}`);
      }
      const f = new Float32Array(4);
      structuredClone(f.buffer, { transfer: [f.buffer] });
      const e = throws(() => rt.tensor(f), 'tensor');
      ok(e instanceof webffi.FFIError && /detached/.test(e.message), String(e));
      sameBytes(echo(new Uint8Array(0)), [], 'an empty (not detached) Uint8Array still converts');
    },

    'typed arrays whose getters lie cannot make a copy overrun its destination'() {
      class Liar extends Uint8Array {
        get length() { return 1; }
        get byteLength() { return 1; }
        get byteOffset() { return 0; }
      }
      const canary = g('ffi.List')('canary');
      const back = echo(new Liar(64).fill(7));
      same(back.length, 64, 'the engine\'s length is used');
      class BigLiar extends Float32Array {
        get length() { return 1 << 20; }
        get byteLength() { return 1 << 22; }
      }
      const t = rt.tensor(new BigLiar([1, 2]), { dtype: 'float32' });
      same(JSON.stringify(Array.from(t.view())), '[1,2]');
      same(throws(() => t.set(new BigLiar(3)), 'set').kind, 'TypeError');
      same(canary.at(0), 'canary');
    },

    async 'null and odd options objects are TypeErrors of ours'() {
      for (const [what, call] of [
        ['getGlobal', () => rt.getGlobal('testing.echo', null)],
        ['registerGlobal', () => rt.registerGlobal('js.x', () => 1, 5)],
        ['tensor', () => rt.tensor(new Float32Array(1), null)],
      ]) {
        const e = throws(call, what);
        ok(e instanceof TypeError && e instanceof webffi.FFIError && /options must be an object/.test(e.message), `${what}: ${e}`);
      }
      const e = await rejects(webffi.load(null), 'load(null)');
      ok(e instanceof webffi.FFIError && /options must be an object/.test(e.message), String(e));
      same(rt.getGlobal('testing.echo', {})(1), 1);
    },

    async 'a wasm trap poisons the instance: every later call throws one fatal error'() {
      const doomed = await loadT({ wasm });
      const add = doomed.getGlobal('testing.add_one');
      const e = throws(() => doomed.getGlobal('testing.trap')(), 'trap');
      ok(e instanceof webffi.FatalError, String(e));
      ok(/wasm trap/.test(e.message), e.message);
      ok(e.cause instanceof WebAssembly.RuntimeError, 'cause is the trap');
      const later = throws(() => add(1), 'later call');
      ok(later instanceof webffi.FatalError && /poisoned/.test(later.message), String(later));
      ok(throws(() => doomed.getGlobal('testing.echo'), 'lookup') instanceof webffi.FatalError, 'lookup');
      same(g('testing.add_one')(1), 2, 'other instances are unaffected');
    },

    'a trap inside a callback poisons too'() {
      return loadT({ wasm }).then((doomed) => {
        const trap = doomed.getGlobal('testing.trap');
        const e = throws(() => doomed.getGlobal('testing.apply')(() => trap()), 'nested trap');
        ok(e instanceof webffi.FatalError, String(e));
        ok(doomed.poisoned instanceof WebAssembly.RuntimeError, 'poisoned');
      });
    },
  };
}
