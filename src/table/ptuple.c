#include "table/ptuple.h"

#include <stdlib.h>
#include <string.h>

#include "table/rows_int.h"

bool floe_tspec_equiv(const floe_ice_spec_t *a, const floe_ice_spec_t *b)
{
    if (a->nfields != b->nfields) return false;
    for (size_t i = 0; i < a->nfields; i++) {
        const floe_ice_partition_field_t *x = &a->fields[i], *y = &b->fields[i];
        if (x->source_id != y->source_id || x->transform.kind != y->transform.kind ||
            x->transform.param != y->transform.param || strcmp(x->name, y->name))
            return false;
    }
    return true;
}

static void group_clear(floe_tptuple_t *g)
{
    floe_buf_free(&g->key);
    for (size_t i = 0; g->values && i < g->nvalues; i++)
        floe_ice_value_clear(&g->values[i]); /* NULL once a file took them */
    free(g->values);
    free(g->rows);
}

void floe_tptuples_free(floe_tptuples_t *g)
{
    for (size_t i = 0; i < g->n; i++) group_clear(&g->g[i]);
    free(g->g);
    free(g->slots);
    memset(g, 0, sizeof *g);
}

static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int reindex(floe_tptuples_t *gs)
{
    size_t ns = gs->nslots ? gs->nslots * 2 : 64;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < gs->n; i++) {
        size_t k = hash(gs->g[i].key.data, gs->g[i].key.len) & (ns - 1);
        while (s[k]) k = (k + 1) & (ns - 1);
        s[k] = (uint32_t)i + 1;
    }
    free(gs->slots);
    gs->slots = s;
    gs->nslots = ns;
    return 0;
}

/* The group of key (created, taking *vals, when new); NULL on ENOMEM. */
static floe_tptuple_t *lookup(floe_tptuples_t *gs, const floe_buf_t *key, floe_ice_value_t **vals,
                              size_t nv)
{
    if ((gs->n + 1) * 2 > gs->nslots && reindex(gs) < 0) return NULL;
    size_t k = hash(key->data, key->len) & (gs->nslots - 1);
    while (gs->slots[k]) {
        floe_tptuple_t *g = &gs->g[gs->slots[k] - 1];
        if (g->key.len == key->len && !memcmp(g->key.data, key->data, key->len)) return g;
        k = (k + 1) & (gs->nslots - 1);
    }
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 8;
        floe_tptuple_t *v = realloc(gs->g, cap * sizeof *v);
        if (!v) return NULL;
        gs->g = v;
        gs->cap = cap;
    }
    floe_tptuple_t *g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    if (floe_buf_append(&g->key, key->data, key->len) < 0) return NULL;
    g->values = *vals;
    g->nvalues = nv;
    *vals = NULL;
    gs->slots[k] = (uint32_t)++gs->n;
    return g;
}

/* A partition source: its leaf column and, per row, its value index (-1:
 * null). */
typedef struct src {
    const floe_rcol_t *col;
    const floe_ice_type_t *type;
    long *vi;
} src_t;

static int source_value(const src_t *s, size_t row, floe_ice_value_t *v)
{
    memset(v, 0, sizeof *v);
    if (!s->col || s->vi[row] < 0) {
        v->is_null = true;
        v->kind = s->type->kind;
        return 0;
    }
    size_t j = (size_t)s->vi[row];
    const floe_rcol_t *c = s->col;
    v->kind = s->type->kind;
    switch (c->node->kind) {
    case FLOE_TK_LONG:
    case FLOE_TK_TIME:
    case FLOE_TK_TIMESTAMP:
    case FLOE_TK_TIMESTAMPTZ: v->v.l = floe_rcol_long(c, j); return 0;
    case FLOE_TK_INT:
    case FLOE_TK_DATE: v->v.i = floe_rcol_int(c, j); return 0;
    case FLOE_TK_FLOAT: memcpy(&v->v.f, c->vals.data + 4 * j, 4); return 0;
    case FLOE_TK_DOUBLE: v->v.d = floe_rcol_double(c, j); return 0;
    case FLOE_TK_BOOL: v->v.b = c->vals.data[j] != 0; return 0;
    default: {
        floe_slice_t b = floe_rcol_bytes(c, j);
        return floe_ice_value_set_bytes(v, s->type->kind, b.ptr, b.len);
    }
    }
}

