#include "table/rows_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *floe_tkind_name(floe_tkind_t k)
{
    switch (k) {
    case FLOE_TK_BOOL: return "boolean";
    case FLOE_TK_INT: return "int";
    case FLOE_TK_LONG: return "long";
    case FLOE_TK_DOUBLE: return "double";
    case FLOE_TK_STRING: return "string";
    case FLOE_TK_BINARY: return "binary";
    case FLOE_TK_TIMESTAMPTZ: return "timestamptz";
    case FLOE_TK_STRUCT: return "struct";
    case FLOE_TK_LIST: return "list";
    case FLOE_TK_MAP: return "map";
    case FLOE_TK_FLOAT: return "float";
    case FLOE_TK_DATE: return "date";
    case FLOE_TK_TIME: return "time";
    case FLOE_TK_TIMESTAMP: return "timestamp";
    case FLOE_TK_DECIMAL: return "decimal";
    case FLOE_TK_UUID: return "uuid";
    case FLOE_TK_FIXED: return "fixed";
    }
    return "?";
}

int floe_decimal_bytes(int precision)
{
    /* 10^p - 1 < 2^(8n - 1): n bytes hold about 2.408 (8 * log10 2) digits each */
    int n = 1;
    while (n < 16 && (double)(8 * n - 1) * 0.30102999566398120 < (double)precision) n++;
    return n;
}

static bool is_primitive(floe_tkind_t k)
{
    return k != FLOE_TK_STRUCT && k != FLOE_TK_LIST && k != FLOE_TK_MAP;
}

/* ---- nodes ---------------------------------------------------------- */

floe_rnode_t *floe_rnode_new(const char *name, size_t name_len, floe_tkind_t kind)
{
    floe_rnode_t *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->name = malloc(name_len + 1);
    if (!n->name) {
        free(n);
        return NULL;
    }
    memcpy(n->name, name, name_len);
    n->name[name_len] = '\0';
    n->name_len = name_len;
    n->plain_name = true;
    for (size_t i = 0; i < name_len; i++) {
        uint8_t c = (uint8_t)name[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') n->plain_name = false;
    }
    n->kind = kind;
    if (is_primitive(kind)) {
        n->col = calloc(1, sizeof *n->col);
        if (!n->col) {
            free(n->name);
            free(n);
            return NULL;
        }
        n->col->node = n;
    }
    return n;
}

static void col_free(floe_rcol_t *c)
{
    if (!c) return;
    floe_buf_free(&c->defs);
    floe_buf_free(&c->reps);
    floe_buf_free(&c->vals);
    floe_buf_free(&c->bytes);
    free(c);
}

void floe_rnode_free(floe_rnode_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->nkids; i++) floe_rnode_free(n->kids[i]);
    free(n->kids);
    col_free(n->col);
    free(n->name);
    free(n);
}

int floe_rnode_add_kid(floe_rnode_t *parent, floe_rnode_t *kid)
{
    if (parent->nkids == parent->capkids) {
        size_t cap = parent->capkids ? parent->capkids * 2 : 4;
        floe_rnode_t **k = realloc(parent->kids, cap * sizeof *k);
        if (!k) return -1;
        parent->kids = k;
        parent->capkids = cap;
    }
    parent->kids[parent->nkids++] = kid;
    kid->parent = parent;
    return 0;
}

int floe_rnode_depth(const floe_rnode_t *n)
{
    int d = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        int k = floe_rnode_depth(n->kids[i]) + 1;
        if (k > d) d = k;
    }
    return d;
}

size_t floe_rnode_leaf_count(const floe_rnode_t *n)
{
    if (n->col) return 1;
    size_t c = 0;
    for (size_t i = 0; i < n->nkids; i++) c += floe_rnode_leaf_count(n->kids[i]);
    return c;
}

/* Levels follow Parquet's layout: an optional field adds one definition
 * level; a list is `optional group (LIST) { repeated group list { optional
 * element } }`, adding one level for the list, one (and a repetition level)
 * for "has an element", one for the element being non-null.  A map is the
 * same with a required key and an optional value in the repeated group. */
