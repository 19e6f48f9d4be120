// The wasm rows of bench/c_speed.mjs, shared by Node and the page
// (bench/c_speed.html): each row loads a build of bench/kernels/ into a
// runtime, runs the float32 matmul (n = 1024) and the sum over 16 Mi floats
// on the same inputs, and keeps the fastest run of each.
// A row is { id, module, tasks, load: options for load() }: `module` is the
// URL or path of a module to load, or null when the kernels are linked into
// the runtime (`load.wasm`, a `webffi build` without --module) and served by
// ffi.SystemLib(); `tasks` is the number of tasks a kernel is split into
// (the threads a parallel-for may run them on).

export const MATMUL_N = 1024;
export const SUM_N = 16 * 1024 * 1024;
export const SUM_BLOCK = 65536; // C_SPEED_SUM_BLOCK in bench/kernels/c_speed.h

/** Timed samples per row and kernel after one warm-up; quick: a smoke run. */
export const repeats = (quick) => (quick ? { matmul: 1, sum: 2 } : { matmul: 9, sum: 21 });
/**
 * Runs per sample: a sum takes about 2 ms, and a page's clock ticks in
 * 0.1 ms unless it is cross-origin isolated (native times the same batches).
 */
export const BATCH = { matmul: 1, sum: 8 };

/** ns per run of `batch` runs of fn(). */
function time(fn, batch) {
  const start = performance.now();
  for (let i = 0; i < batch; i++) fn();
  return ((performance.now() - start) * 1e6) / batch;
}

/** The inputs of both kernels in one runtime, filled by `fill` (the same bits in every build). */
function buffers(rt, fill) {
  const n2 = MATMUL_N * MATMUL_N;
  const t = {
    a: rt.empty([n2], 'float32'), b: rt.empty([n2], 'float32'),
    x: rt.empty([SUM_N], 'float32'), sums: rt.empty([Math.ceil(SUM_N / SUM_BLOCK)], 'float32'),
  };
  fill(t.a, 1);
  fill(t.b, 2);
  fill(t.x, 3);
  return t;
}

/**
 * Runs each row; `load` is webffi's load(). Returns the rows with
 * { matmul: { ns, checksum }, sum: { ns, checksum } } added: the fastest
 * of the samples after one untimed run. The samples are interleaved (each
 * round times every row once), so a slow stretch of a shared machine falls
 * on all rows rather than on the ones that ran then.
 */
export async function runWasmRows(load, rows, { quick = false } = {}) {
  const reps = repeats(quick);
  const runtimes = new Map(); // one runtime and one set of inputs per load options
  const set = [];
  for (const row of rows) {
    const key = JSON.stringify(row.load ?? {});
    if (!runtimes.has(key)) runtimes.set(key, { rt: await load(row.load ?? {}), t: null });
    const entry = runtimes.get(key);
    const mod = row.module ? await entry.rt.loadModule(row.module) : entry.rt.getGlobal('ffi.SystemLib')();
    const [fill, checksum, matmul, sum] = ['fill', 'checksum', 'matmul', 'sum'].map((f) => mod.getFunction(f));
    entry.t ??= buffers(entry.rt, fill);
    const { a, b, x, sums } = entry.t;
    const c = entry.rt.empty([MATMUL_N * MATMUL_N], 'float32'); // each row's own output
    const tasks = row.tasks ?? 1;
    set.push({
      row, mod, c, fill, checksum, total: 0, best: { matmul: Infinity, sum: Infinity },
      run: { matmul: () => matmul(a, b, c, tasks), sum: () => sum(x, sums, tasks) },
      dispose: () => {
        for (const f of [fill, checksum, matmul, sum]) f.dispose();
        c.dispose();
        if (!row.module) mod.dispose();
      },
    });
  }
  for (const kernel of ['matmul', 'sum']) {
    for (const r of set) r.total = r.run[kernel](); // warm-up
    for (let i = 0; i < reps[kernel]; i++) {
      for (const r of set) {
        r.best[kernel] = Math.min(r.best[kernel], time(() => { r.total = r.run[kernel](); }, BATCH[kernel]));
      }
    }
  }
  const out = set.map((r) => ({
    ...r.row, matmul: { ns: r.best.matmul, checksum: r.checksum(r.c) }, sum: { ns: r.best.sum, checksum: r.total },
  }));
  for (const r of set) r.dispose();
  for (const { t } of runtimes.values()) for (const tensor of Object.values(t ?? {})) tensor.dispose();
  return out;
}
