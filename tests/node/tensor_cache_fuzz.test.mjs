// web-llm tensor caches that change, lie or point elsewhere, generated
// (docs/security.md, "Tensor caches"): records whose fields answer one
// value when checked and another later, an onProgress that rewrites the
// index, shards served over http (127.0.0.1 only) shorter, longer or
// without end, dataPaths naming local files, other origins and other
// schemes, local paths that are directories, devices or too long, and
// loads refused because the name is already cached. Each load either
// gives exactly the bytes of the shards as they were first read or a
// ValueError/TypeError with nothing added; nothing is read from elsewhere,
// an endless shard stops being read at its declared size, and what a
// refused load made is released (host and GPU memory back where it was).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { load, FFIError } from '../../js/index.js';
import { loadTensorCache, RelaxVM } from '../../js/model_library.js';
import { webgpuRuntimeBackend } from '../../js/backends/webgpu_runtime.js';
import { nodeGPU } from '../support/webgpu_node.mjs';
import { modelPath, ARCTIC_S, libraryParams, makeTensorCache, writeTensorCache } from '../support/model_fixture.mjs';
import { check } from '../support/seeded.mjs';

const gpu = nodeGPU();
const quiet = { log() {}, warn() {} };
const rt = await load({
  wasm: fs.readFileSync(modelPath(ARCTIC_S)), autoloadBackends: false, backends: [webgpuRuntimeBackend(() => gpu)], logger: quiet,
});
await rt.backends.ensure('webgpu');
const engine = rt.backends.get('webgpu').engine;
const cacheGet = rt.getGlobal('vm.builtin.tensor_cache.get');
const cacheClear = rt.getGlobal('vm.builtin.tensor_cache.clear');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'webffi-tc-fuzz-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// ---- generated caches -------------------------------------------------------

const DTYPES = { float32: 4, int32: 4, int8: 1, uint16: 2, float64: 8 };
const recordArb = fc.record({
  dtype: fc.constantFrom(...Object.keys(DTYPES)),
  shape: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 }),
  bf16: fc.boolean(),
  pad: fc.nat(8),
});
const cacheArb = fc.array(fc.array(recordArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 });

/**
 * A tensor cache from the generated layout: { index, shards, expected }
 * where expected maps each name to the bytes its tensor must hold.
 */
function buildCache(layout, seed = 1) {
  let s = seed >>> 0;
  const byte = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
  const index = { metadata: { generated: true }, records: [] };
  const shards = {};
  const expected = new Map();
  let n = 0;
  layout.forEach((recs, k) => {
    const parts = [];
    let at = 0;
    const records = recs.map((r) => {
      const name = `p${n++}`;
      const count = r.shape.reduce((a, b) => a * b, 1);
      const bf16 = r.bf16 && r.dtype === 'float32';
      let stored;
      let tensor;
      if (bf16) {
        stored = new Uint8Array(count * 2).map(byte);
        tensor = new Uint8Array(count * 4);
        for (let i = 0; i < count; i++) tensor.set([0, 0, stored[2 * i], stored[2 * i + 1]], 4 * i);
      } else {
        stored = new Uint8Array(count * DTYPES[r.dtype]).map(byte);
        tensor = stored;
      }
      at += r.pad;
      const rec = { name, shape: r.shape, dtype: r.dtype, format: bf16 ? 'f32-to-bf16' : 'raw', nbytes: stored.byteLength, byteOffset: at };
      parts.push([at, stored]);
      at += stored.byteLength;
      expected.set(name, tensor);
      return rec;
    });
    const bytes = new Uint8Array(at).map(byte);
    for (const [o, p] of parts) bytes.set(p, o);
    const dataPath = `shard_${k}.bin`;
    shards[dataPath] = bytes;
    index.records.push({ dataPath, format: 'raw-shard', nbytes: at, records });
  });
  return { index, shards, expected };
}

/** The bytes of the cached tensor under `name` (null when there is none). */
async function cached(name) {
  const t = cacheGet(name);
  if (t === null) return null;
  try {
    const v = await t.data();
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
  } finally {
    t.dispose();
  }
}