static void relevel(floe_rnode_t *n)
{
    floe_rnode_t *p = n->parent;
    if (p->kind == FLOE_TK_LIST || p->kind == FLOE_TK_MAP) {
        n->def = p->def + 1 + (n->required ? 0 : 1);
        n->rep = p->rep + 1;
    } else {
        n->def = p->def + (n->required ? 0 : 1);
        n->rep = p->rep;
    }
    for (size_t i = 0; i < n->nkids; i++) relevel(n->kids[i]);
}

/* Definition levels of the entries under n where n is present (def >= from)
 * move up by one. */
static void raise_defs(floe_rnode_t *n, int from)
{
    if (n->col) {
        floe_rcol_t *c = n->col;
        for (size_t i = 0; i < c->defs.len; i++)
            if (c->defs.data[i] >= from) c->defs.data[i]++;
    }
    for (size_t i = 0; i < n->nkids; i++) raise_defs(n->kids[i], from);
}

void floe_rows_make_optional(floe_rows_t *r, floe_rnode_t *n)
{
    if (!n->required || !n->parent) return;
    raise_defs(n, n->def);
    n->required = false;
    relevel(n);
    r->shape_version++;
}

/* ---- columns -------------------------------------------------------- */

int floe_rcol_put_bytes(floe_rnode_t *n, int rep, const void *p, size_t len, floe_err_t *err)
{
    floe_rcol_t *c = n->col;
    if (c->bytes.len + len > UINT32_MAX)
        return floe_err_set(err, FLOE_ERANGE, "column '%s' over 4 GiB", n->name);
    if (len && floe_rbuf_put(&c->bytes, p, len) < 0) return floe_err_oom(err);
    uint32_t end = (uint32_t)c->bytes.len;
    return floe_rcol_put(n, rep, &end, 4, err);
}

const char *floe_rows_path(const floe_rnode_t *n, char *buf, size_t size)
{
    const floe_rnode_t *chain[64];
    size_t k = 0;
    for (; n && n->parent && k < 64; n = n->parent) chain[k++] = n;
    size_t at = 0;
    buf[0] = '\0';
    while (k-- > 0 && at < size) {
        int w = snprintf(buf + at, size - at, "%s%s", at ? "." : "", chain[k]->name);
        if (w < 0) break;
        at += (size_t)w;
    }
    return buf;
}

int floe_rows_write_nulls(floe_rnode_t *n, int def, int rep)
{
    if (n->col) return floe_rcol_push_level(n->col, def, rep);
    for (size_t i = 0; i < n->nkids; i++)
        if (floe_rows_write_nulls(n->kids[i], def, rep) < 0) return -1;
    return 0;
}

static void collect_leaves(floe_rnode_t *n, floe_rcol_t ***out, size_t *len)
{
    if (n->col) {
        (*out)[(*len)++] = n->col;
        return;
    }
    for (size_t i = 0; i < n->nkids; i++) collect_leaves(n->kids[i], out, len);
}

static int rebuild_leaves(floe_rows_t *r)
{
    size_t need = floe_rnode_leaf_count(&r->root);
    if (need > r->capleaves) {
        floe_rcol_t **l = realloc(r->leaves, need * sizeof *l);
        if (!l) return -1;
        r->leaves = l;
        r->capleaves = need;
    }
    r->nleaves = 0;
    collect_leaves(&r->root, &r->leaves, &r->nleaves);
    return 0;
}

/* ---- the buffer ----------------------------------------------------- */

floe_rows_t *floe_rows_new(const floe_rows_opts_t *opts)
{
    floe_rows_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->root.kind = FLOE_TK_STRUCT;
    r->root.required = true;
    r->opts.widen_long_to_double = true;
    r->opts.infer_timestamps = true;
    r->opts.max_depth = 32;
    r->opts.max_leaves = 2048;
    if (opts) {
        r->opts = *opts;
        if (r->opts.max_depth <= 0 || r->opts.max_depth > 64) r->opts.max_depth = 32;
        if (!r->opts.max_leaves) r->opts.max_leaves = 2048;
    }
    return r;
}

