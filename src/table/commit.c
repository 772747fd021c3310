/* Opening a table topic's tables and committing to them (commit.h). */
#include "table/commit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/maintain.h"
#include "iceberg/snapshot.h"
#include "table/maint.h"
#include "table/offsets.h"
#include "table/upsert_write.h"
#include "table/widen.h"
#include "util/clock.h"
#include "util/diag.h"

/* ---- open ----------------------------------------------------------------- */

/* The table properties that keep a table bounded while floe commits to
 * it every few seconds (design.md, invariant 9): Iceberg's own names, so
 * every engine that writes the table honours them too. */
static const char *const maint_props[][2] = {
    {"write.metadata.delete-after-commit.enabled", "true"},
    {"write.metadata.previous-versions-max", "20"},
    {"commit.manifest-merge.enabled", "true"},
    /* snapshots stay an hour (readers planning on one, time travel) but
     * at least ten; a longer age costs metadata each commit carries */
    {"history.expire.max-snapshot-age-ms", "3600000"},
    {"history.expire.min-snapshots-to-keep", "10"},
};
#define NMAINT_PROPS (sizeof maint_props / sizeof maint_props[0])
/* Set once floe gave a table those properties: a user may change or
 * remove them afterwards, floe does not put them back. */
#define MAINT_PROPS_KEY "floe.maintenance-properties"

/* An existing table without the maintenance properties gets those it
 * lacks, once (a set-properties commit); a user's values stay.  Failures
 * are logged: the table works without them. */
static void add_maint_props(floe_ttable_t *t, floe_tout_t *o)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    if (floe_ice_props_get(&md->properties, MAINT_PROPS_KEY)) return;
    floe_ice_update_t up = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_err_t err;
    int rc = floe_ice_props_set(&up.props, MAINT_PROPS_KEY, "1");
    for (size_t i = 0; rc == 0 && i < NMAINT_PROPS; i++)
        if (!floe_ice_props_get(&md->properties, maint_props[i][0]))
            rc = floe_ice_props_set(&up.props, maint_props[i][0], maint_props[i][1]);
    floe_ice_req_t req = {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID};
    memcpy(req.uuid, md->table_uuid, sizeof req.uuid);
    floe_ice_table_t *nt = NULL;
    if (rc < 0) floe_err_oom(&err);
    else
        rc = floe_ice_catalog_commit(t->catalog, o->ns, o->name, &req, 1, &up, 1, &nt, &err);
    floe_ice_update_clear(&up);
    if (rc < 0) {
        FLOE_WARN("table %s.%s: cannot set the maintenance properties (trying at the next "
                  "start): %s",
                  o->ns, o->name, err.msg);
        return;
    }
    floe_tout_reloaded(o, nt);
    FLOE_INFO("table %s.%s: maintenance properties set (metadata cleanup, manifest merging, "
              "snapshot expiry); values a user had set are kept",
              o->ns, o->name);
}

/* Files under o's table that no snapshot references are deleted at once:
 * at open, the engine is the only writer of the table's files and the
 * maintenance thread does not work on it yet, so they are what an earlier
 * run wrote and never committed.  Files of this process's commits whose
 * outcome stayed unknown are kept.  A table other writers share (floe
 * sink workers) keeps unreferenced files younger than
 * table.orphan.min.age: they may be another worker's, not yet committed. */
static int remove_orphans(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    char **doubt = NULL;
    size_t nd = 0;
    if (t->maint && floe_tmaint_in_doubt(t->maint, o->ns, o->name, &doubt, &nd, err) < 0) return -1;
    floe_ice_orphan_opts_t oo = {.min_age_ms = t->shared ? t->cfg.orphan_min_age_ms : 0,
                                 .in_doubt = (const char *const *)doubt,
                                 .nin_doubt = nd};
    floe_ice_orphan_result_t r;
    int rc = floe_tmaint_remove_orphans(t->catalog, o->ns, o->name, &oo, &r, err);
    if (rc == 0 && r.files_deleted)
        FLOE_INFO("table %s.%s: deleted %zu files no snapshot references (%.2f MB)", o->ns, o->name,
                  r.files_deleted, (double)r.bytes_deleted / 1e6);
    floe_ice_orphan_result_clear(&r);
    for (size_t i = 0; i < nd; i++) free(doubt[i]);
    free(doubt);
    return rc;
}

