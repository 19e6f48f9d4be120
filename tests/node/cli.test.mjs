// The `webffi build` command line (the CMake build of tests/modules runs
// it in both modes; these cover its options and its failures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
    assert.match(run.stdout, /^usage: webffi build .*\n {7}webffi run PROGRAM\.wasm/);
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
