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
 * The archives to link after the user's objects: compile(source, object)
 * compiles one source with the user's flags.
 */
export function forwardingArchives(opts, work, isCxx, compile) {
  return forwardingSources(opts, isCxx).map((source, i) => {
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
