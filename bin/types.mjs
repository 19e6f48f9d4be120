// webffi types: TypeScript declarations from the metadata tvm-ffi records
// (the `type_schema` of each function, field and method), the way upstream's
// tvm-ffi-stubgen writes Python stubs:
//
//   webffi types MODULE.wasm [-o OUT.d.ts] [--name NAME] [--runtime WASM]
//     a module's exported functions (TVM_FFI_DLL_EXPORT_TYPED_FUNC, read
//     from its `__tvm_ffi__metadata_*` exports), the global functions it
//     registers when loaded and the object types it registers (fields,
//     methods, `new` through __ffi_init__);
//   webffi types --runtime-globals [-o OUT.d.ts] [--runtime WASM]
//     the runtime's own global functions (js/globals.d.ts is this output).
//
// The module is loaded into a runtime (the package's, or --runtime) to read
// what it registers; what was there before is the runtime's.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';

const USAGE = `usage: webffi types MODULE.wasm [-o OUT.d.ts] [--name NAME] [--runtime WASM]
       webffi types --runtime-globals [-o OUT.d.ts] [--runtime WASM]

Writes TypeScript declarations (to stdout, or OUT.d.ts) from the type
schemas in tvm-ffi metadata: a module's functions (getFunction), the
globals it registers (getGlobal) and its object types (objectClass),
or with --runtime-globals the runtime's own globals. NAME prefixes the
declared types (default: the module's name, in PascalCase).`;

/** Parses `webffi types` arguments; throws an Error with the usage on a bad line. */
export function parseTypesArgs(argv) {
  const opts = { module: null, out: null, name: null, runtime: null, runtimeGlobals: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '-o') opts.out = value();
    else if (a === '--name') opts.name = value();
    else if (a === '--runtime') opts.runtime = value();
    else if (a === '--runtime-globals') opts.runtimeGlobals = true;
    else if (a === '-h' || a === '--help') return { help: true };
    else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (opts.module === null) opts.module = a;
    else throw new UsageError(`one module at a time (got ${opts.module} and ${a})`);
  }
  if (opts.runtimeGlobals === (opts.module !== null)) {
    throw new UsageError(opts.runtimeGlobals ? '--runtime-globals takes no module' : 'no module');
  }
  if (opts.name !== null && !/^[A-Za-z_$][\w$]*$/.test(opts.name)) {
    throw new UsageError(`--name ${opts.name}: not an identifier`);
  }
  return opts;
}

export class UsageError extends Error {}

// ------------------------------------------------------------ schema -> TS
/**
 * The TS type of a type schema ({ type, args? }), for values going into a
 * call (`in`) or coming out (`out`); `objects` maps the type keys declared
 * here to their interface names.
 */
export function tsType(schema, dir, objects = new Map()) {
  const t = schema?.type;
  const args = schema?.args ?? [];
  const inner = (i) => tsType(args[i], dir, objects);
  const isIn = dir === 'in';
  switch (t) {
    case 'Any': return isIn ? 'FFIInput' : 'any';
    case 'None': return isIn ? 'null | undefined' : 'void';
    case 'bool': return 'boolean';
    case 'int': return 'number | bigint';
    case 'float': return 'number';
    case 'str':
    case 'ffi.String': return 'string';
    case 'bytes':
    case 'ffi.Bytes': return isIn ? 'Uint8Array | ArrayBuffer' : 'Uint8Array';
    case 'Device': return 'Device';
    case 'DataType':
    case 'dtype': return isIn ? 'DataType | string' : 'DataType';
    case 'ffi.Function':
    case 'Callable': return isIn ? 'FFIFunction | ((...args: any[]) => unknown)' : 'FFIFunction';
    case 'ffi.Object': return 'FFIObject';
    case 'ffi.Module': return 'ModuleObject';
    case 'ffi.Error': return 'Error';
    case 'ffi.Array': return isIn ? `ArrayObject | ${array(args[0], objects)}` : 'ArrayObject';
    case 'ffi.List': return 'ListObject';
    case 'ffi.Map': return isIn ? 'MapObject | Map<FFIInput, FFIInput> | { [key: string]: FFIInput }' : 'MapObject';
    case 'ffi.Dict': return 'DictObject';
    case 'ffi.Shape': return isIn ? 'ShapeObject | (number | bigint)[]' : 'ShapeObject';
    case 'ffi.Tensor': return isIn ? 'Tensor | TensorView | DLTensorRef | TensorData' : 'Tensor';
    case 'DLTensor*': return isIn ? 'Tensor | TensorView | DLTensorRef | TensorData' : 'TensorView';
    case 'Tuple': return isIn ? `[${args.map((a) => tsType(a, dir, objects)).join(', ')}]` : 'ArrayObject';
    case 'Optional': return `${paren(inner(0))} | null${isIn ? ' | undefined' : ''}`;
    case 'Union':
    case 'Variant': return args.length ? [...new Set(args.map((a) => tsType(a, dir, objects)))].join(' | ') : 'any';
    default:
      if (objects.has(t)) return objects.get(t);
      if (typeof t === 'string' && t.includes('.')) return 'FFIObject'; // another object type
      return isIn ? 'FFIInput' : 'any';
  }
}

