/* The binary wire format's fields (floe_proto_wire_next), serialized
 * FileDescriptorProto <-> floe_proto_file_t (proto.h), with the field
 * numbers of google/protobuf/descriptor.proto, and a registry's schema
 * string as text or base64 descriptor (floe_proto_load). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto_int.h"
#include "util/base64.h"
#include "util/varint.h"

static int corrupt(floe_err_t *err, const char *what, size_t off)
{
    return floe_err_set(err, FLOE_ECORRUPT, "protobuf: %s at byte %zu", what, off);
}

/* Past a group started by field `number` (depth-limited). */
static int skip_group(const uint8_t *p, size_t n, size_t *off, uint32_t number, int depth,
                      floe_err_t *err)
{
    if (depth > PROTO_MAX_DEPTH) return corrupt(err, "groups nested too deep", *off);
    for (;;) {
        uint64_t key;
        size_t at = *off;
        int r = floe_uvarint64_decode(p + *off, n - *off, &key);
        if (r <= 0) return corrupt(err, "unterminated group", at);
        *off += (size_t)r;
        uint32_t num = (uint32_t)(key >> 3);
        int wt = (int)(key & 7);
        if (key >> 3 > 536870911 || num == 0) return corrupt(err, "bad field number", at);
        uint64_t v;
        switch (wt) {
        case 0:
            if ((r = floe_uvarint64_decode(p + *off, n - *off, &v)) <= 0)
                return corrupt(err, "truncated varint", *off);
            *off += (size_t)r;
            break;
        case 1:
        case 5:
            if (n - *off < (wt == 1 ? 8u : 4u)) return corrupt(err, "truncated fixed value", *off);
            *off += wt == 1 ? 8 : 4;
            break;
        case 2:
            if ((r = floe_uvarint64_decode(p + *off, n - *off, &v)) <= 0 ||
                v > n - *off - (size_t)r)
                return corrupt(err, "length past the end", *off);
            *off += (size_t)r + (size_t)v;
            break;
        case 3:
            if (skip_group(p, n, off, num, depth + 1, err)) return -1;
            break;
        case 4:
            if (num != number) return corrupt(err, "mismatched end of group", at);
            return 0;
        default: return corrupt(err, "bad wire type", at);
        }
    }
}

int floe_proto_wire_next(const uint8_t *p, size_t n, size_t *off, floe_proto_wire_t *w,
                         floe_err_t *err)
{
    if (*off >= n) return 0;
    uint64_t key;
    size_t at = *off;
    int r = floe_uvarint64_decode(p + at, n - at, &key);
    if (r <= 0) return corrupt(err, "truncated or overlong tag", at);
    *off += (size_t)r;
    if (key >> 3 > 536870911 || key >> 3 == 0) return corrupt(err, "bad field number", at);
    w->number = (uint32_t)(key >> 3);
    w->wt = (int)(key & 7);
    w->p = NULL;
    w->len = 0;
    w->v = 0;
    switch (w->wt) {
    case 0:
        if ((r = floe_uvarint64_decode(p + *off, n - *off, &w->v)) <= 0)
            return corrupt(err, "truncated or overlong varint", *off);
        *off += (size_t)r;
        return 1;
    case 1:
        if (n - *off < 8) return corrupt(err, "truncated fixed64", *off);
        w->v = floe_rd_le64(p + *off);
        *off += 8;
        return 1;
    case 5:
        if (n - *off < 4) return corrupt(err, "truncated fixed32", *off);
        w->v = floe_rd_le32(p + *off);
        *off += 4;
        return 1;
    case 2: {
        uint64_t len;
        if ((r = floe_uvarint64_decode(p + *off, n - *off, &len)) <= 0 ||
            len > n - *off - (size_t)r)
            return corrupt(err, "length past the end", *off);
        w->p = p + *off + r;
        w->len = (size_t)len;
        *off += (size_t)r + (size_t)len;
        return 1;
    }
    case 3: {
        size_t start = *off;
        if (skip_group(p, n, off, w->number, 0, err)) return -1;
        w->p = p + start;
        w->len = *off - start;
        return 1;
    }
    default: return corrupt(err, "bad wire type", at);
    }
}

