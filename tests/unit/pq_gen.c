/* Parquet test support: see pq_gen.h. */
#include "pq_gen.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

void pqg_init(pqg_t *g, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->s = floe_pq_schema_new();
    floe_arena_init(&g->arena, 1 << 16, 0);
    g->rng = seed * 0x9e3779b97f4a7c15ull + 1;
    g->next_id = 1;
    g->null_rate = 0.15;
}

void pqg_free(pqg_t *g)
{
    floe_pq_schema_free(g->s);
    floe_arena_free(&g->arena);
}

uint64_t pqg_rand(pqg_t *g)
{
    uint64_t x = g->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

static double frand(pqg_t *g)
{
    return (double)(pqg_rand(g) >> 11) / 9007199254740992.0;
}

static int add(pqg_t *g, floe_pq_node_t n)
{
    floe_err_t err;
    n.field_id = g->next_id++;
    int i = floe_pq_schema_add(g->s, &n, &err);
    if (i < 0) {
        fprintf(stderr, "pqg: %s\n", err.msg);
        abort();
    }
    return i;
}

static floe_pq_node_t leaf(const char *name, int parent, floe_pq_rep_t rep, floe_pq_phys_t p,
                           floe_pq_logical_t lt)
{
    floe_pq_node_t n = floe_pq_leaf(name, rep, p, -1);
    n.parent = parent;
    n.logical = lt;
    return n;
}

/* Leaf kinds the generator knows. */
enum {
    K_BOOL,
    K_I32,
    K_I64,
    K_F32,
    K_F64,
    K_STR,
    K_BIN,
    K_UUID,
    K_DEC32,
    K_DEC64,
    K_DEC128,
    K_DATE,
    K_TIME,
    K_TS,
    K_TSTZ,
    K_I16,
    K_LOWCARD,
    K_FIXED4,
    K_COUNT
};

static int add_leaf(pqg_t *g, const char *name, int parent, floe_pq_rep_t rep, int kind)
{
    floe_pq_node_t n;
    switch (kind) {
    case K_BOOL: n = leaf(name, parent, rep, FLOE_PQ_BOOLEAN, FLOE_PQ_LT_NONE); break;
    case K_I32: n = leaf(name, parent, rep, FLOE_PQ_INT32, FLOE_PQ_LT_NONE); break;
    case K_I64: n = leaf(name, parent, rep, FLOE_PQ_INT64, FLOE_PQ_LT_NONE); break;
    case K_F32: n = leaf(name, parent, rep, FLOE_PQ_FLOAT, FLOE_PQ_LT_NONE); break;
    case K_F64: n = leaf(name, parent, rep, FLOE_PQ_DOUBLE, FLOE_PQ_LT_NONE); break;
    case K_STR:
    case K_LOWCARD: n = leaf(name, parent, rep, FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_STRING); break;
    case K_BIN: n = leaf(name, parent, rep, FLOE_PQ_BYTE_ARRAY, FLOE_PQ_LT_NONE); break;
    case K_UUID:
        n = leaf(name, parent, rep, FLOE_PQ_FIXED, FLOE_PQ_LT_UUID);
        n.type_length = 16;
        break;
    case K_DEC32:
        n = leaf(name, parent, rep, FLOE_PQ_INT32, FLOE_PQ_LT_DECIMAL);
        n.precision = 9;
        n.scale = 2;
        break;
    case K_DEC64:
        n = leaf(name, parent, rep, FLOE_PQ_INT64, FLOE_PQ_LT_DECIMAL);
        n.precision = 18;
        n.scale = 4;
        break;
    case K_DEC128:
        n = leaf(name, parent, rep, FLOE_PQ_FIXED, FLOE_PQ_LT_DECIMAL);
        n.type_length = 16;
        n.precision = 38;
        n.scale = 10;
        break;
    case K_DATE: n = leaf(name, parent, rep, FLOE_PQ_INT32, FLOE_PQ_LT_DATE); break;
    case K_TIME:
        n = leaf(name, parent, rep, FLOE_PQ_INT64, FLOE_PQ_LT_TIME);
        n.unit = FLOE_PQ_MICROS;
        break;
    case K_TS:
        n = leaf(name, parent, rep, FLOE_PQ_INT64, FLOE_PQ_LT_TIMESTAMP);
        n.unit = FLOE_PQ_MICROS;
        break;
    case K_TSTZ:
        n = leaf(name, parent, rep, FLOE_PQ_INT64, FLOE_PQ_LT_TIMESTAMP);
        n.unit = FLOE_PQ_MICROS;
        n.utc = true;
        break;
    case K_I16:
        n = leaf(name, parent, rep, FLOE_PQ_INT32, FLOE_PQ_LT_INT);
        n.bit_width = 16;
        n.is_signed = true;
        break;
    default:
        n = leaf(name, parent, rep, FLOE_PQ_FIXED, FLOE_PQ_LT_NONE);
        n.type_length = 4;
        break;
    }
    return add(g, n);
}

void pqg_all_types_schema(pqg_t *g)
{
    static const char *names[K_COUNT] = {"b",    "i32",  "i64",  "f32",   "f64",     "str",
                                         "bin",  "uuid", "dec9", "dec18", "dec38",   "date",
                                         "time", "ts",   "tstz", "i16",   "lowcard", "fix4"};
    for (int k = 0; k < K_COUNT; k++)
        add_leaf(g, names[k], -1, k % 3 == 0 ? FLOE_PQ_REQUIRED : FLOE_PQ_OPTIONAL, k);
    int st =
        add(g, (floe_pq_node_t){
                   .name = "st", .parent = -1, .rep = FLOE_PQ_OPTIONAL, .phys = FLOE_PQ_GROUP});
    add_leaf(g, "x", st, FLOE_PQ_REQUIRED, K_I64);
    add_leaf(g, "y", st, FLOE_PQ_OPTIONAL, K_STR);
    int l = add(g, (floe_pq_node_t){.name = "tags",
                                    .parent = -1,
                                    .rep = FLOE_PQ_OPTIONAL,
                                    .phys = FLOE_PQ_GROUP,
                                    .logical = FLOE_PQ_LT_LIST});
    int ll =
        add(g, (floe_pq_node_t){
                   .name = "list", .parent = l, .rep = FLOE_PQ_REPEATED, .phys = FLOE_PQ_GROUP});
    add_leaf(g, "element", ll, FLOE_PQ_OPTIONAL, K_STR);
    int m = add(g, (floe_pq_node_t){.name = "attrs",
                                    .parent = -1,
                                    .rep = FLOE_PQ_OPTIONAL,
                                    .phys = FLOE_PQ_GROUP,
                                    .logical = FLOE_PQ_LT_MAP});
    int kv = add(
        g, (floe_pq_node_t){
               .name = "key_value", .parent = m, .rep = FLOE_PQ_REPEATED, .phys = FLOE_PQ_GROUP});
    add_leaf(g, "key", kv, FLOE_PQ_REQUIRED, K_STR);
    add_leaf(g, "value", kv, FLOE_PQ_OPTIONAL, K_I32);
    /* list of structs holding a list */
    int ls = add(g, (floe_pq_node_t){.name = "items",
                                     .parent = -1,
                                     .rep = FLOE_PQ_REQUIRED,
                                     .phys = FLOE_PQ_GROUP,
                                     .logical = FLOE_PQ_LT_LIST});
    int lsl =
        add(g, (floe_pq_node_t){
                   .name = "list", .parent = ls, .rep = FLOE_PQ_REPEATED, .phys = FLOE_PQ_GROUP});
    int el = add(
        g, (floe_pq_node_t){
               .name = "element", .parent = lsl, .rep = FLOE_PQ_OPTIONAL, .phys = FLOE_PQ_GROUP});
    add_leaf(g, "id", el, FLOE_PQ_REQUIRED, K_I32);
    int il = add(g, (floe_pq_node_t){.name = "vals",
                                     .parent = el,
                                     .rep = FLOE_PQ_OPTIONAL,
                                     .phys = FLOE_PQ_GROUP,
                                     .logical = FLOE_PQ_LT_LIST});
    int ill =
        add(g, (floe_pq_node_t){
                   .name = "list", .parent = il, .rep = FLOE_PQ_REPEATED, .phys = FLOE_PQ_GROUP});
    add_leaf(g, "element", ill, FLOE_PQ_REQUIRED, K_F64);
}

static char *name_of(pqg_t *g, const char *prefix, int i)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%s%d", prefix, i);
    return floe_arena_strndup(&g->arena, tmp, strlen(tmp));
}

