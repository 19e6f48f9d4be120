// Byte streams the RPC layers run over: a TCP socket (Node) or a WebSocket
// (browsers, Node with a WebSocket class). Each is
//   { write(bytes, release?) -> Promise | undefined (a promise while the peer
//     is slow; release(), when given, is called once the transport no longer
//     reads bytes, so their memory can be reused),
//     onData(fn), onClose(fn(error?)), close(), closed }
// with chunked sends and backpressure: write() resolves once the bytes are
// handed to the socket, and a caller awaiting it never queues unboundedly.
// TCP adds writeView (bytes sent where they lie, with no copy) and, made
// with `direct`, readInto (reads straight into the memory the reader names).
import { makeError } from '../errors.js';

/** Node's built-in module, or null in a browser (no import of node: there). */
export function nodeBuiltin(name) {
  return globalThis.process?.getBuiltinModule?.(name) ?? null;
}

const WS_CHUNK = 1 << 20; // bytes per WebSocket message
const WS_HIGH_WATER = 8 << 20; // bufferedAmount above which sends wait

function listeners() {
  const data = [];
  const close = [];
  let closed = false;
  return {
    data, close,
    get closed() { return closed; },
    // listeners added while a chunk is delivered get the next chunk, not this one
    emitData(u8) {
      const n = data.length;
      for (let i = 0; i < n; i++) data[i](u8);
    },
    emitClose(error) {
      if (closed) return;
      closed = true;
      for (const fn of close) fn(error);
    },
  };
}

const READ_CHUNK = 64 * 1024; // bytes per read when no target is set

// A send handed to the OS keeps writing from the view's address after a
// wasm memory grows: safe only where V8 grows memory in place, i.e. where it
// reserves the whole 4 GiB range up front (64-bit hosts); elsewhere copy.
const GROWS_IN_PLACE = /64$/.test(globalThis.process?.arch ?? '');

/**
 * Reads of a socket made with `onread` (Node): each read goes to the
 * memory its reader names (readInto), so a large reply lands where it
 * belongs with no copy; other reads go to one reused scratch buffer (the
 * chunks handed over are then valid during the call only: `borrowed`), or,
 * with no reader, to a new buffer each.
 */
function directReads() {
  const scratch = new Uint8Array(READ_CHUNK);
  const r = {
    target: null, // () => Uint8Array | null
    deliver: null,
    onread: {
      buffer: () => (r.target === null ? new Uint8Array(READ_CHUNK) : r.target() ?? scratch),
      callback: (n, buf) => {
        // memory detached since it was named (transferred, a wasm memory
        // grown): those bytes are gone; zeros keep the framing, and the
        // reader fails that copy alone
        r.deliver?.(buf.byteLength === 0 ? new Uint8Array(n) : buf.subarray(0, n));
      },
    },
  };
  return r;
}

/** A Node net.Socket as a transport (reads: directReads() when made with its onread). */
export function socketTransport(socket, reads = null) {
  const l = listeners();
  socket.setNoDelay?.(true);
  if (reads) reads.deliver = (u8) => l.emitData(u8);
  socket.on('data', (chunk) => {
    const u8 = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    l.emitData(u8);
  });
  socket.on('error', (e) => l.emitClose(makeError('RPCError', `RPC connection error: ${e.message}`)));
  socket.on('close', () => l.emitClose());
  let drain = null;
  // a wait for room to write ends when the socket drains, or closes (a writer
  // awaiting it, such as a client's close(), never waits for a peer that left)
  const drained = () => new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      drain = null;
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
  return {
    write(bytes, release) {
      if (l.closed) throw makeError('RPCError', 'RPC: the connection is closed');
      // the callback runs once the bytes are handed to the OS (or the write failed)
      if (release ? socket.write(bytes, () => release()) : socket.write(bytes)) return undefined;
      drain ??= drained();
      return drain;
    },
    /**
     * Sends a view of memory that may be detached or replaced later (wasm
     * memory, which grows): only when the socket takes it at once, handing
     * its address to the OS write (a write queued in the stream would find
     * the view empty once detached). false: not taken (copy it and write()
     * the copy); else undefined, or a promise while the peer is slow, as
     * write(); release() is called once the socket no longer reads it (sent,
     * failed, or the socket destroyed).
     */
    writeView(bytes, release) {
      if (!GROWS_IN_PLACE || l.closed || socket.destroyed || socket.connecting || socket.writableLength !== 0 ||
          socket.writableCorked !== 0 || socket.writableEnded) {
        return false;
      }
      if (socket.write(bytes, () => release())) return undefined;
      drain ??= drained();
      return drain;
    },
    /** Stops reading until resume() (backpressure on the receiving side). */
    pause() { socket.pause(); },
    resume() { socket.resume(); },
    onData(fn) { l.data.push(fn); },
    onClose(fn) { l.close.push(fn); },
    /**
     * (made with directReads only) fn() names the memory the next bytes go
     * to (null: a scratch buffer, reused: chunks are then borrowed); null
     * fn: every chunk is a buffer of its own again.
     */
    readInto: reads ? (fn) => { reads.target = fn; } : undefined,
    /** Whether chunks handed to onData are valid during the call only. */
    get borrowed() { return reads !== null && reads.target !== null; },
    close() {
      socket.end();
      socket.destroySoon?.();
    },
    destroy() { socket.destroy(); },
    get closed() { return l.closed; },
  };
}