/* ---- decoding a FileDescriptorProto ---- */

typedef struct fdp {
    floe_proto_file_t *f;
    floe_err_t *err;
} fdp_t;

static const char *str_of(fdp_t *d, const floe_proto_wire_t *w)
{
    if (w->wt != 2) {
        corrupt(d->err, "a string field with another wire type", 0);
        return NULL;
    }
    const char *s = proto_strdup(d->f, (const char *)w->p, w->len);
    if (!s) floe_err_oom(d->err);
    return s;
}

/* Iterate the fields of a sub-message w (checked by fields_ok first). */
#define EACH(d, w, x) \
    for (size_t off_ = 0; floe_proto_wire_next((w)->p, (w)->len, &off_, &(x), (d)->err) == 1;)

static int need_len(fdp_t *d, const floe_proto_wire_t *w)
{
    return w->wt == 2 ? 0 : corrupt(d->err, "a message field with another wire type", 0);
}

/* Run over every field of w; -1 when they do not decode. */
static int fields_ok(fdp_t *d, const floe_proto_wire_t *w)
{
    size_t off = 0;
    floe_proto_wire_t x;
    int r;
    while ((r = floe_proto_wire_next(w->p, w->len, &off, &x, d->err)) == 1) {
    }
    return r;
}

static int dec_enum(fdp_t *d, const floe_proto_wire_t *w, floe_proto_enum_t *e)
{
    if (need_len(d, w) || fields_ok(d, w)) return -1;
    floe_proto_wire_t x;
    e->name = "";
    EACH(d, w, x)
    {
        if (x.number == 1 && !(e->name = str_of(d, &x))) return -1;
        if (x.number == 2) {
            if (need_len(d, &x) || fields_ok(d, &x)) return -1;
            floe_proto_enum_value_t *v = proto_push((void **)&e->vals, &e->nvals, sizeof *v);
            if (!v) return floe_err_oom(d->err);
            v->name = "";
            floe_proto_wire_t y;
            EACH(d, &x, y)
            {
                if (y.number == 1 && !(v->name = str_of(d, &y))) return -1;
                if (y.number == 2 && y.wt == 0) v->number = (int32_t)y.v;
            }
        }
        if (x.number == 3 && x.wt == 2) { /* EnumOptions.allow_alias = 2 */
            if (fields_ok(d, &x)) return -1;
            floe_proto_wire_t y;
            EACH(d, &x, y) if (y.number == 2 && y.wt == 0) e->allow_alias = y.v != 0;
        }
    }
    return 0;
}

static int dec_field(fdp_t *d, const floe_proto_wire_t *w, floe_proto_msg_t *m)
{
    if (need_len(d, w) || fields_ok(d, w)) return -1;
    floe_proto_field_t *fd = proto_add_field(m);
    if (!fd) return floe_err_oom(d->err);
    fd->name = "";
    fd->label = FLOE_PL_OPTIONAL;
    floe_proto_wire_t x;
    EACH(d, w, x)
    {
        switch (x.number) {
        case 1:
            if (!(fd->name = str_of(d, &x))) return -1;
            break;
        case 2: return floe_err_set(d->err, FLOE_EUNSUPPORTED, "protobuf: extensions in messages");
        case 3:
            if (x.wt == 0) fd->number = (int32_t)x.v;
            break;
        case 4:
            if (x.wt == 0) fd->label = (int)x.v;
            break;
        case 5:
            if (x.wt == 0) fd->type = (int)x.v;
            break;
        case 6:
            if (!(fd->type_name = str_of(d, &x))) return -1;
            break;
        case 7:
            if (!(fd->default_value = str_of(d, &x))) return -1;
            break;
        case 8: { /* FieldOptions.packed = 2 */
            if (need_len(d, &x) || fields_ok(d, &x)) return -1;
            floe_proto_wire_t y;
            EACH(d, &x, y) if (y.number == 2 && y.wt == 0) fd->packed = y.v != 0;
            break;
        }
        case 9:
            if (x.wt == 0) fd->oneof = (int32_t)x.v;
            break;
        case 17:
            if (x.wt == 0) fd->proto3_optional = x.v != 0;
            break;
        }
    }
    if (fd->number <= 0 || fd->number > 536870911 || fd->label < 1 || fd->label > 3 ||
        fd->type < 1 || fd->type > FLOE_PT_SINT64 || fd->oneof < -1 || !fd->name[0])
        return floe_err_set(d->err, FLOE_EINVAL,
                            "protobuf: field '%s' has a bad number, label or type", fd->name);
    if (fd->type == FLOE_PT_GROUP)
        return floe_err_set(d->err, FLOE_EUNSUPPORTED, "protobuf: groups are not supported");
    return 0;
}