/** Every expected tensor is cached with exactly its bytes. */
async function assertLoaded(expected, what) {
  for (const [name, bytes] of expected) assert.deepEqual(await cached(name), bytes, `${what}: ${name}`);
}

/** A refusal is webffi's ValueError/TypeError, and nothing of the cache was added. */
async function assertRefused(e, expected, pattern, what) {
  assert.ok(e instanceof FFIError && (e.kind === 'ValueError' || e.kind === 'TypeError'), `${what}: ${e?.constructor?.name}: ${e?.stack ?? e}`);
  if (pattern) assert.match(e.message, pattern, what);
  for (const name of expected.keys()) assert.equal(await cached(name), null, `${what}: ${name} was added`);
}

// Canaries around what the loads allocate: an out-of-bounds write into the
// library's heap shows up as changed bytes here (or a trap).
const canaries = Array.from({ length: 16 }, (_, i) => rt.tensor(new Int32Array(1024).fill(0x5a5a0000 + i)));
function assertCanaries() {
  canaries.forEach((t, i) => assert.ok(t.toTypedArray().every((v) => v === 0x5a5a0000 + i), `canary ${i} overwritten`));
  assert.equal(rt.getGlobal('testing.add_one')(41), 42, 'the runtime works');
}

// ---- servers (set up before any test: node:test must not wait on them) ----

/**
 * A server on 127.0.0.1: `routes` maps a path to { body, mode } where mode
 * is 'exact', 'chunked' (no Content-Length), or 'endless' (bytes until the
 * client goes away). `sent` counts the body bytes written per path.
 */
function serveRoutes() {
  const routes = new Map();
  const sent = new Map();
  const requests = [];
  const server = http.createServer((req, res) => {
    const route = routes.get(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    requests.push(req.url);
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    const count = (n) => sent.set(req.url, (sent.get(req.url) ?? 0) + n);
    if (route.mode === 'endless') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = new Uint8Array(64 << 10).fill(7);
      let open = true;
      res.on('close', () => { open = false; });
      const pump = () => {
        while (open && (sent.get(req.url) ?? 0) < 1 << 30) {
          count(chunk.length);
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (open) res.end();
      };
      pump();
      return;
    }
    const headers = { 'content-type': 'application/octet-stream' };
    if (route.mode === 'exact') headers['content-length'] = route.body.byteLength;
    res.writeHead(200, headers);
    count(route.body.byteLength);
    res.end(route.body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    server, routes, sent, requests, port: server.address().port,
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  })));
}

const home = await serveRoutes();
const elsewhere = await serveRoutes(); // another origin: must never be asked
after(() => Promise.all([home.close(), elsewhere.close()]));
const secret = path.join(tmp, 'secret.bin');
fs.writeFileSync(secret, new Uint8Array(64).fill(9));

// ---- records that change, lie, or are rewritten by onProgress ---------------

const FIELDS = ['nbytes', 'byteOffset', 'shape', 'dtype', 'name', 'format'];
const lieArb = fc.constantFrom(1 << 20, 2 ** 31, -1, 0, 3, [1 << 16], [], 'float64', 'int8', 'other', 'f32-to-bf16', null);

