/* How deep recursive algorithms (equality, hashing, repr, copies, JSON) may
 * nest. Deeper input is a ValueError, never a stack overflow: wasm stacks
 * are small (64 KiB by default with wasm-ld). */
#ifndef WEBFFI_SRC_NESTING_H_
#define WEBFFI_SRC_NESTING_H_

#define WF_MAX_NESTING 256

#endif /* WEBFFI_SRC_NESTING_H_ */
