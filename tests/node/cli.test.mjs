// The `webffi build` command line (the CMake build of tests/modules runs
// it in both modes; these cover its options and its failures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync,
  writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const webffi = (...args) => spawnSync(process.execPath, [`${root}bin/webffi.mjs`, ...args],
  { encoding: 'utf8' });

test('--name and -D reach the module; its declaration carries the ABI versions', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->v_int64 = ANSWER; return 0;
}`);
  const run = webffi('build', '--module', '-DANSWER=42', '--name', 'kernels', `${dir}/k.c`,
    '-o', `${dir}/out.wasm`);
  assert.equal(run.status, 0, run.stderr);
  const module = new WebAssembly.Module(readFileSync(`${dir}/out.wasm`));
  const [section] = WebAssembly.Module.customSections(module, 'webffi.module');
  assert.deepEqual(JSON.parse(Buffer.from(section).toString()),
    { name: 'kernels', module_abi_version: 1, tvm_ffi_version: [0, 1, 14] });
  assert.ok(WebAssembly.Module.exports(module).some((e) => e.name === '__tvm_ffi_answer'));
});

test('--help, -h and `help` print the usage on stdout and succeed', () => {
  for (const args of [['--help'], ['-h'], ['help'], ['build', '--help']]) {
    const run = webffi(...args);
    assert.equal(run.status, 0, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stdout, /^usage: webffi build .*\n {7}webffi build -c .*\n {7}webffi run \[--threads N\] PROGRAM\.wasm/);
    assert.match(run.stdout, /--module +build a module to load/);
    assert.equal(run.stderr, '');
  }
});

test('no sources, an unknown command or a compile error fail with a message', (t) => {
  let run = webffi('build');
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^webffi: no sources\nusage: webffi build/);
  run = webffi('compile', 'x.c');
  assert.equal(run.status, 2);
  assert.match(run.stderr, /^webffi: unknown command `compile`\nusage: webffi build/);
  assert.equal(run.stdout, '');
  run = webffi();
  assert.equal(run.status, 2);
  assert.match(run.stderr, /^webffi: no command\nusage: webffi build/);
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/bad.c`, 'int f(void) { return missing_variable; }\n');
  run = webffi('build', '--module', `${dir}/bad.c`, '-o', `${dir}/bad.wasm`);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /missing_variable/);
  assert.match(run.stderr, /webffi: emcc failed \(exit 1\)\n$/);
});

test('-include FILE and -isystem DIR take their values: never compiled as sources', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/answer.h`, '#define ANSWER 42\n');
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->v_int64 = ANSWER; return 0;
}`);
  const run = webffi('build', '--module', '-include', `${dir}/answer.h`, '-isystem', dir,
    `${dir}/k.c`, '-o', `${dir}/out.wasm`);
  assert.equal(run.status, 0, run.stderr);
  const module = new WebAssembly.Module(readFileSync(`${dir}/out.wasm`));
  assert.ok(WebAssembly.Module.exports(module).some((e) => e.name === '__tvm_ffi_answer'));
  // a header given as a value is not taken for a source (no `answer.wasm`)
  assert.equal(webffi('build', '--module', '-include').status, 1);
  assert.match(webffi('build', '--tvm-ffi-include', dir, `${dir}/k.c`).stderr,
    /--tvm-ffi-include .*: no tvm\/ffi\/c_api\.h there/);
});

test('--tvm-ffi-include: upstream headers are searched first; auto asks tvm-ffi-config', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // a stand-in for upstream's headers: marks itself, then defers to ours
  mkdirSync(`${dir}/up/tvm/ffi`, { recursive: true });
  writeFileSync(`${dir}/up/tvm/ffi/c_api.h`,
    '#define FROM_UPSTREAM_HEADERS 42\n#include_next <tvm/ffi/c_api.h>\n');
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->v_int64 = FROM_UPSTREAM_HEADERS; return 0;
}`);
  mkdirSync(`${dir}/bin`);
  writeFileSync(`${dir}/bin/tvm-ffi-config`, `#!/bin/sh\necho ${dir}/up\n`, { mode: 0o755 });
  const env = { ...process.env, PATH: `${dir}/bin:${process.env.PATH}` };
  for (const how of [['--tvm-ffi-include', `${dir}/up`], ['--tvm-ffi-include', 'auto']]) {
    const run = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module', ...how,
      `${dir}/k.c`, '-o', `${dir}/out.wasm`], { encoding: 'utf8', env });
    assert.equal(run.status, 0, run.stderr);
  }
  const run = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module',
    `${dir}/k.c`, '-o', `${dir}/out.wasm`], { encoding: 'utf8', env: { ...env, TVM_FFI_INCLUDE: `${dir}/up` } });
  assert.equal(run.status, 0, run.stderr);
  // without them, the marker is undefined: a compile error
  assert.equal(webffi('build', '--module', `${dir}/k.c`, '-o', `${dir}/out.wasm`).status, 1);
});

