// The API reference's sources: the hand-written .d.ts files typedoc.json
// names as entry points, their exported declarations with their doc
// comments, and the code of each `@example` (for the tests that require a
// description and an example on every export and run the examples:
// tests/node/api_docs.test.mjs, tests/node/api_examples.test.mjs).
//
// An @example is markdown: fenced blocks, each optionally preceded by the
// directives the docs use (tests/support/doc_blocks.mjs), e.g.
//   <!-- doc: output -->        the block is what the code before prints;
//   <!-- doc: file=worker.mjs --> the block is a file the example uses;
//   <!-- doc: not-run="WHY" -->  type-checked, not run (needs a TVM tracker, ...);
//   <!-- doc: fixture=NAME -->   files the example uses are made first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './doc_blocks.mjs';

/** The .d.ts files the reference is generated from (typedoc.json's entryPoints). */
export const API_ENTRY_POINTS = JSON.parse(readFileSync(join(repoRoot, 'typedoc.json'), 'utf8')).entryPoints;

/** The interface whose members document the `webgpu.*` globals, one member per kernel. */
export const KERNEL_GLOBALS = { file: 'js/backends/webgpu/index.d.ts', name: 'WebGPUGlobals' };

/** A doc comment's text without its delimiters and margin. */
function commentText(raw) {
  return raw.replace(/^\/\*\*/, '').replace(/\*\/$/, '').split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').replace(/\s+$/, '')).join('\n').trim();
}

/** Summary and block tags of a doc comment ({ summary, tags: [{ tag, text }] }); fenced code is never a tag. */
export function parseComment(raw) {
  const lines = commentText(raw).split('\n');
  const summary = [];
  const tags = [];
  let fence = null;
  for (const line of lines) {
    const m = fence === null ? /^@(\w+)\s?(.*)$/.exec(line) : null;
    if (m) tags.push({ tag: m[1], lines: [m[2]] });
    else (tags.length ? tags[tags.length - 1].lines : summary).push(line);
    const f = /^\s*(`{3,})/.exec(line);
    if (f) fence = fence === null ? f[1] : (line.trim() === fence ? null : fence);
  }
  return {
    summary: summary.join('\n').trim(),
    tags: tags.map((t) => ({ tag: t.tag, text: t.lines.join('\n').trim() })),
  };
}

const DIRECTIVE = /^\s*<!--\s*doc:\s*(.*?)\s*-->\s*$/;

/** The fenced blocks of an example: { lang, directives, code }. */
export function exampleBlocks(text) {
  const blocks = [];
  const lines = text.split('\n');
  let pending = {};
  for (let i = 0; i < lines.length; ++i) {
    const d = DIRECTIVE.exec(lines[i]);
    if (d) {
      for (const m of d[1].matchAll(/([a-z-]+)(?:=("([^"]*)"|\S+))?/g)) pending[m[1]] = m[3] ?? m[2] ?? true;
      continue;
    }
    const fence = /^(`{3,})\s*([\w+-]*)\s*$/.exec(lines[i]);
    if (!fence) {
      if (lines[i].trim() !== '') pending = {};
      continue;
    }
    const body = [];
    let j = i + 1;
    for (; j < lines.length && lines[j].trim() !== fence[1]; ++j) body.push(lines[j]);
    blocks.push({ lang: fence[2].toLowerCase() || 'text', directives: pending, code: `${body.join('\n')}\n` });
    pending = {};
    i = j;
  }
  return blocks;
}

function exportedName(node) {
  if (ts.isVariableStatement(node)) return node.declarationList.declarations.map((d) => d.name.getText()).join(', ');
  return node.name?.getText() ?? null;
}

const isExported = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;

/** The doc comment directly above a node (its last JSDoc), parsed; null when it has none. */
function docOf(node, source) {
  const jsDoc = node.jsDoc?.at(-1);
  return jsDoc ? parseComment(source.text.slice(jsDoc.pos, jsDoc.end)) : null;
}

/**
 * The declarations of one entry point: { file, name, line, kind, exported,
 * doc: { summary, tags } | null } (those without `export` are helper types
 * the reference shows where they are used). Overloads count once (the first
 * documented one speaks for all); a type alias named like an exported
 * constant (`RuntimeError`: the error classes) is that constant's type and
 * is documented with it; re-exports (`export { ... } from`) are documented
 * where they are declared.
 */
export function apiDeclarations(file) {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const constants = new Set();
  const byName = new Map();
  for (const node of source.statements) {
    if (ts.isExportDeclaration(node) || ts.isImportDeclaration(node)) continue;
    const name = exportedName(node);
    if (name === null) continue;
    if (ts.isVariableStatement(node)) constants.add(name);
    // A .d.ts module exports its other declarations too (the reference shows them): helpers such as HostURL.
    const entry = { file, name, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, kind: ts.SyntaxKind[node.kind], doc: docOf(node, source), node, exported: isExported(node) };
    const seen = byName.get(name);
    if (!seen) byName.set(name, entry);
    else if (!seen.doc && entry.doc && seen.kind === entry.kind) byName.set(name, { ...entry, line: seen.line });
  }
  const decls = [...byName.values()].filter((d) => !(d.kind === 'TypeAliasDeclaration' && constants.has(d.name)));
  return [...moduleDocs(file, source), ...decls];
}

/** The module comment (`@module NAME`) of a file, as a declaration named NAME: its summary and example are the page's. */
function moduleDocs(file, source) {
  for (const node of source.statements) {
    for (const jsDoc of node.jsDoc ?? []) {
      const doc = parseComment(source.text.slice(jsDoc.pos, jsDoc.end));
      const tag = doc.tags.find((t) => t.tag === 'module');
      if (tag) return [{ file, name: tag.text, line: source.getLineAndCharacterOfPosition(jsDoc.pos).line + 1, kind: 'Module', doc, node, exported: true }];
    }
  }
  return [{ file, name: file, line: 1, kind: 'Module', doc: null, node: source, exported: true }];
}

/** The members of an exported interface, each as a declaration of its own (the `webgpu.*` kernels). */
export function memberDeclarations(file, name) {
  const decl = apiDeclarations(file).find((d) => d.name === name);
  if (!decl) return [];
  const source = decl.node.getSourceFile();
  return decl.node.members.map((m) => ({
    file, name: m.name.getText().replace(/^["']|["']$/g, ''), line: source.getLineAndCharacterOfPosition(m.getStart()).line + 1,
    kind: ts.SyntaxKind[m.kind], doc: docOf(m, source), node: m, exported: true,
  }));
}

/** Every declaration whose doc comment the reference shows: the exports, and the kernels one by one. */
export function documentedDeclarations() {
  return [...API_ENTRY_POINTS.flatMap(apiDeclarations), ...memberDeclarations(KERNEL_GLOBALS.file, KERNEL_GLOBALS.name)];
}

/** The @example sections of a declaration, each as its blocks. */
export function examplesOf(decl) {
  return (decl.doc?.tags ?? []).filter((t) => t.tag === 'example').map((t) => exampleBlocks(t.text));
}

/** Whether a declaration's comment hides it from the reference. */
export const isHidden = (decl) => (decl.doc?.tags ?? []).some((t) => ['hidden', 'ignore', 'internal'].includes(t.tag));