static void random_field(pqg_t *g, const char *name, int parent, int depth)
{
    floe_pq_rep_t rep = pqg_rand(g) % 3 ? FLOE_PQ_OPTIONAL : FLOE_PQ_REQUIRED;
    int what = depth > 0 ? (int)(pqg_rand(g) % 6) : 0;
    if (what <= 2) {
        add_leaf(g, name, parent, rep, (int)(pqg_rand(g) % K_COUNT));
    } else if (what == 3) {
        int st = add(
            g, (floe_pq_node_t){.name = name, .parent = parent, .rep = rep, .phys = FLOE_PQ_GROUP});
        int n = 1 + (int)(pqg_rand(g) % 3);
        for (int i = 0; i < n; i++) random_field(g, name_of(g, "f", i), st, depth - 1);
    } else if (what == 4) {
        int l = add(g, (floe_pq_node_t){.name = name,
                                        .parent = parent,
                                        .rep = rep,
                                        .phys = FLOE_PQ_GROUP,
                                        .logical = FLOE_PQ_LT_LIST});
        int ll = add(
            g, (floe_pq_node_t){
                   .name = "list", .parent = l, .rep = FLOE_PQ_REPEATED, .phys = FLOE_PQ_GROUP});
        random_field(g, "element", ll, depth - 1);
    } else {
        int m = add(g, (floe_pq_node_t){.name = name,
                                        .parent = parent,
                                        .rep = rep,
                                        .phys = FLOE_PQ_GROUP,
                                        .logical = FLOE_PQ_LT_MAP});
        int kv = add(g, (floe_pq_node_t){.name = "key_value",
                                         .parent = m,
                                         .rep = FLOE_PQ_REPEATED,
                                         .phys = FLOE_PQ_GROUP});
        add_leaf(g, "key", kv, FLOE_PQ_REQUIRED, pqg_rand(g) & 1 ? K_STR : K_I64);
        random_field(g, "value", kv, depth - 1);
    }
}

