// The runtime wasm loads and reports C backtraces in real headless Chromium.
import { test } from 'node:test';
import { useChromium } from './harness.mjs';

const chromium = useChromium();

test('raw wasm page passes in Chromium', () => chromium.expectPass('raw_wasm.html', 2));
