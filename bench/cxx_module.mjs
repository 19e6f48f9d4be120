// A C++ module on upstream tvm-ffi's headers, built with `webffi build
// --module`: upstream's quickstart (examples/quickstart/compile/add_one_cpu.cc,
// one TVM_FFI_DLL_EXPORT_TYPED_FUNC) by this checkout and, given one, by
// another (e.g. the one before a change), alternately so that load from
// other processes falls on both alike. Prints the module's size (raw, gzip
// -9), its exports and imports, and the build's wall and CPU time (medians
// of ROUNDS), with ratios this / other.
//
//   WEBFFI_UPSTREAM_INCLUDE=/path/tvm-ffi/include node bench/cxx_module.mjs [OTHER_CHECKOUT] [ROUNDS]
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = fileURLToPath(new URL('../', import.meta.url));
const include = process.env.WEBFFI_UPSTREAM_INCLUDE;
const source = include && join(include, '../examples/quickstart/compile/add_one_cpu.cc');
if (!source || !existsSync(source)) {
  console.error('bench/cxx_module.mjs: set WEBFFI_UPSTREAM_INCLUDE to upstream tvm-ffi\'s include folder (with examples/ next to it)');
  process.exit(2);
}
const other = process.argv[2] ?? null;
const rounds = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'webffi-bench-cxx-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
copyFileSync(source, join(dir, 'add_one_cpu.cc'));

/** One build: its wall and CPU seconds (user + system of the command and its children), and the module. */
function build(checkout, out) {
  const start = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', 'webffi-bench-cpu %U %S', process.execPath, join(checkout, 'bin/webffi.mjs'),
    'build', '--module', '--tvm-ffi-include', include, join(dir, 'add_one_cpu.cc'), '-o', out], { encoding: 'utf8' });
  const wall = (performance.now() - start) / 1000;
  if (run.status !== 0) throw new Error(`${checkout}: ${run.stderr}`);
  const [, user, system] = /webffi-bench-cpu (\S+) (\S+)/.exec(run.stderr);
  const warnings = (run.stderr.match(/warning:/g) ?? []).length;
  return { wall, cpu: Number(user) + Number(system), warnings };
}

function describe(file) {
  const bytes = readFileSync(file);
  const mod = new WebAssembly.Module(bytes);
  const exports = WebAssembly.Module.exports(mod).map((e) => e.name);
  return {
    raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, exports: exports.length,
    tvmFfi: exports.filter((n) => n.startsWith('__tvm_ffi_')).length, imports: WebAssembly.Module.imports(mod).length,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cases = [['this checkout', here]];
if (other) cases.push(['other checkout', other]);
const times = cases.map(() => []);
for (let r = 0; r < rounds; r++) {
  cases.forEach(([, checkout], i) => times[i].push(build(checkout, join(dir, `out_${i}.wasm`))));
}
const rows = cases.map(([name], i) => ({
  name, ...describe(join(dir, `out_${i}.wasm`)),
  wall: median(times[i].map((t) => t.wall)), cpu: median(times[i].map((t) => t.cpu)), warnings: times[i][0].warnings,
}));
for (const r of rows) {
  console.log(`${r.name.padEnd(16)} ${(r.raw / 1024).toFixed(1)} KB (${(r.gzip / 1024).toFixed(1)} KB gzip), ` +
    `${r.exports} exports (${r.tvmFfi} __tvm_ffi_*), ${r.imports} imports, ${r.warnings} compiler warnings; ` +
    `build: wall median ${r.wall.toFixed(2)} s, cpu median ${r.cpu.toFixed(2)} s (${rounds} rounds)`);
}
if (rows.length === 2) {
  const [a, b] = rows;
  console.log(`this / other: size ${(a.raw / b.raw).toFixed(2)}x, gzip ${(a.gzip / b.gzip).toFixed(2)}x, ` +
    `exports ${(a.exports / b.exports).toFixed(3)}x, wall ${(a.wall / b.wall).toFixed(2)}x, cpu ${(a.cpu / b.cpu).toFixed(2)}x`);
}
