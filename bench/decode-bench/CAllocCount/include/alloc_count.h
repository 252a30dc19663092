#ifndef VAULTSYNC_ALLOC_COUNT_H
#define VAULTSYNC_ALLOC_COUNT_H

/* Counts of heap allocations made by this process since the last reset, through the interposed malloc family in
 * alloc_count.c. An allocation is a call of malloc, calloc, realloc (a new or moved block), posix_memalign,
 * aligned_alloc or memalign; free(NULL) is not counted. */
typedef struct {
    unsigned long long allocations;
    unsigned long long frees;
    unsigned long long bytes;
} alloc_counts;

void alloc_count_reset(void);
alloc_counts alloc_count_read(void);

#endif
