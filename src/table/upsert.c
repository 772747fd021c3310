/* Upsert tables: id columns, keys, the last change per key (upsert.h). */
#include "table/upsert.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"
#include "util/murmur3.h"

/* Copy the trimmed name [p, e) into out (size), "" when it is too long. */
static int trimmed(const char *p, const char *e, char *out, size_t size)
{
    while (p < e && *p == ' ') p++;
    while (e > p && e[-1] == ' ') e--;
    if (p == e || (size_t)(e - p) >= size) return -1;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = 0;
    return 0;
}

int floe_tupsert_cols_parse(const char *ids, const char *cdc, floe_tupsert_cols_t *out,
                            floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    for (const char *p = ids; *p;) {
        const char *e = strchr(p, ',');
        if (!e) e = p + strlen(p);
        if (out->nids == FLOE_TUPSERT_MAX_IDS)
            return floe_err_set(err, FLOE_EINVAL, "table.id.columns: more than %d columns",
                                FLOE_TUPSERT_MAX_IDS);
        if (trimmed(p, e, out->ids[out->nids], sizeof out->ids[0]) < 0)
            return floe_err_set(err, FLOE_EINVAL, "table.id.columns: a bad name in '%.64s'", ids);
        out->nids++;
        p = *e ? e + 1 : e;
    }
    if (!out->nids) return floe_err_set(err, FLOE_EINVAL, "table.id.columns is empty");
    if (*cdc && trimmed(cdc, cdc + strlen(cdc), out->cdc, sizeof out->cdc) < 0)
        return floe_err_set(err, FLOE_EINVAL, "table.cdc.field: a bad name '%.64s'", cdc);
    return 0;
}

floe_tupsert_cols_t *floe_tupsert_cols_new(const char *ids, const char *cdc, floe_err_t *err)
{
    floe_tupsert_cols_t *u = malloc(sizeof *u);
    if (!u) {
        floe_err_oom(err);
        return NULL;
    }
    if (floe_tupsert_cols_parse(ids, cdc, u, err) < 0) {
        free(u);
        return NULL;
    }
    return u;
}

int floe_tupsert_ids_from_key(floe_slice_t key, char *out, size_t size, floe_err_t *err)
{
    json_t *j = json_loadb((const char *)key.ptr, key.len, 0, NULL);
    json_t *pl = json_is_object(j) ? json_object_get(j, "payload") : NULL;
    json_t *row = json_is_object(j) && json_object_get(j, "schema") && json_is_object(pl) ? pl : j;
    size_t len = 0, n = 0;
    int rc = 0;
    out[0] = 0;
    if (!json_is_object(row)) {
        if (snprintf(out, size, "%s", FLOE_TUPSERT_KEY_COLUMN) >= (int)size)
            rc = floe_err_set(err, FLOE_EINVAL, "upsert: no room for the id columns");
    } else {
        const char *name;
        json_t *v;
        json_object_foreach(row, name, v)
        {
            size_t nl = strlen(name);
            if (rc == 0 && (!nl || strchr(name, ',') || strchr(name, '.') || name[0] == ' ' ||
                            name[nl - 1] == ' ' || nl >= sizeof((floe_tupsert_cols_t *)0)->ids[0] ||
                            n == FLOE_TUPSERT_MAX_IDS || len + nl + 2 > size))
                rc = floe_err_set(err, FLOE_EINVAL,
                                  "upsert: the record key's field '%.64s' cannot be an id "
                                  "column (set table.id.columns)",
                                  name);
            if (rc < 0) break;
            if (n++) out[len++] = ',';
            memcpy(out + len, name, nl + 1);
            len += nl;
        }
        if (rc == 0 && !n)
            rc = floe_err_set(err, FLOE_EINVAL,
                              "upsert: the record key is an empty JSON object: no id columns");
    }
    json_decref(j);
    return rc;
}

floe_rnode_t *floe_tupsert_find(floe_rnode_t *n, const char *path)
{
    char name[128];
    while (n && *path) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        if (len >= sizeof name || n->kind != FLOE_TK_STRUCT) return NULL;
        memcpy(name, path, len);
        name[len] = 0;
        n = floe_rows_child(n, name);
        path += len + (dot != NULL);
    }
    return n;
}

static bool key_kind(floe_tkind_t k)
{
    return k == FLOE_TK_LONG || k == FLOE_TK_INT || k == FLOE_TK_STRING || k == FLOE_TK_BOOL;
}

/* Whether n sits under structs only (no list or map above it). */
static bool under_structs(const floe_rnode_t *n)
{
    for (const floe_rnode_t *p = n->parent; p; p = p->parent)
        if (p->kind != FLOE_TK_STRUCT) return false;
    return true;
}

