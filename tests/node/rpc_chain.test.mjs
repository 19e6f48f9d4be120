// Chained TVM RPC sessions (client -> device A -> device B), as TVM chains
// them: the client's kInitServer names rpc.Connect, A connects to B and
// forwards the session. Remote objects, tensors and errors are B's through
// two hops; A forwards only where its owner allows; a hop that dies is named
// in the error the client gets.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import WebSocket from 'ws';
import { readFileSync } from 'node:fs';
import { load, connectRPC, listenRPC, joinRPCProxy, RPCError, ValueError, RPCTensor } from '../../js/index.js';
import { startProxy } from '../support/rpc_proxy.mjs';

const open = [];
const track = (s) => (open.push(s), s);
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const quiet = { logger: { log() {}, warn() {} } };
const rtA = await load(quiet);
const rtB = await load(quiet);
rtA.registerGlobal('demo.whoami', () => 'A');
rtB.registerGlobal('demo.whoami', () => 'B');
rtB.registerGlobal('demo.iota', (n) => rtB.tensor(new Float32Array(n).map((_, i) => i)));
rtB.registerGlobal('demo.sum', (t) => t.toTypedArray().reduce((a, b) => a + b, 0));
rtB.registerGlobal('demo.fail', (msg) => {
  throw new RangeError(msg);
});

const errorsA = [];
const deviceB = await listenRPC(rtB, { port: 0, key: 'b', expose: ['demo.*', 'ffi.Array*'] });
const B = `127.0.0.1:${deviceB.port}`;
// A forwards to B only (and to itself, for a three-hop chain)
const deviceA = await listenRPC(rtA, {
  port: 0, key: 'a', expose: ['demo.*'],
  forward: ({ host, port }) => host === '127.0.0.1' && (port === deviceB.port || port === deviceA.port),
  onError: (e) => errorsA.push(e),
});
const A = `127.0.0.1:${deviceA.port}`;
const plainA = await listenRPC(rtA, { port: 0, key: 'a' });
after(() => Promise.all([deviceA.close(), deviceB.close(), plainA.close()]));

test('a session through A is served by B: globals, remote objects, tensors and errors of B', async () => {
  const s = track(await connectRPC(A, 'a', { chain: [{ target: B, key: 'b' }] }));
  assert.equal(await s.call('demo.whoami'), 'B');
  assert.equal(await s.lookupGlobal('no.such.function'), null);
  const arr = await s.call('ffi.Array', [1, 2, 3]);
  assert.equal(await s.call('ffi.ArraySize', [arr]), 3);
  assert.equal(await s.call('ffi.ArrayGetItem', [arr, 2]), 3);
  arr.dispose();
  await assert.rejects(s.call('demo.fail', ['far away']), (e) => e.kind === 'RangeError' && e.message === 'far away');
  await assert.rejects(s.call('ffi.ArrayGetItem', [await s.call('ffi.Array', [1]), 5]), (e) => e.kind === 'IndexError');
  const t = await s.tensor(new Float32Array([1, 2, 3, 4]));
  assert.deepEqual(await t.data(), new Float32Array([1, 2, 3, 4]));
  assert.equal(await s.call('demo.sum', [t]), 10);
  const made = await s.call('demo.iota', [6]);
  assert.ok(made instanceof RPCTensor);
  assert.deepEqual(await made.data(), new Float32Array([0, 1, 2, 3, 4, 5]));
  // 3 MiB: copies through both hops in several packets
  const n = 3 << 18;
  const big = await s.tensor(new Float32Array(n).map((_, i) => i % 251));
  const back = await big.data();
  assert.equal(back.length, n);
  assert.equal(back[n - 1], (n - 1) % 251);
  for (const x of [t, made, big]) x.dispose();
  assert.equal(await s.call('demo.whoami'), 'B');
  // A direct session on A is A's own
  const direct = track(await connectRPC(A, 'a'));
  assert.equal(await direct.call('demo.whoami'), 'A');
});

test('three hops (client -> A -> A -> B), and rpc.LocalSession is the server itself', async () => {
  const s = track(await connectRPC(A, 'a', { chain: [{ target: A, key: 'a' }, { target: B, key: 'b' }] }));
  assert.equal(await s.call('demo.whoami'), 'B');
  const t = await s.tensor(new Int32Array([5, 6, 7]));
  assert.deepEqual(await t.data(), new Int32Array([5, 6, 7]));
  t.dispose();
  const local = track(await connectRPC(A, 'a', { sessionConstructor: ['rpc.LocalSession'] }));
  assert.equal(await local.call('demo.whoami'), 'A');
});

