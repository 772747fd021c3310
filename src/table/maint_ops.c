/* Maintenance operations on one table (maint_ops.h). */
#include "table/maint_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/read.h"
#include "iceberg/rewrite.h"
#include "table/offsets.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/fs.h"

/* ---- the progress keys of a rewrite -------------------------------------- */

static const char *const progress_keys[] = {FLOE_OFFSETS_KEY, FLOE_COMMIT_ID_KEY, "floe.topic"};

static int keep_attempt(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    floe_tmaint_keep_t *k = ctx;
    if (k->contended) k->contended(k->contended_ctx, ++k->attempt);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(cur);
    const floe_ice_snapshot_t *s = floe_ice_ancestor_with_summary(md, -1, FLOE_OFFSETS_KEY);
    for (size_t i = 0; s && i < sizeof progress_keys / sizeof *progress_keys; i++) {
        const char *v = floe_ice_props_get(&s->summary, progress_keys[i]);
        if (v && floe_ice_commit_set_summary(k->c, progress_keys[i], v, err) < 0) return -1;
    }
    return k->then ? k->then(k->then_ctx, cur, err) : 0;
}

void floe_tmaint_keep_progress(floe_ice_commit_t *c, floe_tmaint_keep_t *ctx)
{
    ctx->c = c;
    floe_ice_commit_set_validate(c, keep_attempt, ctx);
}

/* ---- compaction ------------------------------------------------------------ */

typedef struct outputs {
    floe_ice_data_file_t *v;
    size_t n, cap;
} outputs_t;

static void outputs_free(outputs_t *o)
{
    for (size_t i = 0; i < o->n; i++) floe_ice_data_file_clear(&o->v[i]);
    free(o->v);
    memset(o, 0, sizeof *o);
}

/* Remove the outputs from storage (they were never committed). */
static void outputs_remove(floe_fileio_t *io, const outputs_t *o)
{
    const char **paths = calloc(o->n ? o->n : 1, sizeof *paths);
    if (!paths) return;
    for (size_t i = 0; i < o->n; i++) paths[i] = o->v[i].path;
    floe_err_t e;
    if (o->n && floe_fileio_remove_batch(io, paths, o->n, NULL, &e) < 0)
        FLOE_WARN("compaction: cannot remove an uncommitted output: %s (orphan removal will)",
                  e.msg);
    free(paths);
}

typedef struct namer {
    char dir[2048];
    const char *run;
    unsigned *seq;
} namer_t;

char *floe_tmaint_output_path(const char *dir, const char *prefix, const char *run, unsigned seq,
                              floe_err_t *err)
{
    char path[2400];
    if (floe_path_fmt(path, sizeof path, err, "%s/%s-%s-%05u.parquet", dir, prefix, run, seq) < 0)
        return NULL;
    char *p = strdup(path);
    if (!p) floe_err_oom(err);
    return p;
}

static char *name_output(void *ctx, unsigned seq, floe_err_t *err)
{
    (void)seq;
    namer_t *nm = ctx;
    return floe_tmaint_output_path(nm->dir, "c", nm->run, ++*nm->seq, err);
}

static void say(const floe_tmaint_compact_opts_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const floe_tmaint_compact_opts_t *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, line);
}

static bool cancelled(const floe_tmaint_compact_opts_t *o)
{
    return o->cancel && atomic_load(o->cancel);
}

/* Rewrite group g into outs (appended), the deletes that apply to its
 * files applied (their rows added to *rows_deleted).  0, or -1 with *err
 * (this group's outputs removed by the rewriter). */
