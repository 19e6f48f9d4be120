// The line table webffi keeps for a wasm: file, line, column and function
// (inlined frames included) for each code address, made from the DWARF a
// `-g` or `-gline-tables-only` link leaves in the wasm. `webffi build` puts
// it in a `webffi.lines` custom section (or a file of its own, for the
// runtime) and the runtime reads it when a backtrace is read
// (js/symbols.js). The format is described in docs/debugging.md.
//
// DWARF 4 and 5 as LLVM writes them for wasm32: addresses are offsets into
// the code section's contents; code the linker dropped keeps a tombstone
// address (0, -1 or -2), which is skipped.

const MAGIC = [0x57, 0x46, 0x4c, 0x31]; // "WFL1"
export const LINE_TABLE_SECTION = 'webffi.lines';
export const BUILD_ID_SECTION = 'webffi.build_id';

// ------------------------------------------------------------ wasm sections
/** A reader of unsigned and signed LEB128, fixed-size integers and strings over bytes. */
class Reader {
  constructor(bytes, pos = 0, end = bytes.length) {
    this.b = bytes;
    this.pos = pos;
    this.end = end;
  }

  check(n) {
    if (this.pos + n > this.end) throw new RangeError('DWARF: truncated section');
  }

  u8() {
    this.check(1);
    return this.b[this.pos++];
  }

  u16() {
    this.check(2);
    const v = this.b[this.pos] | (this.b[this.pos + 1] << 8);
    this.pos += 2;
    return v;
  }

  u32() {
    this.check(4);
    const b = this.b;
    const p = this.pos;
    this.pos += 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
  }

  u64() {
    const lo = this.u32();
    const hi = this.u32();
    return hi * 0x100000000 + lo;
  }

  uN(n) {
    if (n === 1) return this.u8();
    if (n === 2) return this.u16();
    if (n === 3) return this.u16() + this.u8() * 0x10000;
    if (n === 4) return this.u32();
    if (n === 8) return this.u64();
    throw new RangeError(`DWARF: unsupported size ${n}`);
  }

  uleb() {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = this.u8();
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
      if (scale > 2 ** 63) throw new RangeError('DWARF: LEB128 too long');
    }
  }

  sleb() {
    let result = 0;
    let scale = 1;
    let byte;
    do {
      byte = this.u8();
      result += (byte & 0x7f) * scale;
      scale *= 128;
      if (scale > 2 ** 70) throw new RangeError('DWARF: LEB128 too long');
    } while (byte >= 0x80);
    if (byte & 0x40) result -= scale;
    return result;
  }

  cstr() {
    const start = this.pos;
    while (this.pos < this.end && this.b[this.pos] !== 0) this.pos++;
    if (this.pos >= this.end) throw new RangeError('DWARF: unterminated string');
    const text = utf8(this.b.subarray(start, this.pos));
    this.pos++;
    return text;
  }

  skip(n) {
    this.check(n);
    this.pos += n;
  }
}

const decoder = new TextDecoder();
const utf8 = (bytes) => decoder.decode(bytes);

/** A NUL-terminated string at `offset` of a string section ('' when out of range). */
function strAt(section, offset) {
  if (!section || offset >= section.length) return '';
  let end = offset;
  while (end < section.length && section[end] !== 0) end++;
  return utf8(section.subarray(offset, end));
}

/**
 * The sections of a wasm binary: `{ codeStart, codeEnd, custom: Map(name ->
 * bytes), ranges: [{ id, name, start, end }] }` (codeStart: the offset of the
 * code section's contents, where DWARF addresses count from).
 */
export function wasmSections(bytes) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new RangeError('not a wasm binary');
  }
  const r = new Reader(bytes, 8);
  const custom = new Map();
  const ranges = [];
  let codeStart = -1;
  let codeEnd = -1;
  while (r.pos < bytes.length) {
    const start = r.pos;
    const id = r.u8();
    const size = r.uleb();
    const body = r.pos;
    r.check(size);
    const end = body + size;
    let name = null;
    if (id === 0) {
      const n = r.uleb();
      r.check(n);
      name = utf8(bytes.subarray(r.pos, r.pos + n));
      custom.set(name, bytes.subarray(r.pos + n, end));
    } else if (id === 10) {
      codeStart = body;
      codeEnd = end;
    }
    ranges.push({ id, name, start, end });
    r.pos = end;
  }
  return { codeStart, codeEnd, custom, ranges };
}

