/* The rewriter's schema side (rewrite_int.h): the table schema as Parquet,
 * and, for each input file, where every output column comes from.
 *
 * Levels across schema versions.  A leaf's definition level counts the
 * optional and repeated nodes present on its path; its repetition level
 * the repeated nodes.  An input column shares a prefix of its path with an
 * output leaf (the same field ids, node for node): the whole path when the
 * input holds the field itself, the path down to the deepest existing
 * ancestor when the field was added later.  An input entry with definition
 * level d has its path present down to node J(d) (the last node whose
 * count of optional and repeated nodes above and including it is <= d);
 * the output entry is then present down to min(J(d), prefix length),
 * which gives its definition level through the output's own counts (a
 * column made optional shifts them).  Entries repeated below the shared
 * prefix are dropped: one output entry per instance of the deepest shared
 * node. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/rewrite_int.h"

/* ---- the table schema as Parquet ----------------------------------------- */

typedef struct builder {
    floe_pq_schema_t *s;
    rw_leaf_t *leaves;
    int nleaves, cap;
    int path[RW_MAX_DEPTH];
    int depth;
} builder_t;

/* Parquet leaf for an Iceberg primitive type (Iceberg spec, "Parquet"). */
static int leaf_of(const floe_ice_type_t *t, floe_pq_node_t *n, floe_err_t *err)
{
    switch (t->kind) {
    case FLOE_ICE_BOOLEAN: n->phys = FLOE_PQ_BOOLEAN; return 0;
    case FLOE_ICE_INT: n->phys = FLOE_PQ_INT32; return 0;
    case FLOE_ICE_LONG: n->phys = FLOE_PQ_INT64; return 0;
    case FLOE_ICE_FLOAT: n->phys = FLOE_PQ_FLOAT; return 0;
    case FLOE_ICE_DOUBLE: n->phys = FLOE_PQ_DOUBLE; return 0;
    case FLOE_ICE_DATE:
        n->phys = FLOE_PQ_INT32;
        n->logical = FLOE_PQ_LT_DATE;
        return 0;
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ:
        n->phys = FLOE_PQ_INT64;
        n->logical = t->kind == FLOE_ICE_TIME ? FLOE_PQ_LT_TIME : FLOE_PQ_LT_TIMESTAMP;
        n->unit = FLOE_PQ_MICROS;
        n->utc = t->kind == FLOE_ICE_TIMESTAMPTZ;
        return 0;
    case FLOE_ICE_STRING:
        n->phys = FLOE_PQ_BYTE_ARRAY;
        n->logical = FLOE_PQ_LT_STRING;
        return 0;
    case FLOE_ICE_BINARY: n->phys = FLOE_PQ_BYTE_ARRAY; return 0;
    case FLOE_ICE_UUID:
        n->phys = FLOE_PQ_FIXED;
        n->type_length = 16;
        n->logical = FLOE_PQ_LT_UUID;
        return 0;
    case FLOE_ICE_FIXED:
        n->phys = FLOE_PQ_FIXED;
        n->type_length = t->length;
        return 0;
    case FLOE_ICE_DECIMAL: {
        n->logical = FLOE_PQ_LT_DECIMAL;
        n->precision = t->precision;
        n->scale = t->scale;
        if (t->precision <= 9) {
            n->phys = FLOE_PQ_INT32;
        } else if (t->precision <= 18) {
            n->phys = FLOE_PQ_INT64;
        } else {
            /* the fewest bytes whose two's complement holds 10^precision */
            int bytes = 1;
            while (bytes < 16 && (int)((8 * bytes - 1) * 0.30103) < t->precision) bytes++;
            n->phys = FLOE_PQ_FIXED;
            n->type_length = bytes;
        }
        return 0;
    }
    default:
        return floe_err_set(err, FLOE_EUNSUPPORTED, "type %d has no Parquet form", (int)t->kind);
    }
}

static int add_field(builder_t *b, const floe_ice_field_t *f, const char *name, int parent,
                     floe_err_t *err);

static int add_node(builder_t *b, floe_pq_node_t *n, int parent, floe_err_t *err)
{
    if (b->depth >= RW_MAX_DEPTH)
        return floe_err_set(err, FLOE_EUNSUPPORTED, "%s: nested deeper than %d levels", n->name,
                            RW_MAX_DEPTH);
    n->parent = parent;
    int idx = floe_pq_schema_add(b->s, n, err);
    if (idx >= 0) b->path[b->depth++] = idx;
    return idx;
}

static int add_kids(builder_t *b, const floe_ice_type_t *t, int idx, floe_err_t *err)
{
    static const char *const kv[2] = {"key", "value"};
    for (size_t i = 0; i < t->nfields; i++) {
        const char *nm = t->kind == FLOE_ICE_LIST  ? "element"
                         : t->kind == FLOE_ICE_MAP ? kv[i & 1]
                                                   : t->fields[i].name;
        if (add_field(b, &t->fields[i], nm, idx, err) < 0) return -1;
    }
    return 0;
}

