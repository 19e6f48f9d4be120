#!/usr/bin/env node
// webffi build: compiles C and C++ sources written against include/ (or
// upstream tvm-ffi's headers) to wasm with Emscripten, either linked into
// the runtime (the default: one wasm whose `ffi.SystemLib()` serves the
// sources' `__tvm_ffi_*` symbols), as a module loaded into a running
// runtime (--module), or, when a source defines `main`, as a command
// program that `webffi run` runs under Node.
//
// C++ is compiled with wasm exception handling (-fwasm-exceptions): C++
// exceptions work inside the wasm and stop at the C ABI, where tvm-ffi's
// safe-call convention turns them into raised errors. A C++ module carries
// the parts of libc++/libc++abi/libunwind/libc it uses (linked statically)
// and imports malloc and free from the runtime.
//
// Linked in, the runtime comes prebuilt (dist/libwebffi.a, see
// prebuilt_runtime.mjs): only the user's sources are compiled.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forwardingArchives, isForwardingArchive } from './cxx_forward.mjs';
import { objectSymbols } from './object_symbols.mjs';
import { withLineTable, debugLink } from './debug_build.mjs';
import { ARCHIVE, THREADED_ARCHIVE, emscriptenVersion, prebuiltRuntime } from './prebuilt_runtime.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const include = join(root, 'include');

const USAGE = `usage: webffi build [--module | --command] [-o OUT.wasm] [--name NAME] [options] SOURCES...
       webffi build -c [--module] [-o OUT.o] [options] SOURCES...
       webffi run [--threads N] PROGRAM.wasm [ARGS...]
       webffi types MODULE.wasm [-o OUT.d.ts] [--name NAME] [--runtime WASM]
       webffi model fetch|weights ... (webffi model --help)
       webffi help | -h | --help

build:
  (default)    link the sources into the runtime: one wasm, a drop-in
               webffi.wasm whose ffi.SystemLib() serves their functions;
               a source that defines main() makes it a command program
  --module     build a module to load into a running runtime
               (ffi.ModuleLoadFromFile / loadModule)
  --command    build a command program (fails if no source defines main)
  --cxx        compile every source as C++ (by default .cc .cpp .cxx .c++
               .C are C++, the others C); a link of objects and archives
               only (.o, .a) is a C++ link with it (libc++, exceptions and,
               with --tvm-ffi-include, the forwarding layer)
  -c           compile only: each source to an object (-o names it when
               there is one source; else NAME.o in the current folder)
               with the flags a build would use (with --module: a
               module's), to link later with webffi build
  --tvm-ffi-include DIR
               compile against upstream tvm-ffi's headers in DIR (searched
               before webffi's own); repeatable; \`auto\` asks an installed
               tvm-ffi (tvm-ffi-config --includedir --dlpack-includedir).
               Default: the TVM_FFI_INCLUDE environment variable (a path
               list), if set
  -o FILE      output (default: the first source's name with .wasm)
  --name NAME  the module's name in the runtime's table of loaded modules
               (default: the output's base name)
  --runtime FILE
               with --module: the runtime wasm whose exports the module's
               imports are checked against (default: the package's
               dist/webffi.wasm); a module importing what it does not
               export fails to build
  --no-import-check
               with --module: skip that check (a module for a runtime
               built with more exports)
  --runtime-from-source
               linked in: compile the runtime from its sources (src/)
               instead of linking the prebuilt ${ARCHIVE}; done anyway,
               with a note saying why, when the archive is missing or stale
               or a flag changes the runtime's ABI (-pthread, -sMEMORY64,
               -fshort-enums, ...)
  --runtime-lib FILE
               linked in: the prebuilt runtime archive to link (default:
               the package's ${ARCHIVE}, when it matches src/ and emcc)
  --verbose    print each command run, and where the runtime comes from
  --threads    for the threaded runtime (load({ threads })): linked in,
               the runtime is libwebffi-mt.a on a shared memory; with
               --module, a module that loads only into it. Sources are
               compiled with -pthread; TVMBackendParallelLaunch
               (webffi/parallel.h) runs linked-in code and modules'
               on every thread, and everything serially without
               --threads; a command program gets pthreads (webffi run)
  --no-simd    compile without wasm SIMD (as -mno-simd128 does); by
               default the sources are compiled with -msimd128, which
               vectorises loops and needs Chrome 91+, Firefox 89+,
               Safari 16.4+ or Node 16.4+
  -g           file, line and function in every C frame of a backtrace:
               the link keeps the DWARF (for a debugger) and adds
               webffi's line table (the \`webffi.lines\` section)
  -gline-tables-only
               the line table only, DWARF dropped: for release builds
               (docs/debugging.md)
  -I DIR, -D NAME[=VALUE], -U NAME, -isystem DIR, -include FILE, -std=...,
  -O0..-O3, -fno-exceptions, ...
               passed to the compiler, as are other flags starting with -;
               the link gets -Wl,..., -Xlinker X, -l, -L, -u and -s SETTINGs.
               A flag webffi does not know takes no value: write its value
               joined (-flag=value); what is left must be a source (.c, .cc,
               .cpp, .cxx, .c++, .C, .s, .S, .o or .a)
run:
  runs a command program under Node: argv, stdout, stderr and the exit
  code are the program's; it can load modules (ffi.ModuleLoadFromFile,
  ffi.Module.load_from_file.so) from files. A trap (out-of-bounds
  access, unreachable, ...) ends it with exit code 134 and the trap's
  message on stderr; file-system calls beyond stdio fail with ENOSYS.
  A program built with --threads runs main on this thread and its
  pthreads on worker threads; --threads N sizes its parallel pool
  (TVMBackendParallelLaunch; default: a thread per core, at least 2).
types:
  writes TypeScript declarations for a module from the type schemas in
  its tvm-ffi metadata: its functions, the globals it registers and its
  object types (webffi types --help)
Needs Emscripten (emcc, em++, emnm) on PATH for build.`;

