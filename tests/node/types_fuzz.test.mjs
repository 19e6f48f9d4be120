// `webffi types` on module metadata of any text (docs/security.md, "webffi
// types"), generated: module names, function and global names, docs, type
// keys, field and method names with newlines, `*/`, backticks, quotes,
// reserved words, leading digits, empty segments, declarations to inject
// (`declare global { interface Array<T> ... }`), and type schemas of any
// shape, one of them nested 100,000 deep. Every file written compiles under
// tsc (strict) against the package's types, declares exactly the interfaces
// and types it should (nothing injected: no `declare global`, no extra
// members), and a schema too deep degrades its own entry to a loose type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import ts from 'typescript';
import { moduleDeclarations, pascalCase } from '../../bin/types.mjs';
import { seeds, SCALE } from '../support/seeded.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

const INJECT = [
  '\n', '\r\n', '\u2028', '*/', '/*', '`', '"', "'", '\\', '${x}', '<T>', '{', '}', ';', '//',
  '*/ declare global { interface Array<T> { pwned: T } } /*',
  '\n}\nexport declare const pwned: number;\nexport interface X {\n',
  '\nexport interface Injected { a: 1 }\n',
];
const WORDS = ['new', 'class', 'constructor', 'readonly', 'get', 'set', 'default', 'string', 'any', 'Tensor', 'FFIObject',
  'Runtime', 'handle', 'dispose', 'typeKey', 'toString', 'prototype', 'name', '__proto__', '1bad', '', ' ', 'é', '🦀', 'ok_name'];
const textArb = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
  { arbitrary: fc.constantFrom(...INJECT, ...WORDS), weight: 3 },
  { arbitrary: fc.array(fc.constantFrom(...INJECT, ...WORDS, 'a', '.'), { maxLength: 5 }).map((p) => p.join('')), weight: 3 },
);
const keyArb = fc.oneof(
  fc.tuple(fc.constantFrom('hostile', 'x', 'ffi', '1', ''), textArb).map(([a, b]) => `${a}.${b}`),
  textArb,
  fc.constantFrom('hostile.1bad', 'hostile.', 'a.Tensor', 'b.Tensor', 'c.FooClass', 'c.Foo', 'd.class', 'e.RuntimeGlobals'),
);

const LEAVES = ['Any', 'None', 'bool', 'int', 'float', 'str', 'bytes', 'Device', 'DataType', 'ffi.Function', 'ffi.Object',
  'ffi.Module', 'ffi.Error', 'ffi.List', 'ffi.Dict', 'ffi.Shape', 'ffi.Tensor', 'DLTensor*', 'hostile.1bad', 'a.Tensor', 'nope'];
const { schema: schemaArb } = fc.letrec((tie) => ({
  schema: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constantFrom(...LEAVES) }),
    fc.record({ type: fc.constantFrom('ffi.Array', 'Optional', 'Union', 'Variant', 'Tuple', 'ffi.Map'), args: fc.array(tie('schema'), { maxLength: 3 }) }),
    fc.record({ type: textArb, args: fc.oneof(fc.constant('not a list'), fc.constant(null), fc.array(tie('schema'), { maxLength: 2 })) }),
    fc.constantFrom(null, 7, 'str', [], {}),
  ),
}));
/** A schema nested `n` deep (built without recursion). */
function deepSchema(n) {
  let s = { type: 'int' };
  for (let i = 0; i < n; i++) s = { type: i % 2 ? 'Optional' : 'ffi.Array', args: [s] };
  return s;
}
const DEEP = deepSchema(100000);
const fnSchemaArb = fc.oneof(
  { arbitrary: fc.array(schemaArb, { minLength: 1, maxLength: 4 }).map((args) => ({ type: 'ffi.Function', args })), weight: 6 },
  { arbitrary: fc.constant({ type: 'ffi.Function', args: [DEEP, DEEP] }), weight: 1 },
  { arbitrary: fc.constantFrom(null, { type: 'ffi.Function' }, { type: 'ffi.Function', args: 'x' }), weight: 1 },
);

const moduleArb = fc.record({
  name: textArb,
  functions: fc.array(fc.record({ name: textArb, schema: fnSchemaArb, doc: fc.option(textArb) }), { maxLength: 4 }),
  globals: fc.array(fc.record({ name: textArb, schema: fnSchemaArb }), { maxLength: 3 }),
  types: fc.uniqueArray(fc.record({
    key: keyArb,
    parentPick: fc.nat(),
    fields: fc.array(fc.record({ name: textArb, writable: fc.boolean(), schema: fc.oneof(schemaArb, fc.constant(DEEP)) }), { maxLength: 3 }),
    methods: fc.array(fc.record({ name: fc.oneof(textArb, fc.constant('__ffi_init__')), isStatic: fc.boolean(), schema: fnSchemaArb }), { maxLength: 3 }),
  }), { maxLength: 4, selector: (t) => t.key }),
}).map((m) => ({
  ...m,
  // parents are types registered before (as in a registry), ffi.Object or none
  types: m.types.map((t, i) => ({ key: t.key, parent: i && t.parentPick % 3 ? m.types[t.parentPick % i].key : t.parentPick % 2 ? 'ffi.Object' : null, fields: t.fields, methods: t.methods })),
}));

