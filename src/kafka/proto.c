/* The interpreter for the declared Kafka messages: one decoder and one
 * encoder that walk the generated field tables.  Every length and count read
 * from the wire is checked against the bytes left; allocations go to a capped
 * arena. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/proto.h"
#include "kafka/proto_gen.h"
#include "util/varint.h"

extern const floe_kapi_t floe_kapi_table[];
extern const size_t floe_kapi_table_len;

const floe_kapi_t *floe_kapi_find(int16_t key)
{
    for (size_t i = 0; i < floe_kapi_table_len; i++)
        if (floe_kapi_table[i].key == key) return &floe_kapi_table[i];
    return NULL;
}

const floe_kapi_t *floe_kapi_all(size_t *n)
{
    *n = floe_kapi_table_len;
    return floe_kapi_table;
}

static inline bool in_range(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

/* Size of one array element of a field's type. */
static size_t elem_size(const floe_kfield_t *f)
{
    switch (f->type) {
    case FLOE_KT_INT32: return sizeof(int32_t);
    case FLOE_KT_INT64: return sizeof(int64_t);
    case FLOE_KT_STRING: return sizeof(floe_kstr_t);
    case FLOE_KT_STRUCT: return f->sub->size;
    default: return 0; /* the generator allows no other arrays */
    }
}

/* Arrays in the generated structs are { T *v; int32_t n; }; read and write
 * the two members through memcpy so no type punning is needed. */
typedef struct {
    void *v;
    int32_t n;
} arr_t;

static void arr_get(const void *obj, const floe_kfield_t *f, arr_t *a)
{
    memcpy(a, (const char *)obj + f->off, sizeof *a);
}
static void arr_set(void *obj, const floe_kfield_t *f, void *v, int32_t n)
{
    arr_t a = {v, n};
    memcpy((char *)obj + f->off, &a, sizeof a);
}

static void field_default(const floe_kfield_t *f, void *obj)
{
    char *p = (char *)obj + f->off;
    if (f->is_array) {
        arr_set(obj, f, NULL, 0);
        return;
    }
    switch (f->type) {
    case FLOE_KT_BOOL: {
        bool b = f->def_int != 0;
        memcpy(p, &b, sizeof b);
        break;
    }
    case FLOE_KT_INT8: {
        int8_t v = (int8_t)f->def_int;
        memcpy(p, &v, 1);
        break;
    }
    case FLOE_KT_INT16: {
        int16_t v = (int16_t)f->def_int;
        memcpy(p, &v, 2);
        break;
    }
    case FLOE_KT_UINT16: {
        uint16_t v = (uint16_t)f->def_int;
        memcpy(p, &v, 2);
        break;
    }
    case FLOE_KT_INT32: {
        int32_t v = (int32_t)f->def_int;
        memcpy(p, &v, 4);
        break;
    }
    case FLOE_KT_UINT32: {
        uint32_t v = (uint32_t)f->def_int;
        memcpy(p, &v, 4);
        break;
    }
    case FLOE_KT_INT64: {
        int64_t v = f->def_int;
        memcpy(p, &v, 8);
        break;
    }
    case FLOE_KT_FLOAT64: {
        double v = (double)f->def_int;
        memcpy(p, &v, 8);
        break;
    }
    case FLOE_KT_UUID: memset(p, 0, sizeof(floe_kuuid_t)); break;
    case FLOE_KT_STRING: {
        floe_kstr_t s = f->def_null ? floe_kstr_null() : floe_kstr("");
        memcpy(p, &s, sizeof s);
        break;
    }
    case FLOE_KT_BYTES:
    case FLOE_KT_RECORDS: {
        floe_kbytes_t b = {NULL, f->def_null ? -1 : 0};
        memcpy(p, &b, sizeof b);
        break;
    }
    default: break;
    }
}

void floe_kstruct_init(const floe_kstruct_t *d, void *obj)
{
    memset(obj, 0, d->size);
    for (uint16_t i = 0; i < d->nfields; i++) field_default(&d->fields[i], obj);
}

