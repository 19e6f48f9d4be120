// C++ built by `webffi build` both ways (tests/cxx/checked_parse.cc), as
// named tests that run unchanged in Node (tests/node/cxx.test.mjs) and in
// Chromium (tests/browser/cxx.test.mjs): C++ exceptions thrown and caught
// inside the wasm (wasm exception handling) arrive as FFI errors of the
// right kind, and the runtime keeps working.
// env: { webffi, moduleSource, systemLibBytes(), commandBytes() }.
import { assert, assertEqual, thrown } from '../browser/harness_page.mjs';

function throws(fn, check, what) {
  const e = thrown(fn, what);
  assert(check(e), `${what}: unexpected error ${e?.name}: ${e?.message}`);
}

async function exercise(webffi, get) {
  const sumCsv = get('sum_csv');
  const checkedDiv = get('checked_div');
  const caught = get('caught_count');
  assertEqual(sumCsv('1,2,39'), 42);
  assertEqual(sumCsv('-5'), -5);
  // std::stoll throws inside; the library catches and raises ValueError
  throws(() => sumCsv('1,x,3'), (e) => e instanceof webffi.ValueError &&
    e.message === '`x` is not a number', 'sum_csv("1,x,3")');
  throws(() => sumCsv('99999999999999999999'), (e) => e instanceof webffi.ValueError &&
    e.message === '`99999999999999999999` is out of range', 'out of range');
  throws(() => sumCsv('4,5 '), (e) => e instanceof webffi.ValueError &&
    e.message === 'trailing characters in `5 `', 'trailing');
  throws(() => sumCsv(7), (e) => e instanceof TypeError &&
    e.message === 'argument #0 must be a str', 'sum_csv(7)');
  assertEqual(checkedDiv(84, 2), 42);
  const before = caught();
  for (let i = 0; i < 50; i++) {
    throws(() => checkedDiv(1, 0), (e) => e instanceof webffi.ValueError &&
      e.message === 'checked_div: division by zero', 'checked_div(1, 0)');
  }
  assertEqual(caught() - before, 50);
  // TVMFFIHandleInitOnce from inside the wasm: one init however often asked
  const initOnce = get('init_once_count');
  assertEqual(initOnce(5), 1);
  assertEqual(initOnce(3), 1);
  // still answering after many exceptions
  assertEqual(sumCsv('40,2'), 42);
  assertEqual(checkedDiv(-9, 3), -3);
}

export const cxxTests = {
  async 'C++ module: typed functions answer, C++ exceptions become FFI errors'(env) {
    const rt = await env.webffi.load();
    const mod = await rt.loadModule(env.moduleSource('checked_parse'));
    await exercise(env.webffi, (name) => mod.getFunction(name));
    mod.dispose();
  },

  async 'C++ linked in: typed functions answer, C++ exceptions become FFI errors'(env) {
    const rt = await env.webffi.load({ wasm: await env.systemLibBytes() });
    const lib = rt.getGlobal('ffi.SystemLib')();
    await exercise(env.webffi, (name) => lib.getFunction(name));
    lib.dispose();
  },

  async 'a command program runs with argv and reports stderr and its exit code'(env) {
    const out = [];
    const code = await env.runCommand(await env.commandBytes(), {
      args: ['load_and_call'],
      write: (fd, text) => out.push([fd, text]),
      readFileSync: () => {
        throw new Error('no files here');
      },
    });
    assertEqual(code, 2);
    assertEqual(out, [[2, 'usage: load_and_call MODULE FUNCTION INT [--so]\n']]);
  },
};
