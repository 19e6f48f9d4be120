// runtime.loadModule through the JS API in real headless Chromium.
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { moduleTests } from '../support/runtime_module_suite.mjs';

const chromium = useChromium();

test('runtime.loadModule suite passes in Chromium', () =>
  chromium.expectPass('runtime_modules.html', Object.keys(moduleTests).length));