function paren(t) {
  return /[|&]/.test(t) ? `(${t})` : t;
}

/** A JS array argument for an ffi.Array of element schema e. */
function array(e, objects) {
  return e === undefined ? 'FFIInput[]' : `${paren(tsType(e, 'in', objects))}[]`;
}

/** A function schema's parameters and result: `(_0: number | bigint) => string`. */
export function tsSignature(schema, objects, { dropSelf = false } = {}) {
  if (schema?.type !== 'ffi.Function' || !Array.isArray(schema.args) || schema.args.length === 0) {
    return '(...args: FFIInput[]) => any';
  }
  const [ret, ...params] = schema.args;
  const types = (dropSelf ? params.slice(1) : params).map((p) => tsType(p, 'in', objects));
  // trailing Optional parameters may be left out
  let required = types.length;
  while (required > 0 && types[required - 1].endsWith(' | null | undefined')) --required;
  const list = types.map((t, i) => `_${i}${i >= required ? '?' : ''}: ${t}`);
  return `(${list.join(', ')}) => ${tsType(ret, 'out', objects)}`;
}

/** The type schema in a metadata JSON text, or null. */
export function schemaOf(metadata) {
  if (typeof metadata !== 'string' || metadata === '') return null;
  try {
    const meta = JSON.parse(metadata);
    if (typeof meta?.type_schema !== 'string') return null;
    return JSON.parse(meta.type_schema);
  } catch {
    return null;
  }
}

const quote = (s) => JSON.stringify(s);
const propName = (s) => (/^[A-Za-z_$][\w$]*$/.test(s) ? s : quote(s));

/** `my_ffi_extension` -> `MyFfiExtension`. */
export function pascalCase(text) {
  const words = String(text).split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  return /^[A-Za-z_$]/.test(name) ? name : `M${name}`;
}

// ------------------------------------------------------------- gathering
async function loadRuntime(runtimePath) {
  const webffi = await import(new URL('../js/index.js', import.meta.url));
  const { INTERNALS } = await import(new URL('../js/objects.js', import.meta.url));
  const options = { autoloadBackends: false, logger: { log() {}, warn() {}, error() {} } };
  if (runtimePath) options.wasm = readFileSync(runtimePath);
  return { INTERNALS, rt: await webffi.load(options) };
}

function registeredTypeKeys(rt) {
  return rt.scope(() => [...rt.getGlobal('ffi.GetRegisteredTypeKeys')()]);
}

/** What a runtime declares: every global's metadata, sorted by name. */
function globalsOf(rt, names) {
  const metadata = rt.getGlobal('ffi.GetGlobalFuncMetadata');
  return [...names].sort().map((name) => ({ name, schema: schemaOf(metadata(name)) }));
}

/** A module's exported functions: the names of its `__tvm_ffi_NAME` exports. */
function exportedFunctions(bytes) {
  const names = WebAssembly.Module.exports(new WebAssembly.Module(bytes))
    .filter((e) => e.kind === 'function' && e.name.startsWith('__tvm_ffi_') && !e.name.startsWith('__tvm_ffi__'))
    .map((e) => e.name.slice('__tvm_ffi_'.length));
  return [...new Set(names)].sort();
}

