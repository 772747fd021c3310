/* The rewrite of a widening, on the maintenance side (maint_ops.h): rounds
 * of 1:1 rewrites of the live files that hold a widened long field, then
 * one replace snapshot with the widened schema. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/rewrite.h"
#include "iceberg/scan.h"
#include "table/maint_ops.h"
#include "util/diag.h"
#include "util/fs.h"

struct floe_tmaint_widen {
    floe_ice_catalog_t *cat;
    char *ns, *name;
    floe_twiden_t *pairs;
    floe_ice_field_remap_t *remap;
    size_t npairs;
    floe_pq_scratch_t *scratch;
    char run[37]; /* names the outputs */
    unsigned seq;
    int64_t base;               /* the snapshot of the first round (-1: none yet) */
    int64_t last_round;         /* the snapshot the last round looked at */
    floe_ice_reach_t *done;     /* inputs rewritten */
    char **inputs;              /* the same, in order */
    floe_ice_data_file_t *outs; /* their rewrites (a file of no rows has none) */
    size_t ninputs, nouts, capin, capout;
    int64_t bytes_done;
    const char **out_paths; /* floe_tmaint_widen_outputs */
};

floe_tmaint_widen_t *floe_tmaint_widen_new(floe_ice_catalog_t *cat, const char *ns,
                                           const char *name, const floe_twiden_t *pairs,
                                           size_t npairs, floe_pq_scratch_t *scratch,
                                           floe_err_t *err)
{
    floe_tmaint_widen_t *w = calloc(1, sizeof *w);
    if (!w || !(w->ns = strdup(ns)) || !(w->name = strdup(name)) ||
        !(w->pairs = malloc((npairs ? npairs : 1) * sizeof *w->pairs)) ||
        !(w->remap = malloc((npairs ? npairs : 1) * sizeof *w->remap)) ||
        !(w->done = floe_ice_reach_new(false, err))) {
        if (w && !w->done) floe_err_oom(err);
        floe_tmaint_widen_free(w, true);
        return NULL;
    }
    w->cat = cat;
    w->npairs = npairs;
    for (size_t i = 0; i < npairs; i++) {
        w->pairs[i] = pairs[i];
        w->remap[i] = (floe_ice_field_remap_t){pairs[i].from, pairs[i].to};
    }
    w->scratch = scratch;
    w->base = w->last_round = -1;
    floe_ice_uuid4(w->run);
    return w;
}

void floe_tmaint_widen_free(floe_tmaint_widen_t *w, bool keep_files)
{
    if (!w) return;
    if (!keep_files && w->nouts) {
        const char **paths = calloc(w->nouts, sizeof *paths);
        for (size_t i = 0; paths && i < w->nouts; i++) paths[i] = w->outs[i].path;
        floe_err_t e;
        if (paths &&
            floe_fileio_remove_batch(floe_ice_catalog_io(w->cat), paths, w->nouts, NULL, &e) < 0)
            FLOE_WARN("table %s.%s: cannot remove a widening's uncommitted rewrite: %s", w->ns,
                      w->name, e.msg);
        free(paths);
    }
    for (size_t i = 0; i < w->ninputs; i++) free(w->inputs[i]);
    free(w->inputs);
    for (size_t i = 0; i < w->nouts; i++) floe_ice_data_file_clear(&w->outs[i]);
    free(w->outs);
    floe_ice_reach_free(w->done);
    free(w->out_paths);
    free(w->pairs);
    free(w->remap);
    free(w->ns);
    free(w->name);
    free(w);
}

size_t floe_tmaint_widen_done(const floe_tmaint_widen_t *w, int64_t *bytes)
{
    if (bytes) *bytes = w->bytes_done;
    return w->ninputs;
}

size_t floe_tmaint_widen_outputs(const floe_tmaint_widen_t *w, const char ***paths)
{
    floe_tmaint_widen_t *m = (floe_tmaint_widen_t *)w;
    const char **v = realloc(m->out_paths, (w->nouts ? w->nouts : 1) * sizeof *v);
    if (!v) {
        *paths = NULL;
        return 0;
    }
    m->out_paths = v;
    for (size_t i = 0; i < w->nouts; i++) v[i] = w->outs[i].path;
    *paths = v;
    return w->nouts;
}

bool floe_tmaint_may_hold(const floe_ice_data_file_t *f, const floe_twiden_t *w, size_t n)
{
    if (!f->nmetrics) return true;
    for (size_t i = 0; i < f->nmetrics; i++)
        for (size_t k = 0; k < n; k++)
            if (f->metrics[i].id == w[k].from) return true;
    return false;
}

