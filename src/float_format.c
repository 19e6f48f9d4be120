/* Shortest round-trip float printing. */
#include "float_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wf_float_format(double v, wf_buf* out) {
  if (isnan(v)) {
    wf_buf_puts(out, "NaN");
    return;
  }
  if (isinf(v)) {
    wf_buf_puts(out, v < 0 ? "-Infinity" : "Infinity");
    return;
  }
  char text[32];
  /* The fewest digits that read back exactly. */
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(text, sizeof(text), "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
  wf_buf_puts(out, text);
  /* `5` would read back as an int: say `5.0` (and `1e+20` stays a float). */
  if (strpbrk(text, ".eEn") == NULL) wf_buf_puts(out, ".0");
}
