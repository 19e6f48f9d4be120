// Backtraces with file, line and function, as named tests that run
// unchanged in Node (tests/node/debug.test.mjs) and in Chromium
// (tests/browser/debug.test.mjs): the modules of tests/modules/traced.c
// and traced_cxx.cc, built with -g at -O0 and -O2, with
// -gline-tables-only, plain and linked in (tests/modules/CMakeLists.txt),
// raise an error two helpers deep.
// env: { webffi, moduleSource(name), moduleBytes(name), sourceText(file), runtimeLines() }.
import { assert, assertEqual, thrown } from '../browser/harness_page.mjs';

/** The line of each `line: NAME` comment of a source: { raise: 10, ... }. */
function markedLines(text) {
  const lines = {};
  text.split('\n').forEach((line, i) => {
    const m = /line: (\w+)/.exec(line);
    if (m) lines[m[1]] = i + 1;
  });
  return lines;
}

/** The ABI lines of a backtrace as { file, line, func, inlined } (line: null for `line unknown`). */
function framesOf(backtrace) {
  return backtrace.split('\n').filter(Boolean).map((text) => {
    const m = /^ {2}File "(.*)", line (\d+|unknown), in (.*?)( \[inlined\])?$/.exec(text);
    assert(m, `an ABI backtrace line: ${JSON.stringify(text)}`);
    return { file: m[1], line: m[2] === 'unknown' ? null : Number(m[2]), func: m[3], inlined: m[4] !== undefined };
  });
}

/** Asserts the C frames of an error raised in traced.c two helpers deep. */
function expectTraced(e, lines, { inlined, what }) {
  assertEqual(e.message, 'n must not be negative', what);
  const frames = framesOf(e.backtrace).slice(0, 3);
  const expected = [['check_positive', lines.raise], ['validate', lines.validate], ['__tvm_ffi_traced', lines.entry]];
  expected.forEach(([func, line], i) => {
    const f = frames[i];
    assert(f, `${what}: frame ${i} missing:\n${e.backtrace}`);
    assert(f.file.endsWith('tests/modules/traced.c'), `${what}: the file of ${func}: ${f.file}`);
    assertEqual([f.func, f.line], [func, line], `${what}: frame ${i}`);
    assertEqual(f.inlined, inlined && i < 2, `${what}: ${func} inlined`);
  });
  // e.stack shows the same frames, file:line:column as V8 shows JS frames
  const stack = e.stack.split('\n');
  expected.forEach(([func, line], i) => {
    const re = new RegExp(`^ {4}at ${func}${inlined && i < 2 ? ' \\[inlined\\]' : ''} \\(.*tests/modules/traced\\.c:${line}:\\d+\\)$`);
    assert(re.test(stack[i + 1]), `${what}: e.stack line ${i + 1} for ${func}:\n${e.stack}`);
  });
  assert(!/line 0\b/.test(e.backtrace), `${what}: no line 0:\n${e.backtrace}`);
}

