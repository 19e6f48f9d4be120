// The demo: load the runtime wasm in Node, call C functions through the
// global registry, and show a C error with its kind, message and backtrace.
// It speaks the raw C ABI through the wasm exports, reading every layout from
// the runtime's own ABI metadata.
import { readFileSync } from 'node:fs';
import { createWasi } from '../js/wasi.js';
import { createHostImports } from '../js/host_imports.js';

const wasmPath = new URL('../build/wasm/webffi.wasm', import.meta.url);
const wasi = createWasi();
let memory;
const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), {
  wasi_snapshot_preview1: wasi.imports,
  ...createHostImports(() => memory),
});
memory = instance.exports.memory;
wasi.setMemory(memory);
const x = instance.exports;
x._initialize();

const utf8 = new TextEncoder();
const text = new TextDecoder();
const view = () => new DataView(memory.buffer);
const cString = (ptr) => {
  const bytes = new Uint8Array(memory.buffer);
  return text.decode(bytes.subarray(ptr, bytes.indexOf(0, ptr)));
};
const meta = JSON.parse(cString(x.WebFFIGetABIMetadata()));
const { sizeof, offsetof: off, type_index: T } = meta;

const heapString = (s) => {
  const bytes = utf8.encode(s);
  const ptr = x.WebFFIHeapAlloc(bytes.length + 1);
  new Uint8Array(memory.buffer).set([...bytes, 0], ptr);
  return { ptr, size: bytes.length };
};
const byteArrayText = (ptr) => {
  const data = view().getUint32(ptr + off['TVMFFIByteArray.data'], true);
  const size = view().getUint32(ptr + off['TVMFFIByteArray.size'], true);
  return text.decode(new Uint8Array(memory.buffer, data, size));
};

function getGlobal(name) {
  const s = heapString(name);
  const ba = x.WebFFIHeapAlloc(sizeof.TVMFFIByteArray + 4);
  view().setUint32(ba + off['TVMFFIByteArray.data'], s.ptr, true);
  view().setUint32(ba + off['TVMFFIByteArray.size'], s.size, true);
  const out = ba + sizeof.TVMFFIByteArray;
  if (x.TVMFFIFunctionGetGlobal(ba, out) !== 0) throw new Error('lookup failed');
  return view().getUint32(out, true);
}

// Calls a global with int or string arguments; returns an int or an error.
function call(name, ...args) {
  const f = getGlobal(name);
  const argv = x.WebFFIHeapAlloc(sizeof.TVMFFIAny * (args.length + 1));
  const result = argv + sizeof.TVMFFIAny * args.length;
  new Uint8Array(memory.buffer).fill(0, argv, result + sizeof.TVMFFIAny);
  args.forEach((a, i) => {
    const at = argv + i * sizeof.TVMFFIAny;
    if (typeof a === 'number') {
      view().setInt32(at + off['TVMFFIAny.type_index'], T.int, true);
      view().setBigInt64(at + off['TVMFFIAny.v_int64'], BigInt(a), true);
    } else {
      view().setInt32(at + off['TVMFFIAny.type_index'], T['const char*'], true);
      view().setUint32(at + off['TVMFFIAny.v_int64'], heapString(a).ptr, true);
    }
  });
  const rc = x.TVMFFIFunctionCall(f, argv, args.length, result);
  x.TVMFFIObjectDecRef(f);
  if (rc === 0) return view().getBigInt64(result + off['TVMFFIAny.v_int64'], true);
  x.TVMFFIErrorMoveFromRaised(argv);
  const err = view().getUint32(argv, true);
  const cell = err + sizeof.TVMFFIObject;
  const fields = ['kind', 'message', 'backtrace'].map((k) =>
    byteArrayText(cell + off[`TVMFFIErrorCell.${k}`]));
  x.TVMFFIObjectDecRef(err);
  return fields;
}

console.log(`webffi runtime: ${(readFileSync(wasmPath).length / 1024).toFixed(1)} KiB wasm, ` +
  `tvm-ffi ABI ${meta.tvm_ffi_version.join('.')}`);
console.log(`testing.add_one(41) = ${call('testing.add_one', 41)}`);
const [kind, message, backtrace] = call('testing.test_raise_error', 'ValueError', 'raised in C');
console.log(`testing.test_raise_error raised ${kind}: ${message}`);
console.log(`C backtrace (most recent call first):\n${backtrace}`);
const [kind2, message2] = call('testing.add_one', 'not an int');
console.log(`testing.add_one("not an int") raised ${kind2}: ${message2}`);
