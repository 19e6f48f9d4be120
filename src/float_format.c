/* Floats as text, byte for byte as upstream tvm-ffi writes them: its JSON
 * writer's rules, and a C++ ostream's default (which is printf's %g). */
#include "float_format.h"

#include <math.h>

void wf_float_format_json(double v, wf_buf* out) {
  if (isnan(v)) {
    wf_buf_puts(out, "NaN");
  } else if (isinf(v)) {
    wf_buf_puts(out, v < 0 ? "-Infinity" : "Infinity");
  } else if (fabs(v) < 9007199254740992.0 && v == trunc(v)) {
    /* whole: `.0` keeps it a float when read back */
    wf_buf_printf(out, "%.1f", v);
  } else {
    wf_buf_printf(out, "%.17g", v);
  }
}

void wf_float_format_repr(double v, wf_buf* out) { wf_buf_printf(out, "%g", v); }
