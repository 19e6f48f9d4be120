// locate.js for the CommonJS bundle (dist/webffi.cjs), which sits next to the wasm.
/* global __dirname */
import { pathToFileURL } from 'node:url';

export const defaultWasmUrl = () => pathToFileURL(`${__dirname}/webffi.wasm`);
