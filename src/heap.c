/* Heap access for hosts that marshal values into the runtime's memory. */
#include <stdlib.h>
#include <webffi/webffi.h>

#include "object.h"

void* WebFFIHeapAlloc(size_t size) { return malloc(size); }

void WebFFIHeapFree(void* ptr) { free(ptr); }

uint32_t WebFFIObjectStrongCount(TVMFFIObjectHandle obj) {
  return obj != NULL ? wf_obj_strong_count((const TVMFFIObject*)obj) : 0;
}
