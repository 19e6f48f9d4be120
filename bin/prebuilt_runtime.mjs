// The runtime prebuilt as a static library, dist/libwebffi.a (the CMake
// target webffi_runtime, copied by scripts/bundle.mjs), and its stamp,
// dist/libwebffi.json: the Emscripten version that compiled it and the hash
// of the sources it was compiled from. `webffi build` links the archive
// instead of compiling the runtime when the stamp matches the sources and
// the compiler in use, and compiles from source, saying why, otherwise.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, readdirSync, realpathSync, statSync,
  writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

export const ARCHIVE = 'dist/libwebffi.a';
/** The threaded runtime's archive (`webffi build --threads`), made and stamped with the other. */
export const THREADED_ARCHIVE = 'dist/libwebffi-mt.a';
export const STAMP = 'dist/libwebffi.json';
/** What the runtime's objects are compiled from. */
export const RUNTIME_SOURCES = ['src', 'include'];

/** sha256 over the path and contents of each file under `dirs` (relative to root), sorted. */
export function treeHash(root, dirs) {
  const files = [];
  const walk = (rel) => {
    let st;
    try {
      st = statSync(join(root, rel));
    } catch {
      return; // an absent directory hashes as empty
    }
    if (st.isDirectory()) for (const name of readdirSync(join(root, rel)).sort()) walk(`${rel}/${name}`);
    else if (st.isFile()) files.push(rel);
  };
  for (const dir of dirs) walk(dir);
  const h = createHash('sha256');
  for (const rel of files.sort()) {
    const body = readFileSync(join(root, rel));
    h.update(`${rel}\0${body.length}\0`).update(body);
  }
  return h.digest('hex');
}

/** Records which sources and which Emscripten the archive in dist/ was built from. */
export function writeStamp(root, emscripten) {
  const stamp = { emscripten, sources: treeHash(root, RUNTIME_SOURCES) };
  writeFileSync(join(root, STAMP), `${JSON.stringify(stamp, null, 2)}\n`);
}

/**
 * The archive to link for the package at `root` when compiling with
 * Emscripten `emscripten` (a version string): `{ archive }`, or
 * `{ reason }` saying why the runtime must be compiled from source.
 */
export function prebuiltRuntime(root, emscripten, name = ARCHIVE) {
  const archive = join(root, name);
  if (!existsSync(archive)) return { reason: `no prebuilt runtime (${name}; \`npm run build\` makes it)` };
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, STAMP), 'utf8'));
  } catch {
    return { reason: `${STAMP} is missing or unreadable, so ${ARCHIVE} cannot be checked` };
  }
  if (stamp.sources !== treeHash(root, RUNTIME_SOURCES)) {
    return { reason: `${name} is stale: it was built from other sources than the src/ and include/ here` };
  }
  if (stamp.emscripten !== emscripten) {
    return { reason: `${name} was compiled by Emscripten ${stamp.emscripten}, not by this ` +
      `Emscripten (${emscripten ?? 'unknown version'})` };
  }
  return { archive };
}

/**
 * The version of the Emscripten on PATH: `{ version }` (null when it does
 * not say), or `{ missing: true }` without emcc, or `{ error }` when it
 * does not run. Read from the emscripten-version.txt beside emcc where
 * there is one (Debian's and the emsdk's layouts), which saves starting
 * Python; otherwise from `emcc --version`.
 */
export function emscriptenVersion() {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const emcc = join(dir, 'emcc');
    try {
      accessSync(emcc, constants.X_OK);
    } catch {
      continue;
    }
    try {
      const text = readFileSync(join(dirname(realpathSync(emcc)), 'emscripten-version.txt'), 'utf8');
      const version = /^\s*"?(\d+\.\d+\.\d+)/.exec(text)?.[1];
      if (version) return { version };
    } catch {
      // no version file there: ask emcc
    }
    break;
  }
  const result = spawnSync('emcc', ['--version'], { encoding: 'utf8' });
  if (result.error?.code === 'ENOENT') return { missing: true };
  if (result.error) return { error: `cannot run emcc: ${result.error.message}` };
  if (result.status !== 0) {
    return { error: `\`emcc --version\` failed (exit ${result.status}): ${result.stderr.trim()}` };
  }
  return { version: /\b(\d+\.\d+\.\d+)\b/.exec(result.stdout.split('\n')[0])?.[1] ?? null };
}
