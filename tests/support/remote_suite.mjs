// Async served functions and remote objects over a worker session: named
// tests that run in Node (worker_threads, WebGPU from Dawn on llvmpipe:
// tests/node/remote.test.mjs) and in Chromium (module Workers, SwiftShader
// WebGPU: tests/browser/remote.test.mjs). The worker is
// tests/support/remote_worker.mjs. `env` gives:
//   spawn(role): a worker running it as `role`; kill(worker);
//   crashMessage: what a crashed worker's calls are rejected with;
//   addOneModule(): the bytes of tests/modules/add_one.wasm;
//   channel(): a new MessageChannel.
import { assert as ok, same, rejected as rejects, thrown as throws } from '../browser/harness_page.mjs';
import { assertClose, randomFloats } from './numeric.mjs';
import { loadTesting } from './testing_module.mjs';

/** C = A @ B for row-major n x n float32 matrices, in float64. */
function matmulRef(a, b, n) {
  const c = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < n; k++) {
      const x = a[i * n + k];
      for (let j = 0; j < n; j++) c[i * n + j] += x * b[k * n + j];
    }
  }
  return c;
}

export function remoteTests(webffi, env) {
  let worker;
  let remote;
  let rt;
  const workers = [];
  const spawn = (role) => {
    const w = env.spawn(role);
    workers.push(w);
    return w;
  };

  return {
    async 'setup: a worker serving its runtime, with WebGPU, and a runtime here'() {
      worker = spawn('server');
      remote = await webffi.connectRuntime(worker, { timeout: 60000 });
      ok(remote instanceof webffi.RemoteRuntime, 'a RemoteRuntime');
      rt = await loadTesting(await webffi.load({ wasm: env.wasm, autoloadBackends: false }));
      same(await remote.remoteCount(), 0, 'no remote objects yet');
    },

    async 'an async served function is awaited before the reply'() {
      const sleep = remote.getGlobal('test.sleep');
      same(await sleep(20), 'slept 20');
      const all = await Promise.all([sleep(30), sleep(10), sleep(20)]);
      same(all.join(','), 'slept 30,slept 10,slept 20', 'concurrent async calls each get their own answer');
    },

    async 'an async call that times out rejects with RPCSessionTimeoutError and aborts the served function'() {
      const before = await remote.session.call('test.stats');
      const e = await rejects(remote.session.call('test.sleep', [60000], { timeout: 50 }), 'timeout');
      ok(e instanceof webffi.RPCSessionTimeoutError && e instanceof webffi.RPCError, String(e));
      same(e.message, 'webffi session: the call to `test.sleep` timed out after 50 ms');
      const after = await remote.session.call('test.stats');
      same(after.aborted, before.aborted + 1, 'the served function saw its signal abort');
      same(after.finished, before.finished, 'and stopped');
    },

    async 'an AbortSignal cancels an async call mid-flight, in the worker too'() {
      const before = await remote.session.call('test.stats');
      const abort = new AbortController();
      const pending = remote.session.call('test.sleep', [60000], { signal: abort.signal });
      await new Promise((r) => setTimeout(r, 50));
      const reason = new Error('stop now');
      abort.abort(reason);
      same(await rejects(pending, 'aborted'), reason, 'rejects with the signal reason');
      let after;
      for (let i = 0; i < 50; i++) { // the cancel message travels after the rejection
        after = await remote.session.call('test.stats');
        if (after.aborted > before.aborted) break;
      }
      same(after.aborted, before.aborted + 1, 'the served function saw its signal abort');
      same(await remote.session.call('test.sleep', [1]), 'slept 1', 'the session goes on');
    },

    async 'async calls in flight are bounded (maxInFlight)'() {
      const w = spawn('bounded');
      const s = await webffi.connect(w, { timeout: 60000 });
      const calls = Array.from({ length: 6 }, () => s.call('test.sleep', [300]).then((v) => v, (e) => e));
      const out = await Promise.all(calls);
      const refused = out.filter((x) => x instanceof webffi.RPCError);
      same(refused.length, 2, 'two of six refused');
      ok(/^webffi session: too many calls in flight \(at most 4\)$/.test(refused[0].message), refused[0].message);
      same(out.filter((x) => x === 'slept 300').length, 4);
      s.close();
      env.kill(w);
    },

    async 'a matmul chain stays on the GPU in the worker for three calls and is fetched once'() {
      const n = 48;
      const a = randomFloats(n * n, 1);
      const b = randomFloats(n * n, 2);
      const base = await remote.remoteCount();
      const ta = await remote.tensor(a, { shape: [n, n], device: 'webgpu' });
      const tb = await remote.tensor(b, { shape: [n, n], device: 'webgpu' });
      ok(ta instanceof webffi.RemoteTensor, String(ta));
      same(ta.device, 'webgpu:0');
      same(ta.dtype, 'float32');
      same(ta.shape.join(','), `${n},${n}`);
      const matmul = remote.getGlobal('webgpu.matmul');
      const c1 = await matmul(ta, tb);
      const c2 = await matmul(c1, tb);
      const c3 = await matmul(c2, tb);
      for (const c of [c1, c2, c3]) {
        ok(c instanceof webffi.RemoteTensor && c.device === 'webgpu:0' && c.shape.join(',') === `${n},${n}`, String(c));
      }
      same(await remote.remoteCount(), base + 5, 'five tensors live in the worker');
      const got = await c3.data();
      ok(got instanceof Float32Array && got.length === n * n, String(got));
      let ref = matmulRef(a, b, n);
      ref = matmulRef(ref, b, n);
      ref = matmulRef(ref, b, n);
      assertClose(got, ref, 'A B B B', { rtol: 1e-3, atol: 1e-3 });
      for (const h of [ta, tb, c1, c2, c3]) h.dispose();
      same(await remote.remoteCount(), base, 'disposed: the worker released them');
    },

    async 'typed arrays and CPU tensors arrive as CPU tensors; served functions return remote GPU tensors or CPU tensors by value'() {
      const x = new Float32Array([1, 2, 3, 4]);
      const seen = await remote.session.call('test.describe', [x]);
      same(JSON.stringify(seen), JSON.stringify(['ffi.Tensor', 'cpu:0', 'float32', [4]]), 'a typed array arrives as a CPU tensor');
      const t = rt.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3] });
      same(JSON.stringify(await remote.session.call('test.describe', [t])), JSON.stringify(['ffi.Tensor', 'cpu:0', 'float32', [2, 3]]), 'a tensor by value');
      t.dispose();
      const moved = new Float32Array([5, 6, 7]);
      const g = await remote.session.call('test.to_gpu', [moved], { transfer: true });
      same(moved.byteLength, 0, 'transferred, not copied');
      ok(g instanceof webffi.RemoteTensor && g.device === 'webgpu:0', String(g));
      same(Array.from(await g.data()).join(','), '5,6,7');
      const y = await remote.session.call('test.double_on_gpu', [new Float32Array([1, -2, 3])]);
      ok(!(y instanceof webffi.RemoteObject), 'a CPU tensor comes back by value');
      same(JSON.stringify(y.shape), '[3]');
      same(Array.from(y.data).join(','), '2,-4,6');
      // A GPU tensor result asked for by value is downloaded in the worker.
      const v = await remote.session.call('webgpu.add', [g, g], { result: 'value' });
      same(Array.from(v.data).join(','), '10,12,14');
      // ... and with a runtime on this side, it is a tensor of that runtime.
      const s2 = await webffi.connect(worker, { runtime: rt });
      const h = await s2.call('test.double_on_gpu', [new Float32Array([4])]);
      ok(h instanceof rt.Tensor && String(h.device) === 'cpu:0', String(h));
      same(h.toTypedArray()[0], 8);
      h.dispose();
      const g2 = await s2.call('test.to_gpu', [new Float32Array([1, 2])]);
      same(Array.from(await g2.data()).join(','), '1,2', 'data() through a session with a runtime');
      // GPU tensors in an array, by value: each downloaded.
      const [p, q] = await remote.session.call('test.pair', [g, g], { result: 'value' });
      same(`${Array.from(p.data)}|${Array.from(q.data)}`, '5,6,7|5,6,7');
      g2.dispose();
      s2.close();
      g.dispose();
    },

    async 'handles: dispose, Symbol.dispose, and the live count returns to its baseline'() {
      const base = await remote.remoteCount();
      const hs = [];
      for (let i = 0; i < 4; i++) hs.push(await remote.tensor(new Float32Array([i]), { device: 'webgpu' }));
      hs.push(await remote.session.call('test.function'));
      hs.push(await remote.session.call('test.object'));
      same(await remote.remoteCount(), base + 6);
      ok(hs[4] instanceof webffi.RemoteFunction && hs[4].type === 'function', String(hs[4]));
      same(await hs[4].call([4]), 40, 'a kept JS function called through its handle');
      ok(hs[5] instanceof webffi.RemoteObject && hs[5].type === 'Counter', String(hs[5]));
      // Passing a handle back hands the worker its own object (the same one: a second reference).
      const again = await remote.session.call('test.identity', [hs[5]]);
      same(again.id, hs[5].id, 'the same object, the same id');
      same(await remote.remoteCount(), base + 6, 'not a new object');
      again.dispose();
      hs[0].dispose();
      hs[0].dispose(); // idempotent
      hs[1][Symbol.dispose]();
      same(await remote.remoteCount(), base + 4);
      for (const h of hs) h.dispose();
      same(await remote.remoteCount(), base, 'back to the baseline');
      // One object named many times in one reply: one handle, one reference.
      for (const n of [3, 100]) {
        const shared = await remote.session.call('test.shared', [n]);
        same(shared.length, n);
        ok(shared.every((h) => h === shared[0]), `one handle for ${n} mentions`);
        same(await remote.remoteCount(), base + 1);
        shared[0].dispose();
        same(await remote.remoteCount(), base);
      }
      // A CPU tensor kept on request.
      const kept = await remote.session.call('test.double_on_gpu', [new Float32Array([1])], { result: 'remote' });
      ok(kept instanceof webffi.RemoteTensor && kept.device === 'cpu:0', String(kept));
      same((await kept.data())[0], 2);
      kept.dispose();
      same(await remote.remoteCount(), base);
    },

    async 'a disposed handle and an unknown id are ValueErrors'() {
      const t = await remote.tensor(new Float32Array([1, 2]));
      t.dispose();
      const e = await rejects(t.fetch(), 'disposed');
      ok(e instanceof webffi.ValueError, String(e));
      same(e.message, `Cannot use a disposed remote \`ffi.Tensor\` #${t.id}`);
      const e2 = await rejects(remote.session.call('test.identity', [t]), 'disposed argument');
      ok(e2 instanceof webffi.ValueError, String(e2));
    },

    async 'a handle used on the wrong session, or locally, is a TypeError of ours'() {
      const { port1, port2 } = env.channel();
      worker.postMessage({ serveOn: port2 }, [port2]);
      const other = await webffi.connect(port1, { timeout: 60000 });
      const t = await remote.tensor(new Float32Array([1]));
      const e = await rejects(other.call('test.identity', [t]), 'another session');
      ok(e instanceof webffi.FFITypeError && e instanceof TypeError, String(e));
      same(e.message, `remote \`ffi.Tensor\` #${t.id} belongs to another worker session; pass it only to calls on the session that made it (or send its value: \`await ref.fetch()\`)`);
      const l = throws(() => rt.getGlobal('testing.echo')(t), 'a local function');
      ok(l instanceof TypeError, String(l));
      const c = throws(() => webffi.encodeValue([t]), 'encodeValue');
      ok(c instanceof webffi.FFITypeError && /cannot clone `RemoteTensor` object contained in `Array`: it names an object in a worker/.test(c.message), c.message);
      const fake = throws(() => webffi.encodeValue([Object.create(webffi.RemoteObject.prototype)]), 'a fake handle');
      ok(fake instanceof webffi.FFITypeError, String(fake));
      const forged = await rejects(remote.session.call('test.identity', [Object.create(webffi.RemoteTensor.prototype)]), 'a forged handle');
      ok(forged instanceof webffi.FFITypeError && /made to look like a remote handle/.test(forged.message), forged.message);
      // The other session's ids are its own: an id from this one names nothing there.
      same(await other.remoteCount(), 0);
      const raw = await other.callEncoded('test.identity', ['a', ['R', t.id]]);
      ok(!raw.ok, 'refused');
      const looked = webffi.decodeValue(raw.error);
      ok(looked instanceof webffi.ValueError, String(looked));
      same(looked.message, `webffi session: remote object #${t.id} does not exist in this session (it was disposed, or never made here)`);
      other.close();
      t.dispose();
    },

    async 'errors from the worker arrive as the same classes: GPU out of memory, device lost'() {
      const oom = await rejects(remote.session.call('test.gpu_oom'), 'oom');
      ok(oom instanceof webffi.MemoryError, String(oom));
      const t = await remote.tensor(new Float32Array([1, 2, 3]), { device: 'webgpu' });
      await remote.session.call('test.lose_device');
      const lost = await rejects(t.data(), 'device lost');
      ok(lost instanceof webffi.RuntimeError && /lost|destroyed/i.test(lost.message), String(lost));
      t.dispose();
      // The next use acquires a new device.
      const u = await remote.tensor(new Float32Array([7]), { device: 'webgpu' });
      same((await u.data())[0], 7);
      u.dispose();
    },

    async 'a C module loaded in the worker: a RemoteModule whose functions are RemoteFunctions'() {
      const bytes = await env.addOneModule();
      const base = await remote.remoteCount();
      const m = await remote.loadModule(bytes);
      ok(m instanceof webffi.RemoteModule && m.type === 'ffi.Module', String(m));
      const addInt = await m.getFunction('add_int');
      ok(addInt instanceof webffi.RemoteFunction && addInt.type === 'ffi.Function', String(addInt));
      same(await addInt.call([41]), 42);
      // A function the module lacks: an AttributeError (as a local module says), or null when optional.
      const miss = await rejects(m.getFunction('no_such'), 'missing function');
      ok(miss instanceof webffi.AttributeError && miss.message === "Module has no function 'no_such'", String(miss));
      same(await m.getFunction('no_such', { optional: true, timeout: 5000 }), null);
      // A CPU tensor the worker keeps, written in place by C there, then fetched.
      const x = await remote.tensor(new Float32Array([1, 2, 3]));
      const y = await remote.tensor(new Float32Array(3));
      const addOne = await m.getFunction('add_one');
      same(await addOne.call([x, y]), null);
      same(Array.from(await y.data()).join(','), '2,3,4');
      const e = await rejects(addOne.call([x]), 'wrong arity');
      ok(e instanceof webffi.FFITypeError && e.message === 'add_one expects two tensors (x, y)', String(e));
      same(await remote.remoteCount(), base + 5);
      for (const h of [m, addInt, addOne, x, y]) h.dispose();
      same(await remote.remoteCount(), base);
    },

    async 'remote objects are bounded per session (maxRemotes)'() {
      const w = spawn('bounded');
      const r = await webffi.connectRuntime(w, { timeout: 60000 });
      const hs = [];
      for (let i = 0; i < 8; i++) hs.push(await r.tensor(new Float32Array([i])));
      const e = await rejects(r.tensor(new Float32Array([9])), 'ninth');
      ok(e instanceof webffi.RPCError && /too many remote objects alive in this session \(at most 8\)/.test(e.message), e.message);
      const freed = hs.pop();
      freed.dispose();
      const ok9 = await r.tensor(new Float32Array([9]));
      ok(ok9.id > freed.id, `ids are not reused (${ok9.id} after ${freed.id})`);
      // This server does not expose module loading.
      const denied = await rejects(r.loadModule(await env.addOneModule()), 'loadModule not exposed');
      ok(denied instanceof webffi.RPCError && /does not expose module loading/.test(denied.message), denied.message);
      r.close();
      env.kill(w);
    },

    async 'a worker that dies with handles outstanding: the handles fail with an RPCError that says so'() {
      const w = spawn('server');
      const r = await webffi.connectRuntime(w, { timeout: 60000 });
      const t = await r.tensor(new Float32Array([1, 2]), { device: 'webgpu' });
      const f = await r.session.call('test.function');
      const crash = await rejects(r.session.call('test.crash'), 'crash');
      ok(crash instanceof webffi.RPCError && env.crashMessage.test(crash.message), crash.message);
      ok(t.sessionClosed, 'the handle knows');
      const e = await rejects(t.data(), 'data after the crash');
      ok(e instanceof webffi.RPCError && /^webffi session: remote `ffi.Tensor` #\d+ belongs to a session that has ended \(/.test(e.message), e.message);
      const e2 = await rejects(f.call([1]), 'call after the crash');
      ok(e2 instanceof webffi.RPCError, String(e2));
      t.dispose(); // nothing to release: no error
      f.dispose();
      env.kill(w);
    },

    async 'closing the session releases what it held in the worker'() {
      const { port1, port2 } = env.channel();
      worker.postMessage({ serveOn: port2 }, [port2]);
      const s = await webffi.connect(port1, { timeout: 60000 });
      for (let i = 0; i < 3; i++) await s.call('test.object');
      same(await s.remoteCount(), 3);
      // A third session on the same server port set sees its own count only.
      const probe = env.channel();
      worker.postMessage({ serveOn: probe.port2 }, [probe.port2]);
      const p = await webffi.connect(probe.port1, { timeout: 60000 });
      same(await p.remoteCount(), 0);
      s.close();
      p.close();
    },

    async 'chaining: client -> forwarder -> worker; async calls, cancels and remote handles pass through'() {
      const fwd = spawn('forwarder');
      const { port1, port2 } = env.channel();
      worker.postMessage({ serveOn: port2 }, [port2]);
      fwd.postMessage({ next: port1 }, [port1]);
      const s = await webffi.connect(fwd, { timeout: 60000 });
      same(await s.call('test.sleep', [5]), 'slept 5');
      const t = await s.callOp('tensor', [new Float32Array([3, 4]), { device: 'webgpu' }], { result: 'remote' });
      ok(t instanceof webffi.RemoteTensor && t.device === 'webgpu:0', String(t));
      const u = await s.call('webgpu.add', [t, t]);
      same(Array.from(await u.data()).join(','), '6,8');
      same(await s.remoteCount(), 2, 'the last worker keeps them');
      t.dispose();
      u.dispose();
      same(await s.remoteCount(), 0, 'released through the forwarder');
      const before = await s.call('test.stats');
      const e = await rejects(s.call('test.sleep', [60000], { timeout: 50 }), 'timeout through the chain');
      ok(e instanceof webffi.RPCSessionTimeoutError, String(e));
      let after;
      for (let i = 0; i < 50; i++) {
        after = await s.call('test.stats');
        if (after.aborted > before.aborted) break;
      }
      same(after.aborted, before.aborted + 1, 'the cancel reached the served function');
      s.close();
      env.kill(fwd);
    },

    async 'teardown'() {
      await remote.session.call('test.idle');
      remote.close();
      const e = await rejects(remote.getGlobal('test.sleep')(1), 'closed');
      ok(e instanceof webffi.RPCError && /session was closed/.test(e.message), e.message);
      for (const w of workers) env.kill(w);
    },
  };
}
