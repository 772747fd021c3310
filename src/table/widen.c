/* Widening a committed long column to double.
 *
 * Iceberg cannot promote long to double in place, so the engine replaces
 * the field by a new optional double field (new id, same name, same place;
 * schema_map.c) and, at the next commit, rewrites every file that holds
 * the old field: the table's live data files and the pending files written
 * before the widening (widen_file.h transcodes one).  The rewritten files,
 * the removal of the old ones and the new schema go into one snapshot
 * (commit.c), so readers see the old table or the new one, never a mix. */
#include "table/widen.h"

#include <string.h>

#include "iceberg/scan.h"
#include "table/widen_file.h"
#include "util/clock.h"
#include "util/diag.h"

/* Whether file f may hold a widened field: its metrics say so, or it has
 * none (then only opening it tells). */
static bool may_hold(const floe_ice_data_file_t *f, const floe_twiden_t *w, size_t n)
{
    if (!f->nmetrics) return true;
    for (size_t i = 0; i < f->nmetrics; i++)
        if (floe_twiden_find(w, n, f->metrics[i].id)) return true;
    return false;
}

typedef struct progress {
    size_t files, candidates;
    int64_t bytes_in, bytes_out;
    int64_t t0, last_log;
} progress_t;

/* Rewrite `in` if it holds a widened field: 1 with *out, 0 when it holds
 * none, -1 with *err. */
static int rewrite_one(floe_tout_t *o, floe_fileio_t *io, const char *writer_id,
                       const floe_ice_data_file_t *in, floe_ice_data_file_t *out, progress_t *pg,
                       floe_err_t *err)
{
    char path[2400];
    if (floe_tout_rewrite_path(o, writer_id, in->path, path, sizeof path, err) < 0) return -1;
    int r = floe_twiden_file(io, in, path, o->widened, o->nwidened, o->schema_json, out, err);
    if (r < 0) {
        floe_err_wrap(err, "table %s.%s: rewriting %s for a widened column", o->ns, o->name,
                      in->path);
        return -1;
    }
    if (r == 0) return 0;
    pg->files++;
    pg->bytes_in += in->file_size;
    pg->bytes_out += out->file_size;
    int64_t now = floe_mono_ms();
    if (pg->files % 16 == 0 || now - pg->last_log >= 5000) {
        pg->last_log = now;
        FLOE_INFO("table %s.%s: widening: %zu of up to %zu files rewritten (%.1f MB) in %lld ms",
                  o->ns, o->name, pg->files, pg->candidates, (double)pg->bytes_in / 1e6,
                  (long long)(now - pg->t0));
    }
    return 1;
}

int floe_twiden_prepare(floe_tout_t *o, floe_fileio_t *io, const char *writer_id, floe_err_t *err)
{
    if (!o->nwidened) return 0;
    progress_t pg = {.t0 = floe_mono_ms()};
    pg.last_log = pg.t0;
    /* the live data files of the table */
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    const floe_ice_snapshot_t *cur = floe_ice_metadata_current_snapshot(md);
    floe_ice_snapshot_content_t c;
    memset(&c, 0, sizeof c);
    if (cur && floe_ice_snapshot_content_read(io, cur, &c, err) < 0) return -1;
    for (size_t m = 0; m < c.nmanifests; m++)
        for (size_t k = 0; k < c.nentries[m]; k++) {
            const floe_ice_manifest_entry_t *e = &c.entries[m][k];
            pg.candidates += e->status != FLOE_ICE_DELETED &&
                             e->file.content == FLOE_ICE_CONTENT_DATA &&
                             may_hold(&e->file, o->widened, o->nwidened);
        }
    for (size_t i = 0; i < o->npending; i++)
        pg.candidates += may_hold(&o->pending[i], o->widened, o->nwidened);
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < c.nmanifests; m++)
        for (size_t k = 0; rc == 0 && k < c.nentries[m]; k++) {
            const floe_ice_manifest_entry_t *e = &c.entries[m][k];
            if (e->status == FLOE_ICE_DELETED || e->file.content != FLOE_ICE_CONTENT_DATA ||
                !may_hold(&e->file, o->widened, o->nwidened))
                continue;
            floe_ice_data_file_t nf;
            int r = rewrite_one(o, io, writer_id, &e->file, &nf, &pg, err);
            if (r < 0) rc = -1;
            else if (r > 0 && floe_tout_add_rewrite(o, &nf, e->file.path) < 0) {
                floe_err_t de;
                floe_fileio_remove(io, nf.path, &de);
                floe_ice_data_file_clear(&nf);
                rc = floe_err_oom(err);
            }
        }
    floe_ice_snapshot_content_free(&c);
    /* pending files written before the widening: replaced in place; the
     * old ones were never committed, so they go at once */
    for (size_t i = 0; rc == 0 && i < o->npending; i++) {
        if (!may_hold(&o->pending[i], o->widened, o->nwidened)) continue;
        floe_ice_data_file_t nf;
        int r = rewrite_one(o, io, writer_id, &o->pending[i], &nf, &pg, err);
        if (r < 0) {
            rc = -1;
        } else if (r > 0) {
            floe_tout_replace_pending(o, i, &nf, io);
        }
    }
    if (rc == 0) {
        FLOE_INFO("table %s.%s: widening rewrote %zu files (%.1f MB in, %.1f MB out) in %lld ms",
                  o->ns, o->name, pg.files, (double)pg.bytes_in / 1e6, (double)pg.bytes_out / 1e6,
                  (long long)(floe_mono_ms() - pg.t0));
        /* done: every file of the old shape has its rewrite listed (or
         * replaced in pending); files written from now on are of the new */
        floe_tout_widened_done(o);
    }
    return rc;
}
