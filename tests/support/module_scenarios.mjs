// User C modules (tests/modules, built by build/wasm/tests/modules) linked
// into the runtime and loaded at run time, driven through raw exports and
// js/dylink.js. The same scenarios run in Node (tests/node/modules.test.mjs)
// and in headless Chromium (tests/browser/pages/modules.html).
//
// env: { runtimeBytes, systemLibBytes: Uint8Array; moduleSource(name): a
// path or URL for loadModule; moduleBytes(name): Promise<Uint8Array>;
// readsFiles: whether ffi.ModuleLoadFromFile can read files here }
import { rawRuntime } from './raw_runtime.mjs';
import { moduleLoader, ModuleLoadError } from '../../js/dylink.js';
import { assert, assertEqual } from '../browser/harness_page.mjs';
import { TESTING_MODULE } from './testing_module.mjs';

/** A raw runtime and its module loader; `testing`: with the test fixtures (testing.*) loaded. */
async function runtimeWithLoader(bytes, { testing = false } = {}) {
  const rt = await rawRuntime(bytes);
  const loader = moduleLoader(rt.exports);
  if (testing) rt.decref(await loader.load(TESTING_MODULE));
  return { rt, loader };
}

/** Function NAME of module MOD (a new reference). */
function moduleFunction(rt, mod, name) {
  const { value, error } = rt.call('ffi.ModuleGetFunction', { object: mod }, name, true);
  assert(error === undefined, `ModuleGetFunction ${name}: ${error?.message}`);
  assert(value !== null, `the module has no function ${name}`);
  return value.object;
}

function findLoaded(rt, name) {
  return rt.call('webffi.ModuleFindLoaded', name).value?.object ?? null;
}

/** add_one and raise_error of the tvm-ffi stable C ABI example, through MOD. */
function checkAddOneLibrary(rt, mod) {
  const addOne = moduleFunction(rt, mod, 'add_one');
  const x = rt.float32Tensor([1, 2.5, -3]);
  const y = rt.float32Tensor([0, 0, 0]);
  assertEqual(rt.callFunction(addOne, { object: x }, { object: y }), { value: null }, 'add_one');
  assertEqual(rt.float32Values(y), [2, 3.5, -2], 'y = x + 1');
  // raw DLTensor* arguments work as well
  rt.callFunction(addOne, { dltensor: rt.dltensorOf(y) }, { dltensor: rt.dltensorOf(x) });
  assertEqual(rt.float32Values(x), [3, 4.5, -1], 'x = y + 1');
  const wrong = rt.callFunction(addOne, { object: x }, 1.5).error;
  assertEqual([wrong.kind, wrong.message], ['TypeError', 'add_one expects 1-D float32 CPU tensors']);

  const raise = moduleFunction(rt, mod, 'raise_error');
  const { error } = rt.callFunction(raise, 'bad input');
  assertEqual([error.kind, error.message], ['ValueError', 'bad input']);
  // (V8 prefixes the module's name, which webffi build sets, to its functions')
  assert(/^ {2}File "[^"]*wasm-function\[\d+\]:0x[0-9a-f]+", line unknown, in (add_one\.)?__tvm_ffi_raise_error\n/
    .test(error.backtrace), `backtrace names the module function:\n${error.backtrace}`);
  for (const obj of [addOne, raise, x, y]) rt.decref(obj);
}

