// The page of a worker app: it loads no wasm itself, only talks to a worker
// that serves the runtime (webffi/client), calls C there, catches a C error,
// and shows the results (or the failure) as app.js does.
import { connectRuntime, FFIError, ValueError } from 'webffi/client';

export async function mainWorker(worker) {
  const out = document.getElementById('result');
  const show = (state, value) => {
    out.textContent = JSON.stringify(value);
    out.dataset.state = state;
  };
  try {
    const remote = await connectRuntime(worker, { timeout: 20000 });
    const sum = await remote.getGlobal('testing.add_one')(41);
    let error = null;
    try {
      await remote.getGlobal('testing.test_raise_error')('ValueError', 'raised in C');
    } catch (e) {
      error = { kind: e.kind, message: e.message, isValueError: e instanceof ValueError, isFFIError: e instanceof FFIError };
    }
    remote.close();
    show('done', { sum, error });
  } catch (e) {
    show('failed', { failure: `${e.name}: ${e.message}` });
  }
}
