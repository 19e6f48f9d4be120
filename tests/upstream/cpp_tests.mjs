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
//   native: g++ against build/native/libwebffi.a and the system's gtest
//
// Upstream's tree never enters this repository: name it with
// WEBFFI_UPSTREAM_INCLUDE (its include/ folder; its tests are in
// ../tests/cpp, or WEBFFI_UPSTREAM_TESTS). Without it this fails.
//
//   WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include npm run test:upstream-cpp
//   node tests/upstream/cpp_tests.mjs [--wasm | --native] [--only test_any,test_map]
//       [--jobs N] [--work DIR] [--json FILE]
//
// Exit status 1 when a file does worse in wasm than natively (fails to
// compile or link, or a test that passes natively does not pass in wasm,
// unless KNOWN_WASM_GAPS names it with the reason), or, with one side
// only, when a file fails to compile or link there. When a run crashes,
// the tests it did not reach are run one by one. Objects from an earlier
// run in the same --work folder are reused while newer than their source
// and every header.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'bin/webffi.mjs');

function fail(message) {
  console.error(`cpp_tests: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { wasm: true, native: true, only: null, jobs: 2, work: join(tmpdir(), 'webffi-upstream-cpp'),
    json: null, timeout: 300, testTimeout: 30 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--wasm') opts.native = false;
    else if (a === '--native') opts.wasm = false;
    else if (a === '--only') opts.only = new Set(value().split(','));
    else if (a === '--jobs') opts.jobs = Math.max(1, Number(value()));
    else if (a === '--work') opts.work = resolve(value());
    else if (a === '--json') opts.json = resolve(value());
    else if (a === '--timeout') opts.timeout = Number(value());
    else if (a === '--test-timeout') opts.testTimeout = Number(value());
    else fail(`unknown option ${a}`);
  }
  if (!opts.wasm && !opts.native) fail('--wasm and --native exclude each other');
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
if (opts.wasm && !existsSync(join(gtestSrc, 'src/gtest-all.cc'))) {
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

/** gtest's own report: tests run, names passed and failed. */
function gtestReport(out) {
  const total = /\[==========\] Running (\d+) tests?/.exec(out);
  // not anchored to a line's start: a test may print without a newline
  // (test_any.cc's Any.Object does), and its OK line then follows on that line
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
    'std::thread: webffi\'s wasm runtime and `webffi run` have no threads',
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

/**
 * Upstream links every test file into one program (tests/cpp/CMakeLists.txt),
 * so a file may use what another registers: the types of testing_object.h
 * get their reflection (fields, creators) only from test_reflection.cc's
 * static initialiser (test_dataclass.cc says so), yet test_serialization.cc,
 * test_dataclass.cc, test_any.cc, test_structural_*.cc, ... use it. A file
 * that includes testing_object.h is linked with test_reflection.cc, as
 * upstream links it, and run filtered to its own tests.
 */
const REGISTRAR = 'test_reflection';
const sourceOf = (name) => ['', 'extra'].map((sub) => join(upTests, sub, `${name}.cc`)).find(existsSync);
const companionsOf = (source) => (basename(source, '.cc') !== REGISTRAR &&
  /^\s*#include\s+"(\.{1,2}\/)?testing_object\.h"/m.test(readFileSync(source, 'utf8')) ? [REGISTRAR] : []);

/** A gtest filter naming the file's own tests (TEST(Suite, Name) in its source), or null. */
function ownTestsFilter(source) {
  if (companionsOf(source).length === 0) return null;
  const text = readFileSync(source, 'utf8');
  return [...text.matchAll(/^\s*TEST(?:_F)?\(\s*(\w+)\s*,\s*(\w+)\s*\)/gm)]
    .map((m) => `${m[1]}.${m[2]}`).join(':');
}

/** Adds the file's own-tests filter to a run that names none. */
const filtered = (filter, args) => (filter && !args.some((a) => a.startsWith('--gtest_filter'))
  ? [`--gtest_filter=${filter}`, ...args] : args);

/** Compiles each source once per side (a companion may be asked for by several files). */
function compiler(compile) {
  const done = new Map();
  return (source) => {
    if (!done.has(source)) done.set(source, compile(source));
    return done.get(source);
  };
}

/** The companions' objects, or null when one does not compile. */
async function companionObjects(source, compileObject) {
  const objects = [];
  for (const name of companionsOf(source)) {
    const companion = sourceOf(name);
    const r = companion ? await compileObject(companion) : { ok: false };
    if (!r.ok) return null;
    objects.push(r.object);
  }
  return objects;
}

async function buildGtestWasm(dir) {
  const lib = join(dir, 'libgtest.a');
  const main = join(dir, 'libgtest_main.a');
  if (existsSync(lib) && existsSync(main)) return [main, lib];
  mkdirSync(dir, { recursive: true });
  const flags = ['-O2', '-DGTEST_HAS_PTHREAD=0', '-I', join(gtestSrc, 'include'), '-I', gtestSrc];
  for (const [src, archive] of [['gtest-all.cc', lib], ['gtest_main.cc', main]]) {
    const object = join(dir, src.replace(/\.cc$/, '.o'));
    const r = await webffi(['build', '-c', ...flags, join(gtestSrc, 'src', src), '-o', object]);
    if (r.code !== 0) fail(`gtest (${src}) does not compile to wasm:\n${r.out}`);
    const ar = spawnSync('emar', ['rcs', archive, object], { encoding: 'utf8' });
    if (ar.status !== 0) fail(`emar failed: ${ar.stderr}`);
  }
  return [main, lib];
}

const wasmCompile = (dir) => compiler(async (source) => {
  const n = basename(source, '.cc');
  const object = join(dir, `${n}.o`);
  const c = upToDate(object, source) ? { code: 0 } : await webffi(['build', '-c', '-O0', '--tvm-ffi-include', upInclude, '-I', join(gtestSrc, 'include'),
    ...includes, source, '-o', object], { log: join(dir, `${n}.compile.log`) });
  return { ok: c.code === 0, object };
});

async function wasmFile(source, dir, gtest, compileObject) {
  const n = basename(source, '.cc');
  const program = join(dir, `${n}.wasm`);
  const result = { compile: false, link: false };
  const { ok, object } = await compileObject(source);
  if (!ok) return result;
  result.compile = true;
  const companions = await companionObjects(source, compileObject);
  if (companions === null) return result;
  const l = await webffi(['build', '--command', '--cxx', '-O0', '--tvm-ffi-include', upInclude, object, ...companions,
    ...gtest, '-o', program], { log: join(dir, `${n}.link.log`) });
  if (l.code !== 0) return result;
  result.link = true;
  const own = ownTestsFilter(source);
  const launch = (args, log) => webffi(['run', program, ...filtered(own, args)], { timeout: timeoutOf(args), log });
  return { ...result, ...await runTests(launch, join(dir, n)) };
}

async function nativeForward(dir) {
  mkdirSync(dir, { recursive: true });
  const object = join(dir, 'forward.o');
  const r = await exec('g++', ['-std=c++17', '-O0', '-c', '-I', upInclude, '-I', join(root, 'include'),
    join(root, 'src/cxx/forward.cc'), '-o', object]);
  if (r.code !== 0) fail(`src/cxx/forward.cc does not compile natively:\n${r.out}`);
  return object;
}

const nativeCompile = (dir) => compiler(async (source) => {
  const n = basename(source, '.cc');
  const object = join(dir, `${n}.o`);
  const c = upToDate(object, source) ? { code: 0 } : await exec('g++', ['-std=c++17', '-O0', '-c', ...includes, '-I', join(root, 'include'), source, '-o', object],
    { log: join(dir, `${n}.compile.log`) });
  return { ok: c.code === 0, object };
});

async function nativeFile(source, dir, forward, compileObject) {
  const n = basename(source, '.cc');
  const program = join(dir, n);
  const result = { compile: false, link: false };
  const { ok, object } = await compileObject(source);
  if (!ok) return result;
  result.compile = true;
  const companions = await companionObjects(source, compileObject);
  if (companions === null) return result;
  const l = await exec('g++', ['-rdynamic', object, ...companions, forward, nativeCore, '-lgtest_main', '-lgtest', '-lpthread', '-ldl',
    '-lm', '-o', program], { log: join(dir, `${n}.link.log`) });
  if (l.code !== 0) return result;
  result.link = true;
  const own = ownTestsFilter(source);
  const launch = (args, log) => exec(program, filtered(own, args), { timeout: timeoutOf(args), log });
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
if (opts.wasm) {
  const dir = join(opts.work, 'wasm');
  mkdirSync(dir, { recursive: true });
  const gtest = await buildGtestWasm(join(opts.work, 'gtest-wasm'));
  const compileObject = wasmCompile(dir);
  sides.push(['wasm', (s) => wasmFile(s, dir, gtest, compileObject)]);
}
if (opts.native) {
  const dir = join(opts.work, 'native');
  const forward = await nativeForward(dir);
  const compileObject = nativeCompile(dir);
  sides.push(['native', (s) => nativeFile(s, dir, forward, compileObject)]);
}
const results = {};
for (const [side, fn] of sides) {
  const started = Date.now();
  const per = await pool(sources, opts.jobs, fn);
  results[side] = Object.fromEntries(sources.map((s, i) => [basename(s, '.cc'), per[i]]));
  console.error(`cpp_tests: ${side} done in ${Math.round((Date.now() - started) / 1000)} s`);
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
  const w = results.wasm?.[n];
  const x = results.native?.[n];
  let why = '';
  let note = '';
  if (w && x) {
    if (x.compile && !w.compile) why = 'compiles natively only';
    else if (x.link && !w.link) why = 'links natively only';
    else if (x.link) {
      const lost = x.passed.filter((t) => !w.passed.includes(t));
      const unknown = lost.filter((t) => !(t in KNOWN_WASM_GAPS));
      const stale = w.passed.filter((t) => t in KNOWN_WASM_GAPS);
      if (unknown.length > 0) why = `passes natively only: ${unknown.join(' ')}`;
      else if (stale.length > 0) why = `listed in KNOWN_WASM_GAPS, yet passes in wasm: ${stale.join(' ')}`;
      const known = lost.filter((t) => t in KNOWN_WASM_GAPS);
      if (known.length > 0) {
        note = `  (known: ${known.map((t) => `${t}: ${KNOWN_WASM_GAPS[t]}`).join('; ')})`;
      }
    }
  } else {
    const r = w ?? x;
    if (!r.compile) why = 'does not compile';
    else if (!r.link) why = 'does not link';
  }
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
