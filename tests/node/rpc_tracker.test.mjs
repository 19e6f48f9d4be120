// A TCP device registering with a TVM tracker (a stand-in speaking TVM's
// tracker protocol: tests/support/rpc_tracker.mjs) as TVM's own server does,
// and requestRPC asking the tracker for a device.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import WebSocket from 'ws';
import {
  load, connectRPC, listenRPC, joinRPCProxy, requestRPC, trackerSummary, connectTracker, TRACKER_CODE, RPCError,
} from '../../js/index.js';
import { startTracker } from '../support/rpc_tracker.mjs';
import { startProxy } from '../support/rpc_proxy.mjs';

const until = async (what, cond, ms = 5000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const rt = await load({ logger: { log() {}, warn() {} } });
rt.registerGlobal('demo.add', (a, b) => a + b);
const tracker = await startTracker();
const reports = [];
const device = await listenRPC(rt, {
  port: 0, key: 'trk', expose: ['demo.*'],
  tracker: { address: tracker.address, pingMs: 50, unmatchedMs: 200, retryMs: 50 },
  onError: (e, where) => reports.push([where, e.message]),
});
after(async () => {
  await device.close();
  await tracker.close();
});

test('registration as TVM\'s server does it: UPDATE_INFO, then PUT of a match key', async () => {
  await device.tracker.ready;
  const info = tracker.messages.find((m) => m[0] === TRACKER_CODE.UPDATE_INFO);
  assert.deepEqual(info, [5, { key: 'server:trk', addr: [null, device.port] }]);
  const put = tracker.messages.find((m) => m[0] === TRACKER_CODE.PUT);
  assert.equal(put[1], 'trk');
  assert.equal(put[2][0], device.port);
  assert.match(put[2][1], /^trk:0\.\d+/);
  assert.equal(put[3], null);
  assert.equal(device.tracker.matchKey, put[2][1]);
  const summary = await trackerSummary(tracker.address);
  assert.deepEqual(summary.queue_info.trk, { free: 1, pending: 0 });
  assert.deepEqual(summary.server_info, [{ key: 'server:trk', addr: [null, device.port] }]);
});

test('requestRPC: the tracker hands the device out, one session at a time; it registers again after', async () => {
  await device.tracker.ready;
  const first = await requestRPC(tracker.address, 'trk');
  assert.equal(await first.call('demo.add', [2, 3]), 5);
  assert.match(first.serverKey, /^server:trk:0\.\d+/);
  assert.equal(tracker.free('trk'), 0);
  // a second request waits for the device
  let second = null;
  const asked = requestRPC(tracker.address, 'trk').then((s) => (second = s));
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(second, null);
  // a direct connection with the plain key is served meanwhile
  const direct = await connectRPC(`127.0.0.1:${device.port}`, 'trk');
  assert.equal(await direct.call('demo.add', [1, 1]), 2);
  await direct.close();
  await first.close();
  await asked;
  assert.equal(await second.call('demo.add', [20, 22]), 42);
  await second.close();
  await until('the device back in the queue', () => tracker.free('trk') === 1);
});

test('a match key handed out to a client that never came is renewed; the old one is refused', async () => {
  await until('a free device', () => tracker.free('trk') === 1);
  const raw = await connectTracker(tracker.address);
  const [code, [host, port, stale]] = await raw.send([TRACKER_CODE.REQUEST, 'trk', '', 1]);
  raw.close();
  assert.equal(code, 0);
  assert.equal(host, '127.0.0.1');
  assert.equal(port, device.port);
  await until('a new match key', () => tracker.free('trk') === 1 && device.tracker.matchKey !== stale);
  await assert.rejects(connectRPC(`127.0.0.1:${port}`, stale), (e) => e instanceof RPCError && /no match for key/.test(e.message));
  const s = await requestRPC(tracker.address, 'trk');
  assert.equal(await s.call('demo.add', [1, 2]), 3);
  await s.close();
});

test('a lost tracker: the device registers again with the next one on that address', async () => {
  await until('a free device', () => tracker.free('trk') === 1);
  const port = tracker.port;
  await tracker.close();
  const again = await startTracker({ port });
  try {
    await until('registration with the new tracker', () => again.free('trk') === 1);
    assert.ok(reports.some(([where, m]) => where === 'tracker' && /lost the tracker/.test(m)));
    const s = await requestRPC(again.address, 'trk');
    assert.equal(await s.call('demo.add', [4, 4]), 8);
    await s.close();
  } finally {
    await again.close();
  }
});

test('a device behind a proxy that registers with the tracker: clients come with the tracker\'s match key', async () => {
  const trk = await startTracker();
  const proxy = await startProxy({ tracker: trk.address });
  const dev = joinRPCProxy(rt, proxy.wsUrl, { key: 'tab', WebSocket, expose: ['demo.*'], retryMs: 50 });
  try {
    await dev.ready;
    for (let round = 0; round < 2; round++) {
      await until('the device registered through the proxy', () => trk.free('tab') === 1);
      const s = await requestRPC(trk.address, 'tab');
      assert.equal(await s.call('demo.add', [round, 40]), round + 40);
      await s.close();
    }
    assert.equal(dev.sessions >= 1, true);
  } finally {
    dev.close();
    await proxy.close();
    await trk.close();
  }
});

test('with a tracker, connections that leave before their opening, or send garbage, are let go', async () => {
  for (const bytes of [Buffer.from([0x71, 0xf2]), Buffer.from('GET / HTTP/1.1\r\n\r\n')]) {
    const sock = net.connect({ host: '127.0.0.1', port: device.port });
    await new Promise((r) => sock.once('connect', r));
    sock.on('error', () => {});
    sock.write(bytes);
    await new Promise((r) => setTimeout(r, 30));
    sock.destroy();
  }
  await until('no connection left', () => device.connections === 0);
  const s = await connectRPC(`127.0.0.1:${device.port}`, 'trk');
  assert.equal(await s.call('demo.add', [3, 4]), 7);
  await s.close();
});

test('requestRPC errors: no tracker there, not a tracker, no device within the timeout', async () => {
  const gone = await startTracker();
  await gone.close();
  await assert.rejects(requestRPC(gone.address, 'trk'), (e) => e instanceof RPCError && /cannot connect/.test(e.message));
  await assert.rejects(requestRPC(`127.0.0.1:${device.port}`, 'trk'), (e) => e instanceof RPCError && /is not a TVM RPC tracker/.test(e.message));
  const empty = await startTracker();
  try {
    await assert.rejects(requestRPC(empty.address, 'nobody', { timeout: 100 }), (e) => e.kind === 'RPCSessionTimeoutError' && /no free device 'nobody'/.test(e.message));
  } finally {
    await empty.close();
  }
});

test('requestRPC refuses a tracker answer that is not [0, [host, port, matchKey]], quoting it cut short', async () => {
  // a fake tracker: echoes the magic, then answers every message with `answer`
  const fake = (answer) => net.createServer((s) => {
    let magic = true;
    s.on('data', (d) => {
      if (magic) {
        magic = false;
        s.write(d.subarray(0, 4));
        if (d.length === 4) return;
      }
      const body = Buffer.from(JSON.stringify(answer));
      const head = Buffer.alloc(4);
      head.writeInt32LE(body.length);
      s.write(Buffer.concat([head, body]));
    });
  });
  for (const answer of [[0, ['127.0.0.1', 70000, 'k']], [0, ['', 9090, 'k']], [0, ['h', 9090, 7]], [0, ['h', 9090]], [TRACKER_CODE.FAIL]]) {
    const server = fake(answer);
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      await assert.rejects(requestRPC(`127.0.0.1:${server.address().port}`, 'demo'), (e) => e instanceof RPCError
        && e.message.includes('not [0, [host, port, matchKey]]') && e.message.length < 400);
    } finally {
      server.close();
    }
  }
  const long = fake([0, ['h', 9090, 5, 'x'.repeat(5000)]]);
  await new Promise((r) => long.listen(0, '127.0.0.1', r));
  try {
    await assert.rejects(requestRPC(`127.0.0.1:${long.address().port}`, 'demo'), (e) => e instanceof RPCError
      && e.message.includes('...') && e.message.length < 400);
  } finally {
    long.close();
  }
});