void pqg_random_schema(pqg_t *g, int max_fields, int max_depth)
{
    int n = 1 + (int)(pqg_rand(g) % (uint64_t)max_fields);
    for (int i = 0; i < n; i++) random_field(g, name_of(g, "c", i), -1, max_depth);
}

/* ---- values ---- */

static int kind_of(const floe_pq_node_t *n)
{
    switch (n->phys) {
    case FLOE_PQ_BOOLEAN: return K_BOOL;
    case FLOE_PQ_INT32:
        return n->logical == FLOE_PQ_LT_DECIMAL ? K_DEC32
               : n->logical == FLOE_PQ_LT_DATE  ? K_DATE
               : n->logical == FLOE_PQ_LT_INT   ? K_I16
                                                : K_I32;
    case FLOE_PQ_INT64:
        return n->logical == FLOE_PQ_LT_DECIMAL     ? K_DEC64
               : n->logical == FLOE_PQ_LT_TIME      ? K_TIME
               : n->logical == FLOE_PQ_LT_TIMESTAMP ? (n->utc ? K_TSTZ : K_TS)
                                                    : K_I64;
    case FLOE_PQ_FLOAT: return K_F32;
    case FLOE_PQ_DOUBLE: return K_F64;
    case FLOE_PQ_BYTE_ARRAY: return n->logical == FLOE_PQ_LT_STRING ? K_STR : K_BIN;
    default:
        return n->logical == FLOE_PQ_LT_UUID      ? K_UUID
               : n->logical == FLOE_PQ_LT_DECIMAL ? K_DEC128
                                                  : K_FIXED4;
    }
}

static const char *const words[] = {"alpha", "beta", "gamma", "delta", "", "héllo", "zeta", "x"};

