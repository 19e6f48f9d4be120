// `webffi build` of a one-file library, linked in: wall time of the whole
// command (Node, emcc, link) here and, given as an argument, in another
// checkout (e.g. one from before the prebuilt runtime), run alternately so
// that load from other processes falls on both alike. Medians of ROUNDS.
// Run after `npm run build`: node bench/cli_build.mjs [OTHER_CHECKOUT] [ROUNDS]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('../', import.meta.url));
const other = process.argv[2] ?? null;
const rounds = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'webffi-bench-'));
writeFileSync(join(dir, 'lib.c'), `#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_answer(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = 42; return 0;
}
`);

/**
 * [wall, cpu] seconds of one build; cpu (user + system of the command and
 * its children, from GNU time) is what a busy machine inflates least.
 */
function seconds(checkout, extra) {
  const start = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', 'webffi-bench-cpu %U %S', process.execPath,
    join(checkout, 'bin/webffi.mjs'), 'build', ...extra, join(dir, 'lib.c'), '-o', join(dir, 'out.wasm')],
  { encoding: 'utf8' });
  const wall = (performance.now() - start) / 1000;
  if (run.status !== 0) throw new Error(`${checkout}: ${run.error?.message ?? run.stderr}`);
  const [, user, system] = /webffi-bench-cpu (\S+) (\S+)/.exec(run.stderr);
  return [wall, Number(user) + Number(system)];
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const cases = [['this checkout, -O2 (default)', here, []], ['this checkout, -O0', here, ['-O0']]];
if (other) cases.push(['other checkout, -O2', other, []]);
const times = cases.map(() => []);
for (let r = 0; r < rounds; r++) cases.forEach(([, checkout, extra], i) => times[i].push(seconds(checkout, extra)));
for (const [i, [name]] of cases.entries()) {
  const wall = times[i].map(([w]) => w);
  const cpu = times[i].map(([, c]) => c);
  console.log(`${name.padEnd(30)} wall median ${median(wall).toFixed(2)} s (${wall.map((t) => t.toFixed(1)).join(' ')}), ` +
    `cpu median ${median(cpu).toFixed(2)} s`);
}
rmSync(dir, { recursive: true, force: true });
