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
export function tsType(schema, dir, objects = new Map(), depth = 0) {
  const isIn = dir === 'in';
  // A schema nested past MAX_SCHEMA_DEPTH (or with more than MAX_SCHEMA_ARGS
  // arguments) is typed loosely there: that entry degrades, the file stays whole.
  if (depth > MAX_SCHEMA_DEPTH || schema === null || typeof schema !== 'object') return isIn ? 'FFIInput' : 'any';
  const t = schema.type;
  const args = Array.isArray(schema.args) ? schema.args : [];
  if (args.length > MAX_SCHEMA_ARGS) return isIn ? 'FFIInput' : 'any';
  const inner = (i) => tsType(args[i], dir, objects, depth + 1);
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
    case 'ffi.Array': return isIn ? `ArrayObject | ${array(args[0], objects, depth + 1)}` : 'ArrayObject';
    case 'ffi.List': return 'ListObject';
    case 'ffi.Map': return isIn ? 'MapObject | Map<FFIInput, FFIInput> | { [key: string]: FFIInput }' : 'MapObject';
    case 'ffi.Dict': return 'DictObject';
    case 'ffi.Shape': return isIn ? 'ShapeObject | (number | bigint)[]' : 'ShapeObject';
    case 'ffi.Tensor': return isIn ? 'Tensor | TensorView | DLTensorRef | TensorData' : 'Tensor';
    case 'DLTensor*': return isIn ? 'Tensor | TensorView | DLTensorRef | TensorData' : 'TensorView';
    case 'Tuple': return isIn ? `[${args.map((a) => tsType(a, dir, objects, depth + 1)).join(', ')}]` : 'ArrayObject';
    case 'Optional': return `${paren(inner(0))} | null${isIn ? ' | undefined' : ''}`;
    case 'Union':
    case 'Variant': return args.length ? [...new Set(args.map((a) => tsType(a, dir, objects, depth + 1)))].join(' | ') : 'any';
    default:
      if (typeof t === 'string' && objects.has(t)) return objects.get(t);
      if (typeof t === 'string' && t.includes('.')) return 'FFIObject'; // another object type
      return isIn ? 'FFIInput' : 'any';
  }
}

function paren(t) {
  return /[|&]/.test(t) ? `(${t})` : t;
}

/** A JS array argument for an ffi.Array of element schema e. */
function array(e, objects, depth) {
  return e === undefined ? 'FFIInput[]' : `${paren(tsType(e, 'in', objects, depth))}[]`;
}

/** How deep a type schema is followed, and how many arguments one may have, before it is typed loosely. */
export const MAX_SCHEMA_DEPTH = 32;
export const MAX_SCHEMA_ARGS = 256;

