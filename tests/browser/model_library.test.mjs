// An MLC model library in headless Chromium (WebGPU on SwiftShader): the
// page runs the -s library on webffi and on tvmjs (bundled from npm for the
// page) and compares them; the tensor cache is made here from the library's
// `_metadata` and served beside it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { MODELS_DIR, ARCTIC_S, modelPath, libraryParams, makeTensorCache, writeTensorCache } from '../support/model_fixture.mjs';

const root = new URL('../../', import.meta.url).pathname;
let server;
let cacheDir;
before(async () => {
  // The parameters the library names, read through webffi (no GPU needed).
  cacheDir = writeTensorCache(fs.mkdtempSync(path.join(os.tmpdir(), 'webffi-page-cache-')),
    makeTensorCache(await libraryParams(modelPath(ARCTIC_S))));
  // tvmjs ships CommonJS: re-exported by name for tvmjs_reference.mjs's `import * as tvmjs`.
  await esbuild.build({
    stdin: {
      contents: "import t from '@mlc-ai/web-runtime'; export const { instantiate, createPolyfillWASI } = t;",
      resolveDir: root,
    },
    bundle: true, format: 'esm', platform: 'browser', logLevel: 'error',
    outfile: path.join(root, 'build/test/tvmjs.js'),
    external: ['fs', 'path', 'crypto', 'perf_hooks', 'ws', 'url', 'child_process', 'worker_threads'],
  });
  server = await startServer({ mounts: { '/models/': MODELS_DIR, '/cache/': cacheDir } });
});
after(async () => {
  await server?.close();
  if (cacheDir) fs.rmSync(cacheDir, { recursive: true, force: true });
});

test('the -s library runs on webffi in Chromium and matches tvmjs in the same page', async () => {
  const browser = await launchChromium({ webgpu: true });
  try {
    const result = await runPage(browser.context, server.url('tests/browser/pages/model_library.html'), { timeout: 900000 });
    assert.deepEqual(result.failures, [], result.logs.join('\n'));
    assert.equal(result.passed, 1);
  } finally {
    await browser.close();
  }
});
