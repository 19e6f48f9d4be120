// What upstream tvm-ffi's library gives (tests/fixtures/upstream_values.tsv,
// recorded from it by tests/upstream/record_values.sh), against webffi in
// wasm: tests/c/upstream_values_check.c built for both toolchains prints
// every value (ReprPrint, JSON, hashes, function metadata) and each line
// must be upstream's; and the same values reached from JS through the
// runtime, as an app sees them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../support/raw_runtime.mjs';
import * as webffi from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The fixture as a Map: `section\tcase` -> value (unescaped). */
function readFixture() {
  const values = new Map();
  for (const line of readFileSync(`${root}tests/fixtures/upstream_values.tsv`, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [section, name, value] = line.split('\t');
    values.set(`${section}\t${name}`, value.replace(/\\(.)/g, (_, c) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c));
  }
  return values;
}
const upstream = readFixture();
const want = (section, name) => {
  const v = upstream.get(`${section}\t${name}`);
  assert.notEqual(v, undefined, `no recorded value for ${section} ${name}`);
  return v;
};

for (const [toolchain, dir] of [['emscripten', 'build/wasm'], ['wasi', 'build/wasi']]) {
  test(`every value upstream's library gives, in wasm (${toolchain})`, async () => {
    const { code, stdout } = await runCommand(readFileSync(`${root}${dir}/upstream_values_check.wasm`));
    assert.equal(code, 0, stdout);
    const ours = new Map(stdout.trimEnd().split('\n').map((line) => {
      const [section, name] = line.split('\t');
      return [`${section}\t${name}`, line];
    }));
    const raw = readFileSync(`${root}tests/fixtures/upstream_values.tsv`, 'utf8').trimEnd().split('\n')
      .filter((line) => !line.startsWith('#'));
    let checked = 0;
    const absent = [];
    for (const line of raw) {
      const key = line.split('\t').slice(0, 2).join('\t');
      if (!ours.has(key) && key.startsWith('meta\t')) {
        absent.push(key.slice(5));
        continue;
      }
      assert.equal(ours.get(key), line);
      checked++;
    }
    assert.ok(checked > 350, `${checked} values`);
    // upstream's Python-class hook, which webffi (no Python) does not have;
    // the loader of .so files is the JS host's (js/command.js registers it)
    assert.deepEqual(absent, ['ffi.Module.load_from_file.so', 'ffi._PyClassRegisterTypeAttrColumns']);
  });
}

test('from JS: ReprPrint, Stringify, ToJSONGraphString and the hashes give upstream\'s text', async () => {
  const rt = await webffi.load();
  const g = (name) => rt.getGlobal(name);
  const repr = g('ffi.ReprPrint');
  // JS arrays cross as ffi.Array: a lone element keeps its comma
  assert.equal(repr([42]), want('repr', 'array_one'));
  assert.equal(repr([[[[1]]]]), want('repr', 'array_nested'));
  assert.equal(repr(0.1), want('repr', 'float_tenth'));
  assert.equal(repr(webffi.asFloat(1e10)), want('repr', 'float_1e10'));
  assert.equal(repr(webffi.asFloat(0)), want('repr', 'float_zero'));
  assert.equal(repr(NaN), want('repr', 'float_nan'));
  assert.equal(repr(-Infinity), want('repr', 'float_negative_inf'));
  assert.equal(repr('caf\u00e9'), want('repr', 'str_latin1'));
  assert.equal(repr('\u{1f600}'), want('repr', 'str_emoji'));
  assert.equal(repr('tab\tnl\nq"bs\\cr\r'), want('repr', 'str_escapes'));
  assert.equal(repr(rt.device('trn', 0)), want('repr', 'device_trn'));
  assert.equal(repr(rt.device(5, 2)), want('repr', 'device_unknown'));
  const missing = g('ffi.MapGetItemOrMissing')(new Map(), 0);
  assert.equal(repr(missing), want('repr', 'missing'));
  assert.equal(String(missing), '<MISSING>');
  const list = g('ffi.List')();
  g('ffi.ListAppend')(list, list);
  assert.equal(repr(list), want('repr', 'cycle_list'));
  g('ffi.ListClear')(list);

  const stringify = g('ffi.json.Stringify');
  const floats = [0.1, 1.0, 1e300, -0, 1.5, 1.2345678901234567e20, 5e-324, 9007199254740992.0,
    4503599627370495.5, -2.5e-7, 100.0].map((v) => webffi.asFloat(v));
  assert.equal(stringify(floats), want('json', 'floats'));
  const nested = new Map([['a', []], ['b', new Map()], ['c', [1, new Map([['d', []]]), null]],
    ['e', 's"/\\\x01\x7f caf\u00e9'], ['f', g('ffi.List')(true, 2.5)]]);
  const map = g('ffi.Map')(...[...nested].flat());
  assert.equal(stringify(map), want('json', 'nested'));
  assert.equal(stringify(map, 0), want('json', 'nested_indent_0'));
  assert.equal(stringify(map, 2), want('json', 'nested_indent_2'));
  assert.equal(stringify([], 2), want('json', 'empty_array_indent_2'));
  assert.equal(g('ffi.ToJSONGraphString')([0.1, 2.0, -1e-10].map((v) => webffi.asFloat(v)), null),
    want('graph', 'floats'));

  // hashes come back as numbers when they fit, BigInt otherwise
  const hash = (v) => BigInt(g('ffi.StructuralHash')(v, false, false));
  const rhash = (v) => BigInt(g('ffi.RecursiveHash')(v));
  assert.equal(hash(null), BigInt(want('shash', 'none')));
  assert.equal(hash('abc'), BigInt(want('shash', 'str')));
  assert.equal(hash(webffi.asFloat(1.5)), BigInt(want('shash', 'float')));
  assert.equal(hash([1, 2, 3]), BigInt(want('shash', 'array')));
  assert.equal(rhash([1, 2, 3]), BigInt(want('rhash', 'array')));
  const ab = g('ffi.Map')('a', 1, 'b', 2);
  assert.equal(hash(ab), BigInt(want('shash', 'map')));
  assert.equal(rhash(ab), BigInt(want('rhash', 'map')));
  assert.equal(hash(g('ffi.Shape')(2, 3)), BigInt(want('shash', 'shape')));
  const t = rt.tensor(new Float32Array([0, 1, 2, 3, 4, 5]), { shape: [2, 3] });
  assert.equal(hash(t), BigInt(want('shash', 'tensor')));
  assert.equal(rhash(t), BigInt(want('rhash', 'tensor')));
});

test('every global the runtime registers has a type schema, upstream\'s where upstream has the global', async () => {
  const rt = await webffi.load();
  const metadata = rt.getGlobal('ffi.GetGlobalFuncMetadata');
  const names = rt.listGlobals();
  assert.ok(names.length >= 90, `${names.length} globals`);
  for (const name of names) {
    const text = metadata(name);
    const schema = JSON.parse(JSON.parse(text).type_schema);
    assert.equal(schema.type, 'ffi.Function', name);
    if (upstream.has(`meta\t${name}`)) assert.equal(text, want('meta', name), name);
  }
  // one replaced by the app says what the app said (nothing here), not the builtin's schema
  rt.registerGlobal('ffi.ReprPrint', () => 'x', { override: true });
  assert.equal(metadata('ffi.ReprPrint'), '{}');
});
