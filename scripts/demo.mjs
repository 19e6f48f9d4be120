// The demo: load the runtime in Node, call C functions through the global
// registry, pass a JS callback into C, show C errors with their kind,
// message and backtrace (file and line: scripts/demo_errors.c is built with
// -gline-tables-only), and compute a tensor on WebGPU (or say why not).
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, FFIError } from '../js/index.js';
import { loadTesting } from '../js/testing.js';
import { buildKernels, buildThreadedKernels } from '../web/build_kernels.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * scripts/demo_errors.c as a module built with -gline-tables-only (its C
 * frames name file and line), into build/demo/, when missing or older than
 * its source; null with the reason printed when it does not build.
 */
function buildErrorsModule() {
  const [source, out] = [`${root}scripts/demo_errors.c`, `${root}build/demo/demo_errors.wasm`];
  const mtime = (f) => {
    try {
      return statSync(f).mtimeMs;
    } catch {
      return -1;
    }
  };
  if (mtime(out) > Math.max(mtime(source), mtime(`${root}dist/libwebffi.a`))) return out;
  mkdirSync(`${root}build/demo`, { recursive: true });
  const r = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module', '-gline-tables-only', '-O1',
    '-Wall', '-Wextra', '-Werror', 'scripts/demo_errors.c', '-o', out], { encoding: 'utf8', cwd: root });
  if (r.status === 0) return out;
  console.log(`scripts/demo_errors.c did not build (exit ${r.status}): ${r.stderr}${r.stdout}`);
  return null;
}

const rt = await load();
const meta = rt.metadata;
console.log(`webffi runtime loaded: tvm-ffi ABI ${meta.tvm_ffi_version.join('.')}, ` +
  `${rt.listGlobals().length} global functions`);

// testing.* are the test fixtures: a module of their own, loaded on demand.
await loadTesting(rt);
const addOne = rt.getGlobal('testing.add_one');
console.log(`testing.add_one(41) = ${addOne(41)}`);
console.log(`testing.add_one(2n ** 60n) = ${addOne(2n ** 60n)} (int64 beyond 2^53 stays exact)`);

// A JS function passed into C, which calls it back.
const apply = rt.getGlobal('testing.apply');
console.log(`testing.apply((a, b) => a * b, 6, 7) = ${apply((a, b) => a * b, 6, 7)}`);

// Containers: a JS array becomes an ffi.Array.
const arr = rt.toFFI([1, 'two', [3]]);
console.log(`a JS array as ${arr.typeKey}: ${arr} (length ${arr.length})`);
arr.dispose();

// C errors, from a module built with -gline-tables-only (scripts/demo_errors.c):
// a JS Error subclass chosen by the kind, and C frames with file and line.
const errorsPath = buildErrorsModule();
if (errorsPath) {
  const demo = await rt.loadModule(errorsPath);
  const checkedSqrt = demo.getFunction('checked_sqrt');
  console.log(`checked_sqrt(2) = ${checkedSqrt(2)}`);
  try {
    checkedSqrt(-1);
  } catch (e) {
    console.log(`caught ${e.constructor.name} (FFIError: ${e instanceof FFIError}, instanceof Error: ${e instanceof Error}): ` +
      `kind=${e.kind}, message=${e.message}`);
    console.log(`C backtrace, most recent call first:\n${e.backtrace.trimEnd()}`);
  }
  try {
    checkedSqrt('not a number');
  } catch (e) {
    console.log(`${e} (instanceof TypeError: ${e instanceof TypeError})\n${e.backtrace.trimEnd()}`);
  }

  // A JS exception thrown in a callback crosses C and comes back as itself.
  const thrown = new RangeError('thrown in a JS callback');
  try {
    demo.getFunction('apply')(() => {
      throw thrown;
    });
  } catch (e) {
    console.log(`the same JS error came back through C: ${e === thrown}; frames:\n${e.backtrace.trimEnd()}`);
  }
}

