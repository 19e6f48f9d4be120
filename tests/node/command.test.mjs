// Command programs: `webffi build` of a source with main (tests/modules/
// load_and_call.c, built by CMake) and `webffi run`, which runs it under
// Node with argv, stdout, stderr and the exit code of a native program; the
// program loads modules at run time from files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../../js/command.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const modules = `${root}build/wasm/tests/modules`;
const webffi = (args, options = {}) => spawnSync(process.execPath,
  [`${root}bin/webffi.mjs`, ...args], { encoding: 'utf8', ...options });

test('webffi run: argv in, stdout and exit code out, modules loaded from files', () => {
  let run = webffi(['run', 'load_and_call.wasm', 'add_one.wasm', 'add_int', '41'], { cwd: modules });
  assert.deepEqual([run.status, run.stdout, run.stderr], [0, 'add_int(41) = 42\n', '']);
  // upstream's loader name and arguments: ffi.Module.load_from_file.so(path, "so")
  run = webffi(['run', `${modules}/load_and_call.wasm`, `${modules}/add_one.wasm`, 'add_int',
    '-8', '--so']);
  assert.deepEqual([run.status, run.stdout, run.stderr], [0, 'add_int(-8) = -7\n', '']);
});

test('webffi run: a failing program reports on stderr with its own exit code', () => {
  let run = webffi(['run', 'load_and_call.wasm'], { cwd: modules });
  assert.deepEqual([run.status, run.stdout, run.stderr],
    [2, '', 'usage: load_and_call.wasm MODULE FUNCTION INT [--so]\n']);
  run = webffi(['run', 'load_and_call.wasm', 'missing.so', 'f', '1', '--so'], { cwd: modules });
  assert.equal(run.status, 1);
  assert.match(run.stderr,
    /^RuntimeError: Cannot load module `missing\.so`: ENOENT: no such file or directory/);
  run = webffi(['run', 'load_and_call.wasm', 'add_one.wasm', 'add_int', '1x'], { cwd: modules });
  assert.deepEqual([run.status, run.stdout], [0, 'add_int(1x) = 2\n']);
  run = webffi(['run', 'load_and_call.wasm', 'add_one.wasm', 'no_such', '1'], { cwd: modules });
  assert.deepEqual([run.status, run.stderr], [1, 'add_one.wasm has no function no_such\n']);
  run = webffi(['run', `${modules}/add_one.wasm`]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /not a webffi command program/);
  run = webffi(['run']);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^webffi: run: no program/);
});

test('runCommand runs a program in-process with given argv and output sinks', async () => {
  const out = [];
  const code = await runCommand(readFileSync(`${modules}/load_and_call.wasm`), {
    args: ['prog', `${modules}/add_one.wasm`, 'add_int', '99'],
    write: (fd, text) => out.push([fd, text]),
  });
  assert.equal(code, 0);
  assert.deepEqual(out, [[1, 'add_int(99) = 100\n']]);
});

test('webffi build never drops main: --module refuses it, --command requires it', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/prog.c`, 'int main(int argc, char** argv) { (void)argv; return argc; }\n');
  writeFileSync(`${dir}/lib.c`, 'int f(void) { return 1; }\n');
  let run = webffi(['build', '--module', `${dir}/prog.c`, '-o', `${dir}/prog.wasm`]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /webffi: a module cannot define main\(\); build a command program without --module\n$/);
  run = webffi(['build', '--command', `${dir}/lib.c`, '-o', `${dir}/lib.wasm`]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /webffi: --command: no source defines main\(\)\n$/);
  run = webffi(['build', '--module', '--command', `${dir}/lib.c`]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /--module and --command exclude each other/);
});
