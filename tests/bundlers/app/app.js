// The app each bundler builds: load webffi and the test fixtures module (a
// second wasm asset), call C, catch a C error, show the results in the page.
import { load, FFIError, ValueError } from 'webffi';
import { loadTesting } from 'webffi/js/testing.js';

/** `testing`: the fixtures module's URL, where the bundler does not find it itself. */
export function main(options, testing) {
  const out = document.getElementById('result');
  const show = (state, value) => {
    out.textContent = JSON.stringify(value);
    out.dataset.state = state;
  };
  load(options).then((rt) => loadTesting(rt, testing)).then((rt) => {
    const sum = rt.getGlobal('testing.add_one')(41);
    let error = null;
    try {
      rt.getGlobal('testing.test_raise_error')('ValueError', 'raised in C');
    } catch (e) {
      error = { kind: e.kind, message: e.message, isValueError: e instanceof ValueError, isFFIError: e instanceof FFIError };
    }
    show('done', { sum, error });
  }, (e) => show('failed', { failure: String(e?.stack ?? e) }));
}