/** Reads a module: its functions, the globals and the types it registers. */
export async function readModule(file, runtimePath) {
  const bytes = readFileSync(file);
  const { INTERNALS, rt } = await loadRuntime(runtimePath);
  // the module loader registers its own globals when made: not the module's
  const { moduleLoader } = await import(new URL('../js/dylink.js', import.meta.url));
  moduleLoader(rt.exports);
  const globalsBefore = new Set(rt.listGlobals());
  const typesBefore = new Set(registeredTypeKeys(rt));
  const mod = await rt.loadModule(bytes);
  const functions = exportedFunctions(bytes).map((name) => ({
    name, schema: schemaOf(mod.functionMetadata(name)), doc: mod.functionDoc(name),
  }));
  const globals = globalsOf(rt, rt.listGlobals().filter((n) => !globalsBefore.has(n)));
  const { typeInfoOf, typeKey } = rt[INTERNALS];
  const types = registeredTypeKeys(rt).filter((k) => !typesBefore.has(k)).sort().map((key) => {
    const info = typeInfoOf(key);
    return {
      key,
      parent: info.parents.length ? typeKey(info.parents[info.parents.length - 1]) : null,
      fields: info.fields.map((f) => ({ name: f.name, writable: Boolean(f.flags & 1), schema: schemaOf(f.metadata) })),
      methods: info.methods.map((m) => ({ name: m.name, isStatic: Boolean(m.flags & 4), schema: schemaOf(m.metadata) })),
    };
  });
  return { name: mod.name ?? basename(file, extname(file)), functions, globals, types };
}

// --------------------------------------------------------------- writing
const IMPORTS = ['ArrayObject', 'DataType', 'Device', 'DictObject', 'DLTensorRef', 'FFIFunction', 'FFIInput',
  'FFIObject', 'GlobalOf', 'Handle', 'ListObject', 'MapObject', 'ModuleObject', 'ReflectedClass', 'Runtime',
  'RuntimeGlobals', 'ShapeObject', 'Tensor', 'TensorData', 'TensorView'];

/** The file: a header, the imports the body uses, the body. */
function file(what, from, body) {
  const used = IMPORTS.filter((name) => new RegExp(`\\b${name}\\b`).test(body) &&
    !new RegExp(`(interface|type) ${name}\\b`).test(body));
  return [
    `// ${what}, from the type schemas in its tvm-ffi metadata.`,
    '// Written by `webffi types`; do not edit.',
    ...(used.length ? [`import type { ${used.join(', ')} } from '${from}';`] : []),
    '',
    body,
  ].join('\n');
}

