// C++ built by `webffi build` both ways (tests/cxx/checked_parse.cc): C++
// exceptions thrown and caught inside the wasm (wasm exception handling)
// arrive as FFI errors of the right kind, and the runtime keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as webffi from '../../js/index.js';

const dir = new URL('../../build/wasm/tests/modules/', import.meta.url);

/** The library's functions, from a loaded module or the linked-in system library. */
async function library(how) {
  if (how === 'module') {
    const rt = await webffi.load();
    const mod = await rt.loadModule(new URL('checked_parse.wasm', dir));
    return { rt, get: (name) => mod.getFunction(name) };
  }
  const rt = await webffi.load({ wasm: readFileSync(new URL('checked_parse_system_lib.wasm', dir)) });
  const lib = rt.getGlobal('ffi.SystemLib')();
  return { rt, get: (name) => lib.getFunction(name) };
}

for (const how of ['module', 'linked in']) {
  test(`C++ ${how}: typed functions answer, C++ exceptions become FFI errors`, async () => {
    const { get } = await library(how);
    const sumCsv = get('sum_csv');
    const checkedDiv = get('checked_div');
    const caught = get('caught_count');
    assert.equal(sumCsv('1,2,39'), 42);
    assert.equal(sumCsv('-5'), -5);
    // std::stoll throws inside; the library catches and raises ValueError
    assert.throws(() => sumCsv('1,x,3'), (e) => e instanceof webffi.ValueError &&
      e.message === '`x` is not a number');
    assert.throws(() => sumCsv('99999999999999999999'), (e) => e instanceof webffi.ValueError &&
      e.message === '`99999999999999999999` is out of range');
    assert.throws(() => sumCsv('4,5 '), (e) => e instanceof webffi.ValueError &&
      e.message === 'trailing characters in `5 `');
    assert.throws(() => sumCsv(7), (e) => e instanceof TypeError &&
      e.message === 'argument #0 must be a str');
    assert.equal(checkedDiv(84, 2), 42);
    const before = caught();
    for (let i = 0; i < 50; i++) {
      assert.throws(() => checkedDiv(1, 0), (e) => e instanceof webffi.ValueError &&
        e.message === 'checked_div: division by zero');
    }
    assert.equal(caught() - before, 50);
    // still answering after many exceptions
    assert.equal(sumCsv('40,2'), 42);
    assert.equal(checkedDiv(-9, 3), -3);
  });
}