void *floe_kstruct_new(floe_arena_t *a, const floe_kstruct_t *d)
{
    return floe_kstruct_new_array(a, d, 1);
}

void *floe_kstruct_new_array(floe_arena_t *a, const floe_kstruct_t *d, int32_t n)
{
    if (n < 0) return NULL;
    char *p = floe_arena_alloc(a, (size_t)(n ? n : 1) * d->size);
    if (!p) return NULL;
    for (int32_t i = 0; i < n; i++) floe_kstruct_init(d, p + (size_t)i * d->size);
    return p;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct dec {
    const uint8_t *p;
    size_t n, pos;
    floe_arena_t *a;
    int16_t ver;
    bool flex;
    int depth;
    floe_err_t *err;
} dec_t;

#define NEED(d, k)                                                                         \
    do {                                                                                   \
        if ((d)->n - (d)->pos < (size_t)(k))                                               \
            return floe_err_set((d)->err, FLOE_ETRUNC, "truncated at byte %zu (need %zu)", \
                                (d)->pos, (size_t)(k));                                    \
    } while (0)

static int rd_uvarint(dec_t *d, uint32_t *v)
{
    int k = floe_uvarint32_decode(d->p + d->pos, d->n - d->pos, v);
    if (k < 0) {
        if (d->n - d->pos < FLOE_VARINT32_MAX_LEN)
            return floe_err_set(d->err, FLOE_ETRUNC, "truncated varint at byte %zu", d->pos);
        return floe_err_set(d->err, FLOE_ECORRUPT, "bad varint at byte %zu", d->pos);
    }
    d->pos += (size_t)k;
    return 0;
}

/* Length prefix of a string/bytes/array: -1 for null, else >= 0. */
static int rd_len(dec_t *d, int width, int32_t *len)
{
    if (d->flex) {
        uint32_t u;
        if (rd_uvarint(d, &u)) return -1;
        if (u > (uint32_t)INT32_MAX)
            return floe_err_set(d->err, FLOE_ECORRUPT, "length too large at byte %zu", d->pos);
        *len = (int32_t)u - 1;
        return 0;
    }
    NEED(d, width);
    if (width == 2) {
        *len = (int16_t)floe_rd_be16(d->p + d->pos);
    } else {
        *len = (int32_t)floe_rd_be32(d->p + d->pos);
    }
    d->pos += (size_t)width;
    if (*len < -1)
        return floe_err_set(d->err, FLOE_ECORRUPT, "negative length %d at byte %zu", *len, d->pos);
    return 0;
}

static int dec_struct(dec_t *d, const floe_kstruct_t *s, void *obj);

static int dec_string(dec_t *d, floe_kstr_t *out, bool nullable)
{
    int32_t len;
    if (rd_len(d, 2, &len)) return -1;
    if (len < 0) {
        *out = nullable ? floe_kstr_null() : floe_kstr("");
        return 0;
    }
    NEED(d, len);
    char *c = floe_arena_strndup(d->a, (const char *)d->p + d->pos, (size_t)len);
    if (!c) return floe_err_set(d->err, FLOE_ENOMEM, "request too large to decode");
    out->ptr = c;
    out->len = len;
    d->pos += (size_t)len;
    return 0;
}

static int dec_bytes(dec_t *d, floe_kbytes_t *out, bool nullable)
{
    int32_t len;
    if (rd_len(d, 4, &len)) return -1;
    if (len < 0) {
        out->ptr = NULL;
        out->len = nullable ? -1 : 0;
        return 0;
    }
    NEED(d, len);
    out->ptr = d->p + d->pos;
    out->len = len;
    d->pos += (size_t)len;
    return 0;
}

/* One scalar value of type t into p. */
static int dec_value(dec_t *d, const floe_kfield_t *f, uint8_t t, char *p, bool nullable)
{
    switch (t) {
    case FLOE_KT_BOOL: {
        NEED(d, 1);
        bool b = d->p[d->pos++] != 0;
        memcpy(p, &b, sizeof b);
        return 0;
    }
    case FLOE_KT_INT8: {
        NEED(d, 1);
        int8_t v = (int8_t)d->p[d->pos++];
        memcpy(p, &v, 1);
        return 0;
    }
    case FLOE_KT_INT16:
    case FLOE_KT_UINT16: {
        NEED(d, 2);
        uint16_t v = floe_rd_be16(d->p + d->pos);
        d->pos += 2;
        memcpy(p, &v, 2);
        return 0;
    }
    case FLOE_KT_INT32:
    case FLOE_KT_UINT32: {
        NEED(d, 4);
        uint32_t v = floe_rd_be32(d->p + d->pos);
        d->pos += 4;
        memcpy(p, &v, 4);
        return 0;
    }
    case FLOE_KT_INT64:
    case FLOE_KT_FLOAT64: {
        NEED(d, 8);
        uint64_t v = floe_rd_be64(d->p + d->pos);
        d->pos += 8;
        memcpy(p, &v, 8);
        return 0;
    }
    case FLOE_KT_UUID:
        NEED(d, 16);
        memcpy(p, d->p + d->pos, 16);
        d->pos += 16;
        return 0;
    case FLOE_KT_STRING: {
        floe_kstr_t s;
        if (dec_string(d, &s, nullable)) return -1;
        memcpy(p, &s, sizeof s);
        return 0;
    }
    case FLOE_KT_BYTES:
    case FLOE_KT_RECORDS: {
        floe_kbytes_t b;
        if (dec_bytes(d, &b, nullable)) return -1;
        memcpy(p, &b, sizeof b);
        return 0;
    }
    case FLOE_KT_STRUCT:
        if (++d->depth > FLOE_KPROTO_MAX_DEPTH)
            return floe_err_set(d->err, FLOE_ECORRUPT, "nesting too deep");
        if (dec_struct(d, f->sub, p)) return -1;
        d->depth--;
        return 0;
    }
    return floe_err_set(d->err, FLOE_EINVAL, "field %s: bad type", f->name);
}

static int dec_field(dec_t *d, const floe_kfield_t *f, void *obj)
{
    bool nullable = in_range(d->ver, f->nmin, f->nmax);
    if (!f->is_array) return dec_value(d, f, f->type, (char *)obj + f->off, nullable);
    int32_t n;
    if (rd_len(d, 4, &n)) return -1;
    if (n < 0) {
        arr_set(obj, f, NULL, nullable ? -1 : 0);
        return 0;
    }
    /* every element takes at least one byte on the wire: a count larger
     * than the bytes left is a lie, and must not size an allocation */
    if ((size_t)n > d->n - d->pos)
        return floe_err_set(d->err, FLOE_ECORRUPT, "field %s: count %d exceeds the %zu bytes left",
                            f->name, n, d->n - d->pos);
    size_t es = elem_size(f);
    char *v = floe_arena_alloc(d->a, (size_t)(n ? n : 1) * es);
    if (!v)
        return floe_err_set(d->err, FLOE_ENOMEM, "field %s: request too large to decode", f->name);
    for (int32_t i = 0; i < n; i++) {
        char *e = v + (size_t)i * es;
        if (dec_value(d, f, f->type, e, false)) return -1;
    }
    arr_set(obj, f, v, n);
    return 0;
}

static const floe_kfield_t *find_tag(const floe_kstruct_t *s, int16_t ver, uint32_t tag)
{
    for (uint16_t i = 0; i < s->nfields; i++) {
        const floe_kfield_t *f = &s->fields[i];
        if (f->tag >= 0 && (uint32_t)f->tag == tag && in_range(ver, f->vmin, f->vmax)) return f;
    }
    return NULL;
}

static int dec_struct(dec_t *d, const floe_kstruct_t *s, void *obj)
{
    for (uint16_t i = 0; i < s->nfields; i++) {
        const floe_kfield_t *f = &s->fields[i];
        if (f->tag >= 0 || !in_range(d->ver, f->vmin, f->vmax)) {
            field_default(f, obj);
            continue;
        }
        if (dec_field(d, f, obj)) {
            return -1;
        }
    }
    if (!d->flex) return 0;
    uint32_t ntags;
    if (rd_uvarint(d, &ntags)) return -1;
    if (ntags > d->n - d->pos)
        return floe_err_set(d->err, FLOE_ECORRUPT, "%s: %u tagged fields in %zu bytes", s->name,
                            ntags, d->n - d->pos);
    int64_t last = -1;
    for (uint32_t i = 0; i < ntags; i++) {
        uint32_t tag, size;
        if (rd_uvarint(d, &tag) || rd_uvarint(d, &size)) return -1;
        if ((int64_t)tag <= last)
            return floe_err_set(d->err, FLOE_ECORRUPT, "%s: tags out of order", s->name);
        last = tag;
        NEED(d, size);
        const floe_kfield_t *f = find_tag(s, d->ver, tag);
        if (!f) { /* unknown tag: skip */
            d->pos += size;
            continue;
        }
        dec_t sub = *d;
        sub.n = d->pos + size;
        if (dec_field(&sub, f, obj)) return -1;
        if (sub.pos != sub.n)
            return floe_err_set(d->err, FLOE_ECORRUPT, "%s: tagged field %s has %zu extra bytes",
                                s->name, f->name, sub.n - sub.pos);
        d->pos = sub.pos;
    }
    return 0;
}

int floe_kproto_decode(const floe_kstruct_t *s, int16_t ver, bool flex, const uint8_t *p, size_t n,
                       size_t *used, floe_arena_t *a, void *obj, floe_err_t *err)
{
    dec_t d = {p, n, 0, a, ver, flex, 0, err};
    if (dec_struct(&d, s, obj)) {
        floe_err_wrap(err, "%s v%d", s->name, ver);
        return -1;
    }
    if (used) *used = d.pos;
    return 0;
}

/* ---- encoding ---------------------------------------------------------- */

typedef struct enc {
    floe_buf_t *b;
    int16_t ver;
    bool flex;
} enc_t;

static int wr_uvarint(floe_buf_t *b, uint64_t v)
{
    uint8_t tmp[FLOE_VARINT64_MAX_LEN];
    return floe_buf_append(b, tmp, floe_uvarint_encode(tmp, v));
}

static int wr_len(enc_t *e, int width, int32_t len)
{
    if (e->flex) return wr_uvarint(e->b, (uint64_t)((int64_t)len + 1));
    if (width == 2) return floe_buf_append_be16(e->b, (uint16_t)(int16_t)len);
    return floe_buf_append_be32(e->b, (uint32_t)len);
}

static int enc_struct(enc_t *e, const floe_kstruct_t *s, const void *obj);

static int enc_value(enc_t *e, const floe_kfield_t *f, uint8_t t, const char *p, bool nullable)
{
    switch (t) {
    case FLOE_KT_BOOL: {
        bool b;
        memcpy(&b, p, sizeof b);
        return floe_buf_append_u8(e->b, b ? 1 : 0);
    }
    case FLOE_KT_INT8: return floe_buf_append_u8(e->b, (uint8_t)*p);
    case FLOE_KT_INT16:
    case FLOE_KT_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return floe_buf_append_be16(e->b, v);
    }
    case FLOE_KT_INT32:
    case FLOE_KT_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return floe_buf_append_be32(e->b, v);
    }
    case FLOE_KT_INT64:
    case FLOE_KT_FLOAT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        return floe_buf_append_be64(e->b, v);
    }
    case FLOE_KT_UUID: return floe_buf_append(e->b, p, 16);
    case FLOE_KT_STRING: {
        floe_kstr_t s;
        memcpy(&s, p, sizeof s);
        if (s.len < 0 || !s.ptr) {
            if (nullable && s.len < 0) return wr_len(e, 2, -1);
            return wr_len(e, 2, 0);
        }
        int32_t len = s.len > INT16_MAX && !e->flex ? INT16_MAX : s.len;
        if (wr_len(e, 2, len)) return -1;
        return floe_buf_append(e->b, s.ptr, (size_t)len);
    }
    case FLOE_KT_BYTES:
    case FLOE_KT_RECORDS: {
        floe_kbytes_t b;
        memcpy(&b, p, sizeof b);
        if (b.len < 0) return wr_len(e, 4, nullable ? -1 : 0);
        if (wr_len(e, 4, b.len)) return -1;
        return b.len ? floe_buf_append(e->b, b.ptr, (size_t)b.len) : 0;
    }
    case FLOE_KT_STRUCT: return enc_struct(e, f->sub, p);
    }
    return -1;
}

