/* Internals of the L1 buffer (rows.h) for the files that build or read
 * its columns directly: rows.c, json_shred.c and avro_shred.c (shredding), schema_map.c
 * (seeding, ids, widening), datafile.c (writing columns) and ptuple.c
 * (grouping rows by partition tuple). */
#ifndef FLOE_TABLE_ROWS_INT_H
#define FLOE_TABLE_ROWS_INT_H

#include "table/rows.h"

struct floe_rows {
    floe_rnode_t root;
    floe_rcol_t **leaves;
    size_t nleaves, capleaves;
    size_t nrows;
    floe_rows_opts_t opts;
    uint64_t shape_version;
    uint64_t widen_refused; /* fractions refused by pinned long fields */
    uint64_t stamp_seq;     /* last stamp handed out */
    uint64_t row_stamp;     /* stamp of the row being built */
    floe_rnode_t **added;   /* subtrees added since begin, removed on rollback */
    size_t nadded, capadded;
    int32_t held; /* floe_rows_held */
};

/* Append n bytes to b: the common case (room left) stays inline, so a
 * fixed-width value is one store. */
static inline int floe_rbuf_put(floe_buf_t *b, const void *p, size_t n)
{
    if (b->cap - b->len < n && floe_buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/* Append one level entry (and, for def == node->def, nothing else: the
 * caller appends the value). */
static inline int floe_rcol_push_level(floe_rcol_t *c, int def, int rep)
{
    if ((c->defs.cap == c->defs.len && floe_buf_reserve(&c->defs, 1) < 0) ||
        (c->reps.cap == c->reps.len && floe_buf_reserve(&c->reps, 1) < 0))
        return -1;
    c->defs.data[c->defs.len++] = (uint8_t)def;
    c->reps.data[c->reps.len++] = (uint8_t)rep;
    return 0;
}
/* Null entries for every leaf under n: (def, rep). */
int floe_rows_write_nulls(floe_rnode_t *n, int def, int rep);

/* For the typed shredders (avro_shred.c, jschema_shred.c): one value of
 * primitive node n, w bytes at v, at repetition level rep.  0, or -1 with
 * err (out of memory). */
static inline int floe_rcol_put(floe_rnode_t *n, int rep, const void *v, size_t w, floe_err_t *err)
{
    floe_rcol_t *c = n->col;
    if (floe_rcol_push_level(c, n->def, rep) < 0 || floe_rbuf_put(&c->vals, v, w) < 0)
        return floe_err_oom(err);
    c->nvals++;
    return 0;
}
/* The same for a string or binary value p[0..len). */
int floe_rcol_put_bytes(floe_rnode_t *n, int rep, const void *p, size_t len, floe_err_t *err);
/* The dotted path of node n from the root ("a.b.element"), for messages,
 * in buf (size bytes, truncated when longer). */
const char *floe_rows_path(const floe_rnode_t *n, char *buf, size_t size);

floe_rnode_t *floe_rnode_new(const char *name, size_t name_len, floe_tkind_t kind);
void floe_rnode_free(floe_rnode_t *n);
int floe_rnode_add_kid(floe_rnode_t *parent, floe_rnode_t *kid);
/* Depth of the subtree below n (0 for a leaf). */
int floe_rnode_depth(const floe_rnode_t *n);
size_t floe_rnode_leaf_count(const floe_rnode_t *n);

/* Attach subtree `sub` (fresh nodes) under struct `parent` between rows:
 * computes levels, backfills nulls for the rows already held (and for the
 * current row's begin marks), records it for rollback.  Takes ownership of
 * sub on success and on failure. */
int floe_rows_attach(floe_rows_t *r, floe_rnode_t *parent, floe_rnode_t *sub, floe_err_t *err);
/* Widen a long node to double, converting the values held. */
void floe_rows_widen(floe_rows_t *r, floe_rnode_t *n);

#endif
