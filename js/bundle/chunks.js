// The script bundle's parts that load on first use (scripts/bundle.mjs):
// dist/webffi.NAME.js next to dist/webffi.iife.js, a classic script that
// hands its body to the function below. Its imports of modules this bundle
// already holds are resolved to this bundle's own copies (the registry
// scripts/bundle.mjs generates), so classes, registries and errors are
// shared: nothing is loaded twice. On a page the part is a <script>
// element; in a classic worker, importScripts; elsewhere (a module worker,
// Node), import(). A file next to the bundle is all it needs: no network.
import shared from 'webffi:shared';
import { scriptUrl, scriptNonce } from './locate_script.js';
import { RuntimeError } from '../errors.js';

const DEFINE = Symbol.for('webffi.part');
const SHARED = 'webffi-shared:';
const parts = new Map(); // name -> Promise of its exports
const waiting = new Map(); // name -> { resolve, reject }

function define(name, body) {
  const w = waiting.get(name);
  if (!w) return;
  waiting.delete(name);
  try {
    const module = { exports: {} };
    const require = (id) => {
      const m = id.startsWith(SHARED) ? shared[id.slice(SHARED.length)] : undefined;
      if (!m) throw new RuntimeError(`webffi: the script bundle's ${name} part asks for ${id}, which this bundle lacks (a part from another build of webffi?)`);
      return m;
    };
    body(require, module, module.exports);
    w.resolve(module.exports);
  } catch (e) {
    w.reject(e);
  }
}

/** The URL of a part: next to this script. */
export const partUrl = (name) => new URL(`webffi.${name}.js`, scriptUrl);

function inject(name, url, fail) {
  if (typeof document !== 'undefined' && document.createElement) {
    const s = document.createElement('script');
    s.src = url.href;
    s.async = true;
    if (scriptNonce) s.nonce = scriptNonce;
    s.onload = () => {
      s.remove();
      fail('it ran without defining the part');
    };
    s.onerror = () => {
      s.remove();
      fail('the file could not be loaded');
    };
    (document.head ?? document.documentElement).append(s);
    return;
  }
  if (typeof importScripts === 'function') {
    try {
      importScripts(url.href); // a classic worker: synchronous
      fail('it ran without defining the part');
      return;
    } catch (e) {
      if (!(e instanceof TypeError) || waiting.has(name) === false) return fail(e?.message ?? String(e));
      // a module worker has importScripts but refuses it: import() below
    }
  }
  import(/* webpackIgnore: true */ url.href).then(() => fail('it ran without defining the part'),
    (e) => fail(e?.message ?? String(e)));
}

/** Loads part `name` once (a failed load is tried again on the next call); resolves with its exports. */
export function loadPart(name) {
  let p = parts.get(name);
  if (p) return p;
  globalThis[DEFINE] = define;
  const url = partUrl(name);
  p = new Promise((resolve, reject) => {
    waiting.set(name, { resolve, reject });
    inject(name, url, (why) => {
      const w = waiting.get(name);
      if (!w) return; // defined
      waiting.delete(name);
      w.reject(new RuntimeError(`webffi: cannot load ${url}, the script bundle's ${name} part ` +
        `(dist/webffi.${name}.js, which belongs next to dist/webffi.iife.js): ${why}`));
    });
  });
  parts.set(name, p);
  p.catch(() => parts.delete(name));
  return p;
}