void floe_rows_free(floe_rows_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->root.nkids; i++) floe_rnode_free(r->root.kids[i]);
    free(r->root.kids);
    free(r->leaves);
    free(r->added);
    free(r);
}

floe_rnode_t *floe_rows_root(floe_rows_t *r)
{
    return &r->root;
}
size_t floe_rows_count(const floe_rows_t *r)
{
    return r->nrows;
}
uint64_t floe_rows_shape_version(const floe_rows_t *r)
{
    return r->shape_version;
}

uint64_t floe_rows_widen_refused(const floe_rows_t *r)
{
    return r->widen_refused;
}

floe_rcol_t *const *floe_rows_leaves(const floe_rows_t *r, size_t *n)
{
    *n = r->nleaves;
    return r->leaves;
}

size_t floe_rows_bytes(const floe_rows_t *r)
{
    size_t b = 0;
    for (size_t i = 0; i < r->nleaves; i++) {
        const floe_rcol_t *c = r->leaves[i];
        b += c->defs.len + c->reps.len + c->vals.len + c->bytes.len;
    }
    return b;
}

floe_rnode_t *floe_rows_child(const floe_rnode_t *parent, const char *name)
{
    for (size_t i = 0; i < parent->nkids; i++)
        if (strcmp(parent->kids[i]->name, name) == 0) return parent->kids[i];
    return NULL;
}

/* Backfill the leaves of `sub`, just attached under `parent`, with nulls for
 * every row held (up to the begin marks, so partial writes of the current
 * row elsewhere do not count).  Entries come from a leaf of parent that is
 * not in sub: one per instance of parent or of the nearest absent ancestor;
 * continuation entries of lists inside parent are skipped. */
static int backfill(floe_rows_t *r, floe_rnode_t *parent, floe_rnode_t *sub)
{
    floe_rcol_t *sib = NULL;
    for (size_t i = 0; i < parent->nkids && !sib; i++) {
        floe_rnode_t *k = parent->kids[i];
        if (k == sub) continue;
        while (!k->col && k->nkids) k = k->kids[0];
        if (k->col) sib = k->col;
    }
    size_t nleaf = floe_rnode_leaf_count(sub);
    floe_rcol_t *stack[64], **leaves = stack;
    if (nleaf > 64 && !(leaves = malloc(nleaf * sizeof *leaves))) return -1;
    size_t nl = 0;
    collect_leaves(sub, &leaves, &nl);
    int rc = 0;
    for (size_t li = 0; li < nl && rc == 0; li++) {
        floe_rcol_t *c = leaves[li];
        if (!sib) {
            /* parent is the root (or has no other leaf yet): one entry a row */
            for (size_t i = 0; i < r->nrows && rc == 0; i++) rc = floe_rcol_push_level(c, 0, 0);
        } else {
            for (size_t i = 0; i < sib->m_lev && rc == 0; i++) {
                int d = sib->defs.data[i], rp = sib->reps.data[i];
                if (rp > parent->rep) continue;
                rc = floe_rcol_push_level(c, d < parent->def ? d : parent->def, rp);
            }
        }
        c->m_lev = c->defs.len;
        c->m_vals = c->m_bytes = c->m_nvals = 0;
    }
    if (leaves != stack) free(leaves);
    return rc;
}

int floe_rows_attach(floe_rows_t *r, floe_rnode_t *parent, floe_rnode_t *sub, floe_err_t *err)
{
    size_t add = floe_rnode_leaf_count(sub);
    if (r->nleaves + add > r->opts.max_leaves) {
        floe_err_set(err, FLOE_ERANGE, "too many columns (cap %zu) adding field '%s'",
                     r->opts.max_leaves, sub->name);
        floe_rnode_free(sub);
        return -1;
    }
    if (r->nadded == r->capadded) {
        size_t cap = r->capadded ? r->capadded * 2 : 8;
        floe_rnode_t **a = realloc(r->added, cap * sizeof *a);
        if (!a) goto oom;
        r->added = a;
        r->capadded = cap;
    }
    if (floe_rnode_add_kid(parent, sub) < 0) goto oom;
    relevel(sub);
    if (backfill(r, parent, sub) < 0 || rebuild_leaves(r) < 0) {
        parent->nkids--;
        rebuild_leaves(r); /* shrinking: cannot fail */
        goto oom;
    }
    r->added[r->nadded++] = sub;
    r->shape_version++;
    return 0;
oom:
    floe_rnode_free(sub);
    return floe_err_set(err, FLOE_ENOMEM, "out of memory adding field");
}

