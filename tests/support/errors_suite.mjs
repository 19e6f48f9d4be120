// Errors as complete as upstream's: the behaviours upstream's
// tests/python/test_error.py checks of its Python errors, checked of
// webffi's JS errors, as named tests that run unchanged in Node
// (tests/node/errors.test.mjs) and in Chromium (tests/browser/debug.test.mjs).
// They use webffi's own fixtures (testing.*); tests/upstream/errors.test.mjs
// runs the same behaviours on upstream's testing library built as a module.
// `webffi` is the package's exports.
import { assert, assertEqual, same, thrown } from '../browser/harness_page.mjs';
import { loadTesting } from './testing_module.mjs';

const count = (text, word) => text.split('\n').filter((line) => line.includes(`in ${word}`)).length;
const at = (text, word) => text.split('\n').findIndex((line) => line.includes(`in ${word}`));

export function errorTests(webffi) {
  let rt;
  const g = (name) => rt.getGlobal(name);

  return {
    async 'an error raised in C has its kind, message and the raising C frame'() {
      rt = await loadTesting(await webffi.load());
      const raise = g('testing.test_raise_error');
      const e = thrown(() => raise('ValueError', 'error XYZ'), 'raise');
      assert(e instanceof webffi.ValueError, String(e));
      assertEqual([e.kind, e.message], ['ValueError', 'error XYZ']);
      assertEqual(count(e.backtrace, 'webffi_testing.testing_raise_error'), 1, e.backtrace);
      // raised through a JS function made an FFI function
      const fapply = rt.toFFI((f, ...args) => f(...args));
      const viaJS = thrown(() => fapply(raise, 'TypeError', 'error XYZ'), 'through fapply');
      assert(viaJS instanceof TypeError && viaJS.kind === 'TypeError', String(viaJS));
    },

    'a C error through JS in C: the C frames, the JS frames between them, each once, innermost first'() {
      const raise = g('testing.test_raise_error');
      const apply = g('testing.apply');
      const jsApply = (f, ...args) => f(...args);
      const fapply = rt.toFFI(jsApply);
      let recorded = null;
      function raiseError() {
        try {
          fapply(raise, 'ValueError', 'error XYZ');
        } catch (e) {
          assertEqual([e.kind, e.message], ['ValueError', 'error XYZ']);
          assertEqual(count(e.backtrace, 'webffi_testing.testing_raise_error'), 1, e.backtrace);
          recorded = e;
          throw e;
        }
      }
      const e = thrown(() => apply(raiseError), 'apply');
      same(e, recorded, 'the same error object');
      const bt = e.backtrace;
      for (const word of ['webffi_testing.testing_raise_error', 'jsApply', 'raiseError', 'webffi_testing.testing_apply']) {
        assertEqual(count(bt, word), 1, `${word} once:\n${bt}`);
      }
      assert(at(bt, 'webffi_testing.testing_raise_error') < at(bt, 'jsApply'), bt);
      assert(at(bt, 'jsApply') < at(bt, 'raiseError'), bt);
      assert(at(bt, 'raiseError') < at(bt, 'webffi_testing.testing_apply'), bt);
      // e.stack lists the same frames in the same order (innermost first)
      const stackAt = (word) => e.stack.split('\n').findIndex((line) => line.includes(word));
      assert(stackAt('testing_raise_error') < stackAt('jsApply') && stackAt('jsApply') < stackAt('raiseError') &&
        stackAt('raiseError') < stackAt('testing_apply'), e.stack);
      assert(!('traceback' in e), 'one order: no reversed copy');
    },

    'a JS error made an FFI value carries the frame that raised it'() {
      function raiseErrorInJS() {
        throw new webffi.ValueError('error XYZ');
      }
      const e = thrown(() => raiseErrorInJS(), 'JS raise');
      same(rt.toFFI(e), e, 'comes back as itself');
      assert(count(e.backtrace, 'raiseErrorInJS') === 1, e.backtrace);
      function raisePlain() {
        throw new RangeError('plain');
      }
      const plain = thrown(() => raisePlain(), 'plain JS raise');
      same(g('testing.echo')(plain), plain, 'any JS error converts, as upstream converts any exception');
      assertEqual(count(plain.backtrace, 'raisePlain'), 1, plain.backtrace);
    },

    'a C error passed through JS and back gains its JS frames once, not only C frames'() {
      const raise = g('testing.test_raise_error');
      const echo = g('testing.echo');
      function raiseCxxError() {
        raise('ValueError', 'error XYZ');
      }
      const e = thrown(() => raiseCxxError(), 'raise');
      assertEqual(count(e.backtrace, 'raiseCxxError'), 0, `no JS frame before it crosses:\n${e.backtrace}`);
      const own = e.backtrace;
      same(rt.toFFI(e), e, 'converted');
      assert(e.backtrace.startsWith(own), e.backtrace);
      assertEqual(count(e.backtrace, 'raiseCxxError'), 1, e.backtrace);
      same(echo(e), e, 'through C');
      assertEqual(count(e.backtrace, 'raiseCxxError'), 1, `no frame twice:\n${e.backtrace}`);
      assertEqual(count(e.backtrace, 'webffi_testing.testing_raise_error'), 1, e.backtrace);
    },

    'a frame C names itself (TVMFFIBacktrace with file and line) is not doubled by its wasm frame'() {
      const chained = g('testing.raise_chained');
      const e = thrown(() => chained('ValueError', 'outer', 'KeyError', 'inner', null), 'raise');
      const lines = e.backtrace.split('\n').filter(Boolean);
      assertEqual(lines.filter((l) => l.includes('testing_raise_chained')).length, 1, e.backtrace);
      assert(/^ {2}File "[^"]*src\/testing\/functions\.c", line \d+, in testing_raise_chained$/.test(lines[0]), e.backtrace);
    },

    'the cause chain and extra context of a C error survive crossing JS, on the same error'() {
      const chained = g('testing.raise_chained');
      const apply = g('testing.apply');
      const context = rt.toFFI([1, 'two']);
      const e = thrown(() => chained('ValueError', 'outer', 'KeyError', 'inner', context), 'raise');
      assert(e instanceof webffi.ValueError, String(e));
      assert(e.cause instanceof webffi.KeyError && e.cause.message === 'inner', String(e.cause));
      assert(e.extraContext instanceof webffi.ArrayObject && e.extraContext.equals([1, 'two']), String(e.extraContext));
      // thrown through a JS callback into C and out again: the same error, cause and context
      const back = thrown(() => apply(() => {
        throw e;
      }), 'through JS and C');
      same(back, e, 'identity');
      same(back.cause, e.cause, 'cause');
      assert(back.extraContext.equals([1, 'two']), 'extra context');
      // passed to C as a value and returned: the same again
      same(g('testing.echo')(e), e, 'echo');
      // an error without either holds nothing more than before
      const plain = thrown(() => g('testing.test_raise_error')('ValueError', 'x'), 'plain');
      same(plain.cause, undefined);
      same(plain.extraContext, undefined);
    },

    'a JS error\'s cause survives crossing C'() {
      const apply = g('testing.apply');
      const inner = new webffi.KeyError('inner');
      const outer = new Error('outer', { cause: inner });
      same(thrown(() => apply(() => {
        throw outer;
      }), 'cause'), outer);
      same(outer.cause, inner);
    },

    'the same error thrown through C again and again keeps a bounded backtrace'() {
      const apply = g('testing.apply');
      const err = new Error('again');
      const lengths = [];
      for (let i = 0; i < 200; i++) {
        same(thrown(() => apply(() => {
          throw err;
        }), 'rethrow'), err);
        lengths.push(err.backtrace.length);
      }
      assertEqual(new Set(lengths.slice(1)).size, 1, 'the same length every time');
      assertEqual(count(err.backtrace, 'webffi_testing.testing_apply'), 1, err.backtrace);
    },
  };
}
