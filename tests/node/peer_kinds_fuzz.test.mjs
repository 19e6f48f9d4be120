// Peers of every kind of runtime, as a class (docs/security.md, "Every input
// surface"): webffi's own core and a model library TVM compiled, each served
// with the default `expose` and a WebGPU backend (Dawn on llvmpipe). Random
// mixes of worker-session peers come at once: callers of what the default
// policy denies (device protocols that hand out addresses, tensor caches,
// the registry, unbounded timers), callers of what it exposes with random
// arguments, peers that hold kernel outputs, GPU tensors or CPU tensors
// until refused. Whatever they do, the owner keeps working: its CPU and GPU
// tensors and (on the library) its tensor cache keep their values, it
// allocates its headroom, every device byte a peer held is the runtime's
// again once it leaves, and what peers hold stays within the budget.
// Then listenRPC's shutdown in random orders of server.close(), rt.dispose(),
// a client leaving, a client arriving and a call, with nothing uncaught;
// and idle sessions that keep their slot until a newcomer needs it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { webgpuRuntimeBackend } from '../../js/backends/webgpu_runtime.js';
import { nodeGPU } from '../support/webgpu_node.mjs';
import { modelPath, ARCTIC_S } from '../support/model_fixture.mjs';
import { check } from '../support/seeded.mjs';
import { startProxy } from '../support/rpc_proxy.mjs';

const gpu = nodeGPU(); // one Dawn instance for the file: it must outlive every device
const quiet = { log() {}, warn() {} };
const MiB = 2 ** 20;
const DEVICE_BUDGET = 24 * MiB;
const OWNER_BYTES = 32 * MiB;
const library = new WebAssembly.Module(fs.readFileSync(modelPath(ARCTIC_S)));
const webffiCore = new WebAssembly.Module(fs.readFileSync(new URL('../../dist/webffi.wasm', import.meta.url)));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const loadKind = (kind, gpuBackend = true) => webffi.load({
  wasm: kind === 'webffi' ? webffiCore : library, autoloadBackends: false, logger: quiet,
  backends: gpuBackend ? [webgpuRuntimeBackend(() => gpu)] : [],
});

/** A served runtime of each kind, its owner's data, and its budget. */
async function setUp(kind) {
  const rt = await loadKind(kind);
  await rt.backends.ensure('webgpu');
  // the owner's own: a CPU tensor, a GPU tensor, its headroom taken once (then free for it again)
  const cpu = rt.tensor(new Float32Array(4096).fill(7));
  const gpuT = rt.empty([4096], 'float32', 'webgpu').set(new Float32Array(4096).fill(5));
  rt.empty([OWNER_BYTES], 'uint8').dispose();
  if (kind === 'tvm-ffi') rt.getGlobal('vm.builtin.tensor_cache.update')('owner.weight', cpu, true);
  const heap = webffi.peerBudget(rt).heapInUse;
  // peers may fill 40 MiB more than the runtime and the owner use (on the library: of wasm memory)
  const ceiling = heap + (kind === 'webffi' ? OWNER_BYTES : 0) + 40 * MiB;
  webffi.setPeerBudget(rt, { memoryBytes: ceiling, deviceBytes: DEVICE_BUDGET });
  const denied = (n) => webffi.PEER_DENIED.some((p) => (p.endsWith('*') ? n.startsWith(p.slice(0, -1)) : n === p));
  const globals = rt.listGlobals().sort();
  // webffi's core is a TVM RPC device too (a model library's RPC server is for trusted peers only)
  const server = kind === 'webffi' ? await webffi.listenRPC(rt, { port: 0, onError() {} }) : null;
  return {
    kind, rt, cpu, gpu: gpuT, ceiling, globals, server, exposed: globals.filter((n) => !denied(n)), deniedNames: globals.filter(denied),
  };
}

const runtimes = {};
after(async () => {
  for (const r of Object.values(runtimes)) {
    await r.server?.close();
    r.rt.dispose();
  }
});

/** A session to `rt` as a peer sees it: serve()'s defaults. */
async function session(rt) {
  const { port1, port2 } = new MessageChannel();
  const served = webffi.serve(rt, port1);
  const s = await webffi.connect(port2);
  return {
    s,
    close() {
      s.close();
      served.close();
      port1.close();
      port2.close();
    },
  };
}

const remote = { result: 'remote' };
const gpuTensor = (s, data, shape) => s.callOp('tensor', [data, { shape, device: 'webgpu' }], remote);