static void gen_leaf(pqg_t *g, const floe_pq_node_t *n, pqg_val_t *v)
{
    uint64_t r = pqg_rand(g);
    bool small = (r & 3) == 0; /* repeats make dictionaries and runs */
    switch (kind_of(n)) {
    case K_BOOL: v->i = r >> 63; break;
    case K_I32: v->i = small ? (int64_t)(r >> 60) : (int32_t)(uint32_t)(r >> 7); break;
    case K_I16: v->i = (int16_t)(r >> 20); break;
    case K_I64: v->i = small ? (int64_t)(r >> 61) : (int64_t)r; break;
    case K_DEC32: v->i = (int64_t)(r % 1999999999ull) - 999999999; break;
    case K_DEC64: v->i = (int64_t)(r % 1999999999999999999ull) - 999999999999999999ll; break;
    case K_DATE: v->i = (int64_t)(r % 60000) - 20000; break;
    case K_TIME: v->i = (int64_t)(r % 86400000000ull); break;
    case K_TS:
    case K_TSTZ: v->i = (int64_t)(r % 8000000000000000ull) - 2000000000000000ll; break;
    case K_F32:
        v->d = (float)((frand(g) - 0.5) * 1e4);
        if (small) v->d = 1.5f;
        break;
    case K_F64:
        v->d = (frand(g) - 0.5) * 1e9;
        if (small) v->d = 0.25;
        break;
    case K_STR: {
        if (small || (r & 8)) {
            const char *w = words[(r >> 8) % 8];
            v->b = (const uint8_t *)w;
            v->blen = (uint32_t)strlen(w);
        } else {
            /* half of them share a long prefix (DELTA_BYTE_ARRAY territory) */
            static const char pre[] = "https://floe.example/path/";
            uint32_t np = (r & 16) ? (uint32_t)sizeof pre - 1 : 0;
            uint32_t len = np + (uint32_t)((r >> 8) % 24);
            char *s = floe_arena_alloc(&g->arena, len + 1);
            memcpy(s, pre, np);
            for (uint32_t k = np; k < len; k++) s[k] = (char)('a' + pqg_rand(g) % 26);
            v->b = (const uint8_t *)s;
            v->blen = len;
        }
        break;
    }
    case K_BIN: {
        uint32_t len = (uint32_t)((r >> 8) % 12);
        uint8_t *s = floe_arena_alloc(&g->arena, len + 1);
        for (uint32_t k = 0; k < len; k++) s[k] = (uint8_t)pqg_rand(g);
        v->b = s;
        v->blen = len;
        break;
    }
    case K_UUID:
    case K_FIXED4: {
        uint32_t len = (uint32_t)n->type_length;
        uint8_t *s = floe_arena_alloc(&g->arena, len);
        for (uint32_t k = 0; k < len; k++) s[k] = small ? (uint8_t)k : (uint8_t)pqg_rand(g);
        v->b = s;
        v->blen = len;
        break;
    }
    case K_DEC128: {
        /* |value| < 10^38: a random 120-bit magnitude is below 1.3e36 */
        __int128 x = ((__int128)(pqg_rand(g) >> 8) << 64) | pqg_rand(g);
        if (r & 1) x = -x;
        uint8_t *s = floe_arena_alloc(&g->arena, 16);
        for (int k = 0; k < 16; k++) s[15 - k] = (uint8_t)(x >> (8 * k));
        v->b = s;
        v->blen = 16;
        break;
    }
    }
}

static void gen_occ(pqg_t *g, int node, pqg_val_t *v);

static void gen_field(pqg_t *g, int node, pqg_val_t *v)
{
    const floe_pq_node_t *n = floe_pq_schema_node(g->s, node);
    memset(v, 0, sizeof *v);
    if (n->rep == FLOE_PQ_REPEATED) {
        uint32_t cnt = (uint32_t)(pqg_rand(g) % 4);
        v->n = cnt;
        v->kids = floe_arena_calloc(&g->arena, cnt ? cnt : 1, sizeof *v->kids);
        const floe_pq_node_t *p = n->parent >= 0 ? floe_pq_schema_node(g->s, n->parent) : NULL;
        for (uint32_t i = 0; i < cnt; i++) {
            gen_occ(g, node, &v->kids[i]);
            if (p && p->logical == FLOE_PQ_LT_MAP) {
                /* unique keys */
                pqg_val_t *k = &v->kids[i].kids[0];
                k->i = (int64_t)i * 7 - 3;
                char *s = floe_arena_alloc(&g->arena, 8);
                snprintf(s, 8, "k%u", i);
                k->b = (const uint8_t *)s;
                k->blen = (uint32_t)strlen(s);
            }
        }
        return;
    }
    if (n->rep == FLOE_PQ_OPTIONAL && frand(g) < g->null_rate) {
        v->null = true;
        return;
    }
    gen_occ(g, node, v);
}

static void gen_occ(pqg_t *g, int node, pqg_val_t *v)
{
    const floe_pq_node_t *n = floe_pq_schema_node(g->s, node);
    memset(v, 0, sizeof *v);
    if (n->phys != FLOE_PQ_GROUP) {
        gen_leaf(g, n, v);
        return;
    }
    int nc = floe_pq_schema_num_children(g->s, node);
    v->n = (uint32_t)nc;
    v->kids = floe_arena_calloc(&g->arena, (size_t)nc, sizeof *v->kids);
    for (int i = 0; i < nc; i++) gen_field(g, floe_pq_schema_child(g->s, node, i), &v->kids[i]);
}

pqg_val_t *pqg_row(pqg_t *g)
{
    int nc = floe_pq_schema_num_children(g->s, -1);
    pqg_val_t *v = floe_arena_calloc(&g->arena, 1, sizeof *v);
    v->n = (uint32_t)nc;
    v->kids = floe_arena_calloc(&g->arena, (size_t)nc, sizeof *v->kids);
    for (int i = 0; i < nc; i++) gen_field(g, floe_pq_schema_child(g->s, -1, i), &v->kids[i]);
    return v;
}

/* ---- shredding ---- */

typedef struct colbuf {
    floe_buf_t def, rep, vals;
} colbuf_t;

typedef struct shred {
    const floe_pq_schema_t *s;
    colbuf_t *cols;
} shred_t;

