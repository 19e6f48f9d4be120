// Values and errors by value, and worker sessions: named tests that run in
// Node (worker_threads, tests/node/session.test.mjs) and in Chromium (module
// Workers, tests/browser/session.test.mjs). `env` gives:
//   spawn(role): a worker running tests/support/session_worker.mjs as `role`;
//   kill(worker): terminates it; crashMessage: what a crash is reported as.
import { assert as ok, same, thrown as throws, rejected as rejects } from '../browser/harness_page.mjs';
import { BAD_PAYLOADS, BAD_CALLS, BAD_REPLIES, sharedGraph } from './peer_corpus.mjs';
import { loadTesting } from './testing_module.mjs';

/** What postMessage delivers: a real structured clone through a MessageChannel. */
function post(value, transfer = []) {
  const { port1, port2 } = new MessageChannel();
  return new Promise((resolve, reject) => {
    port2.onmessage = (e) => {
      port1.close();
      port2.close();
      resolve(e.data);
    };
    try {
      port1.postMessage(value, transfer);
    } catch (e) {
      port1.close();
      port2.close();
      reject(e);
    }
  });
}

/** What a server answers for a global it does not expose. */
const NOT_EXPOSED = (name) => `webffi session: this worker does not expose \`${name}\` (serve's expose option lists the globals a peer may call)`;

const KINDS = [
  ['RuntimeError', Error], ['ValueError', Error], ['TypeError', TypeError], ['AttributeError', Error],
  ['KeyError', Error], ['IndexError', RangeError], ['OverflowError', RangeError], ['MemoryError', Error],
  ['AssertionError', Error], ['InternalError', Error], ['RPCError', Error], ['RPCSessionTimeoutError', Error],
];

