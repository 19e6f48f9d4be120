// Chained sessions in Chromium. (1) A page's module Worker as the middle
// hop: the page calls through its worker (serve(connectRPC(...), self)),
// which holds a TVM RPC session over the browser's WebSocket, through a
// TVM-style proxy, to a remote device: another tab (WebGPU on SwiftShader)
// or a Node device joined to the proxy over WebSocket. (2) A tab as the
// middle hop of TVM's own chaining: our client in Node (connectRPC with
// `chain`) -> proxy -> tab (forward) -> ws:// -> a Node device. Hostile
// and odd cases: the far device dying mid-call, the worker terminated, a
// forward the tab's owner did not allow. All pages come from the proxy's
// own web server (it refuses a WebSocket of another origin, as TVM's does).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { launchChromium } from './harness.mjs';
import { startProxy } from '../support/rpc_proxy.mjs';
import { load, connectRPC, joinRPCProxy, RPCError, ValueError, RPCTensor } from '../../js/index.js';

let browser;
let proxy;
let gpuTab;
const pageErrors = [];
before(async () => {
  browser = await launchChromium({ webgpu: true });
  proxy = await startProxy({ root: fileURLToPath(new URL('../../', import.meta.url)) });
  gpuTab = await devicePage('tab-gpu');
});
after(async () => {
  await gpuTab?.close();
  await proxy?.close();
  await browser?.close();
});

const until = async (cond, what, ms = 10000) => {
  const end = Date.now() + ms;
  while (!(await cond()) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(await cond(), what);
};

/** A tab serving as a device under `key` (forwarding to `forward` when given). */
async function devicePage(key, forward) {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const q = `proxy=${encodeURIComponent(proxy.wsUrl)}&key=${key}${forward ? `&forward=${encodeURIComponent(forward)}` : ''}`;
  await page.goto(proxy.webUrl(`tests/browser/pages/rpc_device.html?${q}`));
  await page.waitForFunction(() => window.__rpc?.ready || window.__rpc?.errors.length, null, { timeout: 120000 });
  assert.deepEqual(await page.evaluate(() => window.__rpc.errors), []);
  await until(() => proxy.waiting().includes(key), `${key} joined the proxy`);
  return page;
}

/** The page that reaches devices through its workers. */
async function hopPage() {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(proxy.webUrl('tests/browser/pages/rpc_hop.html'));
  await page.waitForFunction(() => window.__ready, null, { timeout: 60000 });
  return page;
}

/** A Node device joined to the proxy over WebSocket, with a global that drops its connection mid-call. */
async function nodeDevice(key) {
  const rt = await load({ logger: { log() {}, warn() {} } });
  let joined = null;
  rt.registerGlobal('demo.where', () => 'node device');
  rt.registerGlobal('demo.iota', (n) => rt.tensor(new Int32Array(n).map((_, i) => i * 10)));
  rt.registerGlobal('demo.sum', (t) => t.toTypedArray().reduce((a, b) => a + b, 0));
  rt.registerGlobal('demo.fail', (msg) => {
    throw new TypeError(msg);
  });
  rt.registerGlobal('demo.slow', (ms) => {
    const end = Date.now() + ms;
    while (Date.now() < end); // holds the call (and this process) so that it is in flight meanwhile
    return 'slow';
  });
  rt.registerGlobal('demo.die', () => {
    joined.close(); // the connection goes before this call is answered
    return 1;
  });
  joined = joinRPCProxy(rt, proxy.wsUrl, { key, WebSocket, expose: ['demo.*'], retryMs: 50 });
  await joined.ready;
  await until(() => proxy.waiting().includes(key), `${key} joined the proxy`);
  return joined;
}

test('page -> its worker -> proxy -> a tab with WebGPU: globals, errors, WebGPU and CPU tensors back to the page', async () => {
  const page = await hopPage();
  try {
    const r = await page.evaluate(async ({ ws }) => {
      const { connectRuntime, RemoteTensor, ValueError } = window.webffi;
      const out = {};
      const worker = window.hop(ws, 'tab-gpu');
      const remote = await connectRuntime(worker, { timeout: 60000 });
      out.describe = await remote.getGlobal('page.describe')(7);
      out.missing = await remote.getGlobal('testing.add_one')(1).catch((e) => [e instanceof ValueError, e.message]);
      out.fail = await remote.getGlobal('page.fail')('in the far tab').catch((e) => [e.kind, e.message, e instanceof window.webffi.FFIError]);
      const a = await remote.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3], device: 'webgpu' });
      const b = await remote.tensor(new Float32Array([1, 0, 0, 1, 1, 1]), { shape: [3, 2], device: 'webgpu' });
      const y = await remote.getGlobal('webgpu.matmul')(a, b);
      out.y = { remote: y instanceof RemoteTensor, device: y.device, shape: [...y.shape], dtype: y.dtype, data: [...await y.data()] };
      const big = new Float32Array(1 << 18).map((_, i) => i % 4093);
      const g = await remote.tensor(big, { device: 'webgpu' });
      const back = await g.data();
      out.big = back.length === big.length && back.every((x, i) => x === big[i]);
      const c = await remote.tensor(new Int16Array([-3, 4]));
      out.cpu = { device: c.device, data: [...await c.data()] };
      out.count = await remote.remoteCount();
      for (const t of [a, b, y, g, c]) t.dispose();
      out.after = await remote.remoteCount();
      remote.close();
      worker.terminate();
      return out;
    }, { ws: proxy.wsUrl });
    assert.equal(r.describe, 'chromium:7');
    assert.equal(r.missing[0], true);
    assert.match(r.missing[1], /Cannot find global function testing\.add_one/);
    assert.deepEqual(r.fail, ['RangeError', 'in the far tab', true]);
    assert.deepEqual(r.y, { remote: true, device: 'webgpu:0', shape: [2, 2], dtype: 'float32', data: [4, 5, 10, 11] });
    assert.equal(r.big, true);
    assert.deepEqual(r.cpu, { device: 'cpu:0', data: [-3, 4] });
    assert.equal(r.count, 5);
    assert.equal(r.after, 0);
    // the device tab served that one session and joined the proxy again
    await until(() => proxy.waiting().includes('tab-gpu'), 'the device tab joined again');
    assert.deepEqual(await gpuTab.evaluate(() => window.__rpc.errors), []);
  } finally {
    await page.close();
  }
});

