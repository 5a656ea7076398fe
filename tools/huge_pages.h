/* huge_pages.h — run the planner's heap on transparent huge pages. */
#ifndef SHIRO_HUGE_PAGES_H
#define SHIRO_HUGE_PAGES_H

/* Restarts the program at once (execv of /proc/self/exe with the same
 * argv) with glibc's malloc asked to back its heap and large blocks with
 * transparent huge pages (GLIBC_TUNABLES gains glibc.malloc.hugetlb=1, and
 * blocks under 32 MiB from the heap, freed memory kept for reuse; tunables
 * glibc reads only at start). Call it first thing in main, before
 * anything is printed or opened. Returns (doing nothing) when the
 * environment already names that tunable (the restarted process), when
 * SHIRO_HUGEPAGES=0, when the kernel has huge pages off, under a sanitizer
 * or valgrind (their allocators ignore it), off glibc, or when the exec
 * fails. Why: the planner fills hundreds of thousands of fresh 4 KiB pages,
 * and a page fault costs about a microsecond on bare metal and ten in some
 * virtual machines; measured here on an R-MAT scale-18 plan, 66,655 faults
 * became 3,040. */
void huge_pages_restart(char **argv);

#endif
