// The code blocks of README.md and docs/*.md, for the tests that run them
// (tests/node/docs.test.mjs, tests/browser/docs.test.mjs).
//
// A block may be preceded by a directive comment, `<!-- doc: KEY[=VALUE] ... -->`:
//   file=NAME      the block is written to NAME in the document's sandbox
//                  (a later block must use it: a C source, a worker script);
//   browser        the block runs in headless Chromium (html: as a page;
//                  js: as a module script) instead of Node;
//   output         this block is what the block before it prints, exactly;
//   expect-error=K the block ends with an uncaught error of kind K;
//   not-run=WHY    shown, not run (only for shell commands that cannot run
//                  inside the tests, such as the command that runs them);
//   fixture=NAME   files the block uses that no document can hold are made
//                  in the sandbox first (tests/node/docs.test.mjs: arctic-s,
//                  a model library and seeded weights for it).
// Blocks tagged `text` (or untagged) are not code. Everything else runs:
// js in Node (or Chromium), c/cpp through `webffi build`, sh with bash,
// cmake as the CMakeLists.txt of the document's sandbox (configured, built).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The documents whose blocks run: README.md and every docs/*.md. */
export function documents() {
  const docs = ['README.md'];
  const dir = join(repoRoot, 'docs');
  if (existsSync(dir)) {
    for (const name of readdirSync(dir).sort()) if (name.endsWith('.md')) docs.push(`docs/${name}`);
  }
  return docs;
}

const DIRECTIVE = /^\s*<!--\s*doc:\s*(.*?)\s*-->\s*$/;

function parseDirectives(text) {
  const out = {};
  // KEY, KEY=VALUE or KEY="VALUE WITH SPACES"
  for (const m of text.matchAll(/([a-z-]+)(?:=("([^"]*)"|\S+))?/g)) out[m[1]] = m[3] ?? m[2] ?? true;
  return out;
}

/** The fenced blocks of one document, in order: { doc, line, lang, directives, code }. */
export function blocksOf(doc) {
  const lines = readFileSync(join(repoRoot, doc), 'utf8').split('\n');
  const blocks = [];
  let pending = {};
  for (let i = 0; i < lines.length; ++i) {
    const d = DIRECTIVE.exec(lines[i]);
    if (d) {
      pending = { ...pending, ...parseDirectives(d[1]) };
      continue;
    }
    const fence = /^(\s*)(`{3,})\s*([\w+-]*)\s*$/.exec(lines[i]);
    if (!fence) {
      if (lines[i].trim() !== '') pending = {};
      continue;
    }
    const [, indent, ticks, lang] = fence;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j].startsWith(indent + ticks) && lines[j].trim() === ticks); ++j) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    }
    blocks.push({ doc, line: i + 1, endLine: j + 1, lang: lang.toLowerCase() || 'text', directives: pending, code: body.join('\n') + '\n' });
    pending = {};
    i = j;
  }
  return blocks;
}

/** The document's text outside its code blocks. */
export function proseOf(doc) {
  const lines = readFileSync(join(repoRoot, doc), 'utf8').split('\n');
  for (const b of blocksOf(doc)) lines.fill('', b.line - 1, b.endLine);
  return lines.join('\n');
}

/** What a block is for the runners: 'file', 'output', 'not-run', 'text', 'node', 'browser', 'c', 'sh', 'cmake'. */
export function roleOf(block) {
  const d = block.directives;
  if (d.output) return 'output';
  if (d.file) return 'file';
  if (d['not-run']) return 'not-run';
  if (block.lang === 'text') return 'text';
  if (d.browser) return 'browser';
  if (block.lang === 'js' || block.lang === 'mjs') return 'node';
  if (block.lang === 'c' || block.lang === 'cpp' || block.lang === 'c++') return 'c';
  if (block.lang === 'sh' || block.lang === 'bash') return 'sh';
  if (block.lang === 'cmake') return 'cmake';
  return 'unknown';
}

/** `README.md:42`, for messages. */
export function where(block) {
  return `${block.doc}:${block.line}`;
}
