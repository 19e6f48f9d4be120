// A worker for tests/node/error_family.test.mjs. Role `decoder`: decodes the
// errors it is sent (no runtime loaded) and reports what each became.
// Role `server`: serves a runtime on its port.
import { parentPort, workerData } from 'node:worker_threads';
import * as webffi from '../../js/index.js';
import { loadTesting } from './testing_module.mjs';

if (workerData.role === 'decoder') {
  parentPort.on('message', (data) => {
    const e = webffi.decodeValue(data);
    parentPort.postMessage({
      constructorName: e.constructor.name,
      name: e.name,
      kind: e.kind,
      message: e.message,
      backtrace: e.backtrace,
      isOwnClass: e instanceof webffi[e.kind],
      isRuntimeError: e instanceof webffi.RuntimeError,
      isFFIError: e instanceof webffi.FFIError,
    });
  });
} else {
  webffi.serve(webffi.load().then(loadTesting).then((rt) => {
    rt.registerGlobal('test.busy', (ms) => {
      const end = Date.now() + ms;
      while (Date.now() < end) { /* keeps the worker busy past the caller's timeout */ }
      return ms;
    });
    return rt;
  }), parentPort, { expose: ['test.busy', 'testing.test_raise_error'] });
}
