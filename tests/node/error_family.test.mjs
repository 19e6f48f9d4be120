// The RuntimeError family, as tvm-ffi registers it: InternalError, RPCError
// (and RPCSessionTimeoutError), OpError, DiagnosticError and ScheduleError
// extend RuntimeError, each a class of its own, raised from C, decoded in
// another worker and thrown through a session alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import * as webffi from '../../js/index.js';
import { loadTesting } from '../support/testing_module.mjs';

const FAMILY = ['InternalError', 'RPCError', 'OpError', 'DiagnosticError', 'ScheduleError'];
const workerUrl = new URL('../support/error_family_worker.mjs', import.meta.url);

function checkMember(e, kind, message) {
  assert.equal(e.constructor, webffi[kind], `${kind}: its own class`);
  assert.equal(e.constructor.name, kind);
  assert.equal(e.name, kind);
  assert.equal(e.kind, kind);
  assert.equal(e.message, message);
  assert.ok(e instanceof webffi.RuntimeError, `${kind} instanceof RuntimeError`);
  assert.ok(e instanceof webffi.FFIError, `${kind} instanceof FFIError`);
  assert.ok(e instanceof Error);
  assert.equal(String(e), `${kind}: ${message}`);
}

test('the family are exported classes extending RuntimeError; the native bases of the other kinds stay', () => {
  for (const kind of [...FAMILY, 'RPCSessionTimeoutError']) {
    assert.equal(typeof webffi[kind], 'function', `${kind} is exported`);
    assert.ok(webffi[kind].prototype instanceof webffi.RuntimeError, `${kind} extends RuntimeError`);
    checkMember(new webffi[kind]('made in JS'), kind, 'made in JS');
  }
  assert.ok(new webffi.RPCSessionTimeoutError('t') instanceof webffi.RPCError);
  assert.ok(new webffi.FFITypeError('t') instanceof TypeError);
  assert.ok(!(new webffi.FFITypeError('t') instanceof webffi.RuntimeError));
  assert.ok(new webffi.IndexError('t') instanceof RangeError);
  assert.ok(new webffi.OverflowError('t') instanceof RangeError);
  assert.ok(!(new webffi.ValueError('t') instanceof webffi.RuntimeError));
});

test('each kind raised from C arrives as its class, with its C frame in the backtrace', async () => {
  const rt = await loadTesting(await webffi.load());
  const raise = rt.getGlobal('testing.test_raise_error');
  for (const kind of FAMILY) {
    const e = captured(() => raise(kind, `${kind} from C`));
    checkMember(e, kind, `${kind} from C`);
    assert.match(e.backtrace, /testing_raise_error/, `${kind}: the C frame`);
  }
});

test('each kind decoded in another worker is its class there', async () => {
  const rt = await loadTesting(await webffi.load());
  const raise = rt.getGlobal('testing.test_raise_error');
  const worker = new Worker(workerUrl, { workerData: { role: 'decoder' } });
  try {
    for (const kind of [...FAMILY, 'RPCSessionTimeoutError']) {
      const e = kind === 'RPCSessionTimeoutError' ? new webffi.RPCSessionTimeoutError('timed out')
        : captured(() => raise(kind, `${kind} by value`));
      worker.postMessage(webffi.encodeValue(e));
      const [seen] = await once(worker, 'message');
      assert.deepEqual(seen, {
        constructorName: kind, name: kind, kind, message: e.message, backtrace: e.backtrace,
        isOwnClass: true, isRuntimeError: true, isFFIError: true,
      });
      if (kind !== 'RPCSessionTimeoutError') assert.match(seen.backtrace, /testing_raise_error/);
    }
  } finally {
    await worker.terminate();
  }
});

test('each kind thrown through a session rejects as its class, remote frames marked', async () => {
  const worker = new Worker(workerUrl, { workerData: { role: 'server' } });
  const session = await webffi.connect(worker, { timeout: 20000 });
  try {
    for (const kind of FAMILY) {
      const e = await session.call('testing.test_raise_error', [kind, `${kind} remote`]).then(
        () => assert.fail(`${kind}: no error`), (error) => error);
      checkMember(e, kind, `${kind} remote`);
      assert.match(e.backtrace, /\[remote\].*testing_raise_error|testing_raise_error.*\[remote\]/, `${kind}: remote C frame`);
    }
  } finally {
    session.close();
    await worker.terminate();
  }
});

test('a session timeout is an RPCSessionTimeoutError, an RPCError and a RuntimeError', async () => {
  const worker = new Worker(workerUrl, { workerData: { role: 'server' } });
  const session = await webffi.connect(worker, { timeout: 20000 });
  try {
    const e = await session.call('test.busy', [300], { timeout: 20 }).then(
      () => assert.fail('no timeout'), (error) => error);
    assert.equal(e.constructor, webffi.RPCSessionTimeoutError);
    assert.ok(e instanceof webffi.RPCError && e instanceof webffi.RuntimeError && e instanceof webffi.FFIError);
  } finally {
    session.close();
    await worker.terminate();
  }
});

function captured(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}