int floe_tupsert_check_row(floe_rows_t *r, const floe_tupsert_cols_t *c, floe_err_t *err)
{
    for (size_t i = 0; i < c->nids; i++) {
        floe_rnode_t *n = floe_tupsert_find(floe_rows_root(r), c->ids[i]);
        if (!n || !floe_rows_is_set(r, n))
            return floe_err_set(err, FLOE_EINVAL, "upsert: id column '%s' is missing or null",
                                c->ids[i]);
        if (!key_kind(n->kind) || !under_structs(n))
            return floe_err_set(err, FLOE_EINVAL,
                                "upsert: id column '%s' is a %s; keys are long, int, string "
                                "or boolean columns outside lists and maps",
                                c->ids[i], floe_tkind_name(n->kind));
    }
    return 0;
}

bool floe_tupsert_row_deletes(floe_rows_t *r, const floe_tupsert_cols_t *c)
{
    if (!c->cdc[0]) return false;
    floe_rnode_t *n = floe_tupsert_find(floe_rows_root(r), c->cdc);
    if (!n || n->kind != FLOE_TK_STRING || !floe_rows_is_set(r, n)) return false;
    floe_slice_t v = floe_rcol_bytes(n->col, n->col->nvals - 1);
    return (v.len == 1 && (v.ptr[0] == 'd' || v.ptr[0] == 'D')) ||
           (v.len == 6 && !memcmp(v.ptr, "delete", 6)) ||
           (v.len == 6 && !memcmp(v.ptr, "DELETE", 6));
}

int floe_tupsert_id_nodes(floe_rows_t *r, const floe_tupsert_cols_t *c,
                          floe_rnode_t *ids[FLOE_TUPSERT_MAX_IDS], floe_err_t *err)
{
    for (size_t i = 0; i < c->nids; i++)
        if (!(ids[i] = floe_tupsert_find(floe_rows_root(r), c->ids[i])) || !ids[i]->col)
            return floe_err_set(err, FLOE_EINVAL, "upsert: no id column '%s'", c->ids[i]);
    return 0;
}

int floe_tupsert_key_part(floe_buf_t *out, char cls, const void *p, size_t len)
{
    uint8_t h[5] = {(uint8_t)cls, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                    (uint8_t)(len >> 24)};
    return floe_buf_append(out, h, 5) < 0 || floe_buf_append(out, p, len) < 0 ? -1 : 0;
}

int floe_tupsert_key(floe_rnode_t *const *ids, size_t n, size_t row, floe_buf_t *out)
{
    char num[24];
    for (size_t i = 0; i < n; i++) {
        const floe_rcol_t *c = ids[i]->col;
        int rc;
        switch (ids[i]->kind) {
        case FLOE_TK_LONG:
            rc = floe_tupsert_key_part(
                out, 'n', num,
                (size_t)snprintf(num, sizeof num, "%lld", (long long)floe_rcol_long(c, row)));
            break;
        case FLOE_TK_INT:
            rc = floe_tupsert_key_part(
                out, 'n', num, (size_t)snprintf(num, sizeof num, "%d", (int)floe_rcol_int(c, row)));
            break;
        case FLOE_TK_BOOL:
            rc = floe_tupsert_key_part(out, 'b', c->vals.data[row] ? "1" : "0", 1);
            break;
        default: {
            floe_slice_t s = floe_rcol_bytes(c, row);
            rc = floe_tupsert_key_part(out, 's', s.ptr, s.len);
        }
        }
        if (rc < 0) return -1;
    }
    return 0;
}

void floe_tupsert_batch_free(floe_tupsert_batch_t *b)
{
    free(b->sel);
    floe_buf_free(&b->keys);
    free(b->key_end);
    free(b->key_row);
    memset(b, 0, sizeof *b);
}

