// A classic worker hosting its own runtime: its global functions are called
// from the page through a session (see web/index.html).
importScripts('../dist/webffi.iife.js');
webffi.serve(webffi.load(), self);