/** The wasm without the custom sections whose names `drop` accepts. */
export function withoutCustomSections(bytes, drop) {
  const parts = [bytes.subarray(0, 8)];
  for (const s of wasmSections(bytes).ranges) {
    if (s.id === 0 && drop(s.name)) continue;
    parts.push(bytes.subarray(s.start, s.end));
  }
  return concat(parts);
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The function names of a wasm's name section: index -> name. */
export function functionNames(nameSection) {
  const names = new Map();
  if (!nameSection) return names;
  const r = new Reader(nameSection);
  while (r.pos < r.end) {
    const id = r.u8();
    const size = r.uleb();
    const end = r.pos + size;
    if (id === 1) {
      const count = r.uleb();
      for (let i = 0; i < count; i++) {
        const index = r.uleb();
        const n = r.uleb();
        r.check(n);
        names.set(index, utf8(r.b.subarray(r.pos, r.pos + n)));
        r.pos += n;
      }
    }
    r.pos = end;
  }
  return names;
}

// ------------------------------------------------------------ DWARF constants
const TAG = {
  compile_unit: 0x11, subprogram: 0x2e, inlined_subroutine: 0x1d, namespace: 0x39,
  class_type: 0x02, structure_type: 0x13, union_type: 0x17, lexical_block: 0x0b,
  partial_unit: 0x3c, skeleton_unit: 0x4a,
};
const AT = {
  name: 0x03, low_pc: 0x11, high_pc: 0x12, comp_dir: 0x1b, stmt_list: 0x10, ranges: 0x55,
  abstract_origin: 0x31, specification: 0x47, call_file: 0x58, call_line: 0x59, call_column: 0x57,
  linkage_name: 0x6e, MIPS_linkage_name: 0x2007, str_offsets_base: 0x72, addr_base: 0x73,
  rnglists_base: 0x74, declaration: 0x3c,
};
const FORM = {
  addr: 0x01, block2: 0x03, block4: 0x04, data2: 0x05, data4: 0x06, data8: 0x07, string: 0x08,
  block: 0x09, block1: 0x0a, data1: 0x0b, flag: 0x0c, sdata: 0x0d, strp: 0x0e, udata: 0x0f,
  ref_addr: 0x10, ref1: 0x11, ref2: 0x12, ref4: 0x13, ref8: 0x14, ref_udata: 0x15, indirect: 0x16,
  sec_offset: 0x17, exprloc: 0x18, flag_present: 0x19, strx: 0x1a, addrx: 0x1b, ref_sup4: 0x1c,
  strp_sup: 0x1d, data16: 0x1e, line_strp: 0x1f, ref_sig8: 0x20, implicit_const: 0x21,
  loclistx: 0x22, rnglistx: 0x23, ref_sup8: 0x24, strx1: 0x25, strx2: 0x26, strx3: 0x27,
  strx4: 0x28, addrx1: 0x29, addrx2: 0x2a, addrx3: 0x2b, addrx4: 0x2c,
};
const DATA_FORMS = new Set([FORM.data1, FORM.data2, FORM.data4, FORM.data8, FORM.udata, FORM.sdata,
  FORM.implicit_const]);
const REF_FORMS = new Set([FORM.ref1, FORM.ref2, FORM.ref4, FORM.ref8, FORM.ref_udata]);

/** An address the linker gave code it dropped (or a DIE without code). */
const isTombstone = (a) => a === 0 || a >= 0xfffffffe;

// ------------------------------------------------------------ .debug_abbrev
function readAbbrevs(section, offset) {
  const table = new Map();
  const r = new Reader(section, offset);
  for (;;) {
    const code = r.uleb();
    if (code === 0) return table;
    const tag = r.uleb();
    const hasChildren = r.u8() !== 0;
    const attrs = [];
    for (;;) {
      const name = r.uleb();
      const form = r.uleb();
      if (name === 0 && form === 0) break;
      const implicit = form === FORM.implicit_const ? r.sleb() : undefined;
      attrs.push([name, form, implicit]);
    }
    table.set(code, { tag, hasChildren, attrs });
  }
}

// ------------------------------------------------------------ .debug_info
/**
 * Every DIE of every unit that matters for frames: units, subprograms,
 * inlined subroutines and the scopes that qualify names.
 */
function readUnits(sec) {
  const info = sec['.debug_info'];
  const units = [];
  if (!info) return units;
  const abbrevCache = new Map();
  const r = new Reader(info);
  while (r.pos < info.length) {
    const unitStart = r.pos;
    let length = r.u32();
    let offsetSize = 4;
    if (length === 0xffffffff) {
      length = r.u64();
      offsetSize = 8;
    }
    const unitEnd = r.pos + length;
    if (unitEnd > info.length) throw new RangeError('DWARF: unit runs past .debug_info');
    const version = r.u16();
    let unitType = 0x01;
    let abbrevOffset;
    let addrSize;
    if (version >= 5) {
      unitType = r.u8();
      addrSize = r.u8();
      abbrevOffset = r.uN(offsetSize);
      if (unitType === 0x02 || unitType === 0x06) r.skip(8 + offsetSize); // type units
      else if (unitType === 0x04 || unitType === 0x05) r.skip(8); // skeleton, split
    } else if (version >= 2) {
      abbrevOffset = r.uN(offsetSize);
      addrSize = r.u8();
    } else {
      r.pos = unitEnd;
      continue;
    }
    let abbrevs = abbrevCache.get(abbrevOffset);
    if (!abbrevs) abbrevCache.set(abbrevOffset, (abbrevs = readAbbrevs(sec['.debug_abbrev'], abbrevOffset)));
    const unit = { version, addrSize, offsetSize, dies: new Map(), root: null, unitStart };
    readDies(r, unitEnd, unit, abbrevs, sec);
    units.push(unit);
    r.pos = unitEnd;
  }
  return units;
}

function readDies(r, end, unit, abbrevs, sec) {
  const parents = [];
  const { addrSize, offsetSize, version } = unit;
  const pending = []; // strx/addrx values resolved once the unit's bases are known
  while (r.pos < end) {
    const offset = r.pos;
    const code = r.uleb();
    if (code === 0) {
      parents.pop();
      continue;
    }
    const abbrev = abbrevs.get(code);
    if (!abbrev) throw new RangeError(`DWARF: unknown abbreviation ${code}`);
    const die = { offset, tag: abbrev.tag, parent: parents.length ? parents[parents.length - 1] : null, attrs: {} };
    for (const [name, form0, implicit] of abbrev.attrs) {
      let form = form0;
      if (form === FORM.indirect) form = r.uleb();
      let value;
      switch (form) {
        case FORM.addr: value = r.uN(addrSize); break;
        case FORM.data1: case FORM.ref1: case FORM.flag: case FORM.strx1: case FORM.addrx1: value = r.u8(); break;
        case FORM.data2: case FORM.ref2: case FORM.strx2: case FORM.addrx2: value = r.u16(); break;
        case FORM.strx3: case FORM.addrx3: value = r.uN(3); break;
        case FORM.data4: case FORM.ref4: case FORM.ref_sup4: case FORM.strx4: case FORM.addrx4: value = r.u32(); break;
        case FORM.data8: case FORM.ref8: case FORM.ref_sig8: case FORM.ref_sup8: value = r.u64(); break;
        case FORM.data16: r.skip(16); value = null; break;
        case FORM.sdata: value = r.sleb(); break;
        case FORM.udata: case FORM.ref_udata: case FORM.strx: case FORM.addrx: case FORM.loclistx: case FORM.rnglistx:
          value = r.uleb(); break;
        case FORM.string: value = r.cstr(); break;
        case FORM.strp: value = strAt(sec['.debug_str'], r.uN(offsetSize)); break;
        case FORM.line_strp: value = strAt(sec['.debug_line_str'], r.uN(offsetSize)); break;
        case FORM.strp_sup: r.uN(offsetSize); value = ''; break;
        case FORM.ref_addr: value = r.uN(version <= 2 ? addrSize : offsetSize); break;
        case FORM.sec_offset: value = r.uN(offsetSize); break;
        case FORM.exprloc: case FORM.block: r.skip(r.uleb()); value = null; break;
        case FORM.block1: r.skip(r.u8()); value = null; break;
        case FORM.block2: r.skip(r.u16()); value = null; break;
        case FORM.block4: r.skip(r.u32()); value = null; break;
        case FORM.flag_present: value = 1; break;
        case FORM.implicit_const: value = implicit; break;
        default: throw new RangeError(`DWARF: unsupported form 0x${form.toString(16)}`);
      }
      if (REF_FORMS.has(form)) value += unit.unitStart; // unit-relative: made section-relative
      if (form === FORM.strx || (form >= FORM.strx1 && form <= FORM.strx4)) pending.push([die, name, 'str', value]);
      if (form === FORM.addrx || (form >= FORM.addrx1 && form <= FORM.addrx4)) pending.push([die, name, 'addr', value]);
      die.attrs[name] = value;
      if (name === AT.high_pc) die.highIsOffset = DATA_FORMS.has(form);
      if (name === AT.ranges) die.rangesIsIndex = form === FORM.rnglistx;
    }
    unit.dies.set(offset, die);
    if (unit.root === null) unit.root = die;
    if (abbrev.hasChildren) parents.push(die);
  }
  // DWARF 5 indirect strings and addresses, relative to the unit's bases
  const root = unit.root;
  for (const [die, name, kind, index] of pending) {
    if (kind === 'str') {
      const base = root?.attrs[AT.str_offsets_base] ?? 8;
      const table = sec['.debug_str_offsets'];
      const at = base + index * offsetSize;
      die.attrs[name] = table && at + offsetSize <= table.length
        ? strAt(sec['.debug_str'], new Reader(table, at).uN(offsetSize)) : '';
    } else {
      const base = root?.attrs[AT.addr_base] ?? 8;
      const table = sec['.debug_addr'];
      const at = base + index * addrSize;
      die.attrs[name] = table && at + addrSize <= table.length ? new Reader(table, at).uN(addrSize) : 0;
    }
  }
}

/** [[low, high), ...] of a DIE's code (empty when it has none). */
function dieRanges(die, unit, sec) {
  const a = die.attrs;
  if (a[AT.low_pc] !== undefined && a[AT.high_pc] !== undefined) {
    const low = a[AT.low_pc];
    const high = die.highIsOffset ? low + a[AT.high_pc] : a[AT.high_pc];
    return isTombstone(low) || high <= low ? [] : [[low, high]];
  }
  if (a[AT.ranges] === undefined) return [];
  const base = unit.root?.attrs[AT.low_pc] ?? 0;
  return unit.version >= 5 ? rnglist(die, unit, sec, base) : debugRanges(sec['.debug_ranges'], a[AT.ranges], unit.addrSize, base);
}

function debugRanges(section, offset, addrSize, base) {
  const out = [];
  if (!section) return out;
  const r = new Reader(section, offset);
  const max = addrSize === 8 ? 2 ** 64 - 1 : 0xffffffff;
  while (r.pos + 2 * addrSize <= section.length) {
    const start = r.uN(addrSize);
    const end = r.uN(addrSize);
    if (start === 0 && end === 0) break;
    if (start === max) {
      base = end;
      continue;
    }
    const low = base + start;
    const high = base + end;
    if (!isTombstone(start) && !isTombstone(low) && high > low) out.push([low, high]);
  }
  return out;
}

function rnglist(die, unit, sec, base) {
  const out = [];
  const section = sec['.debug_rnglists'];
  if (!section) return out;
  let offset = die.attrs[AT.ranges];
  if (die.rangesIsIndex) {
    const listBase = unit.root?.attrs[AT.rnglists_base] ?? 12;
    offset = listBase + new Reader(section, listBase + offset * unit.offsetSize).uN(unit.offsetSize);
  }
  const addrx = (i) => {
    const table = sec['.debug_addr'];
    const at = (unit.root?.attrs[AT.addr_base] ?? 8) + i * unit.addrSize;
    return table && at + unit.addrSize <= table.length ? new Reader(table, at).uN(unit.addrSize) : 0;
  };
  const r = new Reader(section, offset);
  const push = (low, high) => {
    if (!isTombstone(low) && high > low) out.push([low, high]);
  };
  for (;;) {
    const kind = r.u8();
    if (kind === 0) break; // end_of_list
    if (kind === 1) base = addrx(r.uleb()); // base_addressx
    else if (kind === 2) { const s = addrx(r.uleb()); push(s, addrx(r.uleb())); } // startx_endx
    else if (kind === 3) { const s = addrx(r.uleb()); push(s, s + r.uleb()); } // startx_length
    else if (kind === 4) { const s = r.uleb(); push(base + s, base + r.uleb()); } // offset_pair
    else if (kind === 5) base = r.uN(unit.addrSize); // base_address
    else if (kind === 6) { const s = r.uN(unit.addrSize); push(s, r.uN(unit.addrSize)); } // start_end
    else if (kind === 7) { const s = r.uN(unit.addrSize); push(s, s + r.uleb()); } // start_length
    else throw new RangeError(`DWARF: unknown range list entry ${kind}`);
  }
  return out;
}

// ------------------------------------------------------------ .debug_line
/**
 * One line program: its file names (index as the program numbers them ->
 * path) and its rows, as sequences of [address, file, line, column].
 */
function readLineProgram(sec, offset, compDir) {
  const section = sec['.debug_line'];
  const r = new Reader(section, offset);
  let length = r.u32();
  let offsetSize = 4;
  if (length === 0xffffffff) {
    length = r.u64();
    offsetSize = 8;
  }
  const end = r.pos + length;
  if (end > section.length) throw new RangeError('DWARF: line program runs past .debug_line');
  r.end = end;
  const version = r.u16();
  let addrSize = 4;
  if (version >= 5) {
    addrSize = r.u8();
    r.u8(); // segment selector size
  }
  const headerLength = r.uN(offsetSize);
  const programStart = r.pos + headerLength;
  const minInst = r.u8();
  if (version >= 4) r.u8(); // maximum operations per instruction (VLIW only)
  const defaultIsStmt = r.u8() !== 0;
  const lineBase = (r.u8() << 24) >> 24;
  const lineRange = r.u8();
  const opcodeBase = r.u8();
  const opLengths = [0];
  for (let i = 1; i < opcodeBase; i++) opLengths.push(r.u8());
  const dirs = [];
  const files = new Map();
  const join = (dir, name) => (name.startsWith('/') || dir === '' ? name : `${dir.replace(/\/$/, '')}/${name}`);
  if (version >= 5) {
    const readEntries = (kind) => {
      const formatCount = r.u8();
      const format = [];
      for (let i = 0; i < formatCount; i++) format.push([r.uleb(), r.uleb()]);
      const count = r.uleb();
      for (let i = 0; i < count; i++) {
        let path = '';
        let dir = 0;
        for (const [type, form] of format) {
          const v = readLineForm(r, form, offsetSize, sec);
          if (type === 1) path = v; // DW_LNCT_path
          else if (type === 2) dir = v; // DW_LNCT_directory_index
        }
        if (kind === 'dir') dirs.push(i === 0 ? path : join(dirs[0] ?? '', path));
        else files.set(i, join(dirs[dir] ?? '', path));
      }
    };
    readEntries('dir');
    readEntries('file');
  } else {
    dirs.push(compDir);
    for (;;) {
      const d = r.cstr();
      if (d === '') break;
      dirs.push(join(compDir, d));
    }
    let i = 1;
    for (;;) {
      const name = r.cstr();
      if (name === '') break;
      const dir = r.uleb();
      r.uleb();
      r.uleb();
      files.set(i++, join(dirs[dir] ?? compDir, name));
    }
  }
  r.pos = programStart;
  const sequences = [];
  let rows = [];
  let address = 0;
  let file = 1;
  let line = 1;
  let column = 0;
  let isStmt = defaultIsStmt;
  let skip = false; // a sequence of dropped code
  const reset = () => {
    address = 0;
    file = 1;
    line = 1;
    column = 0;
    isStmt = defaultIsStmt;
    skip = false;
  };
  const emit = () => {
    if (!skip) rows.push([address, file, line, column]);
  };
  while (r.pos < end) {
    const op = r.u8();
    if (op >= opcodeBase) {
      const adjusted = op - opcodeBase;
      address += Math.floor(adjusted / lineRange) * minInst;
      line += lineBase + (adjusted % lineRange);
      emit();
    } else if (op === 0) {
      const len = r.uleb();
      const next = r.pos + len;
      const ext = len > 0 ? r.u8() : 0;
      if (ext === 1) { // end_sequence
        if (!skip && rows.length > 0) sequences.push({ rows, end: address });
        rows = [];
        reset();
      } else if (ext === 2) { // set_address
        address = r.uN(Math.min(addrSize, len - 1));
        skip = isTombstone(address);
      } else if (ext === 3) { // define_file (DWARF <= 4)
        const name = r.cstr();
        const dir = r.uleb();
        files.set(files.size + 1, join(dirs[dir] ?? compDir, name));
      }
      r.pos = next;
    } else if (op === 1) emit(); // copy
    else if (op === 2) address += r.uleb() * minInst; // advance_pc
    else if (op === 3) line += r.sleb(); // advance_line
    else if (op === 4) file = r.uleb(); // set_file
    else if (op === 5) column = r.uleb(); // set_column
    else if (op === 6) isStmt = !isStmt; // negate_stmt
    else if (op === 8) address += Math.floor((255 - opcodeBase) / lineRange) * minInst; // const_add_pc
    else if (op === 9) address += r.u16(); // fixed_advance_pc
    else for (let i = 0; i < opLengths[op]; i++) r.uleb(); // set_basic_block, prologue_end, isa, ...
  }
  return { files, sequences, version };
}

function readLineForm(r, form, offsetSize, sec) {
  switch (form) {
    case FORM.string: return r.cstr();
    case FORM.line_strp: return strAt(sec['.debug_line_str'], r.uN(offsetSize));
    case FORM.strp: return strAt(sec['.debug_str'], r.uN(offsetSize));
    case FORM.udata: return r.uleb();
    case FORM.data1: return r.u8();
    case FORM.data2: return r.u16();
    case FORM.data4: return r.u32();
    case FORM.data8: return r.u64();
    case FORM.data16: r.skip(16); return null;
    case FORM.block: r.skip(r.uleb()); return null;
    default: throw new RangeError(`DWARF: unsupported line header form 0x${form.toString(16)}`);
  }
}

// ------------------------------------------------------------ names
/**
 * The name a subprogram or inlined subroutine DIE stands for, qualified by
 * its scopes (C++): namespaces, classes, and for a local class (a lambda)
 * the function it is in.
 */
function qualifiedName(die, dies, depth = 0) {
  for (let d = die, hops = 0; d && hops < 16; hops++) {
    const next = dies.get(d.attrs[AT.abstract_origin] ?? d.attrs[AT.specification]);
    if (d.attrs[AT.name] !== undefined && typeof d.attrs[AT.name] === 'string') {
      const own = d.attrs[AT.name];
      const parts = [own];
      for (let p = d.parent; p; p = p.parent) {
        if (p.tag === TAG.namespace) {
          parts.unshift(p.attrs[AT.name] ?? '(anonymous namespace)');
        } else if (p.tag === TAG.class_type || p.tag === TAG.structure_type || p.tag === TAG.union_type) {
          parts.unshift(p.attrs[AT.name] ?? (own === 'operator()' ? '(lambda)' : '(anonymous class)'));
        } else if (p.tag === TAG.subprogram) {
          // a local class's method: qualified by the function around it
          const outer = depth < 4 ? qualifiedName(p, dies, depth + 1) : null;
          if (outer !== null) parts.unshift(outer);
          break;
        }
      }
      return parts.join('::');
    }
    if (!next || next === d) break;
    d = next;
  }
  return null;
}

// ------------------------------------------------------------ the table
/**
 * The line table of a wasm linked with DWARF, or null when it has no
 * `.debug_line`. `functionName(index)` is not needed: functions without a
 * DWARF name are named from the name section when read.
 * @param {Uint8Array} bytes the linked wasm
 * @param {{ buildId?: Uint8Array, baseDir?: string }} [options] baseDir:
 *   paths under it are written relative to it
 */
export function lineTableFromDwarf(bytes, options = {}) {
  const { codeStart, custom } = wasmSections(bytes);
  if (!custom.has('.debug_line') || codeStart < 0) return null;
  const sec = Object.fromEntries(custom);
  const units = readUnits(sec);
  const strings = new Map();
  const stringIndex = (s) => {
    let i = strings.get(s);
    if (i === undefined) strings.set(s, (i = strings.size));
    return i;
  };
  const base = options.baseDir ? options.baseDir.replace(/\/?$/, '/') : null;
  const pathOf = (p) => normalizePath(base && p.startsWith(base) ? p.slice(base.length) : p);

  const rows = []; // [address, fileIndex + 1 (0: no line), line, column]
  const funcs = [];
  const seenPrograms = new Set();
  for (const unit of units) {
    const root = unit.root;
    if (!root || (root.tag !== TAG.compile_unit && root.tag !== TAG.partial_unit && root.tag !== TAG.skeleton_unit)) continue;
    const compDir = typeof root.attrs[AT.comp_dir] === 'string' ? root.attrs[AT.comp_dir] : '';
    let files = new Map();
    const stmt = root.attrs[AT.stmt_list];
    if (stmt !== undefined && sec['.debug_line']) {
      const program = readLineProgram(sec, stmt, compDir);
      files = program.files;
      if (!seenPrograms.has(stmt)) {
        seenPrograms.add(stmt);
        for (const { rows: seq, end } of program.sequences) {
          for (const [address, file, line, column] of seq) {
            const path = files.get(file);
            rows.push([address, path !== undefined && line > 0 ? stringIndex(pathOf(path)) + 1 : 0, line, column]);
          }
          rows.push([end, 0, 0, 0]);
        }
      }
    }
    const fileName = (i) => {
      const path = files.get(i);
      return path === undefined ? 0 : stringIndex(pathOf(path)) + 1;
    };
    // Subprograms with code, each with the inlined subroutines inside it (pre-order, depth).
    for (const die of unit.dies.values()) {
      if (die.tag !== TAG.subprogram) continue;
      const ranges = dieRanges(die, unit, sec);
      if (ranges.length === 0) continue;
      const name = qualifiedName(die, unit.dies) ?? qualifiedNameAcross(die, units);
      const scopes = [];
      collectInlined(die, 1, unit, sec, units, scopes, fileName, stringIndex);
      for (const [low, high] of ranges) {
        funcs.push({ low, high, name: name === null ? 0 : stringIndex(name) + 1, scopes: scopes.filter((s) => s.ranges.some(([l, h]) => l < high && h > low)) });
      }
    }
  }
  return encodeTable({ codeStart, buildId: options.buildId, strings: [...strings.keys()], rows, funcs });
}

function normalizePath(p) {
  const abs = p.startsWith('/');
  const out = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(part);
  }
  return (abs ? '/' : '') + out.join('/');
}