/** A refusal by the peer budget: a MemoryError naming it. */
const byBudget = (e) => e instanceof webffi.FFIError && /peer budget/.test(e.message) && (e.kind === 'MemoryError' || /MemoryError/.test(e.message));

/**
 * Takes until refused; the refusal is a MemoryError naming the budget (on
 * the library, also for what the peer made first once wasm memory is past
 * its budget: it may not grow it, and is not served while it is past).
 */
async function takeUntilRefused(take, what, r, each, limit) {
  const held = [];
  // more than the limit could never be held: past it, the budget was not applied
  for (let i = 0; i * each <= limit + each; i++) {
    try {
      held.push(await take(i));
    } catch (e) {
      assert.ok(byBudget(e), `${r.kind} ${what}: ${e?.constructor?.name}: ${e?.message}`);
      const b = webffi.peerBudget(r.rt);
      assert.ok(b.deviceHeld <= DEVICE_BUDGET, `${r.kind} ${what}: peers hold ${b.deviceHeld} bytes of device memory, past ${DEVICE_BUDGET}`);
      return held;
    }
  }
  assert.fail(`${r.kind} ${what}: never refused`);
}

// Arguments a peer sends: small values, and (by index) tensors it made.
const arg = fc.oneof(fc.integer({ min: -3, max: 1 << 20 }), fc.string({ maxLength: 8 }), fc.constant(null), fc.boolean(),
  fc.double({ noNaN: true }), fc.constantFrom('float32', 'int32', 'cpu', 'webgpu'), fc.record({ tensor: fc.nat(2) }));

const PEERS = {
  /** Calls a global the default policy denies: answered as not exposed, whatever the arguments. */
  async denied(r, { pick, args }) {
    if (r.deniedNames.length === 0) return;
    const name = r.deniedNames[pick % r.deniedNames.length];
    const { s, close } = await session(r.rt);
    try {
      await assert.rejects(s.call(name, args.filter((a) => typeof a !== 'object' || a === null)),
        (e) => e instanceof webffi.FFIError && /does not expose/.test(e.message), `${r.kind}: ${name} reached`);
    } finally {
      close();
    }
  },
  /** Calls an exposed global with random arguments, tensors it made among them: an answer or an error of ours. */
  async exposed(r, { pick, args }) {
    const name = r.exposed[pick % r.exposed.length];
    const { s, close } = await session(r.rt);
    try {
      try {
        const mine = [await s.callOp('tensor', [new Float32Array([3, 1, 2])], remote), await gpuTensor(s, new Float32Array([1, 2]), [2]),
          await s.callOp('tensor', [new Int32Array([4, 0])], remote)];
        const real = args.map((a) => (a !== null && typeof a === 'object' ? mine[a.tensor] : a));
        await s.call(name, real, { timeout: 5000 });
      } catch (e) {
        assert.ok(e instanceof webffi.FFIError, `${r.kind} ${name}: ${e?.constructor?.name}: ${e?.message}`);
      }
    } finally {
      close();
    }
  },
  /** Holds kernel outputs: [n, 1] x [1, n] matmuls, 4n^2 bytes each from 8n bytes sent. */
  async kernelOutputs(r, { n }) {
    const { s, close } = await session(r.rt);
    try {
      let inputs;
      await takeUntilRefused(async (i) => {
        if (i === 0) inputs = [await gpuTensor(s, new Float32Array(n), [n, 1]), await gpuTensor(s, new Float32Array(n), [1, n])];
        return s.call('webgpu.matmul', inputs, remote);
      }, 'kernel outputs', r, 4 * n * n, DEVICE_BUDGET);
    } finally {
      close();
    }
  },
  /** A TVM RPC client holding kernel outputs (on the library, whose RPC server is for trusted peers, through a session). */
  async rpcKernelOutputs(r, p) {
    if (r.server === null) return PEERS.kernelOutputs(r, p);
    const { n } = p;
    const c = await webffi.connectRPC(`127.0.0.1:${r.server.port}`, 'webffi');
    try {
      let inputs;
      await takeUntilRefused(async (i) => {
        if (i === 0) {
          inputs = [await c.tensor(new Float32Array(n), { shape: [n, 1], device: 'webgpu' }),
            await c.tensor(new Float32Array(n), { shape: [1, n], device: 'webgpu' })];
        }
        return c.call('webgpu.matmul', inputs);
      }, 'kernel outputs over TVM RPC', r, 4 * n * n, DEVICE_BUDGET);
    } finally {
      await c.close();
    }
  },
  /** Holds GPU tensors it sends. */
  async gpuTensors(r, { mib }) {
    const { s, close } = await session(r.rt);
    try {
      await takeUntilRefused(() => gpuTensor(s, new Uint8Array(mib * MiB), [mib * MiB]), 'GPU tensors', r, mib * MiB, DEVICE_BUDGET);
    } finally {
      close();
    }
  },
  /** Holds CPU tensors it sends: the heap (on the library, wasm memory) stays within the ceiling. */
  async cpuTensors(r, { mib }) {
    const { s, close } = await session(r.rt);
    try {
      await takeUntilRefused(() => s.callOp('tensor', [new Uint8Array(mib * MiB)], remote), 'CPU tensors', r, mib * MiB, r.ceiling);
      const inUse = webffi.peerBudget(r.rt).heapInUse;
      assert.ok(inUse <= r.ceiling + mib * MiB + OWNER_BYTES, `${r.kind}: ${inUse} bytes of heap, past the ceiling ${r.ceiling}`);
    } finally {
      close();
    }
  },
  /** Asks a timer to run for as long as it is told: not exposed, answered at once. */
  async timer(r, { number }) {
    const { s, close } = await session(r.rt);
    try {
      const started = Date.now();
      await assert.rejects(s.call('runtime.RPCTimeEvaluator', [null, 'ffi.String', 1, 0, number, 1, 0, 0, 0, 0, 0, '']), /does not expose/);
      assert.ok(Date.now() - started < 2000);
    } finally {
      close();
    }
  },
};