static int nrep_of(const floe_pq_schema_t *s, int node)
{
    int r = 0;
    for (int a = node; a >= 0; a = floe_pq_schema_node(s, a)->parent)
        r += floe_pq_schema_node(s, a)->rep == FLOE_PQ_REPEATED;
    return r;
}

static void push(shred_t *sh, int node, int d, int r, const pqg_val_t *v)
{
    int col = floe_pq_schema_column_of(sh->s, node);
    colbuf_t *c = &sh->cols[col];
    int16_t dd = (int16_t)d, rr = (int16_t)r;
    floe_buf_append(&c->def, &dd, 2);
    floe_buf_append(&c->rep, &rr, 2);
    if (!v) return;
    const floe_pq_node_t *n = floe_pq_schema_node(sh->s, node);
    switch (n->phys) {
    case FLOE_PQ_BOOLEAN: {
        uint8_t b = (uint8_t)v->i;
        floe_buf_append(&c->vals, &b, 1);
        break;
    }
    case FLOE_PQ_INT32: {
        int32_t x = (int32_t)v->i;
        floe_buf_append(&c->vals, &x, 4);
        break;
    }
    case FLOE_PQ_INT64: floe_buf_append(&c->vals, &v->i, 8); break;
    case FLOE_PQ_FLOAT: {
        float f = (float)v->d;
        floe_buf_append(&c->vals, &f, 4);
        break;
    }
    case FLOE_PQ_DOUBLE: floe_buf_append(&c->vals, &v->d, 8); break;
    default: {
        floe_slice_t s = floe_slice(v->b, v->blen);
        floe_buf_append(&c->vals, &s, sizeof s);
        break;
    }
    }
}

static void nulls(shred_t *sh, int node, int d, int r)
{
    int cols[256];
    int n = floe_pq_schema_columns_under(sh->s, node, cols, 256);
    for (int i = 0; i < n && i < 256; i++)
        push(sh, floe_pq_schema_column_node(sh->s, cols[i]), d, r, NULL);
}

static void shred_occ(shred_t *sh, int node, const pqg_val_t *v, int d, int r);

static void shred_field(shred_t *sh, int node, const pqg_val_t *v, int pd, int r)
{
    const floe_pq_node_t *n = floe_pq_schema_node(sh->s, node);
    if (n->rep == FLOE_PQ_REPEATED) {
        if (v->n == 0) {
            nulls(sh, node, pd, r);
            return;
        }
        int nr = nrep_of(sh->s, node);
        for (uint32_t i = 0; i < v->n; i++)
            shred_occ(sh, node, &v->kids[i], pd + 1, i == 0 ? r : nr);
    } else if (n->rep == FLOE_PQ_OPTIONAL && v->null) {
        nulls(sh, node, pd, r);
    } else {
        shred_occ(sh, node, v, pd + (n->rep == FLOE_PQ_OPTIONAL), r);
    }
}

static void shred_occ(shred_t *sh, int node, const pqg_val_t *v, int d, int r)
{
    const floe_pq_node_t *n = floe_pq_schema_node(sh->s, node);
    if (n->phys != FLOE_PQ_GROUP) {
        push(sh, node, d, r, v);
        return;
    }
    for (uint32_t i = 0; i < v->n; i++)
        shred_field(sh, floe_pq_schema_child(sh->s, node, (int)i), &v->kids[i], d, r);
}