test('page -> worker -> Node device: the device dying mid-call, then the worker terminated mid-call', async () => {
  const page = await hopPage();
  let joined = await nodeDevice('node-a');
  try {
    const r = await page.evaluate(async ({ ws }) => {
      const { connectRuntime, RPCError, RemoteTensor } = window.webffi;
      const out = {};
      const worker = window.hop(ws, 'node-a');
      const remote = await connectRuntime(worker, { timeout: 60000 });
      out.where = await remote.getGlobal('demo.where')();
      const t = await remote.getGlobal('demo.iota')(4);
      out.t = [t instanceof RemoteTensor, t.device, [...await t.data()]];
      out.sum = await remote.getGlobal('demo.sum')(t);
      out.sumArray = await remote.getGlobal('demo.sum')(new Int32Array([5, 6]));
      out.fail = await remote.getGlobal('demo.fail')('bad arg').catch((e) => [e.kind, e.message]);
      const what = (e) => [e instanceof RPCError, e.message];
      out.died = await remote.getGlobal('demo.die')().catch(what);
      out.later = await remote.getGlobal('demo.where')().catch(what);
      out.stale = await t.data().catch(what);
      out.workerAnswers = await remote.remoteCount(); // the worker itself goes on
      remote.close();
      worker.terminate();
      return out;
    }, { ws: proxy.wsUrl });
    assert.equal(r.where, 'node device');
    assert.deepEqual(r.t, [true, 'cpu:0', [0, 10, 20, 30]]);
    assert.equal(r.sum, 60);
    assert.equal(r.sumArray, 11);
    assert.deepEqual(r.fail, ['TypeError', 'bad arg']);
    for (const k of ['died', 'later', 'stale']) {
      assert.equal(r[k][0], true, k);
      assert.match(r[k][1], /the worker's TVM RPC session to the device has ended/, k);
    }
    assert.equal(r.workerAnswers, 1);

    joined = await nodeDevice('node-b');
    const before = joined.sessions;
    const t = await page.evaluate(async ({ ws }) => {
      const { connectRuntime, RPCError } = window.webffi;
      const worker = window.hop(ws, 'node-b');
      const remote = await connectRuntime(worker, { timeout: 60000 });
      const where = await remote.getGlobal('demo.where')();
      const pending = remote.getGlobal('demo.slow')(1500); // on the device while the worker goes
      await new Promise((r) => setTimeout(r, 300));
      worker.terminate(); // no event in a browser: the worker's Web Lock tells the page
      const what = (e) => [e instanceof RPCError, e.message];
      return { where, pending: await pending.then((v) => ['answered', v], what), later: await remote.getGlobal('demo.where')().catch(what) };
    }, { ws: proxy.wsUrl });
    assert.equal(t.where, 'node device');
    assert.equal(t.pending[0], true);
    assert.match(t.pending[1], /the worker was terminated or stopped serving \(1 call was pending\)/);
    assert.equal(t.later[0], true);
    assert.match(t.later[1], /the worker was terminated or stopped serving/);
    // the terminated worker's WebSocket went: the Node device ended that session and joined again
    await until(() => joined.sessions === before + 1 && proxy.waiting().includes('node-b'), 'the device served the next client');
    const s = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'node-b', { timeout: 30000 });
    assert.equal(await s.call('demo.where'), 'node device');
    await s.close();
  } finally {
    joined.close();
    await page.close();
  }
});

