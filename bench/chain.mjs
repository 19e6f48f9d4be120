// node bench/chain.mjs [--quick] [--node-only | --browser-only]
// Kernel chains (bench/chain_bench.mjs) through the runtime from JS and from
// C against a raw WebGPU pipeline, in Node (Dawn; WEBFFI_DAWN_BACKEND picks
// its backend, OpenGL ES on Mesa by default) and in headless Chromium
// (SwiftShader without a GPU). Builds bench/chain_module.c first when its
// wasm is missing or older than the source.
import { statSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runChainBench, formatChainBench } from './chain_bench.mjs';
import { load } from '../js/index.js';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const root = fileURLToPath(new URL('../', import.meta.url));
const source = `${root}bench/chain_module.c`;
const wasm = `${root}build/bench/chain_module.wasm`;

const mtime = (p) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return -1;
  }
};
if (mtime(wasm) < mtime(source)) {
  mkdirSync(`${root}build/bench`, { recursive: true });
  execFileSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module', source, '-o', wasm], { stdio: 'inherit' });
}

if (!args.has('--browser-only')) {
  const rt = await load({ logger: { log() {}, warn: console.warn } });
  const chain = (await rt.loadModule(wasm)).getFunction('chain');
  const r = await runChainBench(rt, chain, { quick });
  console.log(formatChainBench('Node, Dawn', r));
  rt.backends.get('webgpu').engine.dispose();
}
if (!args.has('--node-only')) {
  const { runBenchPage } = await import('./chromium.mjs');
  console.log(formatChainBench('Chromium', await runBenchPage('chain.html', quick)));
}