function die(message) {
  console.error(`webffi: ${message}`);
  process.exit(1);
}

/** A command line webffi cannot parse: exit 2 (as getopt tools do), usage on stderr. */
function usageError(message) {
  console.error(`webffi: ${message}\n${USAGE}`);
  process.exit(2);
}

let verbose = false;

function note(message) {
  console.error(`webffi: ${message}`);
}

/** The command line as a shell would read it, for --verbose. */
function commandLine(tool, args) {
  return [tool, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`))
    .join(' ');
}

function run(tool, args, env = undefined) {
  if (verbose) note(`$ ${commandLine(tool, args)}`);
  const result = spawnSync(tool, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', env });
  if (result.error?.code === 'ENOENT') die(`${tool} is not on PATH: ${INSTALL_EMSCRIPTEN}`);
  if (result.error) die(`cannot run ${tool}: ${result.error.message}`);
  if (result.status !== 0) die(`${tool} failed (exit ${result.status})`);
  return result.stdout;
}

/**
 * Runs the compiler on one source. Its diagnostics pass through, except a
 * missing tvm/ffi header: that says which headers those are and how to
 * give them, instead of the compiler's error and emcc's command line.
 */
function runCompiler(opts, tool, args) {
  if (verbose) note(`$ ${commandLine(tool, args)}`);
  const result = spawnSync(tool, args, { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if (result.error?.code === 'ENOENT') die(`${tool} is not on PATH: ${INSTALL_EMSCRIPTEN}`);
  if (result.error) die(`cannot run ${tool}: ${result.error.message}`);
  const missing = result.status === 0 ? null
    : /^(.*?):? ?fatal error: '(tvm\/ffi\/[^']+)' file not found/m.exec(result.stderr);
  if (missing) die(missingHeader(opts, missing[1], missing[2]));
  process.stderr.write(result.stderr);
  if (result.status !== 0) die(`${tool} failed (exit ${result.status})`);
}

/** The message for a tvm/ffi header the include path lacks (at `where`, the compiler's file:line:col). */
function missingHeader(opts, where, header) {
  const how = 'pass upstream\'s include folder: `--tvm-ffi-include DIR`, or `--tvm-ffi-include auto` ' +
    'where tvm-ffi is installed (`pip install apache-tvm-ffi` puts its `tvm-ffi-config` on PATH), ' +
    'or the TVM_FFI_INCLUDE variable';
  if (opts.tvmFfiInclude.length > 0) {
    return `${where}: \`${header}\` is not in --tvm-ffi-include ${opts.tvmFfiInclude.join(' ')}, ` +
      `which should be upstream tvm-ffi's include folder (with tvm/ffi/function.h); ${how}`;
  }
  return `${where}: \`${header}\` is one of upstream tvm-ffi's C++ headers, which webffi does not ship ` +
    `(it has the C ABI's: tvm/ffi/c_api.h, tvm/ffi/extra/c_env_api.h); to build against them, ${how}`;
}

/** The Emscripten versions webffi's tests run under. */
const TESTED_EMSCRIPTEN = ['3.1.6'];

const INSTALL_EMSCRIPTEN = 'install Emscripten: on Debian or Ubuntu `apt-get install emscripten`; ' +
  'elsewhere the emsdk (https://emscripten.org/docs/getting_started/downloads.html), ' +
  'then `source ./emsdk_env.sh` so emcc, em++ and emnm are on PATH';

/**
 * Checks that emcc runs before anything is built: without it, says how to
 * install Emscripten; with a version the tests have not run under, warns
 * once. Returns the version.
 */
function checkEmscripten() {
  const { version, missing, error } = emscriptenVersion();
  if (missing) die(`emcc is not on PATH: ${INSTALL_EMSCRIPTEN}`);
  if (error) die(error);
  if (!TESTED_EMSCRIPTEN.includes(version)) {
    console.error(`webffi: warning: Emscripten ${version ?? '(unknown version)'} is not a version ` +
      `webffi is tested with (${TESTED_EMSCRIPTEN.join(', ')}); continuing`);
  }
  return version;
}

/**
 * Compiler and linker flags (clang's, wasm-ld's through emcc, emcc's own)
 * whose value is the next argument: passed on with it, never taken for a
 * source.
 */
const VALUE_FLAGS = new Set(['-I', '-D', '-U', '-isystem', '-include', '-iquote', '-idirafter',
  '-imacros', '-iprefix', '-iwithprefix', '-iwithprefixbefore', '-isysroot', '--sysroot',
  '-include-pch', '-ivfsoverlay', '-x', '-Xclang', '-Xpreprocessor', '-Xlinker', '-mllvm',
  '-target', '-MF', '-MT', '-MQ', '-MJ', '-L', '-l', '-u', '-s', '--js-library', '--pre-js',
  '--post-js', '--embed-file', '--preload-file', '--exclude-file', '--shell-file', '--closure',
  '--js-opts', '--llvm-opts', '--source-map-base']);
/** Those of the flags (joined or not) that reach the link too. */
const LINK_FLAG = /^(-Wl,|-Xlinker$|-l|-L|-u|-s$|-s[A-Z]|--js-library|--pre-js|--post-js|--embed-file|--preload-file|--exclude-file)/;
const CXX_EXTENSIONS = new Set(['.cc', '.cpp', '.cxx', '.c++', '.C']);
/** What webffi build takes for a source: C, C++, assembly, objects and archives. */
const SOURCE_EXTENSIONS = new Set(['.c', ...CXX_EXTENSIONS, '.s', '.S', '.o', '.a']);

