// A module built with `webffi build --module` that prints: printf, fprintf
// to stderr, puts and friends come from the runtime, and the output reaches
// the logger given to load(), as linked-in code's does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const wasm = new URL('../../build/wasm/webffi.wasm', import.meta.url);

test('a module that prints: its stdout and stderr reach load({ logger })', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-stdio-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/speak.c`, `#include <stdio.h>
#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_speak(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)n;
  printf("hello %d from a module\\n", (int)a[0].v_int64);
  printf("a float %.2f\\n", 1.5);
  fprintf(stderr, "to stderr: %s\\n", "careful");
  puts("a puts line");
  fputs("an fputs line\\n", stdout);
  fwrite("fwrite\\n", 1, 7, stdout);
  putchar('!');
  putchar('\\n');
  fflush(stdout);
  r->type_index = kTVMFFIInt; r->v_int64 = 7; return 0;
}
`);
  const build = spawnSync(process.execPath, [`${root}bin/webffi.mjs`, 'build', '--module',
    `${dir}/speak.c`, '-o', `${dir}/speak.wasm`], { encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
  const logs = [];
  const warnings = [];
  const rt = await load({ wasm, logger: { log: (m) => logs.push(m), warn: (m) => warnings.push(m) } });
  const mod = await rt.loadModule(`${dir}/speak.wasm`);
  assert.equal(mod.getFunction('speak')(42), 7);
  assert.deepEqual(logs.join('\n').split('\n'),
    ['hello 42 from a module', 'a float 1.50', 'a puts line', 'an fputs line', 'fwrite', '!']);
  assert.deepEqual(warnings.join('\n').split('\n'), ['to stderr: careful']);
});
