// C at native speed? The kernels of bench/kernels/ (a float32 matmul,
// n = 1024, and a memory-bound sum over 16 Mi floats) compiled natively
// (gcc -O3 -march=native on 1 and 2 threads, and the x86-64 levels with
// AVX2 and with SSE4.2 only, 4 lanes as wasm SIMD has, to show what the gap
// is made of; -std=c11 keeps gcc from fusing multiplies and adds, so every
// row computes the same bits) and with `webffi build` (scalar: --no-simd;
// SIMD: the default; both as modules), and linked into the threaded runtime
// (`webffi build --threads`, loaded with load({ wasm, threads: 2 })) on one
// task and on two, the wasm run in Node and in headless Chromium (on a page
// served cross-origin isolated, which SharedArrayBuffer needs). Prints one
// table per kernel: time, GFLOPS or GB/s, the ratio to native on one thread
// measured in the same run, and the checksum of each row against native's;
// then the ratios of the threaded rows (two threads against one on the same
// build, against native on one and two threads).
//
// Run after `npm run build`: node bench/c_speed.mjs [--quick] [--no-chromium]
//
// Rows are data (ROWS below): a native row names its -march and threads; a
// wasm row its engine, a build of the kernels (BUILDS), the load() options
// of its runtime and the number of tasks each kernel is split into
// (TVMBackendParallelLaunch's num_task: the threads the pool runs them on).
// A module's code runs serially (one task, whatever it asks for), so the
// threaded rows link the kernels into the runtime. Native is measured
// before and after the wasm rows; its fastest is kept.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATCH, MATMUL_N, SUM_N, repeats, runWasmRows } from './c_speed_bench.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = join(root, 'build/bench');
const quick = process.argv.includes('--quick');
const chromium = !process.argv.includes('--no-chromium');

/**
 * Builds of the kernels: `webffi build -O3` with these flags, to
 * build/bench/FILE; a module (--module) unless `linked` (the runtime with
 * the kernels linked in, loaded as load({ wasm })).
 */
const BUILDS = {
  scalar: { flags: ['--module', '--no-simd'], file: 'c_speed_scalar.wasm' },
  simd: { flags: ['--module'], file: 'c_speed_simd.wasm' },
  threads: { flags: ['--threads'], file: 'c_speed_mt.wasm', linked: true },
};

const ROWS = [
  { id: 'native-1', label: 'native gcc -O3 -march=native, 1 thread', engine: 'native', march: 'native', threads: 1 },
  { id: 'native-2', label: 'native gcc -O3 -march=native, 2 threads', engine: 'native', march: 'native', threads: 2 },
  { id: 'native-avx2', label: 'native -march=x86-64-v3 (AVX2), 1 thread', engine: 'native', march: 'x86-64-v3',
    threads: 1 },
  { id: 'native-sse', label: 'native -march=x86-64-v2 (SSE4.2: 4 lanes), 1 thread', engine: 'native',
    march: 'x86-64-v2', threads: 1 },
  { id: 'native-sse-2', label: 'native -march=x86-64-v2 (SSE4.2: 4 lanes), 2 threads', engine: 'native',
    march: 'x86-64-v2', threads: 2 },
];
if (process.arch !== 'x64') ROWS.splice(2, 3); // the x86-64 levels
for (const engine of chromium ? ['node', 'chromium'] : ['node']) {
  ROWS.push(
    { id: `${engine}-scalar`, label: `wasm scalar (--no-simd), ${engine}`, engine, build: 'scalar', tasks: 1 },
    { id: `${engine}-simd`, label: `wasm SIMD (default), ${engine}`, engine, build: 'simd', tasks: 1 },
    { id: `${engine}-mt-1`, label: `wasm SIMD, threaded runtime (--threads), 1 task, ${engine}`, engine,
      build: 'threads', load: { threads: 2 }, tasks: 1 },
    { id: `${engine}-mt-2`, label: `wasm SIMD, threaded runtime (--threads), 2 threads, ${engine}`, engine,
      build: 'threads', load: { threads: 2 }, tasks: 2 },
  );
}

