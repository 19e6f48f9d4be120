/* Shortest round-trip float printing, in the forms Python's repr uses:
 * fixed notation for exponents in [-4, 16), scientific otherwise. */
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
  char sci[40], text[400];
  int digits = 1;
  /* The fewest significant digits that read back exactly. */
  for (; digits < 17; ++digits) {
    snprintf(sci, sizeof(sci), "%.*e", digits - 1, v);
    if (strtod(sci, NULL) == v) break;
  }
  snprintf(sci, sizeof(sci), "%.*e", digits - 1, v);
  int exp10 = atoi(strchr(sci, 'e') + 1);
  if (exp10 >= -4 && exp10 < 16) {
    int decimals = digits - 1 - exp10;
    snprintf(text, sizeof(text), "%.*f", decimals > 0 ? decimals : 0, v);
  } else {
    /* `1e+300`, `1.5e-07` */
    snprintf(text, sizeof(text), "%s", sci);
  }
  wf_buf_puts(out, text);
  /* `5` would read back as an int: say `5.0` (`1e+20` is a float already). */
  if (strpbrk(text, ".e") == NULL) wf_buf_puts(out, ".0");
}
