// The defined global symbols of a wasm object file (what `emnm
// --defined-only` lists), read from its "linking" custom section in
// process: `webffi build` asks for them on every build, and emnm is a
// Python start (a third of a second) each time. LLVM's object format:
// https://github.com/WebAssembly/tool-conventions/blob/main/Linking.md

const SYMBOL_TABLE = 8; // linking subsection
const KIND_FUNCTION = 0;
const KIND_DATA = 1;
const KIND_SECTION = 3;
const FLAG_WEAK = 0x1;
const FLAG_LOCAL = 0x2;
const FLAG_UNDEFINED = 0x10;
const FLAG_EXPLICIT_NAME = 0x40;

/**
 * name -> nm's type letter ('T' code, 'D' data, 'W' weak; local symbols
 * are left out) of the symbols a wasm object defines, or null when `bytes`
 * is not a wasm object with a version 2 symbol table (LLVM bitcode from
 * -flto, say): the caller then asks emnm.
 */
export function objectSymbols(bytes) {
  let pos = 0;
  const u8 = () => {
    if (pos >= bytes.length) throw new RangeError('truncated');
    return bytes[pos++];
  };
  const leb = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = u8();
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
      shift += 7;
      if (shift > 35) throw new RangeError('bad LEB128');
    }
  };
  const name = () => {
    const length = leb();
    if (pos + length > bytes.length) throw new RangeError('truncated');
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + pos, length).toString('utf8');
    pos += length;
    return text;
  };
  try {
    if (bytes.length < 8 || bytes.readUInt32LE(0) !== 0x6d736100 || bytes.readUInt32LE(4) !== 1) {
      return null;
    }
    pos = 8;
    while (pos < bytes.length) {
      const id = u8();
      const size = leb();
      const end = pos + size;
      if (id === 0 && name() === 'linking') {
        if (leb() !== 2) return null;
        while (pos < end) {
          const type = u8();
          const length = leb();
          if (type !== SYMBOL_TABLE) {
            pos += length;
            continue;
          }
          const symbols = new Map();
          for (let count = leb(); count > 0; count--) {
            const kind = u8();
            const flags = leb();
            const defined = (flags & FLAG_UNDEFINED) === 0;
            let symbol = null;
            if (kind === KIND_DATA) {
              symbol = name();
              if (defined) leb(), leb(), leb(); // segment, offset, size
            } else if (kind === KIND_SECTION) {
              leb();
            } else {
              leb(); // the function, global, tag or table index
              if (defined || (flags & FLAG_EXPLICIT_NAME) !== 0) symbol = name();
            }
            if (symbol === null || !defined || (flags & FLAG_LOCAL) !== 0) continue;
            if ((flags & FLAG_WEAK) !== 0) symbols.set(symbol, 'W');
            else if (kind === KIND_FUNCTION) symbols.set(symbol, 'T');
            else if (kind === KIND_DATA) symbols.set(symbol, 'D');
            else symbols.set(symbol, 'G');
          }
          return symbols;
        }
        return new Map(); // a linking section without symbols
      }
      pos = end;
    }
    return null;
  } catch (e) {
    if (e instanceof RangeError) return null;
    throw e;
  }
}