const answerSource = `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->v_int64 = 42; return 0;
}`;

test('without emcc on PATH, build says how to install Emscripten', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(`${dir}/bin`);
  symlinkSync(process.execPath, `${dir}/bin/node`);
  writeFileSync(`${dir}/k.c`, answerSource);
  const run = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module',
    `${dir}/k.c`, '-o', `${dir}/k.wasm`], { encoding: 'utf8', env: { PATH: `${dir}/bin` } });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^webffi: emcc is not on PATH: install Emscripten: .*`apt-get install emscripten`.*emsdk/);
  assert.doesNotMatch(run.stderr, /ENOENT|spawnSync/);
  assert.equal(existsSync(`${dir}/k.wasm`), false);
});

test('an Emscripten version not tested gives one warning naming the tested ones, and builds', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const realEmcc = spawnSync('sh', ['-c', 'command -v emcc'], { encoding: 'utf8' }).stdout.trim();
  assert.ok(realEmcc, 'emcc on PATH');
  mkdirSync(`${dir}/bin`);
  // an emcc that reports another version and otherwise is the real one
  writeFileSync(`${dir}/bin/emcc`, `#!/bin/sh
if [ "$1" = --version ]; then
  echo 'emcc (Emscripten gcc/clang-like replacement + linker emulating GNU ld) 9.8.7 (abc)'
  exit 0
fi
exec '${realEmcc}' "$@"
`, { mode: 0o755 });
  writeFileSync(`${dir}/k.c`, answerSource);
  const build = (env) => spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module',
    `${dir}/k.c`, '-o', `${dir}/k.wasm`], { encoding: 'utf8', env });
  let run = build({ ...process.env, PATH: `${dir}/bin${delimiter}${process.env.PATH}` });
  assert.equal(run.status, 0, run.stderr);
  const warnings = run.stderr.split('\n').filter((line) => /warning/.test(line));
  assert.equal(warnings.length, 1, run.stderr);
  assert.match(warnings[0], /^webffi: warning: Emscripten 9\.8\.7 is not a version webffi is tested with \(3\.1\.6\)/);
  assert.ok(WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(`${dir}/k.wasm`)))
    .some((e) => e.name === '__tvm_ffi_answer'));
  // the tested version: no warning
  run = build(process.env);
  assert.equal(run.status, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /warning: Emscripten/);
});