void floe_rows_widen(floe_rows_t *r, floe_rnode_t *n)
{
    floe_rcol_t *c = n->col;
    for (size_t j = 0; j < c->nvals; j++) {
        double d = (double)floe_rcol_long(c, j);
        memcpy(c->vals.data + 8 * j, &d, 8);
    }
    n->kind = FLOE_TK_DOUBLE;
    r->shape_version++;
}

/* Re-encode the decimals of c to `to` bytes each (more than they have):
 * big-endian two's complement, sign-extended. */
static int widen_decimals(floe_rcol_t *c, size_t to)
{
    floe_buf_t nb = FLOE_BUF_INIT;
    if (floe_buf_reserve(&nb, c->nvals * to) < 0) return -1;
    uint32_t start = 0; /* of value j in the old bytes (vals is rewritten as we go) */
    for (size_t j = 0; j < c->nvals; j++) {
        uint32_t end;
        memcpy(&end, c->vals.data + 4 * j, 4);
        const uint8_t *v = c->bytes.data + start;
        size_t len = end - start;
        uint8_t pad = len && (v[0] & 0x80) ? 0xff : 0;
        for (size_t k = len; k < to; k++) nb.data[nb.len++] = pad;
        memcpy(nb.data + nb.len, v, len);
        nb.len += len;
        uint32_t nend = (uint32_t)nb.len;
        memcpy(c->vals.data + 4 * j, &nend, 4);
        start = end;
    }
    floe_buf_free(&c->bytes);
    c->bytes = nb;
    return 0;
}

/* Widen fixed-width values of c from w to 8 bytes in place (back to front). */
static int widen_values(floe_rcol_t *c, floe_tkind_t from, floe_tkind_t to)
{
    size_t n = c->nvals;
    if (floe_buf_reserve(&c->vals, n * 8 - c->vals.len) < 0) return -1;
    for (size_t j = n; j-- > 0;) {
        int64_t l;
        double d;
        if (from == FLOE_TK_INT) {
            int32_t i;
            memcpy(&i, c->vals.data + 4 * j, 4);
            l = i;
            d = i;
        } else if (from == FLOE_TK_FLOAT) {
            float f;
            memcpy(&f, c->vals.data + 4 * j, 4);
            d = f;
            l = 0;
        } else {
            memcpy(&l, c->vals.data + 8 * j, 8);
            d = (double)l;
        }
        memcpy(c->vals.data + 8 * j, to == FLOE_TK_DOUBLE ? (void *)&d : (void *)&l, 8);
    }
    c->vals.len = n * 8;
    return 0;
}

int floe_rows_promote(floe_rows_t *r, floe_rnode_t *n, floe_tkind_t to, int32_t precision,
                      floe_err_t *err)
{
    floe_tkind_t from = n->kind;
    floe_rcol_t *c = n->col;
    bool ok = (from == FLOE_TK_INT && to == FLOE_TK_LONG) ||
              (from == FLOE_TK_FLOAT && to == FLOE_TK_DOUBLE) ||
              (from == FLOE_TK_LONG && to == FLOE_TK_DOUBLE) ||
              (from == FLOE_TK_DECIMAL && to == FLOE_TK_DECIMAL && precision > n->precision);
    if (!ok || !c)
        return floe_err_set(err, FLOE_EINVAL, "field '%s': %s cannot become %s", n->name,
                            floe_tkind_name(from), floe_tkind_name(to));
    /* the begin marks move with the values (the row being built is kept) */
    if (from == FLOE_TK_DECIMAL) {
        size_t a = (size_t)floe_decimal_bytes(n->precision),
               b = (size_t)floe_decimal_bytes(precision);
        if (b > a) {
            if (widen_decimals(c, b) < 0) return floe_err_oom(err);
            c->m_bytes = c->m_nvals * b;
        }
        n->precision = precision;
    } else {
        if (widen_values(c, from, to) < 0) return floe_err_oom(err);
        c->m_vals = c->m_nvals * 8;
        n->kind = to;
    }
    r->shape_version++;
    return 0;
}

