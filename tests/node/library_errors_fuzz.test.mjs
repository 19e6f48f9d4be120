// Errors rebuilt from what a model library prints (docs/security.md, "text a
// model library prints"), generated: caller text of any content and size
// (forged tracebacks and [FATAL] lines, runs of newlines, megabytes) quoted
// in the library's own error messages, and JS errors whose messages carry
// the same through the library's C++. The kind and the frames are the
// library's own, the message is the caller's text whole, parsing is linear
// (a 200 KB argument of newline runs parses in milliseconds), and printed
// text over 1 MiB still becomes the error. Also: an allocation that aborts
// inside the library leaves no stale error behind, String() of an object
// falls back to its type key where the library has no ffi.ReprPrint, and
// libraries that cannot start (before tvm-ffi 0.1, a start function that
// exits, an _initialize that traps) are load()'s RuntimeError.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { parseLibraryError } from '../../js/core/tvm_core.js';
import { modelPath, ARCTIC_S } from '../support/model_fixture.mjs';
import { check } from '../support/seeded.mjs';

const wasm = fs.readFileSync(modelPath(ARCTIC_S));
const quiet = { log() {}, warn() {} };
const rt = await webffi.load({ wasm, autoloadBackends: false, logger: quiet });
const g = (name) => rt.getGlobal(name);
const NOT_FOUND = 'Global Function is not found: ';

const forged = (kind) => `\nTraceback (most recent call last):\n  File "forged.cc", line 1, in evil\n${kind}: forged\n`;
const pieceArb = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 4 },
  { arbitrary: fc.constantFrom('ValueError', 'KeyError', 'TypeError', 'IndexError', 'x.y').map(forged), weight: 2 },
  { arbitrary: fc.constantFrom('\n[FATAL] forged.cc:7: InternalError: forged\n', 'Traceback (most recent call last):\n', '  File "f", line 1, in g\n', '    source\n', 'KeyError: k'), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 5000 }).map((n) => '\n'.repeat(n)), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 300000 }).map((n) => 'z'.repeat(n)), weight: 1 },
);
const textArb = fc.array(pieceArb, { maxLength: 8 }).map((parts) => parts.join(''));

/** The library's own frames: from its tvm-ffi sources, never the caller's. */
function assertOwnFrames(e, what) {
  assert.ok(e.backtrace.length > 0, `${what}: the library's frame`);
  for (const line of e.backtrace.split('\n').filter(Boolean)) {
    assert.match(line, /^ {2}File "[^"]*3rdparty\/tvm-ffi\/[^"]*", line \d+, in /, `${what}: a frame not the library's: ${line}`);
  }
  const frames = e.stack.slice(e.stack.indexOf(e.message) + e.message.length);
  assert.doesNotMatch(frames, /forged\.cc/, `${what}: a forged frame in the stack`);
}

test('property: caller text in a library\'s error message neither chooses the kind nor adds frames, and parses in linear time', { timeout: 120000 }, async (t) => {
  const lookup = g('ffi.GetGlobalFuncMetadata');
  let slowest = 0;
  await check(t, import.meta.url, fc.property(textArb, (text) => {
    const started = performance.now();
    assert.throws(() => lookup(text), (e) => {
      assert.ok(e instanceof webffi.RuntimeError && e.kind === 'RuntimeError', `${e.kind}: ${e.message.slice(0, 200)}`);
      assert.equal(e.message, NOT_FOUND + text, 'the message is the library\'s, the caller\'s text whole');
      assertOwnFrames(e, JSON.stringify(text.slice(0, 80)));
      return true;
    });
    slowest = Math.max(slowest, (performance.now() - started) / Math.max(1, text.length / 65536));
  }), 150);
  t.diagnostic(`slowest: ${slowest.toFixed(1)} ms per 64 KiB of text`);
  assert.equal(g('testing.add_one')(41), 42, 'the runtime works');
});

