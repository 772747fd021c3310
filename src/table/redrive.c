/* Re-drive: the dead-letter rows that convert now (after a fix, say
 * table.json.coerce=true) move into the main table, exactly once.
 *
 * Two tables cannot commit atomically, so the main table is the truth:
 *   1. the rows that convert are appended to the main table in a snapshot
 *      whose summary carries floe.redrive-id (the offsets stay as they
 *      are: these records are below them);
 *   2. the DLQ files that held them are rewritten without them, in a
 *      snapshot carrying the same floe.redrive-id.
 * A crash between 1 and 2 leaves a main snapshot whose id the DLQ lacks.
 * Before any re-drive (and when the engine opens a table) that step 2 is
 * finished:
 * the (partition, offset) of every row the main snapshot added leave the
 * DLQ.  So a record is in the DLQ or in the table, never both for long
 * and never twice in the table. */
#include "table/redrive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/snapshot.h"
#include "iceberg/read.h"
#include "iceberg/scan.h"
#include "table/dlq.h"
#include "util/diag.h"

#define REDRIVE_KEY "floe.redrive-id"

/* ---- one pass over the DLQ ---------------------------------------------- */

typedef struct pair {
    int32_t partition;
    int64_t offset;
} pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    if (x->partition != y->partition) return x->partition < y->partition ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

typedef struct pass {
    floe_ttable_t *t;
    floe_tsink_t main, dlq; /* the moved rows, the kept ones */
    floe_conv_t *conv;      /* into main.rows */
    const pair_t *done;     /* reconcile: rows the main table holds already */
    size_t ndone;
    /* per file */
    uint8_t *moved; /* per row: 1 moved */
    char **why;     /* per kept row: a new reason, or NULL */
    size_t cap;
    size_t file_moved;
    floe_redrive_result_t *res;
} pass_t;

static int grow(pass_t *ps, size_t index, floe_err_t *err)
{
    if (index < ps->cap) return 0;
    size_t cap = ps->cap ? ps->cap * 2 : 1024;
    while (cap <= index) cap *= 2;
    uint8_t *m = realloc(ps->moved, cap);
    if (!m) return floe_err_oom(err);
    ps->moved = m;
    char **w = realloc(ps->why, cap * sizeof *w);
    if (!w) return floe_err_oom(err);
    memset(w + ps->cap, 0, (cap - ps->cap) * sizeof *w);
    ps->why = w;
    ps->cap = cap;
    return 0;
}

/* Hand a sink that holds a drain step to its files. */
static int drain_due(pass_t *ps, floe_err_t *err)
{
    return floe_tsink_drain_due(&ps->main, err) < 0 || floe_tsink_drain_due(&ps->dlq, err) < 0 ? -1
                                                                                               : 0;
}

/* First look at a row: does it move? */
static int decide(void *ctx, const floe_tdlq_entry_t *r, size_t index, floe_err_t *err)
{
    pass_t *ps = ctx;
    if (grow(ps, index, err) < 0) return -1;
    ps->moved[index] = 0;
    ps->why[index] = NULL;
    if (ps->done) { /* finishing an interrupted re-drive */
        pair_t key = {r->partition, r->msg.offset};
        ps->moved[index] = bsearch(&key, ps->done, ps->ndone, sizeof key, cmp_pair) != NULL;
        ps->file_moved += ps->moved[index];
        return 0;
    }
    ps->res->examined++;
    if (r->stage == FLOE_STAGE_DECODE || r->stage == FLOE_STAGE_RETENTION) {
        ps->res->undecodable++; /* a batch's bytes or a gap, not a record: stays */
        return 0;
    }
    uint64_t shape = floe_rows_shape_version(ps->main.rows);
    floe_conv_stage_t stage;
    floe_err_t e;
    /* a long may widen here only as the pipeline lets it */
    floe_tsink_pin(&ps->main, ps->t->cfg.json_widen_max_bytes);
    if (floe_conv_record(ps->conv, r->partition, &r->msg, &stage, &e) < 0) {
        ps->res->still_invalid++;
        if (!(ps->why[index] = strdup(e.msg))) return floe_err_oom(err);
        return 0;
    }
    ps->moved[index] = 1;
    ps->file_moved++;
    ps->res->moved++;
    if (floe_rows_shape_version(ps->main.rows) != shape &&
        floe_tsink_merge_schema(&ps->main, err) < 0)
        return -1;
    return drain_due(ps, err);
}