typedef struct namer {
    char dir[2048];
    floe_tmaint_widen_t *w;
} namer_t;

static char *name_output(void *ctx, unsigned seq, floe_err_t *err)
{
    (void)seq;
    namer_t *nm = ctx;
    return floe_tmaint_output_path(nm->dir, "w", nm->w->run, ++nm->w->seq, err);
}

/* Rewrite f into w's outputs under schema (the widened one). */
static int rewrite_one(floe_tmaint_widen_t *w, const floe_ice_schema_t *schema,
                       const floe_ice_data_file_t *f, floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(w->cat);
    namer_t nm = {.w = w};
    if (floe_fs_dirname(f->path, nm.dir, sizeof nm.dir, err) < 0) return -1;
    floe_ice_rewrite_opts_t ro = floe_ice_rewrite_opts_default();
    ro.remap = w->remap;
    ro.nremap = w->npairs;
    ro.scratch = w->scratch;
    floe_ice_rewrite_input_t in = {.file = f};
    floe_ice_data_file_t *out = NULL;
    size_t nout = 0;
    if (floe_ice_rewrite(io, schema, &in, 1, name_output, &nm, &ro, &out, &nout, err) < 0) {
        floe_err_wrap(err, "table %s.%s: rewriting %s for a widened column", w->ns, w->name,
                      f->path);
        return -1;
    }
    int rc = 0;
    if (w->ninputs == w->capin) {
        size_t cap = w->capin ? w->capin * 2 : 64;
        char **v = realloc(w->inputs, cap * sizeof *v);
        if (v) {
            w->inputs = v;
            w->capin = cap;
        } else
            rc = floe_err_oom(err);
    }
    if (rc == 0 && w->nouts + nout > w->capout) {
        size_t cap = (w->nouts + nout) * 2;
        floe_ice_data_file_t *v = realloc(w->outs, cap * sizeof *v);
        if (v) {
            w->outs = v;
            w->capout = cap;
        } else
            rc = floe_err_oom(err);
    }
    char *p = rc == 0 ? strdup(f->path) : NULL;
    if (rc == 0 && (!p || floe_ice_reach_add_file(w->done, f->path, FLOE_ICE_FILE_DATA,
                                                  f->file_size, err) < 0)) {
        if (!p) floe_err_oom(err);
        rc = -1;
    }
    if (rc < 0) {
        free(p);
        for (size_t i = 0; i < nout; i++) {
            floe_err_t e;
            floe_fileio_remove(io, out[i].path, &e);
            floe_ice_data_file_clear(&out[i]);
        }
        free(out);
        return -1;
    }
    w->inputs[w->ninputs++] = p;
    memcpy(w->outs + w->nouts, out, nout * sizeof *out);
    w->nouts += nout;
    free(out);
    w->bytes_done += f->file_size;
    return 0;
}

/* The current schema of md with the pairs applied (caller frees). */
static floe_ice_schema_t *widened_schema(const floe_tmaint_widen_t *w,
                                         const floe_ice_metadata_t *md, floe_err_t *err)
{
    const floe_ice_schema_t *cur = floe_ice_metadata_current_schema(md);
    floe_ice_schema_t *s = cur ? floe_ice_schema_dup(cur) : NULL;
    if (!s) {
        floe_err_oom(err);
        return NULL;
    }
    if (floe_tschema_apply_widened(s, w->pairs, w->npairs, err) < 0) {
        floe_ice_schema_free(s);
        return NULL;
    }
    return s;
}