function parseArgs(argv) {
  const opts = {
    module: false, command: false, cxx: false, compileOnly: false, out: null, name: null, sources: [],
    // the compiler's flags, each with its value if it takes one: [['-I', 'dir'], ['-g']]
    flagGroups: [],
    opt: '-O2', tvmFfiInclude: [], runtime: null, importCheck: true, runtimeLib: null,
    runtimeFromSource: false, simd: true, threads: false,
  };
  // webffi's own options with a value: `--name NAME` or `--name=NAME`
  const own = {
    '-o': (v) => { opts.out = v; },
    '--name': (v) => { opts.name = v; },
    '--runtime': (v) => { opts.runtime = v; },
    '--runtime-lib': (v) => { opts.runtimeLib = v; },
    '--tvm-ffi-include': (v) => { opts.tvmFfiInclude.push(v); },
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`);
      return argv[++i];
    };
    const eq = a.indexOf('=');
    if (a in own) own[a](value());
    else if (a.startsWith('--') && eq > 0 && a.slice(0, eq) in own) own[a.slice(0, eq)](a.slice(eq + 1));
    else if (a === '--module') opts.module = true;
    else if (a === '--command') opts.command = true;
    else if (a === '--cxx') opts.cxx = true;
    else if (a === '-c') opts.compileOnly = true;
    else if (a === '--no-import-check') opts.importCheck = false;
    else if (a === '--runtime-from-source') opts.runtimeFromSource = true;
    else if (a === '--no-simd') opts.simd = false;
    else if (a === '--threads') opts.threads = true;
    else if (a === '--verbose') verbose = true;
    else if (VALUE_FLAGS.has(a)) opts.flagGroups.push([a, value()]);
    else if (/^-O[0-3sz]$/.test(a)) opts.opt = a;
    else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a.startsWith('-o') && a.length > 2) {
      opts.out = a.slice(2); // -oFILE, as compilers take it
    } else if (a.startsWith('-')) {
      opts.flagGroups.push([a]);
    } else if (SOURCE_EXTENSIONS.has(extname(a))) {
      opts.sources.push(a);
    } else {
      die(`\`${a}\` is not a source (C, C++, assembly, .o or .a); if it is the value of a ` +
        'compiler option, join them (-option=value) or see `webffi --help`');
    }
  }
  opts.flags = opts.flagGroups.flat();
  if (opts.sources.length === 0) die(`no sources\n${USAGE}`);
  if (opts.module && opts.command) die('--module and --command exclude each other');
  if (opts.compileOnly) {
    if (opts.command) die('-c and --command exclude each other');
    if (opts.sources.some(isObject)) die('-c: objects and archives have nothing to compile');
    if (opts.out !== null && opts.sources.length > 1) die('-c -o FILE takes one source');
  }
  if (opts.tvmFfiInclude.length === 0 && process.env.TVM_FFI_INCLUDE) {
    opts.tvmFfiInclude = process.env.TVM_FFI_INCLUDE.split(delimiter).filter(Boolean);
  }
  opts.tvmFfiInclude = opts.tvmFfiInclude.flatMap((dir) => (dir === 'auto' ? tvmFfiConfig() : [dir]));
  if (opts.tvmFfiInclude.length > 0 &&
      !opts.tvmFfiInclude.some((dir) => existsSync(join(dir, 'tvm/ffi/c_api.h')))) {
    die(`--tvm-ffi-include ${opts.tvmFfiInclude.join(' ')}: no tvm/ffi/c_api.h there`);
  }
  if (opts.compileOnly) return opts;
  opts.out ??= `${basename(opts.sources[0], extname(opts.sources[0]))}.wasm`;
  opts.name ??= basename(opts.out).replace(/\.[^.]*$/, '');
  return opts;
}

/** The include directories an installed tvm-ffi reports (its `tvm-ffi-config`). */
function tvmFfiConfig() {
  const ask = (flag) => {
    const result = spawnSync('tvm-ffi-config', [flag], { encoding: 'utf8' });
    if (result.error || result.status !== 0) {
      die('--tvm-ffi-include auto: `tvm-ffi-config` (installed with tvm-ffi) is not on PATH ' +
        'or failed');
    }
    return result.stdout.trim();
  };
  return [ask('--includedir'), ask('--dlpack-includedir')].filter(Boolean);
}

const isObject = (source) => /\.(o|a)$/.test(source);
const isCxx = (opts, source) => !isObject(source) &&
  (opts.cxx || CXX_EXTENSIONS.has(extname(source)));
const exceptionsOff = (opts) => opts.flags.includes('-fno-exceptions');
/** Whether the link is C++'s: a C++ source, or --cxx (objects compiled from C++). */
const cxxLink = (opts) => opts.cxx || opts.sources.some((s) => isCxx(opts, s));

/** Include flags: upstream's headers (when given) before webffi's own. */
function includeFlags(opts) {
  return [...opts.tvmFfiInclude.map((dir) => `-I${dir}`), `-I${include}`];
}

/** Whether the user's flags define NAME (-DNAME, -DNAME=..., -D NAME...). */
const userDefines = (opts, name) => opts.flagGroups.some(([flag, value]) =>
  new RegExp(`^${name}(=|$)`).test(flag === '-D' ? value ?? '' : flag.startsWith('-D') ? flag.slice(2) : ''));

/**
 * Upstream's headers define TVM_FFI_DLL under Emscripten as
 * EMSCRIPTEN_KEEPALIVE (`used`), which clang refuses on classes (`'used'
 * attribute only applies to ...`, once per class) and which keeps every
 * marked symbol in the link. Their definition for other platforms, default
 * visibility, is what a wasm build needs: the link keeps what is called.
 */
