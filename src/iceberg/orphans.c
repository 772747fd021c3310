/* Orphan removal (see maintain.h): list the table's folders, load the
 * table, delete what is old enough and reached by nothing. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/catalog_int.h"
#include "iceberg/commit_int.h"
#include "iceberg/maintain.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/fs.h"

/* Longest path built while listing; a longer one is never deleted. */
#define ORPHAN_PATH_MAX 4096
/* Partition folders nest one level per partition field. */
#define ORPHAN_MAX_DEPTH 32

typedef struct cand {
    char *path;
    int64_t size, mtime_ms;
    bool in_metadata;
} cand_t;

typedef struct listing {
    cand_t *v;
    size_t n, cap;
} listing_t;

static void listing_free(listing_t *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i].path);
    free(l->v);
}

static int push(listing_t *l, const char *path, const floe_fileio_entry_t *e, bool meta)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        cand_t *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) return -1;
        l->v = nv;
        l->cap = nc;
    }
    char *p = strdup(path);
    if (!p) return -1;
    l->v[l->n++] = (cand_t){p, e->size, e->mtime_ms, meta};
    return 0;
}

/* The files under dir: recursively below data/, only the folder itself
 * for metadata/ (what a catalog puts there lies flat). */
static int list_tree(floe_fileio_t *io, const char *dir, bool meta, int depth, listing_t *out,
                     floe_ice_orphan_result_t *res, floe_err_t *err)
{
    floe_fileio_entry_t *en;
    size_t n;
    if (floe_fileio_list_entries(io, dir, &en, &n, err) < 0) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char path[ORPHAN_PATH_MAX];
        floe_err_t pe;
        if (floe_path_join(path, sizeof path, dir, en[i].name, &pe) < 0) {
            FLOE_WARN("iceberg: orphan removal skips %s", pe.msg);
            res->failed++;
            continue;
        }
        if (en[i].is_dir) {
            if (!meta && depth < ORPHAN_MAX_DEPTH)
                rc = list_tree(io, path, meta, depth + 1, out, res, err);
            continue;
        }
        if (push(out, path, &en[i], meta) < 0) rc = floe_err_oom(err);
    }
    floe_fileio_entries_free(en, n);
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether a file in metadata/ is one a table writer makes (and may leave
 * behind): manifests, manifest lists, metadata JSON, hidden temp files.
 * Anything else there (statistics files of other engines, the version
 * hint) is left alone. */
static bool metadata_kind(const char *base)
{
    return ends_with(base, ".avro") || ends_with(base, ".metadata.json") ||
           (base[0] == '.' && ends_with(base, ".tmp"));
}

void floe_ice_orphan_result_clear(floe_ice_orphan_result_t *res)
{
    for (size_t i = 0; i < res->npaths; i++) free(res->paths[i]);
    free(res->paths);
    memset(res, 0, sizeof *res);
}

static int list_table(floe_fileio_t *io, const char *location, listing_t *l,
                      floe_ice_orphan_result_t *res, floe_err_t *err)
{
    char dir[ORPHAN_PATH_MAX];
    if (floe_path_join(dir, sizeof dir, location, "data", err) < 0 ||
        list_tree(io, dir, false, 0, l, res, err) < 0)
        return -1;
    if (floe_path_join(dir, sizeof dir, location, "metadata", err) < 0 ||
        list_tree(io, dir, true, 0, l, res, err) < 0)
        return -1;
    return 0;
}

