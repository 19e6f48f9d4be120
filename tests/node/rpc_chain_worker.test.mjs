// A worker as the middle hop: this thread -> a worker_threads Worker
// (serve(connectRPC(...), parentPort)) -> a TVM RPC device. The calls reach
// the device's globals; its objects come back as remote handles named in
// the worker's table (freed on the device when disposed), tensors are
// copied back, errors keep their kind; a device that dies, a worker that
// is terminated and hops the trust model refuses each give a clear error.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import {
  load, listenRPC, joinRPCProxy, connectRuntime, connect, connectRPC, RemoteTensor, RemoteFunction, RemoteModule,
  RemoteObject, RPCError, ValueError, FFITypeError, AttributeError,
} from '../../js/index.js';
import { startProxy } from '../support/rpc_proxy.mjs';

const quiet = { logger: { log() {}, warn() {} } };
const rt = await load(quiet);
rt.registerGlobal('demo.where', () => 'device');
rt.registerGlobal('demo.add', (a, b) => a + b);
rt.registerGlobal('demo.kind', (x) => (Number.isInteger(x) ? 'int' : 'float'));
rt.registerGlobal('demo.iota', (n) => rt.tensor(new Float32Array(n).map((_, i) => i)));
rt.registerGlobal('demo.sum', (t) => t.toTypedArray().reduce((a, b) => a + b, 0));
rt.registerGlobal('demo.fail', (msg) => {
  throw new RangeError(msg);
});
rt.registerGlobal('demo.adder', (k) => (x) => x + k);
const device = await listenRPC(rt, { port: 0, key: 'dev', expose: ['demo.*', 'ffi.Array*'], allowUpload: true });
const D = `127.0.0.1:${device.port}`;
after(() => device.close());

const workerUrl = new URL('../support/rpc_worker_hop.mjs', import.meta.url);
const workers = [];
afterEach(() => Promise.all(workers.splice(0).map((w) => w.terminate())));
function hop(target, key, { connect: c = {}, serveOptions = {} } = {}) {
  const w = new Worker(workerUrl, { workerData: { target, key, connect: c, serveOptions } });
  workers.push(w);
  return w;
}
const until = async (cond, what) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};
const addOne = readFileSync(new URL('../../build/wasm/tests/modules/add_one.wasm', import.meta.url));

