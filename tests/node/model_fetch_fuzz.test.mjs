// `webffi model fetch` against hostile servers (docs/security.md, "model
// files fetched"), generated: indexes whose shard names climb out of the
// folder (.., absolute paths, URLs, backslashes, odd characters), sizes and
// hashes that are wrong or not numbers, and servers whose bodies are
// shorter, longer, cut, unranged or errors. Whatever comes, fetchModel
// resolves or rejects with its own error; nothing is written outside the
// output folder; a file in its final place is exactly what the index says
// (size and md5), and the index is written only when every shard is.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { fetchModel, ModelFetchError, checkFileName } from '../../bin/model.mjs';
import { startModelServer } from '../support/model_server.mjs';
import { check } from '../support/seeded.mjs';

const server = await startModelServer();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'webffi-fetch-fuzz-'));
after(async () => {
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
const md5 = (bytes) => createHash('md5').update(bytes).digest('hex');

const nameArb = fc.oneof(
  { arbitrary: fc.constantFrom('params_shard_0.bin', 'params_shard_1.bin', 'sub/params_shard_2.bin', 'a.bin'), weight: 16 },
  { arbitrary: fc.constantFrom('../escape.bin', '../../escape.bin', 'sub/../../escape.bin', '/etc/escape.bin', '..', '.', '',
    'http://127.0.0.2/escape.bin', '//127.0.0.2/escape.bin', 'a\\..\\..\\escape.bin', '%2e%2e/escape.bin', 'a\u0000b.bin',
    'tensor-cache.json', 'x'.repeat(300), `${'d/'.repeat(12)}deep.bin`, 'é.bin', 'a b.bin'), weight: 3 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
  { arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.constant({ a: 1 })), weight: 1 },
);
const shardArb = fc.record({
  name: nameArb,
  size: fc.integer({ min: 0, max: 3000 }),
  nbytes: fc.oneof(
    { arbitrary: fc.constant('right'), weight: 12 },
    { arbitrary: fc.constantFrom(-1, 1.5, '12', null, 2 ** 53, 1e12), weight: 1 },
    { arbitrary: fc.integer({ min: -3, max: 3 }).map((d) => ({ off: d })), weight: 2 },
  ),
  md5: fc.oneof({ arbitrary: fc.constantFrom('right', 'absent'), weight: 8 }, { arbitrary: fc.constantFrom('wrong', 'garbage'), weight: 1 }),
  mode: fc.oneof({ arbitrary: fc.constantFrom('normal', 'chunked', 'no-range'), weight: 12 },
    { arbitrary: fc.constantFrom('cut', 'missing', 'status', 'longer', 'shorter'), weight: 2 }),
  part: fc.constantFrom(null, null, 0, 10, 'junk'), // a .part left from before
});
const caseArb = fc.record({
  shards: fc.array(shardArb, { maxLength: 5 }),
  indexName: fc.constantFrom('tensor-cache.json', 'ndarray-cache.json'),
  indexMode: fc.constantFrom('json', 'json', 'json', 'garbage', 'no-records', 'not-object'),
});

let run = 0;
const servedAt = (prefix, name) => {
  try {
    return decodeURIComponent(new URL(prefix + name, 'http://x').pathname);
  } catch {
    return prefix + name;
  }
};
const outcomes = { resolved: 0, rejected: 0 };
test('property: a hostile index or server never writes outside the folder, nor a wrong file in place', { timeout: 300000 }, async (t) => {
  await check(t, import.meta.url, fc.asyncProperty(caseArb, async ({ shards, indexName, indexMode }) => {
    run++;
    const prefix = `/r${run}/o/m/resolve/main/`;
    const root = path.join(tmp, `run${run}`);
    const out = path.join(root, 'out');
    fs.mkdirSync(out, { recursive: true });
    const records = [];
    const expected = new Map(); // the shards that can be right: name -> bytes
    for (const [i, s] of shards.entries()) {
      const bytes = new Uint8Array(s.size).map((_, j) => (i * 31 + j) & 255);
      const nbytes = s.nbytes === 'right' ? bytes.length : typeof s.nbytes === 'object' && s.nbytes ? bytes.length + s.nbytes.off : s.nbytes;
      const record = { dataPath: s.name, format: 'raw-shard', nbytes, records: [] };
      if (s.md5 === 'right') record.md5sum = md5(bytes);
      else if (s.md5 === 'wrong') record.md5sum = md5(Buffer.concat([bytes, Buffer.from([1])]));
      else if (s.md5 === 'garbage') record.md5sum = 'zz';
      records.push(record);
      if (typeof s.name === 'string') {
        let body = bytes;
        if (s.mode === 'longer') body = Buffer.concat([bytes, Buffer.from([7, 7])]);
        if (s.mode === 'shorter') body = bytes.subarray(0, Math.max(0, bytes.length - 2));
        const route = { body, mode: ['longer', 'shorter'].includes(s.mode) ? 'normal' : s.mode, status: 503, cutAt: bytes.length >> 1 };
        // served where the name resolves (.. climbing), so a tool that
        // followed it would get the bytes and write them
        if (s.mode !== 'missing') server.routes.set(servedAt(prefix, s.name), route);
        if (typeof s.part === 'number' || s.part === 'junk') {
          try {
            const file = path.join(out, `${s.name}.part`);
            if (file.startsWith(out + path.sep) && checkFileName(s.name, 'test')) {
              fs.mkdirSync(path.dirname(file), { recursive: true });
              fs.writeFileSync(file, s.part === 'junk' ? Buffer.alloc(5000, 9) : bytes.subarray(0, s.part));
            }
          } catch {
            // a name the tool refuses: no part for it
          }
        }
        expected.set(s.name, { bytes: Buffer.from(body), nbytes, md5: record.md5sum });
      }
    }
    const index = indexMode === 'json' ? { records } : indexMode === 'no-records' ? { shards: records } : [records];
    server.routes.set(prefix + indexName, { body: Buffer.from(indexMode === 'garbage' ? '{"records": [' : JSON.stringify(index)) });

    let result = null;
    try {
      result = await fetchModel({ repo: `${server.url}${prefix}`, out, concurrency: 2 });
      outcomes.resolved++;
    } catch (e) {
      outcomes.rejected++;
      assert.ok(e instanceof ModelFetchError, `not the tool's error: ${e?.stack ?? e}`);
    }
    // Nothing outside the output folder, ever.
    assert.deepEqual(fs.readdirSync(root), ['out']);
    // Every file in its final place is what the index says of it.
    const finals = [];
    const walk = (dir) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (!entry.name.endsWith('.part')) finals.push(path.relative(out, file).split(path.sep).join('/'));
      }
    };
    walk(out);
    for (const name of finals) {
      if (name === indexName) continue;
      const e = expected.get(name);
      assert.ok(e, `${name} written, not a shard the index names`);
      const got = fs.readFileSync(path.join(out, name));
      assert.equal(got.length, e.nbytes, `${name}: the index's size`);
      assert.deepEqual(got, e.bytes, `${name}: the bytes served`);
      if (e.md5) assert.equal(md5(got), e.md5, `${name}: the index's md5`);
    }
    if (result) {
      assert.ok(finals.includes(indexName), 'the index written');
      assert.equal(result.files.length, records.length);
      for (const r of records) assert.ok(finals.includes(r.dataPath), `${r.dataPath} fetched`);
    } else {
      assert.ok(!finals.includes(indexName), 'no index when a shard failed');
    }
    fs.rmSync(root, { recursive: true, force: true });
  }), 60);
  t.diagnostic(`${outcomes.resolved} fetched, ${outcomes.rejected} refused`);
  assert.ok(outcomes.resolved >= 10 && outcomes.rejected >= 10, JSON.stringify(outcomes));
});

test('a repository name or URL that is neither is refused, as are revisions that climb', async () => {
  for (const repo of ['../x', 'a/../../b', 'a/b/c', 'file:///etc/', 'ftp://h/x', 'a b/c']) {
    await assert.rejects(fetchModel({ repo, out: path.join(tmp, 'never') }), (e) => e instanceof ModelFetchError && /neither a HuggingFace repository/.test(e.message), repo);
  }
  await assert.rejects(fetchModel({ repo: 'a/b', revision: '../../x', out: path.join(tmp, 'never') }), /not a branch, tag or commit/);
  await assert.rejects(fetchModel({ lib: '../x.wasm', out: path.join(tmp, 'never') }), /not a plain relative path/);
  assert.ok(!fs.existsSync(path.join(tmp, 'never')));
});
