/* Compaction planning (see maintain.h): small live data files, and data
 * files that deletes have thinned, grouped by spec and partition tuple,
 * cut in time order into runs near the target size; then the delete
 * files that no data file left outside the groups needs. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/maintain.h"
#include "iceberg/read.h"

struct floe_ice_compaction_plan {
    floe_ice_scan_t *scan;
    int64_t snapshot_id, sequence;
    const floe_ice_scan_task_t **order; /* the candidates, by group then time */
    floe_ice_compaction_group_t *groups;
    size_t ngroups, nsmall;
    /* per task of the scan (by index) */
    int64_t *deleted; /* rows its deletes remove (equality deletes: an estimate) */
    bool *forced;     /* its deletes call for a rewrite whatever its size */
    /* per delete file of the scan: position deletes' targets, read once */
    floe_ice_pos_targets_t *targets;
    bool *targets_read;
    const floe_ice_manifest_entry_t **drop; /* delete files the groups make useless */
    size_t ndrop;
};

/* Index in the scan of a task's delete file (the scan keeps its delete
 * entries in one array, task->deletes point at their files). */
static size_t del_index(const floe_ice_scan_t *sc, const floe_ice_data_file_t *f)
{
    const floe_ice_manifest_entry_t *e0 = floe_ice_scan_delete_file(sc, 0);
    return (size_t)(((const char *)f - (const char *)&e0->file) / (ptrdiff_t)sizeof *e0);
}

static size_t task_index(const floe_ice_scan_t *sc, const floe_ice_scan_task_t *t)
{
    return (size_t)(t - floe_ice_scan_task(sc, 0));
}

/* Rows of data file `path` that position delete file k names (read once). */
static int pos_rows(floe_fileio_t *io, floe_ice_compaction_plan_t *p, size_t k, const char *path,
                    int64_t *rows, floe_err_t *err)
{
    const floe_ice_data_file_t *d = &floe_ice_scan_delete_file(p->scan, k)->file;
    *rows = 0;
    if (!floe_ice_position_delete_may_name(d, path)) return 0;
    if (!p->targets_read[k]) {
        if (floe_ice_position_delete_targets(io, d, &p->targets[k], err) < 0) return -1;
        p->targets_read[k] = true;
    }
    *rows = floe_ice_pos_targets_rows(&p->targets[k], path);
    return 0;
}

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
    if (a->forced != b->forced) return a->forced ? -1 : 1;
    if (a->ntasks != b->ntasks) return a->ntasks > b->ntasks ? -1 : 1;
    return a->tasks < b->tasks ? -1 : a->tasks > b->tasks; /* plan order */
}

static bool same_group(const floe_ice_scan_task_t *a, const floe_ice_scan_task_t *b)
{
    return a->file->spec_id == b->file->spec_id && cmp_tuple(a->file, b->file) == 0;
}

/* The rows each task's deletes remove: exact for position deletes; an
 * equality delete file's rows are spread over the files it applies to in
 * proportion to their rows (which of them holds a key only reading them
 * tells).  Then which tasks the deletes force into a rewrite. */
static int weigh_deletes(floe_fileio_t *io, floe_ice_compaction_plan_t *p,
                         const floe_ice_compaction_opts_t *o, floe_err_t *err)
{
    size_t nt = floe_ice_scan_ntasks(p->scan), nd = floe_ice_scan_ndelete_files(p->scan);
    int64_t *reach = calloc(nd ? nd : 1, sizeof *reach); /* rows each eq file applies to */
    if (!reach) return floe_err_oom(err);
    for (size_t i = 0; i < nt; i++) {
        const floe_ice_scan_task_t *t = floe_ice_scan_task(p->scan, i);
        for (size_t k = 0; k < t->ndeletes; k++)
            reach[del_index(p->scan, t->deletes[k])] += t->file->record_count;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        const floe_ice_scan_task_t *t = floe_ice_scan_task(p->scan, i);
        double est = 0;
        for (size_t k = 0; rc == 0 && k < t->ndeletes; k++) {
            size_t x = del_index(p->scan, t->deletes[k]);
            if (t->deletes[k]->content == FLOE_ICE_CONTENT_POSITION_DELETES) {
                int64_t r;
                rc = pos_rows(io, p, x, t->file->path, &r, err);
                est += (double)r;
            } else if (reach[x] > 0) {
                est += (double)t->deletes[k]->record_count * (double)t->file->record_count /
                       (double)reach[x];
            }
        }
        p->deleted[i] = est > (double)t->file->record_count ? t->file->record_count : (int64_t)est;
        p->forced[i] = o->delete_percent > 0 && p->deleted[i] > 0 &&
                       p->deleted[i] * 100 >= o->delete_percent * t->file->record_count;
    }
    free(reach);
    return rc;
}