static int add_field(builder_t *b, const floe_ice_field_t *f, const char *name, int parent,
                     floe_err_t *err)
{
    floe_pq_rep_t rep = f->required ? FLOE_PQ_REQUIRED : FLOE_PQ_OPTIONAL;
    const floe_ice_type_t *t = f->type;
    int depth0 = b->depth, idx;
    floe_pq_node_t n;
    switch (t->kind) {
    case FLOE_ICE_STRUCT:
        n = floe_pq_group(name, rep, FLOE_PQ_LT_NONE, f->id);
        if ((idx = add_node(b, &n, parent, err)) < 0 || add_kids(b, t, idx, err) < 0) return -1;
        break;
    case FLOE_ICE_LIST:
    case FLOE_ICE_MAP: {
        bool list = t->kind == FLOE_ICE_LIST;
        n = floe_pq_group(name, rep, list ? FLOE_PQ_LT_LIST : FLOE_PQ_LT_MAP, f->id);
        if ((idx = add_node(b, &n, parent, err)) < 0) return -1;
        n = floe_pq_group(list ? "list" : "key_value", FLOE_PQ_REPEATED, FLOE_PQ_LT_NONE, -1);
        if ((idx = add_node(b, &n, idx, err)) < 0 || add_kids(b, t, idx, err) < 0) return -1;
        break;
    }
    default: {
        n = floe_pq_leaf(name, rep, FLOE_PQ_INT32, f->id);
        if (leaf_of(t, &n, err) < 0) {
            floe_err_wrap(err, "column %s (field %d)", f->name, (int)f->id);
            return -1;
        }
        if ((idx = add_node(b, &n, parent, err)) < 0) return -1;
        if (b->nleaves == b->cap) {
            int cap = b->cap ? b->cap * 2 : 16;
            rw_leaf_t *l = realloc(b->leaves, (size_t)cap * sizeof *l);
            if (!l) return floe_err_oom(err);
            b->leaves = l;
            b->cap = cap;
        }
        rw_leaf_t *l = &b->leaves[b->nleaves++];
        memset(l, 0, sizeof *l);
        l->node = idx;
        l->type = t;
        l->depth = b->depth;
        for (int i = 0; i < b->depth; i++) {
            const floe_pq_node_t *pn = floe_pq_schema_node(b->s, b->path[i]);
            l->path[i] = b->path[i];
            l->cnt[i + 1] = (uint8_t)(l->cnt[i] + (pn->rep != FLOE_PQ_REQUIRED));
            l->reps[i + 1] = (uint8_t)(l->reps[i] + (pn->rep == FLOE_PQ_REPEATED));
        }
        break;
    }
    }
    b->depth = depth0;
    return 0;
}

floe_pq_schema_t *rw_parquet_schema(const floe_ice_schema_t *schema, rw_leaf_t **leaves,
                                    floe_err_t *err)
{
    builder_t b;
    memset(&b, 0, sizeof b);
    if (!(b.s = floe_pq_schema_new())) {
        floe_err_oom(err);
        return NULL;
    }
    const floe_ice_type_t *root = schema->root;
    for (size_t i = 0; i < root->nfields; i++)
        if (add_field(&b, &root->fields[i], root->fields[i].name, -1, err) < 0) goto fail;
    if (b.nleaves != floe_pq_schema_num_columns(b.s)) {
        floe_err_set(err, FLOE_EINVAL, "schema has %d leaves, Parquet %d columns", b.nleaves,
                     floe_pq_schema_num_columns(b.s));
        goto fail;
    }
    if (!b.nleaves) {
        floe_err_set(err, FLOE_EINVAL, "schema has no columns");
        goto fail;
    }
    *leaves = b.leaves;
    return b.s;
fail:
    floe_pq_schema_free(b.s);
    free(b.leaves);
    return NULL;
}

/* ---- one input file -------------------------------------------------------- */

/* Nodes from the top down to node n of s into path; returns the count, or
 * -1 past RW_MAX_DEPTH. */
static int path_of(const floe_pq_schema_t *s, int n, int *path)
{
    int tmp[RW_MAX_DEPTH], k = 0;
    for (; n >= 0; n = floe_pq_schema_node(s, n)->parent) {
        if (k == RW_MAX_DEPTH) return -1;
        tmp[k++] = n;
    }
    for (int i = 0; i < k; i++) path[i] = tmp[k - 1 - i];
    return k;
}

/* The value conversion from input leaf `in` to output leaf `out` of
 * Iceberg type t, or -1 when there is none. */