int floe_tupsert_dedupe(floe_rows_t *rows, const floe_tupsert_cols_t *c, const uint8_t *ops,
                        size_t nops, floe_tupsert_batch_t *b, floe_err_t *err)
{
    floe_tupsert_batch_free(b);
    size_t n = floe_rows_count(rows);
    if (!n) return 0;
    floe_rnode_t *ids[FLOE_TUPSERT_MAX_IDS];
    if (floe_tupsert_id_nodes(rows, c, ids, err) < 0) return -1;
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    uint32_t *slot = malloc(cap * sizeof *slot); /* key index + 1; 0 empty */
    b->key_end = malloc(n * sizeof *b->key_end);
    b->key_row = malloc(n * sizeof *b->key_row);
    b->sel = malloc(n * sizeof *b->sel);
    floe_buf_t k = FLOE_BUF_INIT;
    if (!slot || !b->key_end || !b->key_row || !b->sel) goto oom;
    memset(slot, 0, cap * sizeof *slot);
    for (size_t r = 0; r < n; r++) {
        k.len = 0;
        if (floe_tupsert_key(ids, c->nids, r, &k) < 0) goto oom;
        size_t h = floe_murmur3_32(k.data, k.len, 0x5eed) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            uint32_t s = slot[h];
            if (!s) {
                if (floe_buf_append(&b->keys, k.data, k.len) < 0) goto oom;
                b->key_end[b->nkeys] = b->keys.len;
                slot[h] = (uint32_t)++b->nkeys;
                s = slot[h];
            } else {
                floe_slice_t o = floe_tupsert_batch_key(b, s - 1);
                if (o.len != k.len || memcmp(o.ptr, k.data, k.len)) continue;
            }
            bool del = r < nops && ops[r];
            b->key_row[s - 1] = del ? UINT32_MAX : (uint32_t)r;
            break;
        }
    }
    /* the surviving rows, in buffer order */
    uint8_t *keep = calloc(n, 1);
    if (!keep) goto oom;
    for (size_t i = 0; i < b->nkeys; i++)
        if (b->key_row[i] != UINT32_MAX) keep[b->key_row[i]] = 1;
    for (size_t r = 0; r < n; r++)
        if (keep[r]) b->sel[b->nsel++] = (uint32_t)r;
    free(keep);
    free(slot);
    floe_buf_free(&k);
    return 0;
oom:
    free(slot);
    floe_buf_free(&k);
    floe_tupsert_batch_free(b);
    return floe_err_oom(err);
}

int floe_tupsert_log_add(floe_tupsert_log_t *l, floe_slice_t key, const char *path, int64_t pos)
{
    uint32_t fi = UINT32_MAX;
    if (path) {
        if (!l->nfiles || strcmp(l->files[l->nfiles - 1], path)) {
            if (floe_grow(&l->files, &l->capfiles, l->nfiles + 1, sizeof *l->files) ||
                !(l->files[l->nfiles] = strdup(path)))
                return -1;
            l->nfiles++;
        }
        fi = (uint32_t)(l->nfiles - 1);
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        size_t *ke = realloc(l->key_end, cap * sizeof *ke);
        if (!ke) return -1;
        l->key_end = ke;
        uint32_t *f = realloc(l->file, cap * sizeof *f);
        if (!f) return -1;
        l->file = f;
        int64_t *p = realloc(l->pos, cap * sizeof *p);
        if (!p) return -1;
        l->pos = p;
        l->cap = cap;
    }
    if (floe_buf_append(&l->keys, key.ptr, key.len) < 0) return -1;
    l->key_end[l->n] = l->keys.len;
    l->file[l->n] = fi;
    l->pos[l->n] = pos;
    l->n++;
    return 0;
}

void floe_tupsert_log_clear(floe_tupsert_log_t *l)
{
    floe_buf_free(&l->keys);
    free(l->key_end);
    free(l->file);
    free(l->pos);
    for (size_t i = 0; i < l->nfiles; i++) free(l->files[i]);
    free(l->files);
    memset(l, 0, sizeof *l);
}

/* ---- partitions of data files ------------------------------------------ */

struct floe_tupsert_parts {
    char **paths;             /* by slot; NULL empty */
    floe_tupsert_part_t *val; /* by slot */
    size_t cap, n;
    char uuid[64];
    int64_t snapshot;
};

floe_tupsert_parts_t *floe_tupsert_parts_new(void)
{
    floe_tupsert_parts_t *p = calloc(1, sizeof *p);
    if (p) p->snapshot = -1;
    return p;
}

static void part_clear(floe_tupsert_part_t *v)
{
    for (size_t i = 0; i < v->nvalues; i++) floe_ice_value_clear(&v->values[i]);
    free(v->values);
    floe_buf_free(&v->key);
    memset(v, 0, sizeof *v);
}

void floe_tupsert_parts_free(floe_tupsert_parts_t *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->cap; i++)
        if (p->paths[i]) {
            free(p->paths[i]);
            part_clear(&p->val[i]);
        }
    free(p->paths);
    free(p->val);
    free(p);
}

static size_t path_slot(const floe_tupsert_parts_t *p, const char *path)
{
    size_t h = floe_murmur3_32(path, strlen(path), 0x9a47) & (p->cap - 1);
    while (p->paths[h] && strcmp(p->paths[h], path)) h = (h + 1) & (p->cap - 1);
    return h;
}

static int parts_grow(floe_tupsert_parts_t *p)
{
    size_t cap = p->cap ? p->cap * 2 : 64;
    char **paths = calloc(cap, sizeof *paths);
    floe_tupsert_part_t *val = calloc(cap, sizeof *val);
    if (!paths || !val) {
        free(paths);
        free(val);
        return -1;
    }
    floe_tupsert_parts_t np = {.paths = paths, .val = val, .cap = cap};
    for (size_t i = 0; i < p->cap; i++)
        if (p->paths[i]) {
            size_t h = path_slot(&np, p->paths[i]);
            paths[h] = p->paths[i];
            val[h] = p->val[i];
        }
    free(p->paths);
    free(p->val);
    p->paths = paths;
    p->val = val;
    p->cap = cap;
    return 0;
}

