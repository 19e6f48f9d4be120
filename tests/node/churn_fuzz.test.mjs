// Things never given back, as a class: random churn of global registrations
// (a few names again and again, fresh names each time) and of loaded modules
// (loaded, used, kept or dropped, unloaded, reloaded) must leave the runtime
// as it was: the registry lists exactly the live names, a module's kept
// function keeps working after its name is unloaded, and once everything is
// released the function table and wasm memory are back to their size before
// the churn (tests/c/test_bounded.c counts the registry's table the same way).
// The time per cycle stays flat too: measured in bench/ and docs/security.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as webffi from '../../js/index.js';
import { check } from '../support/seeded.mjs';

const wasm = readFileSync(new URL('../../dist/webffi.wasm', import.meta.url));
const addOneModule = readFileSync(new URL('../../build/wasm/tests/modules/add_one.wasm', import.meta.url));
const rt = await webffi.load({ wasm, autoloadBackends: false });
const x = rt.exports;
const table = x.__indirect_function_table;

const registryOp = fc.oneof(
  fc.record({ op: fc.constant('register'), name: fc.nat(7) }),
  fc.record({ op: fc.constant('remove'), name: fc.nat(7) }),
  fc.record({ op: fc.constant('fresh'), n: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ op: fc.constant('call'), name: fc.nat(7) }),
);

let fresh = 0;
function registryRun(ops) {
  const live = new Map();
  for (const o of ops) {
    const name = `churn.n${o.name}`;
    switch (o.op) {
      case 'register': {
        const v = fresh++;
        rt.registerGlobal(name, () => v, { override: true });
        live.set(name, v);
        break;
      }
      case 'remove':
        assert.equal(rt.removeGlobal(name), live.delete(name));
        break;
      case 'fresh':
        for (let i = 0; i < o.n; i++) {
          const n = `churn.fresh${fresh++}`;
          rt.registerGlobal(n, () => i);
          assert.equal(rt.removeGlobal(n), true);
        }
        break;
      case 'call':
        if (live.has(name)) assert.equal(rt.getGlobal(name)(), live.get(name));
        else assert.equal(rt.getGlobal(name, { optional: true }), null);
        break;
      default:
        throw new Error(o.op);
    }
  }
  const listed = rt.listGlobals().filter((n) => n.startsWith('churn.'));
  assert.deepEqual(listed.sort(), [...live.keys()].sort());
  for (const name of live.keys()) rt.removeGlobal(name);
}

const moduleOp = fc.oneof(
  fc.record({ op: fc.constant('load') }),
  fc.record({ op: fc.constant('keepFunction') }),
  fc.record({ op: fc.constant('dropFunction'), i: fc.nat() }),
  fc.record({ op: fc.constant('dropModule'), i: fc.nat() }),
  fc.record({ op: fc.constant('unload') }),
  fc.record({ op: fc.constant('call'), i: fc.nat() }),
);

async function moduleRun(ops) {
  const modules = [];
  const functions = [];
  const x0 = rt.tensor(new Float32Array([1, 2, 3]));
  const y0 = rt.empty([3], 'float32');
  for (const o of ops) {
    switch (o.op) {
      case 'load':
        modules.push(await rt.loadModule(addOneModule));
        break;
      case 'keepFunction':
        if (modules.length) functions.push(modules[modules.length - 1].getFunction('add_one'));
        break;
      case 'dropFunction':
        if (functions.length) functions.splice(o.i % functions.length, 1)[0].dispose();
        break;
      case 'dropModule':
        if (modules.length) modules.splice(o.i % modules.length, 1)[0].dispose();
        break;
      case 'unload':
        rt.unloadModule('add_one');
        break;
      case 'call':
        // a kept function keeps its module (and its code and data) alive, unloaded or not
        if (functions.length) {
          functions[o.i % functions.length](x0, y0);
          assert.deepEqual(Array.from(y0.view()), [2, 3, 4]);
        }
        break;
      default:
        throw new Error(o.op);
    }
  }
  for (const h of [...modules, ...functions, x0, y0]) h.dispose();
  rt.unloadModule('add_one');
}

test('register/remove churn leaves the registry with its live names and memory as it was', { timeout: 300000 }, async (t) => {
  registryRun([{ op: 'fresh', n: 1 }]); // first growths happen here, not in the count
  const before = x.memory.buffer.byteLength;
  await check(t, import.meta.url, fc.property(fc.array(registryOp, { maxLength: 30 }), registryRun), 300);
  for (let i = 0; i < 20000; i++) {
    rt.registerGlobal('churn.one', () => i, { override: true });
    rt.removeGlobal('churn.one');
  }
  registryRun([{ op: 'fresh', n: 20000 }]);
  assert.equal(x.memory.buffer.byteLength, before, 'wasm memory grew under registry churn');
});

test('load/unload churn gives back table slots and memory once every reference is gone', { timeout: 300000 }, async (t) => {
  await moduleRun([{ op: 'load' }, { op: 'keepFunction' }, { op: 'call', i: 0 }]); // the first load sets up the loader
  const slots = table.length;
  const memory = x.memory.buffer.byteLength;
  await check(t, import.meta.url, fc.asyncProperty(fc.array(moduleOp, { maxLength: 25 }), async (ops) => {
    // modules alive at once need slots of their own (the table cannot
    // shrink); once they died, the same churn again needs no new ones
    await moduleRun(ops);
    const after = table.length;
    await moduleRun(ops);
    assert.equal(table.length, after, 'the same churn again grew the table: slots of modules that died were kept');
  }), 150);
  const peak = table.length;
  for (let i = 0; i < 300; i++) await moduleRun([{ op: 'load' }, { op: 'keepFunction' }, { op: 'call', i: 0 }]);
  assert.equal(table.length, peak, 'the function table grew under load/unload churn');
  assert.ok(slots <= peak, `${slots} ${peak}`);
  assert.equal(x.memory.buffer.byteLength, memory, 'wasm memory grew under load/unload churn');
});
