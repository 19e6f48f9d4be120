#!/usr/bin/env node
// Upstream tvm-ffi's C++ unit tests (tests/cpp, googletest) against webffi,
// in wasm and natively, measured the same way: each file is compiled with
// upstream's headers first (ours after), linked with webffi's core (and its
// forwarding layer, src/cxx/forward.cc) and gtest, and run; the counts of
// files that compile, link, and of tests that pass are compared per file.
//
//   wasm:   `webffi build -c` (the flags a build uses: -fwasm-exceptions,
//           ...), `webffi build --command --cxx` (the prebuilt runtime,
//           linked in, gtest_main's main), `webffi run` under Node;
//           gtest itself is compiled with `webffi build -c` from
//           Debian's sources (WEBFFI_GTEST_SRC, default /usr/src/googletest)
//   wasm-mt: the same with `--threads` at every step: the threaded
//           runtime (libwebffi-mt.a), std::thread on workers; no test may
//           fail here (KNOWN_WASM_GAPS is the single-threaded side's)
//   native: g++ against build/native/libwebffi.a and the system's gtest
//   browser (--browser): the wasm programs, run by js/command.js's
//           runCommand in headless Chromium (playwright-core, as
//           tests/browser/ drives it), compared per test like the Node side
//
// test_function and test_metadata use upstream's test fixtures, which
// upstream keeps in its testing library (src/ffi/testing/testing.cc next
// to the include/ folder, or WEBFFI_UPSTREAM_TESTING_SRC): it is compiled
// from the fetched tree both ways (`webffi build -c`, g++) and linked into
// those two programs only.
//
// Upstream's tree never enters this repository: name it with
// WEBFFI_UPSTREAM_INCLUDE (its include/ folder; its tests are in
// ../tests/cpp, or WEBFFI_UPSTREAM_TESTS). Without it this fails.
//
//   WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include npm run test:upstream-cpp
//   node tests/upstream/cpp_tests.mjs [--wasm | --native] [--browser]
//       [--no-threads | --threads-only] [--only test_any,test_map]
//       [--jobs N] [--work DIR] [--json FILE]
//
// Exit status 1 when a file does worse in wasm (under Node or in Chromium)
// than natively (fails to compile or link, or a test that passes natively
// does not pass in wasm, unless KNOWN_WASM_GAPS names it with the reason;
// without the native side, Chromium is compared with Node), or, with one side
// only, when a file fails to compile or link there. When a run crashes,
// the tests it did not reach are run one by one. Objects from an earlier
// run in the same --work folder are reused while newer than their source
// and every header.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCommandBrowser } from './chromium_command.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'bin/webffi.mjs');

