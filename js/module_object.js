// The wrapper for `ffi.Module`: functions looked up by name (optionally in
// the module's imports), its kind, imports, and function metadata. Modules
// are loaded with `runtime.loadModule()`.
import { FFIObject, RUNTIME, PTR, INSPECT, inspectWith } from './objects.js';
import { optionsOf } from './runtime/checks.js';
import { makeError } from './errors.js';

/** What a lookup of a function the module lacks throws (upstream's Python says the same). */
export const noFunction = (name) => makeError('AttributeError', `Module has no function '${name}'`);

export class ModuleObject extends FFIObject {
  /**
   * The module's function NAME (a callable handle that keeps the module
   * alive). When neither it nor (by default) its imports define it: an
   * AttributeError, or null with `{ optional: true }` (the rule of
   * runtime.getGlobal, whose miss is a ValueError).
   */
  getFunction(name, options) {
    const opts = optionsOf(options, 'getFunction');
    const f = this[RUNTIME].global('ffi.ModuleGetFunction')(this, name, opts.queryImports ?? true);
    if (f === null && !opts.optional) throw noFunction(name);
    return f;
  }

  implementsFunction(name, options) {
    const queryImports = optionsOf(options, 'implementsFunction').queryImports ?? true;
    return this[RUNTIME].global('ffi.ModuleImplementsFunction')(this, name, queryImports);
  }

  /** `library` for modules of C code. */
  get kind() {
    return this[RUNTIME].global('ffi.ModuleGetKind')(this);
  }

  /** The name the module was loaded under (webffi build's --name), or null for the system library. */
  get name() {
    return this[RUNTIME].global('webffi.ModuleGetName')(this) ?? null;
  }

  /** Makes `other`'s functions reachable through this module's imports. */
  importModule(other) {
    this[RUNTIME].global('ffi.ModuleImportModule')(this, other);
  }

  /** The JSON metadata the module declares for NAME, or null. */
  functionMetadata(name) {
    return this[RUNTIME].global('ffi.ModuleGetFunctionMetadata')(this, name);
  }

  /** The documentation the module declares for NAME, or null. */
  functionDoc(name) {
    return this[RUNTIME].global('ffi.ModuleGetFunctionDoc')(this, name);
  }

  /** `ffi.Module 'add_one' (library)`: the type key, the name it was loaded under and its kind. */
  [INSPECT](depth, options, inspect) {
    return inspectWith(this, depth, options, inspect, (ctx, key) => describeModule(this, key));
  }

  /** The same as util.inspect shows: `ffi.Module 'add_one' (library)`. */
  toString() {
    return this[PTR] ? describeModule(this, this.typeKey) : `${this.typeKey} <disposed>`;
  }
}

function describeModule(mod, key) {
  let kind;
  let name;
  try {
    kind = mod.kind;
    name = mod.name;
  } catch {
    return key;
  }
  return name === null ? `${key} (${kind})` : `${key} '${name}' (${kind})`;
}
