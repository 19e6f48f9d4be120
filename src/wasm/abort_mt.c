/* abort() for the threaded core. Emscripten's threaded C library leaves
 * abort to its JS, which webffi does not use; modules loaded at run time
 * import abort from the runtime (cmake/main_exports.txt), so it is defined
 * here as the single-threaded core's C library ends it: a trap, which the
 * JS glue reports (and which poisons the instance). */
#include <stdlib.h>

_Noreturn void abort(void) { __builtin_trap(); }
