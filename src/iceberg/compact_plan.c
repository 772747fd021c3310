/* Compaction planning (see maintain.h): small live data files grouped by
 * spec and partition tuple, cut in time order into runs near the target
 * size. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/maintain.h"

struct floe_ice_compaction_plan {
    floe_ice_scan_t *scan;
    int64_t snapshot_id;
    const floe_ice_scan_task_t **order; /* the small files, by group then time */
    floe_ice_compaction_group_t *groups;
    size_t ngroups, nsmall;
};

/* Partition tuples: by arity, then value by value (nulls first). */
static int cmp_tuple(const floe_ice_data_file_t *a, const floe_ice_data_file_t *b)
{
    if (a->npartition != b->npartition) return a->npartition < b->npartition ? -1 : 1;
    for (size_t i = 0; i < a->npartition; i++) {
        const floe_ice_value_t *x = &a->partition[i], *y = &b->partition[i];
        if (x->is_null || y->is_null) {
            if (x->is_null != y->is_null) return x->is_null ? -1 : 1;
            continue;
        }
        if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
        int c = floe_ice_value_cmp(x, y);
        if (c) return c;
    }
    return 0;
}

static int cmp_task(const void *pa, const void *pb)
{
    const floe_ice_scan_task_t *a = *(const floe_ice_scan_task_t *const *)pa,
                               *b = *(const floe_ice_scan_task_t *const *)pb;
    if (a->file->spec_id != b->file->spec_id) return a->file->spec_id < b->file->spec_id ? -1 : 1;
    int c = cmp_tuple(a->file, b->file);
    if (c) return c;
    if (a->sequence_number != b->sequence_number)
        return a->sequence_number < b->sequence_number ? -1 : 1;
    return strcmp(a->file->path, b->file->path);
}

static int cmp_group(const void *pa, const void *pb)
{
    const floe_ice_compaction_group_t *a = pa, *b = pb;
    if (a->ntasks != b->ntasks) return a->ntasks > b->ntasks ? -1 : 1;
    return a->tasks < b->tasks ? -1 : a->tasks > b->tasks; /* plan order */
}

static bool same_group(const floe_ice_scan_task_t *a, const floe_ice_scan_task_t *b)
{
    return a->file->spec_id == b->file->spec_id && cmp_tuple(a->file, b->file) == 0;
}

int floe_ice_compaction_plan(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t snapshot_id,
                             const floe_ice_compaction_opts_t *opts,
                             floe_ice_compaction_plan_t **out, floe_err_t *err)
{
    *out = NULL;
    if (opts->target_file_bytes <= 0)
        return floe_err_set(err, FLOE_EINVAL, "compaction: target file size must be positive");
    int64_t small =
        opts->small_file_bytes > 0 ? opts->small_file_bytes : opts->target_file_bytes / 4 * 3;
    size_t min_in = opts->min_input_files ? opts->min_input_files : 5;
    if (min_in < 2) min_in = 2;
    floe_ice_compaction_plan_t *p = calloc(1, sizeof *p);
    if (!p) return floe_err_oom(err);
    const floe_ice_snapshot_t *snap = snapshot_id < 0 ? floe_ice_metadata_current_snapshot(md)
                                                      : floe_ice_metadata_snapshot(md, snapshot_id);
    p->snapshot_id = snap ? snap->snapshot_id : -1;
    if (floe_ice_scan_plan(io, md, p->snapshot_id, NULL, 0, &p->scan, err) < 0) {
        free(p);
        return -1;
    }
    size_t nt = floe_ice_scan_ntasks(p->scan);
    p->order = calloc(nt ? nt : 1, sizeof *p->order);
    p->groups = calloc(nt ? nt : 1, sizeof *p->groups);
    if (!p->order || !p->groups) {
        floe_ice_compaction_plan_free(p);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < nt; i++) {
        const floe_ice_scan_task_t *t = floe_ice_scan_task(p->scan, i);
        if (t->file->file_size >= small || (t->ndeletes && !opts->with_deletes)) continue;
        p->order[p->nsmall++] = t;
    }
    qsort(p->order, p->nsmall, sizeof *p->order, cmp_task);
    /* size tiers: after[i] = bytes of the small files of i's group after i */
    int64_t *after = opts->tier_ratio > 0 ? calloc(p->nsmall + 1, sizeof *after) : NULL;
    if (opts->tier_ratio > 0 && !after) {
        floe_ice_compaction_plan_free(p);
        return floe_err_oom(err);
    }
    for (size_t i = p->nsmall; after && i-- > 0;)
        after[i] = i + 1 < p->nsmall && same_group(p->order[i], p->order[i + 1])
                       ? after[i + 1] + p->order[i + 1]->file->file_size
                       : 0;
    /* runs: consecutive files of one group while their sizes fit the target */
    for (size_t i = 0; i < p->nsmall;) {
        if (after && p->order[i]->file->file_size > opts->tier_ratio * after[i]) {
            i++; /* it waits for more newer data */
            continue;
        }
        size_t j = i;
        int64_t bytes = 0;
        while (j < p->nsmall && same_group(p->order[i], p->order[j]) &&
               (j == i || bytes + p->order[j]->file->file_size <= opts->target_file_bytes))
            bytes += p->order[j++]->file->file_size;
        if (j - i >= min_in) {
            floe_ice_compaction_group_t *g = &p->groups[p->ngroups++];
            g->spec_id = p->order[i]->file->spec_id;
            g->partition = p->order[i]->file->partition;
            g->npartition = p->order[i]->file->npartition;
            g->tasks = &p->order[i];
            g->ntasks = j - i;
            for (size_t k = i; k < j; k++) {
                g->bytes += p->order[k]->file->file_size;
                g->records += p->order[k]->file->record_count;
                g->ndeletes += p->order[k]->ndeletes;
            }
        }
        i = j;
    }
    free(after);
    /* the most files first, within the budget */
    qsort(p->groups, p->ngroups, sizeof *p->groups, cmp_group);
    if (opts->max_bytes > 0) {
        size_t keep = 0;
        int64_t used = 0;
        for (size_t g = 0; g < p->ngroups; g++) {
            if (keep && used + p->groups[g].bytes > opts->max_bytes) continue;
            used += p->groups[g].bytes;
            p->groups[keep++] = p->groups[g];
        }
        p->ngroups = keep;
    }
    *out = p;
    return 0;
}

int64_t floe_ice_compaction_plan_snapshot(const floe_ice_compaction_plan_t *p)
{
    return p->snapshot_id;
}

size_t floe_ice_compaction_plan_ngroups(const floe_ice_compaction_plan_t *p)
{
    return p->ngroups;
}

const floe_ice_compaction_group_t *
floe_ice_compaction_plan_group(const floe_ice_compaction_plan_t *p, size_t i)
{
    return &p->groups[i];
}

size_t floe_ice_compaction_plan_small_files(const floe_ice_compaction_plan_t *p)
{
    return p->nsmall;
}

void floe_ice_compaction_plan_free(floe_ice_compaction_plan_t *p)
{
    if (!p) return;
    floe_ice_scan_free(p->scan);
    free(p->order);
    free(p->groups);
    free(p);
}