test('property: a record or shard that answers one thing when checked and another later loads what was checked', { timeout: 300000 }, async (t) => {
  await check(t, import.meta.url, fc.asyncProperty(
    cacheArb, fc.nat(), fc.constantFrom('record', 'shard', 'progress', 'proxy'), fc.constantFrom(...FIELDS), lieArb, fc.nat(3),
    fc.constantFrom('cpu', 'webgpu'),
    async (layout, pick, where, field, lie, truthful, device) => {
      cacheClear();
      const { index, shards, expected } = buildCache(layout, pick);
      const shard = index.records[pick % index.records.length];
      const record = shard.records[pick % shard.records.length];
      let onProgress;
      let lied = 0;
      const liar = (obj, key) => {
        const truth = obj[key];
        let reads = 0;
        Object.defineProperty(obj, key, { get: () => (reads++ < truthful ? truth : (lied++, lie)), enumerable: true, configurable: true });
      };
      if (where === 'record') liar(record, field);
      else if (where === 'shard') liar(shard, ['nbytes', 'dataPath', 'records'][pick % 3]);
      else if (where === 'proxy') {
        // The record list, read through a Proxy that changes its answers.
        let reads = 0;
        shard.records = new Proxy(shard.records, { get: (target, key) => (key === 'length' && reads++ > truthful ? 1e6 : target[key]) });
        liar(record, field);
      } else {
        onProgress = () => {
          record[field] = lie;
          shard.nbytes = 1 << 24;
          index.records.push({ dataPath: 'added.bin', nbytes: 4, records: [{ name: 'added', shape: [1], dtype: 'int32', nbytes: 4, byteOffset: 0 }] });
        };
      }
      // A lie told at the first read is what the loader sees: it may be
      // valid (then it is loaded as told) or not (refused).
      const firstReadLies = truthful === 0 && where !== 'progress';
      let result;
      try {
        result = await loadTensorCache(rt, { index, shards }, { device, onProgress, concurrency: 1 + (pick % 3) });
      } catch (e) {
        assert.ok(firstReadLies, `refused though every first read was valid (${where} ${field}): ${e.stack}`);
        await assertRefused(e, expected, null, `${where}.${field} = ${JSON.stringify(lie)}`);
        assertCanaries();
        return;
      }
      if (firstReadLies) {
        assertCanaries();
        return;
      }
      assert.deepEqual(result.names, [...expected.keys()]);
      await assertLoaded(expected, `${where}.${field} lying after ${truthful} reads (${lied} lies told)`);
      assert.equal(await cached('added'), null, 'a record added by onProgress is not loaded');
      assertCanaries();
    }), 60);
});

// ---- shards served over http ------------------------------------------------


const SIZE = /has \d+ bytes, the index says|has more than the \d+ bytes the index says/;
const attackArb = fc.oneof(
  fc.constant({ kind: 'exact' }),
  fc.record({ kind: fc.constant('short'), by: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('long'), by: fc.integer({ min: 1, max: 1 << 20 }), mode: fc.constantFrom('exact', 'chunked') }),
  fc.constant({ kind: 'endless' }),
  fc.record({ kind: fc.constant('elsewhere'), to: fc.constantFrom('file-secret', 'file-zero', 'file-etc', 'other-port', 'localhost', 'https', 'data', 'blob', 'protocol-relative') }),
);