/** A function schema's parameters and result: `(_0: number | bigint) => string`. */
export function tsSignature(schema, objects, { dropSelf = false } = {}) {
  if (schema?.type !== 'ffi.Function' || !Array.isArray(schema.args) || schema.args.length === 0 ||
    schema.args.length > MAX_SCHEMA_ARGS) {
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

const quote = (s) => JSON.stringify(String(s));

// Words an identifier may not be, or that mean something where a member
// name starts (`new(...)` is a construct signature, not a method "new").
const RESERVED = new Set(('break case catch class const continue debugger default delete do else enum export extends ' +
  'false finally for function if import in instanceof new null return super switch this throw true try typeof var ' +
  'void while with implements interface let package private protected public static yield any unknown never string ' +
  'number boolean symbol bigint object undefined declare abstract async await get set readonly type keyof infer is ' +
  'asserts module namespace require global of satisfies accessor out constructor').split(' '));
const PLAIN = /^[A-Za-z_$][\w$]*$/;
/** A member name: bare when a plain identifier, quoted otherwise. */
const propName = (s) => (PLAIN.test(s) && !RESERVED.has(s) ? s : quote(s));

/** Text inside a JSDoc comment: it cannot close the comment; lines kept as comment lines. */
export function docText(text) {
  return String(text).replace(/\*\//g, '*\\/').split(/\r\n|[\r\n\u2028\u2029]/).join('\n   * ');
}

/** Text inside a `//` comment or a one-line JSDoc: no line ends, cannot close a comment. */
export function lineText(text) {
  return String(text).replace(/\*\//g, '*\\/').replace(/\r\n|[\r\n\u2028\u2029]/g, ' ');
}

/** A valid TypeScript type name made from `text` (other characters become _). */
function identifier(text) {
  let s = String(text).replace(/[^\w$]/g, '_');
  if (!/^[A-Za-z_$]/.test(s)) s = `_${s}`;
  return RESERVED.has(s) ? `_${s}` : s;
}

/** `my_ffi_extension` -> `MyFfiExtension`. */
export function pascalCase(text) {
  const words = String(text).split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('').slice(0, 128);
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
    `// ${lineText(what)}, from the type schemas in its tvm-ffi metadata.`,
    '// Written by `webffi types`; do not edit.',
    ...(used.length ? [`import type { ${used.join(', ')} } from '${from}';`] : []),
    '',
    body,
  ].join('\n');
}

/** What FFIObject declares: a field or method of that name would not type-check, and is left out. */
const BASE_MEMBERS = new Set(['constructor', 'dispose', 'disposed', 'typeKey', 'typeIndex', 'handle', 'toString']);

/** `entry()`, or `fallback` when it cannot be written (a schema that breaks the writer degrades one entry). */
function guarded(entry, fallback) {
  try {
    return entry();
  } catch {
    return fallback;
  }
}

/**
 * Declarations for a module (readModule's result). Every name and text
 * from the module is escaped where it goes: type names are identifiers made
 * unique, member names bare or quoted, comments cannot be closed or broken
 * across lines by what they quote.
 */
export function moduleDeclarations(info, { name, from = 'webffi' } = {}) {
  const keys = new Set();
  info = { ...info, types: info.types.filter((t) => !keys.has(String(t.key)) && keys.add(String(t.key))) };
  const N = name ?? pascalCase(info.name);
  const title = lineText(info.name);
  const objects = new Map();
  const taken = new Set([...IMPORTS, ...RESERVED, `${N}Functions`, `${N}Globals`, `${N}Types`, `${N}Module`, `With${N}`]);
  const className = (key) => identifier(String(key).split('.').pop());
  for (const t of info.types) {
    let n = className(t.key);
    if (taken.has(n) || taken.has(`${n}Class`)) n = identifier(pascalCase(t.key));
    for (let k = 2; taken.has(n) || taken.has(`${n}Class`); k++) n = `${identifier(pascalCase(t.key))}_${k}`;
    taken.add(n);
    taken.add(`${n}Class`);
    objects.set(t.key, n);
  }
  const loose = '(...args: FFIInput[]) => any';
  const out = [];
  out.push(`/** The functions \`${title}\` exports, by name (\`getFunction\`). */`);
  out.push(`export interface ${N}Functions {`);
  const seen = new Set();
  for (const f of info.functions) {
    if (seen.has(String(f.name))) continue;
    seen.add(String(f.name));
    if (f.doc) out.push(`  /** ${docText(f.doc)} */`);
    out.push(`  ${propName(f.name)}: ${guarded(() => tsSignature(f.schema, objects), loose)};`);
  }
  out.push('}', '');
  out.push(`/** The global functions \`${title}\` registers, by name (\`getGlobal\`). */`);
  out.push(`export interface ${N}Globals {`);
  seen.clear();
  for (const g of info.globals) {
    if (seen.has(String(g.name))) continue;
    seen.add(String(g.name));
    out.push(`  ${quote(g.name)}: ${guarded(() => tsSignature(g.schema, objects), loose)};`);
  }
  out.push('}', '');
  const declared = new Map(info.types.map((t) => [t.key, t]));
  for (const t of info.types) {
    const n = objects.get(t.key);
    const base = t.parent && objects.has(t.parent) && t.parent !== t.key ? objects.get(t.parent) : 'FFIObject';
    // members an ancestor declared here (or FFIObject) already has are its own
    const inherited = new Set(BASE_MEMBERS);
    for (let p = declared.get(t.parent), hops = 0; p && p !== t && hops < 256; p = declared.get(p.parent), hops++) {
      for (const f of p.fields) inherited.add(String(f.name));
      for (const m of p.methods) if (!m.isStatic) inherited.add(String(m.name));
    }
    const mine = new Set();
    const member = (memberName) => {
      const k = String(memberName);
      if (inherited.has(k) || mine.has(k)) return false;
      mine.add(k);
      return true;
    };
    out.push(`/** \`${lineText(t.key)}\` objects. */`);
    out.push(`export interface ${n} extends ${base} {`);
    for (const f of t.fields) {
      if (!member(f.name)) continue;
      const type = f.schema ? guarded(() => tsType(f.schema, 'out', objects), 'any') : 'any';
      out.push(`  ${f.writable ? '' : 'readonly '}${propName(f.name)}: ${type};`);
    }
    for (const m of t.methods.filter((m) => !m.isStatic)) {
      if (!member(m.name)) continue;
      out.push(`  ${propName(m.name)}${guarded(() => methodSignature(m.schema, objects, true), '(...args: FFIInput[]): any')};`);
    }
    out.push('}');
    out.push(`/** The class of \`${lineText(t.key)}\` (\`objectClass\`): \`new\` runs its __ffi_init__. */`);
    out.push(`export interface ${n}Class {`);
    const init = t.methods.find((m) => m.isStatic && m.name === '__ffi_init__');
    if (init) out.push(`  new ${guarded(() => methodSignature(init.schema, objects, false, n), `(...args: FFIInput[]): ${n}`)};`);
    out.push(`  readonly prototype: ${n};`, '  readonly name: string;');
    const statics = new Set(['prototype', 'name']);
    for (const m of t.methods.filter((m) => m.isStatic)) {
      if (statics.has(String(m.name))) continue;
      statics.add(String(m.name));
      const returns = m.name === '__ffi_init__' ? n : null;
      out.push(`  ${propName(m.name)}${guarded(() => methodSignature(m.schema, objects, false, returns), `(...args: FFIInput[]): ${returns ?? 'any'}`)};`);
    }
    out.push('}', '');
  }
  out.push(`/** The object types \`${title}\` registers, by type key (\`objectClass\`). */`);
  out.push(`export interface ${N}Types {`);
  for (const t of info.types) out.push(`  ${quote(t.key)}: ${objects.get(t.key)}Class;`);
  out.push('}', '');
  out.push(`/** The module with its functions typed: \`await rt.loadModule(...) as ${N}Module\`. */`);
  out.push(`export interface ${N}Module extends ModuleObject {`);
  // ModuleObject's three overloads, typed (an empty Functions too must extend them)
  const typed = `K extends keyof ${N}Functions ? Handle & ${N}Functions[K] : FFIFunction`;
  out.push(`  getFunction<K extends string>(name: K, options?: { queryImports?: boolean; optional?: false }): ${typed};`);
  out.push(`  getFunction<K extends string>(name: K, options: { queryImports?: boolean; optional: true }): (${typed}) | null;`);
  out.push(`  getFunction<K extends string>(name: K, options?: { queryImports?: boolean; optional?: boolean }): (${typed}) | null;`);
  out.push('}', '');
  out.push(`/** A runtime with \`${title}\` loaded: its globals and classes typed (\`rt as With${N}\`). */`);
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
  for (const g of globals) out.push(`  ${quote(g.name)}: ${guarded(() => tsSignature(g.schema, new Map()), '(...args: FFIInput[]) => any')};`);
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
