// Async served functions and remote objects in real headless Chromium: a
// module Worker owns the runtime and SwiftShader WebGPU (the cases in
// tests/support/remote_suite.mjs, shared with Node).
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { remoteTests } from '../support/remote_suite.mjs';

const CASES = Object.keys(remoteTests({}, {})).length;
const chromium = useChromium({ webgpu: true });

test('remote-object suite passes in Chromium with a module Worker and WebGPU', () =>
  chromium.expectPass('remote.html', CASES, { timeout: 240000 }));
