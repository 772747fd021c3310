#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct floe_arena_block {
    floe_arena_block_t *prev;
    size_t size, off;
    _Alignas(16) unsigned char data[];
};

void floe_arena_init(floe_arena_t *a, size_t block_size, size_t cap)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 16 * 1024;
    a->used = 0;
    a->cap = cap;
}

void *floe_arena_alloc(floe_arena_t *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n) return NULL;
    if (a->cap && (need > a->cap || a->used > a->cap - need)) return NULL;
    floe_arena_block_t *b = a->head;
    if (!b || b->size - b->off < need) {
        size_t size = need > a->block_size ? need : a->block_size;
        if (size > SIZE_MAX - sizeof *b) return NULL;
        floe_arena_block_t *nb = malloc(sizeof *nb + size);
        if (!nb) return NULL;
        nb->prev = b;
        nb->size = size;
        nb->off = 0;
        a->head = b = nb;
    }
    void *p = b->data + b->off;
    b->off += need;
    a->used += need;
    return p;
}

void *floe_arena_calloc(floe_arena_t *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = floe_arena_alloc(a, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

char *floe_arena_strndup(floe_arena_t *a, const char *s, size_t n)
{
    char *p = floe_arena_alloc(a, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void floe_arena_reset(floe_arena_t *a)
{
    floe_arena_block_t *b = a->head;
    if (!b) return;
    /* keep the oldest block: it is the one sized for the common case */
    while (b->prev) {
        floe_arena_block_t *prev = b->prev;
        free(b);
        b = prev;
    }
    b->off = 0;
    a->head = b;
    a->used = 0;
}

void floe_arena_free(floe_arena_t *a)
{
    floe_arena_block_t *b = a->head;
    while (b) {
        floe_arena_block_t *prev = b->prev;
        free(b);
        b = prev;
    }
    a->head = NULL;
    a->used = 0;
}
