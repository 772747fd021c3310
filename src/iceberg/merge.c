/* Manifest merging at commit (Iceberg's MergeAppend; see commit_int.h).
 *
 * Per content (data, then deletes) and per partition spec (newest spec
 * first), the manifests are packed from the oldest end into bins of about
 * target-size bytes, one bin open at a time so the order stays.  A bin of
 * more than one manifest is rewritten as one; the bin holding the newest
 * manifest only once it has min-count-to-merge of them.  The list thus
 * grows by one manifest a commit until it reaches the minimum count, then
 * falls back to a handful; a merged manifest grows until it reaches the
 * target size, and from then on stays as it is. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/commit_int.h"

#define MIB ((int64_t)1 << 20)

void floe_ice_merge_cfg_from(const floe_ice_props_t *props, floe_ice_merge_cfg_t *cfg)
{
    cfg->enabled = floe_ice_props_get_bool(props, "commit.manifest-merge.enabled", true);
    cfg->min_count =
        floe_ice_props_get_i64(props, "commit.manifest.min-count-to-merge", 0, INT32_MAX, 100);
    cfg->target_bytes = floe_ice_props_get_i64(props, "commit.manifest.target-size-bytes", 1,
                                               INT64_MAX / 2, 8 * MIB);
}

typedef struct bin {
    size_t from, to; /* positions [from, to) in the group */
} bin_t;

/* Pack group[0..n) (indices into list) into contiguous bins, filled from
 * the end (the oldest manifests), in group order.  Returns the count. */
static size_t pack_end(const floe_ice_manifest_file_t *list, const size_t *group, size_t n,
                       int64_t target, bin_t *bins)
{
    size_t nb = 0, end = n;
    int64_t w = 0;
    for (size_t i = n; i-- > 0;) {
        int64_t len = list[group[i]].length > 0 ? list[group[i]].length : 0;
        if (end - i > 1 && w + len > target) {
            bins[nb++] = (bin_t){i + 1, end};
            end = i + 1;
            w = 0;
        }
        w += len;
    }
    if (n) bins[nb++] = (bin_t){0, end};
    /* built newest-last: put them in group order */
    for (size_t i = 0; i < nb / 2; i++) {
        bin_t t = bins[i];
        bins[i] = bins[nb - 1 - i];
        bins[nb - 1 - i] = t;
    }
    return nb;
}

/* Write the manifests list[group[from..to)] as one: entries added by this
 * snapshot stay added, other live ones become existing (their snapshot id
 * and sequence numbers kept), entries deleted by older snapshots go. */
static int merge_bin(floe_fileio_t *io, const floe_ice_manifest_file_t *list, const size_t *group,
                     size_t from, size_t to, int64_t snapshot_id, floe_ice_manifest_writer_fn wr,
                     void *ctx, floe_ice_manifest_file_t *out, bool *written, floe_err_t *err)
{
    floe_ice_manifest_entry_t **ents = calloc(to - from, sizeof *ents);
    size_t *ns = calloc(to - from, sizeof *ns);
    floe_ice_manifest_entry_t *all = NULL;
    size_t total = 0, n = 0;
    int rc = -1;
    *written = false;
    if (!ents || !ns) {
        floe_err_oom(err);
        goto out;
    }
    for (size_t i = from; i < to; i++) {
        const floe_ice_manifest_file_t *m = &list[group[i]];
        if (floe_ice_manifest_read(io, m->path, &ents[i - from], &ns[i - from], err) < 0) goto out;
        floe_ice_manifest_entries_inherit(ents[i - from], ns[i - from], m);
        total += ns[i - from];
    }
    if (!(all = calloc(total ? total : 1, sizeof *all))) {
        floe_err_oom(err);
        goto out;
    }
    for (size_t b = 0; b < to - from; b++)
        for (size_t k = 0; k < ns[b]; k++) {
            floe_ice_manifest_entry_t e = ents[b][k]; /* shallow: borrowed for the write */
            if (e.status == FLOE_ICE_DELETED && e.snapshot_id != snapshot_id) continue;
            if (e.status == FLOE_ICE_ADDED && e.snapshot_id != snapshot_id)
                e.status = FLOE_ICE_EXISTING;
            all[n++] = e;
        }
    const floe_ice_manifest_file_t *first = &list[group[from]];
    if (n) {
        if (wr(ctx, first->spec_id, first->content, all, n, out, err) < 0) goto out;
        *written = true;
    }
    rc = 0;
out:
    for (size_t b = 0; ents && b < to - from; b++) floe_ice_manifest_entries_free(ents[b], ns[b]);
    free(ents);
    free(ns);
    free(all);
    return rc;
}

