// One GPU, no copies, in headless Chromium (WebGPU on SwiftShader): webffi
// tensors handed to and from onnxruntime-web, TensorFlow.js and a
// transformers.js pipeline, on webffi's device and on devices those
// libraries made. The transformers.js model is made here and served under
// /hf/ (no network).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, launchChromium, runPage } from './harness.mjs';
import { tinyBertFiles } from '../support/tiny_bert.mjs';

let server;
let hfDir;
before(async () => {
  hfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webffi-hf-'));
  for (const [name, content] of Object.entries(tinyBertFiles())) {
    const file = path.join(hfDir, 'tiny-bert', name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  server = await startServer({ mounts: { '/hf/': hfDir } });
});
after(async () => {
  await server?.close();
  if (hfDir) fs.rmSync(hfDir, { recursive: true, force: true });
});

test('ORT, tfjs and transformers.js share one device with webffi in Chromium, tensors both ways without copies', async () => {
  const browser = await launchChromium({ webgpu: true });
  try {
    const result = await runPage(browser.context, server.url('tests/browser/pages/gpu_interop.html'), { timeout: 300000 });
    assert.deepEqual(result.failures, [], result.logs.join('\n'));
    assert.equal(result.passed, 6);
  } finally {
    await browser.close();
  }
});