/* Load o's table, or create it with the columns of initial (an empty
 * buffer of the right shape) and the maintenance properties, and take it
 * as o's state. */
static int open_out(floe_ttable_t *t, floe_tout_t *o, floe_rows_t *initial, floe_err_t *err)
{
    floe_ice_catalog_t *cat = t->catalog;
    floe_ice_table_t *ice = NULL;
    if (floe_ice_catalog_load_table(cat, o->ns, o->name, &ice, err) < 0) {
        if (err->code != FLOE_ENOENT) return -1;
        floe_ice_schema_t *s = floe_ice_schema_new(0, floe_ice_type_struct());
        if (!s) return floe_err_oom(err);
        int32_t last = 0;
        bool changed;
        floe_ice_props_t props = {0};
        int rc = floe_tschema_merge(initial, s, &last, true, &changed, err);
        if (rc == 0 && (floe_ice_props_set(&props, "floe.topic", t->topic) < 0 ||
                        floe_ice_props_set(&props, "write.parquet.compression-codec", "zstd") < 0 ||
                        floe_ice_props_set(&props, MAINT_PROPS_KEY, "1") < 0))
            rc = floe_err_oom(err);
        for (size_t i = 0; rc == 0 && i < NMAINT_PROPS; i++)
            if (floe_ice_props_set(&props, maint_props[i][0], maint_props[i][1]) < 0)
                rc = floe_err_oom(err);
        if (rc == 0)
            rc = floe_ice_catalog_create_table(cat, o->ns, o->name, s, NULL, NULL, &props, &ice,
                                               err);
        floe_ice_props_clear(&props);
        floe_ice_schema_free(s);
        if (rc < 0) {
            if (err->code != FLOE_EEXIST) return -1;
            if (floe_ice_catalog_load_table(cat, o->ns, o->name, &ice, err) < 0) return -1;
        } else {
            FLOE_INFO("table %s.%s created for topic %s", o->ns, o->name, t->topic);
        }
    }
    if (floe_tout_adopt(o, ice, t->nparts, err) < 0) return -1;
    add_maint_props(t, o);
    return remove_orphans(t, o, err);
}

int floe_ttable_open(floe_ttable_t *t, floe_err_t *err)
{
    char dlq[300];
    snprintf(dlq, sizeof dlq, "%s_dlq", t->cfg.name);
    floe_tout_init(&t->main, t->cfg.namespace_, t->cfg.name);
    floe_tout_init(&t->dlq, t->cfg.namespace_, dlq);
    if (open_out(t, &t->main, t->parts[0]->main.rows, err) < 0 ||
        open_out(t, &t->dlq, t->parts[0]->dlq.rows, err) < 0)
        return -1;
    for (int32_t i = 0; i < t->nparts; i++) floe_tpart_restart(t->parts[i]);
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_offsets_encode(t->main.committed, (size_t)t->nparts, &b) < 0 || !floe_buf_cstr(&b))
        floe_buf_reset(&b);
    FLOE_INFO("table %s.%s: topic %s, %d partitions, resuming at %s", t->main.ns, t->main.name,
              t->topic, (int)t->nparts, b.len ? floe_buf_cstr(&b) : "{}");
    floe_buf_free(&b);
    floe_ttable_report_committed(t); /* the log may now let go of what is below */
    return 0;
}

void floe_ttable_report_committed(floe_ttable_t *t)
{
    floe_tsource_t *src = t->src;
    if (src->ops->committed)
        for (int32_t i = 0; i < t->nparts; i++)
            src->ops->committed(src, t->topic, i, t->main.committed[i]);
}