const peer = fc.oneof(
  fc.record({ kind: fc.constant('denied'), pick: fc.nat(), args: fc.array(arg, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('exposed'), pick: fc.nat(), args: fc.array(arg, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('kernelOutputs'), n: fc.integer({ min: 512, max: 2048 }) }),
  fc.record({ kind: fc.constant('rpcKernelOutputs'), n: fc.integer({ min: 512, max: 2048 }) }),
  fc.record({ kind: fc.constant('gpuTensors'), mib: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('cpuTensors'), mib: fc.integer({ min: 2, max: 8 }) }),
  fc.record({ kind: fc.constant('timer'), number: fc.integer({ min: 1e6, max: 2 ** 31 - 1 }) }),
);

/** The owner's own work: its data intact, its headroom allocated, calls answered. */
async function ownerWorks(r) {
  const { rt } = r;
  assert.equal(rt.getGlobal('ffi.String')('owner'), 'owner');
  assert.ok(r.cpu.toTypedArray().every((v) => v === 7), `${r.kind}: the owner's CPU tensor changed`);
  assert.ok((await r.gpu.data()).every((v) => v === 5), `${r.kind}: the owner's GPU tensor changed`);
  if (r.kind === 'tvm-ffi') {
    const cached = rt.getGlobal('vm.builtin.tensor_cache.get')('owner.weight');
    assert.ok(cached && cached.toTypedArray().every((v) => v === 7), `${r.kind}: the owner's tensor cache changed`);
    cached.dispose();
  }
  const mine = rt.empty([OWNER_BYTES], 'uint8');
  mine.set(new Uint8Array(OWNER_BYTES).fill(1));
  mine.dispose();
  rt.empty([8 * MiB], 'uint8', 'webgpu').dispose();
}

test('random peers of each kind of runtime (webffi core, model library) cannot reach the owner\'s memory, weights or time, nor keep device memory', { timeout: 600000 }, async (t) => {
  for (const kind of ['webffi', 'tvm-ffi']) runtimes[kind] ??= await setUp(kind);
  await check(t, import.meta.url, fc.asyncProperty(fc.constantFrom('webffi', 'tvm-ffi'), fc.array(peer, { minLength: 1, maxLength: 5 }), async (kind, peers) => {
    const r = runtimes[kind];
    // The library's wasm memory never shrinks: once a refused peer left it past the budget, the
    // owner raises the budget a little (peers are refused meanwhile), as an owner would.
    if (webffi.peerBudget(r.rt).heapInUse > r.ceiling) {
      r.ceiling = webffi.peerBudget(r.rt).heapInUse + 16 * MiB;
      webffi.setPeerBudget(r.rt, { memoryBytes: r.ceiling });
    }
    const running = peers.map((p) => PEERS[p.kind](r, p).then(() => null, (e) => e));
    await sleep(10);
    await ownerWorks(r);
    const failed = (await Promise.all(running)).find((e) => e !== null);
    if (failed) throw failed;
    await sleep(30);
    await ownerWorks(r);
    const b = webffi.peerBudget(r.rt);
    assert.equal(b.deviceHeld, 0, `${kind}: device memory of peers that left is the runtime's again`);
    assert.equal(b.active, 0);
  }), 6);
  for (const r of Object.values(runtimes)) {
    assert.equal(r.rt.poisoned, null);
    assert.deepEqual(r.rt.listGlobals().sort(), r.globals, `${r.kind}: the registry changed`);
  }
});

test('a model runtime\'s own timer, when its owner exposes it, is bounded as on webffi\'s core', { timeout: 600000 }, async (t) => {
  const TIMER_MS = 200;
  const rt = await loadKind('tvm-ffi', false);
  webffi.setPeerBudget(rt, { timerMs: TIMER_MS });
  const lib = rt.getGlobal('ffi.SystemLib')();
  const { port1, port2 } = new MessageChannel();
  const served = webffi.serve(rt, port1, {
    expose: (name, byDefault) => byDefault || name === 'runtime.RPCTimeEvaluator', functions: { 'owner.lib': () => lib },
  });
  const s = await webffi.connect(port2);
  try {
    const m = await s.call('owner.lib', [], remote);
    const timing = fc.record({
      number: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1e6, max: 2 ** 31 - 1 })),
      repeat: fc.integer({ min: 1, max: 5 }), minRepeatMs: fc.integer({ min: 0, max: 150 }), byName: fc.boolean(),
    });
    await check(t, import.meta.url, fc.asyncProperty(timing, async ({ number, repeat, minRepeatMs, byName }) => {
      const started = Date.now();
      try {
        const timer = await s.call('runtime.RPCTimeEvaluator',
          [byName ? null : m, byName ? 'ffi.String' : 'vm_load_executable', 1, 0, number, repeat, minRepeatMs, 100, 0, 0, 0, ''], remote);
        const out = await s.callOp('call', [timer]);
        assert.equal(out.byteLength, 8 * repeat);
      } catch (e) {
        assert.ok(e instanceof webffi.FFIError, `${e?.constructor?.name}: ${e?.message}`);
        const expected = byName ? /module it holds/ : repeat * minRepeatMs > TIMER_MS ? /passes the runtime's timer budget/ : /timer budget/;
        assert.match(e.message, expected);
      }
      assert.ok(Date.now() - started < 3 * TIMER_MS + 1000, `number ${number} held the thread for ${Date.now() - started} ms`);
    }), 12);
    assert.equal(rt.getGlobal('ffi.String')('owner'), 'owner');
  } finally {
    s.close();
    served.close();
    port1.close();
    port2.close();
    rt.dispose();
  }
});

