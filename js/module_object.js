// The wrapper for `ffi.Module`: functions looked up by name (optionally in
// the module's imports), its kind, imports, and function metadata. Modules
// are loaded with `runtime.loadModule()`.
import { FFIObject, RUNTIME, INSPECT, inspectWith } from './objects.js';
import { optionsOf } from './runtime/checks.js';

export class ModuleObject extends FFIObject {
  /**
   * The module's function NAME (a callable handle that keeps the module
   * alive), or null when neither it nor (by default) its imports define it.
   */
  getFunction(name, options) {
    const queryImports = optionsOf(options, 'getFunction').queryImports ?? true;
    return this[RUNTIME].global('ffi.ModuleGetFunction')(this, name, queryImports);
  }

  implementsFunction(name, options) {
    const queryImports = optionsOf(options, 'implementsFunction').queryImports ?? true;
    return this[RUNTIME].global('ffi.ModuleImplementsFunction')(this, name, queryImports);
  }

  /** `library` for modules of C code. */
  get kind() {
    return this[RUNTIME].global('ffi.ModuleGetKind')(this);
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

  /** `ffi.Module (library)`: the type key and the module's kind. */
  [INSPECT](depth, options, inspect) {
    return inspectWith(this, depth, options, inspect, (ctx, key) => {
      let kind;
      try {
        kind = this.kind;
      } catch {
        return key;
      }
      return `${key} (${kind})`;
    });
  }
}
