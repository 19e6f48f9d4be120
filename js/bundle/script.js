// dist/webffi.iife.js: what js/index.js exports, with TVM RPC and the WebGPU
// backend in parts of their own that load on first use (scripts/bundle.mjs
// swaps them in), and loadRPC() to load the former ahead.
export * from '../index.js';
export { loadRPC } from './rpc_lazy.js';
