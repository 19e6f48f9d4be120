/* Host entropy natively: getrandom(2) where the C library has it, else
 * /dev/urandom. */
#include <errno.h>
#include <stdio.h>

#include "../hash.h"

#if defined(__linux__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
#include <sys/random.h>
#define WF_HAVE_GETRANDOM 1
#endif

int wf_platform_entropy(void* buf, size_t n) {
  unsigned char* p = (unsigned char*)buf;
#ifdef WF_HAVE_GETRANDOM
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(p + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += (size_t)r;
  }
  if (got == n) return 0;
#endif
  FILE* f = fopen("/dev/urandom", "rb");
  if (f == NULL) return -1;
  size_t read = fread(p, 1, n, f);
  fclose(f);
  return read == n ? 0 : -1;
}
