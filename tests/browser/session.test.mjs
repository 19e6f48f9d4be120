// Values and errors by value, and worker sessions, in real headless Chromium
// with module Workers (the cases in tests/support/session_suite.mjs).
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { sessionTests } from '../support/session_suite.mjs';

const CASES = Object.keys(sessionTests({}, {})).length;
const chromium = useChromium();

test('session suite passes in Chromium with module Workers', () =>
  chromium.expectPass('session.html', CASES, { timeout: 120000 }));