test('build --module fails, naming them, when the module imports what the runtime does not export', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/needs.c`, `#include <tvm/ffi/c_api.h>
extern int nobody_defines_this(int);
extern int nobody_defines_data;
TVM_FFI_DLL_EXPORT int __tvm_ffi_needs(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)n;
  r->type_index = kTVMFFIInt;
  r->v_int64 = nobody_defines_this((int)a[0].v_int64) + nobody_defines_data;
  return 0;
}`);
  const out = `${dir}/needs.wasm`;
  const runtime = `${root}build/wasm/webffi.wasm`;
  for (const extra of [[], ['--runtime', runtime]]) {
    const run = webffi('build', '--module', ...extra, `${dir}/needs.c`, '-o', out);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /^webffi: .*needs\.wasm: the module imports `nobody_defines_this`, `nobody_defines_data`, which the runtime \(.*webffi\.wasm\) does not export, so it could not load/m);
    assert.equal(existsSync(out), false, 'no module that cannot load is left behind');
  }
  assert.match(webffi('build', '--module', '--runtime', `${dir}/absent.wasm`, `${dir}/needs.c`,
    '-o', out).stderr, /--runtime .*absent\.wasm: no such file/);
  // asked not to check, it builds (for a runtime built with more exports)
  const run = webffi('build', '--module', '--no-import-check', `${dir}/needs.c`, '-o', out);
  assert.equal(run.status, 0, run.stderr);
  assert.ok(existsSync(out));
  // a module using only what the runtime exports (libc's stdio included) builds
  writeFileSync(`${dir}/fine.c`, `#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_fine(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n;
  fprintf(stderr, "%d\\n", (int)strlen("abc"));
  r->type_index = kTVMFFIInt; r->v_int64 = 1; return 0;
}`);
  const fine = webffi('build', '--module', '--runtime', runtime, `${dir}/fine.c`, '-o', `${dir}/fine.wasm`);
  assert.equal(fine.status, 0, fine.stderr);
});

// ------------------------------------------------- the prebuilt runtime

/** Lines of --verbose output that are commands run, and those that compile (-c). */
const commandsRun = (stderr) => stderr.split('\n').filter((l) => l.startsWith('webffi: $ '));
const compiles = (stderr) => commandsRun(stderr).filter((l) => / -c /.test(l));

/** The parts of the package `webffi build` reads, copied into a temporary directory. */
function packageCopy(t) {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-pkg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const p of ['bin', 'cmake', 'include', 'src', 'dist']) {
    cpSync(join(root, p), join(dir, p), { recursive: true });
  }
  return dir;
}
const webffiIn = (dir, ...args) => spawnSync(process.execPath, [`${dir}/bin/webffi.mjs`, ...args],
  { encoding: 'utf8' });

/** A library with a function that answers and one that raises, built linked in. */
const answerAndFail = `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = 42; return 0;
}
TVM_FFI_DLL_EXPORT int __tvm_ffi_fail(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; (void)r;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "failed on purpose");
  return -1;
}`;

/** What a linked-in build serves: its exports, and its functions' answers through ffi.SystemLib. */
async function systemLibBehaviour(wasm) {
  const { load } = await import(new URL('../../js/index.js', import.meta.url));
  const rt = await load({ wasm: readFileSync(wasm) });
  const lib = rt.getGlobal('ffi.SystemLib')();
  let error;
  try {
    lib.getFunction('fail')();
  } catch (e) {
    error = `${e.name}: ${e.message}`;
  }
  return {
    exports: WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(wasm))).map((e) => e.name).sort(),
    answer: lib.getFunction('answer')(),
    error,
  };
}

test('linked in, the prebuilt runtime is linked and only the sources are compiled; built from source it behaves the same', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/lib.c`, answerAndFail);
  const prebuilt = webffi('build', '--verbose', `${dir}/lib.c`, '-o', `${dir}/prebuilt.wasm`);
  assert.equal(prebuilt.status, 0, prebuilt.stderr);
  assert.ok(prebuilt.stderr.includes(`webffi: runtime: prebuilt ${root}dist/libwebffi.a\n`), prebuilt.stderr);
  assert.doesNotMatch(prebuilt.stderr, /note:/);
  assert.deepEqual(compiles(prebuilt.stderr).map((l) => /\S+\.c(?= -o)/.exec(l)?.[0]), [`${dir}/lib.c`]);
  assert.equal(commandsRun(prebuilt.stderr).filter((l) => /\/src\/\w+\.c\b/.test(l)).length, 0,
    'no runtime source is compiled');
  assert.match(commandsRun(prebuilt.stderr).at(-1), /-Wl,--whole-archive \S*dist\/libwebffi\.a -Wl,--no-whole-archive/);

  // a package whose src/ changed after the archive was built: from source
  const pkg = packageCopy(t);
  appendFileSync(`${pkg}/src/error.c`, '\n/* edited after the build */\n');
  const fromSource = webffiIn(pkg, 'build', '--verbose', `${dir}/lib.c`, '-o', `${dir}/source.wasm`);
  assert.equal(fromSource.status, 0, fromSource.stderr);
  assert.match(fromSource.stderr, /^webffi: note: compiling the runtime from source \(slower\): dist\/libwebffi\.a is stale: it was built from other sources than the src\/ and include\/ here$/m);
  assert.ok(commandsRun(fromSource.stderr).some((l) => l.includes(`${pkg}/src/error.c`)));
  assert.doesNotMatch(fromSource.stderr, /libwebffi\.a -Wl/);

  const a = await systemLibBehaviour(`${dir}/prebuilt.wasm`);
  assert.equal(a.answer, 42);
  assert.equal(a.error, 'ValueError: failed on purpose');
  assert.deepEqual(await systemLibBehaviour(`${dir}/source.wasm`), a);
});

