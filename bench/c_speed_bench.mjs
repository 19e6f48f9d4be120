// The wasm rows of bench/c_speed.mjs, shared by Node and the page
// (bench/c_speed.html): each row loads a build of bench/kernels/ as a
// module into a runtime, runs the float32 matmul (n = 1024) and the sum
// over 16 Mi floats on the same inputs, and keeps the fastest run of each.
// A row is { id, module, tasks, load: options for load() }: `module` is the
// URL or path of a module to load, or null when the kernels are linked into
// the runtime (`load.wasm`, a `webffi build` without --module) and served by
// ffi.SystemLib(); `tasks` is the number of tasks a kernel is split into
// (the threads a parallel-for may run them on).

export const MATMUL_N = 1024;
export const SUM_N = 16 * 1024 * 1024;
export const SUM_BLOCK = 65536; // C_SPEED_SUM_BLOCK in bench/kernels/c_speed.h

/** Timed samples per row and kernel after one warm-up; quick: a smoke run. */
export const repeats = (quick) => (quick ? { matmul: 1, sum: 2 } : { matmul: 5, sum: 15 });
/**
 * Runs per sample: a sum takes about 2 ms, and a page's clock ticks in
 * 0.1 ms unless it is cross-origin isolated (native times the same batches).
 */
export const BATCH = { matmul: 1, sum: 8 };

/** The fastest of `reps` samples of `batch` runs of fn() after one untimed run, in ns per run. */
function fastest(fn, reps, batch) {
  fn();
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) fn();
    best = Math.min(best, ((performance.now() - start) * 1e6) / batch);
  }
  return best;
}

/** The inputs and outputs of both kernels in one runtime, filled by `fill` (the same bits in every build). */
function buffers(rt, fill) {
  const n2 = MATMUL_N * MATMUL_N;
  const t = {
    a: rt.empty([n2], 'float32'), b: rt.empty([n2], 'float32'), c: rt.empty([n2], 'float32'),
    x: rt.empty([SUM_N], 'float32'), sums: rt.empty([Math.ceil(SUM_N / SUM_BLOCK)], 'float32'),
  };
  fill(t.a, 1);
  fill(t.b, 2);
  fill(t.x, 3);
  return t;
}

/**
 * Runs each row; `load` is webffi's load(). Returns the rows with
 * { matmul: { ns, checksum }, sum: { ns, checksum } } added.
 */
export async function runWasmRows(load, rows, { quick = false } = {}) {
  const reps = repeats(quick);
  const runtimes = new Map(); // one runtime and one set of buffers per load options
  const out = [];
  for (const row of rows) {
    const key = JSON.stringify(row.load ?? {});
    if (!runtimes.has(key)) runtimes.set(key, { rt: await load(row.load ?? {}), t: null });
    const entry = runtimes.get(key);
    const mod = row.module ? await entry.rt.loadModule(row.module) : entry.rt.getGlobal('ffi.SystemLib')();
    const [fill, checksum, matmul, sum] = ['fill', 'checksum', 'matmul', 'sum'].map((f) => mod.getFunction(f));
    entry.t ??= buffers(entry.rt, fill);
    const { a, b, c, x, sums } = entry.t;
    const tasks = row.tasks ?? 1;
    const matmulNs = fastest(() => matmul(a, b, c, tasks), reps.matmul, BATCH.matmul);
    let total = 0;
    const sumNs = fastest(() => { total = sum(x, sums, tasks); }, reps.sum, BATCH.sum);
    out.push({ ...row, matmul: { ns: matmulNs, checksum: checksum(c) }, sum: { ns: sumNs, checksum: total } });
    for (const f of [fill, checksum, matmul, sum]) f.dispose();
    if (!row.module) mod.dispose();
  }
  for (const { t } of runtimes.values()) for (const tensor of Object.values(t ?? {})) tensor.dispose();
  return out;
}