static int enc_field(enc_t *e, const floe_kfield_t *f, const void *obj)
{
    bool nullable = in_range(e->ver, f->nmin, f->nmax);
    if (!f->is_array) return enc_value(e, f, f->type, (const char *)obj + f->off, nullable);
    arr_t a;
    arr_get(obj, f, &a);
    if (a.n < 0 || (a.n > 0 && !a.v)) return wr_len(e, 4, nullable && a.n < 0 ? -1 : 0);
    if (wr_len(e, 4, a.n)) return -1;
    size_t es = elem_size(f);
    for (int32_t i = 0; i < a.n; i++)
        if (enc_value(e, f, f->type, (const char *)a.v + (size_t)i * es, false)) return -1;
    return 0;
}

/* Does a tagged field hold something other than its default? */
static bool tag_present(const floe_kfield_t *f, const void *obj)
{
    const char *p = (const char *)obj + f->off;
    if (f->is_array) {
        arr_t a;
        arr_get(obj, f, &a);
        return a.n > 0;
    }
    switch (f->type) {
    case FLOE_KT_BOOL: {
        bool b;
        memcpy(&b, p, sizeof b);
        return b != (f->def_int != 0);
    }
    case FLOE_KT_INT8: return (int8_t)*p != (int8_t)f->def_int;
    case FLOE_KT_INT16:
    case FLOE_KT_UINT16: {
        int16_t v;
        memcpy(&v, p, 2);
        return v != (int16_t)f->def_int;
    }
    case FLOE_KT_INT32:
    case FLOE_KT_UINT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v != (int32_t)f->def_int;
    }
    case FLOE_KT_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        return v != f->def_int;
    }
    case FLOE_KT_FLOAT64: {
        double v;
        memcpy(&v, p, 8);
        return v != (double)f->def_int;
    }
    case FLOE_KT_UUID: {
        static const uint8_t z[16];
        return memcmp(p, z, 16) != 0;
    }
    case FLOE_KT_STRING: {
        floe_kstr_t s;
        memcpy(&s, p, sizeof s);
        return f->def_null ? s.len >= 0 : s.len > 0;
    }
    case FLOE_KT_BYTES:
    case FLOE_KT_RECORDS: {
        floe_kbytes_t b;
        memcpy(&b, p, sizeof b);
        return f->def_null ? b.len >= 0 : b.len > 0;
    }
    }
    return false;
}

