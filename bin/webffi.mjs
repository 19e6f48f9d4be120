#!/usr/bin/env node
// webffi build: compiles C sources written against include/ to wasm with
// Emscripten, either linked into the runtime (the default: one wasm whose
// `ffi.SystemLib()` serves the sources' `__tvm_ffi_*` symbols) or as a
// module loaded into a running runtime (--module).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const include = join(root, 'include');

const USAGE = `usage: webffi build [--module] [-o OUT.wasm] [--name NAME] [options] SOURCES...

  (default)    link the sources into the runtime: one wasm, a drop-in
               webffi.wasm whose ffi.SystemLib() serves their functions
  --module     build a module to load into a running runtime
               (ffi.ModuleLoadFromFile / loadModule)
  -o FILE      output (default: the first source's name with .wasm)
  --name NAME  the module's name in the runtime's table of loaded modules
               (default: the output's base name)
  -I DIR, -D NAME[=VALUE], -O0..-O3, -g
               passed to the compiler, as are other flags starting with -
Needs Emscripten (emcc, emnm) on PATH.`;

function die(message) {
  console.error(`webffi: ${message}`);
  process.exit(1);
}

function run(tool, args) {
  const result = spawnSync(tool, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.error) die(`cannot run ${tool}: ${result.error.message}`);
  if (result.status !== 0) die(`${tool} failed (exit ${result.status})`);
  return result.stdout;
}

function parseArgs(argv) {
  const opts = { module: false, out: null, name: null, flags: [], sources: [], opt: '-O2' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? die(`${a} needs a value`);
    if (a === '--module') opts.module = true;
    else if (a === '-o') opts.out = value();
    else if (a === '--name') opts.name = value();
    else if (a === '-I' || a === '-D') opts.flags.push(a, value());
    else if (/^-O[0-3sz]$/.test(a)) opts.opt = a;
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a.startsWith('-')) opts.flags.push(a);
    else opts.sources.push(a);
  }
  if (opts.sources.length === 0) die(`no sources\n${USAGE}`);
  opts.out ??= `${basename(opts.sources[0], extname(opts.sources[0]))}.wasm`;
  opts.name ??= basename(opts.out, '.wasm');
  return opts;
}

/** Appends a custom section (id 0): name and payload, both length-prefixed. */
function withCustomSection(wasm, name, payload) {
  const leb = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      n >>>= 7;
    } while (n > 0);
    return out;
  };
  const nameBytes = Buffer.from(name);
  const body = Buffer.concat([Buffer.from(leb(nameBytes.length)), nameBytes, Buffer.from(payload)]);
  return Buffer.concat([wasm, Buffer.from([0, ...leb(body.length)]), body]);
}

/** The value of `#define NAME <integer>` in header FILE under include/. */
function defined(file, name) {
  const header = readFileSync(join(include, file), 'utf8');
  return Number(new RegExp(`#define ${name} (\\d+)`).exec(header)[1]);
}

function buildModule(opts) {
  run('emcc', [opts.opt, '-sSIDE_MODULE=1', '--profiling-funcs', `-I${include}`, ...opts.flags,
    ...opts.sources, '-o', opts.out]);
  const declaration = JSON.stringify({
    name: opts.name,
    module_abi_version: defined('webffi/module.h', 'WEBFFI_MODULE_ABI_VERSION'),
    tvm_ffi_version: ['MAJOR', 'MINOR', 'PATCH'].map((part) =>
      defined('tvm/ffi/c_api.h', `TVM_FFI_VERSION_${part}`)),
  });
  writeFileSync(opts.out, withCustomSection(readFileSync(opts.out), 'webffi.module', declaration));
}

/** The link flags of the runtime wasm (kept in step with CMakeLists.txt). */
function runtimeLinkFlags() {
  const exports = readFileSync(join(root, 'cmake/main_exports.txt'), 'utf8')
    .split('\n').filter((line) => /^[a-z_]/.test(line));
  return ['--profiling-funcs', '-sSTANDALONE_WASM', '-sWASM_BIGINT', '-sALLOW_MEMORY_GROWTH',
    `--js-library=${join(root, 'src/wasm/host_imports.js')}`, '--no-entry', '-mmutable-globals',
    '-Wl,--export-table', '-Wl,--growable-table', '-Wl,--export=__stack_pointer',
    ...exports.map((symbol) => `-Wl,--export=${symbol}`)];
}

/**
 * C source whose constructor (run by the reactor's _initialize) registers
 * each `__tvm_ffi_*` symbol with the runtime's system library.
 */
function registrationSource(symbols) {
  const lines = ['/* Registers the linked-in sources\' symbols with ffi.SystemLib(). */',
    '#include <tvm/ffi/extra/c_env_api.h>'];
  for (const { name, isFunction } of symbols) {
    lines.push(isFunction
      ? `extern int ${name}(void*, const TVMFFIAny*, int32_t, TVMFFIAny*);`
      : `extern char ${name};`);
  }
  lines.push('__attribute__((constructor)) static void webffi_register_system_lib(void) {');
  for (const { name } of symbols) {
    lines.push(`  TVMFFIEnvModRegisterSystemLibSymbol("${name}", (void*)&${name});`);
  }
  lines.push('}', '');
  return lines.join('\n');
}

function buildSystemLib(opts, work) {
  const objects = opts.sources.map((source, i) => {
    if (/\.(o|a)$/.test(source)) return source;
    const object = join(work, `${i}_${basename(source)}.o`);
    run('emcc', [opts.opt, '-c', '-mmutable-globals', `-I${include}`, ...opts.flags, source,
      '-o', object]);
    return object;
  });
  // Defined, global `__tvm_ffi_*` symbols: T is code, D/B/R data.
  const symbols = new Map();
  for (const line of run('emnm', ['--defined-only', ...objects]).split('\n')) {
    const m = /^\S*\s+([TDBR])\s+(__tvm_ffi_\w+)$/.exec(line.trim());
    if (m) symbols.set(m[2], { name: m[2], isFunction: m[1] === 'T' });
  }
  const registration = join(work, 'webffi_system_lib.c');
  writeFileSync(registration, registrationSource([...symbols.values()]));
  const runtimeSources = ['src', 'src/wasm'].flatMap((dir) => readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.c')).map((f) => join(root, dir, f)));
  run('emcc', [opts.opt, '-mmutable-globals', `-I${include}`, ...objects, registration,
    ...runtimeSources, ...runtimeLinkFlags(), '-o', opts.out]);
}

function main(argv) {
  if (argv[0] !== 'build') die(USAGE);
  const opts = parseArgs(argv.slice(1));
  if (opts.module) {
    buildModule(opts);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'webffi-build-'));
  try {
    buildSystemLib(opts, work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main(process.argv.slice(2));
