// webffi model: the files a model library needs, online and offline.
//   fetch    a model's library (.wasm) and its weights (web-llm's tensor
//            cache: tensor-cache.json or ndarray-cache.json and the shards
//            it lists) from a HuggingFace repository's layout
//            (REPO/resolve/REVISION/FILE) or any URL with that layout;
//            every file checked (sizes, and hashes where they are known),
//            downloads resumed from their .part files with Range requests,
//            progress on stderr (one updating line on a terminal)
//   weights  seeded random weights from a library's own _metadata, in the
//            same format, for tests and offline work
// The index comes from the network: what it names is checked before a
// byte is written (docs/security.md, "model files fetched").
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const USAGE = `usage: webffi model fetch [REPO | URL] [--lib NAME | URL] [--lib-sha256 HEX] [--out DIR]
                          [--revision REV] [--concurrency N]
       webffi model weights LIBRARY.wasm --out DIR [--seed N] [--scale X] [--shard-mb N]

fetch:
  REPO          a HuggingFace repository (owner/name, as mlc-ai/snowflake-arctic-embed-s-q0f32-MLC):
                its files are read from $HF_ENDPOINT (default https://huggingface.co)
                /REPO/resolve/REV/; or a URL of a folder with that layout
  --lib NAME|URL
                the model library: a URL, or a file name of web-llm's libraries
                (mlc-ai/binary-mlc-llm-libs, web-llm-models/v0_2_80), whose sha256 is checked
  --lib-sha256 HEX
                the library's sha256 (checked; known for the libraries named by NAME)
  --out DIR     where the files go (default: the repository's name; the library alone: .)
  --revision REV
                the repository's branch, tag or commit (default main)
  --concurrency N
                shards downloaded at once (default 4)
  Files already there with the right size (and hash, where known) are kept; a
  .part file left by an interrupted download is continued. A file whose size
  or hash is not what the index says is refused, and nothing is written in its
  place.
weights:
  writes tensor-cache.json and params_shard_*.bin for LIBRARY.wasm's parameters
  (float32 ones), seeded: the same seed gives the same bytes
  --seed N      the seed (default 42)
  --scale X     values uniform in [-X/2, X/2) (default 0.1); norm scales are 1
  --shard-mb N  the largest shard, in MiB (default 32)`;

/** Where web-llm's model libraries are published (the commit the tests use). */
export const LIBRARY_SOURCE = 'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/9ee759c/web-llm-models/v0_2_80/';
/** The sha256 of the libraries webffi is tested with, by file name. */
export const KNOWN_LIBRARIES = Object.freeze({
  'snowflake-arctic-embed-s-q0f32-ctx512_cs512_batch4-webgpu.wasm': 'a7bc8e46a7abe947ccd3cdd0df8c9f473eb638975e2122ec3ace9796d0a6d5db',
  'snowflake-arctic-embed-m-q0f32-ctx512_cs512_batch4-webgpu.wasm': '0e0e1dc486f9478c4b6aa5ed6bdb7a2fdd9ffe177d0b7fb0ddaa415f5cb20a74',
});
/** The index's names, web-llm's first (as loadTensorCache looks for them). */
export const INDEX_NAMES = Object.freeze(['tensor-cache.json', 'ndarray-cache.json']);
/** The most bytes an index may have (as loadTensorCache). */
const INDEX_LIMIT = 64 << 20;
/** The most bytes a file of unknown size (a library, a tokenizer file) may have. */
const FILE_LIMIT = 1 << 30;
/** The most shards an index may list, and path segments a file name may have. */
const MAX_SHARDS = 1 << 16;
const MAX_SEGMENTS = 8;

/** An error of this tool: the message says what and where; `resumable` when running again continues. */
export class ModelFetchError extends Error {
  constructor(message, { resumable = false } = {}) {
    super(message);
    this.name = 'ModelFetchError';
    this.resumable = resumable;
  }
}
const fail = (message, options) => new ModelFetchError(message, options);

/**
 * A file name the index (or the config) gives, checked: a relative path of
 * plain segments (letters, digits, `_`, `-`, `.`; no `.` or `..` segment),
 * so it stays inside the output folder and under the index's URL.
 */