function fail(message) {
  console.error(`cpp_tests: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { wasm: true, native: true, browser: false, st: true, mt: true, only: null, jobs: 2,
    work: join(tmpdir(), 'webffi-upstream-cpp'),
    json: null, timeout: 300, testTimeout: 30 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--wasm') opts.native = false;
    else if (a === '--native') opts.wasm = false;
    else if (a === '--browser') opts.browser = true;
    else if (a === '--no-threads') opts.mt = false;
    else if (a === '--threads-only') opts.st = false;
    else if (a === '--only') opts.only = new Set(value().split(','));
    else if (a === '--jobs') opts.jobs = Math.max(1, Number(value()));
    else if (a === '--work') opts.work = resolve(value());
    else if (a === '--json') opts.json = resolve(value());
    else if (a === '--timeout') opts.timeout = Number(value());
    else if (a === '--test-timeout') opts.testTimeout = Number(value());
    else fail(`unknown option ${a}`);
  }
  if (!opts.wasm && !opts.native) fail('--wasm and --native exclude each other');
  if (!opts.st && !opts.mt) fail('--no-threads and --threads-only exclude each other');
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const upInclude = process.env.WEBFFI_UPSTREAM_INCLUDE;
if (!upInclude || !existsSync(join(upInclude, 'tvm/ffi/c_api.h'))) {
  fail('WEBFFI_UPSTREAM_INCLUDE must name the include/ folder of an upstream tvm-ffi checkout');
}
const upTests = process.env.WEBFFI_UPSTREAM_TESTS ?? join(upInclude, '../tests/cpp');
if (!existsSync(upTests)) fail(`no upstream tests at ${upTests} (set WEBFFI_UPSTREAM_TESTS)`);
const gtestSrc = join(process.env.WEBFFI_GTEST_SRC ?? '/usr/src/googletest', 'googletest');
// The wasm programs are built for Node and Chromium alike.
const buildsWasm = opts.wasm || opts.browser;
if (buildsWasm && !existsSync(join(gtestSrc, 'src/gtest-all.cc'))) {
  fail(`no googletest sources at ${gtestSrc} (Debian: apt-get install googletest; or set WEBFFI_GTEST_SRC)`);
}
const nativeCore = join(root, 'build/native/libwebffi.a');
if (opts.native && !existsSync(nativeCore)) fail(`${nativeCore} is missing: run scripts/build.sh first`);

const sources = ['', 'extra'].flatMap((sub) => {
  const dir = join(upTests, sub);
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^test_.*\.cc$/.test(f)).sort()
    .map((f) => join(dir, f)) : [];
}).filter((f) => opts.only === null || opts.only.has(basename(f, '.cc')));
if (sources.length === 0) fail(`no test_*.cc under ${upTests}`);

/**
 * The files that use upstream's test fixtures (testing.*, and the
 * DLL-exported functions with metadata in its testing library).
 */
const NEEDS_TESTING_LIBRARY = new Set(['test_function', 'test_metadata']);
const testingSource = process.env.WEBFFI_UPSTREAM_TESTING_SRC ??
  join(upInclude, '../src/ffi/testing/testing.cc');
// upstream builds its testing library with this definition (its metadata
// exports, read by test_metadata)
const testingDefines = ['-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1'];
if (sources.some((s) => NEEDS_TESTING_LIBRARY.has(basename(s, '.cc'))) && !existsSync(testingSource)) {
  fail(`no upstream testing library at ${testingSource} (set WEBFFI_UPSTREAM_TESTING_SRC)`);
}

// libc++ (wasm) includes less transitively than libstdc++: upstream's
// test_string.cc uses std::unordered_map without including it. Forcing
// the header in changes no code; both sides get it.
const includes = ['-I', upInclude, '-I', upTests, '-include', 'unordered_map'];

/** Runs a command; resolves to { code, out } (stdout and stderr together). */
function exec(tool, args, { timeout = 0, log = null } = {}) {
  return new Promise((done) => {
    const child = spawn(tool, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    let timedOut = false;
    const timer = timeout > 0 ? setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeout * 1000) : null;
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      const out = Buffer.concat(chunks).toString();
      if (log) writeFileSync(log, `$ ${tool} ${args.join(' ')}\n${out}`);
      done({ code: timedOut ? 'timeout' : code ?? signal, out });
    });
  });
}

const webffi = (args, options) => exec(process.execPath, [cli, ...args], options);

// Upstream links every file into one program, and the fixtures of
// testing_object.h are registered (TVM_FFI_STATIC_INIT_BLOCK) only in
// test_reflection.cc, so other files (test_any, the structural tests, ...)
// depend on it. Its object goes into every other file's program, as in
// upstream's, and its own tests are filtered out there: each file still
// counts only its own tests.
const companionSource = join(upTests, 'test_reflection.cc');
const hasCompanion = existsSync(companionSource);
const companionTests = hasCompanion
  ? [...readFileSync(companionSource, 'utf8').matchAll(/^TEST(?:_F)?\(\s*(\w+)\s*,\s*(\w+)\s*\)/gm)]
    .map((m) => `${m[1]}.${m[2]}`)
  : [];
const needsCompanion = (source) => hasCompanion && resolve(source) !== resolve(companionSource);
/** Arguments for a program with the companion linked in: its tests left out unless a test is named. */
const withoutCompanionTests = (args) => (args.some((a) => a.startsWith('--gtest_filter='))
  ? args : [`--gtest_filter=-${companionTests.join(':')}`, ...args]);
const runArgsOf = (source) => (needsCompanion(source) ? withoutCompanionTests : (args) => args);

/** gtest's own report: tests run, names passed and failed. */
function gtestReport(out) {
  const total = /\[==========\] Running (\d+) tests?/.exec(out);
  // not anchored at a line's start: a test may print without a newline
  // (upstream's Any.Object prints an error message) before gtest's line
  const passed = [...out.matchAll(/\[ {7}OK \] (\S+) \(/g)].map((m) => m[1]);
  const failed = [...out.matchAll(/\[ {2}FAILED {2}\] (\S+\.\S+) \(/g)].map((m) => m[1]);
  return { tests: total ? Number(total[1]) : null, passed, failed };
}

/** A whole file gets --timeout seconds, one test (after a crash) --test-timeout. */
const timeoutOf = (args) => (args.length === 0 ? opts.timeout : opts.testTimeout);

/**
 * Tests that pass natively and cannot in wasm, each with the reason; the
 * check fails if one of them passes in wasm (the entry is then stale).
 */
const KNOWN_WASM_GAPS = {
  'CEnvAPI.TVMFFIHandleInitDeinitOnceMultithreaded':
    'std::thread: the single-threaded runtime has none (the wasm-mt side runs it)',
};

/** The newest modification time of the files under dir. */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return t;
}
const headersTime = Math.max(newest(join(root, 'include')), newest(upInclude));

/** Whether an object from an earlier run (same --work) is newer than its source and every header. */
const upToDate = (object, source) => existsSync(object) &&
  statSync(object).mtimeMs > Math.max(statSync(source).mtimeMs, headersTime);

/** Whether gtest ran to its end (its closing line), not stopped by a crash or a timeout. */
const ranToEnd = (out) => /^\[==========\] \d+ tests? from .* ran\./m.test(out);

/**
 * Runs a test program (launch(args, log) resolves to { code, out }). When
 * it crashes (or times out), the tests it did not report are run one by
 * one (--gtest_filter), so a crash hides no test after it: each test that
 * crashes alone counts as failed, under `crashed`.
 */
async function runTests(launch, base) {
  const r = await launch([], `${base}.run.log`);
  const report = { rc: r.code, ...gtestReport(r.out), crashed: [], ranToEnd: ranToEnd(r.out) };
  if (report.ranToEnd) return report;
  const list = await launch(['--gtest_list_tests'], `${base}.list.log`);
  const all = [];
  let suite = null;
  for (const line of list.out.split('\n')) {
    const m = /^(\S+)\.\s*(#.*)?$/.exec(line);
    if (m) suite = m[1];
    else if (suite && /^ {2}(\S+)/.test(line)) all.push(`${suite}.${line.trim().split(/\s/)[0]}`);
  }
  // the list names disabled tests too, which gtest does not run
  const enabled = all.filter((name) => !/(^|\.)DISABLED_/.test(name));
  report.tests = enabled.length || report.tests;
  for (const name of enabled) {
    if (report.passed.includes(name) || report.failed.includes(name)) continue;
    const one = await launch([`--gtest_filter=${name}`], `${base}.${name}.log`);
    const alone = gtestReport(one.out);
    if (alone.passed.includes(name)) report.passed.push(name);
    else if (alone.failed.includes(name)) report.failed.push(name);
    else report.crashed.push(name);
  }
  return report;
}

async function buildGtestWasm(dir, variant) {
  const lib = join(dir, 'libgtest.a');
  const main = join(dir, 'libgtest_main.a');
  if (existsSync(lib) && existsSync(main)) return [main, lib];
  mkdirSync(dir, { recursive: true });
  const flags = [...variant.flags, '-O2', '-DGTEST_HAS_PTHREAD=0', '-I', join(gtestSrc, 'include'), '-I', gtestSrc];
  for (const [src, archive] of [['gtest-all.cc', lib], ['gtest_main.cc', main]]) {
    const object = join(dir, src.replace(/\.cc$/, '.o'));
    const r = await webffi(['build', '-c', ...flags, join(gtestSrc, 'src', src), '-o', object]);
    if (r.code !== 0) fail(`gtest (${src}) does not compile to wasm:\n${r.out}`);
    const ar = spawnSync('emar', ['rcs', archive, object], { encoding: 'utf8' });
    if (ar.status !== 0) fail(`emar failed: ${ar.stderr}`);
  }
  return [main, lib];
}

/** Compiles upstream's testing library once per side (fn makes the object). */
function onceObject(fn) {
  let made = null;
  return () => (made ??= fn());
}

/**
 * The wasm builds: single-threaded, and threaded (`--threads` at every
 * step, its own folder); each has its own gtest, testing library and companion.
 */
const VARIANTS = {
  wasm: { side: 'wasm', flags: [], gaps: KNOWN_WASM_GAPS },
  'wasm-mt': { side: 'wasm-mt', flags: ['--threads'], gaps: {} },
};
for (const variant of Object.values(VARIANTS)) {
  const dir = join(opts.work, variant.side);
  variant.testing = onceObject(async () => {
    const object = join(dir, 'upstream_testing.o');
    if (upToDate(object, testingSource)) return object;
    const r = await webffi(['build', '-c', ...variant.flags, '-O0', '--tvm-ffi-include', upInclude, ...testingDefines,
      testingSource, '-o', object], { log: join(dir, 'upstream_testing.compile.log') });
    if (r.code !== 0) fail(`upstream's testing library does not compile to wasm (${variant.side}):\n${r.out}`);
    return object;
  });
  variant.companion = onceObject(async () => {
    const object = join(dir, 'companion-test_reflection.o');
    if (upToDate(object, companionSource)) return object;
    const r = await webffi(['build', '-c', ...variant.flags, '-O0', '--tvm-ffi-include', upInclude, '-I',
      join(gtestSrc, 'include'), ...includes, companionSource, '-o', object],
    { log: join(dir, 'companion-test_reflection.compile.log') });
    return r.code === 0 ? object : null;
  });
}