test('property: shards over http are read from the index\'s origin only, and no further than the index says', { timeout: 120000 }, async (t) => {
  let run = 0;
  await check(t, import.meta.url, fc.asyncProperty(cacheArb, fc.array(attackArb, { minLength: 1, maxLength: 3 }), fc.boolean(),
    async (layout, attacks, useCacheDir) => {
      cacheClear();
      const dir = `/c${run++}/`;
      const { index, shards, expected } = buildCache(layout, run);
      const elsewhereBefore = elsewhere.requests.length;
      let refusal = null;
      index.records.forEach((shard, i) => {
        const attack = i < attacks.length ? attacks[i] : { kind: 'exact' };
        const body = shards[shard.dataPath];
        const route = `${dir}${shard.dataPath}`;
        switch (attack.kind) {
          case 'exact': home.routes.set(route, { body, mode: 'exact' }); break;
          case 'short':
            home.routes.set(route, { body: body.subarray(0, Math.max(0, body.length - attack.by)), mode: 'chunked' });
            refusal ??= SIZE;
            break;
          case 'long': {
            const longer = new Uint8Array(body.length + attack.by);
            longer.set(body);
            home.routes.set(route, { body: longer, mode: attack.mode });
            refusal ??= SIZE;
            break;
          }
          case 'endless':
            home.routes.set(route, { body, mode: 'endless' });
            refusal ??= SIZE;
            break;
          default: {
            shard.dataPath = {
              'file-secret': pathToFileURL(secret).href, 'file-zero': 'file:///dev/zero', 'file-etc': 'file:///etc/hostname',
              'other-port': `http://127.0.0.1:${elsewhere.port}${route}`, localhost: `http://localhost:${home.port}${route}`,
              https: `https://127.0.0.1:${home.port}${route}`, data: 'data:application/octet-stream;base64,AAAA',
              blob: `blob:http://127.0.0.1:${home.port}/x`, 'protocol-relative': `//127.0.0.1:${elsewhere.port}${route}`,
            }[attack.to];
            elsewhere.routes.set(route, { body, mode: 'exact' });
            refusal = /outside the index's origin/; // refused before any shard is read
          }
        }
      });
      home.routes.set(`${dir}tensor-cache.json`, { body: new TextEncoder().encode(JSON.stringify(index)), mode: 'chunked' });
      const cache = useCacheDir ? { dir: path.join(tmp, 'shard-cache') } : false;
      const started = Date.now();
      try {
        await loadTensorCache(rt, `http://127.0.0.1:${home.port}${dir}`, { device: 'cpu', cache });
        assert.equal(refusal, null, `loaded though it should be refused (${JSON.stringify(attacks)})`);
        await assertLoaded(expected, 'http');
      } catch (e) {
        assert.ok(refusal, `refused an honest cache: ${e.stack}`);
        await assertRefused(e, expected, refusal, JSON.stringify(attacks));
      }
      assert.ok(Date.now() - started < 20000, 'bounded time');
      assert.equal(elsewhere.requests.length, elsewhereBefore, 'another origin was asked');
      for (const [url, n] of home.sent) {
        if (url.startsWith(dir)) assert.ok(n < 64 << 20, `${url}: ${n} bytes sent before the reader stopped`);
      }
    }), 40);
});

test('the index itself is bounded: an endless tensor-cache.json stops at 64 MiB', { timeout: 120000 }, async () => {
  home.routes.set('/endless-index/tensor-cache.json', { body: null, mode: 'endless' });
  await assert.rejects(loadTensorCache(rt, `http://127.0.0.1:${home.port}/endless-index/`, { device: 'cpu' }),
    (e) => e.kind === 'ValueError' && /the index has more than the 67108864 bytes an index may have/.test(e.message));
  const sent = home.sent.get('/endless-index/tensor-cache.json');
  assert.ok(sent < 96 << 20, `${sent} bytes sent`);
});

// ---- local paths that are not a shard ---------------------------------------

test('property: local dataPaths that are directories, devices, missing or too long give webffi\'s ValueError', { timeout: 120000 }, async (t) => {
  fs.mkdirSync(path.join(tmp, 'local', 'a-directory'), { recursive: true });
  await check(t, import.meta.url, fc.asyncProperty(
    fc.oneof(
      fc.constant(['a-directory', /is a directory/]),
      fc.constant(['a-directory/', /is a directory/]),
      fc.constant(['/dev/zero', /is not a regular file/]),
      fc.constant(['/dev/urandom', /is not a regular file/]),
      fc.integer({ min: 256, max: 8000 }).map((n) => ['x'.repeat(n), /its path is too long/]),
      fc.integer({ min: 1, max: 40 }).map((n) => [`${'d/'.repeat(n)}missing.bin`, /does not exist/]),
      fc.constant(['secret.bin/inside', /does not exist/]),
    ),
    fc.integer({ min: 1, max: 4096 }),
    async ([dataPath, pattern], nbytes) => {
      const count = Math.ceil(nbytes / 4);
      const index = { records: [{ dataPath, nbytes: count * 4, records: [{ name: 'w', shape: [count], dtype: 'float32', nbytes: count * 4, byteOffset: 0 }] }] };
      const dir = path.join(tmp, 'local');
      fs.writeFileSync(path.join(dir, 'tensor-cache.json'), JSON.stringify(index));
      fs.copyFileSync(secret, path.join(dir, 'secret.bin'));
      cacheClear();
      await assert.rejects(loadTensorCache(rt, dir, { device: 'cpu' }), (e) => {
        assert.ok(e instanceof FFIError && e.kind === 'ValueError' && !('code' in e), `${dataPath.slice(0, 40)}: ${e?.stack}`);
        assert.match(e.message, pattern);
        return true;
      });
    }), 30);
});