export const debugTests = {
  async '-g at -O0: the raising helper, its caller and the entry each show file and line'(env) {
    const lines = markedLines(await env.sourceText('traced.c'));
    const rt = await env.webffi.load();
    const traced = (await rt.loadModule(env.moduleSource('traced_g_O0'))).getFunction('traced');
    assertEqual(traced(21), 42);
    expectTraced(thrown(() => traced(-1), '-O0'), lines, { inlined: false, what: '-g -O0' });
  },

  async '-g at -O2: the helpers the compiler inlined are frames of their own, marked [inlined]'(env) {
    const lines = markedLines(await env.sourceText('traced.c'));
    const rt = await env.webffi.load();
    const traced = (await rt.loadModule(env.moduleSource('traced_g_O2'))).getFunction('traced');
    expectTraced(thrown(() => traced(-1), '-O2'), lines, { inlined: true, what: '-g -O2' });
  },

  async '-gline-tables-only: the same frames from a module that carries no DWARF'(env) {
    const lines = markedLines(await env.sourceText('traced.c'));
    const bytes = await env.moduleBytes('traced_lines');
    const compiled = new WebAssembly.Module(bytes);
    assertEqual(WebAssembly.Module.customSections(compiled, '.debug_info').length, 0, 'no DWARF');
    assertEqual(WebAssembly.Module.customSections(compiled, 'webffi.lines').length, 1, 'a line table');
    const withDwarf = new WebAssembly.Module(await env.moduleBytes('traced_g_O2'));
    assertEqual(WebAssembly.Module.customSections(withDwarf, '.debug_info').length, 1, '-g keeps DWARF');
    const rt = await env.webffi.load();
    const traced = (await rt.loadModule(bytes)).getFunction('traced');
    expectTraced(thrown(() => traced(-1), 'release'), lines, { inlined: true, what: '-gline-tables-only' });
  },

  async 'without -g a frame keeps its wasm location and says it has no line'(env) {
    const rt = await env.webffi.load();
    const traced = (await rt.loadModule(env.moduleSource('traced_plain'))).getFunction('traced');
    const e = thrown(() => traced(-1), 'plain');
    const [top] = framesOf(e.backtrace);
    assert(/^wasm:\/\/wasm\/traced_plain-[0-9a-f]+:wasm-function\[\d+\]:0x[0-9a-f]+$/.test(top.file), e.backtrace);
    assertEqual(top.line, null, 'line unknown');
    assert(/traced_plain\.(__tvm_ffi_traced|validate|check_positive)$/.test(top.func), e.backtrace);
    assert(!/line 0\b/.test(e.backtrace), e.backtrace);
  },

  async 'linked in with -g: the sources linked into the runtime show file and line'(env) {
    const lines = markedLines(await env.sourceText('traced.c'));
    const rt = await env.webffi.load({ wasm: await env.moduleBytes('traced_system_lib') });
    const traced = rt.getGlobal('ffi.SystemLib')().getFunction('traced');
    expectTraced(thrown(() => traced(-1), 'linked in'), lines, { inlined: true, what: 'linked in' });
  },

  async 'a C error through a JS callback: C frames with lines, the JS frame between, the C caller'(env) {
    const lines = markedLines(await env.sourceText('traced.c'));
    const { loadTesting } = await import('./testing_module.mjs');
    const rt = await loadTesting(await env.webffi.load());
    const traced = (await rt.loadModule(env.moduleSource('traced_g_O2'))).getFunction('traced');
    const apply = rt.getGlobal('testing.apply');
    const e = thrown(() => apply(function betweenCalls(n) {
      return traced(n);
    }, -1), 'nested');
    const frames = framesOf(e.backtrace);
    assertEqual(frames.slice(0, 3).map((f) => [f.func, f.line]),
      [['check_positive', lines.raise], ['validate', lines.validate], ['__tvm_ffi_traced', lines.entry]], e.backtrace);
    assertEqual(frames[3].func, 'betweenCalls', e.backtrace);
    assert(/^webffi_testing\.testing_apply$/.test(frames[4].func), e.backtrace);
    assertEqual(frames.length, 5, e.backtrace);
  },

  async 'C++: frames read as the names are written (namespace, class, template), none mangled'(env) {
    const lines = markedLines(await env.sourceText('traced_cxx.cc'));
    const rt = await env.webffi.load();
    const checkRank = (await rt.loadModule(env.moduleSource('traced_cxx_g'))).getFunction('check_rank');
    assertEqual(checkRank(3), null);
    const e = thrown(() => checkRank(2), 'C++ -g');
    assertEqual(e.message, 'expected rank 3, got 2');
    assertEqual(framesOf(e.backtrace).map((f) => [f.func, f.line]), [
      ['shapes::Checker<3>::check_rank', lines.raise],
      ['shapes::(anonymous namespace)::validate', lines.validate],
      ['__tvm_ffi_check_rank', lines.entry],
    ], e.backtrace);
    // without -g: the names the linker wrote (demangled), with no line
    const plain = (await rt.loadModule(env.moduleSource('traced_cxx_plain'))).getFunction('check_rank');
    const p = thrown(() => plain(2), 'C++ plain');
    const frames = framesOf(p.backtrace);
    assertEqual(frames[0].func, 'traced_cxx_plain.shapes::Checker<3>::check_rank(long long)', p.backtrace);
    for (const text of [e.backtrace, p.backtrace, e.stack, p.stack]) {
      assert(!/_Z[A-Z0-9]|\.\d+[ )]|line 0\b/.test(text), `no mangled names, linker suffixes or line 0:\n${text}`);
    }
    // each e.stack line is `at NAME (LOCATION)`, the name whole
    for (const line of p.stack.split('\n').slice(1, 3)) {
      assert(/^ {4}at traced_cxx_plain\.\S.*\) \(wasm:\/\/wasm\/[^ ]+\)$|^ {4}at traced_cxx_plain\.__tvm_ffi_check_rank \(/.test(line), line);
    }
  },

  async 'the runtime\'s own frames: from its debug file when load() is given it, left out without'(env) {
    const plain = await env.webffi.load();
    const key = (rt) => thrown(() => rt.getGlobal('ffi.MapGetItem')(rt.toFFI(new Map([['a', 1]])), 'b'), 'KeyError');
    assertEqual(key(plain).backtrace, '', 'the runtime\'s frames are left out without its line table');
    const warnings = [];
    const logger = { log() {}, warn: (m) => warnings.push(m) };
    const rt = await env.webffi.load({ debugInfo: true, logger });
    assertEqual(warnings, []);
    const e = key(rt);
    const [top] = framesOf(e.backtrace);
    assert(/^src\/map\.c$/.test(top.file) && top.line > 0, e.backtrace);
    assert(/^ {4}at \S+ \(src\/map\.c:\d+:\d+\)$/.test(e.stack.split('\n')[1]), e.stack);
    // a debug file made for another build is refused with one warning, and never breaks load()
    const lines = await env.runtimeLines();
    const other = lines.slice();
    let at = 4; // past the magic, the code offset (LEB128) and the id's length: the id's last byte
    while (other[at] & 0x80) at++;
    at += 1 + other[at + 1];
    other[at] ^= 0xff;
    const refused = await env.webffi.load({ debugInfo: other, logger });
    assertEqual(warnings.length, 1, warnings.join('\n'));
    assert(/debug file was not used: it was made for another build/.test(warnings[0]), warnings[0]);
    assertEqual(key(refused).backtrace, '');
    await env.webffi.load({ debugInfo: new Uint8Array([1, 2, 3]), logger });
    assertEqual(warnings.length, 2);
    assert(/not a webffi line table/.test(warnings[1]), warnings[1]);
    assertEqual((await env.webffi.load({ debugInfo: lines, logger })).getGlobal('testing.add_one', { optional: true }), null);
    assertEqual(warnings.length, 2, 'the right file is taken as bytes too');
    // the bytes are copied at load: a caller reusing its buffer (or an
    // ArrayBuffer it transfers) does not take the lines away
    for (const reuse of [(b) => b.fill(0), (b) => structuredClone(b.buffer, { transfer: [b.buffer] })]) {
      const mine = lines.slice();
      const kept = await env.webffi.load({ debugInfo: mine, logger });
      reuse(mine);
      const [frame] = framesOf(key(kept).backtrace);
      assert(/^src\/map\.c$/.test(frame?.file) && frame.line > 0, key(kept).backtrace);
    }
    assertEqual(warnings.length, 2);
  },
};
