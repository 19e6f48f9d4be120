// The classic bundle inside a classic Worker (importScripts).
importScripts('../../../dist/webffi.iife.js');

(async () => {
  const failures = [];
  const check = (cond, name) => cond || failures.push({ name, error: 'assertion failed' });
  try {
    const rt = await self.webffi.load();
    // the test fixtures (testing.*) are a module of their own
    await rt.loadModule('../../../dist/webffi_testing.wasm');
    check(rt.getGlobal('testing.add_one')(41) === 42, 'add_one');
    check(rt.getGlobal('testing.apply')((a) => `${a}!`, 'hi') === 'hi!', 'callback');
    try {
      rt.getGlobal('testing.test_raise_error')('IndexError', 'x');
      check(false, 'raise');
    } catch (e) {
      check(e instanceof RangeError && e instanceof self.webffi.FFIError && String(e) === 'IndexError: x', 'error kind');
    }
    // Errors by value with the bundle: through a real structured clone.
    const { port1, port2 } = new MessageChannel();
    const received = new Promise((resolve) => { port2.onmessage = (m) => resolve(m.data); });
    port1.postMessage(self.webffi.encodeValue(new self.webffi.KeyError('by value')));
    const e = self.webffi.decodeValue(await received);
    check(e instanceof self.webffi.KeyError && e.kind === 'KeyError' && typeof self.webffi.connect === 'function', 'by value');
  } catch (e) {
    failures.push({ name: 'load', error: `${e}\n${e.stack}` });
  }
  postMessage({ passed: 4 - failures.length, failed: failures.length, failures });
})();