static int conversion(const floe_pq_node_t *in, const floe_pq_node_t *out, const floe_ice_type_t *t)
{
    if (t->kind == FLOE_ICE_DECIMAL) {
        if (in->logical != FLOE_PQ_LT_DECIMAL || in->scale != t->scale ||
            in->precision > t->precision)
            return -1;
        if (in->phys == out->phys &&
            (in->phys != FLOE_PQ_FIXED || in->type_length == out->type_length))
            return RW_CV_NONE;
        if (in->phys == FLOE_PQ_INT32 || in->phys == FLOE_PQ_INT64 || in->phys == FLOE_PQ_FIXED ||
            in->phys == FLOE_PQ_BYTE_ARRAY)
            return RW_CV_DECIMAL;
        return -1;
    }
    bool timed = out->logical == FLOE_PQ_LT_TIME || out->logical == FLOE_PQ_LT_TIMESTAMP;
    bool in_timed = in->logical == FLOE_PQ_LT_TIME || in->logical == FLOE_PQ_LT_TIMESTAMP;
    if (timed && in_timed && in->unit != FLOE_PQ_MICROS) {
        if (in->unit == FLOE_PQ_MILLIS && (in->phys == FLOE_PQ_INT64 || in->phys == FLOE_PQ_INT32))
            return RW_CV_MS_US;
        return -1; /* nanoseconds do not fit Iceberg v2's microseconds */
    }
    if (in->phys == out->phys) {
        if (in->phys == FLOE_PQ_FIXED && in->type_length != out->type_length) return -1;
        return RW_CV_NONE;
    }
    if (in->phys == FLOE_PQ_INT32 && out->phys == FLOE_PQ_INT64 && t->kind == FLOE_ICE_LONG)
        return RW_CV_I32_I64;
    if (out->phys == FLOE_PQ_DOUBLE && t->kind == FLOE_ICE_DOUBLE) {
        if (in->phys == FLOE_PQ_FLOAT) return RW_CV_F32_F64;
        if (in->phys == FLOE_PQ_INT64) return RW_CV_I64_F64;
        if (in->phys == FLOE_PQ_INT32) return RW_CV_I32_F64;
    }
    return -1;
}