/** A name through a reference into another unit (DW_FORM_ref_addr). */
function qualifiedNameAcross(die, units) {
  const target = die.attrs[AT.abstract_origin] ?? die.attrs[AT.specification];
  if (target === undefined) return null;
  for (const u of units) {
    const d = u.dies.get(target);
    if (d) return qualifiedName(d, u.dies);
  }
  return null;
}

/** Children of DIEs, built on first use: parent offset -> children in order. */
const childrenCache = new WeakMap();
function childrenOf(die, unit) {
  let map = childrenCache.get(unit);
  if (!map) {
    map = new Map();
    for (const d of unit.dies.values()) {
      if (d.parent) {
        let list = map.get(d.parent);
        if (!list) map.set(d.parent, (list = []));
        list.push(d);
      }
    }
    childrenCache.set(unit, map);
  }
  return map.get(die) ?? [];
}

function collectInlined(parent, depth, unit, sec, units, out, fileName, stringIndex) {
  for (const child of childrenOf(parent, unit)) {
    if (child.tag === TAG.inlined_subroutine) {
      const ranges = dieRanges(child, unit, sec);
      if (ranges.length === 0) continue;
      const name = qualifiedName(child, unit.dies) ?? qualifiedNameAcross(child, units);
      out.push({
        depth,
        name: name === null ? 0 : stringIndex(name) + 1,
        callFile: child.attrs[AT.call_file] !== undefined ? fileName(child.attrs[AT.call_file]) : 0,
        callLine: child.attrs[AT.call_line] ?? 0,
        callColumn: child.attrs[AT.call_column] ?? 0,
        ranges,
      });
      collectInlined(child, depth + 1, unit, sec, units, out, fileName, stringIndex);
    } else if (child.tag === TAG.lexical_block) {
      collectInlined(child, depth, unit, sec, units, out, fileName, stringIndex);
    }
  }
}