/* Checks shared by add_field and add_map, then attach n (owned). */
static floe_rnode_t *add_node(floe_rows_t *r, floe_rnode_t *parent, floe_rnode_t *n,
                              floe_err_t *err)
{
    if (parent->kind != FLOE_TK_STRUCT) {
        floe_err_set(err, FLOE_EINVAL, "'%s' is not a struct",
                     parent->name ? parent->name : "(root)");
        goto fail;
    }
    if (floe_rows_child(parent, n->name)) {
        floe_err_set(err, FLOE_EEXIST, "field '%s' exists", n->name);
        goto fail;
    }
    if (n->required && r->nrows) {
        floe_err_set(err, FLOE_EINVAL, "required field '%s' added after rows", n->name);
        goto fail;
    }
    if (floe_rnode_add_kid(parent, n) < 0) goto oom;
    relevel(n);
    if (backfill(r, parent, n) < 0 || rebuild_leaves(r) < 0) {
        parent->nkids--;
        rebuild_leaves(r);
        goto oom;
    }
    r->shape_version++;
    return n;
oom:
    floe_err_oom(err);
fail:
    floe_rnode_free(n);
    return NULL;
}

floe_rnode_t *floe_rows_add_field(floe_rows_t *r, floe_rnode_t *parent, const char *name,
                                  floe_tkind_t kind, bool required, floe_err_t *err)
{
    if (kind == FLOE_TK_LIST || kind == FLOE_TK_MAP) {
        floe_err_set(err, FLOE_EUNSUPPORTED, "%s fields are not added by name",
                     floe_tkind_name(kind));
        return NULL;
    }
    floe_rnode_t *n = floe_rnode_new(name, strlen(name), kind);
    if (!n) {
        floe_err_oom(err);
        return NULL;
    }
    n->required = required;
    return add_node(r, parent, n, err);
}

floe_rnode_t *floe_rows_add_map(floe_rows_t *r, floe_rnode_t *parent, const char *name,
                                floe_tkind_t key_kind, floe_tkind_t value_kind, bool required,
                                floe_err_t *err)
{
    if (!is_primitive(key_kind) || !is_primitive(value_kind)) {
        floe_err_set(err, FLOE_EUNSUPPORTED, "map keys and values must be primitive");
        return NULL;
    }
    floe_rnode_t *m = floe_rnode_new(name, strlen(name), FLOE_TK_MAP);
    floe_rnode_t *k = floe_rnode_new("key", 3, key_kind);
    floe_rnode_t *v = floe_rnode_new("value", 5, value_kind);
    if (!m || !k || !v || floe_rnode_add_kid(m, k) < 0) {
        floe_rnode_free(m);
        floe_rnode_free(k);
        floe_rnode_free(v);
        floe_err_oom(err);
        return NULL;
    }
    if (floe_rnode_add_kid(m, v) < 0) {
        floe_rnode_free(m);
        floe_rnode_free(v);
        floe_err_oom(err);
        return NULL;
    }
    m->required = required;
    k->required = true;
    return add_node(r, parent, m, err);
}

/* ---- rows ------------------------------------------------------------ */

int32_t floe_rows_held(const floe_rows_t *r)
{
    return r->held;
}

void floe_rows_begin(floe_rows_t *r)
{
    r->held = 0;
    r->row_stamp = ++r->stamp_seq;
    r->nadded = 0;
    for (size_t i = 0; i < r->nleaves; i++) {
        floe_rcol_t *c = r->leaves[i];
        c->m_lev = c->defs.len;
        c->m_vals = c->vals.len;
        c->m_bytes = c->bytes.len;
        c->m_nvals = c->nvals;
    }
}