test('forwarding is the owner\'s choice: off by default, and only where it allows', async () => {
  await assert.rejects(connectRPC(`127.0.0.1:${plainA.port}`, 'a', { chain: [{ target: B, key: 'b' }] }),
    (e) => e instanceof ValueError && /does not serve the session constructor rpc\.Connect.*forward option/.test(e.message));
  await assert.rejects(connectRPC(A, 'a', { chain: [{ target: `127.0.0.1:${plainA.port}`, key: 'a' }] }),
    (e) => e instanceof RPCError && new RegExp(`does not forward sessions to 127\\.0\\.0\\.1:${plainA.port}`).test(e.message));
  await assert.rejects(connectRPC(A, 'a', { sessionConstructor: ['rpc.PopenSession', 'x'] }),
    (e) => e instanceof ValueError && /rpc\.PopenSession is not served/.test(e.message));
  // the next hop refuses the key: the client hears it, naming the hop
  await assert.rejects(connectRPC(A, 'a', { chain: [{ target: B, key: 'wrong' }] }),
    (e) => e instanceof RPCError && e.message.includes(B) && /no match for key 'wrong'/.test(e.message));
  // a hop that is not there
  const free = await listenRPC(rtB, { port: 0, key: 'b' });
  await free.close();
  await assert.rejects(connectRPC(A, 'a', { chain: [{ target: `127.0.0.1:${free.port}`, key: 'b' }] }),
    (e) => e instanceof RPCError);
  // a hop that accepts the connection and never answers: forwardTimeout
  const mute = net.createServer(() => {});
  await new Promise((r) => mute.listen(0, '127.0.0.1', r));
  const M = `127.0.0.1:${mute.address().port}`;
  const impatient = await listenRPC(rtA, { port: 0, key: 'a', forward: true, forwardTimeout: 100 });
  try {
    await assert.rejects(connectRPC(`127.0.0.1:${impatient.port}`, 'a', { chain: [{ target: M, key: 'x' }] }),
      (e) => e.kind === 'RPCSessionTimeoutError' && e.message.startsWith(`${M}: `) && /timed out after 100 ms/.test(e.message));
  } finally {
    await impatient.close();
    mute.close();
  }
  // A still serves
  const s = track(await connectRPC(A, 'a'));
  assert.equal(await s.call('demo.whoami'), 'A');
});

test('a hop reached over WebSocket: A connects onward to a proxy, where a joined device serves', async () => {
  const proxy = await startProxy();
  const joined = joinRPCProxy(rtB, proxy.wsUrl, { key: 'behind', WebSocket, expose: ['demo.*'], retryMs: 50 });
  const viaA = await listenRPC(rtA, { port: 0, key: 'a', forward: [proxy.wsUrl], WebSocket });
  try {
    await joined.ready;
    for (let i = 0; i < 100 && !proxy.waiting().includes('behind'); i++) await new Promise((r) => setTimeout(r, 10));
    const s = track(await connectRPC(`127.0.0.1:${viaA.port}`, 'a', { chain: [{ target: proxy.wsUrl, key: 'behind' }] }));
    assert.equal(await s.call('demo.whoami'), 'B');
    const t = await s.tensor(new Float64Array([0.5, 1.5]));
    assert.deepEqual(await t.data(), new Float64Array([0.5, 1.5]));
    t.dispose();
    await s.close();
    open.splice(open.indexOf(s), 1);
  } finally {
    joined.close();
    await viaA.close();
    await proxy.close();
  }
});