test('C++ linked in against the prebuilt (C) runtime: exceptions work inside the wasm', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/lib.cc`, `#include <tvm/ffi/c_api.h>
#include <stdexcept>
#include <string>
static int Answer(int x) { if (x != 42) throw std::invalid_argument("not " + std::to_string(x)); return x; }
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void*, const TVMFFIAny*, int32_t, TVMFFIAny* r) {
  r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = Answer(42); return 0;
}
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_fail(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  try {
    Answer(7);
    return 0;
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", e.what());
    return -1;
  }
}`);
  const run = webffi('build', '--verbose', `${dir}/lib.cc`, '-o', `${dir}/lib.wasm`);
  assert.equal(run.status, 0, run.stderr);
  assert.ok(run.stderr.includes(`webffi: runtime: prebuilt ${root}dist/libwebffi.a\n`), run.stderr);
  assert.equal(compiles(run.stderr).length, 1);
  assert.match(commandsRun(run.stderr).at(-1), /^webffi: \$ em\+\+ .*webffi_system_lib\.cc -Wl,--whole-archive .*-fwasm-exceptions/);
  const { answer, error } = await systemLibBehaviour(`${dir}/lib.wasm`);
  assert.equal(answer, 42);
  assert.equal(error, 'ValueError: not 7');
});

test('the runtime is compiled from source, with a note saying why, when the archive is missing, stale or from another Emscripten, or a flag changes the ABI', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // the decision comes before anything is compiled: a source that does not
  // compile shows it without compiling the runtime
  writeFileSync(`${dir}/bad.c`, 'int f(void) { return missing_variable; }\n');
  const decision = (pkg, ...flags) => {
    const run = webffiIn(pkg, 'build', ...flags, `${dir}/bad.c`, '-o', `${dir}/bad.wasm`);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /missing_variable/);
    return run.stderr.split('\n').filter((l) => /^webffi: (note|runtime):/.test(l)).join('\n');
  };
  const pkg = packageCopy(t);
  assert.equal(decision(pkg, '--verbose'), `webffi: runtime: prebuilt ${pkg}/dist/libwebffi.a`);
  // flags that do not change the ABI, values of flags included, keep it
  assert.equal(decision(pkg, '--verbose', '-DMODE=-fshort-enums', '-I', dir, '-O3', '-g'),
    `webffi: runtime: prebuilt ${pkg}/dist/libwebffi.a`);
  assert.equal(decision(pkg), '');
  const note = (why) => `webffi: note: compiling the runtime from source (slower): ${why}`;
  assert.equal(decision(pkg, '-fshort-enums'),
    note('-fshort-enums changes the runtime\'s ABI, and dist/libwebffi.a was compiled without'));
  assert.equal(decision(pkg, '-s', 'USE_PTHREADS=1', '-sMEMORY64'),
    note('-s USE_PTHREADS=1 -sMEMORY64 change the runtime\'s ABI, and dist/libwebffi.a was compiled without'));
  assert.equal(decision(pkg, '--verbose', '--runtime-from-source'),
    'webffi: runtime: compiled from source (--runtime-from-source)');

  const stamp = readFileSync(`${pkg}/dist/libwebffi.json`, 'utf8');
  writeFileSync(`${pkg}/dist/libwebffi.json`, stamp.replace(/"emscripten": "[^"]*"/, '"emscripten": "0.0.1"'));
  assert.match(decision(pkg), /^webffi: note: .*: dist\/libwebffi\.a was compiled by Emscripten 0\.0\.1, not by this Emscripten \(\d+\.\d+\.\d+\)$/);
  rmSync(`${pkg}/dist/libwebffi.json`);
  assert.equal(decision(pkg), note('dist/libwebffi.json is missing or unreadable, so dist/libwebffi.a cannot be checked'));
  writeFileSync(`${pkg}/dist/libwebffi.json`, stamp);
  assert.equal(decision(pkg), '');
  // a header the runtime is compiled with counts as much as a source
  appendFileSync(`${pkg}/include/webffi/typed_call.h`, '\n/* edited */\n');
  assert.equal(decision(pkg), note('dist/libwebffi.a is stale: it was built from other sources than the src/ and include/ here'));
  rmSync(`${pkg}/dist/libwebffi.a`);
  assert.equal(decision(pkg), note('no prebuilt runtime (dist/libwebffi.a; `npm run build` makes it)'));
  assert.match(webffiIn(pkg, 'build', '--runtime-lib', `${dir}/absent.a`, `${dir}/bad.c`).stderr,
    /^webffi: --runtime-lib .*absent\.a: no such file$/m);
});

test('the values of compiler options are passed with them, never taken for sources', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(`${dir}/inc`);
  writeFileSync(`${dir}/inc/answer.h`, '#define ANSWER_BASE 40\n');
  writeFileSync(`${dir}/pre.h`, '#define PLUS 1\n');
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
#include <answer.h>
#ifdef GONE
#error -U did not reach the compiler
#endif
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->v_int64 = ANSWER_BASE + PLUS + ONE; return 0;
}`);
  const run = webffi('build', '--module', '-I', `${dir}/inc`, '-D', 'ONE=1', '-D', 'GONE', '-U', 'GONE',
    '-include', `${dir}/pre.h`, '-MD', '-MF', `${dir}/k.d`, '-Xlinker', '--no-gc-sections',
    `${dir}/k.c`, `-o${dir}/joined.wasm`, '--name=joined');
  assert.equal(run.status, 0, run.stderr);
  const module = new WebAssembly.Module(readFileSync(`${dir}/joined.wasm`));
  assert.equal(JSON.parse(Buffer.from(WebAssembly.Module.customSections(module, 'webffi.module')[0])
    .toString()).name, 'joined');
  assert.match(readFileSync(`${dir}/k.d`, 'utf8'), /answer\.h/, '-MF FILE reached the compiler');
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.wasm')), ['joined.wasm'],
    'no value was built as a source');
  // an option webffi does not know, with its value apart: the value is named, nothing is built
  const unknown = webffi('build', '--module', '-fsome-option', 'value', `${dir}/k.c`, '-o', `${dir}/u.wasm`);
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /^webffi: `value` is not a source \(C, C\+\+, assembly, \.o or \.a\); .*join them \(-option=value\)/);
  assert.equal(existsSync(`${dir}/u.wasm`), false);
});