const KERNELS = {
  matmul: { title: `float32 matmul, n = ${MATMUL_N}`, unit: 'GFLOPS', work: 2 * MATMUL_N ** 3 / 1e9 },
  sum: { title: `sum of ${SUM_N / 2 ** 20} Mi float32 (${(SUM_N * 4) / 2 ** 20} MiB read)`, unit: 'GB/s',
    work: (SUM_N * 4) / 1e9 },
};

function build() {
  mkdirSync(out, { recursive: true });
  const kernels = join(root, 'bench/kernels');
  for (const march of new Set(ROWS.filter((r) => r.engine === 'native').map((r) => r.march))) {
    execFileSync('gcc', ['-O3', `-march=${march}`, '-std=c11', '-Wall', '-Wextra', '-Werror', '-pthread',
      join(kernels, 'c_speed_native.c'), join(kernels, 'c_speed.c'), '-o', join(out, `c_speed_native_${march}`)],
    { stdio: 'inherit' });
  }
  for (const { flags, file } of Object.values(BUILDS)) {
    execFileSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'build', '-O3', ...flags,
      join(kernels, 'c_speed_module.c'), join(kernels, 'c_speed.c'), '-o', join(out, file)],
    { stdio: 'inherit' });
  }
}

/** The native rows: { id -> { matmul: { ns, checksum }, sum: ... } }, one process per -march. */
function runNative() {
  const reps = repeats(quick);
  const results = {};
  const rows = ROWS.filter((r) => r.engine === 'native');
  for (const march of new Set(rows.map((r) => r.march))) {
    const mine = rows.filter((r) => r.march === march);
    const binary = join(out, `c_speed_native_${march}`);
    const run = spawnSync(binary, [reps.matmul, reps.sum, BATCH.sum, ...mine.map((r) => r.threads)].map(String),
      { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${binary}: ${run.error?.message ?? run.stderr}`);
    for (const line of run.stdout.trim().split('\n')) {
      const { kernel, threads, ns, checksum } = JSON.parse(line);
      (results[mine.find((r) => r.threads === threads).id] ??= {})[kernel] = { ns, checksum };
    }
  }
  return results;
}

/** The fastest of two native runs for each row and kernel. */
function fastestOf(a, b) {
  const out = {};
  for (const id of Object.keys(a)) {
    out[id] = {};
    for (const k of Object.keys(a[id])) out[id][k] = a[id][k].ns <= b[id][k].ns ? a[id][k] : b[id][k];
  }
  return out;
}

let chromiumVersion = null;

async function runChromium(rows) {
  const { launchChromium, runPage } = await import('../tests/browser/harness.mjs');
  const { serveIsolated } = await import('./chromium.mjs');
  const server = await serveIsolated(); // threads need a cross-origin isolated page
  const browser = await launchChromium();
  try {
    const query = `rows=${encodeURIComponent(JSON.stringify(rows))}${quick ? '&quick' : ''}`;
    const r = await runPage(browser.context, server.url(`bench/c_speed.html?${query}`), { timeout: 600000 });
    if (r.error) throw new Error(`bench/c_speed.html failed: ${r.error}\n${r.logs.join('\n')}`);
    if (!r.crossOriginIsolated) throw new Error('bench/c_speed.html: the page is not cross-origin isolated');
    chromiumVersion = /Chrome\/([\d.]+)/.exec(r.userAgent)?.[1];
    return r.rows;
  } finally {
    await browser.close();
    await server.close();
  }
}

/**
 * Every row's { matmul: { ns, checksum }, sum: ... } by id: native before
 * and after the wasm rows (its fastest kept), the wasm rows in Node, then
 * in one Chromium page.
 */
async function measure() {
  const nativeBefore = runNative();
  const measured = new Map();
  const wasmRows = (engine, where) => ROWS.filter((r) => r.engine === engine).map((row) => {
    const { file, linked } = BUILDS[row.build];
    return linked ? { id: row.id, module: null, tasks: row.tasks, load: { ...row.load, wasm: where(file) } }
      : { id: row.id, module: where(file), tasks: row.tasks, load: row.load ?? {} };
  });
  const { load } = await import('../js/index.js');
  for (const r of await runWasmRows(load, wasmRows('node', (file) => join(out, file)), { quick })) {
    measured.set(r.id, r);
  }
  const inPage = wasmRows('chromium', (file) => `../build/bench/${file}`);
  if (inPage.length > 0) for (const r of await runChromium(inPage)) measured.set(r.id, r);
  for (const [id, kernels] of Object.entries(fastestOf(nativeBefore, runNative()))) measured.set(id, kernels);
  return measured;
}

/** The machine and the tools, for the head of the output. */
function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const widest = [['avx512f', 'AVX-512'], ['avx2', 'AVX2'], ['sse4_2', 'SSE4.2']]
    .find(([flag]) => new RegExp(`\\b${flag}\\b`).test(cpuinfo))?.[1];
  const load = existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') : '?';
  const gcc = execFileSync('gcc', ['-dumpfullversion']).toString().trim();
  return `${cpus()[0].model}${widest ? ` (${widest})` : ''}, ${cpus().length} cores, load average ${load}; ` +
    `Node ${process.version}${chromiumVersion ? `, Chromium ${chromiumVersion}` : ''}, gcc ${gcc}`;
}

function printTables(measured) {
  const fmt = (x, digits) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  for (const [kernel, { title, unit, work }] of Object.entries(KERNELS)) {
    const base = measured.get('native-1')[kernel];
    console.log(`\n${title}\n`);
    console.log(`| row | ns | ${unit} | vs native 1 thread | checksum |`);
    console.log('|---|---:|---:|---:|---|');
    for (const row of ROWS) {
      const { ns, checksum } = measured.get(row.id)[kernel];
      const relative = ((checksum - base.checksum) / base.checksum).toExponential(1);
      const same = checksum === base.checksum ? 'same as native'
        : `${checksum} (native ${base.checksum}, relative ${relative})`;
      const rate = fmt(work / (ns / 1e9), 1);
      console.log(`| ${row.label} | ${fmt(ns, 0)} | ${rate} | ${(base.ns / ns).toFixed(2)}x | ${same} |`);
    }
  }
}

/**
 * The threaded rows as ratios of speed (time of the other row / time of
 * this one), against the goals of issue 33: two threads >= 1.8x one thread
 * (on the same threaded build) and >= 0.7x native on two threads.
 */
function printThreadRatios(measured) {
  const engines = [...new Set(ROWS.filter((r) => r.build === 'threads').map((r) => r.engine))];
  if (engines.length === 0) return;
  const has = (id) => measured.has(id);
  console.log('\nthreads: speed of wasm SIMD on 2 threads (threaded runtime) against other rows\n');
  console.log('| kernel | engine | vs 1 task, same build (goal >= 1.8x) | vs wasm SIMD module, 1 thread | ' +
    'vs native 1 thread | vs native 2 threads (goal >= 0.7x) | vs native 4 lanes, 2 threads | ' +
    '1 task: threaded build vs SIMD module | native: 2 threads vs 1 (what the machine gave two threads) |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const kernel of Object.keys(KERNELS)) {
    for (const engine of engines) {
      const ns = (id) => measured.get(id)[kernel].ns;
      const two = ns(`${engine}-mt-2`);
      const vs = (id) => (has(id) ? `${(ns(id) / two).toFixed(2)}x` : '-');
      const oneTask = `${(ns(`${engine}-simd`) / ns(`${engine}-mt-1`)).toFixed(2)}x`;
      console.log(`| ${kernel} | ${engine} | ${vs(`${engine}-mt-1`)} | ${vs(`${engine}-simd`)} | ${vs('native-1')} | ` +
        `${vs('native-2')} | ${vs('native-sse-2')} | ${oneTask} | ${(ns('native-1') / ns('native-2')).toFixed(2)}x |`);
    }
  }
}

build();
const measured = await measure();
console.log(`bench/c_speed.mjs ${new Date().toISOString()}${quick ? ' (quick)' : ''}`);
console.log(machine());
printTables(measured);
printThreadRatios(measured);