// ------------------------------------------------------------ encoding
class Writer {
  constructor() {
    this.parts = [];
    this.buf = new Uint8Array(4096);
    this.n = 0;
  }

  byte(b) {
    if (this.n === this.buf.length) {
      this.parts.push(this.buf);
      this.buf = new Uint8Array(this.buf.length * 2);
      this.n = 0;
    }
    this.buf[this.n++] = b;
  }

  uleb(v) {
    if (!(v >= 0) || !Number.isSafeInteger(v)) throw new RangeError(`line table: bad value ${v}`);
    do {
      const low = v % 128;
      v = Math.floor(v / 128);
      this.byte(v > 0 ? low | 0x80 : low);
    } while (v > 0);
  }

  zigzag(v) {
    this.uleb(v >= 0 ? 2 * v : -2 * v - 1);
  }

  bytes(b) {
    for (const x of b) this.byte(x);
  }

  done() {
    return concat([...this.parts, this.buf.subarray(0, this.n)]);
  }
}

const encoder = new TextEncoder();

/**
 * The table's bytes from its parts: strings, rows [address, file (string
 * index + 1, 0: none), line, column], functions { low, high, name, scopes:
 * [{ depth, name, callFile, callLine, callColumn, ranges: [[low, high]] }] }
 * (names and files as string indices + 1). lineTableFromDwarf's last step;
 * tests make tables of their own with it.
 */
