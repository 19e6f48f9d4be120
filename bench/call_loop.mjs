// TVMFFIFunctionCall in a C loop, inside wasm: bench/call_loop.c linked
// into webffi's core (dist/libwebffi.a, by `webffi build`), into upstream
// tvm-ffi's own core (its src/ffi compiled with em++, as the TVM web runtime
// links it) and, given another checkout, into that checkout's core (e.g. the
// main before a change). One process, alternating paired rounds; each row
// is ns per call and its ratio to upstream's core, and the floor is the same
// loop calling the callee through a plain function pointer. Upstream's core
// is also linked with a growable table, as webffi's runtime is (modules are
// loaded into its table), which costs every indirect call a little.
//
//   WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include node bench/call_loop.mjs [OTHER_CHECKOUT] [rounds]
//
// Upstream's sources (include/ and src/ffi next to it) never enter this
// repository; the wasm files are built under build/bench/call_loop/ and
// rebuilt when a source is newer.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWasi } from '../js/wasi.js';
import { median, quantile } from './paired.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const upInclude = process.env.WEBFFI_UPSTREAM_INCLUDE;
if (!upInclude || !existsSync(join(upInclude, 'tvm/ffi/c_api.h'))) {
  console.error('bench/call_loop.mjs: set WEBFFI_UPSTREAM_INCLUDE to the include/ folder of an upstream tvm-ffi checkout');
  process.exit(2);
}
const otherRoot = process.argv[2] && !/^\d+$/.test(process.argv[2]) ? resolve(process.argv[2]) : null;
const rounds = Number(process.argv[otherRoot ? 3 : 2] ?? 301);
// Short rounds, many of them: on a loaded machine a long one is often cut by another process.
const CALLS = 2e5;

const work = join(root, 'build/bench/call_loop');
mkdirSync(work, { recursive: true });
const source = join(root, 'bench/call_loop.c');
const mtime = (f) => (existsSync(f) ? statSync(f).mtimeMs : 0);
const stale = (out, inputs) => inputs.some((f) => mtime(f) >= mtime(out));
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });

/** The loop linked into a webffi core archive (`webffi build`, linked in). */
function buildWebffi(archive, out) {
  if (!stale(out, [archive, source])) return out;
  run(process.execPath, [join(root, 'bin/webffi.mjs'), 'build', source, '-O2', '--runtime-lib', archive, '-o', out]);
  return out;
}

// Upstream's core as the TVM web runtime compiles it (its wasm_runtime.cc
// includes these files), with C++ exceptions as wasm exceptions.
const UPSTREAM_SOURCES = ['backtrace', 'object', 'error', 'function', 'tensor', 'dtype', 'container',
  'init_once', 'custom_allocator', 'extra/structural_equal', 'extra/structural_hash', 'extra/structural_visit',
  'extra/visit_error_context', 'extra/json_parser', 'extra/json_writer', 'extra/serialization',
  'extra/dataclass', 'extra/reflection_extra', 'extra/module', 'extra/library_module',
  'extra/library_module_system_lib', 'extra/env_context', 'extra/env_c_api'];

/** `tableFlags`: webffi's runtime links with a growable, exported table (modules load into it). */
function buildUpstream(out, tableFlags = []) {
  const up = resolve(upInclude, '..');
  const flags = ['-O2', '-std=c++17', '-fwasm-exceptions', '-DTVM_FFI_USE_LIBBACKTRACE=0',
    '-DTVM_FFI_BACKTRACE_ON_SEGFAULT=0', `-I${upInclude}`, `-I${join(up, '3rdparty/dlpack/include')}`, '-w'];
  const objects = UPSTREAM_SOURCES.map((s) => {
    const src = join(up, 'src/ffi', `${s}.cc`);
    const obj = join(work, `upstream_${s.replace('/', '_')}.o`);
    if (stale(obj, [src])) {
      console.error(`building upstream's ${s}.cc (once)`);
      run('em++', [...flags, '-c', src, '-o', obj]);
    }
    return obj;
  });
  const loop = join(work, 'call_loop_upstream.o');
  if (stale(loop, [source])) run('emcc', ['-O2', `-I${upInclude}`, `-I${join(up, '3rdparty/dlpack/include')}`, '-c', source, '-o', loop]);
  if (stale(out, [loop, ...objects])) {
    run('em++', ['-O2', '--profiling-funcs', '-fwasm-exceptions', '-sSTANDALONE_WASM', '--no-entry', '-sWASM_BIGINT',
      '-sALLOW_MEMORY_GROWTH', ...tableFlags, loop, ...objects, '-o', out]);
  }
  return out;
}