function upstreamExportFlags(opts) {
  if (opts.tvmFfiInclude.length === 0) return [];
  const visible = '__attribute__((visibility("default")))';
  return ['TVM_FFI_DLL', 'TVM_FFI_DLL_EXPORT'].filter((name) => !userDefines(opts, name))
    .map((name) => `-D${name}=${visible}`);
}

/**
 * C++ modules are compiled to LLVM bitcode and linked with link-time
 * optimisation over Emscripten's bitcode C++ runtime: wasm-ld 14 exports
 * (and imports again) every weak definition of a side module, inline C++
 * functions and libc++'s templates included, which kept them all alive;
 * LTO internalises what the module does not export, so the link keeps only
 * what its `__tvm_ffi_*` functions reach. -fno-lto turns it off.
 */
const cxxModuleLTO = (opts) => !opts.flags.includes('-fno-lto');

/**
 * Wasm SIMD for the user's sources: -msimd128 unless --no-simd, or the
 * user's own -msimd128 / -mno-simd128 decides (clang vectorises loops at
 * -O2 and above with it). The runtime itself stays scalar: built with
 * SIMD it was no faster (docs/performance.md).
 */
const simdFlags = (opts) => (opts.simd && !opts.flags.some((f) => /^-m(no-)?simd128$/.test(f))
  ? ['-msimd128'] : []);

/** emcc or em++ arguments that compile one source to an object. */
function compileArgs(opts, source, object, extra) {
  const cxx = isCxx(opts, source);
  const lang = [];
  if (cxx) {
    if (!opts.flags.some((f) => f.startsWith('-std='))) lang.push('-std=c++17');
    if (!exceptionsOff(opts)) lang.push('-fwasm-exceptions');
    // a .c file given with --cxx
    if (opts.cxx && !CXX_EXTENSIONS.has(extname(source))) lang.push('-x', 'c++');
    if (extra.includes('-sSIDE_MODULE=1') && cxxModuleLTO(opts)) lang.push('-flto');
    if (opts.lpadBitcode) lang.push('-Xclang', '-mlink-bitcode-file', '-Xclang', opts.lpadBitcode);
  }
  return [cxx ? 'em++' : 'emcc',
    [opts.opt, '-c', ...extra, ...lang, ...simdFlags(opts), ...(opts.threads ? ['-pthread'] : []),
      ...includeFlags(opts), ...upstreamExportFlags(opts),
      ...opts.flags, source, '-o', object]];
}

/**
 * C++ exceptions on threads (clang 14 with Emscripten 3.1.6): the C++
 * runtime's libunwind keeps the landing-pad context in a thread-local
 * variable, but clang's exception lowering declares it as a plain global
 * of its own when no declaration is in scope, so on a second thread every
 * catch reads another thread's context (and misses). This declaration,
 * linked into each C++ object as bitcode, makes clang access it as the
 * thread-local it is.
 */
const LPAD_CONTEXT_IR = `target datalayout = "e-m:e-p:32:32-i64:64-n32:64-S128-ni:1:10:20"
target triple = "wasm32-unknown-emscripten"

@__wasm_lpad_context = external thread_local global { i32, i8*, i32 }
@llvm.compiler.used = appending global [1 x i8*] [i8* bitcast ({ i32, i8*, i32 }* @__wasm_lpad_context to i8*)], section "llvm.metadata"
`;

/** The bitcode above, for threaded C++ code linked into the runtime (null when not needed). */
function lpadBitcode(opts, work) {
  if (!opts.threads || opts.module || exceptionsOff(opts) || !cxxLink(opts)) return null;
  const ir = join(work, 'lpad_context.ll');
  const bc = join(work, 'lpad_context.bc');
  writeFileSync(ir, LPAD_CONTEXT_IR);
  run('emcc', ['-c', '-emit-llvm', '-pthread', ir, '-o', bc]);
  return bc;
}

function compileAll(opts, work, extra) {
  opts.lpadBitcode = lpadBitcode(opts, work);
  const objects = opts.sources.map((source, i) => {
    if (isObject(source)) return source;
    const object = join(work, `${i}_${basename(source)}.o`);
    const [tool, args] = compileArgs(opts, source, object, extra);
    runCompiler(opts, tool, args);
    return object;
  });
  return [...objects, ...forwardingArchives(opts, work, () => cxxLink(opts), (source, object) => {
    const [tool, args] = compileArgs(opts, source, object, extra);
    runCompiler(opts, tool, args);
  }, objects)];
}

/**
 * Defined global symbols of the objects: name -> nm type letter. Wasm
 * objects are read here; others (archives, LTO bitcode) are asked of emnm.
 */
function definedSymbols(objects) {
  const symbols = new Map();
  const others = [];
  for (const object of objects) {
    const own = object.endsWith('.o') ? objectSymbols(readFileSync(object)) : null;
    if (own === null) others.push(object);
    else for (const [name, type] of own) symbols.set(name, type);
  }
  if (others.length === 0) return symbols;
  for (const line of run('emnm', ['--defined-only', ...others]).split('\n')) {
    const m = /^\S*\s+([A-Za-z])\s+(\S+)$/.exec(line.trim());
    if (m) symbols.set(m[2], m[1]);
  }
  return symbols;
}