static int dec_msg(fdp_t *d, const floe_proto_wire_t *w, floe_proto_msg_t *m, int depth)
{
    if (depth > PROTO_MAX_DEPTH) return corrupt(d->err, "messages nested too deep", 0);
    if (need_len(d, w) || fields_ok(d, w)) return -1;
    m->name = "";
    floe_proto_wire_t x;
    EACH(d, w, x)
    {
        switch (x.number) {
        case 1:
            if (!(m->name = str_of(d, &x))) return -1;
            break;
        case 2:
            if (dec_field(d, &x, m)) return -1;
            break;
        case 3: {
            floe_proto_msg_t *n = proto_push((void **)&m->msgs, &m->nmsgs, sizeof *n);
            if (!n) return floe_err_oom(d->err);
            if (dec_msg(d, &x, n, depth + 1)) return -1;
            break;
        }
        case 4: {
            floe_proto_enum_t *e = proto_push((void **)&m->enums, &m->nenums, sizeof *e);
            if (!e) return floe_err_oom(d->err);
            if (dec_enum(d, &x, e)) return -1;
            break;
        }
        case 7: { /* MessageOptions.map_entry = 7 */
            if (need_len(d, &x) || fields_ok(d, &x)) return -1;
            floe_proto_wire_t y;
            EACH(d, &x, y) if (y.number == 7 && y.wt == 0) m->map_entry = y.v != 0;
            break;
        }
        case 8: {
            if (need_len(d, &x) || fields_ok(d, &x)) return -1;
            const char **o = proto_push((void **)&m->oneofs, &m->noneofs, sizeof *o);
            if (!o) return floe_err_oom(d->err);
            *o = "";
            floe_proto_wire_t y;
            EACH(d, &x, y) if (y.number == 1 && !(*o = str_of(d, &y))) return -1;
            break;
        }
        case 9: {
            if (need_len(d, &x) || fields_ok(d, &x)) return -1;
            floe_proto_range_t *r = proto_push((void **)&m->reserved, &m->nreserved, sizeof *r);
            if (!r) return floe_err_oom(d->err);
            floe_proto_wire_t y;
            EACH(d, &x, y)
            {
                if (y.number == 1 && y.wt == 0) r->start = (int32_t)y.v;
                if (y.number == 2 && y.wt == 0) r->end = (int32_t)y.v;
            }
            break;
        }
        case 10: {
            const char **n =
                proto_push((void **)&m->reserved_names, &m->nreserved_names, sizeof *n);
            if (!n) return floe_err_oom(d->err);
            if (!(*n = str_of(d, &x))) return -1;
            break;
        }
        }
    }
    if (!m->name[0]) return floe_err_set(d->err, FLOE_EINVAL, "protobuf: a message with no name");
    return 0;
}