/* Second look, in a file that loses rows: the kept ones go to the new
 * file, with today's reason when they were tried again. */
static int keep(void *ctx, const floe_tdlq_entry_t *r, size_t index, floe_err_t *err)
{
    pass_t *ps = ctx;
    if (ps->moved[index]) return 0;
    char *why = ps->why[index];
    char *old = NULL;
    if (!why) {
        if (!(old = malloc(r->reason.len + 1))) return floe_err_oom(err);
        memcpy(old, r->reason.ptr, r->reason.len);
        old[r->reason.len] = '\0';
    }
    int rc = floe_tdlq_row(ps->dlq.rows, r->partition, &r->msg, r->stage, why ? why : old, err);
    free(old);
    if (rc < 0) return -1;
    return drain_due(ps, err);
}

/* Walk every live DLQ file: rows that move leave it (the file is listed
 * in *removes, its kept rows written anew).  Returns 0 or -1. */
static int dlq_pass(pass_t *ps, char ***removes, size_t *nremoves, floe_err_t *err)
{
    floe_ttable_t *t = ps->t;
    floe_fileio_t *io = floe_ice_catalog_io(t->catalog);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t->dlq.ice);
    floe_ice_scan_t *scan = NULL;
    if (floe_ice_scan_plan(io, md, -1, NULL, 0, &scan, err) < 0) return -1;
    floe_buf_t data = FLOE_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < floe_ice_scan_ntasks(scan); i++) {
        const char *path = floe_ice_scan_task(scan, i)->file->path;
        floe_pq_reader_t *rd = floe_ice_parquet_open(io, path, &data, err);
        if (!rd) {
            rc = -1;
            break;
        }
        ps->file_moved = 0;
        rc = floe_tdlq_each(rd, t->dlq.work, path, decide, ps, err);
        if (rc == 0 && ps->file_moved) {
            char **nr = realloc(*removes, (*nremoves + 1) * sizeof *nr);
            if (!nr || !(nr[*nremoves] = strdup(path))) {
                if (nr) *removes = nr;
                rc = floe_err_oom(err);
            } else {
                *removes = nr;
                (*nremoves)++;
                ps->res->files_rewritten++;
                rc = floe_tdlq_each(rd, t->dlq.work, path, keep, ps, err);
            }
        }
        if (rc == 0 && (i + 1) % 16 == 0)
            FLOE_INFO("table %s.%s: re-drive read %zu of %zu dead-letter files (%llu rows moved)",
                      t->main.ns, t->main.name, i + 1, floe_ice_scan_ntasks(scan),
                      (unsigned long long)ps->res->moved);
        /* reasons of rows that stay in an untouched file are not kept */
        for (size_t k = 0; k < ps->cap; k++) {
            free(ps->why[k]);
            ps->why[k] = NULL;
        }
        floe_pq_reader_free(rd);
    }
    floe_buf_free(&data);
    floe_ice_scan_free(scan);
    return rc;
}

/* ---- commits ------------------------------------------------------------ */

