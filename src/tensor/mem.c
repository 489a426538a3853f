// mem.c: see mem.h.
#define _DEFAULT_SOURCE  // madvise's MADV_HUGEPAGE
#include "mem.h"

#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

enum { HUGE_PAGE = 2 * 1024 * 1024 };

void mem_prefer_huge(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || bytes < 2 * (size_t)HUGE_PAGE) return;
    const uintptr_t from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    const uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (to > from) (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

void mem_setup(void) {
#if defined(__GLIBC__)
    (void)mallopt(M_MMAP_THRESHOLD, 1024 * 1024);  // fixed: no longer raised by what is freed
#endif
}