// ---- names already cached ----------------------------------------------------

test('property: loads refused because a name is cached, and reloads, leave host and GPU memory where they were', { timeout: 300000 }, async (t) => {
  const big = (name, n) => ({ name, shape: [n], dtype: 'float32', nbytes: 4 * n, byteOffset: 0 });
  const cacheOf = (name, n, fill) => ({
    index: { records: [{ dataPath: 's.bin', nbytes: 4 * n, records: [big(name, n)] }] },
    shards: { 's.bin': new Float32Array(n).fill(fill) },
  });
  cacheClear();
  const baseline = engine.info().bytesAllocated;
  const heap = () => rt.exports.memory.buffer.byteLength;
  await check(t, import.meta.url, fc.asyncProperty(
    fc.array(fc.record({ n: fc.constantFrom(1 << 16, 1 << 18), override: fc.boolean(), fill: fc.integer({ min: 1, max: 100 }) }), { minLength: 4, maxLength: 12 }),
    fc.constantFrom('cpu', 'webgpu'),
    async (steps, device) => {
      cacheClear();
      const heapBefore = heap();
      let held = null; // [n, fill] of what the cache holds
      for (let round = 0; round < 3; round++) {
        for (const { n, override, fill } of steps) {
          try {
            await loadTensorCache(rt, cacheOf('w', n, fill), { device, override });
            assert.ok(held === null || (override && held[0] === n), `loaded over ${held} with override ${override}, n ${n}`);
            held = [n, fill];
          } catch (e) {
            assert.ok(e instanceof FFIError && e.kind === 'ValueError' && /already in the cache|override copies into it/.test(e.message), e.stack);
            assert.ok(held !== null, 'refused with nothing cached');
          }
          const v = new Float32Array((await cached('w')).buffer);
          assert.equal(v.length, held[0]);
          assert.ok(v.every((x) => x === held[1]), 'the cached tensor holds the last accepted load');
        }
      }
      cacheClear();
      // The backend keeps freed buffers for reuse: what it has allocated is
      // a high-water mark, which leaked tensors would raise with every step.
      assert.ok(engine.info().bytesAllocated - baseline <= 4 << 20, `GPU memory grew ${(engine.info().bytesAllocated - baseline) >> 20} MiB`);
      assert.ok(heap() - heapBefore <= 4 << 20, `host memory grew ${(heap() - heapBefore) >> 20} MiB`);
    }), 15);
});

test('a model\'s weights loaded twice: refused without override (nothing leaks), replaced in place with it', { timeout: 300000 }, async () => {
  const params = await libraryParams(modelPath(ARCTIC_S));
  const dir = writeTensorCache(path.join(tmp, 'arctic'), makeTensorCache(params));
  cacheClear();
  const vm = await RelaxVM.create(rt, { pipelines: false });
  try {
    await vm.loadParams(dir);
    const heap = rt.exports.memory.buffer.byteLength;
    const gpuBytes = engine.info().bytesAllocated;
    for (let i = 0; i < 10; i++) {
      await assert.rejects(vm.loadParams(dir), (e) => e.kind === 'ValueError' && /already in the cache \(pass override: true/.test(e.message));
    }
    assert.equal(engine.info().bytesAllocated, gpuBytes, 'refused reloads leave GPU memory as it was');
    assert.equal(rt.exports.memory.buffer.byteLength, heap, 'refused reloads leave the heap as it was');
    await vm.loadParams(dir, { override: true });
    assert.equal(vm.params.length, 149);
    const replaced = engine.info().bytesAllocated; // the new tensors, copied into the cached ones and released
    for (let i = 0; i < 3; i++) await vm.loadParams(dir, { override: true });
    assert.equal(engine.info().bytesAllocated, replaced, 'overrides reuse what the first one released');
    assert.equal(rt.exports.memory.buffer.byteLength, heap, 'and the heap stays as it was');
  } finally {
    vm.dispose();
  }
});
