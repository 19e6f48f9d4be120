// User C modules, linked in and loaded at run time, in real headless
// Chromium (the scenarios are shared with tests/node/modules.test.mjs).
import { test } from 'node:test';
import { useChromium } from './harness.mjs';
import { scenarios } from '../support/module_scenarios.mjs';

const chromium = useChromium();

test('C module scenarios pass in Chromium', () =>
  chromium.expectPass('modules.html', Object.keys(scenarios).length));