/* ---- commit --------------------------------------------------------------- */

typedef struct vctx {
    const floe_tout_t *o;
    const char *commit_id;
    int32_t nparts;
    const int64_t *next;  /* the offsets this commit reaches */
    floe_ice_commit_t *c; /* gets the floe.offsets of each attempt */
    /* a dead-letter commit: the main table's state, which it checks too */
    const floe_tout_t *main;
    floe_ice_catalog_t *catalog;
    /* the snapshot the table must still be at (an upsert's key index
     * reflects it); -2: any */
    int64_t require_snapshot;
} vctx_t;

/* Where reading a partition starts from committed offset c: -1 (none
 * yet) starts at 0. */
static int64_t start_of(int64_t c)
{
    return c >= 0 ? c : 0;
}

/* Whether this writer read partition i since its last commit: its next
 * offset is past where its data starts. */
static bool moved(const floe_tout_t *o, const int64_t *next, int32_t i)
{
    return next[i] != start_of(o->committed[i]) && next[i] != o->committed[i];
}

/* A partition this commit covers that another writer committed since, in
 * o's table as md (borrowed) has it: FLOE_ECONFLICT. */
static int check_starts(const vctx_t *v, const floe_tout_t *o, const floe_ice_metadata_t *md,
                        int64_t *now, floe_err_t *err)
{
    if (floe_offsets_read(md, now, (size_t)v->nparts, err) < 0) return -1;
    for (int32_t i = 0; i < v->nparts; i++)
        if (moved(o, v->next, i) && start_of(now[i]) != start_of(o->committed[i]))
            return floe_err_set(err, FLOE_ECONFLICT,
                                "%s.%s: partition %d offsets moved to %lld (this commit's data "
                                "starts at %lld): another writer committed the partition",
                                o->ns, o->name, (int)i, (long long)now[i],
                                (long long)o->committed[i]);
    return 0;
}

/* A dead-letter commit goes first, so it checks the main table as well:
 * a writer that lost a partition commits none of its dead letters once
 * the new owner committed rows of it, even rows that had none. */
static int check_main(const vctx_t *v, int64_t *now, floe_err_t *err)
{
    floe_ice_table_t *mt;
    if (floe_ice_catalog_load_table(v->catalog, v->main->ns, v->main->name, &mt, err) < 0)
        return -1;
    int rc = check_starts(v, v->main, floe_ice_table_metadata(mt), now, err);
    floe_ice_table_free(mt);
    return rc;
}

/* Before each attempt: skip when our commit already landed (an earlier
 * attempt whose outcome was unknown); refuse when a partition this commit
 * covers is no longer where its data starts (another writer committed it
 * since: a floe sink worker that lost the partition in a rebalance, whose
 * commit must fail and whose files are dropped).  The offsets of the
 * partitions it does not cover are the table's own: several writers, each
 * with its partitions, commit to one table without undoing each other. */
static int validate(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    vctx_t *v = ctx;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(cur);
    const floe_ice_snapshot_t *s = floe_offsets_snapshot(md);
    const char *id = s ? floe_ice_props_get(&s->summary, FLOE_COMMIT_ID_KEY) : NULL;
    if (id && !strcmp(id, v->commit_id)) return 1;
    if (v->require_snapshot != -2 && md->current_snapshot_id != v->require_snapshot)
        return floe_err_set(err, FLOE_ECONFLICT,
                            "%s.%s: snapshot %lld landed after the key index's %lld: the index "
                            "is rebuilt and the records read again",
                            v->o->ns, v->o->name, (long long)md->current_snapshot_id,
                            (long long)v->require_snapshot);
    int64_t *now = malloc((size_t)(v->nparts > 0 ? v->nparts : 1) * sizeof *now);
    if (!now) return floe_err_oom(err);
    int rc = v->main ? check_main(v, now, err) : 0;
    if (rc == 0) rc = check_starts(v, v->o, md, now, err);
    for (int32_t i = 0; rc == 0 && i < v->nparts; i++)
        if (moved(v->o, v->next, i)) now[i] = v->next[i]; /* others: the table's value */
    floe_buf_t offs = FLOE_BUF_INIT;
    if (rc == 0 &&
        (floe_offsets_encode(now, (size_t)v->nparts, &offs) < 0 || !floe_buf_cstr(&offs)))
        rc = floe_err_oom(err);
    if (rc == 0) rc = floe_ice_commit_set_summary(v->c, FLOE_OFFSETS_KEY, (char *)offs.data, err);
    floe_buf_free(&offs);
    free(now);
    return rc;
}

