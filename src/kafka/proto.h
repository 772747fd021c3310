/* Kafka wire codecs, interpreted from the message declaration.
 *
 * src/kafka/messages.def declares every API floe speaks; tools/kafka_gen.py
 * turns it into typed C structs (proto_gen.h) and field tables (proto_gen.c).
 * This file holds the value types those structs use and the one interpreter
 * that decodes and encodes any message at any declared version: there is no
 * hand-written per-version code.
 *
 * Decoding borrows: bytes/records fields point into the input buffer and stay
 * valid only as long as it does.  Strings are copied into the arena with a
 * terminating NUL (handy for lookups and logs).  Arrays live in the arena.
 * Everything decoded is freed at once with the arena. */
#ifndef FLOE_KAFKA_PROTO_H
#define FLOE_KAFKA_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* A Kafka string.  len < 0 means null (ptr NULL).  Decoded strings are
 * NUL-terminated; strings built for encoding need not be. */
typedef struct floe_kstr {
    const char *ptr;
    int32_t len;
} floe_kstr_t;

/* Bytes / records.  len < 0 means null. */
typedef struct floe_kbytes {
    const uint8_t *ptr;
    int32_t len;
} floe_kbytes_t;

typedef struct floe_kuuid {
    uint8_t b[16];
} floe_kuuid_t;

/* Arrays of primitives; n < 0 means a null array. */
typedef struct {
    int32_t *v;
    int32_t n;
} floe_karr_i32_t;
typedef struct {
    int64_t *v;
    int32_t n;
} floe_karr_i64_t;
typedef struct {
    floe_kstr_t *v;
    int32_t n;
} floe_karr_str_t;

static inline floe_kstr_t floe_kstr(const char *s)
{
    floe_kstr_t k = {s, s ? (int32_t)strlen(s) : -1};
    return k;
}
static inline floe_kstr_t floe_kstr_null(void)
{
    floe_kstr_t k = {NULL, -1};
    return k;
}
static inline bool floe_kstr_eq(floe_kstr_t s, const char *c)
{
    return s.len >= 0 && c && (size_t)s.len == strlen(c) && memcmp(s.ptr, c, (size_t)s.len) == 0;
}

/* Field types of the declaration. */
typedef enum floe_ktype {
    FLOE_KT_BOOL = 1,
    FLOE_KT_INT8,
    FLOE_KT_INT16,
    FLOE_KT_UINT16,
    FLOE_KT_INT32,
    FLOE_KT_UINT32,
    FLOE_KT_INT64,
    FLOE_KT_FLOAT64,
    FLOE_KT_UUID,
    FLOE_KT_STRING,
    FLOE_KT_BYTES,
    FLOE_KT_RECORDS,
    FLOE_KT_STRUCT, /* only as an array element */
} floe_ktype_t;

typedef struct floe_kstruct floe_kstruct_t;

/* One field of a struct, as declared.  Versions are inclusive ranges; an
 * empty nullable range has nmin > nmax. */
typedef struct floe_kfield {
    const char *name;
    uint8_t type; /* floe_ktype_t; element type when is_array */
    uint8_t is_array;
    int16_t vmin, vmax;
    int16_t nmin, nmax;
    int32_t tag;               /* -1: not tagged */
    uint32_t off;              /* offsetof in the C struct */
    const floe_kstruct_t *sub; /* element struct for []Struct */
    int64_t def_int;           /* default of integer/bool fields */
    uint8_t def_null;          /* string default is null (else "") */
} floe_kfield_t;

struct floe_kstruct {
    const char *name;
    uint32_t size; /* sizeof the C struct */
    uint16_t nfields;
    const floe_kfield_t *fields;
};

/* One API: its versions and message bodies. */
typedef struct floe_kapi {
    int16_t key;
    const char *name;
    int16_t vmin, vmax;
    int16_t flex_min; /* first flexible version; INT16_MAX: none */
    const floe_kstruct_t *req;
    const floe_kstruct_t *resp;
} floe_kapi_t;

