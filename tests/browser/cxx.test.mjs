// C++ built by `webffi build` both ways (wasm exception handling), and a
// command program run by runCommand, in real headless Chromium.
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { cxxTests } from '../support/cxx_suite.mjs';

const chromium = useChromium();

test('C++ suite passes in Chromium', () =>
  chromium.expectPass('cxx.html', Object.keys(cxxTests).length));