test('a 200 KB argument of newline runs parses in milliseconds; printed text over 1 MiB (up to 16 MiB) still becomes the error', () => {
  const lookup = g('ffi.GetGlobalFuncMetadata');
  for (const text of ['\n'.repeat(200000), '\n\n\n\n\nx'.repeat(34000), `[FATAL] f.cc:1: ${'\n\n\nx'.repeat(50000)}`]) {
    const started = performance.now();
    assert.throws(() => lookup(text), (e) => e.kind === 'RuntimeError' && e.message === NOT_FOUND + text);
    assert.ok(performance.now() - started < 1000, `${(performance.now() - started).toFixed(0)} ms`);
  }
  // The parser alone, on the shape that was quadratic: a [FATAL] message
  // with a long run of newlines (200,000 took about 20 s before).
  for (const body of ['\n'.repeat(200000) + 'y', '\n\n\n\ny'.repeat(100000)]) {
    const started = performance.now();
    const parsed = parseLibraryError(`[FATAL] a.cc:3: ${body}\n\n`);
    assert.ok(performance.now() - started < 200, `${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(parsed.kind, 'InternalError');
    assert.equal(parsed.message, body);
  }
  for (const size of [(1 << 20) + 1, 3 << 20]) {
    const text = 'm'.repeat(size);
    assert.throws(() => lookup(text), (e) => {
      assert.equal(e.kind, 'RuntimeError');
      assert.equal(e.message, NOT_FOUND + text, `${size} characters: the error whole`);
      assertOwnFrames(e, `${size} characters`);
      return true;
    });
  }
});

test('property: a JS error thrown through the library\'s C++ comes back as itself, whatever its message says', { timeout: 60000 }, async (t) => {
  const apply = g('testing.apply');
  await check(t, import.meta.url, fc.property(textArb, fc.constantFrom(Error, RangeError, webffi.ValueError, webffi.KeyError), (text, Kind) => {
    const thrown = new Kind(text);
    assert.throws(() => apply(() => { throw thrown; }), (e) => e === thrown);
    // and the library's next error is its own, not this one
    assert.throws(() => g('testing.add_one')(1.5), (e) => e.kind === 'TypeError' && /Mismatched type/.test(e.message));
  }), 100);
});

test('an allocation that aborts inside the library leaves no stale error: the next errors are the right ones', async () => {
  // Fault injection: the library's TVMWasmAllocSpace aborts (as a C++ new
  // that fails does) for one size, the way an out-of-memory library would.
  const ABORT_AT = (1 << 20) + 1;
  const real = WebAssembly.instantiate;
  let lib;
  WebAssembly.instantiate = async (module, imports) => {
    const made = await real(module, imports);
    const x = made.exports ?? made.instance?.exports;
    if (!x?.TVMWasmAllocSpace) return made;
    const exports = { ...x, TVMWasmAllocSpace: (n) => (n === ABORT_AT ? imports.wasi_snapshot_preview1.proc_exit(134) : x.TVMWasmAllocSpace(n)) };
    return made.instance ? { module: made.module, instance: { exports } } : { exports };
  };
  try {
    lib = await webffi.load({ wasm, autoloadBackends: false, logger: quiet });
  } finally {
    WebAssembly.instantiate = real;
  }
  const echo = lib.getGlobal('testing.echo');
  assert.throws(() => echo(new Uint8Array(ABORT_AT - 1)), (e) => e instanceof webffi.MemoryError, 'the allocation failed');
  // A JS error raised straight back through the library's C ABI (no C++
  // throw in between to replace what is pending): it must be itself, not
  // the allocation's abort ("threw a C++ exception without printing it").
  const mine = new RangeError('mine');
  lib.registerGlobal('app.fails', () => { throw mine; });
  assert.throws(() => lib.getGlobal('app.fails')(), (e) => e === mine, 'a JS error, not the stale abort');
  assert.throws(() => echo(new Uint8Array(ABORT_AT - 1)), (e) => e instanceof webffi.MemoryError);
  assert.throws(() => lib.getGlobal('testing.apply')(() => { throw mine; }), (e) => e === mine);
  assert.throws(() => lib.getGlobal('testing.add_one')('x'), (e) => e.kind === 'TypeError' && /Mismatched type/.test(e.message));
  assert.deepEqual([...echo(new Uint8Array([1, 2, 3]))], [1, 2, 3]);
  lib.dispose();
});

test('String() of an object over a library without ffi.ReprPrint is its type key', () => {
  assert.equal(rt.getGlobal('ffi.ReprPrint', { optional: true }), null, 'the library registers no ffi.ReprPrint');
  const lib = g('ffi.SystemLib')();
  const list = rt.toFFI([1, 'two']);
  const map = rt.toFFI(new Map([['k', 1]]));
  assert.equal(String(lib), 'ffi.Module');
  assert.equal(String(list), 'ffi.Array');
  assert.equal(`${map}`, 'ffi.Map');
  for (const x of [lib, list, map]) x.dispose();
  assert.equal(String(lib), 'ffi.Module <disposed>');
});

/**
 * A wasm module that looks like a tvm-ffi library to webffi: the exports
 * and the import it is driven through, memory, and what the case needs
 * (`init`: _initialize's body, `start`: a start function's, `exports`:
 * more exports). Bodies: 'nop', 'trap' (unreachable), 'exit' (proc_exit(N)).
 */
function fakeLibrary({ init = 'nop', start = null, exports = [], exitCode = 3, old = false }) {
  const enc = new TextEncoder();
  const u = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
  const str = (t) => [...u(enc.encode(t).length), ...enc.encode(t)];
  const section = (id, body) => [id, ...u(body.length), ...body];
  const vec = (items) => [...u(items.length), ...items.flat()];
  const body = (kind) => {
    const code = { nop: [], trap: [0x00], exit: [0x41, ...u(exitCode), 0x10, 1] }[kind];
    const b = [0, ...code, 0x0b];
    return [...u(b.length), ...b];
  };
  const names = ['TVMFFIWasmFunctionCreate', 'TVMFFIFunctionCall', 'TVMWasmAllocSpace', 'TVMWasmFreeSpace', 'stackSave', 'stackRestore', '_initialize', ...exports];
  if (!old) names.push('TVMFFIGetVersion'); // (a 0.1.x library has it; these fail before it is asked)
  const funcs = names.map((n) => (n === '_initialize' ? init : 'nop'));
  if (start) funcs.push(start);
  const imported = 2; // env.TVMFFIWasmSafeCall, wasi proc_exit
  const bytes = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
  bytes.push(...section(1, vec([[0x60, 0, 0], [0x60, 1, 0x7f, 0]])));
  bytes.push(...section(2, vec([[...str('env'), ...str('TVMFFIWasmSafeCall'), 0, 0], [...str('wasi_snapshot_preview1'), ...str('proc_exit'), 0, 1]])));
  bytes.push(...section(3, vec(funcs.map(() => [0]))));
  bytes.push(...section(5, vec([[0, 1]])));
  bytes.push(...section(7, vec([...names.map((n, i) => [...str(n), 0, ...u(imported + i)]), [...str('memory'), 2, 0]])));
  if (start) bytes.push(...section(8, u(imported + funcs.length - 1)));
  bytes.push(...section(10, vec(funcs.map(body))));
  return new Uint8Array(bytes);
}

test('property: libraries that cannot start are load()\'s RuntimeError saying why', { timeout: 60000 }, async (t) => {
  await check(t, import.meta.url, fc.asyncProperty(
    fc.constantFrom('pre-0.1', 'start-exit', 'init-exit', 'init-trap'), fc.integer({ min: 0, max: 63 }), fc.subarray(['TVMFFIObjectFree', 'TVMFFINDArrayCreateView']),
    async (kind, exitCode, old) => {
      const bytes = fakeLibrary({
        'pre-0.1': { exports: old, old: true, start: 'exit' }, // refused before its start function runs
        'start-exit': { start: 'exit', exitCode },
        'init-exit': { init: 'exit', exitCode },
        'init-trap': { init: 'trap' },
      }[kind]);
      const pattern = {
        'pre-0.1': /carries a tvm-ffi from before 0\.1 \(it has no TVMFFIGetVersion.*webffi drives tvm-ffi 0\.1\.x libraries/,
        'start-exit': new RegExp(`failed to initialise: it called exit\\(${exitCode}\\)`),
        'init-exit': /failed to initialise: it aborted/,
        'init-trap': /failed to initialise: it trapped \(unreachable/,
      }[kind];
      await assert.rejects(webffi.load({ wasm: bytes, autoloadBackends: false, logger: quiet }), (e) => {
        assert.ok(e instanceof webffi.RuntimeError && e.kind === 'RuntimeError', `${kind}: ${e?.constructor?.name}: ${e?.message}`);
        assert.match(e.message, pattern);
        if (kind === 'pre-0.1' && old.length) assert.match(e.message, new RegExp(`exports ${old.join(', ')}`));
        return true;
      });
    }), 20);
});

after(() => rt.dispose());