static const char *phys_name(floe_pq_phys_t p)
{
    static const char *const n[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                    "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return p >= 0 && p <= FLOE_PQ_FIXED ? n[p] : "group";
}

/* Input node holding output node `on` (by field id; the leaf also through
 * remap), or -1. */
static int find_in(const floe_pq_schema_t *in, const floe_pq_node_t *on, bool leaf,
                   const floe_ice_field_remap_t *remap, size_t nremap)
{
    if (on->field_id < 0) return -1;
    int n = floe_pq_schema_find_field(in, on->field_id);
    for (size_t r = 0; n < 0 && leaf && r < nremap; r++)
        if (remap[r].to == on->field_id) n = floe_pq_schema_find_field(in, remap[r].from);
    return n;
}

static int plan_one(const floe_pq_schema_t *out, const rw_leaf_t *L, const floe_pq_schema_t *in,
                    const floe_ice_field_remap_t *remap, size_t nremap, const char *path,
                    rw_plan_t *p, floe_err_t *err)
{
    const floe_pq_node_t *leaf = floe_pq_schema_node(out, L->node);
    memset(p, 0, sizeof *p);
    p->src = -1;
    /* the deepest node of the output path the file holds */
    int a = 0, inode = -1;
    for (int i = L->depth; i >= 1 && inode < 0; i--) {
        inode = find_in(in, floe_pq_schema_node(out, L->path[i - 1]), i == L->depth, remap, nremap);
        if (inode >= 0) a = i;
    }
    int ipath[RW_MAX_DEPTH], m = 0;
    if (inode >= 0) {
        /* the shared prefix: same shape node for node */
        if (path_of(in, inode, ipath) != a)
            return floe_err_set(err, FLOE_EUNSUPPORTED,
                                "%s: column %s (field %d) sits elsewhere in the file", path,
                                leaf->name, (int)leaf->field_id);
        for (int i = 0; i < a; i++) {
            const floe_pq_node_t *o = floe_pq_schema_node(out, L->path[i]);
            const floe_pq_node_t *c = floe_pq_schema_node(in, ipath[i]);
            bool same_id = o->field_id < 0 || c->field_id == o->field_id || i == L->depth - 1;
            if ((o->rep == FLOE_PQ_REPEATED) != (c->rep == FLOE_PQ_REPEATED) || !same_id ||
                (c->phys == FLOE_PQ_GROUP) != (o->phys == FLOE_PQ_GROUP))
                return floe_err_set(err, FLOE_EUNSUPPORTED,
                                    "%s: field %s (id %d) has another shape in the file", path,
                                    o->name, (int)o->field_id);
            /* the leaf itself may be: the rewrite then fails on a null
             * (an upsert table's id column is made required after its
             * first files were written with it optional) */
            if (c->rep == FLOE_PQ_OPTIONAL && o->rep == FLOE_PQ_REQUIRED &&
                !(i == L->depth - 1 && a == L->depth))
                return floe_err_set(err, FLOE_EUNSUPPORTED,
                                    "%s: field %s (id %d) is optional in the file, required in "
                                    "the table",
                                    path, o->name, (int)o->field_id);
        }
        m = a;
    }
    int nin = floe_pq_schema_num_columns(in);
    if (a == L->depth) {
        p->same = true;
        p->src = floe_pq_schema_column_of(in, inode);
        const floe_pq_node_t *c = floe_pq_schema_node(in, inode);
        p->conv = conversion(c, leaf, L->type);
        if (p->conv < 0) {
            char tn[64];
            return floe_err_set(err, FLOE_EUNSUPPORTED,
                                "%s: column %s (field %d) is stored as %s, the table has %s", path,
                                leaf->name, (int)leaf->field_id, phys_name(c->phys),
                                floe_ice_type_name(L->type, tn, sizeof tn));
        }
        p->in_phys = c->phys;
        p->in_len = c->type_length;
    } else {
        /* added after the file was written: null where its parent is */
        const floe_pq_node_t *next = floe_pq_schema_node(out, L->path[a]);
        if (next->rep == FLOE_PQ_REQUIRED)
            return floe_err_set(err, FLOE_EUNSUPPORTED,
                                "%s: required field %s (id %d) is missing from the file", path,
                                next->name, (int)next->field_id);
        if (a > 0) {
            /* the file's leaf under the shared node repeated least */
            int best = -1, best_rep = 0;
            for (int k = 0; k < nin; k++) {
                int n = floe_pq_schema_column_node(in, k);
                while (n >= 0 && n != inode) n = floe_pq_schema_node(in, n)->parent;
                if (n != inode) continue;
                if (best < 0 || floe_pq_schema_max_rep(in, k) < best_rep) {
                    best = k;
                    best_rep = floe_pq_schema_max_rep(in, k);
                }
            }
            if (best < 0)
                return floe_err_set(err, FLOE_ECORRUPT, "%s: group %s holds no column", path,
                                    floe_pq_schema_node(in, inode)->name);
            p->src = best;
            m = path_of(in, floe_pq_schema_column_node(in, best), ipath);
            if (m < 0) return floe_err_set(err, FLOE_EUNSUPPORTED, "%s: nested too deep", path);
        }
    }
    if (p->src < 0) return 0;
    /* definition levels: present down to J(d) in the file, min(J, a) out */
    uint8_t cnt_in[RW_MAX_DEPTH + 1];
    cnt_in[0] = 0;
    for (int i = 0; i < m; i++)
        cnt_in[i + 1] =
            (uint8_t)(cnt_in[i] + (floe_pq_schema_node(in, ipath[i])->rep != FLOE_PQ_REQUIRED));
    p->in_maxdef = floe_pq_schema_max_def(in, p->src);
    if (p->in_maxdef != cnt_in[m])
        return floe_err_set(err, FLOE_ECORRUPT, "%s: column %d has inconsistent levels", path,
                            p->src);
    p->identity = p->same && p->in_maxdef == floe_pq_schema_max_def(
                                                 out, floe_pq_schema_column_of(out, L->node));
    for (int d = 0, j = 0; d <= p->in_maxdef; d++) {
        while (j < m && cnt_in[j + 1] <= d) j++;
        p->defmap[d] = L->cnt[j < a ? j : a];
        if (p->defmap[d] != d) p->identity = false;
    }
    p->rep_keep = L->reps[a];
    return 0;
}

int rw_plan_input(const floe_pq_schema_t *out, const rw_leaf_t *leaves, int ncols,
                  const floe_pq_schema_t *in, const floe_ice_field_remap_t *remap, size_t nremap,
                  const char *path, rw_plan_t *plans, floe_err_t *err)
{
    /* columns are matched by id only: a file without ids (one an engine
     * would read through a name mapping) could only come out as nulls */
    for (int k = 0; k < floe_pq_schema_num_columns(in); k++) {
        const floe_pq_node_t *n = floe_pq_schema_node(in, floe_pq_schema_column_node(in, k));
        if (n->field_id < 0)
            return floe_err_set(err, FLOE_EUNSUPPORTED, "%s: column %s has no field id", path,
                                n->name);
    }
    for (int j = 0; j < ncols; j++)
        if (plan_one(out, &leaves[j], in, remap, nremap, path, &plans[j], err) < 0) return -1;
    return 0;
}
