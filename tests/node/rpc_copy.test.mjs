// Large copies from a device without a copy on either side: the server hands
// a tensor's bytes to the socket as a view of wasm memory and serves nothing
// until the socket lets go of them; the client reads a reply straight into
// the caller's array. What that makes possible to break: the server's wasm
// memory growing mid-send, the client freeing or closing mid-transfer,
// requests pipelined behind the copy, several sessions at once, a slow reader.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { load, connectRPC, RPCError } from '../../js/index.js';
import { serveConnection } from '../../js/rpc/server.js';
import { socketTransport } from '../../js/rpc/transport.js';
import { PacketReader } from '../../js/rpc/packet_reader.js';
import { CODE, T, Writer, deviceOf, dtypeOf } from '../../js/rpc/wire.js';

const MIB = 1 << 20;
const rt = await load({ logger: { log() {}, warn() {} } });
rt.registerGlobal('copy.add', (a, b) => a + b);

// A device whose connections are counted, as are the views its sockets take.
const stats = { views: 0, released: 0, live: 0, served: 0 };
const errors = [];
const server = net.createServer((socket) => {
  const t = socketTransport(socket);
  const writeView = t.writeView;
  t.writeView = (bytes, release) => {
    const r = writeView(bytes, () => {
      stats.released++;
      release();
    });
    if (r !== false) stats.views++;
    return r;
  };
  stats.live++;
  serveConnection(rt, t, { expose: ['copy.*'], onError: (e) => errors.push(e) }).then(() => {
    stats.live--;
    stats.served++;
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const address = `127.0.0.1:${server.address().port}`;
after(() => new Promise((r) => server.close(r)));

const pattern = (n, seed) => {
  const a = new Uint32Array(n / 4);
  for (let i = 0; i < a.length; i++) a[i] = (i * 2654435761 + seed) >>> 0;
  return a;
};
const sameBytes = (a, b) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (what, fn) => {
  for (let i = 0; i < 2000 && !fn(); i++) await sleep(5);
  assert.ok(fn(), what);
};

/** A session over a socket of our own, so that a test can stop reading it. */
async function sessionOverSocket() {
  const socket = await new Promise((resolve, reject) => {
    const s = net.connect(Number(address.split(':')[1]), '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const session = await connectRPC(address, 'webffi', { transport: socketTransport(socket) });
  return { session, socket };
}

test('a 16 MiB copy from the device goes out without a copy, and the bytes arrive whole (data(out) and data())', async () => {
  const s = await connectRPC(address, 'webffi');
  const values = pattern(16 * MIB, 1);
  const t = await s.tensor(values);
  const views = stats.views;
  const out = new Uint32Array(values.length);
  assert.equal(await t.data(out), out);
  assert.ok(sameBytes(out, values));
  assert.ok(sameBytes(await t.data(), values));
  assert.ok(stats.views >= views + 2, 'the device sent the tensor\'s bytes as views of its memory');
  // and a copy that ends mid-chunk, from an offset into a larger array
  const big = new Uint8Array(16 * MIB + 3);
  await t.data(big.subarray(3));
  assert.ok(sameBytes(big.subarray(3), values));
  t.dispose();
  assert.equal(await s.call('copy.add', [1, 2]), 3);
  await s.close();
});

test('the device\'s wasm memory grows while the socket still holds a view of a tensor\'s bytes', async () => {
  const { session: s, socket } = await sessionOverSocket();
  const values = pattern(16 * MIB, 2);
  const t = await s.tensor(values);
  socket.pause(); // the reply cannot all go out: the socket keeps the view
  const views = stats.views;
  const released = stats.released;
  const copy = t.data();
  await until('the device sent the bytes as a view', () => stats.views > views);
  await sleep(20);
  assert.equal(stats.released, released, 'the view is still held');
  const before = rt.exports.memory.buffer;
  const hog = rt.tensor(new Float32Array(48 * MIB / 4).fill(7)); // the allocator grows the memory
  assert.notEqual(rt.exports.memory.buffer, before, 'the memory grew (its old buffer detached)');
  assert.equal(before.byteLength, 0);
  socket.resume();
  assert.ok(sameBytes(await copy, values));
  await until('the view was released', () => stats.released > released);
  hog.dispose?.();
  t.dispose();
  await s.close();
});

test('requests pipelined behind a held copy (free its tensor, allocate that size again) wait until its bytes are sent', async () => {
  const { session: s, socket } = await sessionOverSocket();
  const n = 16 * MIB;
  const values = pattern(n, 3);
  const t = await s.tensor(values);
  const conn = s._detach(); // from here on, raw requests on the same connection
  const received = [];
  conn.onData((chunk) => received.push(chunk.slice()));
  socket.pause();
  const dev = deviceOf('cpu');
  const dt = dtypeOf('uint32');
  const w = new Writer();
  const packets = [];
  w.begin(CODE.CopyFromRemote);
  w.tensor(t.data_handle, dev, dt, [n / 4], 0);
  w.u64(n);
  packets.push(w.end().slice());
  w.begin(CODE.DevFreeData); // the copy's tensor, freed right behind it
  w.u32(2);
  w.u32(T.Device);
  w.device(dev);
  w.u32(T.OpaquePtr);
  w.u64(t.data_handle);
  packets.push(w.end().slice());
  for (let i = 0; i < 2; i++) { // memory of that size again, which the allocator may hand back
    w.begin(CODE.DevAllocDataWithScope);
    w.u32(2);
    w.u32(T.DLTensorPtr);
    w.tensor(0, dev, dt, [n / 4], 0);
    w.u32(T.None);
    packets.push(w.end().slice());
  }
  for (const p of packets) conn.write(p);
  await sleep(50);
  socket.resume();
  // the ack and its bytes, then the free's and the two allocations' replies
  const replyCodes = () => {
    const all = Buffer.concat(received);
    if (all.length < 12 + n) return [];
    const r = new PacketReader();
    r.push(new Uint8Array(all.subarray(12 + n)));
    const codes = [];
    for (let body; (body = r.nextBody(() => {})) !== null;) codes.push(new DataView(body.buffer, body.byteOffset).getInt32(0, true));
    return codes;
  };
  await until('all replies came', () => replyCodes().length === 3);
  const all = Buffer.concat(received);
  assert.equal(Number(all.readBigUInt64LE(0)), n + 4);
  assert.equal(all.readInt32LE(8), CODE.CopyAck);
  assert.ok(sameBytes(all.subarray(12, 12 + n), values), 'the copy has the bytes the tensor had when it was asked for');
  const codes = replyCodes();
  assert.deepEqual(codes, [CODE.Return, CODE.Return, CODE.Return]);
  conn.destroy();
  await until('the connection ended', () => stats.live === 0);
});

test('the client frees the tensor, and closes, while its copy is under way', async () => {
  const s = await connectRPC(address, 'webffi');
  const values = pattern(8 * MIB, 4);
  const t = await s.tensor(values);
  const copy = t.data();
  t.dispose(); // queued behind the copy
  assert.ok(sameBytes(await copy, values));
  const t2 = await s.tensor(values);
  const out = new Uint32Array(values.length);
  const copy2 = t2.data(out);
  const closing = s.close(); // after the copy, which finishes first
  assert.ok(sameBytes(await copy2, values));
  await closing;
  await until('the session ended on the device', () => stats.live === 0);
});

test('the connection drops mid-transfer: that copy fails, the device frees the session once the socket lets go, and serves the next', async () => {
  const { session: s, socket } = await sessionOverSocket();
  const values = pattern(16 * MIB, 5);
  const t = await s.tensor(values);
  socket.pause();
  const views = stats.views;
  const released = stats.released;
  const copy = t.data();
  await until('the device holds a view', () => stats.views > views);
  const served = stats.served;
  socket.destroy();
  await assert.rejects(copy, RPCError);
  await until('the held view was released', () => stats.released > released);
  await until('the device ended that session', () => stats.served > served && stats.live === 0);
  assert.deepEqual(errors.filter((e) => !/connection|closed/i.test(e.message)), []);
  const s2 = await connectRPC(address, 'webffi');
  const t2 = await s2.tensor(values);
  assert.ok(sameBytes(await t2.data(), values));
  await s2.close();
});

test('several sessions copying at once each get their own bytes', async () => {
  const sessions = await Promise.all([1, 2, 3, 4].map(() => connectRPC(address, 'webffi')));
  const n = 6 * MIB;
  const values = sessions.map((_, i) => pattern(n, 10 + i));
  const tensors = await Promise.all(sessions.map((s, i) => s.tensor(values[i])));
  const outs = values.map((v) => new Uint32Array(v.length));
  for (let round = 0; round < 2; round++) {
    const got = await Promise.all(tensors.map((t, i) => (i % 2 ? t.data() : t.data(outs[i]))));
    got.forEach((g, i) => assert.ok(sameBytes(g, values[i]), `session ${i}, round ${round}`));
  }
  await Promise.all(sessions.map((s) => s.close()));
});

test('a slow reader: its copy arrives whole while the device keeps answering another session', async () => {
  const { session: slow, socket } = await sessionOverSocket();
  const fast = await connectRPC(address, 'webffi');
  const values = pattern(16 * MIB, 6);
  const t = await slow.tensor(values);
  // read a chunk, then stop for a while
  socket.on('data', () => {
    socket.pause();
    setTimeout(() => socket.resume(), 2);
  });
  let done = false;
  const copy = t.data().finally(() => {
    done = true;
  });
  let calls = 0;
  while (!done) {
    assert.equal(await fast.call('copy.add', [calls, 1]), calls + 1);
    calls++;
  }
  assert.ok(sameBytes(await copy, values));
  assert.ok(calls > 0);
  await slow.close();
  await fast.close();
});

test('the client reader names where a large body\'s bytes go, and bytes read there are not copied again', () => {
  const n = 200000;
  const head = new Uint8Array(12);
  new DataView(head.buffer).setUint32(0, n + 4, true);
  new DataView(head.buffer).setInt32(8, CODE.CopyAck, true);
  // into the caller's memory
  const r = new PacketReader();
  const out = new Uint8Array(n);
  assert.equal(r.readTarget(), null);
  r.push(head);
  r.push(new Uint8Array(1000).fill(1));
  assert.equal(r.nextBody(() => {}, () => out), null);
  const target = r.readTarget();
  assert.equal(target.buffer, out.buffer);
  assert.deepEqual([target.byteOffset, target.length], [1000, n - 1000]);
  target.fill(2); // the socket's read
  r.push(target);
  const body = r.nextBody(() => {}, () => null);
  assert.equal(r.sunk, true);
  assert.deepEqual([...body], [CODE.CopyAck, 0, 0, 0]);
  assert.deepEqual([out[999], out[1000], out[n - 1]], [1, 2, 2]);
  assert.equal(r.readTarget(), null);
  // into the reader's own body, with no sink
  const r2 = new PacketReader();
  r2.push(head);
  r2.push(new Uint8Array(10));
  assert.equal(r2.nextBody(() => {}, () => null), null);
  const t2 = r2.readTarget();
  assert.equal(t2.length, n + 4 - 14);
  t2.fill(3);
  r2.push(t2.subarray(0, 5000)); // a read that fills part of it
  assert.equal(r2.readTarget(), null); // until the reader took that chunk
  assert.equal(r2.nextBody(() => {}, () => null), null);
  const t3 = r2.readTarget();
  assert.equal(t3.byteOffset, t2.byteOffset + 5000);
  r2.push(t3);
  const body2 = r2.nextBody(() => {}, () => null);
  assert.equal(body2.length, n + 4);
  assert.deepEqual([body2[4], body2[13], body2[14], body2[n + 3]], [0, 0, 3, 3]);
  // kept chunks of a reused buffer are copied by own()
  const r3 = new PacketReader();
  const scratch = new Uint8Array(64);
  scratch.set(head.subarray(0, 8));
  r3.push(scratch.subarray(0, 8));
  r3.own(scratch.buffer);
  scratch.fill(0);
  assert.equal(r3.peekU64(), n + 4);
});

test('a tensor whose values do not fill its shape is refused before the device allocates it', async () => {
  const s = await connectRPC(address, 'webffi');
  // 2^40 floats would be a 4 TiB allocation on the device: refused here, as the bytes do not match
  await assert.rejects(s.tensor(new Float32Array(4), { shape: [2 ** 40] }),
    (e) => e.name === 'ValueError' && /16 bytes for a tensor of 4398046511104/.test(e.message));
  await assert.rejects(s.tensor(new Uint8Array(6), { shape: [2, 2], dtype: 'float32' }),
    (e) => e.name === 'ValueError' && /6 bytes for a tensor of 16/.test(e.message));
  const t = await s.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] });
  assert.deepEqual([...await t.data()], [1, 2, 3, 4]);
  t.dispose();
  await s.close();
});