static int commit_schema(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    floe_ice_req_t reqs[2] = {
        {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID},
        {.kind = FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID, .value = md->current_schema_id}};
    memcpy(reqs[0].uuid, md->table_uuid, sizeof reqs[0].uuid);
    int32_t next_id = 0;
    for (size_t i = 0; i < md->nschemas; i++)
        if (md->schemas[i]->schema_id >= next_id) next_id = md->schemas[i]->schema_id + 1;
    floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SCHEMA},
                                {.kind = FLOE_ICE_UP_SET_CURRENT_SCHEMA, .id = -1}};
    ups[0].schema = floe_ice_schema_dup(o->work);
    if (!ups[0].schema) return floe_err_oom(err);
    ups[0].schema->schema_id = next_id;
    floe_ice_table_t *nt = NULL;
    int rc = floe_ice_catalog_commit(t->catalog, o->ns, o->name, reqs, 2, ups, 2, &nt, err);
    floe_ice_update_clear(&ups[0]);
    if (rc < 0) return -1;
    floe_tout_schema_committed(o, nt);
    FLOE_INFO("table %s.%s: schema %d committed (%d top-level columns)", o->ns, o->name,
              (int)next_id, (int)o->work->root->nfields);
    return 0;
}

static int commit_spec(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    floe_ice_req_t reqs[2] = {
        {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID},
        {.kind = FLOE_ICE_REQ_ASSERT_DEFAULT_SPEC_ID, .value = md->default_spec_id}};
    memcpy(reqs[0].uuid, md->table_uuid, sizeof reqs[0].uuid);
    floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SPEC},
                                {.kind = FLOE_ICE_UP_SET_DEFAULT_SPEC, .id = -1}};
    size_t nups = 2;
    bool exists = false;
    for (size_t i = 0; i < md->nspecs; i++) exists |= md->specs[i]->spec_id == o->spec->spec_id;
    if (exists) { /* back to an earlier spec: only make it the default */
        ups[0] = ups[1];
        ups[0].id = o->spec->spec_id;
        nups = 1;
    } else if (!(ups[0].spec = floe_ice_spec_dup(o->spec))) {
        return floe_err_oom(err);
    }
    floe_ice_table_t *nt = NULL;
    int rc = floe_ice_catalog_commit(t->catalog, o->ns, o->name, reqs, 2, ups, nups, &nt, err);
    if (!exists) floe_ice_update_clear(&ups[0]);
    if (rc < 0) return -1;
    floe_tout_spec_committed(o, nt);
    FLOE_INFO("table %s.%s: partition spec %d committed", o->ns, o->name, (int)o->spec->spec_id);
    return 0;
}

/* Commit o's pending files with offsets next[] (one per partition), and
 * the grown schema they need.  flags: floe_tcommit_flags_t.  Returns 1
 * when a snapshot was made (or found made), 0 when there was nothing to
 * commit, -1 on failure. */