/* Replace the DLQ files removes[] by the pending files (their kept rows). */
static int commit_dlq(floe_ttable_t *t, char *const *removes, size_t nremoves, const char *ids,
                      floe_err_t *err)
{
    floe_tout_t *o = &t->dlq;
    floe_ice_catalog_t *cat = t->catalog;
    floe_ice_commit_t *c = floe_ice_commit_new(cat, o->ns, o->name, FLOE_ICE_OP_REWRITE, err);
    int rc = c ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < nremoves; i++)
        rc = floe_ice_commit_remove(c, removes[i], err);
    for (size_t i = 0; rc == 0 && i < o->npending; i++)
        rc = floe_ice_commit_add(c, &o->pending[i], err);
    if (rc == 0) rc = floe_ice_commit_set_summary(c, REDRIVE_KEY, ids, err);
    if (rc == 0) rc = floe_ice_commit_set_summary(c, "floe.topic", t->topic, err);
    if (rc == 0 && floe_ice_commit_run(c, NULL, err) < 0) rc = -1;
    floe_ice_commit_free(c);
    floe_tout_drop_pending(
        o, rc == 0 || err->code == FLOE_EUNKNOWN ? FLOE_TFILES_KEEP : FLOE_TFILES_DELETE,
        floe_ice_catalog_io(cat));
    floe_ice_table_t *nt = NULL;
    floe_err_t le;
    if (floe_ice_catalog_load_table(cat, o->ns, o->name, &nt, &le) == 0) floe_tout_reloaded(o, nt);
    return rc;
}

/* ---- finishing interrupted re-drives ----------------------------------- */

static bool chain_has_id(const floe_ice_metadata_t *md, const char *id)
{
    for (const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md); s;
         s = s->parent_id >= 0 ? floe_ice_metadata_snapshot(md, s->parent_id) : NULL) {
        const char *v = floe_ice_props_get(&s->summary, REDRIVE_KEY);
        /* one id, or several comma-separated when a finish took up more */
        for (const char *p = v ? strstr(v, id) : NULL; p; p = strstr(p + 1, id)) {
            size_t n = strlen(id);
            if ((p == v || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
        }
    }
    return false;
}

/* (partition, offset) of every row the main snapshot s added. */
static int added_pairs(floe_ttable_t *t, const floe_ice_snapshot_t *s, pair_t **pairs, size_t *n,
                       size_t *cap, floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(t->catalog);
    const floe_ice_field_t *fp = floe_ice_schema_find_name(t->main.work, "_kafka.partition");
    const floe_ice_field_t *fo = floe_ice_schema_find_name(t->main.work, "_kafka.offset");
    if (!fp || !fo)
        return floe_err_set(err, FLOE_ECORRUPT, "table %s.%s has no _kafka fields", t->main.ns,
                            t->main.name);
    floe_ice_snapshot_content_t sc;
    if (floe_ice_snapshot_content_read(io, s, &sc, err) < 0) return -1;
    floe_buf_t data = FLOE_BUF_INIT;
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < sc.nmanifests; m++) {
        for (size_t k = 0; rc == 0 && k < sc.nentries[m]; k++) {
            const floe_ice_manifest_entry_t *e = &sc.entries[m][k];
            if (e->status != FLOE_ICE_ADDED || e->snapshot_id != s->snapshot_id ||
                e->file.content != FLOE_ICE_CONTENT_DATA)
                continue;
            floe_pq_reader_t *rd = floe_ice_parquet_open(io, e->file.path, &data, err);
            if (!rd) {
                rc = -1;
                break;
            }
            const floe_pq_schema_t *ps = floe_pq_reader_schema(rd);
            int np = floe_pq_schema_find_field(ps, fp->id),
                no = floe_pq_schema_find_field(ps, fo->id);
            int cp = np >= 0 ? floe_pq_schema_column_of(ps, np) : -1;
            int co = no >= 0 ? floe_pq_schema_column_of(ps, no) : -1;
            if (cp < 0 || co < 0)
                rc = floe_err_set(err, FLOE_ECORRUPT, "data file %s: no _kafka.partition/offset",
                                  e->file.path);
            for (int rg = 0; rc == 0 && rg < floe_pq_reader_num_row_groups(rd); rg++) {
                floe_pq_column_t a, b;
                if (floe_pq_read_column(rd, rg, cp, &a, err) < 0) {
                    rc = -1;
                    break;
                }
                if (floe_pq_read_column(rd, rg, co, &b, err) < 0) {
                    floe_pq_column_free(&a);
                    rc = -1;
                    break;
                }
                if (a.n_values != b.n_values)
                    rc = floe_err_set(err, FLOE_ECORRUPT, "data file %s: _kafka columns disagree",
                                      e->file.path);
                for (size_t j = 0; rc == 0 && j < a.n_values; j++) {
                    if (*n == *cap) {
                        size_t nc = *cap ? *cap * 2 : 1024;
                        pair_t *np2 = realloc(*pairs, nc * sizeof *np2);
                        if (!np2) {
                            rc = floe_err_oom(err);
                            break;
                        }
                        *pairs = np2;
                        *cap = nc;
                    }
                    (*pairs)[(*n)++] =
                        (pair_t){((const int32_t *)a.values)[j], ((const int64_t *)b.values)[j]};
                }
                floe_pq_column_free(&a);
                floe_pq_column_free(&b);
            }
            floe_pq_reader_free(rd);
        }
    }
    floe_buf_free(&data);
    floe_ice_snapshot_content_free(&sc);
    return rc;
}