static int rewrite_group(floe_fileio_t *io, const floe_ice_schema_t *schema,
                         const floe_ice_compaction_group_t *g, const floe_tmaint_compact_opts_t *o,
                         const char *run, unsigned *seq, outputs_t *outs, int64_t *rows_deleted,
                         floe_err_t *err)
{
    namer_t nm = {.run = run, .seq = seq};
    if (floe_fs_dirname(g->tasks[0]->file->path, nm.dir, sizeof nm.dir, err) < 0) return -1;
    floe_ice_rewrite_opts_t ro = floe_ice_rewrite_opts_default();
    ro.target_file_size = (uint64_t)o->target_file_bytes;
    ro.scratch = o->scratch;
    floe_ice_rewriter_t *rw = floe_ice_rewriter_new(io, schema, name_output, &nm, &ro, err);
    if (!rw) return -1;
    for (size_t i = 0; i < g->ntasks; i++) {
        if (cancelled(o)) {
            floe_ice_rewriter_abort(rw);
            return floe_err_set(err, FLOE_ECLOSED, "compaction cancelled");
        }
        /* the rows a reader sees: the deletes that apply to the file out */
        floe_ice_deletes_t *dels = NULL;
        int rc =
            g->tasks[i]->ndeletes ? floe_ice_deletes_load(io, g->tasks[i], schema, &dels, err) : 0;
        if (rc == 0) rc = floe_ice_rewriter_add_deleting(rw, g->tasks[i]->file, dels, err);
        floe_ice_deletes_free(dels);
        if (rc < 0) {
            floe_ice_rewriter_abort(rw);
            return -1;
        }
    }
    int64_t dropped = floe_ice_rewriter_stats(rw).rows_dropped;
    floe_ice_data_file_t *out = NULL;
    size_t nout = 0;
    if (floe_ice_rewriter_finish(rw, &out, &nout, err) < 0) return -1;
    int64_t records = 0;
    for (size_t i = 0; i < nout; i++) records += out[i].record_count;
    int rc = 0;
    if (records != g->records - dropped)
        rc = floe_err_set(err, FLOE_ECORRUPT,
                          "compaction: %lld records written for %lld read, %lld deleted (files "
                          "of %s)",
                          (long long)records, (long long)g->records, (long long)dropped, nm.dir);
    *rows_deleted += dropped;
    if (rc == 0 && outs->n + nout > outs->cap) {
        size_t cap = (outs->n + nout) * 2;
        floe_ice_data_file_t *v = realloc(outs->v, cap * sizeof *v);
        if (!v) rc = floe_err_oom(err);
        else {
            outs->v = v;
            outs->cap = cap;
        }
    }
    if (rc < 0) {
        outputs_t tmp = {out, nout, nout};
        outputs_remove(io, &tmp);
        outputs_free(&tmp);
        return -1;
    }
    if (nout) /* none when the deletes took every row of the group */
        memcpy(outs->v + outs->n, out, nout * sizeof *out);
    outs->n += nout;
    free(out);
    return 0;
}

void floe_tmaint_compact_result_clear(floe_tmaint_compact_result_t *res)
{
    for (size_t i = 0; i < res->nin_doubt; i++) free(res->in_doubt[i]);
    free(res->in_doubt);
    res->in_doubt = NULL;
    res->nin_doubt = 0;
}

/* The outputs of a commit whose outcome is unknown go to res->in_doubt. */
static void keep_in_doubt(const outputs_t *outs, floe_tmaint_compact_result_t *res)
{
    res->in_doubt = calloc(outs->n ? outs->n : 1, sizeof *res->in_doubt);
    for (size_t i = 0; res->in_doubt && i < outs->n; i++)
        if ((res->in_doubt[res->nin_doubt] = strdup(outs->v[i].path))) res->nin_doubt++;
}

/* Commit the groups of plan p (files rewritten into outs) as one replace
 * snapshot based on the planned one: the new files keep the planned
 * snapshot's sequence number (the deletes applied no longer apply to
 * them, those committed since still do), and the delete files nothing
 * else needs go in the same commit. */
static int commit_run(floe_ice_catalog_t *cat, const char *ns, const char *name,
                      const floe_ice_compaction_plan_t *p, size_t ngroups, const outputs_t *outs,
                      const floe_tmaint_compact_opts_t *o, int64_t *snap, floe_err_t *err)
{
    floe_ice_commit_t *c = floe_ice_commit_new(cat, ns, name, FLOE_ICE_OP_REWRITE, err);
    if (!c) return -1;
    int rc = 0;
    for (size_t g = 0; rc == 0 && g < ngroups; g++) {
        const floe_ice_compaction_group_t *gr = floe_ice_compaction_plan_group(p, g);
        for (size_t i = 0; rc == 0 && i < gr->ntasks; i++)
            rc = floe_ice_commit_remove(c, gr->tasks[i]->file->path, err);
    }
    for (size_t i = 0; rc == 0 && i < floe_ice_compaction_plan_ndrops(p); i++)
        rc = floe_ice_commit_remove(c, floe_ice_compaction_plan_drop(p, i)->file.path, err);
    for (size_t i = 0; rc == 0 && i < outs->n; i++) rc = floe_ice_commit_add(c, &outs->v[i], err);
    if (rc == 0 && floe_ice_compaction_plan_snapshot(p) >= 0)
        rc = floe_ice_commit_set_data_sequence(c, floe_ice_compaction_plan_sequence(p), err);
    floe_tmaint_keep_t keep = {.contended = o->contended, .contended_ctx = o->contended_ctx};
    if (rc == 0) {
        floe_ice_commit_set_base(c, floe_ice_compaction_plan_snapshot(p));
        floe_tmaint_keep_progress(c, &keep);
        rc = floe_ice_commit_run(c, snap, err) < 0 ? -1 : 0;
    }
    floe_ice_commit_free(c);
    return rc;
}

