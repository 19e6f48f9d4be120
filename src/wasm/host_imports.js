// Tells Emscripten's linker that these import names (see host_imports.h) are
// provided by the host, the webffi JS glue, under import module "webffi".
mergeInto(LibraryManager.library, {
  backtrace: function () {},
  backtrace_capture: function () {},
  backtrace_frames: function () {},
  backtrace_drop: function () {},
  call_js: function () {},
  release_js: function () {},
  // the threaded core's workers instantiate modules loaded at run time (src/parallel.c)
  replay_loads: function () {},
  // WASI's random_get (src/wasm/entropy_wasm.c), which Emscripten 3.1.6's
  // own WASI library lacks; js/wasi.js provides it.
  random_get: function () {},
});