// Tensors: a typed array into the wasm heap, onto WebGPU (discovered at
// load: navigator.gpu, or npm `webgpu` in Node), a kernel, and back.
const x = rt.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3] });
const w = rt.tensor(new Float32Array([1, 0, 0, 1, 1, 1]), { shape: [3, 2] });
try {
  await rt.backends.ensure('webgpu');
  const info = rt.backends.get('webgpu').engine.info();
  const [xg, wg] = [await x.toDevice('webgpu'), await w.toDevice('webgpu')];
  const y = rt.getGlobal('webgpu.matmul')(xg, wg);
  console.log(`on ${info.adapter.description || info.adapter.vendor || 'a WebGPU adapter'}: ` +
    `webgpu.matmul(${x}, ${w}) = ${y} ${JSON.stringify(Array.from(await y.data()))}`);
  rt.backends.get('webgpu').engine.dispose();
} catch (e) {
  const y = new Float32Array(4);
  const [xs, ws] = [x.view(), w.view()];
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) for (let k = 0; k < 3; k++) y[i * 2 + j] += xs[i * 3 + k] * ws[k * 2 + j];
  console.log(`WebGPU is unavailable (${e.message}); fell back to the CPU: x @ w = ${JSON.stringify(Array.from(y))}`);
}

// The browser demo's C kernel (web/matmul.c), built as a module with
// `webffi build --module` and loaded into this runtime, against plain JS.
let kernelPath;
try {
  kernelPath = buildKernels();
} catch (e) {
  console.log(`The demo page's C kernel did not build: ${e.message}`);
}
if (kernelPath) {
  const matmul = (await rt.loadModule(kernelPath)).getFunction('matmul');
  const n = 256;
  const a = Float32Array.from({ length: n * n }, (_, i) => Math.sin(i));
  const b = Float32Array.from({ length: n * n }, (_, i) => Math.cos(i));
  let t0 = performance.now();
  const ref = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let p = 0; p < n; p++) for (let j = 0; j < n; j++) ref[i * n + j] += a[i * n + p] * b[p * n + j];
  const jsMs = performance.now() - t0;
  const [ta, tb] = [rt.tensor(a, { shape: [n, n] }), rt.tensor(b, { shape: [n, n] })];
  t0 = performance.now();
  const c = matmul(ta, tb);
  const cMs = performance.now() - t0;
  const diff = c.view().reduce((m, v, i) => Math.max(m, Math.abs(v - ref[i])), 0);
  console.log(`web/matmul.c as a module: ${n}x${n} matmul in C ${cMs.toFixed(1)} ms, in JS ${jsMs.toFixed(1)} ms, ` +
    `max |difference| ${diff.toExponential(1)}`);
  try {
    matmul(ta, rt.tensor(new Float32Array(6), { shape: [2, 3] }));
  } catch (e) {
    console.log(`${e}\n${e.backtrace.trimEnd()}`);
  }
}

// The same kernel linked into the threaded runtime (`webffi build --threads`):
// TVMBackendParallelLaunch splits its rows across every core (Node needs
// nothing for threads; a page needs two headers, see scripts/serve.mjs).
let threadedPath;
try {
  threadedPath = buildThreadedKernels();
} catch (e) {
  console.log(`The threaded kernel did not build: ${e.message}`);
}
if (threadedPath) {
  const trt = await load({ wasm: threadedPath, threads: 'auto' });
  if (trt.threads > 1) {
    const lib = trt.getGlobal('ffi.SystemLib')();
    const [all, tasks] = [lib.getFunction('matmul'), lib.getFunction('matmul_tasks')];
    const n = 512;
    const ta = trt.tensor(Float32Array.from({ length: n * n }, (_, i) => Math.sin(i)), { shape: [n, n] });
    const tb = trt.tensor(Float32Array.from({ length: n * n }, (_, i) => Math.cos(i)), { shape: [n, n] });
    const best = (fn) => {
      let ms = Infinity;
      let out = null;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        const c = fn();
        ms = Math.min(ms, performance.now() - t0);
        out?.dispose();
        out = c;
      }
      return { ms, out };
    };
    const one = best(() => tasks(ta, tb, 1));
    const every = best(() => all(ta, tb));
    const same = every.out.view().every((v, i) => Object.is(v, one.out.view()[i]));
    console.log(`web/matmul.c on ${trt.threads} threads (load({ threads: 'auto' })): ${n}x${n} in ` +
      `${every.ms.toFixed(1)} ms, on 1 thread ${one.ms.toFixed(1)} ms (${(one.ms / every.ms).toFixed(2)}x), ` +
      `the same bits: ${same}`);
  } else {
    console.log('One core here: the threaded kernel has nothing to split across.');
  }
  trt.dispose();
}
console.log('The same in the browser, with threads, WebGPU and a worker: node scripts/serve.mjs ' +
  '(it sends the two headers threads need) and open http://127.0.0.1:8000/web/');
