// The forwarding layer of `webffi build`: C++ built against upstream
// tvm-ffi's headers (--tvm-ffi-include) may call the C++ functions those
// headers declare and upstream's library defines (tvm::ffi::json::Parse,
// StructuralEqual::Equal, ...). src/cxx/forward.cc defines them over
// webffi's C globals; whenever upstream's headers are given it is compiled
// with the user's C++ into an archive that the link pulls in only when the
// code calls one of them (so it costs nothing otherwise). Kept apart from
// the rest of the CLI.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const forwardSource = fileURLToPath(new URL('../src/cxx/forward.cc', import.meta.url));

/** Extra sources to compile with the user's: the forwarding layer, when it applies. */
export function forwardingSources(opts, isCxx) {
  const cxx = opts.sources.some((source) => isCxx(source));
  return cxx && opts.tvmFfiInclude.length > 0 ? [forwardSource] : [];
}

/**
 * Whether any of the objects (and archives) calls into tvm::ffi without
 * defining it: what upstream's library would define, so what the forwarding
 * layer is for. Header-only code is defined in the objects themselves.
 */
function callsUpstreamLibrary(objects) {
  const result = spawnSync('emnm', ['--undefined-only', ...objects], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (result.error || result.status !== 0) return true; // cannot tell: compile it, the link decides
  return /3tvm3ffi/.test(result.stdout);
}

/**
 * The archives to link after the user's objects: compile(source, object)
 * compiles one source with the user's flags. None when the objects do not
 * call upstream's library (compiling the layer is most of a small build).
 */
export function forwardingArchives(opts, work, isCxx, compile, objects = null) {
  const sources = forwardingSources(opts, isCxx);
  if (sources.length === 0 || (objects !== null && !callsUpstreamLibrary(objects))) return [];
  return sources.map((source, i) => {
    const object = join(work, `forward_${i}.o`);
    const archive = join(work, `forward_${i}.a`);
    compile(source, object);
    const result = spawnSync('emar', ['rcs', archive, object], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.error || result.status !== 0) {
      console.error(`webffi: emar failed${result.error ? `: ${result.error.message}` : ''}`);
      process.exit(1);
    }
    return archive;
  });
}

/** Whether a link input is one of forwardingArchives' archives. */
export const isForwardingArchive = (path) => /(^|[\\/])forward_\d+\.a$/.test(path);

export { forwardSource };