static void truncate_to_marks(floe_rows_t *r)
{
    for (size_t i = 0; i < r->nleaves; i++) {
        floe_rcol_t *c = r->leaves[i];
        c->defs.len = c->reps.len = c->m_lev;
        c->vals.len = c->m_vals;
        c->bytes.len = c->m_bytes;
        c->nvals = c->m_nvals;
    }
}

void floe_rows_rollback(floe_rows_t *r)
{
    /* fields this row added go first: they sit last among their siblings */
    bool removed = r->nadded > 0;
    while (r->nadded) {
        floe_rnode_t *sub = r->added[--r->nadded];
        floe_rnode_t *p = sub->parent;
        if (p->nkids && p->kids[p->nkids - 1] == sub) p->nkids--;
        floe_rnode_free(sub);
    }
    if (removed) {
        rebuild_leaves(r); /* shrinking: cannot fail */
        r->shape_version++;
    }
    truncate_to_marks(r);
}

/* Null every field of struct s (present in this row) that was not set.
 * Structs filled by puts are walked; structs shredded from JSON filled
 * their own missing fields already. */
static int fill_missing(floe_rows_t *r, floe_rnode_t *s, floe_err_t *err)
{
    for (size_t i = 0; i < s->nkids; i++) {
        floe_rnode_t *k = s->kids[i];
        if (k->stamp >= r->row_stamp) {
            if (k->kind == FLOE_TK_STRUCT && k->sys && fill_missing(r, k, err) < 0) return -1;
            continue;
        }
        if (k->required)
            return floe_err_set(err, FLOE_EINVAL, "required field '%s' not set", k->name);
        k->schema_nullable = true; /* a null, whatever a schema said */
        if (floe_rows_write_nulls(k, s->def, s->rep) < 0) return floe_err_oom(err);
    }
    return 0;
}

int floe_rows_end(floe_rows_t *r, floe_err_t *err)
{
    if (fill_missing(r, &r->root, err) < 0) return -1;
    r->nrows++;
    r->nadded = 0;
    return 0;
}

bool floe_rows_is_set(const floe_rows_t *r, const floe_rnode_t *n)
{
    const floe_rcol_t *c = n->col;
    return c && n->stamp >= r->row_stamp && c->defs.len > c->m_lev &&
           c->defs.data[c->defs.len - 1] == n->def;
}

void floe_rows_clear(floe_rows_t *r)
{
    for (size_t i = 0; i < r->nleaves; i++) {
        floe_rcol_t *c = r->leaves[i];
        floe_buf_reset(&c->defs);
        floe_buf_reset(&c->reps);
        floe_buf_reset(&c->vals);
        floe_buf_reset(&c->bytes);
        c->nvals = 0;
        c->m_lev = c->m_vals = c->m_bytes = c->m_nvals = 0;
    }
    r->nrows = 0;
}

/* ---- direct puts ------------------------------------------------------ */

/* A put sets the node and makes every struct above it present. */
static void stamp_path(floe_rows_t *r, floe_rnode_t *n)
{
    for (; n && n != &r->root; n = n->parent) n->stamp = r->row_stamp;
}

static int put_fixed(floe_rows_t *r, floe_rnode_t *n, const void *v, size_t w)
{
    floe_rcol_t *c = n->col;
    if (floe_rcol_push_level(c, n->def, n->rep) < 0) return -1;
    if (floe_rbuf_put(&c->vals, v, w) < 0) {
        c->defs.len--;
        c->reps.len--;
        return -1;
    }
    c->nvals++;
    stamp_path(r, n);
    return 0;
}

int floe_rows_put_long(floe_rows_t *r, floe_rnode_t *n, int64_t v)
{
    return put_fixed(r, n, &v, 8);
}

int floe_rows_put_int(floe_rows_t *r, floe_rnode_t *n, int32_t v)
{
    return put_fixed(r, n, &v, 4);
}

int floe_rows_put_double(floe_rows_t *r, floe_rnode_t *n, double v)
{
    return put_fixed(r, n, &v, 8);
}

