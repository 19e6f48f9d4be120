/* Shortest round-trip float printing, in the forms Python's repr uses:
 * fixed notation for exponents in [-4, 16), scientific otherwise. */
#include "float_format.h"

#include <float.h>
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
  if (v == 0) {
    wf_buf_puts(out, signbit(v) ? "-0.0" : "0.0");
    return;
  }
  /* Significant digits: when p digits read back exactly, the p-digit
   * rounding with its trailing zeros dropped is the shortest form, since a
   * double is far closer to its shortest decimal than p digits can tell
   * apart (p <= 17). So at most three tries; subnormals carry fewer
   * digits, so for them every length is tried. */
  char sci[40];
  for (int p = fabs(v) < DBL_MIN ? 1 : 15; p <= 17; ++p) {
    snprintf(sci, sizeof(sci), "%.*e", p - 1, v);
    if (strtod(sci, NULL) == v) break;
  }
  /* sci is [-]D.DDDDe[+-]XX: split into sign, digits and exponent. */
  const char* p = sci;
  int negative = *p == '-';
  if (negative) ++p;
  char digits[20];
  int n = 0;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits[n++] = *p;
  }
  int exp10 = atoi(p + 1);
  while (n > 1 && digits[n - 1] == '0') --n;

  char text[400];
  int at = 0;
  if (negative) text[at++] = '-';
  if (exp10 >= 16 || exp10 < -4) {
    /* 1e+300, 1.5e-07 */
    text[at++] = digits[0];
    if (n > 1) {
      text[at++] = '.';
      memcpy(text + at, digits + 1, (size_t)(n - 1));
      at += n - 1;
    }
    at += snprintf(text + at, sizeof(text) - (size_t)at, "e%c%02d", exp10 < 0 ? '-' : '+',
                   exp10 < 0 ? -exp10 : exp10);
  } else if (exp10 < 0) {
    /* 0.00123 */
    text[at++] = '0';
    text[at++] = '.';
    for (int i = -1; i > exp10; --i) text[at++] = '0';
    memcpy(text + at, digits, (size_t)n);
    at += n;
  } else {
    /* 123.45, and 5.0 for whole numbers so they read back as floats */
    for (int i = 0; i <= exp10; ++i) text[at++] = i < n ? digits[i] : '0';
    text[at++] = '.';
    if (n > exp10 + 1) {
      memcpy(text + at, digits + exp10 + 1, (size_t)(n - exp10 - 1));
      at += n - exp10 - 1;
    } else {
      text[at++] = '0';
    }
  }
  wf_buf_append(out, text, (size_t)at);
}
