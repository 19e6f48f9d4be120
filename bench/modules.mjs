// C modules: size of a loaded module vs the runtime, time to load one vs
// instantiating the runtime, and the cost of calling a module function vs
// the same C function linked into the runtime (and a runtime global).
// Run after `npm run build`: node bench/modules.mjs
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawRuntime } from '../tests/support/raw_runtime.mjs';
import { moduleLoader } from '../js/dylink.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const modules = `${root}build/wasm/tests/modules`;
const runtimeBytes = readFileSync(`${root}build/wasm/webffi.wasm`);
const systemLibBytes = readFileSync(`${modules}/add_one_system_lib.wasm`);
const moduleBytes = (name) => readFileSync(`${modules}/${name}.wasm`);
// the test fixtures (testing.*): a module of their own, not in the runtime
const testingBytes = readFileSync(`${root}build/wasm/webffi_testing.wasm`);

// Each measurement keeps its fastest round: other processes only ever add time.

/** ns per op of fn(), the fastest of `rounds` rounds of `n` ops after a warm-up. */
function nsPerOp(fn, n, rounds = 7) {
  for (let i = 0; i < n; i++) fn();
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) fn();
    times.push(((performance.now() - start) * 1e6) / n);
  }
  return Math.min(...times);
}

/** The same for an async fn. */
async function nsPerOpAsync(fn, n, rounds = 5) {
  for (let i = 0; i < n; i++) await fn();
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) await fn();
    times.push(((performance.now() - start) * 1e6) / n);
  }
  return Math.min(...times);
}

function table(title, rows, unit, baseline) {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) {
    const shown = unit === 'B' ? `${value} B` : `${value.toFixed(unit === 'us' ? 1 : 0)} ${unit}`;
    console.log(`  ${name.padEnd(width)}  ${shown.padStart(12)}  ${(value / baseline).toFixed(3)}x`);
  }
}

// ------------------------------------------------------------------ sizes
const sizes = [
  ['runtime webffi.wasm (baseline)', runtimeBytes.length],
  ['runtime + add_one.c linked in', systemLibBytes.length],
  ['module add_one.wasm', moduleBytes('add_one').length],
  ['module producer.wasm', moduleBytes('producer').length],
  ['module consumer.wasm', moduleBytes('consumer').length],
  ['module webffi_testing.wasm (test fixtures)', testingBytes.length],
];
table('Size (bytes, ratio to the runtime)', sizes, 'B', runtimeBytes.length);

// ---------------------------------------------------------- load times
const runtimeModule = new WebAssembly.Module(runtimeBytes);
const instantiateRuntime = await nsPerOpAsync(() => rawRuntime(runtimeModule), 50);
const rt = await rawRuntime(runtimeBytes);
const loader = moduleLoader(rt.exports);
const addOneBytes = moduleBytes('add_one');
const addOneModule = new WebAssembly.Module(addOneBytes);
const loadFresh = (source) => () => {
  rt.decref(loader.loadSync(source));
  rt.call('webffi.ModuleUnload', 'add_one');
};
const loadRows = [
  ['instantiate + initialise the runtime (baseline)', instantiateRuntime / 1e3],
  ['load add_one from bytes', nsPerOp(loadFresh(addOneBytes), 200) / 1e3],
  ['load add_one from a WebAssembly.Module', nsPerOp(loadFresh(addOneModule), 200) / 1e3],
  ['load add_one when already loaded', nsPerOp(() => {
    rt.decref(loader.loadSync(addOneModule));
  }, 200) / 1e3],
];
table('Load time (us per load, ratio to instantiating the runtime)', loadRows, 'us',
  instantiateRuntime / 1e3);

// ------------------------------------------------------------ call cost
// One runtime with add_one.c linked in also loads it as a module: the same
// C function (add_int) is called both ways, next to a global registered by
// the fixtures module.
const sys = await rawRuntime(systemLibBytes);
const sysLoader = moduleLoader(sys.exports);
const x = sys.exports;
const mod = sysLoader.loadSync(addOneBytes);
sys.decref(sysLoader.loadSync(testingBytes)); // for the global testing.add_one
const lib = sys.call('ffi.SystemLib').value.object;
const fn = (m, name) => sys.call('ffi.ModuleGetFunction', { object: m }, name, true).value.object;
const any = sys.meta.sizeof.TVMFFIAny;
const args = x.WebFFIHeapAlloc(any);
const result = x.WebFFIHeapAlloc(any);
const view = new DataView(x.memory.buffer);
view.setInt32(args, sys.meta.type_index.int, true);
view.setBigInt64(args + 8, 41n, true);
/** ns per TVMFFIFunctionCall of each handle, the fastest of rounds interleaved across handles. */
function callCosts(handles, n, rounds = 15) {
  const times = handles.map(() => []);
  for (let r = 0; r <= rounds; r++) {
    handles.forEach((f, i) => {
      const start = performance.now();
      for (let k = 0; k < n; k++) {
        if (x.TVMFFIFunctionCall(f, args, 1, result) !== 0) throw new Error('call failed');
      }
      if (r > 0) times[i].push(((performance.now() - start) * 1e6) / n); // round 0 warms up
    });
  }
  return times.map((t) => Math.min(...t));
}
const globalOut = x.WebFFIHeapAlloc(4);
const nameBytes = new TextEncoder().encode('testing.add_one');
const nameArg = x.WebFFIHeapAlloc(8 + nameBytes.length);
new Uint8Array(x.memory.buffer).set(nameBytes, nameArg + 8);
view.setUint32(nameArg, nameArg + 8, true);
view.setUint32(nameArg + 4, nameBytes.length, true);
x.TVMFFIFunctionGetGlobal(nameArg, globalOut);
const runtimeGlobal = view.getUint32(globalOut, true);
const [linkedIn, loaded, runtimeGlobalCost] =
  callCosts([fn(lib, 'add_int'), fn(mod, 'add_int'), runtimeGlobal], 200000);
table('Call from JS through TVMFFIFunctionCall (ns per call, ratio to the same C linked in)', [
  ['add_int linked into the runtime (baseline)', linkedIn],
  ['add_int in a loaded module', loaded],
  ['global testing.add_one (fixtures module, typed checks)', runtimeGlobalCost],
], 'ns', linkedIn);