export function sessionTests(webffi, env) {
  const { encodeValue, decodeValue } = webffi;
  let rt;
  let other;
  const roundTrip = async (v, runtime = other) => decodeValue(await post(encodeValue(v)), { runtime });
  const eq = (a, b) => other.getGlobal('ffi.RecursiveEq')(a, b);
  const refusal = (v) => throws(() => encodeValue(v), 'encodeValue');
  const workers = [];
  const spawn = (role) => {
    const w = env.spawn(role);
    workers.push(w);
    return w;
  };

  return {
    async 'setup: two runtimes (values travel between them)'() {
      rt = await loadTesting(await webffi.load({ wasm: env.wasm }));
      other = await loadTesting(await webffi.load({ wasm: env.wasm }));
    },

    async 'every value type round-trips by value, into the other runtime'() {
      const g = (n) => rt.getGlobal(n);
      const Pair = rt.objectClass('testing.TestIntPair');
      const cases = [
        ['String', 'héllo wörld, a string longer than seven bytes'],
        ['Bytes', new Uint8Array([0, 1, 2, 255])],
        ['Array', rt.toFFI([1, 'two', [3, webffi.asFloat(4)], 2n ** 60n, null, true])],
        ['List', g('ffi.List')(1, webffi.asFloat(1), 'x')],
        ['Array of int32s (sent packed)', rt.toFFI([1, -2, 2 ** 31 - 1, -(2 ** 31)])],
        ['List of int32s (sent packed)', g('ffi.List')(7, 8)],
        ['Array with an int past int32', rt.toFFI([1, 2 ** 40, -(2 ** 31) - 1])],
        ['empty Array', rt.toFFI([])],
        ['Map', rt.toFFI(new Map([['a', 1], [2, webffi.asFloat(2.0)]]))],
        ['Dict', g('ffi.Dict')('k', g('ffi.List')(1, 2))],
        ['Shape', g('ffi.Shape')(2, 3, 4)],
        ['Dict after an erase', (() => { const d = g('ffi.Dict')('a', 1, 'b', 2, 'c', 3); d.delete('b'); return d; })()],
        ['reflected object', Pair.__ffi_init__(1, 2)],
      ];
      for (const [what, v] of cases) {
        const back = await roundTrip(v);
        if (webffi.isHandle(v)) {
          same(back.typeKey, v.typeKey, `${what} type`);
          same(String(back), String(v), `${what} repr`);
          ok(eq(back, other.toFFI(decodeValue(encodeValue(v), { runtime: other }))), `${what} RecursiveEq`);
        } else {
          same(String(back), String(v), what);
          same(back.constructor, v.constructor, `${what} class`);
        }
      }
      same(String(await roundTrip(rt.dtype('float32x4'))), 'float32x4');
      ok((await roundTrip(rt.dtype('bfloat16'))).equals(rt.dtype('bfloat16')), 'DataType equals');
      ok((await roundTrip(rt.device('webgpu:1'))).equals(rt.device('webgpu:1')), 'Device equals');
      same(String(await roundTrip(rt.device('cuda:2'))), 'cuda:2');
      // Floats stay floats: 1.0 in an ffi.Array is not the int 1 on the other
      // side (ReprPrint prints both as 1, as upstream's; JSON tells them apart).
      const floats = await roundTrip(rt.toFFI([webffi.asFloat(1)]));
      same(String(floats), '(1,)');
      same(other.getGlobal('ffi.json.Stringify')(floats), '[1.0]');
      // A list nested twice, and plain JS data, stay what they were.
      const plain = await roundTrip({ a: [1, 2n ** 62n], m: new Map([[1, 'x']]), u: undefined, f: 0.5 });
      same(plain.a[1], 2n ** 62n, 'BigInt');
      same(plain.m.get(1), 'x', 'Map');
      ok('u' in plain && plain.u === undefined, 'undefined kept');
      const packed = decodeValue(await post(encodeValue(rt.toFFI([5, -6]))));
      ok(Array.isArray(packed) && packed.length === 2 && packed[0] === 5 && packed[1] === -6, 'packed ints as plain JS');
      // Without a runtime, FFI containers decode as plain JS (what toJS gives).
      const js = await roundTrip(rt.toFFI([1, new Map([['k', [2]]])]), null);
      ok(Array.isArray(js) && js[1] instanceof Map && js[1].get('k')[0] === 2, 'plain JS form');
      const entries = [['b', 2], ['a', null], ['c', -7], ['', 'x'], ['é', true]];
      same(JSON.stringify([...(await roundTrip(rt.toFFI(new Map(entries)), null))]), JSON.stringify(entries), 'Map entries in order');
      const err = throws(() => decodeValue(encodeValue(Pair.__ffi_init__(1, 2))), 'object without runtime');
      ok(/needs a webffi runtime/.test(err.message), err.message);
    },

    async 'every error kind round-trips: class, kind, message, backtrace, cause chain'() {
      class CustomError extends Error {}
      webffi.registerError('test.CustomError', CustomError);
      for (const [kind, base] of [...KINDS, ['test.CustomError', CustomError], ['NoSuchKind', Error]]) {
        const cause = new webffi.KeyError('the cause');
        const original = rtError(kind, `message of ${kind}`);
        Object.defineProperty(original, 'cause', { value: cause, configurable: true });
        const back = decodeValue(await post(encodeValue(original)));
        ok(back instanceof base, `${kind} is a ${base.name}`);
        ok(back instanceof webffi.FFIError, `${kind} is an FFIError`);
        same(back.kind, kind, 'kind');
        same(back.message, `message of ${kind}`, 'message');
        same(back.backtrace, original.backtrace, 'backtrace');
        same(String(back), `${kind}: message of ${kind}`, 'String(e)');
        // A real error object (what structured clone and Object.prototype.toString tell by its
        // internal slot), whose stack is its header: its frames are its backtrace.
        same(Object.prototype.toString.call(back), '[object Error]', 'a real Error');
        same(back.stack, `${kind}: message of ${kind}`, 'stack');
        ok(back.cause instanceof webffi.KeyError && back.cause.message === 'the cause', 'cause chain');
      }
      // An error raised in C carries its C backtrace across.
      const c = throws(() => rt.getGlobal('testing.test_raise_error')('KeyError', 'from C'), 'raise');
      const back = decodeValue(await post(encodeValue(c)));
      ok(/testing_raise_error/.test(back.backtrace), back.backtrace);
      same(back.backtrace, c.backtrace, 'backtrace');
      // Plain JS errors cross as their name.
      const js = decodeValue(await post(encodeValue(new TypeError('plain'))));
      ok(js instanceof TypeError && js.kind === 'TypeError' && js.message === 'plain', String(js));
      // Plain structured clone loses all of this (why the codec exists).
      const lost = await post(c);
      ok(!(lost instanceof webffi.FFIError) && lost.kind === undefined, 'structured clone drops kind');
    },

    async 'errors decode in a worker that never loaded the runtime'() {
      const w = spawn('decoder');
      const errors = KINDS.map(([kind]) => encodeValue(rtError(kind, `m ${kind}`)));
      const reply = await message(w, { errors });
      for (let i = 0; i < KINDS.length; i++) {
        const [kind, base] = KINDS[i];
        same(reply.checks[i], `${kind}|m ${kind}|${base.name}|true`, kind);
        const again = decodeValue(reply.errors[i]);
        same(again.kind, kind, 'and back');
        ok(again instanceof base, `${kind} back`);
      }
    },

    'live resources refuse with a DataCloneError-style TypeError naming the type'() {
      const fn = rt.getGlobal('testing.echo');
      const cases = [
        [fn, 'cannot clone `ffi.Function` object: it wraps a callable whose implementation lives in this runtime instance'],
        [rt.getGlobal('ffi.SystemLib')(), 'cannot clone `ffi.Module` object: it wraps a loaded library that lives in this runtime instance'],
        [(x) => x, 'cannot clone `function` object: a JS function runs only in the thread that made it'],
        [Symbol('s'), 'cannot clone `symbol` object: a symbol is unique to the thread that made it'],
        [new (class Opaque {})(), 'cannot clone `Opaque` object: it is not a value webffi converts (plain data, typed arrays, webffi values and errors are)'],
        [[1, fn], 'cannot clone `ffi.Function` object contained in `Array`: it wraps a callable whose implementation lives in this runtime instance'],
        [new Map([['k', fn]]), 'cannot clone `ffi.Function` object contained in `Map`: it wraps a callable whose implementation lives in this runtime instance'],
        [{ k: [fn] }, 'cannot clone `ffi.Function` object contained in `Array`: it wraps a callable whose implementation lives in this runtime instance'],
        [rt.toFFI([1, (x) => x]), 'cannot clone `ffi.Function` object contained in `ffi.Array`: it wraps a callable whose implementation lives in this runtime instance'],
        [rt.getGlobal('ffi.Dict')('f', fn), 'cannot clone `ffi.Function` object contained in `ffi.Dict`: it wraps a callable whose implementation lives in this runtime instance'],
      ];
      for (const [v, message] of cases) {
        const e = refusal(v);
        ok(e instanceof TypeError && e instanceof webffi.FFIError && e.kind === 'TypeError', String(e));
        same(e.message, message);
      }
      // Other errors propagate untouched.
      const gone = rt.toFFI([1]);
      gone.dispose();
      const e = refusal(gone);
      ok(e instanceof webffi.ValueError && /disposed `ffi.Array`/.test(e.message), e.message);
      const boom = new Error('getter');
      const e2 = refusal({ get x() { throw boom; } });
      same(e2, boom, 'a throwing getter');
      const list = rt.getGlobal('ffi.List')(1);
      list.push(list);
      const cycle = refusal(list);
      ok(cycle instanceof webffi.ValueError, String(cycle));
      same(cycle.message, 'Cycle detected during serialization: a List contains itself');
      const js = [1];
      js.push(js);
      const jsCycle = refusal(js);
      ok(jsCycle instanceof webffi.ValueError, String(jsCycle));
      same(jsCycle.message, 'Cycle detected during serialization: an Array contains itself');
      same(rt.getGlobal('testing.add_one')(1), 2, 'the runtime keeps working');
    },

    async 'postMessage of a wrapper refuses instead of delivering a meaningless handle'() {
      const arr = rt.toFFI([1, 2]);
      const e = await rejects(post(arr), 'post(ffi.Array)');
      same(e.name, 'DataCloneError');
      ok(/webffi handle lives in its runtime instance and cannot be posted; send its value with encodeValue\(\)/.test(e.message), e.message);
      const e2 = await rejects(post({ inner: rt.getGlobal('ffi.Shape')(1) }), 'post nested');
      same(e2.name, 'DataCloneError');
      const e3 = await rejects(post(rt.getGlobal('testing.echo')), 'post Function');
      same(e3.name, 'DataCloneError');
    },

    async 'a received error thrown again through C keeps kind and message, backtrace extended'() {
      const original = throws(() => rt.getGlobal('testing.test_raise_error')('ValueError', 'far away'), 'raise');
      const received = decodeValue(await post(encodeValue(original)));
      const before = received.backtrace;
      const out = throws(() => other.getGlobal('testing.apply')(() => { throw received; }), 'apply');
      same(out, received, 'the same object comes back out');
      same(out.kind, 'ValueError');
      same(out.message, 'far away');
      ok(out.backtrace.startsWith(before) && out.backtrace.length > before.length, `backtrace extended: ${out.backtrace}`);
    },

    'a value codec plugs in by type key (how CPU tensors travel), transfer on request'() {
      const key = 'testing.TestIntPair';
      const seen = [];
      webffi.registerValueCodec(key, {
        encode(h, ctx) {
          if (h.a < 0) ctx.refuse('negative pairs live on a device');
          const data = new Int32Array([h.a, h.b]);
          ctx.transfer?.push(data.buffer);
          return data;
        },
        decode(data, ctx) {
          seen.push(ctx.runtime === other);
          return ctx.runtime.objectClass(key).__ffi_init__(data[0], data[1]);
        },
      });
      try {
        const Pair = rt.objectClass(key);
        const transfer = [];
        const data = encodeValue([Pair.__ffi_init__(3, 4)], { transfer });
        same(transfer.length, 1, 'buffer listed for transfer');
        const back = decodeValue(structuredClone(data), { runtime: other })[0];
        same(String(back), 'testing.TestIntPair(a=3, b=4)');
        same(seen[0], true, 'decoder got the runtime');
        same(refusal(rt.toFFI([Pair.__ffi_init__(-1, 0)])).message,
          'cannot clone `testing.TestIntPair` object contained in `ffi.Array`: negative pairs live on a device');
      } finally {
        webffi.registerValueCodec(key, { encode: () => { throw new Error('unused'); }, decode: () => null });
      }
    },

    'CPU tensors travel by value: copied, or their buffer transferred on request'() {
      const t = rt.tensor(new Float32Array([1.5, -2, 3, 4]), { shape: [2, 2] });
      const transfer = [];
      const data = encodeValue({ t }, { transfer });
      same(transfer.length, 1, 'the data buffer listed for transfer');
      t.dispose();
      const back = decodeValue(structuredClone(data, { transfer }), { runtime: other }).t;
      same(back.typeKey, 'ffi.Tensor');
      same(back.shape.join(','), '2,2');
      same(String(back.dtype), 'float32');
      same(Array.from(back.view()).join(','), '1.5,-2,3,4');
      back.dispose();
      const plain = decodeValue(encodeValue(rt.tensor(new Int16Array([7, 8]))));
      same(plain.dtype, 'int16');
      ok(plain.data instanceof Int16Array && plain.data[1] === 8, 'without a runtime: the plain description');
    },

    async 'session: remote calls with values and errors by value'() {
      const s = await webffi.connect(spawn('server'), { timeout: 20000 });
      same(await s.call('testing.add_one', [41]), 42);
      same(await s.call('testing.add_one', [2n ** 60n]), 2n ** 60n + 1n);
      const arr = await s.call('testing.echo', [[1, 'two', new Map([['k', webffi.asFloat(1)]])]]);
      ok(Array.isArray(arr) && arr[1] === 'two' && arr[2].get('k') === 1, 'echo container as plain JS');
      const s2 = await webffi.connect(spawn('server'), { runtime: other });
      const handle = await s2.call('testing.echo', [[1, webffi.asFloat(2)]]);
      same(handle.typeKey, 'ffi.Array', 'with a runtime, results are handles');
      same(String(handle), '(1, 2)');
      same(other.getGlobal('ffi.json.Stringify')(handle), '[1,2.0]', 'the float stays a float');
      const addOne = s.getGlobal('testing.add_one');
      same(await addOne(1), 2);
      const e = await rejects(s.call('testing.test_raise_error', ['IndexError', 'remote oops']), 'raise');
      ok(e instanceof RangeError && e instanceof webffi.IndexError, String(e));
      same(e.kind, 'IndexError');
      same(e.message, 'remote oops');
      ok(/^ {2}File "\[remote\] .*in webffi_testing\.testing_raise_error$/m.test(e.backtrace), e.backtrace);
      // the caller's frames: the await on this side that failed, marked as the caller's
      async function awaitingCaller() {
        return await s.call('testing.test_raise_error', ['ValueError', 'whose call?']);
      }
      const w = await rejects((async () => { await awaitingCaller(); })(), 'raise, awaited');
      const lines = w.stack.split('\n');
      same(lines[0], 'ValueError: whose call?');
      ok(/^ {4}at \[remote\] webffi_testing\.testing_raise_error \(/.test(lines[1]), w.stack);
      ok(lines.slice(2).some((l) => /^ {4}at async awaitingCaller \(/.test(l)), `the awaiting caller in the stack:\n${w.stack}`);
      ok(/^ {2}File "\[caller\] [^"]+", line \d+, in awaitingCaller$/m.test(w.backtrace), w.backtrace);
      ok(w.backtrace.indexOf('[remote]') < w.backtrace.indexOf('[caller]'), 'remote frames first');
      const t = await rejects(s.call('test.js_error', ['bad arg']), 'js error');
      ok(t instanceof TypeError && t.kind === 'TypeError' && t.message === 'bad arg', String(t));
      const c = await rejects(s.call('test.with_cause'), 'cause');
      ok(c instanceof webffi.ValueError && c.cause instanceof webffi.KeyError && c.cause.message === 'inner', String(c.cause));
      // A function has no value form: it comes back as a remote handle, or refuses when the value is asked for.
      const fn = await s.call('test.function');
      ok(fn instanceof webffi.RemoteFunction && fn.type === 'ffi.Function', String(fn));
      same(await fn.call(['through the handle']), 'through the handle');
      fn.dispose();
      const f = await rejects(s.call('test.function', [], { result: 'value' }), 'function result by value');
      same(f.message, 'cannot clone `ffi.Function` object: it wraps a callable whose implementation lives in this runtime instance');
      // The server lists what it exposes: a name outside the list is said to be not exposed.
      const m = await rejects(s.call('no.such.function'), 'missing');
      ok(m instanceof webffi.ValueError && m.message === NOT_EXPOSED('no.such.function'), m.message);
      const r = await rejects(s.call('testing.echo', [(x) => x]), 'function argument');
      ok(/cannot clone `function` object contained in `Array`/.test(r.message), r.message);
      // Typed arrays travel copied, or transferred when asked.
      const bytes = new Uint8Array([1, 2, 3]);
      same(await s.call('test.bytes_sum', [bytes]), 6);
      same(bytes.length, 3, 'copied');
      same(await s.call('test.bytes_sum', [bytes], { transfer: true }), 6);
      same(bytes.byteLength, 0, 'transferred (detached here)');
      s.close();
      s2.close();
      const closed = await rejects(s.call('testing.add_one', [1]), 'closed');
      ok(closed instanceof webffi.RPCError && /session was closed/.test(closed.message), closed.message);
    },

    async 'timeouts per call and per session are RPCSessionTimeoutError'() {
      const s = await webffi.connect(spawn('server'));
      const e = await rejects(s.call('test.busy', [400], { timeout: 50 }), 'call timeout');
      ok(e instanceof webffi.RPCSessionTimeoutError && e instanceof webffi.RPCError, String(e));
      same(e.kind, 'RPCSessionTimeoutError');
      same(e.message, 'webffi session: the call to `test.busy` timed out after 50 ms');
      same(await s.call('testing.add_one', [1]), 2, 'the session keeps working');
      const quick = await webffi.connect(spawn('server'), { timeout: 1500 });
      const e2 = await rejects(quick.call('test.busy', [3000]), 'session timeout');
      ok(e2 instanceof webffi.RPCSessionTimeoutError, String(e2));
      same(e2.message, 'webffi session: the call to `test.busy` timed out after 1500 ms');
      // A handshake nobody answers times out too (the session's timeout, or
      // handshakeTimeout), saying what to check.
      const { port1 } = new MessageChannel();
      const e3 = await rejects(webffi.connect(port1, { timeout: 50 }), 'handshake');
      ok(e3 instanceof webffi.RPCSessionTimeoutError && /did not answer the handshake within 50 ms: does it call serve\(rt, self\)/.test(e3.message), e3.message);
      const e4 = await rejects(webffi.connectRuntime(port1, { timeout: 60000, handshakeTimeout: 30 }), 'handshakeTimeout');
      ok(e4 instanceof webffi.RPCSessionTimeoutError && /within 30 ms/.test(e4.message), e4.message);
      port1.close();
      // Without either, the handshake waits SESSION_LIMITS.handshake (30 s), not forever.
      same(webffi.SESSION_LIMITS.handshake, 30000);
    },

    async 'a crash or termination rejects every pending call with an RPCError'() {
      const s = await webffi.connect(spawn('server'));
      // Node: the worker exits inside the call. Browser: it closes itself right
      // after answering, so calls sent then are never answered.
      const pending = await s.call('test.crash').then(
        () => [s.call('test.busy', [300]), s.call('test.busy', [300])],
        (e) => [Promise.reject(e)]);
      for (const p of pending) {
        const e = await rejects(p, 'pending at crash');
        ok(e instanceof webffi.RPCError && !(e instanceof webffi.RPCSessionTimeoutError), String(e));
        ok(env.crashMessage.test(e.message), e.message);
      }
      const later = await rejects(s.call('testing.add_one', [1]), 'after crash');
      ok(later instanceof webffi.RPCError, String(later));
      const w = spawn('server');
      const s2 = await webffi.connect(w);
      const p = s2.call('test.busy', [2000]);
      await new Promise((r) => setTimeout(r, 100));
      env.kill(w);
      const e = await rejects(p, 'pending at terminate');
      ok(e instanceof webffi.RPCError && env.killMessage.test(e.message), e.message);
    },

    async 'calls can be cancelled with an AbortSignal'() {
      const s = await webffi.connect(spawn('server'));
      const abort = new AbortController();
      const p = s.call('test.busy', [300], { signal: abort.signal });
      abort.abort();
      const e = await rejects(p, 'aborted');
      same(e, abort.signal.reason, 'rejects with the signal reason');
      same(e.name, 'AbortError');
      const pre = await rejects(s.call('testing.add_one', [1], { signal: abort.signal }), 'already aborted');
      same(pre, abort.signal.reason);
      same(await s.call('testing.add_one', [5]), 6, 'the session keeps working');
    },

    async 'sessions chain: client -> worker A -> worker B'() {
      const a = spawn('forwarder');
      const b = spawn('server');
      const { port1, port2 } = new MessageChannel();
      b.postMessage({ serveOn: port2 }, [port2]);
      a.postMessage({ next: port1 }, [port1]);
      const s = await webffi.connect(a, { timeout: 20000 });
      same(await s.call('testing.add_one', [1]), 2);
      same((await s.call('testing.echo', [[1, 'x']]))[1], 'x');
      const e = await rejects(s.call('testing.test_raise_error', ['KeyError', 'from B']), 'chained error');
      ok(e instanceof webffi.KeyError && e.message === 'from B' && /\[remote\] .*testing_raise_error/.test(e.backtrace), e.backtrace);
      const t = await rejects(s.call('test.busy', [400], { timeout: 50 }), 'chained timeout');
      ok(t instanceof webffi.RPCSessionTimeoutError, String(t));
      const abort = new AbortController();
      const p = s.call('test.busy', [200], { signal: abort.signal });
      abort.abort();
      same(await rejects(p, 'chained abort'), abort.signal.reason);
      same(await s.call('testing.add_one', [2]), 3, 'still working');
      s.close();
    },

    async 'a protocol version mismatch is refused clearly'() {
      const { port1, port2 } = new MessageChannel();
      port2.onmessage = (e) => port2.postMessage({ wrpc: 'hello', id: e.data.id, version: 99 });
      const e = await rejects(webffi.connect(port1, { timeout: 5000 }), 'mismatch');
      ok(e instanceof webffi.RPCError, String(e));
      same(e.message, `webffi session: protocol version mismatch: this side speaks version ${webffi.PROTOCOL_VERSION}, the worker speaks version 99`);
      port1.close();
      port2.close();
    },

    async 'decodeValue refuses malformed data with a ValueError or TypeError naming what and where'() {
      let posted = 0;
      for (const [what, build, pattern, needsRuntime] of BAD_PAYLOADS) {
        const data = build(webffi);
        const runtime = needsRuntime ? other : null;
        const e = throws(() => decodeValue(data, { runtime }), what);
        ok((e instanceof webffi.ValueError || e instanceof webffi.FFITypeError) && e instanceof webffi.FFIError, `${what}: ${e}`);
        ok(e.message.startsWith('decodeValue: ') && pattern.test(e.message), `${what}: ${e.message.slice(0, 300)}`);
        // The same data as a peer sends it (what structured clone can carry).
        let cloned;
        try {
          cloned = await post(data);
        } catch {
          continue; // getters, Proxies and functions do not survive postMessage
        }
        posted++;
        const e2 = throws(() => decodeValue(cloned, { runtime }), `${what} (posted)`);
        ok(e2 instanceof webffi.FFIError && pattern.test(e2.message), `${what} (posted): ${e2.message.slice(0, 300)}`);
      }
      ok(posted > 30, `most cases posted too (${posted})`);
      // A cycle made by structured clone, and prototype pollution that did not happen.
      const loop = ['a', 1];
      loop.push(loop);
      const c = throws(() => decodeValue(loop), 'cycle');
      ok(c instanceof webffi.ValueError && /the data contains itself \(a cycle\) \(at value\[2\]\[2\]/.test(c.message), c.message);
      same(({}).polluted, undefined, 'Object.prototype untouched');
      const clean = decodeValue(await post(['o', JSON.parse('{"a": ["a", 1], "b": null}')]));
      same(Object.getPrototypeOf(clean), Object.prototype, 'a plain object back');
      same(clean.a[0], 1);
      // Bad options are refused too.
      const r = throws(() => decodeValue(1, { runtime: {} }), 'runtime option');
      ok(r instanceof webffi.FFITypeError && /options.runtime is a webffi runtime/.test(r.message), r.message);
      same(decodeValue(7, null), 7, 'null options');
      // Handles made before the failure are released, and the runtime keeps working.
      const half = ['a', ['A', 1, 2], ['L', 3], ['Ai', { length: 5 }]];
      throws(() => decodeValue(half, { runtime: other }), 'half built');
      same(String(decodeValue(['L', 1, ['A', 2]], { runtime: other })), '[1, (2,)]', 'the runtime keeps working');
    },

    async 'shared nodes are encoded and decoded once; cycles and deep nesting are ValueErrors'() {
      // 2^40 paths through 41 nodes: linear work only if each node is handled once.
      const dag = sharedGraph(40);
      const encoded = encodeValue(dag);
      let bottom = encoded;
      for (let i = 0; i < 38; i++) bottom = bottom[1];
      ok(bottom[1] === bottom[2], 'a shared node is one encoded node'); // (same() would print the 2^40 paths)
      const back = decodeValue(await post(encoded));
      let depth = 0;
      for (let x = back; Array.isArray(x) && x.length === 2; x = x[0]) {
        ok(depth < 34 || x[0] === x[1], 'sharing kept (memoised past the first 32 nodes)');
        depth++;
      }
      same(depth, 40, 'all levels');
      // The same through FFI containers (new handles on every read, shared by address).
      const g = rt.getGlobal('ffi.List');
      let list = g(1);
      for (let i = 0; i < 30; i++) list = g(list, list);
      const ffiBack = decodeValue(await post(encodeValue(list)), { runtime: other });
      same(ffiBack.typeKey, 'ffi.List');
      same(String(other.getGlobal('ffi.ListSize')(ffiBack)), '2');
      // An error that is its own cause.
      const e = new webffi.ValueError('me');
      e.cause = e;
      const loop = throws(() => encodeValue(e), 'error cycle');
      ok(loop instanceof webffi.ValueError && /Cycle detected during serialization: a ValueError contains itself/.test(loop.message), loop.message);
      let deep = [1];
      for (let i = 0; i < 300; i++) deep = [deep];
      const d = throws(() => encodeValue(deep), 'deep');
      ok(d instanceof webffi.ValueError && /nesting deeper than 256 levels/.test(d.message), d.message);
      let ok255 = [1];
      for (let i = 0; i < 255; i++) ok255 = [ok255];
      ok(Array.isArray(decodeValue(await post(encodeValue(ok255)))), '256 levels encode and decode');
      const sparse = [];
      sparse.length = 2 ** 27;
      const big = throws(() => encodeValue(sparse), 'sparse');
      ok(big instanceof webffi.ValueError && /more than 16777216 elements/.test(big.message), big.message);
      // A getter that throws propagates, and leaves the encoder in working order.
      const boom = new Error('read');
      same(throws(() => encodeValue([1, { get x() { throw boom; } }]), 'getter'), boom);
      same(decodeValue(encodeValue([[1], [2]]))[1][0], 2, 'the encoder keeps working');
      // Error text past the limit is cut when encoded, so that it still decodes.
      const long = decodeValue(await post(encodeValue(new webffi.KeyError('x'.repeat(2 ** 22 + 100)))));
      ok(long instanceof webffi.KeyError && long.message.length === 2 ** 22 && long.message.endsWith('[... cut off]'), 'cut');
    },

    async 'a peer reaches only what the server exposes (default: no testing.*, module loading, registry)'() {
      const w = spawn('default');
      const s = await webffi.connect(w, { timeout: 20000 });
      same(await s.call('test.busy', [1]), 1, 'a global of the server');
      same(await s.call('ffi.String', ['x']), 'x', 'a container constructor');
      for (const name of ['testing.trap', 'testing.add_one', 'ffi.ModuleLoadFromFile', 'ffi.FunctionRemoveGlobal',
        'ffi.FunctionListGlobalNamesFunctor', 'ffi.GetGlobalFuncMetadata', 'webffi.ModuleUnload', 'ffi.SystemLib']) {
        const e = await rejects(s.call(name, ['test.busy']), name);
        ok(e instanceof webffi.ValueError, String(e));
        same(e.message, NOT_EXPOSED(name), 'answered as not exposed');
      }
      // One that is exposed but does not exist is missing: the answer follows the policy, not existence.
      same((await rejects(s.call('no.such.function'), 'missing')).message, 'Cannot find global function no.such.function');
      same(await s.call('test.busy', [2]), 2, 'still serving, test.busy still registered');
      ok(webffi.PEER_DENIED.includes('testing.*') && webffi.PEER_DENIED.includes('ffi.Module*'), 'the denied list is exported');
      // Explicit lists and predicates, in this thread over a MessageChannel.
      const serveOn = async (options) => {
        const { port1, port2 } = new MessageChannel();
        const server = webffi.serve(other, port1, options);
        const client = await webffi.connect(port2, { timeout: 5000 });
        return { client, close: () => { client.close(); server.close(); port1.close(); port2.close(); } };
      };
      const only = await serveOn({ expose: ['testing.add_one', 'ffi.Array*'] });
      same(await only.client.call('testing.add_one', [1]), 2, 'named');
      same(await only.client.call('ffi.ArraySize', [[1, 2]]), 2, 'by prefix');
      same((await rejects(only.client.call('ffi.String', ['x']), 'not listed')).message, NOT_EXPOSED('ffi.String'));
      only.close();
      const seen = [];
      const pred = await serveOn({ expose: (name, byDefault) => { seen.push([name, byDefault]); return byDefault || name === 'testing.echo'; } });
      same(await pred.client.call('testing.echo', [5]), 5, 'widened');
      same(await pred.client.call('ffi.String', ['y']), 'y', 'default kept');
      await rejects(pred.client.call('testing.nop'), 'not widened');
      await pred.client.call('testing.echo', [6]);
      same(JSON.stringify(seen), '[["testing.echo",false],["ffi.String",true],["testing.nop",false]]', 'asked once per name');
      pred.close();
      const throwing = await serveOn({ expose: () => { throw new Error('predicate'); } });
      same((await rejects(throwing.client.call('ffi.String', ['z']), 'throwing predicate')).message, NOT_EXPOSED('ffi.String'));
      same((await rejects(throwing.client.call('ffi.String', ['z']), 'and again')).message, NOT_EXPOSED('ffi.String'));
      throwing.close();
      const all = await serveOn({ expose: ['*'] });
      same(await all.client.call('testing.add_one', [9]), 10, 'everything, explicitly');
      all.close();
      const bad = throws(() => webffi.serve(other, new MessageChannel().port1, { expose: 'testing.*' }), 'expose string');
      ok(bad instanceof webffi.FFITypeError && /expose is an array/.test(bad.message), bad.message);
      s.close();
    },

    async 'malformed messages get an error reply or none, and the server keeps serving'() {
      const w = spawn('default');
      const raw = rawPeer(w);
      for (const [what, m, expected] of BAD_CALLS) {
        raw.post(m);
        // A good call after each: answered, so the bad one was handled (or ignored) first.
        same((await raw.call('test.busy', [0])).value, 0, `served after ${what}`);
        const id = m?.id;
        const reply = raw.replies.get(id);
        if (!expected) {
          ok(reply === undefined, `${what}: no reply`);
          continue;
        }
        ok(reply?.wrpc === 'err', `${what}: an error reply`);
        const e = decodeValue(reply.error);
        same(e.kind, expected[0], what);
        ok(expected[1].test(e.message), `${what}: ${e.message.slice(0, 200)}`);
      }
      raw.close();
      // Duplicates and the in-flight bound, on a server whose runtime never arrives.
      const { port1, port2 } = new MessageChannel();
      const server = webffi.serve(new Promise(() => {}), port1, { maxInFlight: 2 });
      const peer = rawPeer(port2);
      for (const id of [1, 2, 1, 3]) peer.post({ wrpc: 'call', id, name: 'x', args: ['a'] });
      const dup = await peer.reply(1);
      ok(/call id 1 is already in use/.test(decodeValue(dup.error).message), 'duplicate id');
      const over = await peer.reply(3);
      const e = decodeValue(over.error);
      ok(e instanceof webffi.RPCError && /too many calls in flight \(at most 2\)/.test(e.message), e.message);
      peer.close();
      server.close();
      port1.close();
      port2.close();
    },

    async 'a client survives garbage replies and keeps its pending calls correct'() {
      const w = spawn('default');
      const s = await webffi.connect(w, { timeout: 20000 });
      same(await s.call('test.busy', [0]), 0);
      w.postMessage({ spray: BAD_REPLIES });
      same(await s.call('test.busy', [3]), 3, 'a call after the garbage (id 2)');
      // A malformed error for a pending call rejects it clearly; the session goes on.
      w.postMessage({ spray: [{ wrpc: 'err', id: 3, error: ['E', 5, 'x', ''] }] });
      const e = await rejects(s.call('test.busy', [4]), 'malformed error');
      ok(e instanceof webffi.RPCError && /answered the call to `test.busy` with a malformed error \(decodeValue: an error kind/.test(e.message), e.message);
      w.postMessage({ spray: [{ wrpc: 'err', id: 4, error: 42 }] });
      const e2 = await rejects(s.call('test.busy', [5]), 'not an error');
      ok(e2 instanceof webffi.RPCError && /malformed error \(not an error but number\)/.test(e2.message), e2.message);
      w.postMessage({ spray: [{ wrpc: 'ok', id: 5, value: ['Ai', { length: 1e9 }] }] });
      const e3 = await rejects(s.call('test.busy', [6]), 'malformed value');
      ok(e3 instanceof webffi.FFITypeError && /packed ints are an Int32Array/.test(e3.message), e3.message);
      same(await s.call('test.busy', [7]), 7, 'the session keeps working');
      const n = await rejects(s.call(5, []), 'name not a string');
      ok(n instanceof webffi.FFITypeError, String(n));
      const a = await rejects(s.call('test.busy', 5), 'args not an array');
      ok(a instanceof webffi.FFITypeError, String(a));
      s.close();
    },

    'teardown'() {
      for (const w of workers) env.kill(w);
    },
  };

  function rtError(kind, message) {
    return throws(() => rt.getGlobal('testing.test_raise_error')(kind, message), kind);
  }
}

/**
 * Talks the protocol by hand to a worker or port: post(raw message),
 * call(name, args) -> its reply, reply(id) -> the reply to id, replies: id -> reply.
 */
function rawPeer(port) {
  const replies = new Map();
  const waiting = new Map();
  let next = 100000;
  const on = (m) => {
    const d = port.on ? m : m.data;
    if (d !== null && typeof d === 'object' && (d.wrpc === 'ok' || d.wrpc === 'err')) {
      replies.set(d.id, d);
      waiting.get(d.id)?.(d);
    }
  };
  if (port.on) port.on('message', on);
  else {
    port.addEventListener('message', on);
    port.start?.();
  }
  const reply = (id) => replies.has(id) ? Promise.resolve(replies.get(id)) : new Promise((resolve) => waiting.set(id, resolve));
  return {
    replies,
    post: (m) => port.postMessage(m),
    reply,
    call(name, args) {
      const id = ++next;
      port.postMessage({ wrpc: 'call', id, name, args: ['a', ...args] });
      return reply(id);
    },
    close() {
      if (port.off) port.off('message', on);
      else port.removeEventListener('message', on);
    },
  };
}

/** Posts to a worker and resolves with its next message. */
function message(worker, data) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (worker.off) worker.off('message', on);
      else worker.removeEventListener('message', on);
      resolve(worker.off ? m : m.data);
    };
    if (worker.on) worker.on('message', on);
    else worker.addEventListener('message', on);
    worker.postMessage(data);
  });
}
