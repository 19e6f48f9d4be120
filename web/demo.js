// The demo page (web/index.html): one matrix product computed five ways,
// in plain JS (the reference), in C compiled to wasm on the main thread, in
// the same C on all threads (the threaded runtime, web/threads.mjs: only
// on a cross-origin isolated page), on WebGPU in a worker (remote GPU
// tensors: webffi.connectRuntime), and in C in the same worker, with the
// timings drawn as a chart; then errors raised in C shown with their C and
// JS frames.
//
// A classic script using the one global `webffi` of dist/webffi.iife.js
// (threads: webffi as an ES module, imported by web/threads.mjs). Served
// over http (browsers cannot fetch wasm from file://): `node
// scripts/serve.mjs` in the repository root, then open /web/. Threads need
// the page served with Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp, which that server sends; any
// other static server runs the rest and the page says why threads are off.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  };

  const ENGINES = [
    { id: 'js', label: 'JavaScript' },
    { id: 'c', label: 'C in wasm' },
    { id: 'threads', label: 'C on all threads' },
    { id: 'webgpu', label: 'WebGPU in the worker' },
    { id: 'worker', label: 'C in a worker' },
  ];

  // What the tests (and a curious reader's console) can look at.
  const demo = { state: 'loading', runs: [], last: null, errors: {}, webgpu: null, kernel: null, threads: null };
  window.webffiDemo = demo;

  let rt = null;
  let matmulC = null; // the C kernel, a function of the loaded module
  let remote = null; // the worker's runtime (webffi.connectRuntime)
  let session = null; // ... and its session
  let gpuReady = false;
  let threaded = null; // the threaded runtime and its kernels (web/threads.mjs)

  // ------------------------------------------------------------ status
  function setChip(id, state, text) {
    const chip = $(id);
    chip.dataset.state = state;
    chip.querySelector('.value').textContent = text;
  }

  function notice(text, kind = 'info') {
    const box = el('p', { class: `notice ${kind}` });
    box.textContent = text;
    $('notices').append(box);
    return box;
  }

  // ------------------------------------------------ inputs and reference
  /** Deterministic values in [-1, 1) from a 32-bit seed (mulberry32). */
  function randomMatrix(n, seed) {
    const out = new Float32Array(n * n);
    let s = seed >>> 0;
    for (let i = 0; i < out.length; i++) {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
    }
    return out;
  }

  function matmulJS(a, b, n) {
    const c = new Float32Array(n * n);
    const row = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      row.fill(0);
      for (let p = 0; p < n; p++) {
        const s = a[i * n + p];
        const off = p * n;
        for (let j = 0; j < n; j++) row[j] += s * b[off + j];
      }
      c.set(row, i * n);
    }
    return c;
  }

  function maxAbsDiff(x, y) {
    if (x.length !== y.length) return Infinity;
    let m = 0;
    for (let i = 0; i < x.length; i++) {
      const d = Math.abs(x[i] - y[i]);
      if (!(d <= m)) m = d; // NaN counts as a mismatch
    }
    return m;
  }

  // float32 sums of n products of values in [-1, 1): the error grows with n.
  const tolerance = (n) => 1e-5 * n;

  // --------------------------------------- main-thread responsiveness
  // The longest gap between animation frames while an engine runs: what a
  // person sees as the page freezing.
  const stall = { since: 0, last: 0, worst: 0, on: false };
  function frame(t) {
    if (stall.on) {
      stall.worst = Math.max(stall.worst, t - stall.last);
      stall.last = t;
    }
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
  // A hidden tab gets no frames: do not wait for one longer than 100 ms.
  const nextFrame = () => new Promise((r) => {
    requestAnimationFrame(() => r());
    setTimeout(r, 100);
  });
  async function measured(fn) {
    await nextFrame();
    stall.on = true;
    stall.worst = 0;
    stall.last = performance.now();
    try {
      const result = await fn();
      await nextFrame();
      return { ...result, stall: stall.worst };
    } finally {
      stall.on = false;
    }
  }

  // ------------------------------------------------------------ engines
  // Best of a few: the first calls also pay for compilation tiers and for
  // growing memory. Plain JS at 1024 takes seconds, so it runs once there.
  const repsFor = (n, engine) => (n <= 128 ? 5 : n <= 256 ? 3 : engine === 'js' && n > 512 ? 1 : 2);

  async function runJS(a, b, n) {
    let best = Infinity;
    let c;
    for (let r = 0; r < repsFor(n, 'js'); r++) {
      const t0 = performance.now();
      c = matmulJS(a, b, n);
      best = Math.min(best, performance.now() - t0);
    }
    return { ms: best, out: c };
  }

  async function runC(ta, tb, n) {
    let best = Infinity;
    let out;
    for (let r = 0; r < repsFor(n); r++) {
      const t0 = performance.now();
      const c = matmulC(ta, tb);
      best = Math.min(best, performance.now() - t0);
      out = c.toTypedArray();
      c.dispose();
    }
    return { ms: best, out };
  }

  // The threaded runtime holds its own copies of A and B; the same kernel
  // runs on every thread (num_task 0) and on one (num_task 1), timed alike.
  async function runThreads(a, b, n) {
    const { rt: trt, matmul, matmulTasks, threads } = threaded;
    const ta = trt.tensor(a, { shape: [n, n] });
    const tb = trt.tensor(b, { shape: [n, n] });
    try {
      const best = (fn) => {
        let ms = Infinity;
        let out;
        for (let r = 0; r < repsFor(n); r++) {
          const t0 = performance.now();
          const c = fn();
          ms = Math.min(ms, performance.now() - t0);
          out = c.toTypedArray();
          c.dispose();
        }
        return { ms, out };
      };
      const one = best(() => matmulTasks(ta, tb, 1));
      const all = best(() => matmul(ta, tb));
      const sameBits = one.out.length === all.out.length && all.out.every((v, i) => Object.is(v, one.out[i]));
      const speedup = all.ms > 0 ? one.ms / all.ms : null;
      return {
        ms: all.ms,
        out: all.out,
        threads: { threads, oneMs: one.ms, speedup, sameBits },
        note: [`${threads} threads`, `1 thread ${fmtMs(one.ms)} ms`, speedup ? `speedup ${speedup.toFixed(2)}×` : null,
          sameBits ? 'the same bits as on 1 thread' : 'bits differ from 1 thread'].filter(Boolean).join(' · '),
      };
    } finally {
      ta.dispose();
      tb.dispose();
    }
  }

  // The GPU work runs in the worker: A and B are uploaded there once, the
  // product stays there as a remote tensor until its data is fetched.
  async function runWebGPU(a, b, n) {
    const t0 = performance.now();
    const [ga, gb] = await Promise.all([
      remote.tensor(a, { shape: [n, n], device: 'webgpu' }),
      remote.tensor(b, { shape: [n, n], device: 'webgpu' }),
    ]);
    const upload = performance.now() - t0;
    const mm = remote.getGlobal('webgpu.matmul', { timeout: 120000 });
    try {
      // One untimed call: the first use of a size compiles and caches work.
      const warm = await mm(ga, gb);
      await warm.data();
      warm.dispose();
      let best = Infinity;
      let out;
      for (let r = 0; r < repsFor(n); r++) {
        const t1 = performance.now();
        const c = await mm(ga, gb); // a RemoteTensor on webgpu:0, in the worker
        out = await c.data();
        best = Math.min(best, performance.now() - t1);
        c.dispose();
      }
      const emulated = /swiftshader|llvmpipe|lavapipe/i.test(demo.webgpu?.adapter ?? '')
        ? 'a CPU emulation of a GPU here' : null;
      return { ms: best, out, note: [`upload ${fmtMs(upload)} ms`, emulated].filter(Boolean).join(' · ') };
    } finally {
      ga.dispose();
      gb.dispose();
    }
  }

  async function runWorker(ta, tb, n) {
    let best = { ms: Infinity };
    for (let r = 0; r < repsFor(n); r++) {
      const t0 = performance.now();
      const [c, kernelMs] = await session.call('demo.matmul_timed', [ta, tb], { timeout: 120000 });
      const ms = performance.now() - t0;
      // Without a runtime on this side, a tensor arrives as { shape, dtype, data }.
      if (ms < best.ms) best = { ms, out: c.data, note: `kernel ${fmtMs(kernelMs)} ms in the worker` };
    }
    return best;
  }

  // ------------------------------------------------------------- a run
  let running = false;
  async function run(n) {
    if (running) return;
    running = true;
    $('run').disabled = true;
    const seed = 1 + demo.runs.length;
    const a = randomMatrix(n, seed);
    const b = randomMatrix(n, seed * 7919);
    const record = { n, seed, results: {} };
    demo.last = { n, a, b, outputs: {} };
    resetCards(n);
    const ta = rt.tensor(a, { shape: [n, n] });
    const tb = rt.tensor(b, { shape: [n, n] });
    try {
      const engines = {
        js: () => runJS(a, b, n),
        c: matmulC ? () => runC(ta, tb, n) : null,
        threads: threaded ? () => runThreads(a, b, n) : null,
        webgpu: gpuReady ? () => runWebGPU(a, b, n) : null,
        worker: matmulC && session ? () => runWorker(ta, tb, n) : null,
      };
      let reference = null;
      for (const { id, label } of ENGINES) {
        const go = engines[id];
        $('status').textContent = `Running ${label}…`;
        if (!go) {
          showResult(id, { skipped: skipReason(id) });
          record.results[id] = { skipped: true };
          continue;
        }
        showResult(id, { pending: true });
        let r;
        try {
          r = await measured(go);
        } catch (e) {
          showResult(id, { error: e });
          record.results[id] = { error: String(e) };
          continue;
        }
        demo.last.outputs[id] = r.out;
        if (id === 'js') reference = r.out;
        const diff = maxAbsDiff(r.out, reference);
        const ok = diff <= tolerance(n);
        const res = { ms: r.ms, stall: r.stall, diff, ok, note: r.note, gflops: r.ms > 0 ? (2 * n ** 3) / (r.ms * 1e6) : null };
        if (r.threads) res.threads = r.threads;
        record.results[id] = res;
        showResult(id, res);
        drawChart(record);
      }
    } finally {
      ta.dispose();
      tb.dispose();
      running = false;
      $('run').disabled = false;
    }
    demo.runs.push(record);
    addHistory(record);
    $('status').textContent = 'Done. Pick another size and run again.';
    return record;
  }

  function skipReason(id) {
    if (id === 'webgpu') return 'WebGPU is not available here (see above).';
    if (id === 'threads') return 'Threads are off on this page (see above).';
    if (!matmulC) return 'The C kernel did not load (see above).';
    return 'The worker did not start (see above).';
  }

  // --------------------------------------------------------- rendering
  function resetCards(n) {
    $('run-title').textContent = `${n} × ${n} times ${n} × ${n}, float32 (${fmtFlops(2 * n ** 3)})`;
    for (const { id } of ENGINES) showResult(id, { waiting: true });
    drawChart({ n, results: {} });
  }

  const fmtMs = (ms) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));
  const fmtFlops = (f) => (f >= 1e9 ? `${(f / 1e9).toFixed(2)} GFLOP` : `${(f / 1e6).toFixed(1)} MFLOP`);

  function showResult(id, r) {
    const card = $(`card-${id}`);
    const time = card.querySelector('.time');
    const detail = card.querySelector('.detail');
    const check = card.querySelector('.check');
    card.dataset.state = r.waiting ? 'waiting' : r.pending ? 'running' : r.skipped ? 'skipped'
      : r.error ? 'error' : r.ok ? 'ok' : 'mismatch';
    check.textContent = '';
    if (r.waiting || r.pending) {
      time.textContent = r.pending ? 'running…' : '–';
      detail.textContent = '';
      return;
    }
    if (r.skipped) {
      time.textContent = 'skipped';
      detail.textContent = r.skipped;
      return;
    }
    if (r.error) {
      time.textContent = 'failed';
      detail.textContent = `${r.error.name ?? 'Error'}: ${r.error.message ?? r.error}`;
      return;
    }
    time.textContent = `${fmtMs(r.ms)} ms`;
    detail.textContent = [r.gflops === null ? 'faster than the timer resolves' : `${r.gflops.toFixed(2)} GFLOP/s`, r.note,
      `main thread stalled up to ${fmtMs(r.stall)} ms`].filter(Boolean).join(' · ');
    check.textContent = id === 'js' ? 'reference'
      : r.ok ? `matches JS (max |Δ| ${r.diff.toExponential(1)})`
        : `differs from JS: max |Δ| ${r.diff.toExponential(1)}`;
  }

  // A hand-drawn horizontal bar chart, one bar per engine, sized to its box
  // so the text keeps its size on a phone.
  const COLORS = { js: '#c08a1e', c: '#2f6fd6', threads: '#c2477a', webgpu: '#16a37f', worker: '#8a4fd8' };
  let lastChart = null;
  function drawChart(record) {
    lastChart = record;
    const box = $('chart');
    const width = Math.max(240, box.clientWidth);
    const rowH = 46;
    const height = ENGINES.length * rowH + 8;
    const times = ENGINES.map(({ id }) => record.results[id]?.ms).filter((t) => t > 0);
    const max = Math.max(1e-3, ...times);
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'time per engine, in milliseconds (shorter is faster)');
    const add = (tag, attrs, text) => {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (text != null) e.textContent = text;
      svg.append(e);
      return e;
    };
    const barMax = width - 86; // room for the value on the right
    ENGINES.forEach(({ id, label }, i) => {
      const y = i * rowH + 4;
      if (id === 'threads' && threaded) label = `C on ${threaded.threads} threads`;
      const r = record.results[id];
      add('text', { x: 0, y: y + 13, class: 'chart-label' }, label);
      add('rect', { x: 0, y: y + 20, width: barMax, height: 16, rx: 3, class: 'chart-track' });
      if (typeof r?.ms === 'number') { // 0 ms: faster than the timer resolves, still a (minimal) bar
        const w = Math.max(2, (r.ms / max) * barMax);
        add('rect', { x: 0, y: y + 20, width: w, height: 16, rx: 3, fill: COLORS[id], 'data-engine': id });
        add('text', { x: w + 6, y: y + 33, class: 'chart-value' }, `${fmtMs(r.ms)} ms`);
      } else {
        const why = r?.skipped ? 'skipped' : r?.error ? 'failed' : '';
        if (why) add('text', { x: 6, y: y + 33, class: 'chart-value muted' }, why);
      }
    });
    box.replaceChildren(svg);
  }
  new ResizeObserver(() => lastChart && drawChart(lastChart)).observe($('chart'));

  function addHistory(record) {
    const tbody = $('history').querySelector('tbody');
    const cell = (id) => {
      const r = record.results[id];
      return el('td', {}, r?.ms > 0 ? fmtMs(r.ms) : r?.error ? 'failed' : '–');
    };
    tbody.prepend(el('tr', {}, el('th', { scope: 'row' }, String(record.n)), ...ENGINES.map(({ id }) => cell(id))));
    $('history').hidden = false;
  }

  // ------------------------------------------------------------- errors
  /** Whether a frame's file is C code: a wasm location, or a C or C++ source (modules built with -g). */
  const isC = (where) => /^wasm:\/\//.test(where) || /wasm-function\[/.test(where) || /\.(c|cc|cpp|cxx|h|hpp)(:\d+)*$/.test(where);

  /** Frames of an FFI backtrace (`File "WHERE", line N, in NAME`; `line unknown` without a line table), innermost first. */
  function parseBacktrace(text) {
    const frames = [];
    for (const line of String(text ?? '').split('\n')) {
      const m = /^\s*File "(.*)", line (\d+|unknown), in (.*)$/.exec(line);
      if (!m) continue;
      let where = m[1];
      const remote = where.startsWith('[remote] ');
      if (remote) where = where.slice('[remote] '.length);
      const caller = where.startsWith('[caller] '); // the await on this side, for a worker's error
      if (caller) where = where.slice('[caller] '.length);
      const lang = isC(where) ? 'C' : 'JS';
      const inlined = m[3].endsWith(' [inlined]'); // a helper the compiler inlined, a frame of its own
      const name = inlined ? m[3].slice(0, -' [inlined]'.length) : m[3];
      frames.push({ lang, name, where: m[2] === 'unknown' ? where : `${where}:${m[2]}`, remote, caller, inlined });
    }
    return frames;
  }

  /** The JS callers from a V8 stack, leaving out wasm frames and webffi's own. */
  function parseStack(stack) {
    const frames = [];
    for (const line of String(stack ?? '').split('\n')) {
      const m = /^\s*at (?:(.*?) \()?(.*?)\)?$/.exec(line);
      if (!m || !line.trim().startsWith('at ')) continue;
      const where = m[2];
      if (isC(where)) continue; // C frames: the backtrace has them
      const internal = /webffi\.iife\.js/.test(where);
      // (V8 marks the frames an await led through `async`: the same functions)
      frames.push({ lang: 'JS', name: (m[1] ?? '(anonymous)').replace(/^async /, ''), where, internal });
    }
    return frames;
  }

  function shortWhere(where) {
    try {
      const u = new URL(where.replace(/:\d+(:\d+)?$/, ''));
      if (u.protocol === 'wasm:') return where;
      const tail = where.slice(where.replace(/:\d+(:\d+)?$/, '').length);
      return `${u.pathname.split('/').slice(-2).join('/')}${tail}`;
    } catch {
      return where;
    }
  }

  function renderError(slot, e, { title, code, extra = [] }) {
    const c = $(slot);
    const frames = [...parseBacktrace(e.backtrace)];
    const seen = new Set(frames.filter((f) => f.lang === 'JS').map((f) => f.name));
    for (const f of parseStack(e.stack)) if (!f.internal && !seen.has(f.name)) frames.push({ ...f, caller: true });
    const list = el('ol', { class: 'frames' });
    for (const f of frames) {
      list.append(el('li', { class: `frame ${f.lang === 'C' ? 'c' : 'js'}`, dataset: { lang: f.lang } },
        el('span', { class: 'badge' }, f.remote ? `${f.lang} · worker` : f.lang),
        el('code', { class: 'fn' }, f.name),
        el('span', { class: 'src' }, f.caller ? 'e.stack' : 'e.backtrace'),
        el('span', { class: 'where' }, shortWhere(f.where))));
    }
    c.replaceChildren(
      el('h3', {}, title),
      el('pre', { class: 'code' }, code),
      el('p', { class: 'err-head' }, el('strong', {}, e.name), `: ${e.message}`),
      el('p', { class: 'facts' }, ...extra.map((x) => el('span', { class: 'fact' }, x))),
      el('p', { class: 'frames-title' }, 'Frames, innermost first:'),
      list,
      el('details', {}, el('summary', {}, 'e.stack, as text'), el('pre', { class: 'trace' }, e.stack ?? String(e))));
    return frames;
  }

  async function showErrors() {
    if (matmulC) {
      const a = rt.tensor(new Float32Array(12), { shape: [3, 4] });
      const b = rt.tensor(new Float32Array(10), { shape: [5, 2] });
      try {
        (function multiplyMismatched() {
          matmulC(a, b);
        })();
      } catch (e) {
        demo.errors.shape = renderError('error-c', e, {
          title: 'C rejects a 3×4 by 5×2 product',
          code: 'matmul(rt.tensor(x, { shape: [3, 4] }), rt.tensor(y, { shape: [5, 2] }))',
          extra: [`e.kind = ${e.kind}`, `instanceof webffi.ValueError: ${e instanceof webffi.ValueError}`,
            `instanceof webffi.FFIError: ${e instanceof webffi.FFIError}`],
        });
      } finally {
        a.dispose();
        b.dispose();
      }
    } else {
      $('error-c').replaceChildren(el('p', { class: 'notice warn' }, 'The C kernel did not load, so it cannot raise its error here.'));
    }

    let thrown = null;
    try {
      rt.getGlobal('testing.apply')(function checkRow() {
        thrown = new RangeError('row 3 has a NaN');
        throw thrown;
      }, 3);
    } catch (e) {
      demo.errors.callback = renderError('error-js', e, {
        title: 'A JS callback throws inside a C call',
        code: "rt.getGlobal('testing.apply')(function checkRow() { throw new RangeError('row 3 has a NaN'); }, 3)",
        extra: [`the very same object came back: ${e === thrown}`, `instanceof RangeError: ${e instanceof RangeError}`],
      });
    }

    if (session && matmulC) {
      const a = rt.tensor(new Float32Array(6), { shape: [2, 3] });
      try {
        await session.call('demo.matmul', [a, a], { timeout: 60000 });
      } catch (e) {
        demo.errors.worker = renderError('error-worker', e, {
          title: 'The same C check, raised in the worker',
          code: "await session.call('demo.matmul', [t2x3, t2x3])",
          extra: [`instanceof webffi.ValueError: ${e instanceof webffi.ValueError}`],
        });
      } finally {
        a.dispose();
      }
    }
  }

  // -------------------------------------------------------------- start
  async function startWebGPU() {
    try {
      if (!remote) throw new Error('WebGPU runs in the worker, which did not start');
      const name = await session.call('demo.webgpu', [], { timeout: 60000 });
      gpuReady = true;
      demo.webgpu = { available: true, adapter: name };
      setChip('chip-webgpu', 'ok', name);
    } catch (e) {
      demo.webgpu = { available: false, reason: e.message };
      setChip('chip-webgpu', 'off', 'unavailable');
      const box = notice('', 'warn');
      box.id = 'webgpu-missing';
      box.append(el('strong', {}, 'No WebGPU in this browser, '),
        'so the WebGPU row is skipped; JavaScript, C and the worker still run. ' +
        'WebGPU needs a browser that has it turned on and a GPU adapter it can use. The runtime said: ',
        el('code', {}, e.message));
    }
  }

  async function startKernel() {
    try {
      const mod = await rt.loadModule('dist/matmul.wasm');
      matmulC = mod.getFunction('matmul');
      demo.kernel = { loaded: true };
      setChip('chip-kernel', 'ok', 'web/dist/matmul.wasm');
    } catch (e) {
      demo.kernel = { loaded: false, reason: e.message };
      setChip('chip-kernel', 'off', 'not loaded');
      notice(`The C kernel web/dist/matmul.wasm did not load (${e.message}). Build it with ` +
        '`node web/build_kernels.mjs` (npm run demo does too), then reload.', 'warn');
    }
  }

  // What load({ threads }) gets: every core the browser reports (at least
  // two, at most 16), or ?threads=N.
  const threadsWanted = () => {
    const asked = Number(new URLSearchParams(location.search).get('threads'));
    if (Number.isInteger(asked) && asked >= 2 && asked <= 64) return asked;
    return Math.max(2, Math.min(16, navigator.hardwareConcurrency || 2));
  };

  async function startThreads() {
    const want = threadsWanted();
    try {
      // an ES module on demand: threads need webffi as a module (see web/threads.mjs)
      const { startThreads: start } = await import('./threads.mjs');
      threaded = await start({ threads: want, logger: { log: console.log, warn: console.warn } });
      demo.threads = { available: true, threads: threaded.threads, isolated: globalThis.crossOriginIsolated === true };
      setChip('chip-threads', 'ok', `${threaded.threads} threads`);
      $('card-threads').querySelector('.where').textContent =
        `${threaded.threads} threads: this one and ${threaded.threads - 1} Worker${threaded.threads > 2 ? 's' : ''}, ` +
        'against itself on 1';
    } catch (e) {
      threaded = null;
      const isolated = globalThis.crossOriginIsolated === true;
      demo.threads = { available: false, isolated, reason: e.message };
      setChip('chip-threads', 'off', isolated ? 'failed' : 'one thread: not isolated');
      const box = notice('', 'warn');
      box.id = 'threads-missing';
      if (!isolated) {
        box.append(el('strong', {}, 'Threads are off: this page is not cross-origin isolated, '),
          'so the "C on all threads" row is skipped and everything else runs on one thread each. Threads need ' +
          'SharedArrayBuffer, which a browser gives a page only when it is served with the headers ',
          el('code', {}, 'Cross-Origin-Opener-Policy: same-origin'), ' and ',
          el('code', {}, 'Cross-Origin-Embedder-Policy: require-corp'), '. ',
          el('code', {}, 'node scripts/serve.mjs'), ' in the repository serves the demo with both. The runtime said: ',
          el('code', {}, e.message));
      } else {
        box.append(el('strong', {}, 'The threaded runtime did not load, '),
          'so the "C on all threads" row is skipped. Build its kernel with ', el('code', {}, 'node web/build_kernels.mjs'),
          ', then reload. The runtime said: ', el('code', {}, e.message));
      }
    }
  }

  async function startWorker() {
    try {
      remote = await webffi.connectRuntime(new Worker('worker.js'), { timeout: 30000 });
      session = remote.session;
      setChip('chip-worker', 'ok', 'connected');
    } catch (e) {
      remote = null;
      session = null;
      setChip('chip-worker', 'off', 'failed');
      notice(`The worker did not start: ${e.message}`, 'warn');
    }
  }

  async function main() {
    if (location.protocol === 'file:') {
      throw new Error('browsers cannot fetch wasm from file://: serve the repository over http ' +
        '(node scripts/serve.mjs in its root) and open http://127.0.0.1:8000/web/');
    }
    if (typeof webffi === 'undefined') {
      throw new Error('../dist/webffi.iife.js did not load: build it with `npm run build`');
    }
    rt = await webffi.load();
    // testing.apply (the error panel) is one of the test fixtures, a module
    // of their own that the runtime does not carry
    await rt.loadModule('../dist/webffi_testing.wasm');
    setChip('chip-runtime', 'ok', `tvm-ffi ABI ${rt.metadata.tvm_ffi_version.join('.')}`);
    await Promise.all([startWorker().then(startWebGPU), startKernel(), startThreads()]);
    const params = new URLSearchParams(location.search);
    const select = $('size');
    if (params.has('n') && [...select.options].some((o) => o.value === params.get('n'))) select.value = params.get('n');
    $('run').addEventListener('click', () => run(Number(select.value)).catch(fail));
    await run(Number(select.value));
    await showErrors();
    demo.state = 'done';
    document.body.dataset.state = 'done';
  }

  function fail(e) {
    demo.state = 'failed';
    demo.failure = String(e?.stack ?? e);
    document.body.dataset.state = 'failed';
    const box = notice('', 'error');
    box.id = 'failure';
    box.append(el('strong', {}, 'The demo failed: '), el('code', {}, String(e?.stack ?? e)));
    $('status').textContent = 'Failed (see above).';
  }

  main().catch(fail);
})();