test('the symbols read from wasm objects are the ones emnm lists', async (t) => {
  const { objectSymbols } = await import(new URL('../../bin/object_symbols.mjs', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const source of ['tests/modules/producer.c', 'tests/modules/load_and_call.c', 'src/json.c',
    'tests/cxx/checked_parse.cc']) {
    const cxx = source.endsWith('.cc');
    const object = `${dir}/${source.replace(/\W/g, '_')}.o`;
    const compile = spawnSync(cxx ? 'em++' : 'emcc', ['-O2', '-c', ...(cxx ? ['-fwasm-exceptions'] : []),
      `-I${root}include`, `${root}${source}`, '-o', object], { encoding: 'utf8' });
    assert.equal(compile.status, 0, compile.stderr);
    const nm = new Map();
    for (const line of spawnSync('emnm', ['--defined-only', object], { encoding: 'utf8' }).stdout.split('\n')) {
      // global ones; data in .data, .bss or .rodata is all data here, weak data is weak
      const m = /^\S*\s+([A-Z])\s+(\S+)$/.exec(line.trim());
      if (m) nm.set(m[2], { B: 'D', R: 'D', V: 'W' }[m[1]] ?? m[1]);
    }
    const own = objectSymbols(readFileSync(object));
    assert.ok(own.size > 0, source);
    assert.deepEqual(new Map([...own].sort()), new Map([...nm].sort()), source);
  }
  assert.equal(objectSymbols(Buffer.from('not wasm')), null);
});

test('include/dlpack/dlpack.h: DLPack 1.2\'s values and wasm32 layouts, in C and C++', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // the values and field order of upstream's header (dmlc/dlpack), checked
  // where users compile against ours
  const values = {
    DLPACK_MAJOR_VERSION: 1, DLPACK_MINOR_VERSION: 2,
    kDLCPU: 1, kDLCUDA: 2, kDLCUDAHost: 3, kDLOpenCL: 4, kDLVulkan: 7, kDLMetal: 8, kDLVPI: 9,
    kDLROCM: 10, kDLROCMHost: 11, kDLExtDev: 12, kDLCUDAManaged: 13, kDLOneAPI: 14, kDLWebGPU: 15,
    kDLHexagon: 16, kDLMAIA: 17, kDLTrn: 18,
    kDLInt: 0, kDLUInt: 1, kDLFloat: 2, kDLOpaqueHandle: 3, kDLBfloat: 4, kDLComplex: 5, kDLBool: 6,
    kDLFloat8_e3m4: 7, kDLFloat8_e4m3: 8, kDLFloat8_e4m3b11fnuz: 9, kDLFloat8_e4m3fn: 10,
    kDLFloat8_e4m3fnuz: 11, kDLFloat8_e5m2: 12, kDLFloat8_e5m2fnuz: 13, kDLFloat8_e8m0fnu: 14,
    kDLFloat6_e2m3fn: 15, kDLFloat6_e3m2fn: 16, kDLFloat4_e2m1fn: 17,
    DLPACK_FLAG_BITMASK_READ_ONLY: 1, DLPACK_FLAG_BITMASK_IS_COPIED: 2,
    DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: 4,
  };
  const layout = {
    'sizeof(DLPackVersion)': 8, 'offsetof(DLPackVersion, minor)': 4,
    'sizeof(DLDevice)': 8, 'offsetof(DLDevice, device_id)': 4, 'sizeof(DLDeviceType)': 4,
    'sizeof(DLDataType)': 4, 'offsetof(DLDataType, bits)': 1, 'offsetof(DLDataType, lanes)': 2,
    'offsetof(DLTensor, device)': 4, 'offsetof(DLTensor, ndim)': 12, 'offsetof(DLTensor, dtype)': 16,
    'offsetof(DLTensor, shape)': 20, 'offsetof(DLTensor, strides)': 24,
    'offsetof(DLTensor, byte_offset)': 32, 'sizeof(DLTensor)': 40,
    'offsetof(DLManagedTensor, manager_ctx)': 40, 'offsetof(DLManagedTensor, deleter)': 44,
    'offsetof(DLManagedTensorVersioned, manager_ctx)': 8, 'offsetof(DLManagedTensorVersioned, deleter)': 12,
    'offsetof(DLManagedTensorVersioned, flags)': 16, 'offsetof(DLManagedTensorVersioned, dl_tensor)': 24,
    'sizeof(DLManagedTensorVersioned)': 64, 'offsetof(DLPackExchangeAPIHeader, prev_api)': 8,
    'offsetof(DLPackExchangeAPI, managed_tensor_allocator)': 12,
    'offsetof(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync)': 16,
    'offsetof(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync)': 20,
    'offsetof(DLPackExchangeAPI, dltensor_from_py_object_no_sync)': 24,
    'offsetof(DLPackExchangeAPI, current_work_stream)': 28, 'sizeof(DLPackExchangeAPI)': 32,
  };
  const checks = Object.entries({ ...values, ...layout }).map(([expr, want]) =>
    `_Static_assert((${expr}) == ${want}, "${expr} is not ${want}");`);
  // the function types, spelled as upstream declares them
  writeFileSync(`${dir}/dlpack_check.c`, `#include <dlpack/dlpack.h>
#include <stddef.h>
#ifdef __cplusplus
#define _Static_assert static_assert
#endif
${checks.join('\n')}
static int Alloc(DLTensor* p, DLManagedTensorVersioned** o, void* c, void (*e)(void*, const char*, const char*)) {
  (void)p; (void)o; (void)c; (void)e; return 0;
}
static int FromPy(void* p, DLManagedTensorVersioned** o) { (void)p; (void)o; return 0; }
static int ToPy(DLManagedTensorVersioned* t, void** o) { (void)t; (void)o; return 0; }
static int View(void* p, DLTensor* o) { (void)p; (void)o; return 0; }
static int Stream(DLDeviceType t, int32_t i, void** o) { (void)t; (void)i; (void)o; return 0; }
DLPackExchangeAPI webffi_dlpack_check_api = {{{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL},
  Alloc, FromPy, ToPy, View, Stream};
`);
  for (const lang of [[], ['--cxx']]) {
    const run = webffi('build', '--module', '--no-import-check', ...lang, '-Werror', `${dir}/dlpack_check.c`,
      '-o', `${dir}/dlpack_check.wasm`);
    assert.equal(run.status, 0, `${lang.join(' ') || 'C'}: ${run.stderr}`);
  }
});

