/* Interposes glibc's allocator for the decode benchmark: each entry point counts, then calls glibc's own
 * implementation (__libc_malloc and friends, exported by glibc for exactly this). The executable's definitions win
 * over libc's at dynamic symbol resolution, so the Swift runtime's allocations are counted too. Linux/glibc only;
 * elsewhere this file is empty and the counts stay zero. */
#include "alloc_count.h"

#include <errno.h> /* also defines __GLIBC__ on glibc */
#include <stddef.h>

#if defined(__linux__) && defined(__GLIBC__)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

/* Relaxed atomics: the counts are read on the benchmark's own thread after the work it measures. */
static unsigned long long allocations, frees, bytes;

static inline void counted(size_t size) {
    __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes, size, __ATOMIC_RELAXED);
}

void *malloc(size_t size) {
    counted(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    counted(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *old, size_t size) {
    void *p = __libc_realloc(old, size);
    if (p != old) counted(size);
    return p;
}

void free(void *p) {
    if (p) __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

void *memalign(size_t alignment, size_t size) {
    counted(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    counted(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    counted(size);
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

/* SwiftPM links executables with --gc-sections: nothing in the program calls these by name, so without a reference
 * from code that is kept they would be dropped and glibc's would run uncounted. */
void *const alloc_count_entry_points[] = {
    (void *)malloc, (void *)calloc, (void *)realloc, (void *)free,
    (void *)memalign, (void *)aligned_alloc, (void *)posix_memalign,
};

void alloc_count_reset(void) {
    __asm__ volatile("" : : "r"(alloc_count_entry_points) : "memory");
    __atomic_store_n(&allocations, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&frees, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&bytes, 0, __ATOMIC_RELAXED);
}

alloc_counts alloc_count_read(void) {
    alloc_counts c = {
        __atomic_load_n(&allocations, __ATOMIC_RELAXED),
        __atomic_load_n(&frees, __ATOMIC_RELAXED),
        __atomic_load_n(&bytes, __ATOMIC_RELAXED),
    };
    return c;
}
#else
void alloc_count_reset(void) {}
alloc_counts alloc_count_read(void) {
    alloc_counts c = {0, 0, 0};
    return c;
}
#endif