/** The wasm name of a defined `main`: int main(void) and main(argc, argv) differ. */
function mainSymbol(symbols) {
  for (const name of ['__main_argc_argv', '__original_main', 'main']) {
    if (symbols.get(name) === 'T') return name;
  }
  return null;
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

/**
 * Sets the module name in the wasm's name section (subsection 0, before the
 * function names; a name section is added when there is none). Engines
 * show it in stack frames (V8: `wasm://wasm/NAME-HASH`, `in NAME.FUNC`),
 * so a backtrace says which module a frame is in.
 */
function withModuleName(wasm, name) {
  const leb = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      n >>>= 7;
    } while (n > 0);
    return Buffer.from(out);
  };
  const readLeb = (at) => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = wasm[at++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return [value, at];
      shift += 7;
    }
  };
  const nameBytes = Buffer.from(name);
  const moduleName = Buffer.concat([Buffer.from([0]), leb(leb(nameBytes.length).length + nameBytes.length),
    leb(nameBytes.length), nameBytes]);
  const section = (rest) => {
    const body = Buffer.concat([leb(4), Buffer.from('name'), moduleName, rest]);
    return Buffer.concat([Buffer.from([0]), leb(body.length), body]);
  };
  const parts = [wasm.subarray(0, 8)];
  let found = false;
  for (let at = 8; at < wasm.length;) {
    const start = at;
    const id = wasm[at];
    const [size, body] = readLeb(at + 1);
    const end = body + size;
    let replaced = false;
    if (id === 0) {
      const [length, text] = readLeb(body);
      if (wasm.subarray(text, text + length).toString() === 'name') {
        let from = text + length;
        if (wasm[from] === 0) { // a module name already there: replaced
          const [subsize, subbody] = readLeb(from + 1);
          from = subbody + subsize;
        }
        parts.push(section(wasm.subarray(from, end)));
        found = replaced = true;
      }
    }
    if (!replaced) parts.push(wasm.subarray(start, end));
    at = end;
  }
  if (!found) parts.push(section(Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** The value of `#define NAME <integer>` in header FILE under include/. */
function defined(file, name) {
  const header = readFileSync(join(include, file), 'utf8');
  return Number(new RegExp(`#define ${name} (\\d+)`).exec(header)[1]);
}

/**
 * The C++ runtime a C++ module links statically: Emscripten's
 * position-independent archives (their bitcode builds, for LTO).
 */
function cxxRuntimeArchives(lto, work, threads) {
  const sysroot = run('em-config', ['CACHE']).trim();
  const dir = join(sysroot, `sysroot/lib/wasm32-emscripten/${lto ? 'lto-pic' : 'pic'}`);
  // libc and compiler-rt too: libc++ needs string conversions (strtol,
  // wcs*, ...) the runtime does not export; malloc and free still come
  // from the runtime (libdlmalloc is not linked), so memory is shared.
  // A threaded module's C++ runtime is the -mt build (atomics, a shared
  // memory); its libc is the single-threaded one (the threaded one brings
  // a second thread runtime), less its pthread stubs, whose locks would
  // do nothing: the module imports the core's (src/parallel.c).
  const mt = threads ? '-mt' : '';
  const archives = [`libc++${mt}-except.a`, `libc++abi${mt}-except.a`, `libunwind${mt}-except.a`, 'libc.a',
    `libcompiler_rt${mt}.a`].map((name) => join(dir, name));
  const absent = archives.filter((a) => !existsSync(a));
  if (absent.length > 0) die(`Emscripten's cache lacks ${absent.join(', ')}`);
  if (threads) {
    const libc = join(work, 'libc-without-pthread-stubs.a');
    copyFileSync(archives[3], libc);
    run('emar', ['d', libc, 'library_pthread_stub.o', 'pthread_self_stub.o', 'pthread_self.o']);
    archives[3] = libc;
  }
  return archives;
}

async function buildModule(opts, work) {
  const objects = compileAll(opts, work, ['-sSIDE_MODULE=1']);
  const symbols = definedSymbols(objects);
  const main = mainSymbol(symbols);
  if (main !== null) {
    die('a module cannot define main(); build a command program without --module');
  }
  // Functions only (T, W: weak), not the loader's data (__tvm_ffi__library_ctx, __tvm_ffi__metadata_*).
  const exportsFunctions = [...symbols].some(([name, type]) => /^__tvm_ffi_[^_]/.test(name) && 'TW'.includes(type));
  const cxx = cxxLink(opts);
  // A C module exports all it defines (SIDE_MODULE=1). A C++ module
  // exports its `__tvm_ffi_*` symbols only (SIDE_MODULE=2), so the link
  // drops the parts of the C++ runtime nothing calls: a quarter of the size.
  // A side module links its objects whole: the forwarding archive goes with
  // the C++ runtime below, where only what the code uses is taken.
  const link = [opts.opt, cxx ? '-sSIDE_MODULE=2' : '-sSIDE_MODULE=1', '--profiling-funcs',
    ...objects.filter((o) => !isForwardingArchive(o)), ...userLinkFlags(opts), ...debugLink(opts.flags)];
  // a module for the threaded runtime imports its shared memory
  if (opts.threads) link.push('-pthread', '-Wno-experimental');
  if (cxx) {
    for (const name of symbols.keys()) if (name.startsWith('__tvm_ffi_')) link.push(`-Wl,--export=${name}`);
    if (cxxModuleLTO(opts)) link.push('-flto');
    if (!exceptionsOff(opts)) link.push('-fwasm-exceptions');
    link.push('-sWASM_BIGINT'); // i64 at the boundary as BigInt: no setTempRet0 imports
    // Archives after --no-whole-archive: only the members the code uses.
    // -Bsymbolic binds the module's own definitions locally (no GOT
    // entries for them); weak C++ runtime functions stay importable and
    // the loader resolves them to the module's own exports.
    const archives = [...objects.filter(isForwardingArchive), ...cxxRuntimeArchives(cxxModuleLTO(opts), work, opts.threads)];
    link.push('-Wl,--no-whole-archive', ...archives.map((a) => `-Wl,${a}`),
      '-Wl,-Bsymbolic');
  }
  run(cxx ? 'em++' : 'emcc', [...link, '-o', opts.out]);
  if (!exportsFunctions && !registersGlobals(readFileSync(opts.out))) {
    console.error(`webffi: warning: ${opts.out}: no source defines a \`__tvm_ffi_*\` function or registers a ` +
      'global, so the module loads with nothing to call; export each function as `TVM_FFI_DLL_EXPORT int ' +
      '__tvm_ffi_NAME(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)` (C++ on ' +
      'upstream\'s headers: TVM_FFI_DLL_EXPORT_TYPED_FUNC(NAME, fn))');
  }
  const declaration = JSON.stringify({
    name: opts.name,
    module_abi_version: defined('webffi/module.h', 'WEBFFI_MODULE_ABI_VERSION'),
    tvm_ffi_version: ['MAJOR', 'MINOR', 'PATCH'].map((part) =>
      defined('tvm/ffi/c_api.h', `TVM_FFI_VERSION_${part}`)),
    // a module for the threaded runtime (load({ threads })) says so
    ...(opts.threads ? { threads: true } : {}),
  });
  const linked = withLineTable(readFileSync(opts.out), opts.flags, note);
  writeFileSync(opts.out, withCustomSection(withModuleName(linked, opts.name), 'webffi.module', declaration));
  await checkModuleImports(opts);
}

/**
 * Whether a linked module registers globals or types when it loads (its
 * constructors call the runtime for it, as the test fixtures' module and
 * upstream's TVM_FFI_STATIC_INIT_BLOCK do): it imports what they call.
 */
function registersGlobals(wasm) {
  return WebAssembly.Module.imports(new WebAssembly.Module(wasm))
    .some(({ name }) => /^TVMFFI(FunctionSetGlobal|TypeGetOrAllocIndex|TypeRegister)/.test(name));
}

/**
 * The runtime wasm a module is checked against: the packaged dist/webffi.wasm
 * or, in a checkout, build/wasm/webffi.wasm, whichever is newer.
 */
function runtimeWasm(threads) {
  const file = threads ? 'webffi-mt.wasm' : 'webffi.wasm';
  const found = [join(root, 'dist', file), join(root, 'build/wasm', file)]
    .filter((file) => existsSync(file));
  found.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return found[0] ?? null;
}

/**
 * Fails the build (removing the output) when the module imports what the
 * runtime does not export: such a module could never load.
 */
async function checkModuleImports(opts) {
  if (!opts.importCheck) return;
  const runtime = opts.runtime ?? runtimeWasm(opts.threads);
  if (opts.runtime !== null && !existsSync(runtime)) die(`--runtime ${runtime}: no such file`);
  if (runtime === null) {
    console.error('webffi: warning: no runtime wasm (dist/webffi.wasm) to check the module\'s ' +
      'imports against; not checked');
    return;
  }
  const { unresolvedImports } = await import(new URL('../js/dylink.js', import.meta.url));
  const missing = unresolvedImports(new WebAssembly.Module(readFileSync(opts.out)),
    new WebAssembly.Module(readFileSync(runtime)));
  if (missing.length > 0) {
    rmSync(opts.out, { force: true });
    die(`${opts.out}: the module imports ${missing.map((m) => `\`${m}\``).join(', ')}, which ` +
      `the runtime (${runtime}) does not export, so it could not load: define ` +
      `${missing.length === 1 ? 'it' : 'them'} in the module's sources or link ` +
      `${missing.length === 1 ? 'it' : 'them'} into the runtime (webffi build without --module)`);
  }
}

