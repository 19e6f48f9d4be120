// dist/webffi.iife.js outside a page: the global it defines has what
// js/index.js exports (and loadRPC), and where there is neither a document
// nor importScripts (Node, a module worker) its parts load by import() from
// the files next to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MODELS_DIR, ARCTIC_S } from '../support/model_fixture.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `code` in a fresh Node after the script bundle, as a script of that name, has defined `webffi`. */
function withBundle(code) {
  const program = `
    const vm = require('node:vm');
    const fs = require('node:fs');
    const file = ${JSON.stringify(`${root}dist/webffi.iife.js`)};
    vm.runInThisContext(fs.readFileSync(file, 'utf8'), { filename: ${JSON.stringify(pathToFileURL(`${root}dist/webffi.iife.js`).href)},
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    (async () => { ${code} })().catch((e) => { console.log('ERROR', e.name, e.message); });`;
  return execFileSync(process.execPath, ['-e', program], { encoding: 'utf8', env: { ...process.env, WEBFFI_BACKEND_AUTOLOAD: '0' } }).trim();
}

test('the script bundle\'s global has what js/index.js exports, and loadRPC', async () => {
  const names = JSON.parse(withBundle('console.log(JSON.stringify(Object.keys(webffi).sort()));'));
  const index = Object.keys(await import('../../js/index.js'));
  assert.deepEqual(names, [...index, 'loadRPC'].sort());
});

test('without a document or importScripts, the parts load by import() from next to the bundle', () => {
  const out = withBundle(`
    const before = webffi.RPCSession;
    await webffi.loadRPC();
    const rt = await webffi.load({ wasm: ${JSON.stringify(`${MODELS_DIR}/${ARCTIC_S}`)}, logger: { log() {}, warn() {} } });
    const own = await webffi.load({ logger: { log() {}, warn() {} } }); // dist/webffi.wasm, next to the bundle
    console.log(before !== webffi.RPCSession, webffi.RPCSession.name, rt.coreKind,
      typeof webffi.createRPCEndpoint(own, { send() {} }).feed);`);
  assert.equal(out, 'true RPCSession tvm-ffi function');
});
