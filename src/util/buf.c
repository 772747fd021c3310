#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int floe_buf_reserve(floe_buf_t *b, size_t extra)
{
    return floe_buf_reserve_settle(b, extra, SIZE_MAX);
}

int floe_buf_reserve_settle(floe_buf_t *b, size_t extra, size_t settle)
{
    if (extra <= b->cap - b->len) return 0;
    if (extra > SIZE_MAX / 4 - b->len) return -1;
    size_t need = b->len + extra;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    if (cap > settle) cap = need <= settle ? settle : need + need / 8;
    uint8_t *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int floe_buf_append(floe_buf_t *b, const void *p, size_t n)
{
    if (n == 0) return 0;
    if (floe_buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int floe_buf_append_u8(floe_buf_t *b, uint8_t v)
{
    return floe_buf_append(b, &v, 1);
}

int floe_buf_append_str(floe_buf_t *b, const char *s)
{
    return floe_buf_append(b, s, strlen(s));
}

int floe_buf_printf(floe_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || floe_buf_reserve(b, (size_t)n + 1) < 0) return -1;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int floe_buf_append_be16(floe_buf_t *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    return floe_buf_append(b, x, 2);
}

int floe_buf_append_be32(floe_buf_t *b, uint32_t v)
{
    uint8_t x[4];
    floe_wr_be32(x, v);
    return floe_buf_append(b, x, 4);
}

int floe_buf_append_be64(floe_buf_t *b, uint64_t v)
{
    uint8_t x[8];
    floe_wr_be64(x, v);
    return floe_buf_append(b, x, 8);
}

int floe_buf_append_le32(floe_buf_t *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return floe_buf_append(b, x, 4);
}

int floe_buf_append_le64(floe_buf_t *b, uint64_t v)
{
    if (floe_buf_append_le32(b, (uint32_t)v) < 0) return -1;
    return floe_buf_append_le32(b, (uint32_t)(v >> 32));
}

char *floe_buf_cstr(floe_buf_t *b)
{
    if (floe_buf_reserve(b, 1) < 0) return NULL;
    b->data[b->len] = '\0';
    return (char *)b->data;
}

uint8_t *floe_buf_detach(floe_buf_t *b, size_t *len)
{
    uint8_t *p = b->data;
    if (len) *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void floe_buf_free(floe_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