export function checkFileName(name, what) {
  if (typeof name !== 'string' || name.length === 0 || name.length > 255) {
    throw fail(`${what}: file name ${JSON.stringify(name)?.slice(0, 100) ?? String(name)} is not a relative path of at most 255 characters`);
  }
  const segments = name.split('/');
  if (segments.length > MAX_SEGMENTS || !segments.every((s) => /^[\w.-]+$/.test(s) && s !== '.' && s !== '..')) {
    throw fail(`${what}: file name ${JSON.stringify(name)} is not a plain relative path (letters, digits, _ - . and /, no . or .. segment)`);
  }
  return name;
}

/**
 * The shards an index lists, checked: { dataPath, nbytes, md5, sha256 }
 * for each (hashes where the index records them), every name a plain
 * relative path, named once.
 */
export function indexShards(index) {
  const records = index && typeof index === 'object' && !Array.isArray(index) ? index.records : undefined;
  if (!Array.isArray(records)) throw fail('the index has no `records` list (expected web-llm\'s tensor-cache.json or ndarray-cache.json)');
  if (records.length > MAX_SHARDS) throw fail(`the index lists ${records.length} shards, more than ${MAX_SHARDS}`);
  const seen = new Set();
  return records.map((shard, i) => {
    if (!shard || typeof shard !== 'object') throw fail(`shard ${i} of the index is not an object`);
    const dataPath = checkFileName(shard.dataPath, `shard ${i}`);
    if (seen.has(dataPath) || INDEX_NAMES.includes(dataPath)) throw fail(`shard ${i}: ${dataPath} is named twice (or is the index)`);
    seen.add(dataPath);
    const { nbytes, md5sum, sha256 } = shard;
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) throw fail(`shard ${dataPath}: invalid nbytes ${JSON.stringify(nbytes)?.slice(0, 40)}`);
    if (md5sum !== undefined && !(typeof md5sum === 'string' && /^[0-9a-f]{32}$/i.test(md5sum))) throw fail(`shard ${dataPath}: invalid md5sum`);
    if (sha256 !== undefined && !(typeof sha256 === 'string' && /^[0-9a-f]{64}$/i.test(sha256))) throw fail(`shard ${dataPath}: invalid sha256`);
    return { name: dataPath, size: nbytes, md5: md5sum?.toLowerCase(), sha256: sha256?.toLowerCase() };
  });
}

/** The folder URL a repository or URL names (with its trailing /). */
export function modelBase(repoOrUrl, { revision = 'main', endpoint = process.env.HF_ENDPOINT || 'https://huggingface.co' } = {}) {
  if (/^https?:\/\//i.test(repoOrUrl)) return new URL(repoOrUrl.endsWith('/') ? repoOrUrl : `${repoOrUrl}/`);
  if (!/^[\w.-]+\/[\w.-]+$/.test(repoOrUrl) || repoOrUrl.split('/').some((s) => s === '.' || s === '..')) {
    throw fail(`${JSON.stringify(repoOrUrl)} is neither a HuggingFace repository (owner/name) nor an http(s) URL`);
  }
  if (!/^[\w.\-/]+$/.test(revision) || revision.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw fail(`revision ${JSON.stringify(revision)} is not a branch, tag or commit name`);
  }
  return new URL(`${repoOrUrl}/resolve/${revision}/`, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
}

/** The folder a repository's files go to by default: its name (the segment before resolve/, else the last). */
function defaultFolder(base) {
  const segments = base.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const at = segments.indexOf('resolve');
  const name = at > 0 ? segments[at - 1] : segments.at(-1);
  return name && /^[\w.-]+$/.test(name) && name !== '..' && name !== '.' ? name : 'model';
}

/** The URL and expected sha256 of a library given by URL or by a file name of web-llm's libraries. */
export function libraryURL(lib, sha256) {
  let url;
  if (/^https?:\/\//i.test(lib)) {
    url = new URL(lib);
  } else {
    checkFileName(lib, '--lib');
    if (lib.includes('/') || !lib.endsWith('.wasm')) throw fail(`--lib ${lib}: give a URL, or a .wasm file name of web-llm's libraries (${LIBRARY_SOURCE})`);
    url = new URL(lib, LIBRARY_SOURCE);
  }
  const name = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  checkFileName(name, `--lib ${lib}`);
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(sha256)) throw fail(`--lib-sha256: ${sha256} is not a sha256 (64 hex digits)`);
  return { url, name, sha256: sha256?.toLowerCase() ?? KNOWN_LIBRARIES[name] };
}

/** A response's body, at most `limit` bytes (counted while it streams). */
async function readLimited(response, limit, what) {
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    await response.body?.cancel().catch(() => {});
    throw fail(`${what}: ${declared} bytes, more than the ${limit} allowed`);
  }
  const chunks = [];
  let total = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      total += chunk.byteLength;
      if (total > limit) throw fail(`${what}: more than the ${limit} bytes allowed`);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, total);
}