int pqg_write(pqg_t *g, floe_pq_writer_t *w, pqg_val_t **rows, size_t n, floe_err_t *err)
{
    shred_t sh = {g->s, NULL};
    int ncols = floe_pq_schema_num_columns(g->s);
    sh.cols = calloc((size_t)ncols, sizeof *sh.cols);
    for (size_t r = 0; r < n; r++)
        for (uint32_t i = 0; i < rows[r]->n; i++)
            shred_field(&sh, floe_pq_schema_child(g->s, -1, (int)i), &rows[r]->kids[i], 0, 0);
    int rc = 0;
    for (int c = 0; c < ncols && !rc; c++) {
        colbuf_t *cb = &sh.cols[c];
        size_t nl = cb->def.len / 2;
        const floe_pq_node_t *nd = floe_pq_schema_node(g->s, floe_pq_schema_column_node(g->s, c));
        size_t esz = nd->phys == FLOE_PQ_BOOLEAN                              ? 1
                     : nd->phys == FLOE_PQ_INT32 || nd->phys == FLOE_PQ_FLOAT ? 4
                     : nd->phys == FLOE_PQ_INT64 || nd->phys == FLOE_PQ_DOUBLE
                         ? 8
                         : sizeof(floe_slice_t);
        if (g->narrow) {
            uint8_t *d8 = malloc(nl + 1), *r8 = malloc(nl + 1);
            for (size_t k = 0; k < nl; k++) {
                int16_t x;
                memcpy(&x, cb->def.data + 2 * k, 2);
                d8[k] = (uint8_t)x;
                memcpy(&x, cb->rep.data + 2 * k, 2);
                r8[k] = (uint8_t)x;
            }
            rc = floe_pq_write_column8(w, c, nl, floe_pq_schema_max_def(g->s, c) ? d8 : NULL,
                                       floe_pq_schema_max_rep(g->s, c) ? r8 : NULL, cb->vals.data,
                                       cb->vals.len / esz, err);
            free(d8);
            free(r8);
            continue;
        }
        rc = floe_pq_write_column(
            w, c, nl,
            floe_pq_schema_max_def(g->s, c) ? (const int16_t *)(void *)cb->def.data : NULL,
            floe_pq_schema_max_rep(g->s, c) ? (const int16_t *)(void *)cb->rep.data : NULL,
            cb->vals.data, cb->vals.len / esz, err);
    }
    for (int c = 0; c < ncols; c++) {
        floe_buf_free(&sh.cols[c].def);
        floe_buf_free(&sh.cols[c].rep);
        floe_buf_free(&sh.cols[c].vals);
    }
    free(sh.cols);
    if (rc) return rc;
    return floe_pq_writer_rows(w, n, err);
}

/* ---- JSON ---- */

static void json_int(floe_buf_t *o, __int128 v)
{
    /* |v| <= 2^53 as a number, else as a string (as the node side does) */
    __int128 lim = (__int128)1 << 53;
    char tmp[64];
    int k = 63;
    tmp[k] = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        tmp[--k] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (neg) tmp[--k] = '-';
    if (v > lim || v < -lim) floe_buf_printf(o, "\"%s\"", tmp + k);
    else
        floe_buf_append_str(o, tmp + k);
}

static void json_double(floe_buf_t *o, double d)
{
    if (isnan(d)) floe_buf_append_str(o, "\"NaN\"");
    else if (isinf(d))
        floe_buf_append_str(o, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else
        floe_buf_printf(o, "%.17g", d);
}

static void json_leaf(floe_buf_t *o, const floe_pq_node_t *n, const pqg_val_t *v)
{
    switch (n->phys) {
    case FLOE_PQ_BOOLEAN: floe_buf_append_str(o, v->i ? "true" : "false"); return;
    case FLOE_PQ_INT32:
    case FLOE_PQ_INT64: json_int(o, v->i); return;
    case FLOE_PQ_FLOAT: json_double(o, (double)(float)v->d); return;
    case FLOE_PQ_DOUBLE: json_double(o, v->d); return;
    default: break;
    }
    if (n->logical == FLOE_PQ_LT_STRING || n->logical == FLOE_PQ_LT_JSON ||
        n->logical == FLOE_PQ_LT_ENUM) {
        floe_json_str(o, v->b, v->blen);
    } else if (n->logical == FLOE_PQ_LT_UUID && v->blen == 16) {
        char s[40];
        int k = 0;
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) s[k++] = '-';
            k += sprintf(s + k, "%02x", v->b[i]);
        }
        floe_json_str(o, s, (size_t)k);
    } else if (n->logical == FLOE_PQ_LT_DECIMAL && v->blen <= 16 && v->blen > 0) {
        __int128 x = (int8_t)v->b[0];
        for (uint32_t i = 1; i < v->blen; i++) x = x * 256 + v->b[i];
        json_int(o, x);
    } else {
        floe_buf_append_u8(o, '"');
        for (uint32_t i = 0; i < v->blen; i++) floe_buf_printf(o, "%02x", v->b[i]);
        floe_buf_append_u8(o, '"');
    }
}

/* LIST/MAP groups in the standard 3-level shape. */
static bool std_shape(const floe_pq_schema_t *s, int node)
{
    const floe_pq_node_t *n = floe_pq_schema_node(s, node);
    if (n->logical != FLOE_PQ_LT_LIST && n->logical != FLOE_PQ_LT_MAP) return false;
    if (floe_pq_schema_num_children(s, node) != 1) return false;
    int rn = floe_pq_schema_child(s, node, 0);
    const floe_pq_node_t *r = floe_pq_schema_node(s, rn);
    if (r->rep != FLOE_PQ_REPEATED || r->phys != FLOE_PQ_GROUP) return false;
    return floe_pq_schema_num_children(s, rn) == (n->logical == FLOE_PQ_LT_LIST ? 1 : 2);
}

