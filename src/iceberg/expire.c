/* Snapshot expiry (see snapshot.h): choose the snapshots to keep, commit
 * their removal, then delete what only the removed ones reached. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/commit_int.h"
#include "iceberg/maintain.h"
#include "iceberg/snapshot.h"
#include "util/clock.h"
#include "util/diag.h"

#define DAY_MS (24LL * 3600 * 1000)

typedef struct expire_ctx {
    floe_ice_catalog_t *cat;
    const floe_ice_expire_opts_t *opts;
    floe_ice_expire_result_t *res;
    int attempt;
} expire_ctx_t;

static ptrdiff_t index_of(const floe_ice_metadata_t *md, int64_t id)
{
    for (size_t i = 0; i < md->nsnapshots; i++)
        if (md->snapshots[i]->snapshot_id == id) return (ptrdiff_t)i;
    return -1;
}

/* Mark in keep[] the snapshots that stay; see snapshot.h for the rules. */
static int choose(const floe_ice_metadata_t *md, const floe_ice_expire_opts_t *opts, int64_t now,
                  bool *keep, floe_err_t *err)
{
    int64_t cutoff =
        opts->older_than_ms > 0 ? opts->older_than_ms
        : opts->older_than_ms < 0
            ? INT64_MAX
            : now - floe_ice_props_get_i64(&md->properties, "history.expire.max-snapshot-age-ms", 0,
                                           INT64_MAX / 2, 5 * DAY_MS);
    int64_t keep_last =
        opts->keep_last > 0
            ? opts->keep_last
            : floe_ice_props_get_i64(&md->properties, "history.expire.min-snapshots-to-keep", 1,
                                     INT32_MAX, 1);
    bool *in_ancestry = calloc(md->nsnapshots ? md->nsnapshots : 1, sizeof *in_ancestry);
    if (!in_ancestry) return floe_err_oom(err);
    for (size_t r = 0; r < md->nrefs; r++) {
        const floe_ice_ref_t *ref = &md->refs[r];
        ptrdiff_t h = index_of(md, ref->snapshot_id);
        if (h < 0) continue;
        keep[h] = true;
        if (ref->is_tag) {
            in_ancestry[h] = true;
            continue;
        }
        int64_t min_keep = ref->min_snapshots_to_keep >= 0 ? ref->min_snapshots_to_keep : keep_last;
        int64_t ref_cutoff =
            ref->max_snapshot_age_ms >= 0 ? now - ref->max_snapshot_age_ms : cutoff;
        int64_t kept = 0;
        bool retaining = true;
        /* at most one step per snapshot: a parent cycle in bad metadata ends */
        for (size_t steps = 0; h >= 0 && steps < md->nsnapshots; steps++) {
            const floe_ice_snapshot_t *s = md->snapshots[h];
            in_ancestry[h] = true;
            if (retaining && (kept < min_keep || s->timestamp_ms >= ref_cutoff)) {
                keep[h] = true;
                kept++;
            } else {
                retaining = false;
            }
            h = s->parent_id >= 0 ? index_of(md, s->parent_id) : -1;
        }
    }
    for (size_t i = 0; i < md->nsnapshots; i++) {
        const floe_ice_snapshot_t *s = md->snapshots[i];
        if (!in_ancestry[i] && s->timestamp_ms >= cutoff) keep[i] = true;
        if (s->snapshot_id == md->current_snapshot_id) keep[i] = true;
    }
    free(in_ancestry);
    if (opts->protect_summary_key) {
        /* the newest snapshot with the key, and every snapshot between it
         * and main's head: a gap would end the walk that finds it */
        const floe_ice_snapshot_t *p =
            floe_ice_ancestor_with_summary(md, -1, opts->protect_summary_key);
        const floe_ice_snapshot_t *s = p ? floe_ice_metadata_current_snapshot(md) : NULL;
        for (size_t steps = 0; s && steps < md->nsnapshots; steps++) {
            ptrdiff_t i = index_of(md, s->snapshot_id);
            if (i >= 0) keep[i] = true;
            if (s == p) break;
            s = s->parent_id >= 0 ? floe_ice_metadata_snapshot(md, s->parent_id) : NULL;
        }
    }
    return 0;
}

/* Delete what the removed snapshots ids[] of md reached and no snapshot of
 * nmd (the table after the removal) reaches. */