export function encodeTable({ codeStart, buildId, strings, rows, funcs }) {
  const w = new Writer();
  w.bytes(MAGIC);
  w.uleb(codeStart);
  const id = buildId ?? new Uint8Array(0);
  w.uleb(id.length);
  w.bytes(id);
  w.uleb(strings.length);
  for (const s of strings) {
    const b = encoder.encode(s);
    w.uleb(b.length);
    w.bytes(b);
  }
  // Rows sorted by address; a later row at the same address wins (the
  // last row LLVM emits for an address is the one that describes it), and
  // repeats of the row before are dropped.
  rows.sort((a, b) => a[0] - b[0]);
  const kept = [];
  for (const row of rows) {
    const last = kept[kept.length - 1];
    if (last && last[0] === row[0]) {
      if (row[1] !== 0 || last[1] === 0) kept[kept.length - 1] = row;
      continue;
    }
    if (last && last[1] === row[1] && last[2] === row[2] && last[3] === row[3]) continue;
    kept.push(row);
  }
  w.uleb(kept.length);
  let address = 0;
  let line = 0;
  let lastFile = -1;
  for (const [a, file, l, column] of kept) {
    // the line step, doubled, with the low bit set when the file changes
    // (rarely: most rows stay in their file)
    const step = l - line;
    const zig = step >= 0 ? 2 * step : -2 * step - 1;
    w.uleb(a - address);
    w.uleb(2 * zig + (file !== lastFile ? 1 : 0));
    if (file !== lastFile) w.uleb(file);
    w.uleb(column);
    address = a;
    line = l;
    lastFile = file;
  }
  funcs.sort((a, b) => a.low - b.low || b.high - a.high);
  w.uleb(funcs.length);
  let low = 0;
  for (const f of funcs) {
    w.uleb(f.low - low);
    w.uleb(f.high - f.low);
    w.uleb(f.name);
    w.uleb(f.scopes.length);
    for (const s of f.scopes) {
      w.uleb(s.depth);
      w.uleb(s.name);
      w.uleb(s.callFile);
      w.uleb(s.callLine);
      w.uleb(s.callColumn);
      w.uleb(s.ranges.length);
      for (const [l, h] of s.ranges) {
        w.zigzag(l - f.low);
        w.uleb(h - l);
      }
    }
    low = f.low;
  }
  return w.done();
}

/** Appends a custom section (id 0) holding `payload`. */
export function withCustomSection(wasm, name, payload) {
  const leb = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      n >>>= 7;
    } while (n > 0);
    return out;
  };
  const nameBytes = encoder.encode(name);
  const bodyLength = leb(nameBytes.length).length + nameBytes.length + payload.length;
  return concat([wasm, Uint8Array.from([0, ...leb(bodyLength), ...leb(nameBytes.length)]), nameBytes, payload]);
}

/** Whether a custom section is DWARF (or the external DWARF reference emcc writes). */
export const isDwarfSection = (name) => name.startsWith('.debug_') || name === 'external_debug_info';
