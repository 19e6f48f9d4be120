// C++ built against upstream tvm-ffi's headers calls the C++ functions they
// declare (json::Parse, StructuralEqual::Equal, ...): `webffi build
// --tvm-ffi-include DIR` compiles webffi's forwarding layer with it, both
// ways (tests/cxx/upstream_api.cc). Upstream's headers never enter this
// repository: the build tests that need them are in tests/upstream/ and run
// on demand (`npm run test:upstream`, see there).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { forwardingSources, forwardSource } from '../../bin/cxx_forward.mjs';

test('the forwarding layer is compiled only with C++ against upstream headers', () => {
  const isCxx = (s) => s.endsWith('.cc');
  assert.deepEqual(forwardingSources({ sources: ['a.cc'], tvmFfiInclude: ['/x'] }, isCxx),
    [forwardSource]);
  assert.deepEqual(forwardingSources({ sources: ['a.cc'], tvmFfiInclude: [] }, isCxx), []);
  assert.deepEqual(forwardingSources({ sources: ['a.c'], tvmFfiInclude: ['/x'] }, isCxx), []);
  assert.ok(existsSync(forwardSource));
});