/** A standalone wasm instance: WASI from the runtime's shim, anything else a stub never called in the loop. */
async function instantiate(file) {
  const module = await WebAssembly.compile(readFileSync(file));
  const wasi = createWasi();
  const stub = new Proxy({}, { get: () => () => 0 });
  const imports = {};
  for (const { module: m } of WebAssembly.Module.imports(module)) {
    imports[m] ??= m === 'wasi_snapshot_preview1' ? wasi.imports : stub;
  }
  const instance = await WebAssembly.instantiate(module, imports);
  const x = instance.exports;
  wasi.setMemory(x.memory);
  x._initialize?.();
  if (x.bench_setup() !== 0) throw new Error(`${file}: bench_setup failed`);
  return x;
}

const cores = [['upstream tvm-ffi', buildUpstream(join(work, 'upstream.wasm'))],
  // V8 bounds-checks call_indirect against a growable table's current size
  // (a load) rather than a constant: the same core linked as webffi's is
  ['upstream, growable table', buildUpstream(join(work, 'upstream_growable.wasm'), ['-Wl,--growable-table', '-Wl,--export-table'])]];
cores.push(['webffi', buildWebffi(join(root, 'dist/libwebffi.a'), join(work, 'webffi.wasm'))]);
if (otherRoot) {
  // one wasm per other checkout (named by its path), rebuilt when its archive is newer
  const tag = createHash('sha256').update(otherRoot).digest('hex').slice(0, 12);
  cores.push([`webffi at ${otherRoot}`, buildWebffi(join(otherRoot, 'dist/libwebffi.a'), join(work, `other-${tag}.wasm`))]);
}
const instances = [];
for (const [name, file] of cores) instances.push([name, await instantiate(file)]);

// The rows: for each core, the loop over each function, then the floor.
const loops = [
  ['TVMFFIFunctionCall, function made without state (NULL self)', (x) => () => x.bench_call_loop(0, CALLS)],
  ['TVMFFIFunctionCall, function with a `self`', (x) => () => x.bench_call_loop(1, CALLS)],
  ['floor: the callee through a function pointer', (x) => () => x.bench_floor_loop(CALLS)],
];
const timed = (f) => {
  const t0 = process.hrtime.bigint();
  if (f() !== 0) throw new Error('a call failed');
  return Number(process.hrtime.bigint() - t0) / CALLS;
};
const bodies = loops.map(([, make]) => instances.map(([, x]) => make(x)));
const samples = bodies.map((row) => row.map(() => []));
for (let r = 0; r <= rounds; r++) {
  for (let i = 0; i < bodies.length; i++) {
    const row = bodies[i];
    // Alternate the order of the cores each round, so none always runs first.
    const order = row.map((_, k) => k);
    if (r % 2) order.reverse();
    const t = [];
    for (const k of order) t[k] = timed(row[k]);
    if (r > 0) row.forEach((_, k) => samples[i][k].push(t[k]));
  }
}

const fmt = (v) => v.toFixed(2);
const spread = (xs) => `${fmt(quantile(xs, 0.1))}-${fmt(quantile(xs, 0.9))}`;
console.log(`${CALLS} calls per round, ${rounds} rounds; ns per call, median [10th-90th percentile]; ratio: median of the per-round ratios`);
console.log(`| loop | ${instances.map(([n]) => n).join(' | ')} | ${instances.slice(1).map(([n]) => `${n} / upstream`).join(' | ')} |`);
console.log(`|---|${instances.map(() => '---:').join('|')}|${instances.slice(1).map(() => '---:').join('|')}|`);
loops.forEach(([name], i) => {
  const s = samples[i];
  const cells = s.map((xs) => `${fmt(median(xs))} [${spread(xs)}]`);
  const ratios = s.slice(1).map((xs) => {
    const rs = xs.map((v, j) => v / s[0][j]);
    return `${median(rs).toFixed(2)}x [${quantile(rs, 0.1).toFixed(2)}-${quantile(rs, 0.9).toFixed(2)}]`;
  });
  console.log(`| ${name} | ${cells.join(' | ')} | ${ratios.join(' | ')} |`);
});
if (otherRoot) {
  const k = instances.length - 1;
  console.log('');
  console.log('| loop | this tree / the other checkout |');
  console.log('|---|---:|');
  loops.forEach(([name], i) => {
    const rs = samples[i][2].map((v, j) => v / samples[i][k][j]);
    console.log(`| ${name} | ${median(rs).toFixed(2)}x [${quantile(rs, 0.1).toFixed(2)}-${quantile(rs, 0.9).toFixed(2)}] |`);
  });
}
