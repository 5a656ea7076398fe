/* big_alloc.c — page hints for big arrays (madvise).
 *
 * Why: a first touch costs per page, not per byte (on the virtual machines
 * this was measured on, memset of fresh memory ran at 0.3 GB/s with 4 KiB
 * pages and 9 GB/s with 2 MiB ones), and writes scattered over many places
 * at once (the CSR builder's buckets) miss the TLB on 4 KiB pages. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "big_alloc.h"

void sc_big_huge(void *p, size_t nbytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
  uintptr_t hi = ((uintptr_t)p + nbytes) & ~(huge - 1);
  if (p && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p, (void)nbytes;
#endif
}

void sc_big_populate(void *p, size_t off, size_t len) {
  sc_big_huge(p ? (char *)p + off : NULL, len);
#ifdef MADV_POPULATE_WRITE
  const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = ((uintptr_t)p + off) & ~(pg - 1), hi = (uintptr_t)p + off + len;
  if (p && len >= 64 * pg) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
  (void)p, (void)off, (void)len;
#endif
}