/* A partition with delete_files or more delete files: its files whose
 * deletes remove rows are forced (all[from..to) is one partition). */
static void force_many(floe_ice_compaction_plan_t *p, const floe_ice_compaction_opts_t *o,
                       const floe_ice_scan_task_t **all, size_t from, size_t to, size_t *stamp,
                       size_t mark)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        for (size_t k = 0; k < all[i]->ndeletes; k++) {
            size_t x = del_index(p->scan, all[i]->deletes[k]);
            if (stamp[x] != mark) {
                stamp[x] = mark;
                n++;
            }
        }
    if (!o->delete_files || n < o->delete_files) return;
    for (size_t i = from; i < to; i++) {
        size_t t = task_index(p->scan, all[i]);
        if (p->deleted[t] > 0) p->forced[t] = true;
    }
}

/* The delete files no data file outside the groups needs: an equality
 * delete that applies to such a file, or a position delete that names
 * one, stays. */
static int find_drops(floe_fileio_t *io, floe_ice_compaction_plan_t *p, floe_err_t *err)
{
    size_t nt = floe_ice_scan_ntasks(p->scan), nd = floe_ice_scan_ndelete_files(p->scan);
    bool *gone = calloc(nt ? nt : 1, sizeof *gone), *need = calloc(nd ? nd : 1, sizeof *need);
    p->drop = calloc(nd ? nd : 1, sizeof *p->drop);
    int rc = gone && need && p->drop ? 0 : floe_err_oom(err);
    for (size_t g = 0; rc == 0 && g < p->ngroups; g++)
        for (size_t i = 0; i < p->groups[g].ntasks; i++)
            gone[task_index(p->scan, p->groups[g].tasks[i])] = true;
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        const floe_ice_scan_task_t *t = floe_ice_scan_task(p->scan, i);
        for (size_t k = 0; rc == 0 && !gone[i] && k < t->ndeletes; k++) {
            size_t x = del_index(p->scan, t->deletes[k]);
            if (need[x]) continue;
            int64_t r = 1;
            if (t->deletes[k]->content == FLOE_ICE_CONTENT_POSITION_DELETES)
                rc = pos_rows(io, p, x, t->file->path, &r, err);
            need[x] = r > 0;
        }
    }
    for (size_t k = 0; rc == 0 && k < nd; k++)
        if (!need[k]) p->drop[p->ndrop++] = floe_ice_scan_delete_file(p->scan, k);
    free(gone);
    free(need);
    return rc;
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
    p->sequence = snap ? snap->sequence_number : 0;
    if (floe_ice_scan_plan(io, md, p->snapshot_id, NULL, 0, &p->scan, err) < 0) {
        free(p);
        return -1;
    }
    size_t nt = floe_ice_scan_ntasks(p->scan), nd = floe_ice_scan_ndelete_files(p->scan);
    p->order = calloc(nt ? nt : 1, sizeof *p->order);
    p->groups = calloc(nt ? nt : 1, sizeof *p->groups);
    p->deleted = calloc(nt ? nt : 1, sizeof *p->deleted);
    p->forced = calloc(nt ? nt : 1, sizeof *p->forced);
    p->targets = calloc(nd ? nd : 1, sizeof *p->targets);
    p->targets_read = calloc(nd ? nd : 1, sizeof *p->targets_read);
    size_t *stamp = calloc(nd ? nd : 1, sizeof *stamp);
    const floe_ice_scan_task_t **all = calloc(nt ? nt : 1, sizeof *all);
    if (!p->order || !p->groups || !p->deleted || !p->forced || !p->targets || !p->targets_read ||
        !stamp || !all) {
        free(stamp);
        free(all);
        floe_ice_compaction_plan_free(p);
        return floe_err_oom(err);
    }
    if (opts->with_deletes && nd && weigh_deletes(io, p, opts, err) < 0) {
        free(stamp);
        free(all);
        floe_ice_compaction_plan_free(p);
        return -1;
    }
    for (size_t i = 0; i < nt; i++) all[i] = floe_ice_scan_task(p->scan, i);
    qsort(all, nt, sizeof *all, cmp_task);
    for (size_t i = 0, mark = 1; opts->with_deletes && nd && i < nt; mark++) {
        size_t j = i;
        while (j < nt && same_group(all[i], all[j])) j++;
        force_many(p, opts, all, i, j, stamp, mark);
        i = j;
    }
    free(stamp);
    for (size_t i = 0; i < nt; i++) {
        const floe_ice_scan_task_t *t = all[i];
        bool forced = p->forced[task_index(p->scan, t)];
        if ((t->file->file_size >= small && !forced) || (t->ndeletes && !opts->with_deletes))
            continue;
        p->order[p->nsmall++] = t;
    }
    free(all);
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
        if (after && !p->forced[task_index(p->scan, p->order[i])] &&
            p->order[i]->file->file_size > opts->tier_ratio * after[i]) {
            i++; /* it waits for more newer data */
            continue;
        }
        size_t j = i;
        int64_t bytes = 0;
        while (j < p->nsmall && same_group(p->order[i], p->order[j]) &&
               (j == i || bytes + p->order[j]->file->file_size <= opts->target_file_bytes))
            bytes += p->order[j++]->file->file_size;
        bool forced = false;
        for (size_t k = i; k < j; k++) forced |= p->forced[task_index(p->scan, p->order[k])];
        if (j - i >= min_in || forced) {
            floe_ice_compaction_group_t *g = &p->groups[p->ngroups++];
            g->spec_id = p->order[i]->file->spec_id;
            g->partition = p->order[i]->file->partition;
            g->npartition = p->order[i]->file->npartition;
            g->tasks = &p->order[i];
            g->ntasks = j - i;
            g->forced = forced;
            for (size_t k = i; k < j; k++) {
                g->bytes += p->order[k]->file->file_size;
                g->records += p->order[k]->file->record_count;
                g->ndeletes += p->order[k]->ndeletes;
                g->deleted_rows += p->deleted[task_index(p->scan, p->order[k])];
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
    if (p->ngroups && nd && opts->with_deletes && find_drops(io, p, err) < 0) {
        floe_ice_compaction_plan_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int64_t floe_ice_compaction_plan_sequence(const floe_ice_compaction_plan_t *p)
{
    return p->sequence;
}

size_t floe_ice_compaction_plan_ndrops(const floe_ice_compaction_plan_t *p)
{
    return p->ndrop;
}

const floe_ice_manifest_entry_t *floe_ice_compaction_plan_drop(const floe_ice_compaction_plan_t *p,
                                                               size_t i)
{
    return p->drop[i];
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
    size_t nd = p->scan ? floe_ice_scan_ndelete_files(p->scan) : 0;
    for (size_t k = 0; p->targets && k < nd; k++) floe_ice_pos_targets_clear(&p->targets[k]);
    free(p->targets);
    free(p->targets_read);
    free(p->deleted);
    free(p->forced);
    free(p->drop);
    floe_ice_scan_free(p->scan);
    free(p->order);
    free(p->groups);
    free(p);
}
