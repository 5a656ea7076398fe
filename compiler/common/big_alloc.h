/* big_alloc.h — page hints for the compiler's big arrays: transparent huge
 * pages, and mapping a range in at once rather than a page fault at a time.
 * Only hints: each call is a no-op where the kernel lacks the feature, and a
 * failure changes nothing but the speed. */
#ifndef SHIRO_BIG_ALLOC_H
#define SHIRO_BIG_ALLOC_H

#include <stddef.h>

/* Maps the pages of bytes [off, off+len) of the block at p now, writable
 * and zeroed, in one system call (MADV_POPULATE_WRITE), instead of one
 * page fault per page as they are first written, and asks for transparent
 * huge pages on the range's 2 MiB-aligned interior (MADV_HUGEPAGE): a page
 * fault costs about a microsecond, tens of them in some virtual machines,
 * so populating what is about to be written, in as few pages as possible,
 * pays. Ranges under 64 pages are only given the huge-page hint. Local; a
 * no-op where unsupported or for p == NULL. */
void sc_big_populate(void *p, size_t off, size_t len);

/* Asks for transparent huge pages on the 2 MiB-aligned interior of the
 * block p of nbytes (MADV_HUGEPAGE), before any of it is touched: then
 * sc_big_populate on any range of it, or first writes, map 2 MiB pages,
 * not only on the aligned interior of each range (a block populated piece
 * by piece, as it fills, would otherwise get 4 KiB pages at the edge of
 * every piece, and all of them where the pieces are under 4 MiB). Local;
 * a no-op where unsupported or for p == NULL. */
void sc_big_huge(void *p, size_t nbytes);

#endif
