// Views over the instance's memory and UTF-8 text in and out of it.
// Views go stale when memory grows (the old buffer is detached, and a view
// over a detached buffer has length 0): `refresh()` rebuilds them, and callers
// re-read `heap.u8`/`heap.i32`/... after every wasm call that may allocate.

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Short strings are encoded by hand: cheaper than a subarray + encodeInto. */
const SHORT_STRING = 32;

/** A reusable plain buffer of at least n bytes (see Heap#shared). */
let scratch = new Uint8Array(256);
const scratchOf = (n) => (scratch.length >= n ? scratch : (scratch = new Uint8Array(Math.max(n, 2 * scratch.length))));

export class Heap {
  constructor(memory) {
    this.memory = memory;
    // The threaded core's memory is shared: browsers refuse shared views to
    // TextDecoder and encodeInto, so long strings go through a plain copy.
    this.shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    this.refresh();
  }

  refresh() {
    const b = this.memory.buffer;
    this.u8 = new Uint8Array(b);
    this.i32 = new Int32Array(b);
    this.u32 = new Uint32Array(b);
    this.f64 = new Float64Array(b);
    this.dv = new DataView(b);
  }

  /**
   * Writes `s` as UTF-8 at ptr (room for 3 * s.length bytes needed); lone
   * surrogates become U+FFFD, as TextEncoder does. Returns the byte count.
   */
  writeUtf8(s, ptr) {
    const n = s.length;
    if (n > SHORT_STRING) {
      if (!this.shared) return encoder.encodeInto(s, this.u8.subarray(ptr, ptr + 3 * n)).written;
      const copy = scratchOf(3 * n);
      const { written } = encoder.encodeInto(s, copy);
      this.u8.set(copy.subarray(0, written), ptr);
      return written;
    }
    const u8 = this.u8;
    let p = ptr;
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        u8[p++] = c;
      } else if (c < 0x800) {
        u8[p++] = 0xc0 | (c >> 6);
        u8[p++] = 0x80 | (c & 63);
      } else {
        if (c >= 0xd800 && c < 0xe000) {
          const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
          if (c < 0xdc00 && d >= 0xdc00 && d < 0xe000) {
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i++;
            u8[p++] = 0xf0 | (c >> 18);
            u8[p++] = 0x80 | ((c >> 12) & 63);
            u8[p++] = 0x80 | ((c >> 6) & 63);
            u8[p++] = 0x80 | (c & 63);
            continue;
          }
          c = 0xfffd;
        }
        u8[p++] = 0xe0 | (c >> 12);
        u8[p++] = 0x80 | ((c >> 6) & 63);
        u8[p++] = 0x80 | (c & 63);
      }
    }
    return p - ptr;
  }

  /** UTF-8 bytes at [ptr, ptr + len) as a string (bad bytes become U+FFFD). */
  readUtf8(ptr, len) {
    const u8 = this.u8;
    if (len <= 16) {
      let s = '';
      for (let i = 0; i < len; i++) {
        const c = u8[ptr + i];
        if (c >= 0x80) return this.decode(ptr, len);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return this.decode(ptr, len);
  }

  decode(ptr, len) {
    if (!this.shared) return decoder.decode(this.u8.subarray(ptr, ptr + len));
    const copy = scratchOf(len);
    copy.set(this.u8.subarray(ptr, ptr + len));
    return decoder.decode(copy.subarray(0, len));
  }

  /** A NUL-terminated string at ptr. */
  readCString(ptr) {
    return this.readUtf8(ptr, this.u8.indexOf(0, ptr) - ptr);
  }

  /** A copy of [ptr, ptr + len). */
  copyBytes(ptr, len) {
    return this.u8.slice(ptr, ptr + len);
  }
}