static void free_removes(char **removes, size_t n)
{
    for (size_t i = 0; i < n; i++) free(removes[i]);
    free(removes);
}

/* The pass's sinks and converter, as the partition pipeline has them
 * (file names say partition 0), the main buffer seeded with the table's
 * columns. */
static int pass_init(pass_t *ps, floe_ttable_t *t, floe_err_t *err)
{
    if (floe_tsink_init(&ps->main, &t->files, &t->main, 0, FLOE_TSINK_PARTITIONED, err) < 0 ||
        floe_tsink_init(&ps->dlq, &t->files, &t->dlq, 0, 0, err) < 0 ||
        !(ps->conv = floe_conv_new(ps->main.rows, t->cfg.value_conv, t->cfg.key_conv, err)) ||
        floe_tdlq_shape(ps->dlq.rows, err) < 0 || floe_tsink_seed(&ps->main, err) < 0)
        return -1;
    floe_conv_set_schemas(ps->conv, &t->schemas);
    if (floe_conv_set_subjects(ps->conv, t->cfg.value_subject,
                               (int32_t)strtol(t->cfg.value_version, NULL, 10), t->cfg.key_subject,
                               err) < 0)
        return -1;
    floe_xform_t xf;
    floe_table_config_xform(&t->cfg, &xf);
    floe_conv_set_transforms(ps->conv, &xf);
    return 0;
}

static int pass_seal(pass_t *ps, floe_err_t *err)
{
    return floe_tsink_seal(&ps->main, err) < 0 || floe_tsink_seal(&ps->dlq, err) < 0 ? -1 : 0;
}

static void pass_free(pass_t *ps)
{
    for (size_t k = 0; k < ps->cap; k++) free(ps->why[k]);
    free(ps->why);
    free(ps->moved);
    floe_conv_free(ps->conv);
    floe_tsink_clear(&ps->main);
    floe_tsink_clear(&ps->dlq);
}

int floe_ttable_redrive_finish(floe_ttable_t *t, size_t *finished, floe_err_t *err)
{
    *finished = 0;
    const floe_ice_metadata_t *mm = floe_ice_table_metadata(t->main.ice);
    const floe_ice_metadata_t *dm = floe_ice_table_metadata(t->dlq.ice);
    pair_t *pairs = NULL;
    size_t n = 0, cap = 0;
    floe_buf_t ids = FLOE_BUF_INIT;
    int rc = 0;
    for (const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(mm); rc == 0 && s;
         s = s->parent_id >= 0 ? floe_ice_metadata_snapshot(mm, s->parent_id) : NULL) {
        const char *id = floe_ice_props_get(&s->summary, REDRIVE_KEY);
        if (!id || chain_has_id(dm, id)) continue;
        FLOE_WARN("table %s.%s: re-drive %s put rows in the table but did not take them out of "
                  "%s; finishing it",
                  t->main.ns, t->main.name, id, t->dlq.name);
        if (floe_buf_printf(&ids, "%s%s", ids.len ? "," : "", id) < 0) rc = floe_err_oom(err);
        else
            rc = added_pairs(t, s, &pairs, &n, &cap, err);
    }
    if (rc == 0 && n) {
        qsort(pairs, n, sizeof *pairs, cmp_pair);
        floe_redrive_result_t scratch = {0};
        pass_t ps = {.t = t, .done = pairs, .ndone = n, .res = &scratch};
        char **removes = NULL;
        size_t nremoves = 0;
        if (pass_init(&ps, t, err) < 0 || dlq_pass(&ps, &removes, &nremoves, err) < 0 ||
            pass_seal(&ps, err) < 0 ||
            (nremoves && commit_dlq(t, removes, nremoves, floe_buf_cstr(&ids), err) < 0))
            rc = -1;
        else
            *finished = n;
        if (rc < 0)
            floe_tout_drop_pending(
                &t->dlq, err->code == FLOE_EUNKNOWN ? FLOE_TFILES_KEEP : FLOE_TFILES_DELETE,
                floe_ice_catalog_io(t->catalog));
        free_removes(removes, nremoves);
        pass_free(&ps);
    }
    free(pairs);
    floe_buf_free(&ids);
    return rc;
}