test('a C++ module exports its __tvm_ffi_* symbols, not the C++ runtime it links, and still throws and catches', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/parse.cc`, `#include <tvm/ffi/c_api.h>
#include <stdexcept>
#include <string>
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_parse(void*, const TVMFFIAny* args, int32_t, TVMFFIAny* r) {
  try {
    r->type_index = kTVMFFIInt; r->zero_padding = 0;
    r->v_int64 = std::stoi(std::string(args[0].v_bytes, args[0].small_str_len));
    return 0;
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", e.what());
    return -1;
  }
}`);
  const run = webffi('build', '--module', `${dir}/parse.cc`, '-o', `${dir}/parse.wasm`);
  assert.equal(run.status, 0, run.stderr);
  const exports = new Set(WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(`${dir}/parse.wasm`)))
    .map((e) => e.name));
  assert.ok(exports.has('__tvm_ffi_parse'));
  // libc's and libc++abi's functions the module links for itself are its own
  for (const name of ['strtol', 'strtod', 'fwrite', '__cxa_throw', '__cxa_allocate_exception', '_Unwind_RaiseException']) {
    assert.equal(exports.has(name), false, `${name} is exported`);
  }
  const { load, ValueError } = await import(new URL('../../js/index.js', import.meta.url));
  const rt = await load({ autoloadBackends: false });
  const parse = (await rt.loadModule(readFileSync(`${dir}/parse.wasm`))).getFunction('parse');
  assert.equal(parse('42'), 42);
  assert.throws(() => parse('x'), (e) => e instanceof ValueError && /stoi/.test(e.message));
});

test('a module carries its name in the wasm name section: backtrace frames of its functions show it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_fail(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; (void)r;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "failed on purpose");
  return -1;
}`);
  const { load, ValueError } = await import(new URL('../../js/index.js', import.meta.url));
  const rt = await load({ autoloadBackends: false });
  for (const [args, name] of [[[], 'k'], [['--name', 'kernels'], 'kernels']]) {
    const out = `${dir}/${name}_out.wasm`;
    const run = webffi('build', '--module', ...args, `${dir}/k.c`, '-o', `${dir}/k.wasm`);
    assert.equal(run.status, 0, run.stderr);
    cpSync(`${dir}/k.wasm`, out);
    const fail = (await rt.loadModule(readFileSync(out))).getFunction('fail');
    assert.throws(() => fail(), (e) => e instanceof ValueError &&
      new RegExp(`^ {2}File "wasm://wasm/${name}-[0-9a-f]+:wasm-function\\[\\d+\\]:0x[0-9a-f]+", line unknown, in ${name}\\.__tvm_ffi_fail\\n`)
        .test(e.backtrace), name);
  }
});