static int delete_unreached(floe_fileio_t *io, const floe_ice_metadata_t *md, const int64_t *ids,
                            size_t nids, const floe_ice_metadata_t *nmd,
                            floe_ice_expire_result_t *res, floe_err_t *err)
{
    floe_ice_reach_t *keep = floe_ice_reach_new(true, err);
    floe_ice_reach_t *gone = keep ? floe_ice_reach_new(false, err) : NULL;
    const char **paths = NULL;
    bool *done = NULL;
    size_t *which = NULL;
    int rc = -1;
    if (!gone) goto out;
    for (size_t i = 0; i < nmd->nsnapshots; i++)
        if (floe_ice_reach_add_snapshot(keep, io, nmd->snapshots[i], err) < 0) {
            floe_err_wrap(err, "snapshots expired, files kept: cannot read snapshot %lld",
                          (long long)nmd->snapshots[i]->snapshot_id);
            goto out;
        }
    for (size_t i = 0; i < nids; i++) {
        const floe_ice_snapshot_t *s = floe_ice_metadata_snapshot(md, ids[i]);
        floe_err_t e2;
        /* what cannot be read cannot be deleted: orphan removal gets it */
        if (s && floe_ice_reach_add_snapshot(gone, io, s, &e2) < 0)
            FLOE_WARN("iceberg: expire: files of snapshot %lld not all read: %s", (long long)ids[i],
                      e2.msg);
    }
    size_t n = floe_ice_reach_count(gone), k = 0;
    paths = calloc(n ? n : 1, sizeof *paths);
    which = calloc(n ? n : 1, sizeof *which);
    done = calloc(n ? n : 1, sizeof *done);
    if (!paths || !which || !done) {
        floe_err_oom(err);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        floe_ice_reach_file_t f = floe_ice_reach_file(gone, i);
        if (floe_ice_reach_has(keep, f.path)) continue;
        which[k] = i;
        paths[k++] = f.path;
    }
    res->delete_failures += floe_ice_delete_batched(io, paths, k, done);
    for (size_t j = 0; j < k; j++) {
        if (!done[j]) continue;
        floe_ice_reach_file_t f = floe_ice_reach_file(gone, which[j]);
        res->files_deleted++;
        if (f.size > 0) res->bytes_deleted += f.size;
        switch (f.kind) {
        case FLOE_ICE_FILE_MANIFEST_LIST: res->manifest_lists_deleted++; break;
        case FLOE_ICE_FILE_MANIFEST: res->manifests_deleted++; break;
        case FLOE_ICE_FILE_DATA: res->data_files_deleted++; break;
        case FLOE_ICE_FILE_DELETES: res->delete_files_deleted++; break;
        default: break;
        }
    }
    rc = 0;
out:
    free(paths);
    free(which);
    free(done);
    floe_ice_reach_free(keep);
    floe_ice_reach_free(gone);
    return rc;
}

static int expire_attempt(void *ctx, const floe_ice_table_t *t, floe_err_t *err)
{
    expire_ctx_t *x = ctx;
    if (x->opts->before_attempt) x->opts->before_attempt(x->opts->before_attempt_ctx, ++x->attempt);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    size_t n = md->nsnapshots;
    bool *keep = calloc(n ? n : 1, sizeof *keep);
    int64_t *ids = calloc(n ? n : 1, sizeof *ids);
    if (!keep || !ids) {
        free(keep);
        free(ids);
        return floe_err_oom(err);
    }
    if (choose(md, x->opts, floe_wall_ms(), keep, err) < 0) {
        free(keep);
        free(ids);
        return -1;
    }
    size_t nids = 0;
    for (size_t i = 0; i < n; i++)
        if (!keep[i]) ids[nids++] = md->snapshots[i]->snapshot_id;
    free(keep);
    if (!nids) {
        free(ids);
        return 0;
    }
    floe_ice_req_t reqs[2];
    floe_ice_reqs_same_head(md, reqs);
    floe_ice_update_t up;
    memset(&up, 0, sizeof up);
    up.kind = FLOE_ICE_UP_REMOVE_SNAPSHOTS;
    up.snapshot_ids = ids;
    up.nsnapshot_ids = nids;
    floe_ice_table_t *nt = NULL;
    int rc = floe_ice_catalog_commit_on(x->cat, t, reqs, 2, &up, 1, &nt, err);
    if (rc < 0 && err && err->code == FLOE_ECONFLICT) err->retriable = true; /* lost the race */
    if (rc == 0) {
        x->res->snapshots_removed = nids;
        if (x->opts->delete_files && nt)
            rc = delete_unreached(floe_ice_catalog_io(x->cat), md, ids, nids,
                                  floe_ice_table_metadata(nt), x->res, err);
    }
    free(ids);
    floe_ice_table_free(nt);
    return rc;
}

int floe_ice_expire_snapshots(floe_ice_catalog_t *cat, const char *ns, const char *name,
                              const floe_ice_expire_opts_t *opts, floe_ice_expire_result_t *res,
                              floe_err_t *err)
{
    floe_ice_expire_result_t dummy;
    if (!res) res = &dummy;
    memset(res, 0, sizeof *res);
    expire_ctx_t x = {cat, opts, res, 0};
    return floe_ice_retry(cat, ns, name, "expire", 100, expire_attempt, &x, NULL, err);
}