/** Compiles and links one file's wasm program: { compile, link, program }. */
async function wasmBuild(source, dir, gtest, variant) {
  const n = basename(source, '.cc');
  const extra = needsCompanion(source) ? [await variant.companion()] : [];
  if (extra[0] === null) return { compile: false, link: false };
  const object = join(dir, `${n}.o`);
  const program = join(dir, `${n}.wasm`);
  const result = { compile: false, link: false, program };
  const c = upToDate(object, source) ? { code: 0 } : await webffi(['build', '-c', ...variant.flags, '-O0', '--tvm-ffi-include', upInclude, '-I', join(gtestSrc, 'include'),
    ...includes, source, '-o', object], { log: join(dir, `${n}.compile.log`) });
  if (c.code !== 0) return result;
  result.compile = true;
  const testing = NEEDS_TESTING_LIBRARY.has(n) ? [await variant.testing()] : [];
  const l = await webffi(['build', '--command', '--cxx', ...variant.flags, '-O0', '--tvm-ffi-include', upInclude, object, ...extra,
    ...testing, ...gtest, '-o', program], { log: join(dir, `${n}.link.log`) });
  if (l.code !== 0) return result;
  result.link = true;
  return result;
}

/** The wasm programs, each built once for the Node and the Chromium side. */
const wasmBuilds = new Map();
function wasmProgram(source, variant = VARIANTS.wasm) {
  const key = `${variant.side}:${source}`;
  if (!wasmBuilds.has(key)) {
    wasmBuilds.set(key, (async () => {
      const dir = join(opts.work, variant.side);
      mkdirSync(dir, { recursive: true });
      variant.gtest ??= buildGtestWasm(join(opts.work, `gtest-${variant.side}`), variant);
      return wasmBuild(source, dir, await variant.gtest, variant);
    })());
  }
  return wasmBuilds.get(key);
}