/** Declarations for a module (readModule's result). */
export function moduleDeclarations(info, { name, from = 'webffi' } = {}) {
  const N = name ?? pascalCase(info.name);
  const objects = new Map();
  const className = (key) => key.split('.').pop().replace(/[^\w$]/g, '_');
  for (const t of info.types) {
    let n = className(t.key);
    if ([...objects.values()].includes(n)) n = pascalCase(t.key);
    objects.set(t.key, n);
  }
  const out = [];
  out.push(`/** The functions \`${info.name}\` exports, by name (\`getFunction\`). */`);
  out.push(`export interface ${N}Functions {`);
  for (const f of info.functions) {
    if (f.doc) out.push(`  /** ${f.doc.replace(/\*\//g, '* /').split('\n').join('\n   * ')} */`);
    out.push(`  ${propName(f.name)}: ${tsSignature(f.schema, objects)};`);
  }
  out.push('}', '');
  out.push(`/** The global functions \`${info.name}\` registers, by name (\`getGlobal\`). */`);
  out.push(`export interface ${N}Globals {`);
  for (const g of info.globals) out.push(`  ${quote(g.name)}: ${tsSignature(g.schema, objects)};`);
  out.push('}', '');
  for (const t of info.types) {
    const n = objects.get(t.key);
    const base = t.parent && objects.has(t.parent) ? objects.get(t.parent) : 'FFIObject';
    out.push(`/** \`${t.key}\` objects. */`);
    out.push(`export interface ${n} extends ${base} {`);
    for (const f of t.fields) {
      out.push(`  ${f.writable ? '' : 'readonly '}${propName(f.name)}: ${f.schema ? tsType(f.schema, 'out', objects) : 'any'};`);
    }
    for (const m of t.methods.filter((m) => !m.isStatic)) {
      out.push(`  ${propName(m.name)}${methodSignature(m.schema, objects, true)};`);
    }
    out.push('}');
    out.push(`/** The class of \`${t.key}\` (\`objectClass\`): \`new\` runs its __ffi_init__. */`);
    out.push(`export interface ${n}Class {`);
    const init = t.methods.find((m) => m.isStatic && m.name === '__ffi_init__');
    if (init) out.push(`  new ${methodSignature(init.schema, objects, false, n)};`);
    out.push(`  readonly prototype: ${n};`, '  readonly name: string;');
    for (const m of t.methods.filter((m) => m.isStatic)) {
      out.push(`  ${propName(m.name)}${methodSignature(m.schema, objects, false, m.name === '__ffi_init__' ? n : null)};`);
    }
    out.push('}', '');
  }
  out.push(`/** The object types \`${info.name}\` registers, by type key (\`objectClass\`). */`);
  out.push(`export interface ${N}Types {`);
  for (const t of info.types) out.push(`  ${quote(t.key)}: ${objects.get(t.key)}Class;`);
  out.push('}', '');
  out.push(`/** The module with its functions typed: \`await rt.loadModule(...) as ${N}Module\`. */`);
  out.push(`export interface ${N}Module extends ModuleObject {`);
  out.push(`  getFunction<K extends string>(name: K, options?: { queryImports?: boolean; optional?: boolean }): K extends keyof ${N}Functions ? Handle & ${N}Functions[K] : FFIFunction | null;`);
  out.push('}', '');
  out.push(`/** A runtime with \`${info.name}\` loaded: its globals and classes typed (\`rt as With${N}\`). */`);
  out.push(`export type With${N}<R extends Runtime = Runtime> = Omit<R, 'getGlobal' | 'objectClass'> & {`);
  out.push(`  getGlobal<K extends string>(name: K): K extends keyof ${N}Globals ? Handle & ${N}Globals[K] : GlobalOf<RuntimeGlobals, K>;`);
  out.push(`  getGlobal<K extends string>(name: K, options: { optional: true }): (K extends keyof ${N}Globals ? Handle & ${N}Globals[K] : GlobalOf<RuntimeGlobals, K>) | null;`);
  out.push(`  objectClass<K extends string>(typeKey: K): K extends keyof ${N}Types ? ${N}Types[K] : ReflectedClass;`);
  out.push('};', '');
  return file(`The module \`${info.name}\``, from, out.join('\n'));
}

/** `(_0: number | bigint): string` for a method (self dropped for instance methods). */
function methodSignature(schema, objects, isInstance, returns = null) {
  const sig = tsSignature(schema, objects, { dropSelf: isInstance });
  const arrow = sig.lastIndexOf(') => ');
  const params = sig.slice(0, arrow + 1);
  // an __ffi_init__ makes the type itself, whatever the schema names it
  return `${params}: ${returns ?? sig.slice(arrow + 5)}`;
}

/** Declarations for the runtime's own globals (js/globals.d.ts). */
export function runtimeDeclarations(globals, { from = './index.js' } = {}) {
  const out = ['/** The global functions the runtime registers, by name (`getGlobal`). */'];
  out.push('export interface RuntimeGlobals {');
  for (const g of globals) out.push(`  ${quote(g.name)}: ${tsSignature(g.schema, new Map())};`);
  out.push('}', '');
  return file("The runtime's own global functions", from, out.join('\n'));
}

/** The runtime's own globals as declared by its metadata. */
export async function readRuntimeGlobals(runtimePath) {
  const { rt } = await loadRuntime(runtimePath);
  return globalsOf(rt, rt.listGlobals());
}

// ------------------------------------------------------------------ main
export async function typesMain(argv) {
  let opts;
  try {
    opts = parseTypesArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`webffi: types: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  let text;
  try {
    text = opts.runtimeGlobals
      ? runtimeDeclarations(await readRuntimeGlobals(opts.runtime))
      : moduleDeclarations(await readModule(opts.module, opts.runtime), { name: opts.name });
  } catch (e) {
    console.error(`webffi: types: ${opts.module ?? 'the runtime'}: ${e?.message ?? e}`);
    process.exit(1);
  }
  if (opts.out) writeFileSync(opts.out, text);
  else process.stdout.write(text);
}
