// Peers that take the shared instance, as a class: random mixes of peers
// (silent, slow, idle, greedy for memory or device memory, timers asking for
// too long, registry writers) come at once at a runtime served over TVM RPC
// (listenRPC) and a worker session (serve), while the owner keeps working.
// Whatever they do, silent and slow ones lose their connection at their
// deadline, greedy ones get MemoryErrors once the runtime-wide peer budget is
// spent (the owner still allocates its headroom), a real client still gets
// in and is answered, timers are refused or stopped at the timer budget, the
// registry is unchanged, and once they are gone the budget is whole again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { handshakeBytes } from '../../js/rpc/wire.js';
import { check } from '../support/seeded.mjs';

const wasm = readFileSync(new URL('../../dist/webffi.wasm', import.meta.url));
const rt = await webffi.load({ wasm, autoloadBackends: false });
const MiB = 1 << 20;
const HANDSHAKE_MS = 120;
const IDLE_MS = 400;
const TIMER_MS = 150;
const OWNER_BYTES = 48 * MiB; // what the owner must always be able to take
// The heap peers may fill: what the runtime and the owner's own work use, and 40 MiB more.
const ceiling = webffi.peerBudget(rt).heapInUse + OWNER_BYTES + 40 * MiB;
webffi.setPeerBudget(rt, { memoryBytes: ceiling, deviceBytes: 24 * MiB, timerMs: TIMER_MS, keptBytes: 32 * MiB });
const globalsBefore = rt.listGlobals().sort();
const server = await webffi.listenRPC(rt, {
  port: 0, maxConnections: 4, handshakeMs: HANDSHAKE_MS, idleMs: IDLE_MS, onError() {},
});
const target = `127.0.0.1:${server.port}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** p, or a failure once it has not settled in ms (a peer the server never cut off). */
function within(p, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still going after ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A raw TCP peer that sends `bytes` (one byte every `gapMs` when given) and then nothing; resolves when the server closes it. */
function rawPeer(bytes, gapMs = 0) {
  const socket = tcpConnect(server.port, '127.0.0.1');
  socket.on('error', () => {});
  let timer = null;
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.on('connect', () => {
    if (!gapMs) {
      if (bytes.length) socket.write(bytes);
      return;
    }
    let i = 0;
    timer = setInterval(() => {
      if (i < bytes.length && !socket.destroyed) socket.write(bytes.subarray(i, ++i));
      else clearInterval(timer);
    }, gapMs);
  });
  return { closed, end: () => { clearInterval(timer); socket.destroy(); } };
}

/**
 * Takes until refused; the refusal must be a MemoryError naming a budget or
 * a limit (or, with the heap at the ceiling, the session's end: its reply
 * could not be made), and the heap must be within the ceiling (plus the
 * owner's own).
 */
async function takeUntilRefused(take, what) {
  const held = [];
  for (let i = 0; i < 64; i++) {
    try {
      held.push(await take());
    } catch (e) {
      assert.ok(e instanceof webffi.MemoryError || (e instanceof webffi.FFIError && /MemoryError|budget|limit|closed the connection/.test(e.message)),
        `${what}: ${e?.constructor?.name}: ${e?.message}`);
      const inUse = webffi.peerBudget(rt).heapInUse;
      assert.ok(inUse <= ceiling + OWNER_BYTES, `${what}: ${inUse} bytes of heap in use, past the ceiling ${ceiling}`);
      return held;
    }
  }
  assert.fail(`${what}: never refused`);
}

const PEERS = {
  silent: async () => {
    const p = rawPeer(new Uint8Array(0));
    await p.closed; // the handshake deadline
  },
  magicOnly: async () => {
    const p = rawPeer(handshakeBytes('client:webffi').subarray(0, 4));
    await p.closed;
  },
  slow: async () => {
    const p = rawPeer(handshakeBytes('client:webffi'), HANDSHAKE_MS / 4);
    await p.closed;
    p.end();
  },
  idle: async () => {
    const c = await realClient();
    await sleep(IDLE_MS + 300); // sends nothing: the idle deadline
    await assert.rejects(c.call('ffi.String', ['late']), webffi.RPCError);
  },
  greedyDevice: async ({ mib }) => {
    const c = await realClient();
    const held = await takeUntilRefused(() => c.empty([mib * MiB], 'uint8'), 'device memory');
    await sleep(50);
    await c.close();
    return held.length;
  },
  greedySession: async ({ mib, holder }) => {
    // results kept for the peer: Bytes come back as JS data, a List holding them stays in wasm memory
    const { port1, port2 } = new MessageChannel();
    const served = webffi.serve(rt, port1);
    const s = await webffi.connect(port2);
    try {
      await takeUntilRefused(() => s.call(holder, [new Uint8Array(mib * MiB)], { result: 'remote' }), `session memory (${holder})`);
    } finally {
      s.close();
      served.close();
      port1.close();
      port2.close();
    }
  },
  timer: async ({ repeat, minRepeatMs, number }) => {
    const c = await realClient();
    try {
      const timer = c.timeEvaluator('ffi.String', 'cpu', { number, repeat, minRepeatMs });
      const started = Date.now();
      try {
        const times = await timer('x');
        assert.equal(times.length, repeat);
      } catch (e) {
        const refused = repeat * minRepeatMs > TIMER_MS;
        assert.ok(refused ? /timer budget/.test(e.message) : e instanceof webffi.FFIError && /timer budget/.test(e.message), e.message);
      }
      // a huge `number` stops at the budget, not after its calls (the thread serves every peer)
      assert.ok(Date.now() - started < 4 * TIMER_MS + 1000, `a timer of number ${number} held the thread for ${Date.now() - started} ms`);
    } finally {
      await c.close();
    }
  },
  registryWriter: async () => {
    const c = await realClient();
    try {
      for (const name of ['ffi._RegisterFFIInit', 'ffi.FunctionRemoveGlobal', 'testing.trap', 'webffi.ModuleUnload']) {
        assert.equal(await c.lookupGlobal(name), null, `${name} reached over RPC`);
      }
    } finally {
      await c.close();
    }
    const { port1, port2 } = new MessageChannel();
    const served = webffi.serve(rt, port1);
    const s = await webffi.connect(port2);
    try {
      // answered as a global that is not exposed, whatever the arguments
      await assert.rejects(s.call('ffi._RegisterFFIInit', ['ffi.Array', null]), /does not expose `ffi._RegisterFFIInit`|Cannot find global function ffi._RegisterFFIInit/);
      await assert.rejects(s.call('ffi.FunctionRemoveGlobal', ['ffi.String']), /does not expose `ffi.FunctionRemoveGlobal`|Cannot find global function ffi.FunctionRemoveGlobal/);
    } finally {
      s.close();
      served.close();
      port1.close();
      port2.close();
    }
  },
};

const peer = fc.oneof(
  fc.constant({ kind: 'silent' }), fc.constant({ kind: 'magicOnly' }), fc.constant({ kind: 'slow' }),
  fc.constant({ kind: 'idle' }), fc.constant({ kind: 'registryWriter' }),
  fc.record({ kind: fc.constant('greedyDevice'), mib: fc.integer({ min: 2, max: 9 }) }),
  fc.record({ kind: fc.constant('greedySession'), mib: fc.integer({ min: 2, max: 9 }), holder: fc.constantFrom('ffi.Bytes', 'ffi.List') }),
  fc.record({ kind: fc.constant('timer'), repeat: fc.integer({ min: 1, max: 6 }), minRepeatMs: fc.integer({ min: 0, max: 120 }), number: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1e8, max: 2 ** 31 - 1 })) }),
);

/**
 * A real client: it gets in at once, or once a slot is free (silent peers
 * give theirs up to a newcomer, idle ones at their deadline).
 */
async function realClient() {
  const until = Date.now() + IDLE_MS + HANDSHAKE_MS + 2000;
  for (;;) {
    try {
      return await webffi.connectRPC(target, 'webffi');
    } catch (e) {
      if (Date.now() > until) throw e;
      await sleep(50);
    }
  }
}

/** The owner's own work, while peers run: its headroom, calls, and a real client that gets in. */
async function ownerWorks() {
  const mine = rt.empty([OWNER_BYTES], 'uint8');
  mine.set(new Uint8Array(OWNER_BYTES).fill(1));
  assert.equal(rt.getGlobal('ffi.String')('owner'), 'owner');
  const c = await realClient();
  assert.equal(await c.call('ffi.String', ['a real client']), 'a real client');
  await c.close();
  mine.dispose();
}

test('random peers at once cannot take the runtime from its owner, nor keep it', { timeout: 600000 }, async (t) => {
  try {
    await check(t, import.meta.url, fc.asyncProperty(fc.array(peer, { minLength: 1, maxLength: 6 }), async (peers) => {
      const running = peers.map((p) => within(PEERS[p.kind](p), 8000, `a ${p.kind} peer`));
      await sleep(30);
      await ownerWorks();
      await Promise.all(running);
      await ownerWorks();
      await sleep(20);
      assert.equal(webffi.peerBudget(rt).deviceHeld, 0, 'device memory of closed sessions is the runtime\'s again');
      assert.equal(webffi.peerBudget(rt).active, 0);
      assert.equal(webffi.peerBudget(rt).kept, 0, 'JS data kept for peers that left');
    }), 12);
    assert.equal(rt.poisoned, null);
    assert.deepEqual(rt.listGlobals().sort(), globalsBefore, 'the registry changed');
  } finally {
    await server.close();
  }
});
