// Backtraces with file and line (tests/support/debug_suite.mjs) and errors
// across JS (tests/support/errors_suite.mjs) in real headless Chromium.
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { debugTests } from '../support/debug_suite.mjs';
import { errorTests } from '../support/errors_suite.mjs';

const chromium = useChromium();

test('backtrace and error suites pass in Chromium', () =>
  chromium.expectPass('debug.html', Object.keys(debugTests).length + Object.keys(errorTests({})).length,
    { timeout: 120000 }));
