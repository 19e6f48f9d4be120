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

test('webffi run: a trap ends the program with exit code 134; file-system calls fail with ENOSYS', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // mkdir and stat are Emscripten syscalls, not WASI calls: the program
  // still starts, and they fail as on a system without a file system
  writeFileSync(`${dir}/fs.c`, `#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
int main(int argc, char** argv) {
  struct stat st;
  int made = mkdir("made", 0777), e1 = errno;
  int found = stat(argv[0], &st), e2 = errno;
  printf("mkdir=%d %s stat=%d %s\\n", made, e1 == ENOSYS ? "ENOSYS" : strerror(e1), found,
         e2 == ENOSYS ? "ENOSYS" : strerror(e2));
  fflush(stdout);
  if (argc > 1) { volatile int* bad = (int*)0x7fffffff; return *bad; }
  return 0;
}
`);
  let run = webffi(['build', `${dir}/fs.c`, '-o', `${dir}/fs.wasm`]);
  assert.equal(run.status, 0, run.stderr);
  run = webffi(['run', `${dir}/fs.wasm`]);
  assert.deepEqual([run.status, run.stdout, run.stderr], [0, 'mkdir=-1 ENOSYS stat=-1 ENOSYS\n', '']);
  run = webffi(['run', `${dir}/fs.wasm`, 'trap']);
  assert.equal(run.status, 134);
  assert.equal(run.stdout, 'mkdir=-1 ENOSYS stat=-1 ENOSYS\n');
  assert.equal(run.stderr, `webffi: run: ${dir}/fs.wasm: trap: memory access out of bounds\n`);
});

test('webffi build -c, then a C++ link of the objects alone (--cxx): exceptions and main work', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webffi-cmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(`${dir}/parse.cc`, `#include <stdexcept>
#include <string>
int Parse(const std::string& s) {
  std::size_t used = 0;
  int v = std::stoi(s, &used);
  if (used != s.size()) throw std::invalid_argument("trailing characters in " + s);
  return v;
}
`);
  writeFileSync(`${dir}/main.cc`, `#include <cstdio>
#include <stdexcept>
#include <string>
int Parse(const std::string& s);
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    try {
      std::printf("%d\\n", Parse(argv[i]));
    } catch (const std::exception& e) {
      std::printf("error: %s\\n", e.what());
      return 3;
    }
  }
  return 0;
}
`);
  let run = webffi(['build', '-c', `${dir}/parse.cc`, '-o', `${dir}/parse.o`]);
  assert.equal(run.status, 0, run.stderr);
  // several sources without -o: NAME.o each, in the current folder
  run = webffi(['build', '-c', '-DUNUSED=1', 'main.cc'], { cwd: dir });
  assert.equal(run.status, 0, run.stderr);
  run = webffi(['build', '-c', `${dir}/parse.cc`, `${dir}/main.cc`, '-o', `${dir}/x.o`]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /-c -o FILE takes one source/);
  run = webffi(['build', '-c', `${dir}/parse.o`]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /-c: objects and archives have nothing to compile/);
  run = webffi(['build', '--cxx', `${dir}/main.o`, `${dir}/parse.o`, '-o', `${dir}/prog.wasm`]);
  assert.equal(run.status, 0, run.stderr);
  run = webffi(['run', `${dir}/prog.wasm`, '12', '34x', '5']);
  assert.deepEqual([run.status, run.stdout, run.stderr], [3, '12\nerror: trailing characters in 34x\n', '']);
});