int floe_proto_fdp_decode(const uint8_t *p, size_t n, floe_proto_file_t **out, floe_err_t *err)
{
    *out = NULL;
    fdp_t d = {proto_file_new(), err};
    if (!d.f) return floe_err_oom(err);
    floe_proto_wire_t all = {.wt = 2, .p = p, .len = n}, x;
    if (fields_ok(&d, &all)) goto fail;
    EACH(&d, &all, x)
    {
        switch (x.number) {
        case 1:
            if (!(d.f->name = str_of(&d, &x))) goto fail;
            break;
        case 2:
            if (!(d.f->package = str_of(&d, &x))) goto fail;
            break;
        case 3: {
            const char **dep = proto_push((void **)&d.f->deps, &d.f->ndeps, sizeof *dep);
            if (!dep) goto oom;
            if (!(*dep = str_of(&d, &x))) goto fail;
            break;
        }
        case 4: {
            floe_proto_msg_t *m = proto_push((void **)&d.f->msgs, &d.f->nmsgs, sizeof *m);
            if (!m) goto oom;
            if (dec_msg(&d, &x, m, 0)) goto fail;
            break;
        }
        case 5: {
            floe_proto_enum_t *e = proto_push((void **)&d.f->enums, &d.f->nenums, sizeof *e);
            if (!e) goto oom;
            if (dec_enum(&d, &x, e)) goto fail;
            break;
        }
        case 12: {
            const char *syn = str_of(&d, &x);
            if (!syn) goto fail;
            if (!strcmp(syn, "proto3")) d.f->syntax = 3;
            else if (syn[0] && strcmp(syn, "proto2")) {
                floe_err_set(err, FLOE_EUNSUPPORTED, "protobuf: syntax '%s' is not supported", syn);
                goto fail;
            }
            break;
        }
        }
    }
    *out = d.f;
    return 0;
oom:
    floe_err_oom(err);
fail:
    floe_proto_file_free(d.f);
    return -1;
}

/* Whether t[0..n) is base64 text (the standard alphabet, padded). */
static bool is_base64(const char *t, size_t n)
{
    if (!n || n % 4) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)t[i]) && t[i] != '+' && t[i] != '/' && t[i] != '=')
            return false;
    return true;
}

int floe_proto_load(const char *p, size_t n, const char *name, floe_proto_file_t **out,
                    floe_err_t *err)
{
    *out = NULL;
    floe_err_t text_err = {0};
    if (!floe_proto_parse(p, n, name, out, &text_err)) return 0;
    while (n && isspace((unsigned char)p[n - 1])) n--;
    while (n && isspace((unsigned char)*p)) p++, n--;
    if (text_err.code == FLOE_ENOMEM || !is_base64(p, n)) {
        if (err) *err = text_err;
        return -1;
    }
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_base64_decode(&b, p, n)
                 ? floe_err_set(err, FLOE_EINVAL, "protobuf: neither .proto text nor base64")
                 : floe_proto_fdp_decode(b.data, b.len, out, err);
    floe_buf_free(&b);
    if (rc || !name) return rc;
    if (!((*out)->name = floe_arena_strndup(&(*out)->arena, name, strlen(name)))) {
        floe_proto_file_free(*out);
        *out = NULL;
        return floe_err_oom(err);
    }
    return 0;
}

/* ---- encoding ---- */

static int put_key(floe_buf_t *b, uint32_t number, int wt)
{
    uint8_t t[10];
    return floe_buf_append(b, t, floe_uvarint_encode(t, (uint64_t)number << 3 | (unsigned)wt));
}

static int put_varint(floe_buf_t *b, uint32_t number, uint64_t v)
{
    uint8_t t[10];
    return put_key(b, number, 0) || floe_buf_append(b, t, floe_uvarint_encode(t, v));
}

static int put_bytes(floe_buf_t *b, uint32_t number, const void *p, size_t n)
{
    uint8_t t[10];
    return put_key(b, number, 2) || floe_buf_append(b, t, floe_uvarint_encode(t, n)) ||
           floe_buf_append(b, p, n);
}

static int put_str(floe_buf_t *b, uint32_t number, const char *s)
{
    return put_bytes(b, number, s, strlen(s));
}

/* A sub-message written into scratch, then appended with its length. */
static int put_sub(floe_buf_t *b, uint32_t number, floe_buf_t *sub)
{
    int rc = put_bytes(b, number, sub->data, sub->len);
    floe_buf_free(sub);
    return rc;
}

