// The forwarding layer of `webffi build`: C++ built against upstream
// tvm-ffi's headers (--tvm-ffi-include) may call the C++ functions those
// headers declare and upstream's library defines (tvm::ffi::json::Parse,
// StructuralEqual::Equal, ...). src/cxx/forward.cc defines them over
// webffi's C globals; it is compiled with the user's C++ whenever upstream's
// headers are given, so such code links. Kept apart from the rest of the CLI.
import { fileURLToPath } from 'node:url';

const forwardSource = fileURLToPath(new URL('../src/cxx/forward.cc', import.meta.url));

/** Extra sources to compile with the user's: the forwarding layer, when it applies. */
export function forwardingSources(opts, isCxx) {
  const cxx = opts.sources.some((source) => isCxx(source));
  return cxx && opts.tvmFfiInclude.length > 0 ? [forwardSource] : [];
}

export { forwardSource };
