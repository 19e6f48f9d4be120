/* Floats as text, byte for byte as upstream tvm-ffi writes them: its JSON
 * writer's rules, and a C++ ostream's default (which is printf's %g). */
#include "float_format.h"

#include <math.h>
#include <string.h>

void wf_float_format_json(double v, wf_buf* out) {
  if (isnan(v)) {
    wf_buf_puts(out, "NaN");
  } else if (isinf(v)) {
    wf_buf_puts(out, v < 0 ? "-Infinity" : "Infinity");
  } else if (fabs(v) < 9007199254740992.0 && v == trunc(v)) {
    /* whole: `.0` keeps it a float when read back */
    wf_buf_printf(out, "%.1f", v);
  } else {
    size_t start = out->size;
    wf_buf_printf(out, "%.17g", v);
    /* A whole number from 2^53 to 1e17 prints as plain digits, which upstream
     * reads back as an int; `.0` keeps it a float (the one place we differ). */
    if (!out->failed && strcspn(out->data + start, ".e") == out->size - start) wf_buf_puts(out, ".0");
  }
}

void wf_float_format_repr(double v, wf_buf* out) { wf_buf_printf(out, "%g", v); }
