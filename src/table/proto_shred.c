/* Protobuf messages -> typed columns in one pass (proto_shred.h). */
#include "table/proto_shred.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/proto_conv.h"
#include "table/rows_int.h"
#include "table/tstamp.h"
#include "util/base64.h"
#include "util/utf8.h"
#include "util/varint.h"

#define PLANS 8
#define MAX_DEPTH 64   /* messages, as proto_conv.c */
#define MAX_SLOTS 4096 /* field numbers looked up by index below this */
#define DRY_DEPTH 3    /* levels of messages walked without a column */
#define JSON FLOE_PROTO_SHRED_JSON

/* A value as the JSON rendering has it: what the JSON shredder would see. */
enum { JV_NULL, JV_LONG, JV_DOUBLE, JV_BOOL, JV_TEXT, JV_TSTAMP };
typedef struct jv {
    int k;
    int64_t l; /* JV_LONG; JV_TSTAMP: microseconds */
    double d;
    const uint8_t *s; /* JV_TEXT: valid UTF-8 */
    size_t n;
    char buf[24]; /* text of an unknown enum number */
} jv_t;

/* How a field absent from a message reads. */
enum { AB_NULL, AB_EMPTY, AB_DEFAULT };

typedef struct pmsg pmsg_t;

/* One field of a message plan. */
typedef struct pfld {
    const floe_proto_field_t *f;
    const floe_proto_field_t *vf; /* the value's field: f, or a wrapper's field 1 */
    floe_proto_wkt_t wkt;         /* of a message field's type */
    int wt;                       /* wire type of one value */
    bool repeated, packable;
    bool sys;          /* its name is a reserved column: the JSON path refuses it */
    bool misfit;       /* repeated, but its column is no list */
    int absent;        /* AB_* */
    jv_t dflt;         /* AB_DEFAULT; and a wrapper's value when it has none */
    floe_rnode_t *top; /* the field's column node (a list for repeated), or NULL */
    floe_rnode_t *n;   /* where one value goes: top, or the list's element */
    pmsg_t *sub;       /* a message value whose node is a struct: its plan */
    uint64_t seen;     /* the instance that last set it */
    uint32_t count;    /* its values in that instance */
} pfld_t;

struct pmsg {
    const floe_proto_msg_t *m;
    floe_rnode_t *st;
    bool root;
    pfld_t *f;
    size_t nf;
    uint16_t *slot; /* field number -> index + 1, for numbers below nslot */
    uint32_t nslot;
    floe_rnode_t **extra; /* struct fields no field of the message sets */
    size_t nextra;
};

typedef struct entry {
    bool used;
    int32_t id;
    const floe_proto_msg_t *m;
    uint64_t shape;
    pmsg_t root;
} entry_t;

struct floe_proto_shred {
    floe_rows_t *r;
    entry_t e[PLANS];
    size_t next;
    uint64_t stamp;
    floe_buf_t scratch, text;
};

static void pmsg_clear(pmsg_t *pm)
{
    for (size_t i = 0; i < pm->nf; i++)
        if (pm->f[i].sub) {
            pmsg_clear(pm->f[i].sub);
            free(pm->f[i].sub);
        }
    free(pm->f);
    free(pm->slot);
    free(pm->extra);
    memset(pm, 0, sizeof *pm);
}

floe_proto_shred_t *floe_proto_shred_new(floe_rows_t *rows)
{
    floe_proto_shred_t *a = calloc(1, sizeof *a);
    if (a) a->r = rows;
    return a;
}

void floe_proto_shred_free(floe_proto_shred_t *a)
{
    if (!a) return;
    for (size_t i = 0; i < PLANS; i++) pmsg_clear(&a->e[i].root);
    floe_buf_free(&a->scratch);
    floe_buf_free(&a->text);
    free(a);
}

void floe_proto_shred_forget(floe_proto_shred_t *a, int32_t id)
{
    for (size_t i = 0; a && i < PLANS; i++)
        if (a->e[i].used && a->e[i].id == id) {
            pmsg_clear(&a->e[i].root);
            a->e[i].used = false;
        }
}