int floe_tmaint_widen_round(floe_tmaint_widen_t *w, const atomic_bool *cancel, size_t *files,
                            int64_t *bytes, floe_err_t *err)
{
    *files = 0;
    *bytes = 0;
    floe_fileio_t *io = floe_ice_catalog_io(w->cat);
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(w->cat, w->ns, w->name, &t, err) < 0) return -1;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
    floe_ice_schema_t *schema = widened_schema(w, md, err);
    floe_ice_snapshot_content_t c;
    memset(&c, 0, sizeof c);
    int rc = schema ? 0 : -1;
    if (rc == 0 && s && floe_ice_snapshot_content_read(io, s, &c, err) < 0) rc = -1;
    /* a 1:1 rewrite would lose what delete files say of the files it
     * replaces (position deletes name them; equality deletes stop applying
     * to newer files): widening waits until compaction has applied and
     * removed them */
    for (size_t m = 0; rc == 0 && m < c.nmanifests; m++)
        for (size_t k = 0; rc == 0 && k < c.nentries[m]; k++)
            if (c.entries[m][k].status != FLOE_ICE_DELETED &&
                c.entries[m][k].file.content != FLOE_ICE_CONTENT_DATA)
                rc = floe_err_set(err, FLOE_EUNSUPPORTED,
                                  "table %s.%s has delete files (%s): widening waits until "
                                  "compaction has applied them",
                                  w->ns, w->name, c.entries[m][k].file.path);
    for (size_t m = 0; rc == 0 && m < c.nmanifests; m++)
        for (size_t k = 0; rc == 0 && k < c.nentries[m]; k++) {
            const floe_ice_manifest_entry_t *e = &c.entries[m][k];
            if (e->status == FLOE_ICE_DELETED || e->file.content != FLOE_ICE_CONTENT_DATA ||
                !floe_tmaint_may_hold(&e->file, w->pairs, w->npairs) ||
                floe_ice_reach_has(w->done, e->file.path))
                continue;
            if (cancel && atomic_load(cancel)) {
                rc = floe_err_set(err, FLOE_ECLOSED, "widening cancelled");
                break;
            }
            if (rewrite_one(w, schema, &e->file, err) < 0) {
                rc = -1;
                break;
            }
            (*files)++;
            *bytes += e->file.file_size;
        }
    if (rc == 0) {
        if (w->base < 0) w->base = s ? s->snapshot_id : -1;
        w->last_round = s ? s->snapshot_id : -1;
    }
    floe_ice_snapshot_content_free(&c);
    floe_ice_schema_free(schema);
    floe_ice_table_free(t);
    return rc;
}

/* Each commit attempt: the widened schema of the table as it is now, and
 * no data added since the last round (those files were not rewritten),
 * nor deletes (the rewrite does not apply them: rounds refuse tables with
 * delete files). */
static int check_attempt(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    floe_tmaint_widen_t *w = ((void **)ctx)[0];
    floe_ice_commit_t *c = ((void **)ctx)[1];
    const floe_ice_metadata_t *md = floe_ice_table_metadata(cur);
    for (const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
         s && s->snapshot_id != w->last_round;
         s = s->parent_id >= 0 ? floe_ice_metadata_snapshot(md, s->parent_id) : NULL) {
        const char *a = floe_ice_props_get(&s->summary, "added-data-files");
        const char *d = floe_ice_props_get(&s->summary, "added-delete-files");
        if ((a && strcmp(a, "0")) || (d && strcmp(d, "0")))
            return floe_err_set(err, FLOE_ECONFLICT,
                                "table %s.%s: snapshot %lld added data or delete files since "
                                "the widening's last round",
                                w->ns, w->name, (long long)s->snapshot_id);
    }
    floe_ice_schema_t *s = widened_schema(w, md, err);
    if (!s) return -1;
    int rc = floe_ice_commit_set_schema(c, s, err);
    floe_ice_schema_free(s);
    return rc;
}

int floe_tmaint_widen_commit(floe_tmaint_widen_t *w, const atomic_bool *cancel,
                             int64_t *snapshot_id, floe_err_t *err)
{
    size_t files;
    int64_t bytes;
    if (floe_tmaint_widen_round(w, cancel, &files, &bytes, err) < 0) return -1;
    floe_ice_commit_t *c = floe_ice_commit_new(w->cat, w->ns, w->name, FLOE_ICE_OP_REWRITE, err);
    if (!c) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->ninputs; i++)
        rc = floe_ice_commit_remove(c, w->inputs[i], err);
    for (size_t i = 0; rc == 0 && i < w->nouts; i++) rc = floe_ice_commit_add(c, &w->outs[i], err);
    void *ctx[2] = {w, c};
    floe_tmaint_keep_t keep = {.then = check_attempt, .then_ctx = ctx};
    if (rc == 0) {
        if (w->base >= 0) floe_ice_commit_set_base(c, w->base);
        floe_tmaint_keep_progress(c, &keep);
        rc = floe_ice_commit_run(c, snapshot_id, err) < 0 ? -1 : 0;
    }
    floe_ice_commit_free(c);
    return rc;
}

int floe_tmaint_widen_landed(floe_tmaint_widen_t *w, floe_err_t *err)
{
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(w->cat, w->ns, w->name, &t, err) < 0) return -1;
    const floe_ice_schema_t *s = floe_ice_metadata_current_schema(floe_ice_table_metadata(t));
    int r = s != NULL;
    for (size_t i = 0; s && i < w->npairs; i++)
        if (!floe_ice_schema_find(s, w->pairs[i].to)) r = 0;
    floe_ice_table_free(t);
    return r;
}
