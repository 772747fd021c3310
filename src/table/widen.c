/* Widening a long column to double, the engine's side.
 *
 * Iceberg cannot promote long to double in place, so a long field that
 * meets fractions is replaced by a new optional double field (new id,
 * same name, same place), and every data file holding the old field must
 * be rewritten in the same snapshot as the schema that replaces it:
 * readers then see the old table or the new one, never an old value as
 * null.  How, without stalling the table:
 *
 *   1. A field the table may hold in its files (an id up to the output's
 *      committed_max_id) is marked hold in every buffer (sink.c): a
 *      record bringing a fraction there is refused with floe_rows_held,
 *      and its partition stops at that record (pipeline.c, hold_field).
 *      Every other record, and every other partition, goes on as before:
 *      the engine keeps committing, in the old form.
 *   2. floe_ttable_widen (the one entry point, called by the engine
 *      thread) reserves the new field's id and asks the maintenance
 *      thread (maint.h) for the rewrite; or refuses, and the records go
 *      to the dead-letter table.
 *   3. The maintenance thread rewrites the live files holding the field
 *      in rounds (iceberg/rewrite.h with the long->double remap) while
 *      the engine commits; when a round finds little new, it asks for
 *      the fence: floe_ttable_widen_poll acknowledges it and the engine
 *      holds its commits of the table (it keeps reading).  The last
 *      round and one replace snapshot follow: every old file replaced,
 *      the widened schema current, the engine's offsets kept.
 *   4. floe_ttable_widen_poll sees the switch: the engine's working
 *      schema takes the double field (floe_tout_widen_committed), files
 *      it wrote meanwhile (pending, of the old form) are rewritten at its
 *      next commit (floe_twiden_prepare), the fence drops, the held
 *      partitions read on from the record that asked.
 * A field found since the last commit (not in any table file yet) widens
 * in the buffer at once, as it always did: only pending files hold it,
 * and floe_twiden_prepare rewrites them before the commit.
 *
 * Without the threads (floe_engine_run_once) the same steps run one
 * after the other in the caller's thread (engine.c). */
#include "table/widen.h"

#include <stdlib.h>
#include <string.h>

#include "iceberg/rewrite.h"
#include "table/pipeline.h"
#include "util/diag.h"

/* ---- pending files ------------------------------------------------------- */

typedef struct namer {
    floe_tout_t *o;
    const char *writer_id, *in;
} namer_t;

static char *name_rewrite(void *ctx, unsigned seq, floe_err_t *err)
{
    (void)seq;
    namer_t *nm = ctx;
    char path[2400];
    if (floe_tout_rewrite_path(nm->o, nm->writer_id, nm->in, path, sizeof path, err) < 0)
        return NULL;
    char *p = strdup(path);
    if (!p) floe_err_oom(err);
    return p;
}

int floe_twiden_prepare(floe_tout_t *o, floe_fileio_t *io, const char *writer_id,
                        floe_pq_scratch_t *scratch, floe_err_t *err)
{
    if (!o->nwidened) return 0;
    floe_ice_field_remap_t *remap = malloc(o->nwidened * sizeof *remap);
    if (!remap) return floe_err_oom(err);
    for (size_t i = 0; i < o->nwidened; i++)
        remap[i] = (floe_ice_field_remap_t){o->widened[i].from, o->widened[i].to};
    floe_ice_rewrite_opts_t ro = floe_ice_rewrite_opts_default();
    ro.remap = remap;
    ro.nremap = o->nwidened;
    ro.scratch = scratch;
    size_t files = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->npending; i++) {
        if (!floe_tmaint_may_hold(&o->pending[i], o->widened, o->nwidened)) continue;
        namer_t nm = {o, writer_id, o->pending[i].path};
        floe_ice_rewrite_input_t in = {.file = &o->pending[i]};
        floe_ice_data_file_t *out = NULL;
        size_t nout = 0;
        if (floe_ice_rewrite(io, o->work, &in, 1, name_rewrite, &nm, &ro, &out, &nout, err) < 0) {
            floe_err_wrap(err, "table %s.%s: rewriting %s for a widened column", o->ns, o->name,
                          o->pending[i].path);
            rc = -1;
            break;
        }
        if (nout == 1) {
            floe_tout_replace_pending(o, i, &out[0], io); /* the old one was never committed */
            files++;
        } else { /* one input, no target size: one output always */
            for (size_t k = 0; k < nout; k++) floe_ice_data_file_clear(&out[k]);
            rc = floe_err_set(err, FLOE_ECORRUPT, "table %s.%s: rewriting %s gave %zu files", o->ns,
                              o->name, o->pending[i].path, nout);
        }
        free(out);
    }
    free(remap);
    if (rc == 0) {
        if (files)
            FLOE_INFO("table %s.%s: %zu uncommitted files rewritten for a widened column", o->ns,
                      o->name, files);
        floe_tout_widened_done(o);
    }
    return rc;
}