async function request(fetchImpl, url, init, what) {
  try {
    return await fetchImpl(url, init);
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    throw fail(`${what}: cannot fetch ${url.href} (${e?.cause?.code ?? e?.cause?.message ?? e?.message ?? e})`, { resumable: true });
  }
}

/** A small file whole (null when the server has none: 404). */
async function fetchSmall(fetchImpl, url, limit, what, signal) {
  const response = await request(fetchImpl, url, { signal }, what);
  if (response.status === 404) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw fail(`${what}: ${url.href}: HTTP ${response.status}`);
  }
  return readLimited(response, limit, what);
}

/** The hex digest of a file's bytes. */
async function fileDigest(file, algorithm) {
  const hash = createHash(algorithm);
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk);
  return hash.digest('hex');
}

const sizeOf = async (file) => {
  try {
    const stat = await fsp.stat(file);
    return stat.isFile() ? stat.size : -1;
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
};

/** Checks a complete file's hashes; names the first that differs. */
async function checkHashes(file, spec) {
  for (const algorithm of ['sha256', 'md5']) {
    const expected = spec[algorithm === 'sha256' ? 'sha256' : 'md5'];
    if (!expected) continue;
    const got = await fileDigest(file, algorithm);
    if (got !== expected) return `its ${algorithm} is ${got}, ${spec.hashFrom ?? 'the index'} says ${expected}`;
  }
  return null;
}

/**
 * Downloads one file to `dest` (through `dest.part`): kept when already
 * there and right, continued from a .part with a Range request, checked
 * (the size the index gives before and while it streams, the hashes when
 * complete), and renamed into place only when right.
 * @returns {Promise<'present'|'downloaded'|'resumed'>}
 */
async function downloadFile(spec, { fetchImpl, signal, onBytes, onTotal = () => {} }) {
  const { url, dest, size, name } = spec;
  const part = `${dest}.part`;
  const limit = size ?? FILE_LIMIT;
  const present = await sizeOf(dest);
  if (present === -1) throw fail(`${name}: ${dest} is there and is not a regular file`);
  if (present !== null && (size === undefined ? (spec.sha256 || spec.md5) : present === size) && !(await checkHashes(dest, spec))) {
    onBytes(present, true);
    return 'present';
  }
  const partSize = await sizeOf(part);
  if (partSize === -1) throw fail(`${name}: ${part} is there and is not a regular file`);
  let start = partSize ?? 0;
  if (start > limit) start = 0;
  let how = start > 0 ? 'resumed' : 'downloaded';
  if (size === undefined || start < size || partSize === null) {
    const headers = start > 0 ? { range: `bytes=${start}-` } : {};
    const response = await request(fetchImpl, url, { headers, signal }, name);
    let total;
    if (response.status === 206 && start > 0) {
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
      if (!range || Number(range[1]) !== start) {
        await response.body?.cancel().catch(() => {});
        throw fail(`${name}: the server answered the range from ${start} with ${response.headers.get('content-range') ?? 'no Content-Range'}`);
      }
      total = range[3] === '*' ? undefined : Number(range[3]);
    } else if (response.status === 416 && start > 0) {
      // the .part is not a prefix the server can continue: start again
      await response.body?.cancel().catch(() => {});
      await fsp.rm(part, { force: true });
      return downloadFile(spec, { fetchImpl, signal, onBytes, onTotal });
    } else if (response.ok) {
      start = 0; // the whole file (a server without ranges)
      how = 'downloaded';
      const length = response.headers.get('content-length');
      total = length === null ? undefined : Number(length);
    } else {
      await response.body?.cancel().catch(() => {});
      throw fail(`${name}: ${url.href}: HTTP ${response.status}`);
    }
    if (total !== undefined && size !== undefined && total !== size) {
      await response.body?.cancel().catch(() => {});
      throw fail(`${name}: the server has ${total} bytes, the index says ${size}; refused, nothing written`);
    }
    if (total !== undefined && total > limit) {
      await response.body?.cancel().catch(() => {});
      throw fail(`${name}: the server has ${total} bytes, more than the ${limit} allowed`);
    }
    const want = size ?? total;
    if (size === undefined && total !== undefined) onTotal(total);
    onBytes(start, true);
    const handle = await fsp.open(part, start > 0 ? 'r+' : 'w');
    let at = start;
    try {
      await handle.truncate(start);
      if (response.body) {
        for await (const chunk of response.body) {
          if (at + chunk.byteLength > (want ?? limit)) {
            throw fail(`${name}: the server sent more than ${want === undefined ? `the ${limit} bytes allowed` : `the ${want} bytes ${size === undefined ? 'it announced' : 'the index says'}`}; refused, nothing written`);
          }
          await handle.write(chunk, 0, chunk.byteLength, at);
          at += chunk.byteLength;
          onBytes(chunk.byteLength, false);
        }
      }
    } catch (e) {
      await handle.close();
      if (e instanceof ModelFetchError) {
        await fsp.rm(part, { force: true });
        throw e;
      }
      if (e?.name === 'AbortError') throw e;
      throw fail(`${name}: the download stopped after ${at}${want === undefined ? '' : ` of ${want}`} bytes (${e?.cause?.code ?? e?.code ?? e?.message ?? e}); run again to continue from there`, { resumable: true });
    }
    await handle.close();
    if (want !== undefined && at < want) {
      throw fail(`${name}: the download stopped after ${at} of ${want} bytes; run again to continue from there`, { resumable: true });
    }
  }
  const got = await sizeOf(part);
  if (size !== undefined && got !== size) {
    await fsp.rm(part, { force: true });
    throw fail(`${name}: ${got} bytes, the index says ${size}; refused, nothing written`);
  }
  const wrong = await checkHashes(part, spec);
  if (wrong) {
    await fsp.rm(part, { force: true });
    throw fail(`${name}: ${wrong}; refused, nothing written`);
  }
  await fsp.rename(part, dest);
  return how;
}

/**
 * Fetches a model: its weights from `repo` (a HuggingFace repository or a
 * URL with its layout) and/or its library (`lib`), into `out`.
 * @param {object} o { repo, lib, libSha256, out, revision, endpoint, concurrency = 4,
 *   onProgress({ file, event, loadedBytes, totalBytes, doneFiles, totalFiles, how }), signal, fetch }
 * @returns {Promise<{ out: string, files: { name: string, bytes: number, how: string }[] }>}
 */
export async function fetchModel({ repo, lib, libSha256, out, revision, endpoint, concurrency = 4, onProgress, signal, fetch: fetchImpl = globalThis.fetch } = {}) {
  if (!repo && !lib) throw fail('nothing to fetch: give a repository (or URL), --lib, or both');
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw fail(`--concurrency must be a positive integer, got ${concurrency}`);
  const base = repo ? modelBase(repo, { revision, endpoint }) : null;
  const library = lib ? libraryURL(lib, libSha256) : null;
  const dir = path.resolve(out ?? (base ? defaultFolder(base) : '.'));
  const inside = (name) => {
    const file = path.resolve(dir, name);
    if (!file.startsWith(dir + path.sep)) throw fail(`${name} would be written outside ${dir}`);
    return file;
  };
  const under = (name) => {
    const url = new URL(name.split('/').map(encodeURIComponent).join('/'), base);
    if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) throw fail(`${name} resolves outside ${base.href}`);
    return url;
  };

  const jobs = [];
  const smallFiles = []; // [name, bytes]: written once every job is done
  let index = null;
  if (base) {
    for (const name of INDEX_NAMES) {
      const bytes = await fetchSmall(fetchImpl, under(name), INDEX_LIMIT, name, signal);
      if (bytes) {
        let parsed;
        try {
          parsed = JSON.parse(bytes.toString('utf8'));
        } catch (e) {
          throw fail(`${name} is not JSON (${e.message})`);
        }
        index = { name, bytes, shards: indexShards(parsed) };
        break;
      }
    }
    if (!index) throw fail(`no index at ${base.href}: looked for ${INDEX_NAMES.join(' and ')} (neither is there)`);
    for (const s of index.shards) jobs.push({ ...s, url: under(s.name), dest: inside(s.name) });
    // web-llm's chat config and the tokenizer files it names, where the repository has them
    const config = await fetchSmall(fetchImpl, under('mlc-chat-config.json'), 1 << 20, 'mlc-chat-config.json', signal);
    if (config) {
      let files = [];
      try {
        files = JSON.parse(config.toString('utf8')).tokenizer_files ?? [];
      } catch {
        throw fail('mlc-chat-config.json is not JSON');
      }
      if (!Array.isArray(files) || files.length > 64) throw fail('mlc-chat-config.json: tokenizer_files is not a list of at most 64 names');
      for (const f of files) {
        const name = checkFileName(f, 'mlc-chat-config.json tokenizer_files');
        if (!jobs.some((j) => j.name === name)) jobs.push({ name, url: under(name), dest: inside(name) });
      }
      smallFiles.push(['mlc-chat-config.json', config]);
    }
  }
  if (library) {
    if (jobs.some((j) => j.name === library.name)) throw fail(`the library's name ${library.name} is also a file of the repository`);
    jobs.push({ name: library.name, url: library.url, dest: inside(library.name), sha256: library.sha256, hashFrom: library.sha256 === KNOWN_LIBRARIES[library.name] ? 'webffi\'s table of known libraries' : '--lib-sha256' });
  }
  await fsp.mkdir(dir, { recursive: true });
  for (const j of jobs) await fsp.mkdir(path.dirname(j.dest), { recursive: true });

  const progress = { loadedBytes: 0, totalBytes: jobs.reduce((a, j) => a + (j.size ?? 0), 0), doneFiles: 0, totalFiles: jobs.length };
  const report = (extra) => onProgress?.({ ...progress, ...extra });
  const files = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      let mine = 0;
      const onBytes = (n, reset) => {
        if (reset) {
          progress.loadedBytes += n - mine;
          mine = n;
        } else {
          progress.loadedBytes += n;
          mine += n;
        }
        report({ file: job.name, event: 'bytes' });
      };
      let announced = 0; // a file of unknown size counts in the total once the server gives its length
      const onTotal = (n) => {
        progress.totalBytes += n - announced;
        announced = n;
      };
      const how = await downloadFile(job, { fetchImpl, signal, onBytes, onTotal });
      const bytes = (await fsp.stat(job.dest)).size;
      if (job.size === undefined) onTotal(bytes);
      progress.doneFiles++;
      files.push({ name: job.name, bytes, how });
      report({ file: job.name, event: 'file', how, bytes });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  // The index and config last: a folder with its index has every shard, checked.
  for (const [name, bytes] of smallFiles) await fsp.writeFile(inside(name), bytes);
  if (index) await fsp.writeFile(inside(index.name), index.bytes);
  return { out: dir, files, index: index?.name ?? null };
}