/* The partition's lookup key: spec id, then per value a null mark or its
 * length and single-value serialization. */
static int part_key(floe_tupsert_part_t *v, floe_err_t *err)
{
    uint8_t h[4] = {(uint8_t)v->spec_id, (uint8_t)(v->spec_id >> 8), (uint8_t)(v->spec_id >> 16),
                    (uint8_t)(v->spec_id >> 24)};
    if (floe_buf_append(&v->key, h, 4) < 0) return floe_err_oom(err);
    floe_buf_t one = FLOE_BUF_INIT;
    for (size_t i = 0; i < v->nvalues; i++) {
        one.len = 0;
        if (v->values[i].is_null) {
            if (floe_buf_append_u8(&v->key, 0) < 0) goto oom;
            continue;
        }
        if (floe_ice_value_serialize(&v->values[i], &one, err) < 0) {
            floe_buf_free(&one);
            return -1;
        }
        uint8_t l[5] = {1, (uint8_t)one.len, (uint8_t)(one.len >> 8), (uint8_t)(one.len >> 16),
                        (uint8_t)(one.len >> 24)};
        if (floe_buf_append(&v->key, l, 5) < 0 || floe_buf_append(&v->key, one.data, one.len) < 0)
            goto oom;
    }
    floe_buf_free(&one);
    return 0;
oom:
    floe_buf_free(&one);
    return floe_err_oom(err);
}

int floe_tupsert_parts_put(floe_tupsert_parts_t *p, const char *path, int32_t spec_id,
                           const floe_ice_value_t *values, size_t n, floe_err_t *err)
{
    if ((p->n + 1) * 2 > p->cap && parts_grow(p) < 0) return floe_err_oom(err);
    size_t h = path_slot(p, path);
    if (p->paths[h]) return 0;
    floe_tupsert_part_t v = {.spec_id = spec_id};
    if (n && !(v.values = calloc(n, sizeof *v.values))) return floe_err_oom(err);
    for (; v.nvalues < n; v.nvalues++)
        if (floe_ice_value_copy(&v.values[v.nvalues], &values[v.nvalues]) < 0) {
            part_clear(&v);
            return floe_err_oom(err);
        }
    char *dup = strdup(path);
    if (!dup || part_key(&v, err) < 0) {
        free(dup);
        part_clear(&v);
        return dup ? -1 : floe_err_oom(err);
    }
    p->paths[h] = dup;
    p->val[h] = v;
    p->n++;
    return 0;
}

const floe_tupsert_part_t *floe_tupsert_parts_get(const floe_tupsert_parts_t *p, const char *path)
{
    if (!p->cap) return NULL;
    size_t h = path_slot(p, path);
    return p->paths[h] ? &p->val[h] : NULL;
}

size_t floe_tupsert_parts_count(const floe_tupsert_parts_t *p)
{
    return p->n;
}

void floe_tupsert_parts_set_state(floe_tupsert_parts_t *p, const char *uuid, int64_t snapshot)
{
    snprintf(p->uuid, sizeof p->uuid, "%s", uuid ? uuid : "");
    p->snapshot = snapshot;
}

bool floe_tupsert_parts_reflects(const floe_tupsert_parts_t *p, const char *uuid, int64_t snapshot)
{
    return p->snapshot == snapshot && !strcmp(p->uuid, uuid);
}

static int posdel_cmp(const void *a, const void *b)
{
    const floe_tupsert_posdel_t *x = a, *y = b;
    const floe_buf_t *kx = &x->part->key, *ky = &y->part->key;
    size_t n = kx->len < ky->len ? kx->len : ky->len;
    int c = memcmp(kx->data, ky->data, n);
    if (!c) c = (kx->len > ky->len) - (kx->len < ky->len);
    if (!c) c = strcmp(x->path, y->path);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

int floe_tupsert_posdel_group(const floe_tupsert_parts_t *parts, floe_tupsert_posdel_t *d, size_t n,
                              size_t *ends, size_t *ngroups, floe_err_t *err)
{
    *ngroups = 0;
    for (size_t i = 0; i < n; i++)
        if (!(d[i].part = floe_tupsert_parts_get(parts, d[i].path)))
            return floe_err_set(err, FLOE_ECORRUPT,
                                "upsert: the key index names %s, which is no data file of the "
                                "table",
                                d[i].path);
    qsort(d, n, sizeof *d, posdel_cmp);
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || d[i + 1].part->key.len != d[i].part->key.len ||
            memcmp(d[i + 1].part->key.data, d[i].part->key.data, d[i].part->key.len))
            ends[(*ngroups)++] = i + 1;
    return 0;
}