static int commit_out(floe_ttable_t *t, floe_tout_t *o, const int64_t *next, unsigned flags,
                      const char *extra_key, const char *extra_value, floe_err_t *err)
{
    /* an upsert's delete files join the pending files */
    int64_t require_snapshot;
    if (floe_tupsert_prepare(t, o, &require_snapshot, err) < 0) return -1;
    /* a grown schema goes in the same commit as the files that need it */
    bool with_schema = o->schema_dirty;
    bool any_moved = false;
    size_t npending = o->npending;
    bool deletes = false;
    for (size_t i = 0; i < npending; i++) deletes |= o->pending[i].content != FLOE_ICE_CONTENT_DATA;
    for (int32_t i = 0; i < t->nparts; i++)
        if (next[i] != o->committed[i]) any_moved = true;
    if (!npending && !((flags & FLOE_TCOMMIT_OFFSETS) && any_moved)) return 0;
    floe_ice_catalog_t *cat = t->catalog;
    char commit_id[37];
    floe_ice_uuid4(commit_id);
    floe_buf_t offs = FLOE_BUF_INIT;
    int rc = -1;
    floe_ice_commit_t *c = floe_ice_commit_new(
        cat, o->ns, o->name, deletes ? FLOE_ICE_OP_ROW_DELTA : FLOE_ICE_OP_APPEND, err);
    if (!c) goto out;
    if (floe_offsets_encode(next, (size_t)t->nparts, &offs) < 0 || !floe_buf_cstr(&offs)) {
        floe_err_oom(err);
        goto out;
    }
    for (size_t i = 0; i < npending; i++)
        if (floe_ice_commit_add(c, &o->pending[i], err) < 0) goto out;
    if (with_schema && floe_ice_commit_set_schema(c, o->work, err) < 0) goto out;
    if (floe_ice_commit_set_summary(c, FLOE_OFFSETS_KEY, (char *)offs.data, err) < 0 ||
        floe_ice_commit_set_summary(c, FLOE_COMMIT_ID_KEY, commit_id, err) < 0 ||
        floe_ice_commit_set_summary(c, "floe.topic", t->topic, err) < 0 ||
        (extra_key && floe_ice_commit_set_summary(c, extra_key, extra_value, err) < 0))
        goto out;
    vctx_t v = {o,   commit_id,       t->nparts, next, c, o == &t->dlq ? &t->main : NULL,
                cat, require_snapshot};
    floe_ice_commit_set_validate(c, validate, &v);
    floe_ice_commit_set_max_attempts(c, 10);
    int64_t snap = -1;
    int r = floe_ice_commit_run(c, &snap, err);
    if (r < 0) goto out;
    if (require_snapshot != -2)
        floe_tupsert_committed(t, floe_ice_table_metadata(o->ice)->table_uuid, r == 0 ? snap : -1);
    /* committed now (r == 0) or found committed by an earlier attempt (1) */
    floe_tout_snapshot_committed(o, next, t->nparts,
                                 FLOE_TSNAP_PENDING | (with_schema ? FLOE_TSNAP_SCHEMA : 0));
    floe_tmaint_table_t *h = o == &t->main ? t->maint_main : t->maint_dlq;
    if (h) floe_tmaint_note_commit(h);
    if (with_schema) {
        FLOE_INFO("table %s.%s: schema with %d top-level columns committed with the data", o->ns,
                  o->name, (int)o->work->root->nfields);
    }
    floe_ice_table_t *nt = NULL;
    floe_err_t le;
    if (floe_ice_catalog_load_table(cat, o->ns, o->name, &nt, &le) == 0) floe_tout_reloaded(o, nt);
    FLOE_DEBUG("table %s.%s: snapshot %lld, offsets %s", o->ns, o->name, (long long)snap,
               (char *)offs.data);
    rc = 1;
out:
    if (rc < 0 && require_snapshot != -2) floe_tupsert_failed(t);
    floe_ice_commit_free(c);
    floe_buf_free(&offs);
    return rc;
}

/* Rewrite the pending files holding a widened column (they go in with
 * the schema that needs them). */
static int widen(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    return floe_twiden_prepare(o, floe_ice_catalog_io(t->catalog), t->writer_id,
                               t->files.pq_scratch, err);
}

int floe_tout_commit(floe_ttable_t *t, floe_tout_t *o, const int64_t *next, unsigned flags,
                     const char *extra_key, const char *extra_value, floe_err_t *err)
{
    if (widen(t, o, err) < 0) return -1;
    return commit_out(t, o, next, flags & FLOE_TCOMMIT_OFFSETS, extra_key, extra_value, err);
}