async function wasmFile(source, variant) {
  const { program, ...result } = await wasmProgram(source, variant);
  if (!result.link) return result;
  const runArgs = runArgsOf(source);
  const launch = (args, log) => webffi(['run', program, ...runArgs(args)], { timeout: timeoutOf(args), log });
  return { ...result, ...await runTests(launch, join(opts.work, variant.side, basename(source, '.cc'))) };
}

async function browserFile(source, browser) {
  const { program, ...result } = await wasmProgram(source);
  if (!result.link) return result;
  const dir = join(opts.work, 'browser');
  mkdirSync(dir, { recursive: true });
  const runArgs = runArgsOf(source);
  const launch = (args, log) => browser.run(program, runArgs(args), { timeout: timeoutOf(args), log });
  return { ...result, ...await runTests(launch, join(dir, basename(source, '.cc'))) };
}

async function nativeForward(dir) {
  mkdirSync(dir, { recursive: true });
  const object = join(dir, 'forward.o');
  const r = await exec('g++', ['-std=c++17', '-O0', '-c', '-I', upInclude, '-I', join(root, 'include'),
    join(root, 'src/cxx/forward.cc'), '-o', object]);
  if (r.code !== 0) fail(`src/cxx/forward.cc does not compile natively:\n${r.out}`);
  return object;
}