int floe_tptuples_group(floe_rows_t *rows, const floe_ice_spec_t *spec,
                        const floe_ice_schema_t *schema, floe_tptuples_t *out, floe_err_t *err)
{
    for (size_t i = 0; i < out->n; i++) group_clear(&out->g[i]);
    out->n = 0;
    if (out->slots) memset(out->slots, 0, out->nslots * sizeof *out->slots);
    size_t nrows = floe_rows_count(rows), nl;
    floe_rcol_t *const *leaves = floe_rows_leaves(rows, &nl);
    size_t nf = spec->nfields;
    src_t *srcs = calloc(nf ? nf : 1, sizeof *srcs);
    floe_buf_t key = FLOE_BUF_INIT;
    floe_ice_value_t *vals = NULL;
    int rc = -1;
    if (!srcs) goto oom;
    for (size_t f = 0; f < nf; f++) {
        const floe_ice_field_t *fld = floe_ice_schema_find(schema, spec->fields[f].source_id);
        if (!fld || !floe_ice_kind_is_primitive(fld->type->kind)) {
            floe_err_set(err, FLOE_EINVAL, "partition source %d is not a primitive column",
                         (int)spec->fields[f].source_id);
            goto out;
        }
        srcs[f].type = fld->type;
        for (size_t l = 0; l < nl; l++)
            if (leaves[l]->node->field_id == fld->id) srcs[f].col = leaves[l];
        if (srcs[f].col && srcs[f].col->node->rep != 0) {
            floe_err_set(err, FLOE_EINVAL, "partition source '%s' is inside a list or map",
                         fld->name);
            goto out;
        }
        if (!(srcs[f].vi = malloc((nrows ? nrows : 1) * sizeof *srcs[f].vi))) goto oom;
        const floe_rcol_t *c = srcs[f].col;
        for (size_t r = 0, j = 0; c && r < nrows && r < c->defs.len; r++)
            srcs[f].vi[r] = c->defs.data[r] == c->node->def ? (long)j++ : -1;
        if (!c)
            for (size_t r = 0; r < nrows; r++) srcs[f].vi[r] = -1;
    }
    for (size_t r = 0; r < nrows; r++) {
        floe_buf_reset(&key);
        if (!vals && !(vals = calloc(nf ? nf : 1, sizeof *vals))) goto oom;
        for (size_t f = 0; f < nf; f++) {
            floe_ice_value_t in;
            if (source_value(&srcs[f], r, &in) < 0) goto oom;
            floe_ice_value_clear(&vals[f]);
            int t = floe_ice_transform_apply(spec->fields[f].transform, srcs[f].type, &in, &vals[f],
                                             err);
            floe_ice_value_clear(&in);
            if (t < 0) goto out;
            if (vals[f].is_null) {
                floe_buf_append_u8(&key, 0);
            } else {
                size_t mark = key.len;
                floe_buf_append_u8(&key, 1);
                floe_buf_append_le32(&key, 0);
                floe_err_t se;
                if (floe_ice_value_serialize(&vals[f], &key, &se) < 0) goto oom;
                uint32_t len = (uint32_t)(key.len - mark - 5);
                memcpy(key.data + mark + 1, &len, 4);
            }
        }
        floe_tptuple_t *g = lookup(out, &key, &vals, nf);
        if (!g) goto oom;
        if (g->nrows == g->caprows) {
            size_t cap = g->caprows ? g->caprows * 2 : 256;
            uint32_t *v = realloc(g->rows, cap * sizeof *v);
            if (!v) goto oom;
            g->rows = v;
            g->caprows = cap;
        }
        g->rows[g->nrows++] = (uint32_t)r;
        if (vals) /* the tuple matched an existing group: keep vals for the next row */
            for (size_t f = 0; f < nf; f++) floe_ice_value_clear(&vals[f]);
    }
    rc = 0;
    goto out;
oom:
    floe_err_set(err, FLOE_ENOMEM, "out of memory grouping rows by partition");
out:
    if (vals) {
        for (size_t f = 0; f < nf; f++) floe_ice_value_clear(&vals[f]);
        free(vals);
    }
    for (size_t f = 0; srcs && f < nf; f++) free(srcs[f].vi);
    free(srcs);
    floe_buf_free(&key);
    return rc;
}