/* The declared API with this key, or NULL. */
const floe_kapi_t *floe_kapi_find(int16_t key);
/* All declared APIs (ordered by key); *n receives the count. */
const floe_kapi_t *floe_kapi_all(size_t *n);

static inline bool floe_kapi_flexible(const floe_kapi_t *a, int16_t v)
{
    return v >= a->flex_min;
}

/* Fill obj (d->size bytes) with the declared defaults: integers and bools
 * as declared, strings "" or null, arrays empty, bytes empty. */
void floe_kstruct_init(const floe_kstruct_t *d, void *obj);

/* A new object with defaults, allocated in the arena (NULL when out of
 * memory or past the arena cap).  Valid until the arena is reset. */
void *floe_kstruct_new(floe_arena_t *a, const floe_kstruct_t *d);
/* n objects with defaults, contiguous (NULL on failure; n == 0 gives a
 * non-NULL pointer). */
void *floe_kstruct_new_array(floe_arena_t *a, const floe_kstruct_t *d, int32_t n);

/* Limits applied while decoding untrusted bytes. */
#define FLOE_KPROTO_MAX_DEPTH 8

/* Decode one message body of `d` at version ver (flexible or not) from
 * p[0..n).  On success returns 0, stores the bytes consumed in *used and
 * fills obj (d->size bytes, caller's memory).  Borrowing as described at the
 * top; arrays and strings go into `a`, whose cap bounds memory.  Fails with
 * FLOE_ETRUNC (input ended), FLOE_ECORRUPT (bad length, count, varint) or
 * FLOE_ENOMEM (arena cap). */
int floe_kproto_decode(const floe_kstruct_t *d, int16_t ver, bool flex, const uint8_t *p, size_t n,
                       size_t *used, floe_arena_t *a, void *obj, floe_err_t *err);

/* Append the encoding of obj (a struct described by d) at version ver.
 * Fields absent in ver are skipped; tagged fields are written when they
 * differ from their default.  A null value in a non-nullable field is
 * written as empty.  Returns 0 or -1 (allocation failure). */
int floe_kproto_encode(const floe_kstruct_t *d, int16_t ver, bool flex, const void *obj,
                       floe_buf_t *out, floe_err_t *err);

/* Request header (v1: key, version, correlation id, client id; v2 adds
 * tagged fields).  Header v2 is used by flexible API versions. */
typedef struct floe_kreq_hdr {
    int16_t api_key;
    int16_t api_version;
    int32_t correlation_id;
    floe_kstr_t client_id; /* borrowed from the arena */
    uint8_t hdr_version;   /* 1 or 2 */
} floe_kreq_hdr_t;

/* Decode the request header at the start of a frame (without its length
 * prefix).  The header version comes from the declared API: flexible
 * versions use v2.  For an API or version floe does not declare, only the
 * first 8 bytes (key, version, correlation id) are read, client_id is null,
 * and *body_off is 0: the caller answers or closes.  Returns 0, or -1 when
 * even those are malformed. */
int floe_kreq_hdr_decode(const uint8_t *p, size_t n, floe_arena_t *a, floe_kreq_hdr_t *h,
                         size_t *body_off, floe_err_t *err);

/* Append a request header (used by tests and fuzz seeds). */
int floe_kreq_hdr_encode(const floe_kreq_hdr_t *h, floe_buf_t *out);

/* Append a response header: correlation id, plus empty tagged fields when
 * flexible (ApiVersions always uses header v0, as Kafka does). */
int floe_kresp_hdr_encode(int16_t api_key, int32_t correlation_id, bool flex, floe_buf_t *out);

/* Decode a whole request frame (header + body) into the declared request
 * struct, allocated in the arena.  *api is NULL and the return 0 when the
 * key or version is not declared (hdr filled).  Used by the server and the
 * fuzz target. */
int floe_kreq_decode(const uint8_t *p, size_t n, floe_arena_t *a, floe_kreq_hdr_t *hdr,
                     const floe_kapi_t **api, void **body, floe_err_t *err);

#endif