/* ---- values as the JSON rendering writes them ------------------------ */

static void enum_jv(const floe_proto_enum_t *e, int32_t v, jv_t *j)
{
    j->k = JV_TEXT;
    for (size_t i = 0; i < e->nvals; i++)
        if (e->vals[i].number == v) {
            j->s = (const uint8_t *)e->vals[i].name;
            j->n = strlen(e->vals[i].name);
            return;
        }
    j->n = (size_t)snprintf(j->buf, sizeof j->buf, "%d", (int)v);
    j->s = (const uint8_t *)j->buf;
}

static void double_jv(double x, jv_t *j)
{
    j->k = isfinite(x) ? JV_DOUBLE : JV_NULL;
    j->d = x;
}

/* A scalar or enum of field f from its wire value v (proto_conv.c's
 * scalar()). */
static void scalar_jv(const floe_proto_field_t *f, uint64_t v, jv_t *j)
{
    j->k = JV_LONG;
    switch (f->type) {
    case FLOE_PT_INT32:
    case FLOE_PT_SFIXED32: j->l = (int32_t)(uint32_t)v; return;
    case FLOE_PT_UINT32:
    case FLOE_PT_FIXED32: j->l = (uint32_t)v; return;
    case FLOE_PT_SINT32: j->l = floe_unzigzag32((uint32_t)v); return;
    case FLOE_PT_SINT64: j->l = floe_unzigzag64(v); return;
    case FLOE_PT_BOOL:
        j->k = JV_BOOL;
        j->l = v != 0;
        return;
    case FLOE_PT_ENUM: enum_jv(f->en, (int32_t)(uint32_t)v, j); return;
    case FLOE_PT_FLOAT: {
        uint32_t b = (uint32_t)v;
        float x;
        memcpy(&x, &b, 4);
        double_jv(x, j);
        return;
    }
    case FLOE_PT_DOUBLE: {
        double x;
        memcpy(&x, &v, 8);
        double_jv(x, j);
        return;
    }
    default: j->l = (int64_t)v; return;
    }
}

/* Text p[0..n) as JSON escaping and unescaping leave it: each byte that
 * starts no UTF-8 sequence becomes U+FFFD (util/json.c). */
static int text_jv(floe_buf_t *scratch, const uint8_t *p, size_t n, jv_t *j)
{
    size_t bad;
    j->k = JV_TEXT;
    j->s = p;
    j->n = n;
    if (floe_utf8_valid(p, n, &bad)) return 0;
    floe_buf_reset(scratch);
    const uint8_t *end = p + n;
    while (p < end) {
        size_t k = *p < 0x80 ? 1 : floe_utf8_seq(p, end);
        if (k ? floe_buf_append(scratch, p, k) : floe_buf_append(scratch, "\xef\xbf\xbd", 3))
            return -1;
        p += k ? k : 1;
    }
    j->s = scratch->data;
    j->n = scratch->len;
    return 0;
}

/* ---- the plan: descriptor -> shape nodes ------------------------------ */

typedef struct bctx {
    floe_proto_shred_t *a;
    floe_err_t *err;
} bctx_t;

/* The default of f absent from m as proto_conv.c's absent() and
 * put_default() write it. */
static int default_of(const floe_proto_msg_t *m, const floe_proto_field_t *f, jv_t *j)
{
    memset(j, 0, sizeof *j);
    if (f->label == FLOE_PL_REPEATED) return AB_EMPTY;
    if (f->type == FLOE_PT_MESSAGE || f->oneof >= 0) return AB_NULL;
    const char *v = f->default_value;
    if (m->syntax != 3 && !m->map_entry) {
        if (!v) return AB_NULL;
        switch (f->type) {
        case FLOE_PT_STRING:
        case FLOE_PT_BYTES:
        case FLOE_PT_ENUM:
            j->k = JV_TEXT; /* the descriptor's text, fixed to UTF-8 when planned */
            j->s = (const uint8_t *)v;
            j->n = strlen(v);
            break;
        case FLOE_PT_BOOL:
            j->k = JV_BOOL;
            j->l = !strcmp(v, "true");
            break;
        case FLOE_PT_FLOAT:
        case FLOE_PT_DOUBLE: double_jv(strtod(v, NULL), j); break;
        default: j->k = JV_LONG; j->l = strtoll(v, NULL, 0);
        }
        return AB_DEFAULT;
    }
    switch (f->type) {
    case FLOE_PT_STRING:
    case FLOE_PT_BYTES:
        j->k = JV_TEXT;
        j->s = (const uint8_t *)"";
        break;
    default: scalar_jv(f, 0, j);
    }
    return AB_DEFAULT;
}

