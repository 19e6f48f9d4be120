// locate.js for the classic-script bundle (dist/webffi.iife.js): the wasm sits
// next to the script. A page knows its current script; a classic worker's
// importScripts does not say, but the script's URL is in its own stack.
const stackUrl = () => /((?:https?|file|blob):[^\s()]+?)(?::\d+){1,2}\)?\s*$/m.exec(new Error().stack ?? '')?.[1];

/** This script's own URL, taken while it runs (the parts it loads later sit next to it: js/bundle/chunks.js). */
export const scriptUrl = (typeof document !== 'undefined' && document.currentScript?.src) ||
  stackUrl() || globalThis.location?.href;

export const defaultWasmUrl = () => new URL('webffi.wasm', scriptUrl);
export const defaultThreadedWasmUrl = () => new URL('webffi-mt.wasm', scriptUrl);
/** The nonce of this script's tag, for the parts' tags on a page whose CSP names scripts by nonce (js/bundle/chunks.js). */
export const scriptNonce = (typeof document !== 'undefined' && document.currentScript?.nonce) || '';