static int enc_struct(enc_t *e, const floe_kstruct_t *s, const void *obj)
{
    int ntags = 0;
    for (uint16_t i = 0; i < s->nfields; i++) {
        const floe_kfield_t *f = &s->fields[i];
        if (!in_range(e->ver, f->vmin, f->vmax)) continue;
        if (f->tag >= 0) {
            if (e->flex && tag_present(f, obj)) ntags++;
            continue;
        }
        if (enc_field(e, f, obj)) return -1;
    }
    if (!e->flex) return 0;
    if (wr_uvarint(e->b, (uint64_t)ntags)) return -1;
    for (uint16_t i = 0; i < s->nfields && ntags; i++) {
        const floe_kfield_t *f = &s->fields[i];
        if (f->tag < 0 || !in_range(e->ver, f->vmin, f->vmax) || !tag_present(f, obj)) continue;
        floe_buf_t tmp = FLOE_BUF_INIT;
        enc_t sub = {&tmp, e->ver, e->flex};
        int rc = enc_field(&sub, f, obj);
        if (!rc) rc = wr_uvarint(e->b, (uint64_t)f->tag);
        if (!rc) rc = wr_uvarint(e->b, tmp.len);
        if (!rc) rc = floe_buf_append(e->b, tmp.data, tmp.len);
        floe_buf_free(&tmp);
        if (rc) return -1;
    }
    return 0;
}