static int bind_msg(bctx_t *b, pmsg_t *pm, const floe_proto_msg_t *m, floe_rnode_t *st, bool root,
                    int depth, int dry);

/* Bind field f of message m to its column under struct st (NULL: a
 * message walked without columns, dry levels deep). */
static int bind_fld(bctx_t *b, pfld_t *pf, const floe_proto_msg_t *m, const floe_proto_field_t *f,
                    floe_rnode_t *st, int depth, int dry)
{
    pf->f = pf->vf = f;
    pf->repeated = f->label == FLOE_PL_REPEATED;
    pf->packable = floe_proto_packable(f->type);
    pf->wt = floe_proto_conv_wire_type(f->type);
    pf->wkt = f->type == FLOE_PT_MESSAGE && f->msg ? floe_proto_conv_wkt(f->msg) : FLOE_PWKT_NONE;
    pf->absent = default_of(m, f, &pf->dflt);
    if (pf->wkt == FLOE_PWKT_WRAPPER) { /* a wrapper without its field reads as its default */
        pf->vf = &f->msg->fields[0];
        if (default_of(f->msg, pf->vf, &pf->dflt) != AB_DEFAULT) pf->dflt.k = JV_NULL;
    }
    if (pf->dflt.k == JV_TEXT && pf->dflt.n) {
        /* a proto2 text default, fixed to UTF-8 once (kept in the plan) */
        floe_buf_t t = FLOE_BUF_INIT;
        jv_t fixed;
        if (text_jv(&t, pf->dflt.s, pf->dflt.n, &fixed)) return floe_err_oom(b->err);
        if (fixed.s == t.data) {
            floe_buf_free(&t); /* invalid UTF-8 in a default: rare; leave it to the JSON path */
            pf->sys = true;
        }
    }
    floe_rnode_t *kid = st ? floe_rows_child(st, f->name) : NULL;
    if (!kid) {
        /* a message without a column: its values are walked without one, to
         * tell one that would make a column (the JSON path's work) from one
         * that carries no typed value (an Empty, a message of absent
         * messages); a few levels deep, recursive types included */
        if (f->type == FLOE_PT_MESSAGE && pf->wkt == FLOE_PWKT_NONE && dry < DRY_DEPTH) {
            if (!(pf->sub = calloc(1, sizeof *pf->sub))) return floe_err_oom(b->err);
            return bind_msg(b, pf->sub, f->msg, NULL, false, depth + 1, dry + 1);
        }
        return 0;
    }
    if (kid->sys) {
        pf->sys = true;
        return 0;
    }
    pf->top = pf->n = kid;
    if (pf->repeated) {
        if (kid->kind != FLOE_TK_LIST || !kid->nkids) {
            pf->misfit = true;
            pf->n = NULL;
            return 0;
        }
        pf->n = kid->kids[0];
    }
    if (f->type == FLOE_PT_MESSAGE && pf->wkt == FLOE_PWKT_NONE && pf->n->kind == FLOE_TK_STRUCT) {
        if (!(pf->sub = calloc(1, sizeof *pf->sub))) return floe_err_oom(b->err);
        return bind_msg(b, pf->sub, f->msg, pf->n, false, depth + 1, dry);
    }
    return 0;
}

