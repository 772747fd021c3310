/* The reachable-file walk (see maintain.h): a hash set of normalized paths
 * with the kind and size of each file, filled from metadata, manifest
 * lists and manifests. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/catalog_int.h"
#include "iceberg/commit_int.h"
#include "iceberg/maintain.h"
#include "iceberg/scan.h"
#include "util/diag.h"
#include "util/murmur3.h"

typedef struct rfile {
    char *path; /* as recorded */
    char *key;  /* normal form */
    floe_ice_file_kind_t kind;
    int64_t size;
} rfile_t;

struct floe_ice_reach {
    bool live_only;
    rfile_t *files;
    size_t n, cap;
    size_t *slots; /* index + 1; 0 = empty; power-of-two size */
    size_t nslots;
};

static bool scheme_ok(const char *p, const char *end)
{
    if (!isalpha((unsigned char)*p)) return false;
    for (; p < end; p++)
        if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-' && *p != '.') return false;
    return true;
}

/* The normal form of a path (caller frees): "file:" URLs become local
 * paths, s3a:// and s3n:// become s3://, runs of '/' after the scheme
 * become one.  Two spellings of one file then compare equal; normalizing
 * can only make more paths match, which keeps a referenced file. */
static char *normalize(const char *p)
{
    const char *src = floe_fileio_local_path(p);
    const char *body = src;
    const char *scheme = NULL;
    size_t slen = 0;
    if (src == p) {
        const char *colon = strstr(p, "://");
        if (colon && colon > p && !scheme_ok(p, colon)) colon = NULL;
        if (colon) {
            scheme = p;
            slen = (size_t)(colon - p);
            body = colon + 3;
            if ((slen == 3 && (!strncmp(p, "s3a", 3) || !strncmp(p, "s3n", 3)))) slen = 2;
        }
    }
    char *out = malloc(slen + 3 + strlen(body) + 1);
    if (!out) return NULL;
    size_t o = 0;
    if (scheme) {
        memcpy(out, scheme, slen);
        memcpy(out + slen, "://", 3);
        o = slen + 3;
    }
    for (const char *s = body; *s; s++) {
        if (*s == '/' && o > 0 && out[o - 1] == '/' && (!scheme || o > slen + 3)) continue;
        out[o++] = *s;
    }
    out[o] = '\0';
    return out;
}

floe_ice_reach_t *floe_ice_reach_new(bool live_only, floe_err_t *err)
{
    floe_ice_reach_t *r = calloc(1, sizeof *r);
    if (!r) {
        floe_err_oom(err);
        return NULL;
    }
    r->live_only = live_only;
    return r;
}

void floe_ice_reach_free(floe_ice_reach_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->files[i].path);
        free(r->files[i].key);
    }
    free(r->files);
    free(r->slots);
    free(r);
}

static size_t hash_key(const char *k)
{
    return floe_murmur3_32(k, strlen(k), 0x5eed);
}

/* Slot of key: where it is, or the empty slot where it would go. */
static size_t find_slot(const floe_ice_reach_t *r, const char *key)
{
    size_t mask = r->nslots - 1, i = hash_key(key) & mask;
    while (r->slots[i] && strcmp(r->files[r->slots[i] - 1].key, key) != 0) i = (i + 1) & mask;
    return i;
}

static int grow(floe_ice_reach_t *r)
{
    size_t ns = r->nslots ? r->nslots * 2 : 256;
    size_t *slots = calloc(ns, sizeof *slots);
    if (!slots) return -1;
    free(r->slots);
    r->slots = slots;
    r->nslots = ns;
    for (size_t f = 0; f < r->n; f++) r->slots[find_slot(r, r->files[f].key)] = f + 1;
    return 0;
}

/* Add path (copied) unless present.  1: added, 0: was there, -1: ENOMEM. */
static int add(floe_ice_reach_t *r, const char *path, floe_ice_file_kind_t kind, int64_t size)
{
    if (!path || !*path) return 0;
    if ((r->n + 1) * 2 > r->nslots && grow(r) < 0) return -1;
    char *key = normalize(path);
    if (!key) return -1;
    size_t s = find_slot(r, key);
    if (r->slots[s]) {
        free(key);
        return 0;
    }
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        rfile_t *nf = realloc(r->files, nc * sizeof *nf);
        if (!nf) {
            free(key);
            return -1;
        }
        r->files = nf;
        r->cap = nc;
    }
    char *copy = strdup(path);
    if (!copy) {
        free(key);
        return -1;
    }
    r->files[r->n] = (rfile_t){copy, key, kind, size};
    r->slots[s] = ++r->n;
    return 1;
}

bool floe_ice_reach_has(const floe_ice_reach_t *r, const char *path)
{
    if (!r->n) return false;
    char *key = normalize(path);
    if (!key) return true; /* out of memory: claim it, so nothing referenced is ever deleted */
    bool has = r->slots[find_slot(r, key)] != 0;
    free(key);
    return has;
}