/** Everything uncaught while fn runs (what would end a process). */
async function uncaughtDuring(fn) {
  const seen = [];
  const onError = (e) => seen.push(e);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  try {
    await fn();
    await sleep(50);
  } finally {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  }
  return seen;
}

test('a TVM RPC device (listenRPC, or joined to a proxy): any order of closing it, rt.dispose(), a client leaving or arriving and a call is quiet', { timeout: 600000 }, async (t) => {
  const step = fc.constantFrom('close', 'dispose', 'disconnect', 'connect', 'call', 'wait');
  const mode = fc.constantFrom('listen', 'proxy');
  await check(t, import.meta.url, fc.asyncProperty(fc.constantFrom('webffi', 'tvm-ffi'), mode, fc.array(step, { minLength: 1, maxLength: 7 }), async (kind, via, steps) => {
    const rt = await loadKind(kind, false);
    const trustPeers = kind === 'tvm-ffi';
    let target;
    let close;
    let proxy = null;
    if (via === 'listen') {
      const server = await webffi.listenRPC(rt, { port: 0, onError() {}, trustPeers });
      target = `127.0.0.1:${server.port}`;
      close = () => server.close();
    } else {
      proxy = await startProxy();
      const device = webffi.joinRPCProxy(rt, `127.0.0.1:${proxy.tcpPort}`, { key: 'webffi', retryMs: 20, onError() {}, trustPeers });
      await device.ready;
      target = `127.0.0.1:${proxy.tcpPort}`;
      close = () => device.close();
    }
    const clients = [await webffi.connectRPC(target, 'webffi')];
    const seen = await uncaughtDuring(async () => {
      for (const s of steps) {
        if (s === 'close') await close();
        else if (s === 'dispose') rt.dispose();
        else if (s === 'disconnect') await clients.pop()?.close().catch(() => {});
        else if (s === 'connect') await webffi.connectRPC(target, 'webffi').then((c) => clients.push(c), () => {});
        else if (s === 'call' && clients.length) await clients.at(-1).call('ffi.String', ['x']).catch(() => {});
        else await sleep(20);
      }
      for (const c of clients) await c.close().catch(() => {});
      await close();
      rt.dispose();
      await proxy?.close();
    });
    assert.deepEqual(seen.map((e) => `${e?.name}: ${e?.message}`), [], `uncaught after ${kind} ${via} ${steps.join(', ')}`);
  }), 10);
});