test('calls through a worker reach the device: globals, remote objects, tensors, errors', async () => {
  const remote = await connectRuntime(hop(D, 'dev'), { timeout: 30000 });
  assert.equal(await remote.getGlobal('demo.where')(), 'device');
  assert.equal(await remote.getGlobal('demo.add')(2, 40), 42);
  // floats stay floats on the way (TVM's protocol tells them from ints)
  assert.equal(await remote.getGlobal('demo.kind')(2.5), 'float');
  assert.equal(await remote.getGlobal('demo.kind')(3), 'int');
  // a missing or unexposed global reads as missing
  await assert.rejects(remote.getGlobal('no.such')(), (e) => e instanceof ValueError && /Cannot find global function no\.such/.test(e.message));
  await assert.rejects(remote.getGlobal('testing.add_one')(1), (e) => e instanceof ValueError);
  // remote errors keep their kind
  await assert.rejects(remote.getGlobal('demo.fail')('from the device'), (e) => e.kind === 'RangeError' && e.message === 'from the device');
  // an object of the device comes back as a handle, and goes back as the device's object
  const arr = await remote.getGlobal('ffi.Array')(1, 2, 3);
  assert.ok(arr instanceof RemoteObject);
  assert.equal(arr.type, 'ffi.Array');
  assert.equal(await remote.getGlobal('ffi.ArraySize')(arr), 3);
  assert.equal(await remote.getGlobal('ffi.ArrayGetItem')(arr, 1), 2);
  await assert.rejects(remote.getGlobal('ffi.ArrayGetItem')(arr, 9), (e) => e.kind === 'IndexError');
  await assert.rejects(arr.fetch(), (e) => e instanceof RPCError && /TVM RPC keeps/.test(e.message));
  // a tensor made on the device: a handle, its data copied back on request
  const t = await remote.getGlobal('demo.iota')(5);
  assert.ok(t instanceof RemoteTensor);
  assert.deepEqual([t.shape, t.dtype, t.device], [[5], 'float32', 'cpu:0']);
  assert.deepEqual(await t.data(), new Float32Array([0, 1, 2, 3, 4]));
  assert.equal(await remote.getGlobal('demo.sum')(t), 10);
  // a typed array argument reaches the device as a CPU tensor, as in worker sessions
  assert.equal(await remote.getGlobal('demo.sum')(new Float32Array([1, 2, 3.5])), 6.5);
  // remote.tensor makes one on the device; a large one crosses in several packets
  const big = new Float64Array(3 << 17).map((_, i) => i % 977);
  const u = await remote.tensor(big);
  assert.equal(u.device, 'cpu:0');
  assert.deepEqual(await u.data(), big);
  // result: 'value' downloads in the worker
  const v = await remote.session.call('demo.iota', [3], { result: 'value' });
  assert.deepEqual(v.data, new Float32Array([0, 1, 2]));
  assert.equal(await remote.remoteCount(), 3);
  for (const x of [arr, t, u]) x.dispose();
  await assert.rejects(remote.getGlobal('demo.sum')(t), (e) => e instanceof ValueError && /disposed/.test(e.message));
  assert.equal(await remote.remoteCount(), 0);
  // a function made on the device: a remote function, called there
  const add5 = await remote.getGlobal('demo.adder')(5);
  assert.ok(add5 instanceof RemoteFunction);
  assert.equal(await add5.call([37]), 42);
  await assert.rejects(add5.fetch(), (e) => e instanceof FFITypeError);
  // ending the session frees what it still held (a new session on the same worker sees none)
  await remote.getGlobal('demo.iota')(2);
  assert.equal(await remote.remoteCount(), 2);
  const w = workers.at(-1);
  remote.close();
  const again = await connect(w);
  assert.equal(await again.remoteCount(), 0);
  again.close();
});

test('a module uploaded through the worker: its functions are remote functions', async () => {
  const remote = await connectRuntime(hop(D, 'dev', { serveOptions: { expose: ['demo.*', 'webffi.loadModule'] } }), { timeout: 30000 });
  const m = await remote.loadModule(addOne);
  assert.ok(m instanceof RemoteModule);
  const addInt = await m.getFunction('add_int');
  assert.ok(addInt instanceof RemoteFunction);
  assert.equal(await addInt.call([41]), 42);
  await assert.rejects(m.getFunction('no_such_function'), (e) => e instanceof AttributeError && e.message === "Module has no function 'no_such_function'");
  assert.equal(await m.getFunction('no_such_function', { optional: true }), null);
  const raise = await m.getFunction('raise_error');
  await assert.rejects(raise.call(['in the module']), (e) => e instanceof ValueError && /in the module/.test(e.message));
  // a URL is fetched in the worker, then uploaded
  const m2 = await remote.loadModule(`data:application/wasm;base64,${addOne.toString('base64')}`);
  const addInt2 = await m2.getFunction('add_int');
  assert.equal(await addInt2.call([1]), 2);
  for (const x of [addInt, raise, m, addInt2, m2]) x.dispose();
  assert.equal(await remote.remoteCount(), 0);
  remote.close();
  // the worker's allowlist names module loading, or it is refused (as a local worker refuses it)
  const strict = await connectRuntime(hop(D, 'dev', { serveOptions: { expose: ['demo.*'] } }), { timeout: 30000 });
  await assert.rejects(strict.loadModule(addOne), (e) => e instanceof RPCError && /does not forward module loading/.test(e.message));
  await assert.rejects(strict.getGlobal('ffi.Array')(1), (e) => e instanceof ValueError && /this worker does not expose `ffi\.Array`/.test(e.message));
  assert.equal(await strict.getGlobal('demo.where')(), 'device');
  strict.close();
  // a device that does not allow uploads says so
  const plain = await listenRPC(rt, { port: 0, key: 'dev', expose: ['demo.*'] });
  try {
    const r = await connectRuntime(hop(`127.0.0.1:${plain.port}`, 'dev'), { timeout: 30000 });
    await assert.rejects(r.loadModule(addOne), (e) => e instanceof RPCError && /uploads are off/.test(e.message));
    // a URL is not even fetched for a device that takes no uploads
    await assert.rejects(r.loadModule('http://127.0.0.1:9/never-fetched.wasm'), (e) => e instanceof RPCError && /uploads are off/.test(e.message));
    r.close();
  } finally {
    await plain.close();
  }
});