int floe_rows_put_bool(floe_rows_t *r, floe_rnode_t *n, bool v)
{
    uint8_t b = v;
    return put_fixed(r, n, &b, 1);
}

int floe_rows_put_bytes(floe_rows_t *r, floe_rnode_t *n, const void *p, size_t len)
{
    floe_rcol_t *c = n->col;
    if (c->bytes.len + len > UINT32_MAX) return -1;
    if (floe_buf_append(&c->bytes, p, len) < 0) return -1;
    uint32_t end = (uint32_t)c->bytes.len;
    if (put_fixed(r, n, &end, 4) < 0) {
        c->bytes.len -= len;
        return -1;
    }
    return 0;
}

int floe_rows_put_null(floe_rows_t *r, floe_rnode_t *n)
{
    if (n->required || floe_rows_write_nulls(n, n->def - 1, n->rep) < 0) return -1;
    stamp_path(r, n);
    return 0;
}

static int push_bytes(floe_rcol_t *c, int def, int rep, floe_slice_t v)
{
    if (c->bytes.len + v.len > UINT32_MAX) return -1;
    if (floe_rcol_push_level(c, def, rep) < 0) return -1;
    if (floe_buf_append(&c->bytes, v.ptr, v.len) < 0) return -1;
    uint32_t end = (uint32_t)c->bytes.len;
    if (floe_buf_append(&c->vals, &end, 4) < 0) return -1;
    c->nvals++;
    return 0;
}

int floe_rows_put_map(floe_rows_t *r, floe_rnode_t *m, const floe_slice_t *keys,
                      const floe_slice_t *vals, const bool *val_null, size_t n)
{
    floe_rnode_t *k = m->kids[0], *v = m->kids[1];
    if (n == 0) {
        if (floe_rows_write_nulls(m, m->def, m->rep) < 0) return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int rep = i ? k->rep : m->rep;
        if (push_bytes(k->col, k->def, rep, keys[i]) < 0) return -1;
        int rc = val_null && val_null[i] ? floe_rcol_push_level(v->col, v->def - 1, rep)
                                         : push_bytes(v->col, v->def, rep, vals[i]);
        if (rc < 0) return -1;
    }
    stamp_path(r, m);
    return 0;
}

/* The path of node n ("/a:struct/b:long"), for messages. */
static void node_path(const floe_rnode_t *n, char *out, size_t size)
{
    if (n->parent && n->parent->parent) node_path(n->parent, out, size);
    else
        out[0] = 0;
    size_t at = strlen(out);
    if (at < size) snprintf(out + at, size - at, "/%s:%s", n->name, floe_tkind_name(n->kind));
}

static bool same_buf(const floe_buf_t *x, const floe_buf_t *y)
{
    return x->len == y->len && (!x->len || !memcmp(x->data, y->data, x->len));
}

bool floe_rows_same(const floe_rows_t *a, const floe_rows_t *b, char *why, size_t size)
{
    if (a->nrows != b->nrows) {
        snprintf(why, size, "%zu rows, %zu rows", a->nrows, b->nrows);
        return false;
    }
    if (a->nleaves != b->nleaves) {
        snprintf(why, size, "%zu columns, %zu columns", a->nleaves, b->nleaves);
        return false;
    }
    for (size_t i = 0; i < a->nleaves; i++) {
        const floe_rcol_t *x = a->leaves[i], *y = b->leaves[i];
        char px[256], py[256];
        node_path(x->node, px, sizeof px);
        node_path(y->node, py, sizeof py);
        const char *what = strcmp(px, py)                  ? "the shape"
                           : !same_buf(&x->defs, &y->defs) ? "definition levels"
                           : !same_buf(&x->reps, &y->reps) ? "repetition levels"
                           : x->nvals != y->nvals || !same_buf(&x->vals, &y->vals) ? "values"
                           : !same_buf(&x->bytes, &y->bytes)                       ? "bytes"
                                                                                   : NULL;
        if (what) {
            snprintf(why, size, "column %s (and %s): %s differ", px, py, what);
            return false;
        }
    }
    return true;
}