static int bind_msg(bctx_t *b, pmsg_t *pm, const floe_proto_msg_t *m, floe_rnode_t *st, bool root,
                    int depth, int dry)
{
    pm->m = m;
    pm->st = st;
    pm->root = root;
    if (depth > MAX_DEPTH) return 0; /* no fields: the JSON path refuses such depth */
    int32_t max = 0;
    for (size_t i = 0; i < m->nfields; i++)
        if (m->fields[i].number > max) max = m->fields[i].number;
    if (m->nfields && !(pm->f = calloc(m->nfields, sizeof *pm->f))) return floe_err_oom(b->err);
    pm->nf = m->nfields;
    if (max < MAX_SLOTS && m->nfields && m->nfields < UINT16_MAX) {
        pm->nslot = (uint32_t)max + 1;
        if (!(pm->slot = calloc(pm->nslot, sizeof *pm->slot))) return floe_err_oom(b->err);
        for (size_t i = 0; i < m->nfields; i++) pm->slot[m->fields[i].number] = (uint16_t)(i + 1);
    }
    for (size_t i = 0; i < m->nfields; i++)
        if (bind_fld(b, &pm->f[i], m, &m->fields[i], st, depth, dry)) return -1;
    if (root || !st || !st->nkids) return 0; /* the root's other fields: floe_rows_end */
    if (!(pm->extra = malloc(st->nkids * sizeof *pm->extra))) return floe_err_oom(b->err);
    for (size_t j = 0; j < st->nkids; j++) {
        bool set = false;
        for (size_t i = 0; i < pm->nf && !set; i++) set = pm->f[i].top == st->kids[j];
        if (!set) pm->extra[pm->nextra++] = st->kids[j];
    }
    return 0;
}

/* ---- decoding -------------------------------------------------------- */

typedef struct dec {
    floe_proto_shred_t *a;
    const uint8_t *base;
    floe_err_t *err;
} dec_t;

static int bad(dec_t *d, const uint8_t *at, const char *what)
{
    floe_err_set(d->err, FLOE_ECORRUPT, "protobuf: %s at byte %td", what, at - d->base);
    return JSON;
}

static int oom(dec_t *d)
{
    return floe_err_oom(d->err);
}

static inline int push_fixed(dec_t *d, floe_rnode_t *n, int rep, const void *v, size_t w)
{
    floe_rcol_t *c = n->col;
    n->stamp = d->a->r->row_stamp; /* set in this row (floe_rows_is_set: upsert ids) */
    if (floe_rcol_push_level(c, n->def, rep) < 0 || floe_rbuf_put(&c->vals, v, w) < 0)
        return oom(d);
    c->nvals++;
    return 0;
}

static int push_text(dec_t *d, floe_rnode_t *n, int rep, const void *p, size_t len)
{
    floe_rcol_t *c = n->col;
    if (c->bytes.len + len > UINT32_MAX) return JSON; /* the JSON path says why */
    if (len && floe_rbuf_put(&c->bytes, p, len) < 0) return oom(d);
    uint32_t end = (uint32_t)c->bytes.len;
    return push_fixed(d, n, rep, &end, 4);
}

/* Value j into node n (NULL: no column) as json_shred.c's value() puts a
 * JSON scalar; JSON for anything that would change the shape or fail. */
