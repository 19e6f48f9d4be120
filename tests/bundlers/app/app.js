// The app each bundler builds: load webffi, call C, catch a C error, show
// the results in the page.
import { load, FFIError, ValueError } from 'webffi';

export function main(options) {
  const out = document.getElementById('result');
  const show = (state, value) => {
    out.textContent = JSON.stringify(value);
    out.dataset.state = state;
  };
  load(options).then((rt) => {
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