test('the far device dying: the pending call and every later one fail naming that hop', async () => {
  const rtC = await load(quiet);
  let deviceC;
  rtC.registerGlobal('demo.die', () => {
    deviceC.close(); // drops its connections before this call is answered
    return 1;
  });
  rtC.registerGlobal('demo.whoami', () => 'C');
  deviceC = await listenRPC(rtC, { port: 0, key: 'c', expose: ['demo.*'] });
  const C = `127.0.0.1:${deviceC.port}`;
  const viaA = await listenRPC(rtA, { port: 0, key: 'a', forward: true });
  try {
    const s = track(await connectRPC(`127.0.0.1:${viaA.port}`, 'a', { chain: [{ target: C, key: 'c' }] }));
    assert.equal(await s.call('demo.whoami'), 'C');
    const hopGone = (e) => e instanceof RPCError && e.message.includes(`next hop ${C} closed the connection`);
    await assert.rejects(s.call('demo.die'), hopGone);
    await assert.rejects(s.call('demo.whoami'), hopGone);
    assert.equal(s.closed, false); // the client still talks to A, which answers for the lost hop
  } finally {
    await viaA.close();
  }
});

test('the middle hop dying ends the session with an RPCError', async () => {
  const viaA = await listenRPC(rtA, { port: 0, key: 'a', forward: true });
  const s = track(await connectRPC(`127.0.0.1:${viaA.port}`, 'a', { chain: [{ target: B, key: 'b' }] }));
  assert.equal(await s.call('demo.whoami'), 'B');
  await viaA.close();
  await assert.rejects(s.call('demo.whoami'), RPCError);
  assert.equal(s.closed, true);
  // B lost nothing: it serves the next session
  const direct = track(await connectRPC(B, 'b'));
  assert.equal(await direct.call('demo.whoami'), 'B');
});

// TVM's C++ client opening a chained session through a webffi device, recorded
// against real TVM (tests/fixtures/rpc/README.md): replayed byte for byte.
test("TVM's own client chaining through a device, as recorded: the same replies byte for byte", async () => {
  const lines = readFileSync(new URL('../fixtures/rpc/tvm-client-chained-through-webffi.hexlog', import.meta.url), 'utf8')
    .trim().split('\n').map((line) => {
      const [dir, n, hex] = line.split(' ');
      const bytes = Buffer.from(hex, 'hex');
      assert.equal(bytes.length, Number(n));
      return { toServer: dir === 'C>S', bytes };
    });
  const rtR = await load(quiet);
  rtR.registerGlobal('demo.whoami', () => 'device B');
  rtR.registerGlobal('demo.add', (a, b) => a + b);
  rtR.registerGlobal('demo.fail', (msg) => {
    throw new RangeError(msg);
  });
  rtR.registerGlobal('demo.sum', (t) => t.toTypedArray().reduce((a, b) => a + b, 0));
  const far = await listenRPC(rtR, { port: 0, key: 'b', expose: ['demo.*'] });
  const relay = await listenRPC(await load(quiet), { port: 0, key: 'a', forward: true });
  try {
    // the session constructor names the far device's port: the recorded one (9642) becomes this one
    const init = lines[2].bytes;
    const recordedPort = Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.alloc(8)]);
    recordedPort.writeBigInt64LE(9642n, 4);
    const at = init.indexOf(recordedPort);
    assert.ok(at > 0 && init.includes('rpc.Connect'), 'the recorded kInitServer carries rpc.Connect and port 9642');
    init.writeBigInt64LE(BigInt(far.port), at + 4);
    const replies = await new Promise((resolve, reject) => {
      const sock = net.connect(relay.port, '127.0.0.1');
      let got = Buffer.alloc(0);
      const out = [];
      let i = 0;
      const pump = () => {
        while (i < lines.length) {
          if (lines[i].toServer) {
            sock.write(lines[i++].bytes);
            continue;
          }
          if (i > 1 && got.length < 8) return;
          const n = i === 1 ? lines[i].bytes.length : 8 + Number(got.readBigUInt64LE(0));
          if (got.length < n) return;
          out.push({ line: i + 1, recorded: lines[i].bytes, live: Buffer.from(got.subarray(0, n)) });
          got = got.subarray(n);
          i++;
        }
        sock.end();
        resolve(out);
      };
      sock.on('data', (d) => {
        got = Buffer.concat([got, d]);
        pump();
      });
      sock.on('error', reject);
      sock.on('close', () => i < lines.length && reject(new Error(`closed at line ${i + 1}`)));
      sock.on('connect', pump);
    });
    assert.equal(replies.length, lines.filter((l) => !l.toServer).length);
    for (const { line, recorded, live } of replies) assert.equal(live.toString('hex'), recorded.toString('hex'), `line ${line}`);
  } finally {
    await relay.close();
    await far.close();
  }
});