static void json_node(floe_buf_t *o, const floe_pq_schema_t *s, int node, const pqg_val_t *v);

/* A field's value: repeated fields render as arrays of occurrences. */
static void json_field(floe_buf_t *o, const floe_pq_schema_t *s, int node, const pqg_val_t *v)
{
    if (floe_pq_schema_node(s, node)->rep != FLOE_PQ_REPEATED) {
        json_node(o, s, node, v);
        return;
    }
    floe_buf_append_u8(o, '[');
    for (uint32_t i = 0; i < v->n; i++) {
        if (i) floe_buf_append_u8(o, ',');
        json_node(o, s, node, &v->kids[i]);
    }
    floe_buf_append_u8(o, ']');
}

static void json_node(floe_buf_t *o, const floe_pq_schema_t *s, int node, const pqg_val_t *v)
{
    const floe_pq_node_t *n = floe_pq_schema_node(s, node);
    if (v->null) {
        floe_buf_append_str(o, "null");
        return;
    }
    if (n->phys != FLOE_PQ_GROUP) {
        json_leaf(o, n, v);
        return;
    }
    if (std_shape(s, node)) {
        int rn = floe_pq_schema_child(s, node, 0);
        const pqg_val_t *rv = &v->kids[0];
        floe_buf_append_u8(o, '[');
        for (uint32_t i = 0; i < rv->n; i++) {
            if (i) floe_buf_append_u8(o, ',');
            const pqg_val_t *occ = &rv->kids[i];
            if (n->logical == FLOE_PQ_LT_LIST) {
                json_field(o, s, floe_pq_schema_child(s, rn, 0), &occ->kids[0]);
            } else {
                floe_buf_append_u8(o, '[');
                json_field(o, s, floe_pq_schema_child(s, rn, 0), &occ->kids[0]);
                floe_buf_append_u8(o, ',');
                json_field(o, s, floe_pq_schema_child(s, rn, 1), &occ->kids[1]);
                floe_buf_append_u8(o, ']');
            }
        }
        floe_buf_append_u8(o, ']');
        return;
    }
    floe_buf_append_u8(o, '{');
    for (uint32_t i = 0; i < v->n; i++) {
        if (i) floe_buf_append_u8(o, ',');
        int c = floe_pq_schema_child(s, node, (int)i);
        const char *nm = floe_pq_schema_node(s, c)->name;
        floe_json_cstr(o, nm);
        floe_buf_append_u8(o, ':');
        json_field(o, s, c, &v->kids[i]);
    }
    floe_buf_append_u8(o, '}');
}

void pqg_json(const floe_pq_schema_t *s, const pqg_val_t *row, floe_buf_t *out)
{
    floe_buf_append_u8(out, '{');
    for (uint32_t i = 0; i < row->n; i++) {
        if (i) floe_buf_append_u8(out, ',');
        int c = floe_pq_schema_child(s, -1, (int)i);
        const char *nm = floe_pq_schema_node(s, c)->name;
        floe_json_cstr(out, nm);
        floe_buf_append_u8(out, ':');
        json_field(out, s, c, &row->kids[i]);
    }
    floe_buf_append_u8(out, '}');
}

/* ---- assembly ---- */

typedef struct asm_ {
    const floe_pq_schema_t *s;
    floe_pq_column_t *cols;
    size_t *lpos, *vpos;
    floe_arena_t *arena;
    const char *error;
} asm_t;

static int first_col(const floe_pq_schema_t *s, int node)
{
    int c;
    return floe_pq_schema_columns_under(s, node, &c, 1) > 0 ? c : -1;
}

static int peek_def(asm_t *a, int col)
{
    floe_pq_column_t *c = &a->cols[col];
    if (a->lpos[col] >= c->n_levels) {
        a->error = "levels ran out";
        return 0;
    }
    return c->def ? c->def[a->lpos[col]] : floe_pq_schema_max_def(a->s, col);
}

static void skip_null(asm_t *a, int node)
{
    int cols[256];
    int n = floe_pq_schema_columns_under(a->s, node, cols, 256);
    for (int i = 0; i < n && i < 256; i++) a->lpos[cols[i]]++;
}

static void asm_occ(asm_t *a, int node, pqg_val_t *v);

