// A classic worker hosting its own runtime: its global functions are called
// from the page through a session (see web/index.html). The demo calls two
// test globals, which a peer reaches only when they are exposed by name.
importScripts('../dist/webffi.iife.js');
webffi.serve(webffi.load(), self, { expose: ['testing.add_one', 'testing.test_raise_error'] });
