// mem.h: large buffers on the kernel's 2 MB pages, where it allows them.
//
// A trace recomputed under its budget writes its outputs into fresh memory: an attention map of
// GPT-2 at 1024 tokens is 48 MB, which in 4 KB pages is 12 288 page faults on its first write,
// about 12 ms of a 50 ms step. Linux's transparent huge pages in their "madvise" mode (Debian's
// default) serve a buffer that asks in 2 MB pages: 24 faults. Elsewhere (the browser) this does
// nothing. The contents and the bits computed into them do not change.
#ifndef STEPFORMER_MEM_H
#define STEPFORMER_MEM_H

#include <stddef.h>

// Asks for huge pages over the 2 MB-aligned part of [p, p + bytes), when it holds at least two;
// only advice: nothing happens where the kernel has none or refuses.
void mem_prefer_huge(void *p, size_t bytes);

// For a program (the command line's main; a library leaves the process's allocator alone):
// buffers of 1 MB and more from mappings of their own, returned to the system when freed. glibc
// by default raises that threshold to the largest buffer freed (up to 32 MB); after which a
// budgeted trace's 3 to 12 MB outputs come from the heap, and the holes its drops leave there
// are never returned: `run` on GPT-2 at 1023 tokens under --trace-mb 512 peaked at 1.40 GB,
// with a fixed threshold 1.21 GB. Nothing elsewhere.
void mem_setup(void);

#endif