size_t floe_ice_reach_count(const floe_ice_reach_t *r)
{
    return r->n;
}

floe_ice_reach_file_t floe_ice_reach_file(const floe_ice_reach_t *r, size_t i)
{
    return (floe_ice_reach_file_t){r->files[i].path, r->files[i].kind, r->files[i].size};
}

int floe_ice_reach_add_file(floe_ice_reach_t *r, const char *path, floe_ice_file_kind_t kind,
                            int64_t size, floe_err_t *err)
{
    return add(r, path, kind, size) < 0 ? floe_err_oom(err) : 0;
}

/* Delete in batches of what one request takes (see commit_int.h). */
size_t floe_ice_delete_batched(floe_fileio_t *io, const char *const *paths, size_t n, bool *done)
{
    size_t failed = 0;
    for (size_t at = 0; at < n; at += FLOE_ICE_DELETE_BATCH) {
        size_t k = n - at < FLOE_ICE_DELETE_BATCH ? n - at : FLOE_ICE_DELETE_BATCH;
        floe_err_t e;
        if (floe_fileio_remove_batch(io, paths + at, k, done + at, &e) == 0) continue;
        size_t f = 0;
        for (size_t i = 0; i < k; i++) f += !done[at + i];
        if (f) FLOE_WARN("iceberg: %zu of %zu files could not be deleted: %s", f, k, e.msg);
        failed += f;
    }
    return failed;
}

int floe_ice_reach_add_metadata(floe_ice_reach_t *r, const floe_ice_table_t *t, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    if (add(r, floe_ice_table_metadata_location(t), FLOE_ICE_FILE_METADATA, -1) < 0)
        return floe_err_oom(err);
    for (size_t i = 0; i < md->nmetadata_log; i++)
        if (add(r, md->metadata_log[i].file, FLOE_ICE_FILE_METADATA, -1) < 0)
            return floe_err_oom(err);
    return 0;
}

int floe_ice_reach_add_snapshot(floe_ice_reach_t *r, floe_fileio_t *io,
                                const floe_ice_snapshot_t *s, floe_err_t *err)
{
    if (!s->manifest_list)
        return floe_err_set(err, FLOE_EUNSUPPORTED, "snapshot %lld has no manifest list",
                            (long long)s->snapshot_id);
    floe_ice_manifest_file_t *ml;
    size_t nml;
    if (floe_ice_manifest_list_read(io, s->manifest_list, &ml, &nml, err) < 0) return -1;
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < nml; m++) {
        if (floe_ice_reach_has(r, ml[m].path)) continue; /* read already */
        floe_ice_manifest_entry_t *ents;
        size_t ne;
        if (floe_ice_manifest_read(io, ml[m].path, &ents, &ne, err) < 0) {
            rc = -1;
            break;
        }
        for (size_t k = 0; rc == 0 && k < ne; k++) {
            const floe_ice_manifest_entry_t *e = &ents[k];
            if (r->live_only && e->status == FLOE_ICE_DELETED) continue;
            floe_ice_file_kind_t kind = e->file.content == FLOE_ICE_CONTENT_DATA
                                            ? FLOE_ICE_FILE_DATA
                                            : FLOE_ICE_FILE_DELETES;
            if (add(r, e->file.path, kind, e->file.file_size) < 0) rc = floe_err_oom(err);
        }
        floe_ice_manifest_entries_free(ents, ne);
        /* the manifest last: present means "read whole" */
        if (rc == 0 && add(r, ml[m].path, FLOE_ICE_FILE_MANIFEST, ml[m].length) < 0)
            rc = floe_err_oom(err);
    }
    if (rc == 0 && add(r, s->manifest_list, FLOE_ICE_FILE_MANIFEST_LIST, -1) < 0)
        rc = floe_err_oom(err);
    floe_ice_manifest_files_free(ml, nml);
    return rc;
}

int floe_ice_reach_add_table(floe_ice_reach_t *r, floe_fileio_t *io, const floe_ice_table_t *t,
                             floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    if (floe_ice_reach_add_metadata(r, t, err) < 0) return -1;
    for (size_t i = 0; i < md->nsnapshots; i++)
        if (floe_ice_reach_add_snapshot(r, io, md->snapshots[i], err) < 0) return -1;
    return 0;
}

const floe_ice_snapshot_t *floe_ice_ancestor_with_summary(const floe_ice_metadata_t *md,
                                                          int64_t from, const char *key)
{
    const floe_ice_snapshot_t *s =
        from < 0 ? floe_ice_metadata_current_snapshot(md) : floe_ice_metadata_snapshot(md, from);
    /* at most one step per snapshot: a parent cycle in bad metadata ends */
    for (size_t steps = 0; s && steps <= md->nsnapshots; steps++) {
        if (floe_ice_props_get(&s->summary, key)) return s;
        s = s->parent_id >= 0 ? floe_ice_metadata_snapshot(md, s->parent_id) : NULL;
    }
    return NULL;
}
