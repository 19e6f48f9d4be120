/* Plain JSON <-> values: objects are Maps (string keys, in document order),
 * arrays are Arrays, integers Int, other numbers Float (NaN, Infinity and
 * -Infinity included, as upstream), strings String. The parser treats its
 * input as hostile: bounded nesting and size, strict UTF-8, ValueErrors. */
#ifndef WEBFFI_SRC_JSON_H_
#define WEBFFI_SRC_JSON_H_

#include <tvm/ffi/c_api.h>

#include "buffer.h"

/* Largest input the parser accepts. */
#define WF_JSON_MAX_INPUT (256u << 20)

int wf_json_parse(const char* data, size_t n, TVMFFIAny* out);

/* Appends v as JSON; indent < 0 is compact. TypeError for values with no
 * JSON form, ValueError when nesting is too deep. */
int wf_json_write(const TVMFFIAny* v, int indent, wf_buf* out);

/* Appends s[0..n) as a JSON string literal, escaped as upstream's
 * json::Stringify does (`/` and DEL included). */
void wf_json_quoted(const char* s, size_t n, wf_buf* out);

/* Registers ffi.json.Parse and ffi.json.Stringify. */
int wf_json_register(void);

#endif /* WEBFFI_SRC_JSON_H_ */