static int push(floe_ice_manifest_file_t **v, size_t *n, const floe_ice_manifest_file_t *m,
                bool move, floe_err_t *err)
{
    floe_ice_manifest_file_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) return floe_err_oom(err);
    *v = nv;
    if (move) nv[*n] = *m;
    else if (floe_ice_manifest_file_copy(&nv[*n], m) < 0)
        return floe_err_oom(err);
    (*n)++;
    return 0;
}

static int cmp_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x < y) - (x > y);
}

/* The group of one content and spec: merged or kept, appended to out. */
static int merge_group(floe_fileio_t *io, const floe_ice_merge_cfg_t *cfg, int64_t snapshot_id,
                       const floe_ice_manifest_file_t *list, const size_t *group, size_t n,
                       size_t first, floe_ice_manifest_writer_fn wr, void *ctx,
                       floe_ice_manifest_file_t **out, size_t *nout, size_t *merged,
                       floe_err_t *err)
{
    bin_t *bins = calloc(n ? n : 1, sizeof *bins);
    if (!bins) return floe_err_oom(err);
    size_t nb = pack_end(list, group, n, cfg->target_bytes, bins);
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < nb; b++) {
        size_t k = bins[b].to - bins[b].from;
        bool has_first = false;
        for (size_t i = bins[b].from; i < bins[b].to; i++) has_first |= group[i] == first;
        if (k == 1 || (has_first && (int64_t)k < cfg->min_count)) {
            for (size_t i = bins[b].from; rc == 0 && i < bins[b].to; i++)
                rc = push(out, nout, &list[group[i]], false, err);
            continue;
        }
        floe_ice_manifest_file_t m;
        bool written;
        rc = merge_bin(io, list, group, bins[b].from, bins[b].to, snapshot_id, wr, ctx, &m,
                       &written, err);
        if (rc == 0 && written && (rc = push(out, nout, &m, true, err)) < 0)
            floe_ice_manifest_file_clear(&m);
        if (rc == 0) *merged += k;
    }
    free(bins);
    return rc;
}

int floe_ice_merge_manifests(floe_fileio_t *io, const floe_ice_merge_cfg_t *cfg,
                             int64_t snapshot_id, floe_ice_manifest_file_t **list, size_t *n,
                             floe_ice_manifest_writer_fn wr, void *ctx, size_t *merged,
                             floe_err_t *err)
{
    *merged = 0;
    if (!cfg->enabled || *n < 2) return 0;
    const floe_ice_manifest_file_t *in = *list;
    floe_ice_manifest_file_t *out = NULL;
    size_t nout = 0;
    size_t *group = calloc(*n, sizeof *group);
    int32_t *specs = calloc(*n, sizeof *specs);
    int rc = group && specs ? 0 : floe_err_oom(err);
    for (int content = 0; rc == 0 && content <= 1; content++) {
        size_t first = SIZE_MAX, nspecs = 0;
        for (size_t i = 0; i < *n; i++)
            if (in[i].content == content) {
                if (first == SIZE_MAX) first = i;
                bool seen = false;
                for (size_t s = 0; s < nspecs; s++) seen |= specs[s] == in[i].spec_id;
                if (!seen) specs[nspecs++] = in[i].spec_id;
            }
        qsort(specs, nspecs, sizeof *specs, cmp_desc);
        for (size_t s = 0; rc == 0 && s < nspecs; s++) {
            size_t ng = 0;
            for (size_t i = 0; i < *n; i++)
                if (in[i].content == content && in[i].spec_id == specs[s]) group[ng++] = i;
            rc = merge_group(io, cfg, snapshot_id, in, group, ng, first, wr, ctx, &out, &nout,
                             merged, err);
        }
    }
    free(group);
    free(specs);
    if (rc < 0) {
        floe_ice_manifest_files_free(out, nout);
        return -1;
    }
    floe_ice_manifest_files_free(*list, *n);
    *list = out;
    *n = nout;
    return 0;
}