const MiB = (n) => `${(n / 2 ** 20).toFixed(1)} MiB`;

/** Progress on a stream: one line rewritten in place on a terminal, a line per file otherwise. */
export function progressPrinter(stream) {
  const tty = Boolean(stream.isTTY);
  let last = 0;
  let shown = false;
  return {
    onProgress(p) {
      if (tty) {
        const now = Date.now();
        if (p.event === 'bytes' && now - last < 100) return;
        last = now;
        const pct = p.totalBytes ? ` ${Math.min(100, (100 * p.loadedBytes) / p.totalBytes).toFixed(0)}%` : '';
        const line = `${MiB(p.loadedBytes)} of ${MiB(p.totalBytes)}${pct}, ${p.doneFiles}/${p.totalFiles} files, ${p.file}`;
        stream.write(`\r\x1b[K${line.slice(0, (stream.columns || 100) - 1)}`);
        shown = true;
      } else if (p.event === 'file') {
        stream.write(`${p.file}: ${MiB(p.bytes)} ${p.how} (${p.doneFiles}/${p.totalFiles} files)\n`);
      }
    },
    end() {
      if (tty && shown) stream.write('\n');
    },
  };
}

/** Writes seeded weights for a library into dir; returns what was written. */
export async function writeWeights(library, dir, { seed = 42, scale = 0.1, shardBytes = 32 << 20 } = {}) {
  const { load } = await import('../js/index.js');
  const { seededTensorCache, libraryParams } = await import('../js/model_library.js');
  const rt = await load({ wasm: library, autoloadBackends: false, logger: { log() {}, warn() {} } });
  let cache;
  try {
    cache = seededTensorCache(libraryParams(rt), { seed, scale, shardBytes });
  } finally {
    rt.dispose();
  }
  await fsp.mkdir(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(cache.shards)) await fsp.writeFile(path.join(dir, name), bytes);
  await fsp.writeFile(path.join(dir, 'tensor-cache.json'), JSON.stringify(cache.index));
  return { records: cache.values.size, shards: Object.keys(cache.shards).length, bytes: cache.index.metadata.ParamBytes };
}

