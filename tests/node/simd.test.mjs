// `webffi build` compiles users' C and C++ with wasm SIMD (-msimd128) by
// default: the built wasm holds SIMD instructions, with --no-simd or
// -mno-simd128 none, and the results are the same. Needs emcc and
// Binaryen's wasm-dis (installed with Emscripten).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const webffi = (...args) => spawnSync(process.execPath, [`${root}bin/webffi.mjs`, ...args],
  { encoding: 'utf8' });

/**
 * The SIMD instructions of a wasm (the 0xfd-prefixed opcodes), counted in
 * Binaryen's text form: v128.*, and the lane-typed i8x16.*, f32x4.*, ...
 */
function simdInstructions(file) {
  const dis = spawnSync('wasm-dis', [file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(dis.status, 0, `wasm-dis ${file}: ${dis.error?.message ?? dis.stderr}`);
  return (dis.stdout.match(/\((v128|[if](8|16|32|64)x\d+)\.[a-z_0-9]+/g) ?? []).length;
}

/** The features an object file declares (its `target_features` section: +simd128, ...). */
function targetFeatures(file) {
  const [section] = WebAssembly.Module.customSections(new WebAssembly.Module(readFileSync(file)),
    'target_features');
  const bytes = new Uint8Array(section ?? new ArrayBuffer(1));
  const features = [];
  for (let at = 1, n = 0; n < bytes[0]; n++) { // prefix byte, LEB length (< 128 here), name
    const prefix = String.fromCharCode(bytes[at]);
    const length = bytes[at + 1];
    features.push(prefix + Buffer.from(bytes.subarray(at + 2, at + 2 + length)).toString());
    at += 2 + length;
  }
  return features;
}

// y = a * x + y and z = max(x, 0) * 2, elementwise over float32 tensors: loops
// clang vectorises at -O2 with SIMD, computed the same in every lane as scalar.
const KERNEL = `#include <tvm/ffi/c_api.h>
#include <webffi/typed_call.h>

static const char* const kTypes[] = {"float", "Tensor", "Tensor", "Tensor"};
static const WebFFISignature kSig = {"saxpy_relu", 4, kTypes, "None"};

#ifdef __cplusplus
extern "C"
#endif
TVM_FFI_DLL_EXPORT int __tvm_ffi_saxpy_relu(void* self, const TVMFFIAny* args, int32_t num_args,
                                            TVMFFIAny* result) {
  double a;
  DLTensor* t[3];
  (void)self;
  if (WebFFICheckNumArgs(&kSig, num_args) != 0 || WebFFIArgToFloat(&kSig, args, 0, &a) != 0) return -1;
  for (int i = 0; i < 3; ++i) {
    if (WebFFIArgToDLTensor(&kSig, args, i + 1, &t[i]) != 0) return -1;
  }
  const float* x = (const float*)t[0]->data;
  float* y = (float*)t[1]->data;
  float* z = (float*)t[2]->data;
  const float af = (float)a;
  const int64_t n = t[0]->shape[0];
  for (int64_t i = 0; i < n; ++i) y[i] = af * x[i] + y[i];
  for (int64_t i = 0; i < n; ++i) z[i] = (x[i] > 0.0f ? x[i] : 0.0f) * 2.0f;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
`;

/** Calls saxpy_relu from `lib` on 1,003 values (not a multiple of the lanes) and checks every result. */
function checkResults(rt, lib) {
  const n = 1003;
  const xs = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 100);
  const ys = Float32Array.from({ length: n }, (_, i) => i / 7);
  const x = rt.tensor(xs);
  const y = rt.tensor(ys);
  const z = rt.empty([n], 'float32');
  lib.getFunction('saxpy_relu')(1.5, x, y, z);
  const a = Math.fround(1.5);
  const wantY = xs.map((v, i) => Math.fround(Math.fround(a * v) + ys[i]));
  const wantZ = xs.map((v) => Math.fround(Math.max(v, 0) * 2));
  assert.deepEqual(y.toTypedArray(), wantY);
  assert.deepEqual(z.toTypedArray(), wantZ);
  for (const handle of [x, y, z]) handle.dispose();
}

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-simd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/k.c`, KERNEL);
  writeFileSync(`${dir}/k.cc`, KERNEL);
  return dir;
}

test('a module is built with SIMD by default, without it with --no-simd or -mno-simd128; same results', async (t) => {
  const dir = scratch(t);
  const rt = await load();
  const builds = [
    ['k.c', [], true], ['k.c', ['--no-simd'], false], ['k.c', ['-mno-simd128'], false],
    ['k.cc', [], true], ['k.cc', ['--no-simd'], false],
  ];
  for (const [i, [source, flags, simd]] of builds.entries()) {
    const out = `${dir}/m${i}.wasm`;
    const run = webffi('build', '--module', ...flags, `${dir}/${source}`, '-o', out, '--name', `m${i}`);
    assert.equal(run.status, 0, run.stderr);
    const count = simdInstructions(out);
    assert.ok(simd ? count > 0 : count === 0, `${source} ${flags.join(' ')}: ${count} SIMD instructions`);
    checkResults(rt, await rt.loadModule(readFileSync(out)));
  }
});

test('linked in, the user\'s code is built with SIMD by default and the runtime\'s core stays scalar', async (t) => {
  const dir = scratch(t);
  const counts = {};
  for (const [name, flags] of [['simd', []], ['scalar', ['--no-simd']]]) {
    const out = `${dir}/${name}.wasm`;
    const run = webffi('build', ...flags, `${dir}/k.c`, '-o', out);
    assert.equal(run.status, 0, run.stderr);
    counts[name] = simdInstructions(out);
    const rt = await load({ wasm: readFileSync(out) });
    checkResults(rt, rt.getGlobal('ffi.SystemLib')());
  }
  assert.equal(counts.scalar, 0, 'the core and the kernel without SIMD');
  assert.ok(counts.simd > 0, 'the kernel with SIMD');
  // the shipping core has none: the SIMD instructions are all the kernel's
  assert.equal(simdInstructions(`${root}dist/webffi.wasm`), 0);
});

test('-c compiles objects with SIMD by default (the target_features they declare), not with --no-simd', (t) => {
  const dir = scratch(t);
  for (const [flags, simd] of [[[], true], [['--no-simd'], false], [['--module'], true]]) {
    const out = `${dir}/k${flags.join('')}.o`;
    const run = webffi('build', '-c', ...flags, `${dir}/k.c`, '-o', out);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(targetFeatures(out).includes('+simd128'), simd, `${flags.join(' ')}: ${targetFeatures(out)}`);
  }
});

test('the benchmark kernels (bench/kernels/c_speed.c) compute the same bits with and without SIMD, asked for 1 or 3 tasks (the single-threaded core runs a launch as one task; tests/node/threads.test.mjs splits one)', async (t) => {
  const dir = scratch(t);
  const kernels = `${root}bench/kernels`;
  const rt = await load();
  const n = 72; // not a multiple of the k tile (64)
  const sumN = 3 * 65536 + 1000; // four blocks, the last one short
  const a = rt.empty([n * n], 'float32');
  const b = rt.empty([n * n], 'float32');
  const x = rt.empty([sumN], 'float32');
  const sums = rt.empty([4], 'float32');
  const results = [];
  for (const flags of [[], ['--no-simd']]) {
    const out = `${dir}/c_speed${flags.join('')}.wasm`;
    const run = webffi('build', '--module', '-O3', ...flags, `${kernels}/c_speed_module.c`, `${kernels}/c_speed.c`,
      '-o', out, '--name', `c_speed${flags.join('')}`);
    assert.equal(run.status, 0, run.stderr);
    const mod = await rt.loadModule(readFileSync(out));
    const [fill, matmul, sum] = ['fill', 'matmul', 'sum'].map((f) => mod.getFunction(f));
    fill(a, 1);
    fill(b, 2);
    fill(x, 3);
    for (const tasks of [1, 3]) {
      const c = rt.empty([n * n], 'float32');
      matmul(a, b, c, tasks);
      results.push({ c: c.toTypedArray(), total: sum(x, sums, tasks) });
      c.dispose();
    }
  }
  // the reference: the same operations in the same order, rounded to float32 at each step
  const [av, bv, xv] = [a, b, x].map((v) => v.toTypedArray());
  const want = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < n; k++) {
      for (let j = 0; j < n; j++) {
        want[i * n + j] = Math.fround(want[i * n + j] + Math.fround(av[i * n + k] * bv[k * n + j]));
      }
    }
  }
  let total = 0;
  for (let from = 0; from < sumN; from += 65536) {
    const lanes = new Float32Array(16);
    for (let i = from; i < Math.min(from + 65536, sumN); i++) lanes[(i - from) % 16] += xv[i];
    total += lanes.reduce((s, v) => Math.fround(s + v), 0);
  }
  for (const r of results) {
    assert.deepEqual(r.c, want);
    assert.equal(r.total, total);
  }
});
