// Disposing a runtime (rt.dispose(), [Symbol.dispose]): the backends release
// their devices (the WebGPU backend destroys the GPU device it created),
// every later use is a ValueError, handles dispose as no-ops; and a
// RemoteRuntime's [Symbol.dispose] closes its session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { load, ValueError, connectRuntime, serve, RPCError } from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const DISPOSED = 'Cannot use a disposed runtime (rt.dispose() was called): load a new one';
const isDisposed = (e) => e instanceof ValueError && e.message === DISPOSED;

test('a disposed runtime refuses every use with a ValueError; its handles dispose as no-ops', async () => {
  const rt = await loadTesting(await load({ autoloadBackends: false }));
  const arr = rt.toFFI([1, 2]);
  const addOne = rt.getGlobal('testing.add_one');
  const callback = rt.toFFI((x) => x);
  assert.equal(rt.disposed, false);
  rt.dispose();
  assert.equal(rt.disposed, true);
  assert.equal(rt.poisoned, null, 'disposed is not poisoned');
  assert.throws(() => rt.toFFI([1]), isDisposed);
  assert.throws(() => rt.getGlobal('testing.add_one'), isDisposed);
  assert.throws(() => addOne(1), isDisposed);
  assert.throws(() => callback(1), isDisposed);
  assert.throws(() => arr.length, isDisposed);
  assert.throws(() => rt.tensor(new Float32Array([1])), isDisposed);
  assert.throws(() => rt.registerGlobal('x.y', () => 1), isDisposed);
  await assert.rejects(rt.loadModule(`${root}dist/webffi_testing.wasm`), isDisposed);
  await assert.rejects(rt.backends.ensure('webgpu'), isDisposed);
  arr.dispose();
  addOne.dispose();
  rt.dispose(); // again: nothing
  rt[Symbol.dispose]();
  assert.equal(rt.disposed, true);
});

test('[Symbol.dispose] disposes; each backend is disposed once and listed as disposed', async () => {
  let disposed = 0;
  const backend = { name: 'counting', init() {}, dispose() { disposed += 1; } };
  const failing = { name: 'failing', init() {}, dispose() { throw new Error('stuck'); } };
  const warnings = [];
  const rt = await load({ autoloadBackends: false, backends: [backend, failing], logger: { log() {}, warn: (m) => warnings.push(m) } });
  rt[Symbol.dispose]();
  rt.dispose();
  assert.equal(disposed, 1);
  assert.deepEqual(warnings, ['webffi: backend failing failed to dispose: stuck']);
  assert.deepEqual(rt.backends.list().map((b) => `${b.name}:${b.status}`), ['cpu:ready', 'counting:disposed', 'failing:disposed']);
  assert.equal(rt.backends.register({ name: 'late', init() {} }), null, 'a disposed runtime takes no more backends');
});

test('disposing a runtime destroys the GPU device its WebGPU backend created', async () => {
  const rt = await load();
  const a = await rt.tensor(new Float32Array([1, 2, 3])).toDevice('webgpu');
  assert.deepEqual(Array.from(await a.data()), [1, 2, 3]);
  const engine = rt.backends.get('webgpu').engine;
  await engine.sync();
  rt.dispose();
  await assert.rejects(engine.sync(), (e) => e.kind === 'RuntimeError' && /the WebGPU device was lost \(reason "destroyed"/.test(e.message));
  await assert.rejects(a.data(), isDisposed);
  a.dispose();
  assert.deepEqual(rt.backends.list().map((b) => `${b.name}:${b.status}`), ['cpu:ready', 'webgpu:disposed']);
});

test('a Node GPU run prints none of Dawn\'s warnings about a Vulkan loader the machine lacks', () => {
  const script = `import { load } from ${JSON.stringify(`${root}js/index.js`)};
const rt = await load();
const t = await rt.tensor(new Float32Array([1, 2])).toDevice('webgpu');
console.log(Array.from(await t.data()).join(','));
rt.dispose();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '1,2\n');
  assert.doesNotMatch(r.stderr, /Vulkan/, r.stderr);
});

test('a RemoteRuntime\'s [Symbol.dispose] closes its session', async () => {
  const { port1, port2 } = new MessageChannel();
  const rt = await load({ autoloadBackends: false });
  const server = serve(rt, port1);
  const remote = await connectRuntime(port2, { timeout: 10000 });
  assert.equal(await remote.getGlobal('ffi.String')('x'), 'x');
  remote[Symbol.dispose]();
  assert.equal(remote.closed, true);
  await assert.rejects(remote.getGlobal('ffi.String')('y'), (e) => e instanceof RPCError && /session was closed/.test(e.message));
  server.close();
  port1.close();
  port2.close();
  rt.dispose();
});