function usage(message) {
  console.error(`webffi: model: ${message}\n${USAGE}`);
  process.exit(2);
}

export async function modelMain(argv) {
  const [command, ...rest] = argv;
  if (!command || ['help', '-h', '--help'].includes(command)) {
    if (!command) usage('no command');
    console.log(USAGE);
    return;
  }
  const options = command === 'fetch'
    ? { lib: { type: 'string' }, 'lib-sha256': { type: 'string' }, out: { type: 'string' }, revision: { type: 'string' }, concurrency: { type: 'string' } }
    : command === 'weights'
      ? { out: { type: 'string' }, seed: { type: 'string' }, scale: { type: 'string' }, 'shard-mb': { type: 'string' } }
      : usage(`unknown command \`${command}\``);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (e) {
    usage(e.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) usage(`one ${command === 'fetch' ? 'repository' : 'library'}, got ${positionals.join(' ')}`);
  const number = (name, v, integer) => {
    const n = Number(v);
    if (v === undefined) return undefined;
    if (!Number.isFinite(n) || (integer && !Number.isSafeInteger(n))) usage(`--${name} needs ${integer ? 'an integer' : 'a number'}, got ${v}`);
    return n;
  };
  try {
    if (command === 'weights') {
      if (positionals.length === 0) usage('weights: no library');
      if (!values.out) usage('weights: --out DIR is needed');
      const shardMb = number('shard-mb', values['shard-mb'], false) ?? 32;
      if (!(shardMb > 0)) usage('--shard-mb must be positive');
      const seed = number('seed', values.seed, true) ?? 42;
      const done = await writeWeights(positionals[0], values.out, { seed, scale: number('scale', values.scale, false) ?? 0.1, shardBytes: Math.max(1, Math.floor(shardMb * 2 ** 20)) });
      console.log(`${values.out}: tensor-cache.json and ${done.shards} shards, ${done.records} records, ${MiB(done.bytes)} (seed ${seed})`);
      return;
    }
    const printer = progressPrinter(process.stderr);
    let result;
    try {
      result = await fetchModel({
        repo: positionals[0], lib: values.lib, libSha256: values['lib-sha256'], out: values.out, revision: values.revision,
        concurrency: number('concurrency', values.concurrency, true) ?? 4, onProgress: printer.onProgress,
      });
    } finally {
      printer.end();
    }
    const total = result.files.reduce((a, f) => a + f.bytes, 0);
    const fetched = result.files.filter((f) => f.how !== 'present').length;
    console.log(`${result.out}: ${result.files.length} files, ${MiB(total)} (${fetched} fetched, ${result.files.length - fetched} already there), checked`);
  } catch (e) {
    if (!(e instanceof ModelFetchError) && !e?.kind) throw e;
    console.error(`webffi: model ${command}: ${e.message}`);
    process.exit(1);
  }
}