static void asm_field(asm_t *a, int node, int pd, pqg_val_t *v)
{
    const floe_pq_node_t *n = floe_pq_schema_node(a->s, node);
    int c0 = first_col(a->s, node);
    memset(v, 0, sizeof *v);
    if (c0 < 0 || a->error) {
        a->error = a->error ? a->error : "group without leaves";
        return;
    }
    int nd = pd + (n->rep != FLOE_PQ_REQUIRED);
    if (n->rep == FLOE_PQ_REPEATED) {
        if (peek_def(a, c0) < nd) {
            skip_null(a, node);
            return;
        }
        int nr = nrep_of(a->s, node);
        uint32_t cap = 4;
        v->kids = floe_arena_calloc(a->arena, cap, sizeof *v->kids);
        for (;;) {
            if (v->n == cap) {
                pqg_val_t *k = floe_arena_calloc(a->arena, cap * 2, sizeof *k);
                memcpy(k, v->kids, cap * sizeof *k);
                v->kids = k;
                cap *= 2;
            }
            asm_occ(a, node, &v->kids[v->n++]);
            if (a->error) return;
            floe_pq_column_t *cc = &a->cols[c0];
            if (a->lpos[c0] < cc->n_levels && cc->rep && cc->rep[a->lpos[c0]] == nr) continue;
            break;
        }
        return;
    }
    if (n->rep == FLOE_PQ_OPTIONAL && peek_def(a, c0) < nd) {
        skip_null(a, node);
        v->null = true;
        return;
    }
    asm_occ(a, node, v);
}

static void asm_occ(asm_t *a, int node, pqg_val_t *v)
{
    const floe_pq_node_t *n = floe_pq_schema_node(a->s, node);
    memset(v, 0, sizeof *v);
    if (n->phys != FLOE_PQ_GROUP) {
        int col = floe_pq_schema_column_of(a->s, node);
        floe_pq_column_t *c = &a->cols[col];
        if (a->vpos[col] >= c->n_values) {
            a->error = "values ran out";
            return;
        }
        size_t i = a->vpos[col]++;
        a->lpos[col]++;
        switch (n->phys) {
        case FLOE_PQ_BOOLEAN: v->i = ((uint8_t *)c->values)[i]; break;
        case FLOE_PQ_INT32: v->i = ((int32_t *)c->values)[i]; break;
        case FLOE_PQ_INT64: v->i = ((int64_t *)c->values)[i]; break;
        case FLOE_PQ_FLOAT: v->d = ((float *)c->values)[i]; break;
        case FLOE_PQ_DOUBLE: v->d = ((double *)c->values)[i]; break;
        default: {
            floe_slice_t s = ((floe_slice_t *)c->values)[i];
            v->b = s.ptr;
            v->blen = (uint32_t)s.len;
            break;
        }
        }
        return;
    }
    int nc = floe_pq_schema_num_children(a->s, node);
    v->n = (uint32_t)nc;
    v->kids = floe_arena_calloc(a->arena, (size_t)(nc ? nc : 1), sizeof *v->kids);
    int d = 0;
    for (int x = node; x >= 0; x = floe_pq_schema_node(a->s, x)->parent)
        d += floe_pq_schema_node(a->s, x)->rep != FLOE_PQ_REQUIRED;
    for (int i = 0; i < nc; i++) asm_field(a, floe_pq_schema_child(a->s, node, i), d, &v->kids[i]);
}

int pqg_read_json(floe_pq_reader_t *r, int rg, floe_buf_t *out, floe_err_t *err)
{
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    int ncols = floe_pq_schema_num_columns(s);
    asm_t a = {s,
               calloc((size_t)ncols, sizeof(floe_pq_column_t)),
               calloc((size_t)ncols, sizeof(size_t)),
               calloc((size_t)ncols, sizeof(size_t)),
               NULL,
               NULL};
    floe_arena_t arena;
    floe_arena_init(&arena, 1 << 16, 0);
    a.arena = &arena;
    int rc = 0;
    for (int c = 0; c < ncols && !rc; c++) rc = floe_pq_read_column(r, rg, c, &a.cols[c], err);
    int64_t nrows = floe_pq_reader_row_group_rows(r, rg);
    int nc = floe_pq_schema_num_children(s, -1);
    for (int64_t row = 0; row < nrows && !rc; row++) {
        pqg_val_t v;
        memset(&v, 0, sizeof v);
        v.n = (uint32_t)nc;
        v.kids = floe_arena_calloc(&arena, (size_t)nc, sizeof *v.kids);
        for (int i = 0; i < nc; i++) asm_field(&a, floe_pq_schema_child(s, -1, i), 0, &v.kids[i]);
        if (a.error) {
            rc = floe_err_set(err, FLOE_ECORRUPT, "assembly: %s", a.error);
            break;
        }
        pqg_json(s, &v, out);
        floe_buf_append_u8(out, '\n');
    }
    for (int c = 0; c < ncols; c++) floe_pq_column_free(&a.cols[c]);
    free(a.cols);
    free(a.lpos);
    free(a.vpos);
    floe_arena_free(&arena);
    return rc;
}