/* ---- the entry point and the engine's part ---------------------------------- */

static bool asked(const floe_ttable_t *t, int32_t from)
{
    for (size_t i = 0; i < t->nwide; i++)
        if (t->wide[i].from == from) return true;
    return false;
}

int floe_ttable_widen(floe_ttable_t *t, floe_tpart_t *p, floe_err_t *err)
{
    int32_t from = p->hold_field;
    if (!from || asked(t, from)) return 1;
    const floe_ice_schema_t *cur =
        floe_ice_metadata_current_schema(floe_ice_table_metadata(t->main.ice));
    const floe_ice_field_t *f = cur ? floe_ice_schema_find(cur, from) : NULL;
    const floe_ice_field_t *w = floe_ice_schema_find(t->main.work, from);
    if (!w || w->type->kind != FLOE_ICE_LONG || w->required || !t->maint_main) {
        floe_err_set(err, FLOE_EINVAL, "field %d cannot widen to double here", (int)from);
        return 0;
    }
    floe_twiden_t *v = realloc(t->wide, (t->nwide + 1) * sizeof *v);
    if (!v) return floe_err_oom(err);
    t->wide = v;
    floe_twiden_t pair = {from, floe_tout_reserve_id(&t->main)};
    if (floe_tmaint_widen_ask(t->maint_main, &pair, 1, err) < 0) return -1;
    t->wide[t->nwide++] = pair;
    char name[256];
    FLOE_INFO("table %s.%s: column '%s' (field %d%s) meets fractions at partition %d offset %lld: "
              "it becomes the double field %d once the maintenance thread has rewritten the "
              "files that hold it; the partition waits there, the table keeps committing",
              t->main.ns, t->main.name,
              floe_ice_schema_field_name(t->main.work, from, name, sizeof name) ? name : "?",
              (int)from, f ? ", in the table" : "", (int)p->id, (long long)p->next, (int)pair.to);
    return 1;
}

/* The switch landed: take it (pairs borrowed from the maintenance). */
static int take_switch(floe_ttable_t *t, const floe_twiden_t *pairs, size_t n, floe_err_t *err)
{
    floe_ice_table_t *nt;
    if (floe_ice_catalog_load_table(t->catalog, t->main.ns, t->main.name, &nt, err) < 0) return -1;
    if (floe_tout_widen_committed(&t->main, nt, pairs, n, err) < 0) return -1;
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < t->nwide; i++)
            if (t->wide[i].from == pairs[k].from) {
                t->wide[i] = t->wide[--t->nwide];
                break;
            }
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i]->hold_field == pairs[k].from) t->parts[i]->hold_field = 0;
    }
    return 0;
}

floe_tmaint_widen_state_t floe_ttable_widen_poll(floe_ttable_t *t)
{
    if (!t->nwide && !t->fenced) return FLOE_TMW_NONE;
    const floe_twiden_t *pairs;
    size_t n;
    floe_tmaint_widen_state_t s = floe_tmaint_widen_poll(t->maint_main, &pairs, &n);
    switch (s) {
    case FLOE_TMW_FENCE:
        /* between rounds: no commit of ours is under way */
        t->fenced = true;
        floe_tmaint_widen_fenced(t->maint_main);
        break;
    case FLOE_TMW_SWITCHED: {
        floe_err_t err;
        if (take_switch(t, pairs, n, &err) < 0) {
            FLOE_WARN("table %s.%s: cannot take the widened schema yet (commits wait): %s",
                      t->main.ns, t->main.name, err.msg);
            break; /* the fence stays: our files are of the old form */
        }
        floe_tmaint_widen_applied(t->maint_main);
        t->fenced = false;
        FLOE_INFO("table %s.%s: the widened schema is the table's; the waiting partitions read on",
                  t->main.ns, t->main.name);
        break;
    }
    case FLOE_TMW_NONE: /* the job went (its table was re-attached): ask again */
        if (t->nwide && floe_tmaint_widen_ask(t->maint_main, t->wide, t->nwide, NULL) == 0)
            s = FLOE_TMW_RUNNING;
        t->fenced = false;
        break;
    case FLOE_TMW_FAILED: t->fenced = false; break;
    default: break;
    }
    return s;
}