test('two worker hops and an RPC chain: page -> worker -> worker -> relay -> device', async () => {
  const middle = await load(quiet);
  middle.registerGlobal('demo.where', () => 'relay');
  const relay = await listenRPC(middle, { port: 0, key: 'relay', forward: [D] });
  try {
    // outer serves this thread by forwarding to the worker session on port2, which bridge serves from its RPC session
    const { port1, port2 } = new MessageChannel();
    const bridge = new Worker(workerUrl, {
      workerData: { target: `127.0.0.1:${relay.port}`, key: 'relay', connect: { chain: [{ target: D, key: 'dev' }] }, port: port1 },
      transferList: [port1],
    });
    const outer = new Worker(workerUrl, { workerData: { next: port2 }, transferList: [port2] });
    workers.push(bridge, outer);
    const remote = await connectRuntime(outer, { timeout: 30000 });
    assert.equal(await remote.getGlobal('demo.where')(), 'device');
    const t = await remote.tensor(new Int32Array([7, 8, 9]));
    assert.ok(t instanceof RemoteTensor);
    assert.deepEqual(await t.data(), new Int32Array([7, 8, 9]));
    await assert.rejects(remote.getGlobal('demo.fail')('three hops'), (e) => e.kind === 'RangeError' && e.message === 'three hops');
    t.dispose();
    assert.equal(await remote.remoteCount(), 0);
    remote.close();
  } finally {
    await relay.close();
  }
});

test('the device dying mid-call: that call and later ones fail with an RPCError, the worker still answers', async () => {
  const rtC = await load(quiet);
  let deviceC;
  rtC.registerGlobal('demo.die', () => {
    deviceC.close(); // drops the connection before this call is answered
    return 1;
  });
  rtC.registerGlobal('demo.where', () => 'C');
  deviceC = await listenRPC(rtC, { port: 0, key: 'c', expose: ['demo.*'] });
  const remote = await connectRuntime(hop(`127.0.0.1:${deviceC.port}`, 'c'), { timeout: 30000 });
  assert.equal(await remote.getGlobal('demo.where')(), 'C');
  const ended = (e) => e instanceof RPCError && /the worker's TVM RPC session to the device has ended/.test(e.message);
  await assert.rejects(remote.getGlobal('demo.die')(), ended);
  await assert.rejects(remote.getGlobal('demo.where')(), ended);
  await assert.rejects(remote.tensor(new Float32Array(2)), ended);
  // the worker itself goes on: its own operations answer
  assert.equal(await remote.remoteCount(), 0);
  remote.close();
  // the other device is untouched: a new worker reaches it
  const again = await connectRuntime(hop(D, 'dev'), { timeout: 30000 });
  assert.equal(await again.getGlobal('demo.where')(), 'device');
  again.close();
});

