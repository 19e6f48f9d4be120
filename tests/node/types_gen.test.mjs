// `webffi types`: TypeScript declarations from tvm-ffi metadata. On a C
// module that records it (tests/modules/typed.c): the declarations type-check
// an app that calls the module's functions, its global and its class, and
// reject wrong calls; the app, compiled by tsc, runs and gets what the types
// say. And js/globals.d.ts (the runtime's own globals, which type getGlobal)
// is what `webffi types --runtime-globals` writes now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const typedModule = `${root}build/wasm/tests/modules/typed.wasm`;

const webffi = (...args) => spawnSync(process.execPath, [`${root}bin/webffi.mjs`, ...args], { encoding: 'utf8' });
const tsc = (dir, ...args) => spawnSync(`${root}node_modules/.bin/tsc`, args, { cwd: dir, encoding: 'utf8' });

/** A folder inside the package (so TypeScript and Node resolve 'webffi' to it by its own name). */
function workDir(t, name) {
  const dir = `${root}build/types-test/${name}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const TSCONFIG = {
  compilerOptions: {
    target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'],
    types: [], strict: true, skipLibCheck: false, outDir: 'out', rootDir: '.',
  },
};

const APP = `import { load } from 'webffi';
import type { TypedModule, WithTyped } from './typed.js';

const rt = (await load({ autoloadBackends: false })) as WithTyped;
const mod = (await rt.loadModule(${JSON.stringify(typedModule)})) as TypedModule;
const scale = mod.getFunction('scale');
const scaled: number = scale(1.5, 2);
const greeting: string = mod.getFunction('greet')('wasm');
const count = mod.getFunction('untyped')(1, 'two', [3]);
const joined: string = rt.getGlobal('typed.join')(['a', 'b', 'c']);
const dashed: string = rt.getGlobal('typed.join')(['a', 'b'], '-');
const Point = rt.objectClass('typed.Point');
const p = new Point(3, 4);
const norm2: number = p.norm2();
p.x = 6;
const label: string = p.label;
const repr: string = rt.getGlobal('ffi.ReprPrint')(p);
const missing = mod.getFunction('not_there', { optional: true });
// wrong uses, which tsc must refuse (never run)
export function wrong() {
  // @ts-expect-error: scale takes a float and an int
  scale('1.5', 2);
  // @ts-expect-error: y is read-only
  p.y = 1;
}
export const results = { scaled, greeting, count, joined, dashed, norm2, x: p.x, label, repr, missing };
`;

test('webffi types on a C module with metadata: the declarations type an app, which runs', (t) => {
  const dir = workDir(t, 'typed');
  const gen = webffi('types', typedModule, '-o', join(dir, 'typed.d.ts'));
  assert.equal(gen.status, 0, gen.stderr);
  const dts = readFileSync(join(dir, 'typed.d.ts'), 'utf8');
  assert.match(dts, /^ {2}scale: \(_0: number, _1: number \| bigint\) => number;$/m);
  assert.match(dts, /^ {2}"typed\.join": \(_0: ArrayObject \| string\[\], _1\?: string \| null \| undefined\) => string;$/m);
  assert.match(dts, /^ {2}readonly y: number;$/m);
  assert.match(dts, /^ {2}new \(_0: number, _1: number\): Point;$/m);
  assert.match(dts, /^ {2}untyped: \(\.\.\.args: FFIInput\[\]\) => any;$/m);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files: ['app.ts'] }));
  writeFileSync(join(dir, 'app.ts'), APP);
  const compiled = tsc(dir, '-p', 'tsconfig.json');
  assert.equal(`${compiled.stdout}${compiled.stderr}`, '');
  assert.equal(compiled.status, 0);
  // the app as tsc wrote it runs, and gets what its types say
  const run = spawnSync(process.execPath, ['--input-type=module', '-e',
    `const { results } = await import(${JSON.stringify(join(dir, 'out/app.js'))});
     console.log(JSON.stringify(results));`], { encoding: 'utf8', cwd: dir });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), {
    scaled: 3, greeting: 'hello, wasm', count: 3, joined: 'a, b, c', dashed: 'a-b', norm2: 25, x: 6,
    label: 'point', repr: 'typed.Point(x=6, y=4, label="point")', missing: null,
  });
});

test('webffi types: a wrong call is a type error that names the parameter\'s type', (t) => {
  const dir = workDir(t, 'typed-wrong');
  assert.equal(webffi('types', typedModule, '-o', join(dir, 'typed.d.ts')).status, 0);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files: ['wrong.ts'] }));
  writeFileSync(join(dir, 'wrong.ts'), `import type { TypedModule, WithTyped } from './typed.js';
declare const rt: WithTyped;
declare const mod: TypedModule;
mod.getFunction('greet')(42);
new (rt.objectClass('typed.Point'))(1);
rt.getGlobal('typed.join')('a, b');
`);
  const compiled = tsc(dir, '-p', 'tsconfig.json', '--noEmit');
  const output = `${compiled.stdout}${compiled.stderr}`;
  assert.notEqual(compiled.status, 0);
  assert.match(output, /wrong\.ts\(4,26\): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'/);
  assert.match(output, /wrong\.ts\(5,1\): error TS2554: Expected 2 arguments, but got 1/);
  assert.match(output, /wrong\.ts\(6,28\): error TS2345: Argument of type 'string' is not assignable to parameter of type '(ArrayObject \| string\[\]|string\[\] \| ArrayObject)'/);
  assert.equal(output.match(/error TS/g).length, 3, output);
});

test('webffi types: bad command lines are usage errors (exit 2), a file that is no module fails (exit 1)', (t) => {
  const dir = workDir(t, 'typed-bad');
  for (const args of [[], ['--runtime-globals', typedModule], ['a.wasm', 'b.wasm'], ['--nope', typedModule],
    [typedModule, '--name', 'not an identifier'], [typedModule, '-o']]) {
    const r = webffi('types', ...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^webffi: types: .*\nusage: webffi types/);
  }
  writeFileSync(join(dir, 'junk.wasm'), 'not wasm');
  const junk = webffi('types', join(dir, 'junk.wasm'));
  assert.equal(junk.status, 1);
  assert.match(junk.stderr, /^webffi: types: .*junk\.wasm: .*not a wasm module/);
  const named = webffi('types', typedModule, '--name', 'Geo');
  assert.equal(named.status, 0, named.stderr);
  assert.match(named.stdout, /export interface GeoFunctions \{/);
  assert.match(named.stdout, /export type WithGeo</);
});

test('js/globals.d.ts is what webffi types --runtime-globals writes for this runtime', () => {
  const gen = webffi('types', '--runtime-globals');
  assert.equal(gen.status, 0, gen.stderr);
  assert.equal(readFileSync(`${root}js/globals.d.ts`, 'utf8'), gen.stdout,
    'regenerate it: node bin/webffi.mjs types --runtime-globals -o js/globals.d.ts');
  // every global is typed: none falls back to any arguments but the packed ones
  const packed = gen.stdout.match(/^ {2}"([^"]+)": \(\.\.\.args: FFIInput\[\]\) => any;$/gm).map((l) => l.split('"')[1]);
  assert.deepEqual(packed.sort(), ['ffi.Array', 'ffi.Dict', 'ffi.List', 'ffi.MakeObjectFromPackedArgs', 'ffi.Map',
    'ffi.Shape', 'ffi.SystemLib', 'webffi.SetDeviceAPI', 'webffi.rpc.EndpointCreate']);
});
