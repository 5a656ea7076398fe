/* huge_pages.c — restart once with glibc.malloc.hugetlb=1 (see huge_pages.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "huge_pages.h"

#define TUNABLE "glibc.malloc.hugetlb"

/* What the restart adds to GLIBC_TUNABLES: huge pages for the heap and for
 * mapped blocks of 2 MiB or more; blocks below 32 MiB from the heap (not
 * each its own mapping, which glibc leaves on 4 KiB pages below 2 MiB), and
 * freed heap memory kept for reuse (not given back and faulted in again). */
#define TUNABLES TUNABLE "=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define HP_SANITIZED 1
#endif
#endif
#ifndef HP_SANITIZED
#define HP_SANITIZED 0
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) && !HP_SANITIZED
#define HP_RESTART 1
#else
#define HP_RESTART 0
#endif

#if HP_RESTART
/* Whether the kernel gives huge pages to a region that asks (THP mode
 * "always" or "madvise", not "never"). */
static int kernel_has_thp(void) {
  char mode[128] = {0};
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  size_t n = fread(mode, 1, sizeof mode - 1, f);
  fclose(f);
  mode[n] = 0;
  return strstr(mode, "[never]") == NULL && strchr(mode, '[') != NULL;
}
#endif

void huge_pages_restart(char **argv) {
#if HP_RESTART
  const char *off = getenv("SHIRO_HUGEPAGES"), *old = getenv("GLIBC_TUNABLES");
  const char *pre = getenv("LD_PRELOAD");
  if ((off && strcmp(off, "0") == 0) || (old && strstr(old, TUNABLE)) || (pre && strstr(pre, "vgpreload")) ||
      !kernel_has_thp())
    return;
  size_t len = (old ? strlen(old) + 1 : 0) + sizeof TUNABLES;
  char *val = malloc(len);
  if (!val) return;
  snprintf(val, len, "%s%s" TUNABLES, old ? old : "", old && *old ? ":" : "");
  char *keep = old ? strdup(old) : NULL;
  if (setenv("GLIBC_TUNABLES", val, 1) == 0) execv("/proc/self/exe", argv);
  /* still here: the exec failed; go on as we were */
  if (keep) setenv("GLIBC_TUNABLES", keep, 1);
  else unsetenv("GLIBC_TUNABLES");
  free(keep);
  free(val);
#else
  (void)argv;
#endif
}
