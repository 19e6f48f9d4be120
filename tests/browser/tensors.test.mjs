// Tensors on real WebGPU in headless Chromium (SwiftShader), through load():
// the cases shared with Node (tests/support/tensor_cases.mjs) and backends
// registered from navigator.gpu and the global queue.
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { tensorCases } from '../support/tensor_cases.mjs';

const chromium = useChromium({ webgpu: true });

test('tensor cases and backend registration pass in Chromium (SwiftShader)', () =>
  chromium.expectPass('tensors.html', Object.keys(tensorCases(null, {})).length + 1, { timeout: 240000 }));