/* After a failed write or commit: back to the last committed state.  Open
 * files are dropped, buffers emptied, pending files deleted (kept when the
 * outcome is unknown: the next open's orphan sweep decides), and every
 * partition reads again from the committed offsets. */
void floe_ttable_reset(floe_ttable_t *t, floe_tfiles_t fate)
{
    floe_fileio_t *io = floe_ice_catalog_io(t->catalog);
    floe_tout_t *outs[2] = {&t->main, &t->dlq};
    for (int k = 0; k < 2; k++) {
        /* kept files may be in the table: orphan removal leaves them alone */
        for (size_t i = 0; fate == FLOE_TFILES_KEEP && t->maint && i < outs[k]->npending; i++)
            floe_tmaint_in_doubt_add(t->maint, outs[k]->ns, outs[k]->name,
                                     outs[k]->pending[i].path);
        floe_tout_drop_pending(outs[k], fate, io);
        floe_ice_table_t *ice;
        floe_err_t e;
        if (floe_ice_catalog_load_table(t->catalog, outs[k]->ns, outs[k]->name, &ice, &e) == 0)
            floe_tout_adopt(outs[k], ice, t->nparts, &e);
    }
    for (int32_t i = 0; i < t->nparts; i++) floe_tpart_restart(t->parts[i]);
}

int floe_ttable_commit_spec(floe_ttable_t *t, floe_err_t *err)
{
    /* a new partition spec may name fields only the grown schema has: that
     * schema goes first then; otherwise it rides with the data */
    if (!t->main.spec_dirty) return 0;
    if (t->main.schema_dirty && commit_schema(t, &t->main, err) < 0) return -1;
    return commit_spec(t, &t->main, err);
}

int floe_ttable_commit(floe_ttable_t *t, floe_err_t *err)
{
    /* a widening commits its rewrite (ours would be of the old form), or
     * a maintenance commit that kept losing to ours goes first */
    if (t->fenced || t->maint_fenced) return 0;
    int64_t t0 = floe_mono_ms();
    int64_t *next = malloc((size_t)t->nparts * sizeof *next);
    if (!next) return floe_err_oom(err);
    for (int32_t i = 0; i < t->nparts; i++) {
        if (floe_tpart_seal(t->parts[i], err) < 0) goto fail;
        next[i] = t->parts[i]->next;
    }
    if (floe_ttable_commit_spec(t, err) < 0) goto fail;
    /* the DLQ first: a main snapshot at offset N implies every bad record
     * below N is in the DLQ table already */
    int d = floe_tout_commit(t, &t->dlq, next, 0, NULL, NULL, err);
    if (d < 0) goto fail;
    int m = floe_tout_commit(t, &t->main, next, FLOE_TCOMMIT_OFFSETS, NULL, NULL, err);
    if (m < 0) goto fail;
    if (m == 0 && d == 0) {
        free(next);
        return 0;
    }
    t->commits++;
    t->last_commit_ms = floe_wall_ms();
    for (int32_t i = 0; i < t->nparts; i++) {
        /* what was read is in the table now; what arrived since waits */
        floe_tpart_t *p = t->parts[i];
        p->pending_ts_ms = -1;
        p->behind_since_ms = p->log_end > t->main.committed[i] ? t->last_commit_ms : -1;
    }
    t->last_commit_latency_ms = floe_mono_ms() - t0;
    floe_ttable_report_committed(t);
    free(next);
    return 0;
fail:
    t->commit_failures++;
    FLOE_ERROR("table %s.%s: commit failed (%s): %s; re-reading from the committed offsets",
               t->main.ns, t->main.name, floe_code_name(err->code), err->msg);
    floe_ttable_reset(t, err->code == FLOE_EUNKNOWN ? FLOE_TFILES_KEEP : FLOE_TFILES_DELETE);
    free(next);
    return -1;
}
