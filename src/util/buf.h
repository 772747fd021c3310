/* Growable byte buffers and borrowed slices.
 *
 * floe_buf_t owns its bytes (caller frees with floe_buf_free).  floe_slice_t
 * borrows: it is valid only while the memory it points into is. */
#ifndef FLOE_UTIL_BUF_H
#define FLOE_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct floe_slice {
    const uint8_t *ptr;
    size_t len;
} floe_slice_t;

typedef struct floe_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} floe_buf_t;

#define FLOE_BUF_INIT \
    {                 \
        NULL, 0, 0    \
    }

static inline floe_slice_t floe_slice(const void *p, size_t n)
{
    floe_slice_t s = {(const uint8_t *)p, n};
    return s;
}

static inline floe_slice_t floe_slice_str(const char *s)
{
    return floe_slice(s, s ? strlen(s) : 0);
}

static inline int floe_slice_eq(floe_slice_t a, floe_slice_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Ensure room for `extra` more bytes past len.  Returns 0, or -1 when the
 * allocation fails (the buffer is unchanged). */
int floe_buf_reserve(floe_buf_t *b, size_t extra);
/* The same for a buffer that is emptied each time it reaches about
 * `settle` bytes (a page being built, a page compressed): growth stops at
 * settle instead of overshooting to the next power of two, and past it
 * adds only what is needed plus an eighth. */
int floe_buf_reserve_settle(floe_buf_t *b, size_t extra, size_t settle);

/* Append n bytes.  Returns 0 or -1 on allocation failure. */
int floe_buf_append(floe_buf_t *b, const void *p, size_t n);
int floe_buf_append_u8(floe_buf_t *b, uint8_t v);
int floe_buf_append_str(floe_buf_t *b, const char *s);
int floe_buf_printf(floe_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Big-endian fixed-width appends (Kafka and Thrift use network order). */
int floe_buf_append_be16(floe_buf_t *b, uint16_t v);
int floe_buf_append_be32(floe_buf_t *b, uint32_t v);
int floe_buf_append_be64(floe_buf_t *b, uint64_t v);
/* Little-endian fixed-width appends (Parquet, Avro). */
int floe_buf_append_le32(floe_buf_t *b, uint32_t v);
int floe_buf_append_le64(floe_buf_t *b, uint64_t v);

/* Make the buffer hold a terminating NUL past len (not counted in len) and
 * return data as a C string.  Returns NULL on allocation failure. */
char *floe_buf_cstr(floe_buf_t *b);

/* Hand the bytes to the caller (who frees them with free()) and reset. */
uint8_t *floe_buf_detach(floe_buf_t *b, size_t *len);

static inline void floe_buf_reset(floe_buf_t *b)
{
    b->len = 0;
}
static inline floe_slice_t floe_buf_slice(const floe_buf_t *b)
{
    return floe_slice(b->data, b->len);
}
void floe_buf_free(floe_buf_t *b);

/* Fixed-width reads from raw bytes; callers check lengths first. */
static inline uint16_t floe_rd_be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t floe_rd_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t floe_rd_be64(const uint8_t *p)
{
    return ((uint64_t)floe_rd_be32(p) << 32) | floe_rd_be32(p + 4);
}
static inline uint32_t floe_rd_le32(const uint8_t *p)
{
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}
static inline uint64_t floe_rd_le64(const uint8_t *p)
{
    return ((uint64_t)floe_rd_le32(p + 4) << 32) | floe_rd_le32(p);
}
static inline void floe_wr_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void floe_wr_be64(uint8_t *p, uint64_t v)
{
    floe_wr_be32(p, (uint32_t)(v >> 32));
    floe_wr_be32(p + 4, (uint32_t)v);
}

#endif
