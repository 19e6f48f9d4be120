// The core suite inside a module Worker.
import * as webffi from '../../../js/index.js';
import { coreTests } from '../../support/core_suite.mjs';
import { runTests, assertEqual } from '../harness_page.mjs';
import { loadTesting } from '../../support/testing_module.mjs';

const wasm = await (await fetch('../../../dist/webffi.wasm')).arrayBuffer();
const result = await runTests({
  async 'load() in a module worker finds the wasm next to the JS'() {
    const rt = await loadTesting(await webffi.load());
    assertEqual(rt.getGlobal('testing.add_one')(1), 2);
  },
  ...coreTests(webffi, wasm),
});
postMessage(result);
