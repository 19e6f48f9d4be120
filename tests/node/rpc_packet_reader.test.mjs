// The RPC client's reader of incoming chunks (js/rpc/packet_reader.js): a
// copy's payload lands in the caller's memory as it arrives, and that memory
// may go away mid-copy (its buffer transferred, a wasm memory grown).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PacketReader } from '../../js/rpc/packet_reader.js';

const packetHead = (bodyLength, code) => {
  const b = new Uint8Array(12);
  const v = new DataView(b.buffer);
  v.setUint32(0, bodyLength, true);
  v.setInt32(8, code, true);
  return b;
};

test('a large body goes to the sink as it arrives', () => {
  const n = 200000;
  const r = new PacketReader();
  const out = new Uint8Array(n);
  r.push(packetHead(n + 4, 7));
  r.push(new Uint8Array(1000).fill(1));
  assert.equal(r.nextBody(() => {}, () => out), null);
  r.push(new Uint8Array(n - 1000).fill(2));
  const body = r.nextBody(() => {}, () => null);
  assert.equal(r.sunk, true);
  assert.deepEqual([...body], [7, 0, 0, 0]);
  assert.deepEqual([out[0], out[999], out[1000], out[n - 1]], [1, 1, 2, 2]);
});

test('the sink\'s memory detached mid-body: the body is gathered privately and the framing holds', () => {
  const n = 200000;
  const r = new PacketReader();
  const out = new Uint8Array(new ArrayBuffer(n));
  r.push(packetHead(n + 4, 7));
  r.push(new Uint8Array(1000).fill(1));
  assert.equal(r.nextBody(() => {}, () => out), null);
  structuredClone(out.buffer, { transfer: [out.buffer] });
  r.push(new Uint8Array(n - 1000).fill(2));
  r.push(packetHead(8, 9).subarray(0, 12)); // the next packet right behind it
  r.push(new Uint8Array(4));
  const body = r.nextBody(() => {}, () => null);
  assert.equal(r.sunk, false); // the caller's copy then fails alone
  assert.equal(body.length, n + 4);
  assert.deepEqual([body[0], body[4], body[n + 3]], [7, 0, 2]);
  const next = r.nextBody(() => {}, () => null);
  assert.deepEqual([...next.subarray(0, 4)], [9, 0, 0, 0]);
});
