// C++ built against upstream tvm-ffi's headers calls the C++ functions they
// declare (json::Parse, StructuralEqual::Equal, ...): `webffi build
// --tvm-ffi-include DIR` compiles webffi's forwarding layer with it, both
// ways (tests/cxx/upstream_api.cc). Upstream's headers never enter this
// repository: the build tests run when WEBFFI_UPSTREAM_INCLUDE names a
// checkout's include/ folder, and are reported as skipped otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as webffi from '../../js/index.js';
import { forwardingSources, forwardSource } from '../../bin/cxx_forward.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const upstream = process.env.WEBFFI_UPSTREAM_INCLUDE;
const haveUpstream = Boolean(upstream) && existsSync(join(upstream ?? '', 'tvm/ffi/c_api.h'));
const skip = haveUpstream ? false : 'WEBFFI_UPSTREAM_INCLUDE does not name upstream tvm-ffi headers';

test('the forwarding layer is compiled only with C++ against upstream headers', () => {
  const isCxx = (s) => s.endsWith('.cc');
  assert.deepEqual(forwardingSources({ sources: ['a.cc'], tvmFfiInclude: ['/x'] }, isCxx),
    [forwardSource]);
  assert.deepEqual(forwardingSources({ sources: ['a.cc'], tvmFfiInclude: [] }, isCxx), []);
  assert.deepEqual(forwardingSources({ sources: ['a.c'], tvmFfiInclude: ['/x'] }, isCxx), []);
  assert.ok(existsSync(forwardSource));
});

const expected = {
  structural_report: 'equal=1 differ=0 hash=1 mismatch=<root>[1] none=1',
  json_report: 'json={"k":[1,2.5,null]} bad_is_none=1 error_set=1 graph=1 repr=(1, "x")',
  throw_report: 'caught ValueError',
};

function build(args) {
  const result = spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), 'build',
    '--tvm-ffi-include', upstream, ...args, join(root, 'tests/cxx/upstream_api.cc')],
  { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
}

test('C++ on upstream headers, as a module: upstream\'s C++ API links and answers', { skip },
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

test('C++ on upstream headers, linked in: upstream\'s C++ API links and answers', { skip },
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