int floe_kproto_encode(const floe_kstruct_t *s, int16_t ver, bool flex, const void *obj,
                       floe_buf_t *out, floe_err_t *err)
{
    enc_t e = {out, ver, flex};
    if (enc_struct(&e, s, obj))
        return floe_err_set(err, FLOE_ENOMEM, "%s v%d: out of memory while encoding", s->name, ver);
    return 0;
}

/* ---- headers ----------------------------------------------------------- */

int floe_kreq_hdr_decode(const uint8_t *p, size_t n, floe_arena_t *a, floe_kreq_hdr_t *h,
                         size_t *body_off, floe_err_t *err)
{
    memset(h, 0, sizeof *h);
    h->client_id = floe_kstr_null();
    *body_off = 0;
    if (n < 8) return floe_err_set(err, FLOE_ETRUNC, "request header truncated (%zu bytes)", n);
    h->api_key = (int16_t)floe_rd_be16(p);
    h->api_version = (int16_t)floe_rd_be16(p + 2);
    h->correlation_id = (int32_t)floe_rd_be32(p + 4);
    const floe_kapi_t *api = floe_kapi_find(h->api_key);
    if (!api || !in_range(h->api_version, api->vmin, api->vmax)) return 0;
    h->hdr_version = floe_kapi_flexible(api, h->api_version) ? 2 : 1;
    /* the client id is a classic (non-compact) nullable string in v1 and v2 */
    dec_t d = {p, n, 8, a, 0, false, 0, err};
    if (dec_string(&d, &h->client_id, true)) return -1;
    if (h->hdr_version == 2) {
        static const floe_kstruct_t empty = {"RequestHeader", 0, 0, NULL};
        d.flex = true;
        if (dec_struct(&d, &empty, NULL)) return -1;
    }
    *body_off = d.pos;
    return 0;
}

