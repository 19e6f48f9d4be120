// The TVM RPC endpoint of a runtime over a library TVM compiled: such a
// library carries TVM's own RPC server (`rpc.CreateEventDrivenServer`, the
// one TVM's web runtime serves), so the connection is served by it, after
// the handshake webffi's engine does too. That server reaches every global
// the library registers, and webffi cannot narrow it: serving one needs
// `trustPeers: true` from the owner. A session that asks for
// `rpc.WasmSession` (as TVM's own web flow does) gets the library's
// asynchronous local session, whose WebGPU waits this file answers.
import { makeError } from '../errors.js';
import { RPC_MAGIC, RPC_SUCCESS, RPC_MISMATCH, utf8 } from './wire.js';
import { exceptionPacket } from './chain.js';

const MAX_KEY = 4096;
// TVM's codes for an asynchronous server function's callback.
const RETURN = 4;
const EXCEPTION = 5;
// ServerAsyncIOEventHandler's event: readable and writable.
const READ_WRITE = 3;

const registered = new WeakSet(); // runtimes whose async server functions are in place

/** The functions TVM's asynchronous local session looks up (as `__async.` + name), once per runtime. */
function registerAsyncServerFunctions(rt) {
  if (registered.has(rt)) return;
  registered.add(rt);
  const asyncServer = (name, body) => rt.registerGlobal(`__async.${name}`, (...args) => {
    const callback = args.pop();
    Promise.resolve().then(() => body(...args)).then(
      (value) => callback(RETURN, value ?? null),
      (e) => callback(EXCEPTION, String(e?.message ?? e)),
    ).finally(() => callback.dispose?.());
  }, { override: true });
  asyncServer('wasm.WebGPUWaitForTasks', () => rt.backends.get('webgpu')?.sync());
  let session = null;
  rt.registerGlobal('rpc.WasmSession', () => (session ??= rt.getGlobal('wasm.LocalSession')()), { override: true });
}

/** Refuses, before anything listens, to serve a library without `trustPeers`. */
export function checkServable(rt, options = {}) {
  if (rt.coreKind === 'tvm-ffi' && options.trustPeers !== true) {
    throw makeError('ValueError', NOT_TRUSTED);
  }
}

const NOT_TRUSTED =
  'RPC: this runtime runs a library TVM compiled, which is served by its own RPC server: that server reaches every ' +
  'global the library registers, and `expose` cannot narrow it; pass `trustPeers: true` to serve it to peers you trust';

/**
 * @param {object} rt a runtime over a tvm-ffi library
 * @param {object} options { key, send(bytes), onClose(error), trustPeers }
 */
export function createLibraryEndpoint(rt, options) {
  checkServable(rt, options);
  registerAsyncServerFunctions(rt);
  const serverKey = `server:${options.key ?? 'webffi'}`;
  let opening = new Uint8Array(0);
  let handler = null;
  let closed = false;

  const finish = (error) => {
    if (closed) return;
    closed = true;
    handler?.dispose();
    handler = null;
    options.onClose?.(error);
  };
  const word = (code, key = '') => {
    const k = utf8.encode(key);
    const out = new Uint8Array(8 + k.length);
    const v = new DataView(out.buffer);
    v.setInt32(0, code, true);
    v.setInt32(4, k.length, true);
    out.set(k, 8);
    return out;
  };

  /** The client's opening (magic, key length, key): the bytes after it, or null while it is incomplete. */
  function handshake(bytes) {
    const all = new Uint8Array(opening.length + bytes.length);
    all.set(opening);
    all.set(bytes, opening.length);
    opening = all;
    if (all.length < 8) return null;
    const v = new DataView(all.buffer);
    if (v.getInt32(0, true) !== RPC_MAGIC) throw makeError('RPCError', 'RPC handshake: not TVM RPC\'s magic (not a TVM RPC client?)');
    const n = v.getInt32(4, true);
    if (n <= 0 || n > MAX_KEY) throw makeError('RPCError', `RPC handshake: key length ${n} is outside [1, ${MAX_KEY}]`);
    if (all.length < 8 + n) return null;
    const key = new TextDecoder().decode(all.subarray(8, 8 + n)).split(' ')[0];
    if (key !== `client:${serverKey.slice('server:'.length)}`) {
      options.send(word(RPC_MISMATCH));
      throw makeError('RPCError', `RPC handshake: the client's key '${key.slice(0, 200)}' does not match 'client:${serverKey.slice(7)}'`);
    }
    options.send(word(RPC_SUCCESS, serverKey));
    handler = rt.scope(() => rt.getGlobal('rpc.CreateEventDrivenServer')(
      (bytes) => {
        options.send(bytes);
        return bytes.length;
      },
      'webffi', serverKey));
    return all.subarray(8 + n);
  }

  return {
    feed(bytes) {
      if (closed) throw makeError('RPCError', 'RPC: the session is closed');
      let serving = false;
      try {
        const rest = handler ? bytes : handshake(bytes);
        serving = true;
        if (rest && rest.length && handler(rest, READ_WRITE) === 0) finish();
      } catch (e) {
        // The library's server ends in abort() on an error of its own
        // (built without C++ exception catching): its session state is
        // lost, so the client gets the error and the connection ends.
        if (serving && e?.kind) options.send(exceptionPacket(e.kind, `${e.message} (the connection ends: the library cannot recover from it)`));
        const err = e?.kind === 'RPCError' ? e : makeError('RPCError', `RPC: closing the connection: ${e?.message ?? e}`);
        finish(err);
        throw err;
      }
      return closed ? 'closed' : 'open';
    },
    close() {
      finish();
    },
    get closed() {
      return closed;
    },
    /** The library's server keeps its own handle table. */
    get handleCount() {
      return 0;
    },
  };
}