test('with idleMs, a quiet session is closed at its deadline counted from the handshake, not the handshake\'s', { timeout: 600000 }, async (t) => {
  const rt = await loadKind('webffi', false);
  try {
    await check(t, import.meta.url, fc.asyncProperty(fc.integer({ min: 150, max: 500 }), async (idleMs) => {
      const server = await webffi.listenRPC(rt, { port: 0, handshakeMs: 8000, idleMs, onError() {} });
      try {
        const c = await webffi.connectRPC(`127.0.0.1:${server.port}`, 'webffi');
        const opened = Date.now();
        while (server.connections > 0 && Date.now() - opened < 4000) await sleep(20);
        const after = Date.now() - opened;
        assert.ok(after >= idleMs - 20 && after < idleMs + 1500, `closed after ${after} ms with idleMs ${idleMs}`);
        await c.close();
      } finally {
        await server.close();
      }
    }), 3);
  } finally {
    rt.dispose();
  }
});

test('idle sessions keep their slot until a newcomer needs it; busy ones keep theirs', { timeout: 600000 }, async (t) => {
  const rt = await loadKind('webffi', false);
  try {
    const holder = fc.constantFrom('idle', 'busy', 'handshaking');
    await check(t, import.meta.url, fc.asyncProperty(fc.array(holder, { minLength: 1, maxLength: 4 }), async (holders) => {
      const server = await webffi.listenRPC(rt, { port: 0, maxConnections: holders.length, onError() {} });
      const target = `127.0.0.1:${server.port}`;
      const open = [];
      let stop = false;
      try {
        for (const h of holders) {
          if (h === 'handshaking') {
            const socket = tcpConnect(server.port, '127.0.0.1');
            socket.on('error', () => {});
            await new Promise((r) => socket.on('connect', r));
            open.push({ h, socket, alive: () => !socket.destroyed && socket.readyState === 'open' });
          } else {
            const c = await webffi.connectRPC(target, 'webffi');
            const e = { h, c };
            if (h === 'busy') {
              e.loop = (async () => {
                while (!stop) {
                  await c.call('ffi.String', ['busy']);
                  await sleep(100);
                }
              })();
            }
            open.push(e);
          }
        }
        await sleep(1300); // past the second a served session must be quiet for before it gives way
        const room = holders.some((h) => h !== 'busy');
        const newcomer = await webffi.connectRPC(target, 'webffi').then((c) => c, () => null);
        assert.equal(newcomer !== null, room, `holders ${holders.join(', ')}: newcomer ${newcomer ? 'got in' : 'refused'}`);
        if (newcomer) {
          assert.equal(await newcomer.call('ffi.String', ['new']), 'new');
          await newcomer.close();
        }
        // the one that gave way: a connection still in its handshake first, else an idle session
        for (const e of open) {
          if (e.h === 'busy') assert.equal(await e.c.call('ffi.String', ['still']), 'still', 'a busy session lost its slot');
        }
        if (room && !holders.includes('handshaking')) {
          const idle = open.filter((e) => e.h === 'idle');
          const gone = await Promise.all(idle.map((e) => e.c.call('ffi.String', ['x']).then(() => false, () => true)));
          assert.equal(gone.filter(Boolean).length, 1, 'exactly one idle session gave way');
        }
      } finally {
        stop = true;
        for (const e of open) {
          await e.loop?.catch(() => {});
          e.socket?.destroy();
          await e.c?.close().catch(() => {});
        }
        await server.close();
      }
    }), 3);
  } finally {
    rt.dispose();
  }
});
