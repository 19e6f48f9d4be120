// Incoming bytes of a TVM RPC connection, as the chunks a transport hands
// over: whole packets (u64 length, then the body) without copying one that
// lies in one chunk, large bodies gathered as they arrive, and plain
// fixed-size reads (take) for the handshake and the tracker's messages.

const STREAM_BODY = 64 * 1024; // packet bodies at least this large are gathered as they arrive
const DIRECT_READ = 16 * 1024; // what is left of a body for a read straight into its memory

/** Whether bytes c were read straight to position at of dst (a readTarget). */
function inPlace(c, dst, at) {
  return c.buffer === dst.buffer && c.byteOffset === dst.byteOffset + at;
}

/** Collects incoming chunks into whole packets without copying a packet that lies in one chunk. */
export class PacketReader {
  #chunks = [];
  #size = 0;

  push(chunk) {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  get size() {
    return this.#size;
  }

  /**
   * Chunks kept for later are copied when they lie in `buffer` (a
   * transport's scratch memory, which its next read overwrites).
   */
  own(buffer) {
    const c = this.#chunks;
    for (let i = 0; i < c.length; i++) if (c[i].buffer === buffer) c[i] = c[i].slice();
  }

  /**
   * Where the next bytes may be read straight to, so that they need no copy:
   * the rest of a large body being gathered (in the sink's memory when it
   * has one), or null (no body, chunks queued, or too little left).
   */
  readTarget() {
    if (this.#body === null || this.#chunks.length !== 0) return null;
    const at = this.#bodyAt;
    const len = this.#bodyLength;
    if (len - at < DIRECT_READ) return null;
    const into = this.#into;
    if (into === null) return this.#body.subarray(at, len);
    return at < 4 || into.byteLength === 0 ? null : into.subarray(at - 4, len - 4);
  }

  /** Whether the last take() copied into memory of its own (else it is a view of a chunk). */
  copied = false;

  /**
   * The next n bytes (a view when they lie in the first chunk), consumed. A
   * copy starts 4 bytes into its buffer, so that a packet body's payload
   * after its code is 8-byte aligned for typed arrays over it.
   */
  take(n) {
    const first = this.#chunks[0];
    this.copied = false;
    if (first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      this.#size -= n;
      return out;
    }
    const out = new Uint8Array(new ArrayBuffer(n + 4), 4, n);
    this.copied = true;
    let at = 0;
    while (at < n) {
      const c = this.#chunks[0];
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (k === c.length) this.#chunks.shift();
      else this.#chunks[0] = c.subarray(k);
    }
    this.#size -= n;
    return out;
  }

  #body = null; // a large packet body being gathered as it arrives
  #bodyAt = 0;
  #into = null; // where that body's payload (after its 4-byte code) goes, when a caller gave one

  /** Whether the last body's payload went to the sink's memory (the body then holds the code alone). */
  sunk = false;

  /**
   * The next whole packet body (after its u64 length), consumed; null until
   * it has all arrived. check(len) vets the length before anything is kept
   * for it. A large body is gathered as it arrives (allocated once, each
   * chunk copied in and dropped as it comes), so its one copy overlaps the
   * transfer instead of following it; sink(n, code), when given, may name
   * the memory (a Uint8Array of n bytes) its payload of n bytes goes to, so that
   * a copy lands in the caller's array with no buffer between.
   */
  nextBody(check, sink) {
    if (this.#body === null) {
      this.sunk = false;
      if (this.#size < 8) return null;
      const len = this.peekU64();
      check(len);
      if (this.#size >= 8 + len) {
        this.take(8);
        return this.take(len);
      }
      if (len < STREAM_BODY) return null;
      this.take(8);
      // the sink is asked once the code is known (a copy's ack, not an exception)
      this.#into = sink && this.#size >= 4 ? sink(len - 4, this.#peekI32()) ?? null : null;
      this.#body = this.#into ? new Uint8Array(4) : new Uint8Array(new ArrayBuffer(len + 4), 4, len);
      this.#bodyAt = 0;
      this.#bodyLength = len;
    }
    const len = this.#bodyLength;
    while (this.#bodyAt < len && this.#chunks.length) {
      const c = this.#chunks[0];
      const k = Math.min(c.length, len - this.#bodyAt);
      this.#place(k === c.length ? c : c.subarray(0, k), this.#bodyAt);
      this.#bodyAt += k;
      this.#size -= k;
      if (k === c.length) this.#chunks.shift();
      else this.#chunks[0] = c.subarray(k);
    }
    if (this.#bodyAt < len) return null;
    const body = this.#body;
    this.sunk = this.#into !== null;
    this.#body = null;
    this.#into = null;
    this.copied = true;
    return body;
  }

  #bodyLength = 0;

  /** Writes bytes c at position at of the body being gathered (the payload to the sink, when there is one). */
  #place(c, at) {
    let into = this.#into;
    if (into !== null && into.byteLength === 0 && this.#bodyLength > 4) {
      // the caller's memory went away mid-copy (its buffer transferred, or a
      // wasm memory grew): the rest is gathered here, so the framing holds
      // and only that caller's copy fails (its memory is gone)
      const body = new Uint8Array(new ArrayBuffer(this.#bodyLength + 4), 4, this.#bodyLength);
      body.set(this.#body.subarray(0, Math.min(at, 4)));
      this.#body = body;
      this.#into = into = null;
    }
    if (into === null) {
      if (!inPlace(c, this.#body, at)) this.#body.set(c, at);
      return;
    }
    let i = 0;
    for (; at + i < 4 && i < c.length; i++) this.#body[at + i] = c[i];
    if (i < c.length) {
      const rest = i === 0 ? c : c.subarray(i);
      if (!inPlace(rest, into, at + i - 4)) into.set(rest, at + i - 4);
    }
  }

  #peekI32() {
    const b = this.#chunks[0].length >= 4 ? this.#chunks[0] : this.#peek(4);
    return new DataView(b.buffer, b.byteOffset, 4).getInt32(0, true);
  }

  peekU64() {
    const head = this.#size >= 8 && this.#chunks[0].length >= 8 ? this.#chunks[0] : null;
    const b = head ?? this.#peek(8);
    const v = new DataView(b.buffer, b.byteOffset, 8);
    return v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32;
  }

  #peek(n) {
    const out = new Uint8Array(n);
    let at = 0;
    for (const c of this.#chunks) {
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (at === n) break;
    }
    return out;
  }
}