/**
 * The link flags of the runtime wasm (kept in step with CMakeLists.txt);
 * the threaded runtime's are those of webffi-mt.wasm: no STANDALONE_WASM
 * (Emscripten refuses it with threads) and a shared memory of 16 MiB that
 * grows to 1 GiB (js/loader.js creates it so).
 */
function runtimeLinkFlags(threads) {
  const exports = readFileSync(join(root, 'cmake/main_exports.txt'), 'utf8')
    .split('\n').filter((line) => /^[a-z_]/.test(line));
  const memory = threads
    ? ['-pthread', '-Wno-pthreads-mem-growth', '-sINITIAL_MEMORY=16MB', '-sMAXIMUM_MEMORY=1GB',
      '-sENVIRONMENT=node,worker']
    : ['-sSTANDALONE_WASM'];
  return ['--profiling-funcs', ...memory, '-sWASM_BIGINT', '-sALLOW_MEMORY_GROWTH',
    '-Wl,--wrap=emscripten_resize_heap', // memory grows geometrically (src/wasm/heap_growth_wasm.c)
    `--js-library=${join(root, 'src/wasm/host_imports.js')}`, '--no-entry', '-mmutable-globals',
    '-Wl,--export-table', '-Wl,--growable-table', '-Wl,--export=__stack_pointer',
    ...exports.map((symbol) => `-Wl,--export=${symbol}`)];
}

/**
 * C source whose constructor (run by the reactor's _initialize) registers
 * each `__tvm_ffi_*` symbol with the runtime's system library.
 */