const nativeTesting = onceObject(async () => {
  const object = join(opts.work, 'native', 'upstream_testing.o');
  if (upToDate(object, testingSource)) return object;
  const r = await exec('g++', ['-std=c++17', '-O0', '-c', ...testingDefines, '-I', upInclude, '-I', join(root, 'include'),
    testingSource, '-o', object], { log: join(opts.work, 'native', 'upstream_testing.compile.log') });
  if (r.code !== 0) fail(`upstream's testing library does not compile natively:\n${r.out}`);
  return object;
});

const nativeCompanion = onceObject(async () => {
  const object = join(opts.work, 'native', 'companion-test_reflection.o');
  if (upToDate(object, companionSource)) return object;
  const r = await exec('g++', ['-std=c++17', '-O0', '-c', ...includes, '-I', join(root, 'include'), companionSource,
    '-o', object], { log: join(opts.work, 'native', 'companion-test_reflection.compile.log') });
  return r.code === 0 ? object : null;
});

async function nativeFile(source, dir, forward) {
  const n = basename(source, '.cc');
  const extra = needsCompanion(source) ? [await nativeCompanion()] : [];
  if (extra[0] === null) return { compile: false, link: false };
  const object = join(dir, `${n}.o`);
  const program = join(dir, n);
  const result = { compile: false, link: false };
  const c = upToDate(object, source) ? { code: 0 } : await exec('g++', ['-std=c++17', '-O0', '-c', ...includes, '-I', join(root, 'include'), source, '-o', object],
    { log: join(dir, `${n}.compile.log`) });
  if (c.code !== 0) return result;
  result.compile = true;
  const testing = NEEDS_TESTING_LIBRARY.has(n) ? [await nativeTesting()] : [];
  const l = await exec('g++', ['-rdynamic', object, ...extra, ...testing, forward, nativeCore, '-lgtest_main', '-lgtest', '-lpthread', '-ldl',
    '-lm', '-o', program], { log: join(dir, `${n}.link.log`) });
  if (l.code !== 0) return result;
  result.link = true;
  const runArgs = runArgsOf(source);
  const launch = (args, log) => exec(program, runArgs(args), { timeout: timeoutOf(args), log });
  return { ...result, ...await runTests(launch, join(dir, n)) };
}

/** Runs fn over items, at most `jobs` at a time. */
async function pool(items, jobs, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  }));
  return results;
}

const sides = [];
if (opts.wasm && opts.st) sides.push(['wasm', (s) => wasmFile(s, VARIANTS.wasm)]);
if (opts.wasm && opts.mt) sides.push(['wasm-mt', (s) => wasmFile(s, VARIANTS['wasm-mt'])]);
if (opts.native) {
  const dir = join(opts.work, 'native');
  const forward = await nativeForward(dir);
  sides.push(['native', (s) => nativeFile(s, dir, forward)]);
}
let browser = null;
if (opts.browser) sides.push(['browser', (s) => browserFile(s, browser)]);
const results = {};
try {
  for (const [side, fn] of sides) {
    const started = Date.now();
    // one browser for the side: started before the pool, not by each job
    if (side === 'browser') browser = await startCommandBrowser({ root, work: opts.work });
    const per = await pool(sources, opts.jobs, fn);
    results[side] = Object.fromEntries(sources.map((s, i) => [basename(s, '.cc'), per[i]]));
    console.error(`cpp_tests: ${side} done in ${Math.round((Date.now() - started) / 1000)} s`);
  }
} finally {
  await browser?.close();
}

