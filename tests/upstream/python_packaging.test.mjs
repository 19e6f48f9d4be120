// Upstream tvm-ffi's examples/python_packaging, unchanged: src/extension.cc
// (add_two exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC, the globals
// my_ffi_extension.add_one and .raise_error, the object type
// my_ffi_extension.IntPair) built by `webffi build --module` against
// upstream's headers with TVM_FFI_DLL_EXPORT_INCLUDE_METADATA; `webffi types`
// writes its declarations; and its run_example.py, ported to TypeScript on
// them, type-checks, refuses wrong calls, compiles and prints what the
// Python prints. Upstream's tree never enters this repository:
// WEBFFI_UPSTREAM_INCLUDE names its include/ folder (examples/ is beside it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const upstream = process.env.WEBFFI_UPSTREAM_INCLUDE;
if (!upstream || !existsSync(join(upstream, 'tvm/ffi/c_api.h'))) {
  throw new Error('WEBFFI_UPSTREAM_INCLUDE must name the include/ folder of an upstream tvm-ffi checkout');
}
const source = join(upstream, '../examples/python_packaging/src/extension.cc');
if (!existsSync(source)) throw new Error(`no upstream python_packaging example at ${source}`);

const cli = (...args) => spawnSync(process.execPath, [join(root, 'bin/webffi.mjs'), ...args], { encoding: 'utf8' });

// run_example.py, ported: the same four examples, on the generated types
const RUN_EXAMPLE = `import { load, type FFIError } from 'webffi';
import type { MyFfiExtensionModule, WithMyFfiExtension } from './my_ffi_extension.js';

const rt = (await load({ autoloadBackends: false })) as WithMyFfiExtension;
const LIB = (await rt.loadModule(process.argv[2])) as MyFfiExtensionModule;
const addOne = rt.getGlobal('my_ffi_extension.add_one');
const raiseError = rt.getGlobal('my_ffi_extension.raise_error');
const IntPair = rt.objectClass('my_ffi_extension.IntPair');

console.log('=========== Example 1: add_two ===========');
const three: number | bigint = LIB.getFunction('add_two')(1);
console.log(three);
console.log('=========== Example 2: add_one ===========');
console.log(addOne(3));
console.log('=========== Example 3: raise_error ===========');
try {
  raiseError('This is an error');
} catch (e) {
  console.log(\`\${(e as FFIError).kind}: \${(e as Error).message}\`);
}
console.log('=========== Example 4: IntPair ===========');
const pair = new IntPair(1, 2);
console.log(\`a=\${pair.a}\`);
console.log(\`b=\${pair.b}\`);
console.log(\`sum=\${pair.sum()}\`);

export function wrong() {
  // @ts-expect-error: add_two takes an int
  LIB.getFunction('add_two')('1');
  // @ts-expect-error: IntPair takes two ints
  new IntPair(1);
  // @ts-expect-error: raise_error takes a string
  raiseError(7);
}
`;

test('python_packaging: built from upstream\'s source, typed by webffi types, run_example ported runs', (t) => {
  const dir = join(root, 'build/types-test/python_packaging');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const wasm = join(dir, 'my_ffi_extension.wasm');
  const built = cli('build', '--module', '--tvm-ffi-include', upstream, '-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1',
    '--name', 'my_ffi_extension', source, '-o', wasm);
  assert.equal(built.status, 0, built.stderr);
  const gen = cli('types', wasm, '-o', join(dir, 'my_ffi_extension.d.ts'));
  assert.equal(gen.status, 0, gen.stderr);
  const dts = readFileSync(join(dir, 'my_ffi_extension.d.ts'), 'utf8');
  // upstream's stub generator gives `add_one(_0: int, /) -> int`, `raise_error(_0: str, /) -> None`,
  // `IntPair(_0: int, _1: int)` with `a: int`, `b: int` and `sum(self, /) -> int`
  assert.match(dts, /^ {2}add_two: \(_0: number \| bigint\) => number \| bigint;$/m);
  assert.match(dts, /^ {2}"my_ffi_extension\.add_one": \(_0: number \| bigint\) => number \| bigint;$/m);
  assert.match(dts, /^ {2}"my_ffi_extension\.raise_error": \(_0: string\) => void;$/m);
  assert.match(dts, /^ {2}a: number \| bigint;$/m);
  assert.match(dts, /^ {2}sum\(\): number \| bigint;$/m);
  assert.match(dts, /^ {2}new \(_0: number \| bigint, _1: number \| bigint\): IntPair;$/m);
  writeFileSync(join(dir, 'run_example.ts'), RUN_EXAMPLE);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: ['node'],
      strict: true, skipLibCheck: false, outDir: 'out', rootDir: '.',
    },
    files: ['run_example.ts'],
  }));
  const tsc = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
  assert.equal(`${tsc.stdout}${tsc.stderr}`, '');
  const run = spawnSync(process.execPath, [join(dir, 'out/run_example.js'), wasm], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, [
    '=========== Example 1: add_two ===========', '3',
    '=========== Example 2: add_one ===========', '4',
    '=========== Example 3: raise_error ===========', 'RuntimeError: This is an error',
    '=========== Example 4: IntPair ===========', 'a=1', 'b=2', 'sum=3', '',
  ].join('\n'));
});