test('-g keeps the link\'s DWARF and adds the line table; -gline-tables-only keeps the table alone; a link with no DWARF says so', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/k.c`, `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_fail(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; (void)r;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "failed on purpose");
  return -1;
}`);
  const sections = (file) => {
    const m = new WebAssembly.Module(readFileSync(file));
    return ['webffi.lines', '.debug_info', '.debug_line'].map((s) => WebAssembly.Module.customSections(m, s).length);
  };
  for (const [flag, expected] of [['-g', [1, 1, 1]], ['-gline-tables-only', [1, 0, 0]], ['-g0', [0, 0, 0]]]) {
    const run = webffi('build', '--module', flag, `${dir}/k.c`, '-o', `${dir}/k.wasm`);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, '', flag);
    assert.deepEqual(sections(`${dir}/k.wasm`), expected, flag);
  }
  // objects compiled without -g, linked with it: nothing to read, one warning, still built
  let run = webffi('build', '-c', '--module', `${dir}/k.c`, '-o', `${dir}/k.o`);
  assert.equal(run.status, 0, run.stderr);
  run = webffi('build', '--module', '-g', `${dir}/k.o`, '-o', `${dir}/k.wasm`);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /^webffi: warning: the link kept no DWARF line table \(were the sources compiled without -g\?\)/);
  assert.deepEqual(sections(`${dir}/k.wasm`), [0, 0, 0]);
  // -c with -g, then the link: the table is made at the link
  run = webffi('build', '-c', '--module', '-gline-tables-only', `${dir}/k.c`, '-o', `${dir}/k.o`);
  assert.equal(run.status, 0, run.stderr);
  run = webffi('build', '--module', '-gline-tables-only', `${dir}/k.o`, '-o', `${dir}/k.wasm`);
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(sections(`${dir}/k.wasm`), [1, 0, 0]);
});

test('upstream\'s C++ headers without --tvm-ffi-include: the error names the header and how to give them', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/typed.cc`, '#include <tvm/ffi/function.h>\nint x;\n');
  const run = webffi('build', '--module', `${dir}/typed.cc`, '-o', `${dir}/typed.wasm`);
  assert.equal(run.status, 1);
  assert.equal(run.stderr, `webffi: ${dir}/typed.cc:1:10: \`tvm/ffi/function.h\` is one of upstream tvm-ffi's C++ headers, ` +
    'which webffi does not ship (it has the C ABI\'s: tvm/ffi/c_api.h, tvm/ffi/extra/c_env_api.h); to build against them, ' +
    'pass upstream\'s include folder: `--tvm-ffi-include DIR`, or `--tvm-ffi-include auto` where tvm-ffi is installed ' +
    '(`pip install apache-tvm-ffi` puts its `tvm-ffi-config` on PATH), or the TVM_FFI_INCLUDE variable\n');
  // Given a folder without them, it says that folder is not upstream's.
  mkdirSync(`${dir}/up/tvm/ffi`, { recursive: true });
  writeFileSync(`${dir}/up/tvm/ffi/c_api.h`, '#include_next <tvm/ffi/c_api.h>\n');
  const wrong = webffi('build', '-c', '--tvm-ffi-include', `${dir}/up`, `${dir}/typed.cc`, '-o', `${dir}/typed.o`);
  assert.equal(wrong.status, 1);
  assert.match(wrong.stderr, /^webffi: .*typed\.cc:1:10: `tvm\/ffi\/function\.h` is not in --tvm-ffi-include .*\/up, which should be upstream tvm-ffi's include folder/);
  assert.doesNotMatch(wrong.stderr + run.stderr, /clang|emcc|em\+\+/);
  // Other compile errors pass through as the compiler writes them.
  writeFileSync(`${dir}/broken.c`, 'int f( { return 0; }\n');
  const broken = webffi('build', '--module', `${dir}/broken.c`, '-o', `${dir}/broken.wasm`);
  assert.equal(broken.status, 1);
  assert.match(broken.stderr, /broken\.c:1:\d+: error: /);
});