/** A copy of wasm bytes with custom section NAME replaced by payload (or removed when null). */
function replaceCustomSection(bytes, name, payload) {
  const leb = (at) => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return [value, at];
    }
  };
  const encodeLeb = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      n = Math.floor(n / 128);
    } while (n > 0);
    return out;
  };
  const parts = [bytes.subarray(0, 8)];
  for (let at = 8; at < bytes.length;) {
    const start = at;
    const id = bytes[at];
    const [size, body] = leb(at + 1);
    at = body + size;
    if (id === 0) {
      const [len, nameAt] = leb(body);
      if (new TextDecoder().decode(bytes.subarray(nameAt, nameAt + len)) === name) {
        if (payload !== null) {
          const nameBytes = new TextEncoder().encode(name);
          const content = [...encodeLeb(nameBytes.length), ...nameBytes, ...payload];
          parts.push(new Uint8Array([0, ...encodeLeb(content.length), ...content]));
        }
        continue;
      }
    }
    parts.push(bytes.subarray(start, at));
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Expects fn to throw a ModuleLoadError of KIND whose message matches RE. */
function expectLoadError(fn, kind, re) {
  try {
    fn();
  } catch (e) {
    assert(e instanceof ModuleLoadError, `a ModuleLoadError, got ${e}`);
    assertEqual(e.kind, kind, `kind of "${e.message}"`);
    assert(re.test(e.message), `message ${e.message} matches ${re}`);
    return;
  }
  throw new Error(`expected a ${kind} matching ${re}`);
}

export const scenarios = {
  async 'a linked-in library is served by ffi.SystemLib: tensors and errors'(env) {
    const rt = await rawRuntime(env.systemLibBytes);
    const lib = rt.call('ffi.SystemLib').value.object;
    checkAddOneLibrary(rt, lib);
    rt.decref(lib);
    // a prefix selects `__tvm_ffi_<prefix><name>`
    const prefixed = rt.call('ffi.SystemLib', 'add_').value.object;
    const addInt = moduleFunction(rt, prefixed, 'int');
    assertEqual(rt.callFunction(addInt, 41).value, 42n, 'add_ + int');
    rt.decref(addInt);
    rt.decref(prefixed);
  },

  async 'a module loaded at run time: tensors and errors'(env) {
    const { rt, loader } = await runtimeWithLoader(env.runtimeBytes);
    const mod = await loader.load(env.moduleSource('add_one'));
    checkAddOneLibrary(rt, mod);
    rt.decref(mod);
  },

  async 'loading a loaded module returns it, from a URL, bytes, a WebAssembly.Module or C'(env) {
    const { rt, loader } = await runtimeWithLoader(env.runtimeBytes);
    const bytes = await env.moduleBytes('add_one');
    const first = await loader.load(env.moduleSource('add_one'));
    const table = rt.exports.__indirect_function_table.length;
    // a compiled module's bytes cannot be compared: one compiled anew is refused
    await loader.load(new WebAssembly.Module(bytes)).then(
      () => assert(false, 'a module compiled anew is not taken for the loaded one'),
      (e) => assert(e instanceof ModuleLoadError && e.kind === 'ValueError' &&
        /a different module named `add_one` is already loaded/.test(e.message), e.message));
    const handles = [
      await loader.load(bytes),
      findLoaded(rt, 'add_one'),
      rt.call('ffi.ModuleLoadFromFile', env.moduleSource('add_one')).value.object,
      rt.call('ffi.Module.load_from_bytes.wasm', bytes).value.object,
    ];
    for (const h of handles) assertEqual(h, first, 'the same module');
    assertEqual(rt.exports.__indirect_function_table.length, table, 'nothing instantiated again');
    assertEqual(rt.strongCount(first), handles.length + 2, 'references: ours and the table\'s');
    for (const h of [first, ...handles]) rt.decref(h);
  },

  async 'ffi.ModuleLoadFromFile reads files where the host can'(env) {
    const { rt } = await runtimeWithLoader(env.runtimeBytes);
    const result = rt.call('ffi.ModuleLoadFromFile', env.moduleSource('producer'));
    if (env.readsFiles) {
      const mod = result.value.object;
      assertEqual(findLoaded(rt, 'producer'), mod);
      rt.decref(mod);
      rt.decref(mod);
      const missing = rt.call('ffi.ModuleLoadFromFile', '/no/such/module.wasm').error;
      assertEqual(missing.kind, 'RuntimeError');
      assert(/^Cannot load module `\/no\/such\/module.wasm`: ENOENT/.test(missing.message),
        missing.message);
    } else {
      assertEqual(result.error.kind, 'RuntimeError');
      assertEqual(result.error.message, `Cannot load module \`${env.moduleSource('producer')}\`: ` +
        'this host cannot read files synchronously; load it from JavaScript first (loadModule(url))');
    }
  },

  async 'two loaded modules pass tensors and functions to each other'(env) {
    const { rt, loader } = await runtimeWithLoader(env.runtimeBytes, { testing: true });
    const producer = await loader.load(env.moduleSource('producer'));
    const consumer = await loader.load(env.moduleSource('consumer'));
    const call = (mod, name, ...args) => {
      const f = moduleFunction(rt, mod, name);
      const result = rt.callFunction(f, ...args);
      rt.decref(f);
      assert(result.error === undefined, `${name}: ${result.error?.message}`);
      return result.value;
    };
    const tensor = call(producer, 'make_range', 5).object;
    assertEqual(call(consumer, 'sum', { object: tensor }), 10, 'sum of 0..4');
    assertEqual(rt.float32Values(tensor), [0, 1, 2, 3, 4]);
    const scale = call(producer, 'make_scale', 2.5).object;
    assertEqual(call(consumer, 'apply', { object: scale }, 4), 10, 'apply(scale, 4)');
    assertEqual(call(producer, 'has_library_ctx'), true, '__tvm_ffi__library_ctx was set');
    // compiled code calls into modules it imports through its library context
    const missing = moduleFunction(rt, consumer, 'call_import');
    assertEqual(rt.callFunction(missing, 'make_range', 3).error.message,
      'Cannot find function `make_range` in the imported modules');
    rt.decref(missing);
    rt.call('ffi.ModuleImportModule', { object: consumer }, { object: producer });
    const imported = call(consumer, 'call_import', 'make_range', 3).object;
    assertEqual(rt.float32Values(imported), [0, 1, 2], 'make_range(3) through the import');
    rt.decref(imported);
    for (const obj of [tensor, scale, producer, consumer]) rt.decref(obj);
    // the runtime's own globals are untouched
    assertEqual(rt.call('testing.add_one', 1).value, 2n);
  },

  async 'a module function registered as a global keeps its module alive past unload'(env) {
    const { rt, loader } = await runtimeWithLoader(env.runtimeBytes);
    const mod = await loader.load(env.moduleSource('add_one'));
    const addInt = moduleFunction(rt, mod, 'add_int');
    const name = 'user.add_int';
    assertEqual(rt.setGlobal(name, addInt), 0, 'TVMFFIFunctionSetGlobal');
    rt.decref(addInt);
    rt.decref(mod);
    assertEqual(rt.call('webffi.ModuleUnload', 'add_one').value, true, 'unloaded');
    assertEqual(rt.call('webffi.ModuleUnload', 'add_one').value, false, 'only once');
    assertEqual(findLoaded(rt, 'add_one'), null, 'no longer in the table');
    assertEqual(rt.strongCount(mod), 1, 'held by the global function only');
    assertEqual(rt.call(name, 41).value, 42n, 'the global still runs');
    // loading it again instantiates it afresh
    const table = rt.exports.__indirect_function_table.length;
    const again = await loader.load(env.moduleSource('add_one'));
    assert(rt.exports.__indirect_function_table.length > table, 'instantiated again');
    assertEqual(findLoaded(rt, 'add_one'), again);
    rt.decref(again);
    rt.decref(again);
    assertEqual(rt.call('ffi.FunctionRemoveGlobal', name).value, true);
  },

  async 'bad modules fail clearly and leave nothing behind'(env) {
    const { rt, loader } = await runtimeWithLoader(env.runtimeBytes, { testing: true });
    const good = await env.moduleBytes('add_one');
    const table = rt.exports.__indirect_function_table.length;
    const tableGrew = () => rt.exports.__indirect_function_table.length !== table;
    expectLoadError(() => loader.loadSync(new Uint8Array([0, 97, 115, 109, 9, 9])), 'ValueError',
      /^the module is not a wasm module: /);
    expectLoadError(() => loader.loadSync(env.runtimeBytes), 'ValueError',
      /^the module is not a webffi module: it has no `dylink.0` section \(build it with `webffi build --module`\)$/);
    expectLoadError(() => loader.loadSync(replaceCustomSection(good, 'webffi.module', null)),
      'ValueError', /^the module is not a webffi module: it has no `webffi.module` section/);
    const garbled = new TextEncoder().encode('{"name": 7}');
    expectLoadError(() => loader.loadSync(replaceCustomSection(good, 'webffi.module', garbled)),
      'ValueError', /^the module has a malformed `webffi.module` section$/);
    const future = new TextEncoder().encode(
      '{"name":"add_one","module_abi_version":99,"tvm_ffi_version":[0,2,0]}');
    expectLoadError(() => loader.loadSync(replaceCustomSection(good, 'webffi.module', future)),
      'ValueError', new RegExp('^the module \\(`add_one`\\) was built for an incompatible ABI: ' +
        'module ABI 99, tvm-ffi 0.2.0; this runtime has module ABI 1, tvm-ffi 0.1.\\d+$'));
    const badImport = await env.moduleBytes('bad_import');
    const badCtor = await env.moduleBytes('bad_ctor');
    expectLoadError(() => loader.loadSync(badImport), 'RuntimeError',
      /^Cannot load module `bad_import`: it imports `webffi_test_function_nobody_exports`, which the runtime does not export$/);
    assert(!tableGrew(), 'refused before anything was allocated');
    await loader.load(env.moduleSource('bad_import')).then(
      () => assert(false, 'loading bad_import by URL must fail'),
      (e) => assertEqual(e.kind, 'RuntimeError'));
    const stackPointer = rt.exports.__stack_pointer.value;
    expectLoadError(() => loader.loadSync(badCtor), 'RuntimeError',
      /^Cannot load module `bad_ctor`: its initialisation failed: unreachable/);
    assertEqual(rt.exports.__stack_pointer.value, stackPointer, 'the stack pointer is restored');
    // through C, the same errors are raised FFI errors
    const { error } = rt.call('ffi.Module.load_from_bytes.wasm', new Uint8Array([1, 2, 3]));
    assertEqual(error.kind, 'ValueError');
    assert(/^the module is not a wasm module: /.test(error.message), error.message);
    // nothing was half-loaded, and the runtime still works
    assertEqual(findLoaded(rt, 'bad_import'), null);
    assertEqual(findLoaded(rt, 'bad_ctor'), null);
    assertEqual(findLoaded(rt, 'add_one'), null);
    assertEqual(rt.call('testing.add_one', 1).value, 2n);
    const mod = await loader.load(good);
    assertEqual(findLoaded(rt, 'add_one'), mod);
    rt.decref(mod);
    rt.decref(mod);
  },

  async 'C code in a loaded module reaches the linked-in system library'(env) {
    const { rt, loader } = await runtimeWithLoader(env.systemLibBytes);
    const consumer = await loader.load(env.moduleSource('consumer'));
    const f = moduleFunction(rt, consumer, 'system_lib_call');
    assertEqual(rt.callFunction(f, 'add_int', 41).value, 42n);
    const { error } = rt.callFunction(f, 'missing', 1);
    assertEqual([error.kind, error.message],
      ['AttributeError', 'the system library has no such function']);
    rt.decref(f);
    rt.decref(consumer);
  },
};
