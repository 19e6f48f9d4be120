// Paired measurement shared by the benchmarks that compare webffi with a
// baseline in the same run (workers, RPC, WebGPU, kernel chains).

/** The median of a list of numbers. */
export function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The f-quantile (0..1) of a list of numbers, nearest rank below. */
export function quantile(xs, f) {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(f * (s.length - 1))];
}

/**
 * Runs `rounds` paired rounds after one warm-up round; `round(swap)` times the
 * baseline and ours in one round, the first one first unless `swap` (which
 * alternates, so neither always runs on the other's leftovers: garbage, a
 * worker just woken). Each round gives one ratio, so a slow stretch of the
 * machine hits both sides of the ratio it spoils; the medians are reported.
 * @returns {Promise<[number, number, number]>} median time of the baseline, of ours, median of baseline/ours
 */
export async function paired(round, rounds) {
  const base = [];
  const ours = [];
  const ratios = [];
  for (let i = 0; i <= rounds; i++) {
    const [a, b] = await round(i % 2 === 1);
    if (i > 0) {
      base.push(a);
      ours.push(b);
      ratios.push(a / b);
    }
  }
  if (globalThis.process?.env?.BENCH_DEBUG) console.error(base.map((x, i) => `${x.toFixed(0)}/${ours[i].toFixed(0)}`).join(' '));
  return [median(base), median(ours), median(ratios)];
}

/** [await time(a), await time(b)], b timed first when swap. */
export async function timeBoth(swap, time, a, b) {
  if (swap) {
    const tb = await time(b);
    return [await time(a), tb];
  }
  const ta = await time(a);
  return [ta, await time(b)];
}

/**
 * The client of a hand-written request/reply protocol over a worker (the
 * baseline of the worker rows): raw(m, transfer) posts m with a fresh id and
 * settles with the reply carrying that id (rejects on its `error`).
 */
export function rawRequests(worker) {
  let lastId = 0;
  return (m, transfer) => new Promise((resolve, reject) => {
    const id = ++lastId;
    const on = (r) => {
      if (r?.id !== id) return;
      worker.off('message', on);
      if (r.error) reject(new Error(r.error));
      else resolve(r);
    };
    worker.on('message', on);
    worker.postMessage({ ...m, id }, transfer);
  });
}