/** The top-level declarations of a .d.ts: [kind, name, member count]. */
function topLevel(text) {
  const sf = ts.createSourceFile('x.d.ts', text, ts.ScriptTarget.ES2022, true);
  return sf.statements.map((st) => [ts.SyntaxKind[st.kind], st.name?.text ?? null, st.members?.length ?? null]);
}

test('property: module metadata of any text gives declarations tsc compiles, declaring exactly what it should', { timeout: 300000 }, async (t) => {
  const dir = `${root}build/types-test/fuzz-${process.pid}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const perSeed = Math.max(4, Math.round(40 * SCALE));
  for (const seed of seeds()) {
    const started = Date.now();
    const modules = fc.sample(moduleArb, { seed, numRuns: perSeed });
    const files = modules.map((info, i) => {
      const text = moduleDeclarations(info);
      const file = `${dir}/m${seed}_${i}.ts`; // .ts: declaration files are not checked under skipLibCheck
      writeFileSync(file, text);
      return { file, info, text };
    });
    const program = ts.createProgram(files.map((f) => f.file), {
      target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts'], types: [], strict: true, noEmit: true, skipLibCheck: true,
    });
    for (const { file, info, text } of files) {
      const sf = program.getSourceFile(file);
      const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
      const replay = `seed ${seed}: ${JSON.stringify({ name: info.name, keys: info.types.map((x) => x.key) }).slice(0, 300)}`;
      assert.deepEqual(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], `${replay}\n${text.slice(0, 4000)}`);
      // exactly the declarations it should make, and nothing inside them that the text put there
      const N = pascalCase(info.name);
      const decls = topLevel(text);
      assert.ok(decls.every(([kind]) => ['ImportDeclaration', 'InterfaceDeclaration', 'TypeAliasDeclaration'].includes(kind)), `${replay}: ${JSON.stringify(decls)}`);
      const names = decls.filter(([kind]) => kind !== 'ImportDeclaration').map(([, n]) => n);
      assert.equal(names.length, 5 + 2 * info.types.length, `${replay}: ${names}`);
      assert.equal(new Set(names).size, names.length, `${replay}: a name declared twice: ${names}`);
      const members = Object.fromEntries(decls.map(([, n, m]) => [n, m]));
      assert.equal(members[`${N}Functions`], new Set(info.functions.map((f) => f.name)).size, `${replay}: functions`);
      assert.equal(members[`${N}Globals`], new Set(info.globals.map((g) => g.name)).size, `${replay}: globals`);
      assert.equal(members[`${N}Types`], info.types.length, `${replay}: types`);
      assert.equal(members[`${N}Module`], 3, `${replay}: the module interface`);
    }
    t.diagnostic(`seed ${seed}: ${files.length} modules compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
});

test('a schema nested 100,000 deep degrades its own entry; the others keep their types', () => {
  const text = moduleDeclarations({
    name: 'deep',
    functions: [
      { name: 'deep', schema: { type: 'ffi.Function', args: [DEEP, DEEP] }, doc: null },
      { name: 'plain', schema: { type: 'ffi.Function', args: [{ type: 'str' }, { type: 'int' }] }, doc: null },
    ],
    globals: [],
    types: [{ key: 'deep.Node', parent: null, fields: [{ name: 'x', writable: false, schema: DEEP }, { name: 'y', writable: true, schema: { type: 'float' } }], methods: [] }],
  });
  assert.match(text, /plain: \(_0: number \| bigint\) => string;/);
  const deep = text.split('\n').find((l) => l.startsWith('  deep: '));
  assert.ok(deep, 'the deep function is declared');
  const levels = deep.split('ArrayObject |').length - 1;
  assert.ok(levels > 4 && levels <= 32, `typed ${levels} levels deep, then loosely (FFIInput)`);
  assert.match(deep, /\(FFIInput \| null \| undefined\)\[\]/);
  assert.match(text, /readonly x: ArrayObject \| null;/);
  assert.match(text, /y: number;/);
  assert.ok(text.length < 64 << 10, `${text.length} characters`);
});