const cell = (r) => {
  if (!r) return '';
  if (!r.compile) return 'compile-fail';
  if (!r.link) return 'link-fail';
  const crash = r.crashed.length > 0 ? ` (${r.crashed.length} crash)` : r.ranToEnd ? '' : ` rc=${r.rc}`;
  return `${r.passed.length}/${r.tests ?? '?'}${crash}`;
};
const names = sources.map((s) => basename(s, '.cc'));
const width = Math.max(...names.map((n) => n.length));
console.log(`${'file'.padEnd(width)}  ${sides.map(([s]) => s.padEnd(16)).join('  ')}`);
const problems = [];
for (const n of names) {
  const row = sides.map(([s]) => cell(results[s][n]).padEnd(16));
  const x = results.native?.[n];
  const whys = [];
  const notes = [];
  // each wasm side against native, or Chromium against Node without native
  for (const side of ['wasm', 'wasm-mt', 'browser']) {
    const w = results[side]?.[n];
    if (!w) continue;
    const [refSide, ref] = x ? ['native', x] : side === 'browser' && results.wasm ? ['wasm', results.wasm[n]] : [null, null];
    const prefix = side === 'wasm' ? '' : `${side}: `;
    const gaps = side === 'wasm-mt' ? VARIANTS['wasm-mt'].gaps : KNOWN_WASM_GAPS;
    const where = refSide === 'native' ? 'natively' : 'under Node';
    if (!ref) {
      if (!w.compile) whys.push(`${prefix}does not compile`);
      else if (!w.link) whys.push(`${prefix}does not link`);
      continue;
    }
    if (ref.compile && !w.compile) whys.push(`${prefix}compiles ${where} only`);
    else if (ref.link && !w.link) whys.push(`${prefix}links ${where} only`);
    else if (ref.link) {
      const lost = ref.passed.filter((t) => !w.passed.includes(t));
      const unknown = lost.filter((t) => !(t in gaps));
      const stale = w.passed.filter((t) => t in gaps);
      if (unknown.length > 0) whys.push(`${prefix}passes ${where} only: ${unknown.join(' ')}`);
      else if (stale.length > 0 && refSide === 'native') {
        whys.push(`${prefix}listed in KNOWN_WASM_GAPS, yet passes in wasm: ${stale.join(' ')}`);
      }
      const known = lost.filter((t) => t in gaps);
      if (known.length > 0) {
        // the reason once: Node's line gives it, Chromium's names the tests
        const listed = side === 'wasm' || !results.wasm ? known.map((t) => `${t}: ${KNOWN_WASM_GAPS[t]}`) : known;
        notes.push(`  (${prefix}known: ${listed.join('; ')})`);
      }
    }
  }
  if (!results.wasm && !results['wasm-mt'] && !results.browser && x) {
    if (!x.compile) whys.push('does not compile');
    else if (!x.link) whys.push('does not link');
  }
  const why = whys.join('; ');
  const note = notes.join('');
  if (why) problems.push(`${n}: ${why}`);
  console.log(`${n.padEnd(width)}  ${row.join('  ')}${why ? `  <- ${why}` : ''}${note}`);
}
for (const [side] of sides) {
  const all = Object.values(results[side]);
  const linked = all.filter((r) => r.link);
  console.log(`${side}: ${all.filter((r) => r.compile).length} of ${all.length} compile, ${linked.length} link, ` +
    `${linked.reduce((a, r) => a + r.passed.length, 0)} of ${linked.reduce((a, r) => a + (r.tests ?? 0), 0)} ` +
    'tests pass in the linked files');
}
console.log(`logs: ${opts.work}/{${sides.map(([s]) => s).join(',')}}/NAME.{compile,link,run}.log`);
if (opts.json) {
  mkdirSync(dirname(opts.json), { recursive: true });
  writeFileSync(opts.json, `${JSON.stringify(results, null, 1)}\n`);
}
if (problems.length > 0) {
  console.error(`cpp_tests: ${problems.length} file(s) worse in wasm than natively (or failing):\n  ${problems.join('\n  ')}`);
  process.exitCode = 1;
}
