// C modules loaded at run time through the JS API (runtime.loadModule), as
// named tests that run unchanged in Node (tests/node/runtime_modules.test.mjs)
// and in Chromium (tests/browser/runtime_modules.test.mjs).
// env: { rt, webffi, source(name), bytes(name) } where source gives a URL
// (or path) and bytes the module's wasm bytes.
import { assert, assertEqual, thrown, rejected } from '../browser/harness_page.mjs';

/** Awaits promise, which must reject with an error that check accepts. */
async function rejects(promise, check, what) {
  const e = await rejected(promise, what);
  assert(check(e), `${what}: unexpected error ${e}`);
}

/** Runs fn, which must throw an error that check accepts. */
function throws(fn, check, what) {
  const e = thrown(fn, what);
  assert(check(e), `${what}: unexpected error ${e}`);
}


export const moduleTests = {
  async 'loadModule takes a URL, bytes or a compiled module and dedupes by name'({ rt, webffi, source, bytes }) {
    const mod = await rt.loadModule(source('add_one'));
    assert(mod instanceof webffi.ModuleObject, 'a ModuleObject');
    assertEqual(mod.kind, 'library');
    assertEqual(mod.typeKey, 'ffi.Module');
    const raw = await bytes('add_one');
    const again = await rt.loadModule(raw);
    assertEqual(again.handle, mod.handle, 'bytes give the loaded module');
    // a compiled module's bytes cannot be compared: one compiled anew is
    // refused; replacing with it, then loading it again, gives it back
    const module = await WebAssembly.compile(raw);
    await rt.loadModule(module).then(() => assert(false, 'a module compiled anew is refused'),
      (e) => assert(e instanceof webffi.ValueError &&
        /a different module named `add_one` is already loaded/.test(e.message), e.message));
    const compiled = await rt.loadModule(module, { replace: true });
    const compiledAgain = await rt.loadModule(module);
    assertEqual(compiledAgain.handle, compiled.handle, 'the same compiled module gives the loaded one');
    for (const m of [again, compiled, compiledAgain, mod]) m.dispose();
    // the later cases load add_one from its URL: put the one from bytes back
    (await rt.loadModule(raw, { replace: true })).dispose();
  },

  async 'module functions are callable handles that keep the module alive'({ rt, source, webffi }) {
    const mod = await rt.loadModule(source('add_one'));
    const addInt = mod.getFunction('add_int');
    // A miss throws (upstream's AttributeError), or is null when optional: getGlobal's rule.
    throws(() => mod.getFunction('no_such_function'), (e) => e instanceof webffi.AttributeError && e.message === "Module has no function 'no_such_function'", 'missing');
    assertEqual(mod.getFunction('no_such_function', { optional: true }), null);
    assertEqual(mod.implementsFunction('add_int'), true);
    mod.dispose();
    assertEqual(addInt(41), 42);
    rt.registerGlobal('modules.add_int', addInt, { override: true });
    assertEqual(rt.getGlobal('modules.add_int')(1), 2);
    assertEqual(rt.removeGlobal('modules.add_int'), true);
    addInt.dispose();
  },

  async 'errors raised in a module arrive as JS errors naming the module function'({ rt, webffi, source }) {
    const mod = await rt.loadModule(source('add_one'));
    const raise = mod.getFunction('raise_error');
    throws(() => raise('bad input'), (e) => e instanceof webffi.ValueError && e instanceof webffi.FFIError &&
      e.message === 'bad input' && /in (add_one\.)?__tvm_ffi_raise_error\n/.test(e.backtrace), 'raise_error');
    throws(() => mod.getFunction('add_one')(1, 2), (e) => e instanceof TypeError, 'add_one(1, 2)');
    raise.dispose();
    mod.dispose();
  },

  async 'bad modules are refused with a clear error and nothing half-loaded'({ rt, webffi, source }) {
    await rejects(rt.loadModule(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])),
      (e) => e instanceof webffi.FFIError, 'an empty wasm module');
    await rejects(rt.loadModule(source('bad_import')), (e) => e instanceof webffi.FFIError,
      'a module with a missing import');
    assertEqual(rt.getGlobal('testing.add_one')(1), 2, 'the runtime still works');
  },

  async 'unloadModule removes a module from the loaded table'({ rt, source }) {
    // `webffi build --module` names a module after its output file.
    const first = await rt.loadModule(source('producer'));
    assertEqual(rt.unloadModule('producer'), true);
    assertEqual(rt.unloadModule('producer'), false);
    const second = await rt.loadModule(source('producer'));
    assert(second.handle !== first.handle, 'a fresh instance after unloading');
    first.dispose();
    second.dispose();
  },
};
