/* A bump allocator for per-request and per-batch lifetimes.
 *
 * Everything allocated from an arena is freed at once by floe_arena_reset or
 * floe_arena_free; nothing is freed individually.  Decoded requests borrow
 * from the receive buffer and put their own allocations here.
 * An optional cap bounds the total bytes handed out, so sizes read from the
 * wire cannot exhaust memory: past the cap, allocation returns NULL. */
#ifndef FLOE_UTIL_ARENA_H
#define FLOE_UTIL_ARENA_H

#include <stddef.h>

typedef struct floe_arena_block floe_arena_block_t;

typedef struct floe_arena {
    floe_arena_block_t *head; /* current block; older blocks chained */
    size_t block_size;        /* default size of new blocks */
    size_t used;              /* bytes handed out since the last reset */
    size_t cap;               /* 0 = unlimited */
} floe_arena_t;

/* block_size 0 picks 16 KiB; cap 0 means no cap. */
void floe_arena_init(floe_arena_t *a, size_t block_size, size_t cap);

/* n bytes aligned to 16, or NULL when out of memory or past the cap.
 * Valid until the next reset or free. */
void *floe_arena_alloc(floe_arena_t *a, size_t n);
void *floe_arena_calloc(floe_arena_t *a, size_t count, size_t size);
/* Copy n bytes (plus a NUL) into the arena; returns NULL on failure. */
char *floe_arena_strndup(floe_arena_t *a, const char *s, size_t n);

/* Forget every allocation but keep the first block for reuse. */
void floe_arena_reset(floe_arena_t *a);
void floe_arena_free(floe_arena_t *a);

#endif