test('the worker terminated: pending calls fail, the device frees the session and serves the next', async () => {
  const w = hop(D, 'dev');
  const remote = await connectRuntime(w, { timeout: 30000 });
  const t = await remote.getGlobal('demo.iota')(4);
  await until(() => device.connections === 1, 'only this worker is connected');
  // the device terminates the worker while it runs the worker's call: that call is in flight
  let terminated = null;
  rt.registerGlobal('demo.killHop', () => {
    terminated = w.terminate();
    return 1;
  }, { override: true });
  const pending = remote.getGlobal('demo.killHop')();
  await assert.rejects(pending, (e) => e instanceof RPCError && /worker exited .*\(1 call was pending\)/.test(e.message));
  assert.ok(terminated, 'the call reached the device');
  await terminated;
  await assert.rejects(t.data(), (e) => e instanceof RPCError && /session that has ended/.test(e.message));
  await assert.rejects(remote.getGlobal('demo.where')(), (e) => e instanceof RPCError);
  await until(() => device.connections === 0, 'the device saw the worker\'s connection go');
  const s = await connectRPC(D, 'dev');
  assert.equal(await s.call('demo.where'), 'device');
  await s.close();
});

test('a worker whose RPC session cannot open, or is refused on the way, answers every call with why', async () => {
  // nobody listens there
  const gone = await listenRPC(rt, { port: 0, key: 'x' });
  await gone.close();
  const r1 = await connectRuntime(hop(`127.0.0.1:${gone.port}`, 'x'), { timeout: 30000 });
  await assert.rejects(r1.getGlobal('demo.where')(), (e) => e instanceof RPCError && /cannot connect/.test(e.message));
  await assert.rejects(r1.getGlobal('demo.where')(), (e) => e instanceof RPCError && /cannot connect/.test(e.message));
  r1.close();
  // a relay that does not forward to where the worker's chain asks: refused by its trust model
  const middle = await load(quiet);
  const relay = await listenRPC(middle, { port: 0, key: 'relay', forward: ['10.0.0.1:*'] });
  const closed = await listenRPC(middle, { port: 0, key: 'relay' });
  try {
    const r2 = await connectRuntime(hop(`127.0.0.1:${relay.port}`, 'relay', { connect: { chain: [{ target: D, key: 'dev' }] } }), { timeout: 30000 });
    await assert.rejects(r2.getGlobal('demo.where')(), (e) => e instanceof RPCError && e.message.includes(`does not forward sessions to ${D}`));
    r2.close();
    const r3 = await connectRuntime(hop(`127.0.0.1:${closed.port}`, 'relay', { connect: { chain: [{ target: D, key: 'dev' }] } }), { timeout: 30000 });
    await assert.rejects(r3.getGlobal('demo.where')(), (e) => e instanceof ValueError && /forward option/.test(e.message));
    r3.close();
    // the relay still serves its own sessions, and the device its own
    const s = await connectRPC(`127.0.0.1:${relay.port}`, 'relay');
    assert.equal(await s.lookupGlobal('no.such'), null);
    await s.close();
  } finally {
    await relay.close();
    await closed.close();
  }
});

