// The runtime over one instantiated core: marshaling JS values to and from
// TVMFFIAny, calling Functions both ways, errors across the boundary, and
// the global registry. Layouts come from the core's ABI metadata. The core
// is webffi's own or a library TVM compiled; the few operations that differ
// between them are the core object's (js/core/).
//
// One runtime is one `state` record that the sections under js/runtime/
// install their functions into, in order (each reads what earlier ones
// installed, and reaches later ones through `state` at call time):
//   layout.js     the ABI facts (type indices, offsets, sizes)
//   poison.js     poisoning on a real trap; guarded exports
//   js_values.js  JS values held by C (callbacks, thrown values)
//   calls.js      memory and frames, JS -> Any, Any -> JS, calls (the hot paths)
//   bulk_read.js  containers read straight from their cells, for the by-value codec
//   lifetimes.js  wrapper lifetimes, scopes, the hooks wrappers reach
//   reflection.js type info and reflected classes
//   raise.js      errors across the boundary
//   registry.js   the global function registry
//   surface.js    the public runtime object
import { Heap } from './heap.js';
import { FFIObject } from './objects.js';
import { layoutOf } from './runtime/layout.js';
import { createPeerGuard, boundLibraryTimer } from './core/peer_guard.js';
import { TVM_FFI_LIBRARY } from './core/detect.js';
import * as poison from './runtime/poison.js';
import * as jsValues from './runtime/js_values.js';
import * as calls from './runtime/calls.js';
import * as bulkRead from './runtime/bulk_read.js';
import * as lifetimes from './runtime/lifetimes.js';
import * as reflection from './runtime/reflection.js';
import * as raise from './runtime/raise.js';
import * as registry from './runtime/registry.js';
import * as surface from './runtime/surface.js';

/**
 * @param {object} core an attached core (js/core/): its exports, ABI
 *   metadata (already checked) and operations
 * @param {{ logger?: Console, backtraces?: { on: boolean } }} options (backtraces:
 *   the switch the host imports read, shared with them)
 */
export function createRuntime(core, options = {}) {
  const x = core.exports;
  const meta = core.meta;
  const state = {
    x,
    core,
    meta,
    L: layoutOf(meta, core.opaqueTypeIndex),
    heap: new Heap(x.memory),
    logger: options.logger ?? console,
    backtraces: options.backtraces ?? { on: true },
    // The trap that poisoned the instance (null: none). Its own small object,
    // read on every call: \`state\` itself has too many fields to stay fast.
    trap: { poisoned: null },
    hooks: {}, // what wrappers reach as this[RUNTIME], filled by the sections
    // What protects the owner from peers, whatever the core (js/core/peer_guard.js).
    peers: createPeerGuard(core),
    objectClasses: new Map(), // type index -> wrapper class
  };
  for (const section of [poison, jsValues, calls, bulkRead, lifetimes, reflection, raise, registry, surface]) {
    section.install(state);
  }
  if (core.kind === TVM_FFI_LIBRARY) boundLibraryTimer(state.runtime, state.peers);
  return {
    runtime: state.runtime,
    imports: { callJS: state.callJS, releaseJS: state.releaseHandle, memoryGrew: state.peers.memoryGrew },
  };
}

export { FFIObject };