function registrationSource(symbols) {
  // C or C++ (compiled by em++ in a C++ build)
  const lines = ['/* Registers the linked-in sources\' symbols with ffi.SystemLib(). */',
    '#include <tvm/ffi/extra/c_env_api.h>', '#ifdef __cplusplus', 'extern "C" {', '#endif'];
  for (const { name, isFunction } of symbols) {
    lines.push(isFunction
      ? `extern int ${name}(void*, const TVMFFIAny*, int32_t, TVMFFIAny*);`
      : `extern char ${name};`);
  }
  lines.push('#ifdef __cplusplus', '}', '#endif');
  lines.push('__attribute__((constructor)) static void webffi_register_system_lib(void) {');
  for (const { name } of symbols) {
    lines.push(`  TVMFFIEnvModRegisterSystemLibSymbol("${name}", (void*)&${name});`);
  }
  lines.push('}', '');
  return lines.join('\n');
}

/**
 * The environment for an emcc link that runs Emscripten's JS optimizer
 * (threaded links): Debian's emscripten finds acorn only on Debian's own
 * Node path (the node-acorn package), which another Node does not search.
 */
function emccJsEnv() {
  const debian = '/usr/share/nodejs';
  if (!existsSync(join(debian, 'acorn'))) return undefined;
  const paths = [debian, ...(process.env.NODE_PATH ?? '').split(delimiter).filter(Boolean)];
  return { ...process.env, NODE_PATH: paths.join(delimiter) };
}

/** Compiles C sources with one emcc call into their own folder; returns the objects. */
function compileC(opts, work, sources, flags) {
  const dir = join(work, 'runtime');
  mkdirSync(dir);
  const args = [opts.opt, '-c', '-mmutable-globals', ...flags, `-I${include}`, ...sources];
  if (verbose) note(`$ (cd ${dir} && ${commandLine('emcc', args)})`);
  const result = spawnSync('emcc', args, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) die(`cannot run emcc: ${result.error.message}`);
  if (result.status !== 0) die(`emcc failed (exit ${result.status})`);
  return sources.map((source) => join(dir, basename(source).replace(/\.c$/, '.o')));
}

/**
 * Flags every object of a program must agree on (shared memory and
 * atomics, 64-bit pointers, the layout of enums, wchar_t and structs,
 * position-independent code): the prebuilt runtime was compiled without
 * them, so a build with one compiles the runtime with it, from source.
 */
const RUNTIME_ABI_FLAG = new RegExp('^(-pthread|-matomics|-sUSE_PTHREADS|-sSHARED_MEMORY|' +
  '-sMEMORY64|-m64$|--target=wasm64|-fshort-enums|-fshort-wchar|-fpack-struct|-fPIC$|-fpic$|' +
  '-sRELOCATABLE|-sMAIN_MODULE)');

/** The user's flags that change the runtime's ABI (RUNTIME_ABI_FLAG), in order. */
function runtimeAbiFlags(opts) {
  // `-s SETTING` is one flag; the values of -I, -D, ... are not flags
  return opts.flagGroups.filter(([flag, value]) =>
    RUNTIME_ABI_FLAG.test(flag === '-s' ? `-s${value}` : flag)).flat();
}

/** The user's flags that reach the link (LINK_FLAG), with their values. */
function userLinkFlags(opts) {
  return opts.flagGroups.filter(([flag]) => LINK_FLAG.test(flag)).flat();
}

/**
 * Where a linked-in build's runtime comes from: `{ archive }` to link, or
 * `{ reason }` (null when asked with --runtime-from-source) to compile
 * the runtime's sources.
 */
function runtimeToLink(opts, emscripten) {
  if (opts.runtimeFromSource) return { reason: null };
  const abi = runtimeAbiFlags(opts);
  if (abi.length > 0) {
    return { reason: `${abi.join(' ')} ${abi.length === 1 ? 'changes' : 'change'} the runtime's ABI, ` +
      `and ${ARCHIVE} was compiled without` };
  }
  if (opts.runtimeLib !== null) {
    if (!existsSync(opts.runtimeLib)) die(`--runtime-lib ${opts.runtimeLib}: no such file`);
    return { archive: opts.runtimeLib };
  }
  return prebuiltRuntime(root, emscripten, opts.threads ? THREADED_ARCHIVE : ARCHIVE);
}