int floe_kreq_hdr_encode(const floe_kreq_hdr_t *h, floe_buf_t *out)
{
    if (floe_buf_append_be16(out, (uint16_t)h->api_key) ||
        floe_buf_append_be16(out, (uint16_t)h->api_version) ||
        floe_buf_append_be32(out, (uint32_t)h->correlation_id))
        return -1;
    if (h->hdr_version < 1) return 0;
    enc_t e = {out, 0, false};
    static const floe_kfield_t cf = {"ClientId", FLOE_KT_STRING, 0, 0, 0, 0, 0, -1, 0, NULL, 0, 1};
    if (enc_value(&e, &cf, FLOE_KT_STRING, (const char *)&h->client_id, true)) return -1;
    if (h->hdr_version >= 2 && floe_buf_append_u8(out, 0)) return -1;
    return 0;
}

int floe_kresp_hdr_encode(int16_t api_key, int32_t correlation_id, bool flex, floe_buf_t *out)
{
    if (floe_buf_append_be32(out, (uint32_t)correlation_id)) return -1;
    if (flex && api_key != FLOE_KAPI_API_VERSIONS) return floe_buf_append_u8(out, 0);
    return 0;
}

int floe_kreq_decode(const uint8_t *p, size_t n, floe_arena_t *a, floe_kreq_hdr_t *hdr,
                     const floe_kapi_t **api, void **body, floe_err_t *err)
{
    size_t off, used;
    *api = NULL;
    *body = NULL;
    if (floe_kreq_hdr_decode(p, n, a, hdr, &off, err)) return -1;
    if (!off) return 0;
    const floe_kapi_t *k = floe_kapi_find(hdr->api_key);
    void *obj = floe_arena_alloc(a, k->req->size);
    if (!obj) return floe_err_set(err, FLOE_ENOMEM, "request too large to decode");
    if (floe_kproto_decode(k->req, hdr->api_version, floe_kapi_flexible(k, hdr->api_version),
                           p + off, n - off, &used, a, obj, err))
        return -1;
    /* Trailing bytes are tolerated, as Kafka does (newer clients may append
     * fields a lower version does not have). */
    *api = k;
    *body = obj;
    return 0;
}