/**
 * Opens a TCP connection (Node): a transport once connected; `direct`: its
 * reads go where its reader says (readInto).
 */
export function connectTCP(host, port, { direct = false } = {}) {
  const net = nodeBuiltin('node:net');
  if (!net) throw makeError('RPCError', 'RPC: TCP needs Node (node:net); in a browser connect through a proxy with ws://');
  return new Promise((resolve, reject) => {
    const reads = direct ? directReads() : null;
    const socket = net.connect(reads ? { host, port, onread: reads.onread } : { host, port });
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(socketTransport(socket, reads));
    });
    socket.once('error', (e) => reject(makeError('RPCError', `RPC: cannot connect to ${host}:${port}: ${e.message}`)));
  });
}

/**
 * Opens a WebSocket (the global WebSocket, or options.WebSocket: a class
 * with the browser's API, such as the `ws` package's): a transport once open.
 */
export function connectWebSocket(url, options = {}) {
  const WS = options.WebSocket ?? globalThis.WebSocket;
  if (typeof WS !== 'function') {
    throw makeError('RPCError', 'RPC: no WebSocket class here (Node 20 has none without a flag): pass options.WebSocket, e.g. the `ws` package\'s');
  }
  return new Promise((resolve, reject) => {
    let ws;
    try {
      ws = new WS(url);
    } catch (e) {
      reject(makeError('RPCError', `RPC: cannot open ${url}: ${e.message}`));
      return;
    }
    ws.binaryType = 'arraybuffer';
    const failed = () => reject(makeError('RPCError', `RPC: cannot open ${url}`));
    ws.addEventListener('error', failed, { once: true });
    ws.addEventListener('open', () => {
      ws.removeEventListener('error', failed);
      resolve(webSocketTransport(ws));
    }, { once: true });
  });
}

/** An open WebSocket as a transport: messages are byte chunks, in order. */
export function webSocketTransport(ws) {
  const l = listeners();
  ws.binaryType = 'arraybuffer';
  ws.addEventListener('message', (ev) => {
    const d = ev.data;
    const u8 = d instanceof ArrayBuffer ? new Uint8Array(d) : ArrayBuffer.isView(d)
      ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : null;
    if (u8 === null) {
      l.emitClose(makeError('RPCError', 'RPC: a text WebSocket message (the protocol is binary)'));
      ws.close();
      return;
    }
    l.emitData(u8);
  });
  ws.addEventListener('close', () => l.emitClose());
  ws.addEventListener('error', () => l.emitClose(makeError('RPCError', 'RPC: WebSocket error')));
  let queue = Promise.resolve();
  let waiting = 0;
  const sendNow = (bytes) => {
    for (let at = 0; at < bytes.length; at += WS_CHUNK) {
      ws.send(bytes.subarray(at, Math.min(bytes.length, at + WS_CHUNK)));
    }
  };
  const whenDrained = () => new Promise((resolve) => {
    const poll = () => (ws.bufferedAmount <= WS_HIGH_WATER || l.closed ? resolve() : setTimeout(poll, 2));
    poll();
  });
  return {
    write(bytes) {
      if (l.closed) throw makeError('RPCError', 'RPC: the connection is closed');
      if (waiting === 0 && ws.bufferedAmount + bytes.length <= WS_HIGH_WATER) {
        sendNow(bytes);
        return undefined;
      }
      // slow peer: send in order as the buffer drains (a copy: the caller may reuse bytes)
      const copy = bytes.slice();
      waiting++;
      queue = queue.then(async () => {
        for (let at = 0; at < copy.length && !l.closed; at += WS_CHUNK) {
          await whenDrained();
          if (!l.closed) ws.send(copy.subarray(at, Math.min(copy.length, at + WS_CHUNK)));
        }
        waiting--;
      });
      return queue;
    },
    pause() {},
    resume() {},
    onData(fn) { l.data.push(fn); },
    onClose(fn) { l.close.push(fn); },
    close() { ws.close(); },
    destroy() { ws.close(); },
    get closed() { return l.closed; },
  };
}

/** 'host:port', 'tcp://host:port' or a ws:// / wss:// URL, opened. */
export function openTransport(target, options = {}) {
  const text = String(target);
  if (/^wss?:\/\//.test(text)) return connectWebSocket(text, options);
  const m = /^(?:tcp:\/\/)?(\[[^\]]+\]|[^:/]+):(\d+)$/.exec(text);
  if (!m) throw makeError('ValueError', `RPC: ${text} is neither host:port nor a ws:// URL`);
  return connectTCP(m[1].replace(/^\[|\]$/g, ''), Number(m[2]), { direct: options.directReads === true });
}