static int put_jv(dec_t *d, floe_rnode_t *n, const jv_t *j, int rep)
{
    if (!n) return j->k == JV_NULL ? 0 : JSON;
    switch (j->k) {
    case JV_NULL:
        if (n->required) return JSON;
        return floe_rows_write_nulls(n, n->def - 1, rep) < 0 ? oom(d) : 0;
    case JV_LONG:
        if (n->kind == FLOE_TK_LONG) return push_fixed(d, n, rep, &j->l, 8);
        if (n->kind == FLOE_TK_DOUBLE) {
            double v = (double)j->l;
            return push_fixed(d, n, rep, &v, 8);
        }
        return JSON;
    case JV_DOUBLE: return n->kind == FLOE_TK_DOUBLE ? push_fixed(d, n, rep, &j->d, 8) : JSON;
    case JV_BOOL: {
        uint8_t v = (uint8_t)j->l;
        return n->kind == FLOE_TK_BOOL ? push_fixed(d, n, rep, &v, 1) : JSON;
    }
    case JV_TEXT: {
        if (n->kind == FLOE_TK_STRING) return push_text(d, n, rep, j->s, j->n);
        int64_t us;
        if (n->kind == FLOE_TK_TIMESTAMPTZ && floe_tstamp_parse(j->s, j->n, &us))
            return push_fixed(d, n, rep, &us, 8);
        return JSON;
    }
    case JV_TSTAMP: {
        if (n->kind == FLOE_TK_TIMESTAMPTZ) return push_fixed(d, n, rep, &j->l, 8);
        char t[40];
        if (n->kind != FLOE_TK_STRING || !floe_tstamp_format(j->l, t)) return JSON;
        return push_text(d, n, rep, t, strlen(t));
    }
    }
    return JSON;
}

/* A varint at p[0..n) (util/varint.h's decoder, one and two bytes
 * inline): its length, or <= 0 when truncated or too long. */
