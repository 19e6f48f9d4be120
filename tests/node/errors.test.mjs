// Errors as complete as upstream's (tests/support/errors_suite.mjs) in
// Node; the same suite runs in Chromium (tests/browser/debug.test.mjs).
import { test } from 'node:test';
import * as webffi from '../../js/index.js';
import { errorTests } from '../support/errors_suite.mjs';

for (const [name, fn] of Object.entries(errorTests(webffi))) test(name, fn);