/* ---- the re-drive ------------------------------------------------------- */

int floe_ttable_redrive(floe_ttable_t *t, floe_redrive_result_t *res, floe_err_t *err)
{
    memset(res, 0, sizeof *res);
    snprintf(res->table, sizeof res->table, "%s.%s", t->main.ns, t->main.name);
    if (t->paused)
        return floe_err_set(err, FLOE_EINVAL, "table %s is paused (%s): resolve that first",
                            res->table, t->reason);
    if (t->cfg.write_mode == FLOE_WRITE_UPSERT) /* its rows would bypass the key logic */
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "table %s is an upsert table: re-drive into it is not supported yet",
                            res->table);
    if (t->nwide || t->fenced) /* its commits wait for the maintenance thread */
        return floe_err_set(err, FLOE_EINVAL,
                            "table %s widens a column to double now: re-drive once that is done",
                            res->table);
    /* everything read so far into the tables first: then the only pending
     * files are the re-drive's own */
    if (floe_ttable_commit(t, err) < 0) return -1;
    size_t finished;
    if (floe_ttable_redrive_finish(t, &finished, err) < 0) return -1;
    res->finished_earlier = finished;
    floe_ice_uuid4(res->redrive_id);
    pass_t ps = {.t = t, .res = res};
    char **removes = NULL;
    size_t nremoves = 0;
    int64_t *next = NULL;
    int rc = -1;
    if (pass_init(&ps, t, err) < 0 || dlq_pass(&ps, &removes, &nremoves, err) < 0) goto fail;
    if (!res->moved) { /* nothing converts yet: the DLQ stays as it is */
        floe_tsink_abort(&ps.dlq);
        rc = 0;
        goto out;
    }
    if (pass_seal(&ps, err) < 0) goto fail;
    if (!(next = malloc((size_t)t->nparts * sizeof *next))) {
        floe_err_oom(err);
        goto fail;
    }
    memcpy(next, t->main.committed, (size_t)t->nparts * sizeof *next);
    /* the DLQ's new files wait (pending) while the main table commits */
    if (floe_ttable_commit_spec(t, err) < 0 ||
        floe_tout_commit(t, &t->main, next, 0, REDRIVE_KEY, res->redrive_id, err) < 0)
        goto fail;
    FLOE_INFO("table %s: re-drive %s moved %llu dead-letter rows into the table", res->table,
              res->redrive_id, (unsigned long long)res->moved);
    if (commit_dlq(t, removes, nremoves, res->redrive_id, err) < 0) {
        floe_err_wrap(err, "rows moved; the next re-drive or restart takes them out of %s",
                      t->dlq.name);
        goto out;
    }
    rc = 0;
    goto out;
fail:
    FLOE_ERROR("table %s: re-drive failed: %s", res->table, err->msg);
    floe_ttable_reset(t, err->code == FLOE_EUNKNOWN ? FLOE_TFILES_KEEP : FLOE_TFILES_DELETE);
out:
    free(next);
    free_removes(removes, nremoves);
    pass_free(&ps);
    return rc;
}