static inline int varint(const uint8_t *p, size_t n, uint64_t *v)
{
    if (n && p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    if (n >= 2 && p[1] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        return 2;
    }
    return floe_uvarint64_decode(p, n, v);
}

/* Take back the last entry of column node n (a singular field's value of
 * the instance being decoded, which its next occurrence replaces). */
static void pop_last(floe_rnode_t *n)
{
    floe_rcol_t *c = n->col;
    c->reps.len = --c->defs.len;
    if (c->defs.data[c->defs.len] != n->def) return;
    c->nvals--;
    if (n->kind == FLOE_TK_STRING) {
        c->vals.len -= 4;
        uint32_t end = 0;
        if (c->nvals) memcpy(&end, c->vals.data + 4 * (c->nvals - 1), 4);
        c->bytes.len = end;
    } else {
        c->vals.len -= n->kind == FLOE_TK_BOOL ? 1 : 8;
    }
}

static int message(dec_t *d, pmsg_t *pm, const uint8_t *p, size_t n, int rep, int depth);

/* Field 1's last value in a wrapper's bytes p[0..n): 1 with *w, 0 none. */
static int wrapped(dec_t *d, const uint8_t *p, size_t n, floe_proto_wire_t *w)
{
    size_t off = 0;
    floe_proto_wire_t x;
    int r, found = 0;
    while ((r = floe_proto_wire_next(p, n, &off, &x, d->err)) == 1)
        if (x.number == 1) {
            *w = x;
            found = 1;
        }
    return r < 0 ? -1 : found;
}

/* One value of field pf (its wire value v, or bytes p[0..len) for wire
 * type 2) into node n. */
static int value(dec_t *d, pfld_t *pf, floe_rnode_t *n, uint64_t v, const uint8_t *p, size_t len,
                 int rep, int depth)
{
    jv_t j;
    switch (pf->f->type) {
    case FLOE_PT_STRING:
        if (text_jv(&d->a->text, p, len, &j)) return oom(d);
        break;
    case FLOE_PT_BYTES:
        floe_buf_reset(&d->a->text);
        if (floe_base64_encode(&d->a->text, p, len)) return oom(d);
        j.k = JV_TEXT;
        j.s = d->a->text.data ? d->a->text.data : (const uint8_t *)"";
        j.n = d->a->text.len;
        break;
    case FLOE_PT_MESSAGE:
        switch (pf->wkt) {
        case FLOE_PWKT_TIMESTAMP: {
            int r = floe_proto_conv_timestamp(p, len, &j.l, d->err);
            if (r < 0) return JSON;
            j.k = r ? JV_TSTAMP : JV_NULL;
            break;
        }
        case FLOE_PWKT_WRAPPER: {
            floe_proto_wire_t w;
            int r = wrapped(d, p, len, &w);
            if (r < 0) return JSON;
            if (!r) {
                j = pf->dflt;
                break;
            }
            if (w.wt != floe_proto_conv_wire_type(pf->vf->type))
                return bad(d, p, "wrong wire type");
            if (pf->vf->type == FLOE_PT_STRING || pf->vf->type == FLOE_PT_BYTES) {
                pfld_t inner = {.f = pf->vf};
                return value(d, &inner, n, 0, w.p, w.len, rep, depth);
            }
            scalar_jv(pf->vf, w.v, &j);
            break;
        }
        case FLOE_PWKT_JSON:
            floe_buf_reset(&d->a->text);
            if (floe_proto_conv_struct_text(pf->f->msg, p, len, &d->a->text, d->err)) return JSON;
            j.k = JV_TEXT;
            j.s = d->a->text.data;
            j.n = d->a->text.len;
            break;
        case FLOE_PWKT_NONE:
            if (!pf->sub || pf->misfit) return JSON; /* a column of another type */
            return message(d, pf->sub, p, len, rep, depth + 1);
        }
        break;
    default: scalar_jv(pf->f, v, &j);
    }
    return put_jv(d, n, &j, rep);
}

/* The elements of a packed occurrence p[0..len) of repeated field pf. */
static int packed(dec_t *d, pfld_t *pf, const uint8_t *p, size_t len, int rep)
{
    size_t off = 0;
    while (off < len) {
        uint64_t v;
        if (pf->wt == 0) {
            int r = varint(p + off, len - off, &v);
            if (r <= 0) return bad(d, p + off, "truncated packed varint");
            off += (size_t)r;
        } else {
            size_t k = pf->wt == 1 ? 8 : 4;
            if (len - off < k) return bad(d, p + off, "truncated packed value");
            v = k == 8 ? floe_rd_le64(p + off) : floe_rd_le32(p + off);
            off += k;
        }
        int r = pf->count++ && pf->n ? pf->n->rep : rep;
        int rc = value(d, pf, pf->n, v, NULL, 0, r, 0);
        if (rc) return rc;
    }
    return 0;
}

static int message(dec_t *d, pmsg_t *pm, const uint8_t *p, size_t n, int rep, int depth)
{
    if (depth > MAX_DEPTH) return bad(d, p, "messages nested too deep");
    uint64_t stamp = ++d->a->stamp;
    uint64_t row = d->a->r->row_stamp;
    size_t off = 0;
    while (off < n) {
        const uint8_t *at = p + off;
        uint64_t key;
        int r = varint(p + off, n - off, &key);
        if (r <= 0) return bad(d, at, "truncated or overlong tag");
        off += (size_t)r;
        uint64_t num = key >> 3;
        int wt = (int)(key & 7);
        if (num == 0 || num > 536870911) return bad(d, at, "bad field number");
        uint64_t v = 0;
        const uint8_t *vp = NULL;
        size_t vl = 0;
        switch (wt) {
        case 0:
            if ((r = varint(p + off, n - off, &v)) <= 0)
                return bad(d, p + off, "truncated or overlong varint");
            off += (size_t)r;
            break;
        case 1:
            if (n - off < 8) return bad(d, p + off, "truncated fixed64");
            v = floe_rd_le64(p + off);
            off += 8;
            break;
        case 5:
            if (n - off < 4) return bad(d, p + off, "truncated fixed32");
            v = floe_rd_le32(p + off);
            off += 4;
            break;
        case 2: {
            uint64_t l;
            r = varint(p + off, n - off, &l);
            if (r <= 0 || l > n - off - (size_t)r) return bad(d, p + off, "length past the end");
            vp = p + off + r;
            vl = (size_t)l;
            off += (size_t)r + vl;
            break;
        }
        default: { /* a group (skipped whole when unknown) or no wire type at all */
            floe_proto_wire_t w;
            size_t o = (size_t)(at - p);
            if (floe_proto_wire_next(p, n, &o, &w, d->err) != 1) return JSON;
            off = o;
        }
        }
        pfld_t *pf = NULL;
        if (num < pm->nslot) {
            uint16_t s = pm->slot[num];
            if (s) pf = &pm->f[s - 1];
        } else if (!pm->slot) {
            for (size_t i = 0; i < pm->nf && !pf; i++)
                if ((uint64_t)pm->f[i].f->number == num) pf = &pm->f[i];
        }
        if (!pf) continue; /* unknown: skipped */
        if (pf->sys) return JSON;
        int rc;
        if (pf->repeated) {
            if (pf->seen != stamp) {
                pf->seen = stamp;
                pf->count = 0;
                if (pm->root && pf->top) pf->top->stamp = row;
            }
            if (pf->misfit) return JSON;
            if (wt == 2 && pf->packable) {
                rc = packed(d, pf, vp, vl, rep);
            } else {
                if (wt != pf->wt) return bad(d, at, "wrong wire type");
                int r = pf->count++ && pf->n ? pf->n->rep : rep;
                rc = value(d, pf, pf->n, v, vp, vl, r, depth);
            }
        } else {
            if (pf->seen == stamp) { /* given again: the last one counts */
                if (pf->sub || pf->sys) return JSON;
                if (pf->n) pop_last(pf->n);
            }
            pf->seen = stamp;
            if (wt != pf->wt) return bad(d, at, "wrong wire type");
            if (pm->root && pf->top) pf->top->stamp = row;
            rc = value(d, pf, pf->n, v, vp, vl, rep, depth);
        }
        if (rc) return rc;
    }
    /* the fields it did not give */
    for (size_t i = 0; i < pm->nf; i++) {
        pfld_t *pf = &pm->f[i];
        if (pf->seen == stamp && (pf->count || !pf->repeated)) continue; /* (empty packed runs) */
        switch (pf->absent) {
        case AB_EMPTY:
            if (!pf->top) break;
            if (pf->misfit || pf->sys) return JSON;
            if (pm->root) pf->top->stamp = row;
            if (floe_rows_write_nulls(pf->n, pf->top->def, rep) < 0) return oom(d);
            break;
        case AB_NULL:
            if (pm->root || !pf->top) break; /* floe_rows_end fills the root's */
            if (pf->top->required) return JSON;
            if (floe_rows_write_nulls(pf->top, pm->st->def, rep) < 0) return oom(d);
            break;
        default: {
            if (pf->sys) return JSON;
            if (pm->root && pf->top) pf->top->stamp = row;
            int rc = put_jv(d, pf->top, &pf->dflt, rep);
            if (rc) return rc;
        }
        }
    }
    for (size_t i = 0; i < pm->nextra; i++) {
        floe_rnode_t *k = pm->extra[i];
        if (k->required) return JSON;
        if (floe_rows_write_nulls(k, pm->st->def, rep) < 0) return oom(d);
    }
    return 0;
}

/* ---- the entry point --------------------------------------------------- */

static entry_t *plan_for(floe_proto_shred_t *a, int32_t id, const floe_proto_msg_t *m,
                         floe_err_t *err)
{
    uint64_t shape = floe_rows_shape_version(a->r);
    entry_t *e = NULL;
    for (size_t i = 0; i < PLANS && !e; i++)
        if (a->e[i].used && a->e[i].id == id && a->e[i].m == m) e = &a->e[i];
    if (e && e->shape == shape) return e;
    if (!e) e = &a->e[a->next++ % PLANS];
    pmsg_clear(&e->root);
    e->used = false;
    bctx_t b = {a, err};
    if (bind_msg(&b, &e->root, m, floe_rows_root(a->r), true, 0, 0)) {
        pmsg_clear(&e->root);
        return NULL;
    }
    e->used = true;
    e->id = id;
    e->m = m;
    e->shape = shape;
    return e;
}

int floe_proto_shred(floe_proto_shred_t *a, int32_t id, const floe_proto_msg_t *m, const uint8_t *p,
                     size_t n, floe_err_t *err)
{
    entry_t *e = plan_for(a, id, m, err);
    if (!e) return -1;
    dec_t d = {a, p, err};
    return message(&d, &e->root, p, n, 0, 0);
}
