// C++ built against upstream tvm-ffi's headers calls the C++ functions they
// declare (json::Parse, StructuralEqual::Equal, ...): `webffi build
// --tvm-ffi-include DIR` compiles webffi's forwarding layer with it, both
// ways (tests/cxx/upstream_api.cc). Upstream's headers never enter this
// repository, so these tests are not part of `npm test`: run them with
// WEBFFI_UPSTREAM_INCLUDE naming a checkout's include/ folder
// (`WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include npm run test:upstream`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as webffi from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const upstream = process.env.WEBFFI_UPSTREAM_INCLUDE;
if (!upstream || !existsSync(join(upstream, 'tvm/ffi/c_api.h'))) {
  throw new Error('WEBFFI_UPSTREAM_INCLUDE must name the include/ folder of an upstream tvm-ffi checkout');
}

const expected = {
  structural_report: 'equal=1 differ=0 hash=1 mismatch=<root>[1] none=1',
  json_report: 'json={"k":[1,2.5,null]} bad_is_none=1 error_set=1 graph=1 repr=(1, "x")',
  throw_report: 'caught ValueError',
  context_report: '__upstream_api_ctx_a=a __upstream_api_ctx_b=b __upstream_api_ctx_a=a caught ValueError',
};

function build(args) {
  const result = spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'build',
    '--tvm-ffi-include', upstream, ...args, join(root, 'tests/cxx/upstream_api.cc')],
  { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
}

test('C++ on upstream headers, as a module: upstream\'s C++ API links and answers',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webffi-forward-'));
    try {
      const out = join(dir, 'upstream_api.wasm');
      build(['--module', '-o', out]);
      const rt = await webffi.load();
      const mod = await rt.loadModule(out);
      for (const [name, want] of Object.entries(expected)) assert.equal(mod.getFunction(name)(), want);
      mod.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test('C++ on upstream headers, linked in: upstream\'s C++ API links and answers',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webffi-forward-'));
    try {
      const out = join(dir, 'upstream_api_lib.wasm');
      build(['-o', out]);
      const rt = await webffi.load({ wasm: readFileSync(out) });
      const lib = rt.getGlobal('ffi.SystemLib')();
      for (const [name, want] of Object.entries(expected)) assert.equal(lib.getFunction(name)(), want);
      lib.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