test('--module with no __tvm_ffi_* function builds, with a warning saying how to export one', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/helpers.c`, '#include <tvm/ffi/c_api.h>\nint helper(int x) { return x + 1; }\n' +
    'static int __tvm_ffi_private(void) { return helper(1); }\nint use(void) { return __tvm_ffi_private(); }\n');
  const run = webffi('build', '--module', `${dir}/helpers.c`, '-o', `${dir}/helpers.wasm`);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, `webffi: warning: ${dir}/helpers.wasm: no source defines a \`__tvm_ffi_*\` function or ` +
    'registers a global, so the module loads with nothing to call; export each function as `TVM_FFI_DLL_EXPORT int ' +
    '__tvm_ffi_NAME(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)` (C++ on upstream\'s ' +
    'headers: TVM_FFI_DLL_EXPORT_TYPED_FUNC(NAME, fn))\n');
  assert.ok(existsSync(`${dir}/helpers.wasm`));
  // With one, nothing is said; nor for a module whose constructor registers a global instead.
  writeFileSync(`${dir}/answer.c`, answerSource);
  const ok = webffi('build', '--module', `${dir}/answer.c`, '-o', `${dir}/answer.wasm`);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stderr, '');
  writeFileSync(`${dir}/registers.c`, `#include <tvm/ffi/c_api.h>
static int answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = 42; return 0;
}
__attribute__((constructor)) static void registers(void) {
  TVMFFIObjectHandle f;
  TVMFFIByteArray name = {"registers.answer", 16};
  if (TVMFFIFunctionCreate(0, answer, 0, &f) == 0) { TVMFFIFunctionSetGlobal(&name, f, 1); TVMFFIObjectDecRef(f); }
}
`);
  const registers = webffi('build', '--module', `${dir}/registers.c`, '-o', `${dir}/registers.wasm`);
  assert.equal(registers.status, 0, registers.stderr);
  assert.equal(registers.stderr, '');
});

test('upstream\'s export macros (EMSCRIPTEN_KEEPALIVE) on C++ classes: no warning, and the module keeps only what its functions reach', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A stand-in for upstream's headers: its export macros as upstream defines
  // them under Emscripten, on a class, with inline functions and templates
  // (weak definitions) and iostreams that nothing calls.
  mkdirSync(`${dir}/up/tvm/ffi`, { recursive: true });
  writeFileSync(`${dir}/up/tvm/ffi/c_api.h`, `#if !defined(TVM_FFI_DLL) && defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#define TVM_FFI_DLL EMSCRIPTEN_KEEPALIVE
#define TVM_FFI_DLL_EXPORT EMSCRIPTEN_KEEPALIVE
#endif
#include_next <tvm/ffi/c_api.h>
`);
  writeFileSync(`${dir}/up/tvm/ffi/counter.h`, `#include <tvm/ffi/c_api.h>
#include <sstream>
#include <string>
namespace upstream_like {
class TVM_FFI_DLL Counter {
 public:
  static int& count() { static int n = 0; return n; }
  std::string describe() const { std::ostringstream os; os << "count=" << count(); return os.str(); }
};
template <typename T> struct Box { T value; T get() const { return value; } };
}
`);
  writeFileSync(`${dir}/count.cc`, `#include <tvm/ffi/counter.h>
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_count(void*, const TVMFFIAny*, int32_t, TVMFFIAny* r) {
  upstream_like::Box<int> b{++upstream_like::Counter::count()};
  r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = b.get();
  return 0;
}
`);
  // Compiled alone (a build with --tvm-ffi-include also compiles the forwarding
  // layer, which needs the real headers), then linked as a module.
  const compiled = webffi('build', '-c', '--module', '--tvm-ffi-include', `${dir}/up`, `${dir}/count.cc`, '-o', `${dir}/count.o`);
  assert.equal(compiled.status, 0, compiled.stderr);
  assert.doesNotMatch(compiled.stderr, /warning/, compiled.stderr);
  const run = webffi('build', '--module', '--cxx', `${dir}/count.o`, '-o', `${dir}/count.wasm`);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
  const mod = new WebAssembly.Module(readFileSync(`${dir}/count.wasm`));
  const exports = WebAssembly.Module.exports(mod).map((e) => e.name);
  assert.ok(exports.includes('__tvm_ffi_count'));
  assert.deepEqual(exports.filter((n) => n.startsWith('_Z')), [], 'no C++ symbol is exported (nor kept alive by an export)');
  assert.deepEqual(WebAssembly.Module.imports(mod).filter((i) => i.name.startsWith('_Z')).map((i) => i.name), []);
  assert.ok(readFileSync(`${dir}/count.wasm`).length < 30000, `${readFileSync(`${dir}/count.wasm`).length} bytes`);
  const { load } = await import(new URL('../../js/index.js', import.meta.url));
  const rt = await load({ autoloadBackends: false });
  const count = (await rt.loadModule(readFileSync(`${dir}/count.wasm`))).getFunction('count');
  assert.equal(count(), 1);
  assert.equal(count(), 2);
});
