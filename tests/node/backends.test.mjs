// Backends registered at load: discovery (npm packages declaring a backend
// in package.json, the built-in WebGPU backend), explicit backends,
// priorities, failures reported once, the off switches and the CPU fallback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { load } from '../../js/index.js';
import { discoverBackends } from '../../js/backends/discover.js';
import { hostMemoryBackend } from '../fixtures/backend_app/node_modules/webffi-fixture-backend/backend.js';
import { loadTesting } from '../support/testing_module.mjs';

const appDir = fileURLToPath(new URL('../fixtures/backend_app/', import.meta.url));

function recordingLogger() {
  const warnings = [];
  return { warnings, logger: { log() {}, warn: (m) => warnings.push(m) } };
}

const names = (rt) => rt.backends.list().map((b) => `${b.name}:${b.status}`);

test('backend packages among the app dependencies are found through package.json', async () => {
  const { warnings, logger } = recordingLogger();
  const rt = await load({ appDir, logger });
  assert.deepEqual(names(rt), ['cpu:ready', 'webgpu:registered', 'fixture-ext-dev:registered', 'fixture-broken:registered']);
  assert.deepEqual(warnings, ['webffi: backend package webffi-fixture-bad-import could not be registered: fixture package is broken']);

  // The fixture serves ext_dev: C allocates and copies through it.
  const live = rt.getGlobal('fixture-ext-dev.live_buffers');
  const t = rt.tensor(new Int16Array([1, -2, 3]));
  const d = await t.toDevice('ext_dev');
  assert.equal(String(d), 'int16[3]@ext_dev:0');
  assert.deepEqual(Array.from(await d.data()), [1, -2, 3]);
  assert.deepEqual(Array.from((await d.toDevice('cpu')).view()), [1, -2, 3]);
  assert.equal(live(), 1);
  d.dispose(); // the C deleter frees through the backend
  assert.equal(live(), 0);
  assert.equal(rt.backends.list().find((b) => b.name === 'fixture-ext-dev').status, 'ready');
});

test('a backend that fails to initialise is reported once and remembered', async () => {
  const { warnings, logger } = recordingLogger();
  const rt = await loadTesting(await load({ appDir, logger }));
  warnings.length = 0;
  const first = await rt.backends.init('fixture-broken').catch((e) => e);
  const second = await rt.backends.init('fixture-broken').catch((e) => e);
  assert.equal(first.message, 'fixture device is missing');
  assert.equal(second, first);
  await assert.rejects(rt.backends.ensure('opencl'), (e) => e.kind === 'RuntimeError' &&
    e.message === 'No backend serves opencl: fixture-broken failed (fixture device is missing)');
  assert.deepEqual(warnings, ['webffi: backend fixture-broken is unavailable: fixture device is missing']);
  assert.equal(rt.backends.list().find((b) => b.name === 'fixture-broken').error, first);
  assert.equal(rt.getGlobal('testing.add_one')(1), 2);
});

test('the highest-priority backend that initialises serves its device type', async () => {
  const { warnings, logger } = recordingLogger();
  const rt = await load({
    autoloadBackends: false,
    logger,
    backends: [
      () => hostMemoryBackend({ name: 'low', priority: 1 }),
      () => hostMemoryBackend({ name: 'high', priority: 9, failInit: 'no high device' }),
      () => { throw new Error('factory broke'); },
      { name: 'not-a-backend' },
    ],
  });
  assert.deepEqual(warnings, [
    'webffi: backend high is unavailable: no high device',
    'webffi: backend load({ backends })[2] could not be registered: factory broke',
    'webffi: backend not-a-backend could not be registered: a backend is an object with a string `name` and an `init` function',
  ]);
  const d = await rt.tensor(new Float32Array([7])).toDevice('ext_dev');
  assert.equal(rt.getGlobal('low.live_buffers')(), 1);
  assert.equal(rt.getGlobal('high.live_buffers')(), 0);
  d.dispose();
});

test('discovery switched off by option: CPU only, and a clear error for other devices', async () => {
  const rt = await load({ appDir, autoloadBackends: false, logger: recordingLogger().logger });
  assert.deepEqual(names(rt), ['cpu:ready']);
  assert.equal(rt.getGlobal('webgpu.add', { optional: true }), null);
  const t = rt.tensor(new Float32Array([1, 2]));
  assert.deepEqual(Array.from(t.view()), [1, 2]);
  await assert.rejects(t.toDevice('webgpu'), (e) => e.kind === 'RuntimeError' &&
    e.message === 'No backend serves webgpu; none is registered for it');
  assert.throws(() => rt.empty([2], 'float32', 'webgpu'), (e) => e.kind === 'RuntimeError' &&
    /^No initialised backend serves webgpu: await rt\.backends\.ensure\('webgpu'\)/.test(e.message));
});

test('discovery switched off by WEBFFI_BACKEND_AUTOLOAD=0', async () => {
  process.env.WEBFFI_BACKEND_AUTOLOAD = '0';
  try {
    const rt = await load({ appDir, logger: recordingLogger().logger });
    assert.deepEqual(names(rt), ['cpu:ready']);
  } finally {
    delete process.env.WEBFFI_BACKEND_AUTOLOAD;
  }
});

test('an app without a package.json gets the built-in backends only', async () => {
  const rt = await load({ appDir: fileURLToPath(new URL('.', import.meta.url)), logger: recordingLogger().logger });
  assert.deepEqual(names(rt), ['cpu:ready', 'webgpu:registered']);
});

test('without the webgpu package in Node, asking for WebGPU says to install it', async () => {
  const rt = await load({ autoloadBackends: false, logger: recordingLogger().logger });
  // Discovery as in an app where `import('webgpu')` finds nothing.
  await discoverBackends(rt.backends, {
    appDir: fileURLToPath(new URL('.', import.meta.url)),
    logger: recordingLogger().logger,
    importPackage: async () => null,
  });
  assert.deepEqual(names(rt), ['cpu:ready']);
  const fix = 'WebGPU in Node comes from the `webgpu` package: npm install webgpu';
  const t = rt.tensor(new Float32Array([1]));
  await assert.rejects(t.toDevice('webgpu'), (e) => e.kind === 'RuntimeError' &&
    e.message === `No backend serves webgpu; none is registered for it (${fix})`);
  await assert.rejects(rt.backends.ensure('webgpu'), (e) => e.message.endsWith(`(${fix})`));
  assert.throws(() => rt.empty([1], 'float32', 'webgpu'), (e) => e.kind === 'RuntimeError' && e.message.endsWith(`(${fix})`));
});

test('the app is found from its entry module, not from the working directory', () => {
  const entry = fileURLToPath(new URL('../fixtures/backend_app/main.mjs', import.meta.url));
  const env = { ...process.env };
  delete env.WEBFFI_BACKEND_AUTOLOAD;
  const found = JSON.parse(execFileSync(process.execPath, [entry], { cwd: tmpdir(), env, encoding: 'utf8' }));
  assert.deepEqual(found, ['cpu', 'webgpu', 'fixture-ext-dev', 'fixture-broken']);
  // The off switch still holds for such an app.
  const off = JSON.parse(execFileSync(process.execPath, [entry], {
    cwd: tmpdir(), env: { ...env, WEBFFI_BACKEND_AUTOLOAD: '0' }, encoding: 'utf8',
  }));
  assert.deepEqual(off, ['cpu']);
});