/* Which listed files are orphans: into res->paths (sizes into *sizes). */
static int pick(const listing_t *l, const floe_ice_table_t *t, const floe_ice_reach_t *reach,
                const floe_ice_reach_t *doubt, const floe_ice_orphan_opts_t *opts,
                floe_ice_orphan_result_t *res, int64_t **sizes, floe_err_t *err)
{
    int64_t now = opts->now_ms ? opts->now_ms : floe_wall_ms();
    res->paths = calloc(l->n ? l->n : 1, sizeof *res->paths);
    *sizes = calloc(l->n ? l->n : 1, sizeof **sizes);
    if (!res->paths || !*sizes) return floe_err_oom(err);
    for (size_t i = 0; i < l->n; i++) {
        const cand_t *c = &l->v[i];
        res->files_listed++;
        if (floe_ice_reach_has(reach, c->path)) {
            res->files_reachable++;
            continue;
        }
        if (c->in_metadata) {
            const char *base = strrchr(c->path, '/');
            base = base ? base + 1 : c->path;
            int64_t v;
            if (!metadata_kind(base)) continue;
            if (floe_ice_fs_metadata_version(base, &v) && v >= floe_ice_table_version(t)) {
                res->too_young++; /* a version published since the load */
                continue;
            }
        }
        if (floe_ice_reach_has(doubt, c->path)) {
            res->in_doubt_kept++;
            continue;
        }
        if (c->mtime_ms < 0 || now - c->mtime_ms < opts->min_age_ms) {
            res->too_young++;
            continue;
        }
        if (!(res->paths[res->npaths] = strdup(c->path))) return floe_err_oom(err);
        (*sizes)[res->npaths++] = c->size;
    }
    res->orphans = res->npaths;
    return 0;
}

int floe_ice_remove_orphans(floe_ice_catalog_t *cat, const char *ns, const char *name,
                            const floe_ice_orphan_opts_t *opts, floe_ice_orphan_result_t *res,
                            floe_err_t *err)
{
    memset(res, 0, sizeof *res);
    floe_fileio_t *io = floe_ice_catalog_io(cat);
    floe_ice_table_t *t = NULL;
    floe_ice_reach_t *reach = NULL, *doubt = NULL;
    listing_t l = {0};
    int64_t *sizes = NULL;
    bool *done = NULL;
    char *location = NULL;
    int rc = -1;
    /* list first, then load: a commit that lands meanwhile is in the walk */
    if (floe_ice_catalog_load_table(cat, ns, name, &t, err) < 0) goto out;
    if (!(location = strdup(floe_ice_table_metadata(t)->location))) {
        floe_err_oom(err);
        goto out;
    }
    floe_ice_table_free(t);
    t = NULL;
    if (list_table(io, location, &l, res, err) < 0) goto out;
    if (floe_ice_catalog_load_table(cat, ns, name, &t, err) < 0) goto out;
    if (strcmp(floe_ice_table_metadata(t)->location, location) != 0) {
        floe_err_retry(err, FLOE_ECONFLICT, "%s.%s moved while being listed", ns, name);
        goto out;
    }
    if (!(reach = floe_ice_reach_new(true, err)) || !(doubt = floe_ice_reach_new(true, err)))
        goto out;
    if (floe_ice_reach_add_table(reach, io, t, err) < 0) {
        floe_err_wrap(err, "orphans of %s.%s: cannot walk the table, deleting nothing", ns, name);
        goto out;
    }
    for (size_t i = 0; i < opts->nin_doubt; i++)
        if (floe_ice_reach_add_file(doubt, opts->in_doubt[i], FLOE_ICE_FILE_DATA, -1, err) < 0)
            goto out;
    if (pick(&l, t, reach, doubt, opts, res, &sizes, err) < 0) goto out;
    if (!opts->dry_run && res->npaths) {
        if (!(done = calloc(res->npaths, sizeof *done))) {
            floe_err_oom(err);
            goto out;
        }
        res->failed +=
            floe_ice_delete_batched(io, (const char *const *)res->paths, res->npaths, done);
        for (size_t i = 0; i < res->npaths; i++)
            if (done[i]) {
                res->files_deleted++;
                if (sizes[i] > 0) res->bytes_deleted += sizes[i];
            }
    }
    rc = 0;
out:
    free(done);
    free(sizes);
    free(location);
    listing_free(&l);
    floe_ice_reach_free(reach);
    floe_ice_reach_free(doubt);
    floe_ice_table_free(t);
    return rc;
}
