// docs/cli.md, the reference of the `webffi` command, cannot drift from
// what bin/webffi.mjs accepts: its usage blocks are what `--help` prints,
// and its option tables document every option the usage text names and no
// other. (tests/node/docs.test.mjs runs the page's blocks.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blocksOf, repoRoot } from '../support/doc_blocks.mjs';

const DOC = 'docs/cli.md';
const webffi = (...args) => execFileSync(process.execPath, [join(repoRoot, 'bin', 'webffi.mjs'), ...args], { encoding: 'utf8' });
const OPTION = /(?<![\w-])-{1,2}[A-Za-z][A-Za-z0-9-]*/g;

/** The text of DOC between the heading `## HEADING` and the next `## `. */
function section(heading) {
  const text = readFileSync(join(repoRoot, DOC), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `${DOC} has no section ${heading}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** Options the first column of the section's tables documents. */
function documented(text) {
  const out = new Set();
  for (const line of text.split('\n')) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`([^`]+)`/g)) for (const o of m[1].match(OPTION) ?? []) out.add(o);
  }
  return out;
}

/**
 * Options a usage text names: in its synopsis lines, in the left column of
 * its option list (lines that start with two spaces and a dash), and the
 * link flags the list passes on.
 */
function named(usage, from, to) {
  const lines = usage.split('\n');
  const a = from ? lines.findIndex((l) => l === from) : 0;
  const b = to ? lines.findIndex((l) => l === to) : lines.length;
  const out = new Set();
  for (const line of lines.slice(a, b)) {
    let names = '';
    if (/^(usage:| {7}webffi )/.test(line)) names = line.replace(/\b[A-Z]+(\.\w+)*\b/g, '');
    else if (/^ {2}-/.test(line)) names = line.slice(2).split(/ {2,}/)[0];
    else if (/the link gets /.test(line)) names = line.slice(line.indexOf('the link gets '));
    for (const o of names.match(OPTION) ?? []) out.add(o);
  }
  return out;
}

const sorted = (s) => [...s].sort();

test('docs/cli.md shows exactly what `webffi --help` and `webffi types --help` print', () => {
  const blocks = blocksOf(DOC);
  for (const [command, args] of [['npx webffi --help', ['--help']], ['npx webffi types --help', ['types', '--help']]]) {
    const i = blocks.findIndex((b) => b.code.trim() === command);
    assert.ok(i >= 0, `${DOC} runs ${command}`);
    assert.ok(blocks[i + 1]?.directives.output, `${command} is followed by its output`);
    assert.equal(blocks[i + 1].code, webffi(...args));
  }
});

test('docs/cli.md documents every option of `webffi build` and no other', () => {
  const usage = webffi('--help');
  const inUsage = named(usage, null, 'run:');
  const inDoc = documented(section('`webffi build`'));
  // the usage's synopsis shows help as `help | -h | --help`; the page documents -h and --help
  assert.deepEqual(sorted([...inUsage].filter((o) => !inDoc.has(o))), [], 'options the page does not document');
  assert.deepEqual(sorted([...inDoc].filter((o) => !inUsage.has(o))), [], 'options the page documents that the usage does not name');
  for (const o of ['--module', '--command', '-c', '--tvm-ffi-include', '--runtime', '--no-import-check', '--runtime-from-source', '--runtime-lib', '--verbose', '-g', '-gline-tables-only']) {
    assert.ok(inUsage.has(o), `the usage names ${o}`);
  }
});

test('docs/cli.md documents every option of `webffi types` and no other', () => {
  const usage = webffi('types', '--help');
  const inUsage = named(usage, null, '');
  const inDoc = documented(section('`webffi types`'));
  assert.deepEqual(sorted(inUsage), sorted(inDoc));
  assert.deepEqual(sorted(inDoc), ['--name', '--runtime', '--runtime-globals', '-o']);
});