int floe_tmaint_compact(floe_ice_catalog_t *cat, const char *ns, const char *name,
                        const floe_tmaint_compact_opts_t *o, floe_tmaint_compact_result_t *res,
                        floe_err_t *err)
{
    memset(res, 0, sizeof *res);
    res->snapshot_id = -1;
    int64_t t0 = floe_mono_ms();
    floe_fileio_t *io = floe_ice_catalog_io(cat);
    floe_ice_table_t *t = NULL;
    floe_ice_compaction_plan_t *p = NULL;
    outputs_t outs = {0};
    int rc = -1;
    if (floe_ice_catalog_load_table(cat, ns, name, &t, err) < 0) goto out;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_schema_t *schema = floe_ice_metadata_current_schema(md);
    floe_ice_compaction_opts_t po = {.target_file_bytes = o->target_file_bytes,
                                     .min_input_files = o->min_input_files,
                                     .max_bytes = o->max_bytes,
                                     .tier_ratio = o->tier_ratio,
                                     .with_deletes = true,
                                     .delete_percent = o->delete_percent,
                                     .delete_files = o->delete_files};
    if (floe_ice_compaction_plan(io, md, -1, &po, &p, err) < 0) goto out;
    size_t ng = floe_ice_compaction_plan_ngroups(p);
    res->small_files = floe_ice_compaction_plan_small_files(p);
    if (!ng || !schema) {
        say(o, "%s.%s: nothing to compact (%zu small files, fewer than %zu in any partition)", ns,
            name, res->small_files, o->min_input_files);
        rc = 0;
        goto out;
    }
    char run[37];
    floe_ice_uuid4(run);
    unsigned seq = 0;
    for (size_t g = 0; g < ng; g++) {
        const floe_ice_compaction_group_t *gr = floe_ice_compaction_plan_group(p, g);
        size_t before = outs.n;
        if (rewrite_group(io, schema, gr, o, run, &seq, &outs, &res->rows_deleted, err) < 0) {
            floe_err_wrap(err, "compacting %s.%s", ns, name);
            outputs_remove(io, &outs);
            goto out;
        }
        res->groups++;
        res->files_in += gr->ntasks;
        res->bytes_in += gr->bytes;
        res->records += gr->records;
        int64_t ob = 0;
        for (size_t i = before; i < outs.n; i++) ob += outs.v[i].file_size;
        say(o,
            "%s.%s: group %zu of %zu: %zu files (%.2f MB, %lld records, %zu delete files) into "
            "%zu (%.2f MB)",
            ns, name, g + 1, ng, gr->ntasks, (double)gr->bytes / 1e6, (long long)gr->records,
            gr->ndeletes, outs.n - before, (double)ob / 1e6);
    }
    if (commit_run(cat, ns, name, p, ng, &outs, o, &res->snapshot_id, err) < 0) {
        if (err->code == FLOE_EUNKNOWN) keep_in_doubt(&outs, res);
        else
            outputs_remove(io, &outs);
        floe_err_wrap(err, "committing the compaction of %s.%s", ns, name);
        res->snapshot_id = -1;
        goto out;
    }
    res->files_out = outs.n;
    res->delete_files_removed = floe_ice_compaction_plan_ndrops(p);
    for (size_t i = 0; i < outs.n; i++) res->bytes_out += outs.v[i].file_size;
    rc = 0;
out:
    res->duration_ms = floe_mono_ms() - t0;
    outputs_free(&outs);
    floe_ice_compaction_plan_free(p);
    floe_ice_table_free(t);
    return rc;
}

/* ---- expiry ---------------------------------------------------------------- */

#define REDRIVE_KEY "floe.redrive-id"

/* Whether a snapshot of the DLQ table dm names re-drive id (a single id,
 * or one of a comma-separated list). */