function buildSystemLib(opts, work, emscripten) {
  const prebuilt = runtimeToLink(opts, emscripten);
  if (prebuilt.archive) {
    if (verbose) note(`runtime: prebuilt ${prebuilt.archive}`);
  } else if (prebuilt.reason !== null) {
    note(`note: compiling the runtime from source (slower): ${prebuilt.reason}`);
  } else if (verbose) {
    note('runtime: compiled from source (--runtime-from-source)');
  }
  const objects = compileAll(opts, work, ['-mmutable-globals']);
  const defs = definedSymbols(objects);
  const main = mainSymbol(defs);
  if (opts.command && main === null) die('--command: no source defines main()');
  // `__tvm_ffi_*` symbols: T is code, D/B/R data.
  const symbols = [...defs].filter(([name, type]) => name.startsWith('__tvm_ffi_') &&
    'TDBR'.includes(type)).map(([name, type]) => ({ name, isFunction: type === 'T' }));
  const cxx = cxxLink(opts);
  // the flags changing the runtime's ABI compile it and reach the link
  const abi = runtimeAbiFlags(opts);
  let runtime;
  if (prebuilt.archive) {
    // The link compiles the registration (as C++ in a C++ build) and takes
    // the whole archive, as if its objects were listed: nothing is dropped
    // that the runtime linked from source would keep.
    const registration = join(work, cxx ? 'webffi_system_lib.cc' : 'webffi_system_lib.c');
    writeFileSync(registration, registrationSource(symbols));
    runtime = [registration, '-Wl,--whole-archive', prebuilt.archive, '-Wl,--no-whole-archive'];
  } else {
    const registration = join(work, 'webffi_system_lib.c');
    writeFileSync(registration, registrationSource(symbols));
    const runtimeSources = ['src', 'src/wasm'].flatMap((dir) => readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.c') && (opts.threads || f !== 'abort_mt.c')).map((f) => join(root, dir, f)));
    const flags = opts.threads ? ['-pthread', ...abi] : abi;
    // em++ would compile the runtime's C as C++: emcc compiles it first
    runtime = cxx ? compileC(opts, work, [registration, ...runtimeSources], flags)
      : [...flags, registration, ...runtimeSources];
  }
  // the user's link flags (-Wl,..., -l..., -L..., -sSETTING) reach the link too
  const userLink = userLinkFlags(opts);
  // A threaded link at -O3/-Os/-Oz lets Emscripten 3.1.6 shorten the
  // names of the wasm's imports and exports (its own JS would rename them
  // back; webffi's loader reads them as they are): it links at -O2 instead,
  // the sources keep the level asked for.
  const linkOpt = opts.threads && !['-O0', '-O1', '-O2'].includes(opts.opt) ? '-O2' : opts.opt;
  const link = [linkOpt, '-mmutable-globals', `-I${include}`, ...objects, ...runtime,
    ...runtimeLinkFlags(opts.threads), ...abi.filter((f) => !userLink.includes(f)), ...userLink, ...debugLink(opts.flags)];
  // A command program is a reactor too (so the host sets up module loading
  // before main runs): it exports main and exit (which flushes stdio).
  // (A threaded link's exit() is an import, which js/command.js provides:
  // it exports fflush instead, to flush stdio when main returns; naming
  // _main quiets Emscripten's warning that main may be dropped.)
  if (main !== null) link.push(`-Wl,--export=${main}`, ...(opts.threads ? ['-Wl,--export=fflush', '-sEXPORTED_FUNCTIONS=_main'] : ['-Wl,--export=exit']));
  if (cxx && !exceptionsOff(opts)) link.push('-fwasm-exceptions');
  if (opts.threads) {
    // A threaded link writes JS beside the wasm: webffi brings its own, so
    // that goes to the scratch folder and the wasm is moved to -o.
    const js = join(work, 'threaded.js');
    run(cxx ? 'em++' : 'emcc', [...link, '-o', js], emccJsEnv());
    copyFileSync(join(work, 'threaded.wasm'), opts.out);
  } else {
    run(cxx ? 'em++' : 'emcc', [...link, '-o', opts.out]);
  }
  if (debugLink(opts.flags).length > 0) writeFileSync(opts.out, withLineTable(readFileSync(opts.out), opts.flags, note));
  if (main !== null) {
    writeFileSync(opts.out, withCustomSection(readFileSync(opts.out), 'webffi.command',
      JSON.stringify({ main })));
  }
}

/** -c: each source to an object, with the flags the build would compile it with. */
function compileOnly(opts, work) {
  // (threaded C++ objects get the landing-pad declaration, as in a link)
  opts.lpadBitcode = lpadBitcode(opts, work);
  for (const source of opts.sources) {
    const object = opts.out ?? `${basename(source, extname(source))}.o`;
    const [tool, args] = compileArgs(opts, source, object,
      opts.module ? ['-sSIDE_MODULE=1'] : ['-mmutable-globals']);
    runCompiler(opts, tool, args);
  }
}

/** `webffi run`'s exit code when the program traps (128 + SIGABRT, as wasmtime's). */
const TRAP_EXIT_CODE = 134;

async function runProgram(argv) {
  let threads;
  if (argv[0] === '--threads') {
    threads = Number(argv[1]);
    if (!Number.isInteger(threads) || threads < 1 || threads > 256) die('run: --threads takes an integer in [1, 256]');
    argv = argv.slice(2);
  }
  if (argv.length === 0) die(`run: no program\n${USAGE}`);
  const { runCommand } = await import(new URL('../js/command.js', import.meta.url));
  let bytes;
  try {
    bytes = readFileSync(argv[0]);
  } catch (e) {
    die(`run: ${e.message}`);
  }
  try {
    process.exitCode = await runCommand(bytes, { args: [argv[0], ...argv.slice(1)], threads });
  } catch (e) {
    if (!(e instanceof WebAssembly.RuntimeError)) die(`run: ${argv[0]}: ${e.message}`);
    // a trap (out-of-bounds access, unreachable, ...): a native program's
    // crash, told apart from a program that exits 1, as wasmtime does
    console.error(`webffi: run: ${argv[0]}: trap: ${e.message}`);
    process.exitCode = TRAP_EXIT_CODE;
  }
}

async function main(argv) {
  if (argv[0] === 'run') {
    await runProgram(argv.slice(1));
    return;
  }
  if (argv[0] === 'model') {
    const { modelMain } = await import(new URL('./model.mjs', import.meta.url));
    await modelMain(argv.slice(1));
    return;
  }
  if (argv[0] === 'types') {
    const { typesMain } = await import(new URL('./types.mjs', import.meta.url));
    await typesMain(argv.slice(1));
    return;
  }
  if (argv.length === 0 || ['help', '-h', '--help'].includes(argv[0])) {
    // no command at all is a usage error; asking for help is not
    if (argv.length === 0) usageError('no command');
    console.log(USAGE);
    return;
  }
  if (argv[0] !== 'build') usageError(`unknown command \`${argv[0]}\``);
  const opts = parseArgs(argv.slice(1));
  const emscripten = checkEmscripten();
  const work = mkdtempSync(join(tmpdir(), 'webffi-build-'));
  // die() exits at once: the scratch folder goes on exit
  process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  if (opts.compileOnly) compileOnly(opts, work);
  else if (opts.module) await buildModule(opts, work);
  else buildSystemLib(opts, work, emscripten);
}

await main(process.argv.slice(2));
