// The hash of the sources dist/ is built from (js/, src/, include/, cmake/,
// CMakeLists.txt): the build records it in dist/, and `npm pack` refuses a
// dist/ whose recorded hash is not the sources' (built from older sources).
// Contents, not mtimes: a checkout or a copy changes mtimes, not contents.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const SOURCES = ['CMakeLists.txt', 'cmake', 'include', 'js', 'src'];
export const HASH_FILE = 'dist/sources.sha256';

/** Paths (relative to root, '/'-separated, sorted) of the files under `SOURCES`. */
export function sourceFiles(root) {
  const files = [];
  const walk = (rel) => {
    const abs = join(root, rel);
    let st;
    try {
      st = statSync(abs);
    } catch {
      return; // an absent source directory hashes as empty
    }
    if (st.isDirectory()) for (const name of readdirSync(abs).sort()) walk(`${rel}/${name}`);
    else if (st.isFile()) files.push(rel);
  };
  for (const s of SOURCES) walk(s);
  return files.sort();
}

/** sha256 over each source file's path and contents. */
export function sourceHash(root) {
  const h = createHash('sha256');
  for (const rel of sourceFiles(root)) {
    const body = readFileSync(join(root, rel));
    h.update(`${rel}\0${body.length}\0`).update(body);
  }
  return h.digest('hex');
}