static bool names_redrive(const floe_ice_metadata_t *dm, const char *id)
{
    size_t n = strlen(id);
    for (size_t i = 0; i < dm->nsnapshots; i++) {
        const char *v = floe_ice_props_get(&dm->snapshots[i]->summary, REDRIVE_KEY);
        for (const char *p = v ? strstr(v, id) : NULL; p; p = strstr(p + 1, id))
            if ((p == v || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
    }
    return false;
}

/* Whether ns.name has a re-drive snapshot its DLQ table does not name. */
static int redrive_unfinished(floe_ice_catalog_t *cat, const char *ns, const char *name,
                              const floe_ice_metadata_t *md, bool *out, floe_err_t *err)
{
    *out = false;
    const floe_ice_snapshot_t *r = NULL;
    for (size_t i = 0; i < md->nsnapshots && !r; i++)
        if (floe_ice_props_get(&md->snapshots[i]->summary, REDRIVE_KEY)) r = md->snapshots[i];
    if (!r) return 0;
    char dlq[600];
    snprintf(dlq, sizeof dlq, "%s_dlq", name);
    floe_ice_table_t *d;
    if (floe_ice_catalog_load_table(cat, ns, dlq, &d, err) < 0)
        return err->code == FLOE_ENOENT ? 0 : -1;
    for (size_t i = 0; i < md->nsnapshots && !*out; i++) {
        const char *id = floe_ice_props_get(&md->snapshots[i]->summary, REDRIVE_KEY);
        if (id && !names_redrive(floe_ice_table_metadata(d), id)) *out = true;
    }
    floe_ice_table_free(d);
    return 0;
}

int floe_tmaint_expire(floe_ice_catalog_t *cat, const char *ns, const char *name,
                       const floe_tmaint_expire_opts_t *opts, floe_tmaint_expire_result_t *res,
                       floe_err_t *err)
{
    memset(res, 0, sizeof *res);
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(cat, ns, name, &t, err) < 0) return -1;
    bool wait;
    int rc = redrive_unfinished(cat, ns, name, floe_ice_table_metadata(t), &wait, err);
    floe_ice_table_free(t);
    if (rc < 0) return -1;
    if (wait) {
        res->waited = true;
        return 0;
    }
    floe_ice_expire_opts_t eo = {.older_than_ms = opts->older_than_ms,
                                 .keep_last = opts->keep_last,
                                 .delete_files = true,
                                 .protect_summary_key = FLOE_OFFSETS_KEY,
                                 .before_attempt = opts->contended,
                                 .before_attempt_ctx = opts->contended_ctx};
    floe_ice_expire_result_t r;
    memset(&r, 0, sizeof r);
    rc = floe_ice_expire_snapshots(cat, ns, name, &eo, &r, err);
    res->snapshots_removed = r.snapshots_removed;
    res->files_deleted = r.files_deleted;
    res->bytes_deleted = r.bytes_deleted;
    res->delete_failures = r.delete_failures;
    return rc;
}

/* ---- orphans --------------------------------------------------------------- */

int floe_tmaint_remove_orphans(floe_ice_catalog_t *cat, const char *ns, const char *name,
                               const floe_ice_orphan_opts_t *opts, floe_ice_orphan_result_t *res,
                               floe_err_t *err)
{
    if (floe_ice_remove_orphans(cat, ns, name, opts, res, err) < 0) {
        floe_err_wrap(err, "removing orphan files of %s.%s", ns, name);
        return -1;
    }
    return 0;
}

/* ---- figures ---------------------------------------------------------------- */

static int64_t summary_i64(const floe_ice_snapshot_t *s, const char *key)
{
    const char *v = s ? floe_ice_props_get(&s->summary, key) : NULL;
    return v ? strtoll(v, NULL, 10) : -1;
}

int floe_tmaint_stats(floe_ice_catalog_t *cat, const char *ns, const char *name,
                      floe_tmaint_stats_t *st, floe_err_t *err)
{
    memset(st, 0, sizeof *st);
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(cat, ns, name, &t, err) < 0) return -1;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
    st->snapshots = (int64_t)md->nsnapshots;
    st->data_files = s ? summary_i64(s, "total-data-files") : 0;
    st->data_bytes = s ? summary_i64(s, "total-files-size") : 0;
    st->records = s ? summary_i64(s, "total-records") : 0;
    int64_t created = summary_i64(s, "manifests-created"), kept = summary_i64(s, "manifests-kept");
    st->manifests = !s ? 0 : created >= 0 && kept >= 0 ? created + kept : -1;
    char dir[2048];
    const char *cur = floe_ice_table_metadata_location(t);
    const char *base = strrchr(cur, '/');
    base = base ? base + 1 : cur;
    int rc = -1;
    floe_fileio_entry_t *en = NULL;
    size_t n = 0;
    if (!md->location || floe_path_join(dir, sizeof dir, md->location, "metadata", err) < 0 ||
        floe_fileio_list_entries(floe_ice_catalog_io(cat), dir, &en, &n, err) < 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (en[i].is_dir || en[i].size < 0) continue;
        st->metadata_files++;
        st->metadata_bytes += en[i].size;
        if (!strcmp(en[i].name, base)) st->metadata_json_bytes = en[i].size;
    }
    rc = 0;
out:
    floe_fileio_entries_free(en, n);
    floe_ice_table_free(t);
    return rc;
}