test('odd inputs from the page: values TVM cannot carry, foreign and bogus handles', async () => {
  const remote = await connectRuntime(hop(D, 'dev'), { timeout: 30000 });
  const other = await connectRuntime(hop(D, 'dev'), { timeout: 30000 });
  const t = await other.getGlobal('demo.iota')(2);
  await assert.rejects(remote.getGlobal('demo.sum')(t), (e) => e instanceof FFITypeError && /another worker session/.test(e.message));
  // a JS array or object has no form in TVM's protocol
  await assert.rejects(remote.getGlobal('demo.where')([1, 2]), (e) => e instanceof FFITypeError && /cannot send a Array/.test(e.message));
  // a raw message naming an id the worker never handed out
  const s = remote.session;
  await assert.rejects(s.callEncoded('demo.sum', ['a', ['R', 999]]).then((r) => {
    if (!r.ok) throw Object.assign(new Error('x'), { encoded: r.error });
  }), (e) => e.encoded?.[1] === 'ValueError' && /#999 does not exist/.test(e.encoded[2]));
  // a call cancelled while the device runs it: its result is freed when it comes
  const ac = new AbortController();
  const cancelled = remote.getGlobal('demo.iota', { signal: ac.signal })(3);
  ac.abort(new Error('changed my mind'));
  await assert.rejects(cancelled, /changed my mind/);
  assert.equal(await remote.getGlobal('demo.where')(), 'device'); // queued after it on the device
  assert.equal(await remote.remoteCount(), 0);
  // and the session goes on
  assert.equal(await remote.getGlobal('demo.add')(1, 2), 3);
  t.dispose();
  remote.close();
  other.close();
});

test('raw messages to the worker hop: malformed calls are answered, bogus releases ignored, serving goes on', async () => {
  const w = hop(D, 'dev');
  const replies = new Map();
  w.on('message', (m) => {
    if (m?.wrpc === 'ok' || m?.wrpc === 'err') replies.set(m.id, m);
  });
  const s = await connect(w, { timeout: 30000 });
  const raw = [
    { wrpc: 'call', id: 101, op: 'call', args: ['a', ['R', 5]] }, // an id never handed out
    { wrpc: 'call', id: 102, op: 'getFunction', args: ['a', 'x', 'y'] }, // not a module
    { wrpc: 'call', id: 103, name: 'demo.sum', args: ['a', ['o', { shape: ['a', -1, 2], dtype: 'float32', data: new Float32Array(2) }]] },
    { wrpc: 'call', id: 104, op: 'tensor', args: ['a', new Float32Array(4), ['o', { shape: ['a', 3], device: 'cpu' }]] }, // shape does not fit
    { wrpc: 'call', id: 105, op: 'tensor', args: ['a', new Float32Array(1), ['o', { device: 'nowhere' }]] },
    { wrpc: 'call', id: 106, op: 'loadModule', args: ['a', 42] },
    { wrpc: 'call', id: 107, name: 'demo.sum', args: ['a', ['dev', 1, 0, 'cpu']] }, // not a tensor: the device's error
    { wrpc: 'release', refs: [1, 2, -1, 'x', 1e300] },
    { wrpc: 'call', id: 108, op: 'fetch', args: ['a', ['R', 1]] },
  ];
  for (const m of raw) w.postMessage(m);
  await until(() => replies.size === 8, 'every malformed call was answered');
  for (const id of [101, 102, 103, 104, 105, 106, 107, 108]) assert.equal(replies.get(id).wrpc, 'err', String(id));
  assert.match(replies.get(101).error[2], /#5 does not exist/);
  assert.equal(replies.get(102).error[1], 'TypeError');
  assert.equal(replies.get(106).error[1], 'TypeError');
  assert.equal(await s.call('demo.add', [20, 22]), 42);
  const t = await s.call('demo.iota', [2]);
  assert.deepEqual(await t.data(), new Float32Array([0, 1]));
  t.dispose();
  assert.equal(await s.remoteCount(), 0);
  s.close();
});

test('a worker reaching a device through a proxy over WebSocket', async () => {
  const proxy = await startProxy();
  const rtW = await load(quiet);
  rtW.registerGlobal('demo.where', () => 'behind the proxy');
  const joined = joinRPCProxy(rtW, proxy.wsUrl, { key: 'ws-dev', WebSocket, expose: ['demo.*'], retryMs: 50 });
  try {
    await joined.ready;
    await until(() => proxy.waiting().includes('ws-dev'), 'the device joined the proxy');
    const remote = await connectRuntime(hop(proxy.wsUrl, 'ws-dev'), { timeout: 30000 });
    assert.equal(await remote.getGlobal('demo.where')(), 'behind the proxy');
    const t = await remote.tensor(new Uint16Array([1, 2, 3]));
    assert.deepEqual(await t.data(), new Uint16Array([1, 2, 3]));
    t.dispose();
    remote.close();
  } finally {
    joined.close();
    await proxy.close();
  }
});
