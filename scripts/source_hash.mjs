// The hash of the sources dist/ is built from (js/, src/, include/, cmake/,
// CMakeLists.txt): the build records it in dist/, and `npm pack` refuses a
// dist/ whose recorded hash is not the sources' (built from older sources).
// Contents, not mtimes: a checkout or a copy changes mtimes, not contents.
// (The same hash over src/ and include/ stamps dist/libwebffi.a, which
// `webffi build` checks in an installed package: bin/prebuilt_runtime.mjs.)
import { treeHash } from '../bin/prebuilt_runtime.mjs';

export const SOURCES = ['CMakeLists.txt', 'cmake', 'include', 'js', 'src'];
export const HASH_FILE = 'dist/sources.sha256';

/** sha256 over each source file's path and contents. */
export function sourceHash(root) {
  return treeHash(root, SOURCES);
}
