// docs/c-api.md, the reference of the public C headers, covers each of
// include/webffi/*.h: a section per header, and every function, macro and
// type a header declares named in it (tests/node/docs.test.mjs builds and
// runs its examples). A declaration added to a header without its entry
// fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { proseOf, repoRoot } from '../support/doc_blocks.mjs';

const DOC = 'docs/c-api.md';
const headers = readdirSync(join(repoRoot, 'include', 'webffi')).filter((f) => f.endsWith('.h')).sort();

/** What a header declares: functions, macros (not its include guard), typedefs, and its enums as [first, last]. */
function declarations(file) {
  const text = readFileSync(join(repoRoot, 'include', 'webffi', file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const names = new Set();
  for (const m of text.matchAll(/TVM_FFI_DLL\s+[\w\s*]*?\b(\w+)\s*\(/g)) names.add(m[1]);
  for (const m of text.matchAll(/^#define\s+(\w+)/gm)) if (!/_H_$/.test(m[1])) names.add(m[1]);
  for (const m of text.matchAll(/typedef\s+[^;{(]*\(\s*\*\s*(\w+)\s*\)/g)) names.add(m[1]);
  for (const m of text.matchAll(/}\s*(\w+)\s*;/g)) names.add(m[1]);
  for (const m of text.matchAll(/typedef\s+struct\s+(\w+)\s+\w+\s*;/g)) names.add(m[1]);
  const enums = [...text.matchAll(/enum\s*{([^}]*)}/g)].map((m) => m[1].match(/\b[A-Za-z_]\w*(?=\s*=)/g));
  return { names: [...names], enums: enums.map((e) => [e[0], e[e.length - 1]]) };
}

test('docs/c-api.md has a section for each public header', () => {
  const doc = readFileSync(join(repoRoot, DOC), 'utf8');
  assert.ok(headers.length >= 5, headers.join(' '));
  const sections = [...doc.matchAll(/^## `webffi\/(\w+\.h)`/gm)].map((m) => m[1]).sort();
  assert.deepEqual(sections, headers);
});

test('docs/c-api.md names every function, macro and type the headers declare', () => {
  const doc = proseOf(DOC); // in its text, not only in the examples
  // code spans, `x` or ``x`` (a run of backticks closes with the same run)
  const coded = new Set([...doc.matchAll(/(`+)([\s\S]*?[^`])\1(?!`)/g)].flatMap((m) => m[2].match(/\w+/g) ?? []));
  const missing = [];
  let count = 0;
  for (const h of headers) {
    const { names, enums } = declarations(h);
    count += names.length;
    for (const n of names) if (!coded.has(n)) missing.push(`${h}: ${n}`);
    for (const [first, last] of enums) if (!coded.has(first) || !coded.has(last)) missing.push(`${h}: enum ${first} ... ${last}`);
  }
  assert.deepEqual(missing, []);
  assert.ok(count > 50, `only ${count} declarations found: is the parser still right?`);
});