static int enc_enum(floe_buf_t *b, uint32_t number, const floe_proto_enum_t *e)
{
    floe_buf_t s = FLOE_BUF_INIT;
    int rc = put_str(&s, 1, e->name);
    for (size_t i = 0; i < e->nvals && !rc; i++) {
        floe_buf_t v = FLOE_BUF_INIT;
        rc = put_str(&v, 1, e->vals[i].name) ||
             put_varint(&v, 2, (uint64_t)(int64_t)e->vals[i].number) || put_sub(&s, 2, &v);
        floe_buf_free(&v);
    }
    if (!rc && e->allow_alias) {
        floe_buf_t o = FLOE_BUF_INIT;
        rc = put_varint(&o, 2, 1) || put_sub(&s, 3, &o);
        floe_buf_free(&o);
    }
    if (rc) {
        floe_buf_free(&s);
        return -1;
    }
    return put_sub(b, number, &s);
}

static int enc_field(floe_buf_t *b, const floe_proto_field_t *fd)
{
    floe_buf_t s = FLOE_BUF_INIT;
    int rc = put_str(&s, 1, fd->name) || put_varint(&s, 3, (uint64_t)fd->number) ||
             put_varint(&s, 4, (uint64_t)fd->label) || put_varint(&s, 5, (uint64_t)fd->type);
    if (!rc && fd->type_name) rc = put_str(&s, 6, fd->type_name);
    if (!rc && fd->default_value) rc = put_str(&s, 7, fd->default_value);
    if (!rc && fd->packed >= 0) {
        floe_buf_t o = FLOE_BUF_INIT;
        rc = put_varint(&o, 2, (uint64_t)fd->packed) || put_sub(&s, 8, &o);
        floe_buf_free(&o);
    }
    if (!rc && fd->oneof >= 0) rc = put_varint(&s, 9, (uint64_t)fd->oneof);
    if (!rc && fd->proto3_optional) rc = put_varint(&s, 17, 1);
    if (rc) {
        floe_buf_free(&s);
        return -1;
    }
    return put_sub(b, 2, &s);
}

static int enc_msg(floe_buf_t *b, uint32_t number, const floe_proto_msg_t *m)
{
    floe_buf_t s = FLOE_BUF_INIT;
    int rc = put_str(&s, 1, m->name);
    for (size_t i = 0; i < m->nfields && !rc; i++) rc = enc_field(&s, &m->fields[i]);
    for (size_t i = 0; i < m->nmsgs && !rc; i++) rc = enc_msg(&s, 3, &m->msgs[i]);
    for (size_t i = 0; i < m->nenums && !rc; i++) rc = enc_enum(&s, 4, &m->enums[i]);
    if (!rc && m->map_entry) {
        floe_buf_t o = FLOE_BUF_INIT;
        rc = put_varint(&o, 7, 1) || put_sub(&s, 7, &o);
        floe_buf_free(&o);
    }
    for (size_t i = 0; i < m->noneofs && !rc; i++) {
        floe_buf_t o = FLOE_BUF_INIT;
        rc = put_str(&o, 1, m->oneofs[i]) || put_sub(&s, 8, &o);
        floe_buf_free(&o);
    }
    for (size_t i = 0; i < m->nreserved && !rc; i++) {
        floe_buf_t o = FLOE_BUF_INIT;
        rc = put_varint(&o, 1, (uint64_t)m->reserved[i].start) ||
             put_varint(&o, 2, (uint64_t)m->reserved[i].end) || put_sub(&s, 9, &o);
        floe_buf_free(&o);
    }
    for (size_t i = 0; i < m->nreserved_names && !rc; i++)
        rc = put_str(&s, 10, m->reserved_names[i]);
    if (rc) {
        floe_buf_free(&s);
        return -1;
    }
    return put_sub(b, number, &s);
}

int floe_proto_fdp_encode(const floe_proto_file_t *f, floe_buf_t *out)
{
    int rc = put_str(out, 1, f->name);
    if (!rc && f->package[0]) rc = put_str(out, 2, f->package);
    for (size_t i = 0; i < f->ndeps && !rc; i++) rc = put_str(out, 3, f->deps[i]);
    for (size_t i = 0; i < f->nmsgs && !rc; i++) rc = enc_msg(out, 4, &f->msgs[i]);
    for (size_t i = 0; i < f->nenums && !rc; i++) rc = enc_enum(out, 5, &f->enums[i]);
    if (!rc) rc = put_str(out, 12, f->syntax == 3 ? "proto3" : "proto2");
    return rc ? -1 : 0;
}