test('a tab as the middle hop: client -> proxy -> tab -> ws:// -> Node device (TVM\'s chaining)', async () => {
  const joined = await nodeDevice('node-far');
  const relayTab = await devicePage('tab-relay', proxy.wsUrl);
  try {
    const s = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'tab-relay', { timeout: 60000, chain: [{ target: proxy.wsUrl, key: 'node-far' }] });
    try {
      assert.equal(await s.call('demo.where'), 'node device');
      assert.equal(await s.lookupGlobal('page.describe'), null); // the far device's globals, not the tab's
      const t = await s.call('demo.iota', [3]);
      assert.ok(t instanceof RPCTensor);
      assert.deepEqual(await t.data(), new Int32Array([0, 10, 20]));
      const u = await s.tensor(new Float64Array(1 << 16).map((_, i) => i / 2));
      assert.equal((await u.data())[12345], 12345 / 2);
      await assert.rejects(s.call('demo.fail', ['two hops away']), (e) => e.kind === 'TypeError' && e.message === 'two hops away');
      assert.equal(await s.call('demo.sum', [t]), 30);
      t.dispose();
      u.dispose();
    } finally {
      await s.close();
    }
    // the page's worker as one more hop: page -> worker -> proxy -> tab -> ws:// -> Node device
    await until(() => proxy.waiting().includes('tab-relay') && proxy.waiting().includes('node-far'), 'both joined again');
    const page = await hopPage();
    try {
      const r = await page.evaluate(async ({ ws }) => {
        const { connectRuntime, RemoteTensor } = window.webffi;
        const worker = window.hop(ws, 'tab-relay', { chain: [{ target: ws, key: 'node-far' }] });
        const remote = await connectRuntime(worker, { timeout: 60000 });
        const out = { where: await remote.getGlobal('demo.where')() };
        const t = await remote.getGlobal('demo.iota')(3);
        out.t = [t instanceof RemoteTensor, [...await t.data()]];
        out.sum = await remote.getGlobal('demo.sum')(t);
        out.fail = await remote.getGlobal('demo.fail')('three hops away').catch((e) => [e.kind, e.message]);
        t.dispose();
        out.count = await remote.remoteCount();
        remote.close();
        worker.terminate();
        return out;
      }, { ws: proxy.wsUrl });
      assert.deepEqual(r, { where: 'node device', t: [true, [0, 10, 20]], sum: 30, fail: ['TypeError', 'three hops away'], count: 0 });
    } finally {
      await page.close();
    }
    await until(() => proxy.waiting().includes('tab-relay') && proxy.waiting().includes('node-far'), 'both joined again');
    const s2 = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'tab-relay', { timeout: 60000, chain: [{ target: proxy.wsUrl, key: 'node-far' }] });
    try {
      assert.equal(await s2.call('demo.where'), 'node device');
      // the far device dying mid-call: the client hears which hop went
      await assert.rejects(s2.call('demo.die'), (e) => e instanceof RPCError && e.message.includes(`next hop ${proxy.wsUrl} closed the connection`));
      await assert.rejects(s2.call('demo.where'), (e) => e instanceof RPCError);
    } finally {
      await s2.close();
    }
    // a forward the tab's owner does not allow: refused, and the tab goes on serving
    await until(() => proxy.waiting().includes('tab-relay'), 'the relay tab joined again');
    await assert.rejects(connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'tab-relay', { timeout: 60000, chain: [{ target: 'ws://127.0.0.1:9/ws', key: 'x' }] }),
      (e) => e instanceof RPCError && /does not forward sessions to ws:\/\/127\.0\.0\.1:9\/ws/.test(e.message));
    await until(() => proxy.waiting().includes('tab-relay'), 'the relay tab joined again');
    const own = await connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'tab-relay', { timeout: 60000 });
    assert.equal(await own.call('page.describe', [1]), 'chromium:1');
    await own.close();
    // a tab with no forward option refuses chaining, naming the option
    await assert.rejects(connectRPC(`127.0.0.1:${proxy.tcpPort}`, 'tab-gpu', { timeout: 60000, chain: [{ target: proxy.wsUrl, key: 'node-far' }] }),
      (e) => e instanceof ValueError && /forward option/.test(e.message));
    await until(() => proxy.waiting().includes('tab-gpu'), 'the GPU tab joined again');
    assert.deepEqual(await relayTab.evaluate(() => window.__rpc.errors), []);
    assert.deepEqual(pageErrors, []);
  } finally {
    joined.close();
    await relayTab.close();
  }
});
