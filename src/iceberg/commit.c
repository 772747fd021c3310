/* Snapshot producers with optimistic retry (see snapshot.h). */
#include "iceberg/snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/catalog_int.h"
#include "iceberg/commit_int.h"
#include "iceberg/read.h"
#include "iceberg/scan.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/rand.h"

struct floe_ice_commit {
    floe_ice_catalog_t *cat;
    char *ns, *name;
    floe_ice_op_t op;
    floe_ice_data_file_t *adds;
    size_t nadds;
    char **removes;
    size_t nremoves;
    floe_ice_props_t summary;
    floe_ice_schema_t *schema; /* set_schema, or NULL */
    floe_ice_validate_fn validate;
    void *validate_ctx;
    int max_attempts;
    int codec;
    int attempts;
    int64_t snapshot_id;
    int64_t base;     /* rewrite: the snapshot it was planned on; -1 unset */
    int64_t data_seq; /* rewrite: data sequence number of the added data files; -1 unset */
    floe_ice_commit_stats_t stats;
};

floe_ice_commit_t *floe_ice_commit_new(floe_ice_catalog_t *cat, const char *ns, const char *name,
                                       floe_ice_op_t op, floe_err_t *err)
{
    floe_ice_commit_t *c = calloc(1, sizeof *c);
    if (!c || !(c->ns = strdup(ns)) || !(c->name = strdup(name))) {
        if (c) {
            free(c->ns);
            free(c);
        }
        floe_err_oom(err);
        return NULL;
    }
    c->cat = cat;
    c->op = op;
    c->max_attempts = 1000;
    c->base = -1;
    c->data_seq = -1;
    c->snapshot_id = floe_ice_new_snapshot_id();
    return c;
}

void floe_ice_commit_free(floe_ice_commit_t *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->nadds; i++) floe_ice_data_file_clear(&c->adds[i]);
    free(c->adds);
    for (size_t i = 0; i < c->nremoves; i++) free(c->removes[i]);
    free(c->removes);
    floe_ice_props_clear(&c->summary);
    floe_ice_schema_free(c->schema);
    free(c->ns);
    free(c->name);
    free(c);
}

int floe_ice_commit_add(floe_ice_commit_t *c, const floe_ice_data_file_t *f, floe_err_t *err)
{
    if (c->op == FLOE_ICE_OP_APPEND && f->content != FLOE_ICE_CONTENT_DATA)
        return floe_err_set(err, FLOE_EINVAL,
                            "append takes data files only (use a row delta for deletes)");
    if (!f->path || !*f->path) return floe_err_set(err, FLOE_EINVAL, "file without a path");
    if (f->content == FLOE_ICE_CONTENT_EQUALITY_DELETES && !f->nequality_ids)
        return floe_err_set(err, FLOE_EINVAL, "equality delete file %s without equality ids",
                            f->path);
    floe_ice_data_file_t *na = realloc(c->adds, (c->nadds + 1) * sizeof *na);
    if (!na) return floe_err_oom(err);
    c->adds = na;
    if (floe_ice_data_file_copy(&na[c->nadds], f) < 0) return floe_err_oom(err);
    c->nadds++;
    return 0;
}

int floe_ice_commit_remove(floe_ice_commit_t *c, const char *path, floe_err_t *err)
{
    if (c->op != FLOE_ICE_OP_REWRITE)
        return floe_err_set(err, FLOE_EINVAL, "only a rewrite removes files");
    char **nr = realloc(c->removes, (c->nremoves + 1) * sizeof *nr);
    if (!nr) return floe_err_oom(err);
    c->removes = nr;
    if (!(nr[c->nremoves] = strdup(path))) return floe_err_oom(err);
    c->nremoves++;
    return 0;
}

int floe_ice_commit_set_summary(floe_ice_commit_t *c, const char *key, const char *value,
                                floe_err_t *err)
{
    if (strcmp(key, "operation") == 0)
        return floe_err_set(err, FLOE_EINVAL, "'operation' is set by the producer");
    if (floe_ice_props_set(&c->summary, key, value) < 0) return floe_err_oom(err);
    return 0;
}

int floe_ice_commit_set_schema(floe_ice_commit_t *c, const floe_ice_schema_t *schema,
                               floe_err_t *err)
{
    if (floe_ice_schema_validate(schema, err) < 0) return -1;
    floe_ice_schema_t *d = floe_ice_schema_dup(schema);
    if (!d) return floe_err_oom(err);
    floe_ice_schema_free(c->schema);
    c->schema = d;
    return 0;
}

void floe_ice_commit_set_validate(floe_ice_commit_t *c, floe_ice_validate_fn fn, void *ctx)
{
    c->validate = fn;
    c->validate_ctx = ctx;
}

void floe_ice_commit_set_base(floe_ice_commit_t *c, int64_t snapshot_id)
{
    c->base = snapshot_id;
}

int floe_ice_commit_set_data_sequence(floe_ice_commit_t *c, int64_t seq, floe_err_t *err)
{
    if (c->op != FLOE_ICE_OP_REWRITE || seq < 0)
        return floe_err_set(err, FLOE_EINVAL,
                            "only a rewrite sets the data sequence number of its files (>= 0)");
    c->data_seq = seq;
    return 0;
}

void floe_ice_commit_set_max_attempts(floe_ice_commit_t *c, int n)
{
    c->max_attempts = n < 1 ? 1 : n;
}
void floe_ice_commit_set_codec(floe_ice_commit_t *c, int codec)
{
    c->codec = codec;
}
int floe_ice_commit_attempts(const floe_ice_commit_t *c)
{
    return c->attempts;
}
void floe_ice_commit_stats(const floe_ice_commit_t *c, floe_ice_commit_stats_t *out)
{
    *out = c->stats;
    out->attempts = c->attempts;
}

/* ---- one attempt ---- */

typedef struct attempt {
    char **written;
    size_t nwritten; /* files this attempt created */
    size_t replaced; /* manifests of the parent rewritten or merged away */
    size_t merged;   /* manifests folded into merged ones */
    floe_ice_manifest_file_t *list;
    size_t nlist;
    char *list_path;
} attempt_t;

typedef enum cleanup {
    KEEP_FILES,   /* outcome unknown: the files may be referenced */
    DELETE_FILES, /* not published */
    DELETE_UNUSED /* published: delete what the snapshot does not use (merged away) */
} cleanup_t;

static bool in_list(const attempt_t *a, const char *path)
{
    if (a->list_path && !strcmp(a->list_path, path)) return true;
    for (size_t i = 0; i < a->nlist; i++)
        if (!strcmp(a->list[i].path, path)) return true;
    return false;
}

/* What a published attempt did, for floe_ice_commit_stats. */
static void note_stats(floe_ice_commit_t *c, const attempt_t *a)
{
    floe_ice_commit_stats_t *st = &c->stats;
    st->manifests = a->nlist;
    st->manifests_created = 0;
    for (size_t i = 0; i < a->nlist; i++)
        st->manifests_created += a->list[i].added_snapshot_id == c->snapshot_id;
    st->manifests_merged = a->merged;
}

static void attempt_cleanup(floe_fileio_t *io, attempt_t *a, cleanup_t how)
{
    const char **del =
        how == KEEP_FILES ? NULL : calloc(a->nwritten ? a->nwritten : 1, sizeof *del);
    bool *done = del ? calloc(a->nwritten ? a->nwritten : 1, sizeof *done) : NULL;
    size_t n = 0;
    for (size_t i = 0; done && i < a->nwritten; i++)
        if (how == DELETE_FILES || !in_list(a, a->written[i])) del[n++] = a->written[i];
    if (n) floe_ice_delete_batched(io, del, n, done); /* failures logged: orphans later */
    free(del);
    free(done);
    for (size_t i = 0; i < a->nwritten; i++) free(a->written[i]);
    free(a->written);
    floe_ice_manifest_files_free(a->list, a->nlist);
    free(a->list_path);
    memset(a, 0, sizeof *a);
}

static int note_written(attempt_t *a, const char *path, floe_err_t *err)
{
    char **nw = realloc(a->written, (a->nwritten + 1) * sizeof *nw);
    if (!nw) return floe_err_oom(err);
    a->written = nw;
    if (!(nw[a->nwritten] = strdup(path))) return floe_err_oom(err);
    a->nwritten++;
    return 0;
}

static int push_manifest(attempt_t *a, const floe_ice_manifest_file_t *m, floe_err_t *err)
{
    floe_ice_manifest_file_t *nl = realloc(a->list, (a->nlist + 1) * sizeof *nl);
    if (!nl) return floe_err_oom(err);
    a->list = nl;
    if (floe_ice_manifest_file_copy(&nl[a->nlist], m) < 0) return floe_err_oom(err);
    a->nlist++;
    return 0;
}

static char *new_path(const floe_ice_metadata_t *md, const char *fmt_prefix, int64_t snap, int k)
{
    char uuid[37];
    floe_ice_uuid4(uuid);
    size_t n = strlen(md->location) + 128;
    char *p = malloc(n);
    if (!p) return NULL;
    if (k >= 0 || !fmt_prefix)
        snprintf(p, n, "%s/metadata/%s-m%d.avro", md->location, uuid, k < 0 ? 0 : k);
    else
        snprintf(p, n, "%s/metadata/%s-%" PRId64 "-%s.avro", md->location, fmt_prefix, snap, uuid);
    return p;
}

/* Write one manifest of entries for spec_id as this snapshot's, record it
 * as written by the attempt, fill *mf (caller clears). */
static int write_one(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                     const floe_ice_schema_t *schema, attempt_t *a, int32_t spec_id, int content,
                     const floe_ice_manifest_entry_t *entries, size_t n, int64_t seq,
                     floe_ice_manifest_file_t *mf, floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    const floe_ice_spec_t *spec = floe_ice_metadata_spec(md, spec_id);
    if (!spec) return floe_err_set(err, FLOE_EINVAL, "no partition spec %d in the table", spec_id);
    char *path = new_path(md, NULL, 0, (int)a->nwritten);
    if (!path) return floe_err_oom(err);
    floe_ice_manifest_opts_t mo = {c->codec};
    int rc = floe_ice_manifest_write(io, path, schema, spec, content, entries, n, &mo, mf, err);
    if (rc == 0 || (err && err->code != FLOE_EEXIST)) {
        floe_err_t e2;
        if (note_written(a, path, rc == 0 ? err : &e2) < 0 && rc == 0) {
            floe_ice_manifest_file_clear(mf);
            rc = -1;
        }
    }
    free(path);
    if (rc < 0) return -1;
    mf->sequence_number = seq;
    mf->added_snapshot_id = c->snapshot_id;
    return 0;
}

/* Write one manifest and put it in the attempt's list. */
static int write_manifest(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                          const floe_ice_schema_t *schema, attempt_t *a, int32_t spec_id,
                          int content, const floe_ice_manifest_entry_t *entries, size_t n,
                          int64_t seq, floe_err_t *err)
{
    floe_ice_manifest_file_t mf;
    if (write_one(c, md, schema, a, spec_id, content, entries, n, seq, &mf, err) < 0) return -1;
    int rc = push_manifest(a, &mf, err);
    floe_ice_manifest_file_clear(&mf);
    return rc;
}

/* The merge's writer (floe_ice_manifest_writer_fn): this attempt's. */
typedef struct merge_ctx {
    floe_ice_commit_t *c;
    const floe_ice_metadata_t *md;
    const floe_ice_schema_t *schema;
    attempt_t *a;
    int64_t seq;
} merge_ctx_t;

static int merge_write(void *ctx, int32_t spec_id, int content,
                       const floe_ice_manifest_entry_t *entries, size_t n,
                       floe_ice_manifest_file_t *out, floe_err_t *err)
{
    merge_ctx_t *m = ctx;
    return write_one(m->c, m->md, m->schema, m->a, spec_id, content, entries, n, m->seq, out, err);
}

typedef struct totals {
    int64_t added_data, added_records, added_size, added_del, added_pos_files, added_eq_files;
    int64_t added_pos, added_eq, deleted_data, deleted_records, removed_size, removed_del;
    int64_t removed_pos, removed_eq;
} totals_t;

static void count_add(totals_t *t, const floe_ice_data_file_t *f)
{
    if (f->content == FLOE_ICE_CONTENT_DATA) {
        t->added_data++;
        t->added_records += f->record_count;
    } else {
        t->added_del++;
        if (f->content == FLOE_ICE_CONTENT_POSITION_DELETES) {
            t->added_pos_files++;
            t->added_pos += f->record_count;
        } else {
            t->added_eq_files++;
            t->added_eq += f->record_count;
        }
    }
    t->added_size += f->file_size;
}

static void count_remove(totals_t *t, const floe_ice_data_file_t *f)
{
    if (f->content == FLOE_ICE_CONTENT_DATA) {
        t->deleted_data++;
        t->deleted_records += f->record_count;
    } else {
        t->removed_del++;
        if (f->content == FLOE_ICE_CONTENT_POSITION_DELETES) t->removed_pos += f->record_count;
        else
            t->removed_eq += f->record_count;
    }
    t->removed_size += f->file_size;
}

static int put_i64(floe_ice_props_t *p, const char *k, int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    return floe_ice_props_set(p, k, b);
}

/* Standard summary keys; totals continue the parent's when it has them. */
static int build_summary(floe_ice_commit_t *c, const floe_ice_snapshot_t *parent, const totals_t *t,
                         const attempt_t *a, floe_ice_props_t *out)
{
    if (floe_ice_props_copy(out, &c->summary) < 0) return -1;
    int rc = 0;
    if (t->added_data) rc |= put_i64(out, "added-data-files", t->added_data);
    if (t->added_records) rc |= put_i64(out, "added-records", t->added_records);
    if (t->added_size) rc |= put_i64(out, "added-files-size", t->added_size);
    if (t->added_del) rc |= put_i64(out, "added-delete-files", t->added_del);
    if (t->added_pos_files) rc |= put_i64(out, "added-position-delete-files", t->added_pos_files);
    if (t->added_eq_files) rc |= put_i64(out, "added-equality-delete-files", t->added_eq_files);
    if (t->added_pos) rc |= put_i64(out, "added-position-deletes", t->added_pos);
    if (t->added_eq) rc |= put_i64(out, "added-equality-deletes", t->added_eq);
    if (t->deleted_data) rc |= put_i64(out, "deleted-data-files", t->deleted_data);
    if (t->deleted_records) rc |= put_i64(out, "deleted-records", t->deleted_records);
    if (t->removed_size) rc |= put_i64(out, "removed-files-size", t->removed_size);
    if (t->removed_del) rc |= put_i64(out, "removed-delete-files", t->removed_del);
    /* Iceberg's manifest counts: written by this commit, carried, replaced */
    size_t created = 0;
    for (size_t i = 0; i < a->nlist; i++) created += a->list[i].added_snapshot_id == c->snapshot_id;
    rc |= put_i64(out, "manifests-created", (int64_t)created);
    rc |= put_i64(out, "manifests-kept", (int64_t)(a->nlist - created));
    rc |= put_i64(out, "manifests-replaced", (int64_t)a->replaced);
    static const char *const keys[] = {"total-records",          "total-files-size",
                                       "total-data-files",       "total-delete-files",
                                       "total-position-deletes", "total-equality-deletes"};
    int64_t delta[6] = {t->added_records - t->deleted_records, t->added_size - t->removed_size,
                        t->added_data - t->deleted_data,       t->added_del - t->removed_del,
                        t->added_pos - t->removed_pos,         t->added_eq - t->removed_eq};
    for (int i = 0; i < 6; i++) {
        int64_t base = 0;
        if (parent) {
            const char *v = floe_ice_props_get(&parent->summary, keys[i]);
            if (!v) continue; /* unknown totals stay unknown */
            base = strtoll(v, NULL, 10);
        }
        rc |= put_i64(out, keys[i], base + delta[i]);
    }
    return rc ? -1 : 0;
}

static bool path_in(const char *p, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p, list[i]) == 0) return true;
    return false;
}

/* The new files' manifests: one per (spec, data/deletes). */
static int add_new_manifests(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                             const floe_ice_schema_t *schema, attempt_t *a, int64_t seq,
                             totals_t *tot, floe_err_t *err)
{
    bool *done = calloc(c->nadds ? c->nadds : 1, sizeof *done);
    floe_ice_manifest_entry_t *ents = calloc(c->nadds ? c->nadds : 1, sizeof *ents);
    if (!done || !ents) {
        free(done);
        free(ents);
        return floe_err_oom(err);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->nadds; i++) {
        if (done[i]) continue;
        int32_t spec_id = c->adds[i].spec_id;
        int content = c->adds[i].content != FLOE_ICE_CONTENT_DATA;
        const floe_ice_spec_t *spec = floe_ice_metadata_spec(md, spec_id);
        size_t n = 0;
        for (size_t k = i; k < c->nadds; k++) {
            if (done[k] || c->adds[k].spec_id != spec_id ||
                (c->adds[k].content != FLOE_ICE_CONTENT_DATA) != content)
                continue;
            if (spec && c->adds[k].npartition != spec->nfields) {
                rc = floe_err_set(err, FLOE_EINVAL,
                                  "%s: %zu partition values for spec %d with %zu fields",
                                  c->adds[k].path, c->adds[k].npartition, spec_id, spec->nfields);
                break;
            }
            done[k] = true;
            ents[n].status = FLOE_ICE_ADDED;
            ents[n].snapshot_id = c->snapshot_id;
            ents[n].sequence_number =
                c->data_seq >= 0 && c->adds[k].content == FLOE_ICE_CONTENT_DATA ? c->data_seq : seq;
            ents[n].file_sequence_number = seq;
            ents[n].file = c->adds[k]; /* shallow: borrowed for the write */
            count_add(tot, &c->adds[k]);
            n++;
        }
        if (rc == 0) rc = write_manifest(c, md, schema, a, spec_id, content, ents, n, seq, err);
    }
    free(done);
    free(ents);
    return rc;
}

/* Whether a parent's manifest still has anything to carry: one with only
 * entries deleted by an older snapshot has not (Iceberg drops it too).
 * Counts missing from the list read as 0, so it takes a deleted count to
 * tell. */
static bool still_needed(const floe_ice_manifest_file_t *m)
{
    return m->added_files > 0 || m->existing_files > 0 || m->deleted_files == 0;
}

/* ---- what a rewrite must not lose to commits since its plan ---- */

/* Files committed to main since the rewrite's base snapshot. */
typedef struct since {
    floe_ice_manifest_entry_t *v;
    size_t n;
    floe_ice_pos_targets_t *targets; /* per entry, read when first needed */
    bool *read;
} since_t;

static void since_free(since_t *s)
{
    floe_ice_manifest_entries_free(s->v, s->n);
    for (size_t i = 0; s->targets && i < s->n; i++) floe_ice_pos_targets_clear(&s->targets[i]);
    free(s->targets);
    free(s->read);
    memset(s, 0, sizeof *s);
}

/* Move the entries snapshot s added of manifest m (read through io) into
 * out. */
static int since_take(floe_fileio_t *io, const floe_ice_snapshot_t *s,
                      const floe_ice_manifest_file_t *m, since_t *out, floe_err_t *err)
{
    floe_ice_manifest_entry_t *e;
    size_t n;
    if (floe_ice_manifest_read(io, m->path, &e, &n, err) < 0) return -1;
    floe_ice_manifest_entries_inherit(e, n, m);
    floe_ice_manifest_entry_t *v = realloc(out->v, (out->n + n + 1) * sizeof *v);
    if (!v) {
        floe_ice_manifest_entries_free(e, n);
        return floe_err_oom(err);
    }
    out->v = v;
    for (size_t k = 0; k < n; k++) {
        if (e[k].status != FLOE_ICE_ADDED || e[k].snapshot_id != s->snapshot_id) continue;
        out->v[out->n++] = e[k];
        floe_ice_data_file_init(&e[k].file);
    }
    floe_ice_manifest_entries_free(e, n);
    return 0;
}

/* The delete files (and, with data, the data files of snapshots other
 * than appends: rewrites may give theirs old sequence numbers) that main
 * gained since c->base, walking its ancestry from the head.  FLOE_ECONFLICT
 * (final) when base left the history. */
static int since_base(const floe_ice_commit_t *c, const floe_ice_metadata_t *md, bool data,
                      since_t *out, floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    memset(out, 0, sizeof *out);
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
    for (size_t steps = 0; s && steps <= md->nsnapshots; steps++) {
        if (s->snapshot_id == c->base) {
            if (out->n && (!(out->targets = calloc(out->n, sizeof *out->targets)) ||
                           !(out->read = calloc(out->n, sizeof *out->read)))) {
                since_free(out);
                return floe_err_oom(err);
            }
            return 0;
        }
        const char *d = floe_ice_props_get(&s->summary, "added-delete-files");
        /* a writer that keeps no counts may have added some, unless all
         * it did was append or replace */
        bool dels = (d && strcmp(d, "0") != 0) ||
                    (!d && !floe_ice_props_get(&s->summary, "total-delete-files") &&
                     strcmp(s->operation, "append") != 0 && strcmp(s->operation, "replace") != 0);
        bool datas = data && strcmp(s->operation, "append") != 0;
        if (dels || datas) {
            floe_ice_manifest_file_t *ml;
            size_t nm;
            if (floe_ice_manifest_list_read(io, s->manifest_list, &ml, &nm, err) < 0) {
                since_free(out);
                return -1;
            }
            int rc = 0;
            for (size_t i = 0; rc == 0 && i < nm; i++)
                if (ml[i].added_snapshot_id == s->snapshot_id && (ml[i].content ? dels : datas))
                    rc = since_take(io, s, &ml[i], out, err);
            floe_ice_manifest_files_free(ml, nm);
            if (rc < 0) {
                since_free(out);
                return -1;
            }
        }
        s = s->parent_id >= 0 ? floe_ice_metadata_snapshot(md, s->parent_id) : NULL;
    }
    since_free(out);
    return floe_err_set(err, FLOE_ECONFLICT,
                        "rewrite: snapshot %lld it was planned on is no longer in the history",
                        (long long)c->base);
}

/* Whether position delete file del names data file path (its bounds,
 * then its rows, read once into *t). */
static int names(floe_fileio_t *io, const floe_ice_data_file_t *del, const char *path,
                 floe_ice_pos_targets_t *t, bool *read, bool *out, floe_err_t *err)
{
    *out = false;
    if (!floe_ice_position_delete_may_name(del, path)) return 0;
    if (!*read) {
        if (floe_ice_position_delete_targets(io, del, t, err) < 0) return -1;
        *read = true;
    }
    *out = floe_ice_pos_targets_rows(t, path) > 0;
    return 0;
}

/* A rewrite planned on c->base removes files gone[0..ngone) (entries of
 * the head, borrowed).  It fails (FLOE_ECONFLICT, final) only when a file
 * committed since would lose its effect:
 *   - a delete file that applies to a removed data file, unless it applies
 *     to the rewritten rows as well: an equality delete newer than the
 *     data sequence number the rewrite gives its files
 *     (floe_ice_commit_set_data_sequence);
 *   - a data file a removed delete file applies to (a concurrent rewrite
 *     that kept an older sequence number).
 * A position delete counts only when it names the file. */
static int check_since(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                       const floe_ice_manifest_entry_t *const *gone, size_t ngone, floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    bool rm_dels = false;
    for (size_t i = 0; i < ngone; i++) rm_dels |= gone[i]->file.content != FLOE_ICE_CONTENT_DATA;
    since_t sn;
    if (since_base(c, md, rm_dels, &sn, err) < 0) return -1;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < sn.n; k++) {
        const floe_ice_manifest_entry_t *x = &sn.v[k];
        bool xdata = x->file.content == FLOE_ICE_CONTENT_DATA;
        for (size_t i = 0; rc == 0 && i < ngone; i++) {
            const floe_ice_manifest_entry_t *g = gone[i];
            bool gdata = g->file.content == FLOE_ICE_CONTENT_DATA;
            if (xdata == gdata) continue;
            const floe_ice_manifest_entry_t *del = xdata ? g : x, *dat = xdata ? x : g;
            if (!floe_ice_delete_applies(md, del, dat)) continue;
            bool hit = true;
            if (del->file.content == FLOE_ICE_CONTENT_POSITION_DELETES) {
                /* read each new position delete file once; a removed one
                 * at most once per data file */
                floe_ice_pos_targets_t tmp = {0};
                bool tread = false;
                rc = xdata ? names(io, &del->file, dat->file.path, &tmp, &tread, &hit, err)
                           : names(io, &del->file, dat->file.path, &sn.targets[k], &sn.read[k],
                                   &hit, err);
                floe_ice_pos_targets_clear(&tmp);
            } else if (!xdata && c->data_seq >= 0 && c->data_seq < x->sequence_number) {
                hit = false; /* it deletes from the rewritten files too */
            }
            if (rc == 0 && hit)
                rc = floe_err_set(err, FLOE_ECONFLICT,
                                  "rewrite: %s (committed since snapshot %lld it was planned on) "
                                  "applies to %s, which it replaces",
                                  xdata ? "data file" : "delete file", (long long)c->base,
                                  g->file.path);
        }
    }
    since_free(&sn);
    return rc;
}

/* A rewrite: the parent's manifests that list a removed file are
 * rewritten with it DELETED (the rest EXISTING); every removed file must
 * still be live. */
static int carry_rewritten(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                           const floe_ice_schema_t *schema, const floe_ice_snapshot_t *parent,
                           attempt_t *a, int64_t seq, totals_t *tot, floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    floe_ice_snapshot_content_t sc;
    if (floe_ice_snapshot_content_read(io, parent, &sc, err) < 0) return -1;
    bool *found = calloc(c->nremoves ? c->nremoves : 1, sizeof *found);
    const floe_ice_manifest_entry_t **gone_v =
        calloc(c->nremoves ? c->nremoves : 1, sizeof *gone_v);
    size_t ngone = 0;
    int rc = found && gone_v ? 0 : floe_err_oom(err);
    for (size_t m = 0; rc == 0 && m < sc.nmanifests; m++) {
        bool touched = false;
        for (size_t k = 0; k < sc.nentries[m]; k++) {
            const floe_ice_manifest_entry_t *e = &sc.entries[m][k];
            if (e->status != FLOE_ICE_DELETED && path_in(e->file.path, c->removes, c->nremoves))
                touched = true;
        }
        if (!touched) {
            if (still_needed(&sc.manifests[m])) rc = push_manifest(a, &sc.manifests[m], err);
            continue;
        }
        floe_ice_manifest_entry_t *ne = calloc(sc.nentries[m], sizeof *ne);
        size_t nn = 0;
        if (!ne) {
            rc = floe_err_oom(err);
            break;
        }
        for (size_t k = 0; k < sc.nentries[m]; k++) {
            const floe_ice_manifest_entry_t *e = &sc.entries[m][k];
            if (e->status == FLOE_ICE_DELETED) continue;
            ne[nn] = *e;
            bool gone = false;
            for (size_t r = 0; r < c->nremoves; r++)
                if (strcmp(e->file.path, c->removes[r]) == 0) {
                    if (!found[r]) gone_v[ngone++] = e;
                    found[r] = true;
                    gone = true;
                }
            if (gone) {
                ne[nn].status = FLOE_ICE_DELETED;
                ne[nn].snapshot_id = c->snapshot_id;
                count_remove(tot, &e->file);
            } else {
                ne[nn].status = FLOE_ICE_EXISTING;
            }
            nn++;
        }
        rc = write_manifest(c, md, schema, a, sc.manifests[m].spec_id, sc.manifests[m].content, ne,
                            nn, seq, err);
        a->replaced++;
        free(ne);
    }
    for (size_t r = 0; rc == 0 && r < c->nremoves; r++)
        if (!found[r])
            rc = floe_err_set(err, FLOE_ECONFLICT, "rewrite: %s is no longer live", c->removes[r]);
    if (rc == 0 && c->base >= 0) rc = check_since(c, md, gone_v, ngone, err);
    free(gone_v);
    free(found);
    floe_ice_snapshot_content_free(&sc);
    return rc;
}

/* The parent's manifests, after this snapshot's own (newest first). */
static int carry_manifests(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                           const floe_ice_schema_t *schema, const floe_ice_snapshot_t *parent,
                           attempt_t *a, int64_t seq, totals_t *tot, floe_err_t *err)
{
    if (!parent) {
        if (c->nremoves)
            return floe_err_set(err, FLOE_ECONFLICT,
                                "rewrite: %s is no longer live (table is empty)", c->removes[0]);
        return 0;
    }
    if (c->op == FLOE_ICE_OP_REWRITE) {
        return carry_rewritten(c, md, schema, parent, a, seq, tot, err);
    }
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    floe_ice_manifest_file_t *pm;
    size_t np;
    if (floe_ice_manifest_list_read(io, parent->manifest_list, &pm, &np, err) < 0) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < np; i++)
        if (still_needed(&pm[i])) rc = push_manifest(a, &pm[i], err);
    floe_ice_manifest_files_free(pm, np);
    return rc;
}

/* Manifests and manifest list of the new snapshot, with `schema`. */
static int build_files(floe_ice_commit_t *c, const floe_ice_metadata_t *md,
                       const floe_ice_schema_t *schema, attempt_t *a, floe_ice_snapshot_t *snap,
                       floe_err_t *err)
{
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    const floe_ice_snapshot_t *parent = floe_ice_metadata_current_snapshot(md);
    int64_t seq = md->last_sequence_number + 1;
    totals_t tot;
    memset(&tot, 0, sizeof tot);
    if (add_new_manifests(c, md, schema, a, seq, &tot, err) < 0 ||
        carry_manifests(c, md, schema, parent, a, seq, &tot, err) < 0)
        return -1;
    /* merge small manifests, so the list stays short however many commits */
    floe_ice_merge_cfg_t mc;
    floe_ice_merge_cfg_from(&md->properties, &mc);
    merge_ctx_t mx = {c, md, schema, a, seq};
    size_t merged = 0;
    if (floe_ice_merge_manifests(io, &mc, c->snapshot_id, &a->list, &a->nlist, merge_write, &mx,
                                 &merged, err) < 0)
        return -1;
    a->merged = merged;
    a->replaced += merged;

    /* manifest list */
    if (!(a->list_path = new_path(md, "snap", c->snapshot_id, -1))) return floe_err_oom(err);
    int rc = floe_ice_manifest_list_write(io, a->list_path, c->snapshot_id,
                                          parent ? parent->snapshot_id : -1, seq, a->list, a->nlist,
                                          &(floe_ice_manifest_opts_t){c->codec}, err);
    if (rc == 0 || (err && err->code != FLOE_EEXIST)) {
        floe_err_t e2;
        if (note_written(a, a->list_path, &e2) < 0 && rc == 0) return floe_err_oom(err);
    }
    if (rc < 0) return -1;

    memset(snap, 0, sizeof *snap);
    snap->snapshot_id = c->snapshot_id;
    snap->parent_id = parent ? parent->snapshot_id : -1;
    snap->sequence_number = seq;
    snap->timestamp_ms = floe_wall_ms();
    if (parent && snap->timestamp_ms < parent->timestamp_ms)
        snap->timestamp_ms = parent->timestamp_ms;
    snap->schema_id = schema->schema_id;
    snap->manifest_list = a->list_path; /* borrowed */
    switch (c->op) {
    case FLOE_ICE_OP_APPEND: snap->operation = "append"; break;
    case FLOE_ICE_OP_REWRITE:
        /* "replace" keeps the table's rows (compaction, also of delete
         * files); a rewrite that adds or drops rows otherwise changes
         * data: "overwrite" */
        snap->operation =
            tot.removed_del || tot.added_records == tot.deleted_records ? "replace" : "overwrite";
        break;
    default:
        snap->operation = tot.added_del ? (tot.added_data ? "overwrite" : "delete") : "append";
        break;
    }
    if (build_summary(c, parent, &tot, a, &snap->summary) < 0) {
        floe_ice_props_clear(&snap->summary);
        return floe_err_oom(err);
    }
    return 0;
}

/* Build this producer's snapshot on top of t's main branch: write its
 * manifests and manifest list, fill the two updates. */
static int build(floe_ice_commit_t *c, const floe_ice_table_t *t, attempt_t *a,
                 floe_ice_snapshot_t *snap, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);

    /* the schema this snapshot is written with: the current one, or the
     * one set_schema asks for (with the id add-schema will give it) */
    const floe_ice_schema_t *schema = floe_ice_metadata_current_schema(md);
    floe_ice_schema_t *own = NULL;
    if (c->schema) {
        int32_t maxid = -1;
        schema = NULL;
        for (size_t i = 0; i < md->nschemas; i++) {
            if (!schema && floe_ice_schema_same(md->schemas[i], c->schema)) schema = md->schemas[i];
            if (md->schemas[i]->schema_id > maxid) maxid = md->schemas[i]->schema_id;
        }
        if (!schema) {
            if (!(own = floe_ice_schema_dup(c->schema))) return floe_err_oom(err);
            own->schema_id = maxid + 1;
            schema = own;
        }
    }
    int rc = build_files(c, md, schema, a, snap, err);
    floe_ice_schema_free(own);
    return rc;
}

/* After an unknown outcome: 1 if our snapshot is in the table, 0 if not,
 * -1 if we cannot tell. */
static int landed(floe_ice_commit_t *c, floe_err_t *err)
{
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(c->cat, c->ns, c->name, &t, err) < 0) return -1;
    int r = floe_ice_metadata_snapshot(floe_ice_table_metadata(t), c->snapshot_id) != NULL;
    floe_ice_table_free(t);
    return r;
}

/* The optimistic loop shared by every writer of a table (see commit_int.h). */
int floe_ice_retry(floe_ice_catalog_t *cat, const char *ns, const char *name, const char *what,
                   int max_attempts, floe_ice_attempt_fn fn, void *ctx, int *attempts,
                   floe_err_t *err)
{
    int n = 0;
    if (attempts) *attempts = 0;
    for (;;) {
        if (n >= (max_attempts < 1 ? 1 : max_attempts))
            return floe_err_retry(err, FLOE_ECONFLICT,
                                  "%s on %s.%s: gave up after %d conflicting attempts", what, ns,
                                  name, n);
        n++;
        if (attempts) *attempts = n;
        floe_ice_table_t *t;
        if (floe_ice_catalog_load_table(cat, ns, name, &t, err) < 0) return -1;
        int rc = fn(ctx, t, err);
        floe_ice_table_free(t);
        if (rc >= 0) return rc;
        if (!err || err->code != FLOE_ECONFLICT || !err->retriable) return -1;
        FLOE_INFO("iceberg: %s on %s.%s conflicted (attempt %d): %s", what, ns, name, n, err->msg);
        /* jittered backoff so racing writers stop colliding in lockstep */
        int cap = n < 20 ? n : 20;
        floe_sleep_ms((int64_t)(floe_rand_u64() % (uint64_t)(cap + 1)));
    }
}

void floe_ice_reqs_same_head(const floe_ice_metadata_t *md, floe_ice_req_t reqs[2])
{
    memset(reqs, 0, 2 * sizeof *reqs);
    reqs[0].kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID;
    memcpy(reqs[0].uuid, md->table_uuid, 37);
    reqs[1].kind = FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID;
    strcpy(reqs[1].ref, "main");
    reqs[1].value = md->current_snapshot_id;
}

/* One attempt of a producer on the freshly loaded table t. */
static int commit_attempt(void *ctx, const floe_ice_table_t *t, floe_err_t *err)
{
    floe_ice_commit_t *c = ctx;
    floe_fileio_t *io = floe_ice_catalog_io(c->cat);
    if (c->validate) {
        int v = c->validate(c->validate_ctx, t, err);
        if (v != 0) return v;
    }
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    attempt_t a;
    memset(&a, 0, sizeof a);
    floe_ice_snapshot_t snap;
    memset(&snap, 0, sizeof snap);
    if (build(c, t, &a, &snap, err) < 0) {
        floe_ice_props_clear(&snap.summary);
        attempt_cleanup(io, &a, DELETE_FILES);
        return -1;
    }
    floe_ice_req_t reqs[3];
    memset(reqs, 0, sizeof reqs);
    floe_ice_reqs_same_head(md, reqs);
    reqs[2].kind = FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID;
    reqs[2].value = md->current_schema_id;
    floe_ice_update_t ups[5];
    memset(ups, 0, sizeof ups);
    size_t nu = 0;
    if (md->format_version < 2) {
        /* we write v2 manifests and sequence numbers: upgrade v1 tables */
        ups[nu].kind = FLOE_ICE_UP_UPGRADE_FORMAT_VERSION;
        ups[nu++].id = 2;
    }
    if (c->schema) {
        ups[nu].kind = FLOE_ICE_UP_ADD_SCHEMA;
        ups[nu++].schema = c->schema;
        ups[nu].kind = FLOE_ICE_UP_SET_CURRENT_SCHEMA;
        ups[nu++].id = -1;
    }
    ups[nu].kind = FLOE_ICE_UP_ADD_SNAPSHOT;
    ups[nu++].snapshot = &snap;
    ups[nu].kind = FLOE_ICE_UP_SET_SNAPSHOT_REF;
    ups[nu].ref.name = "main";
    ups[nu].ref.snapshot_id = c->snapshot_id;
    ups[nu].ref.max_ref_age_ms = ups[nu].ref.max_snapshot_age_ms = -1;
    ups[nu].ref.min_snapshots_to_keep = -1;
    nu++;
    floe_ice_table_t *nt = NULL;
    int rc = floe_ice_catalog_commit_on(c->cat, t, reqs, c->schema ? 3 : 2, ups, nu, &nt, err);
    floe_ice_props_clear(&snap.summary);
    if (rc == 0) {
        note_stats(c, &a);
        if (nt) c->stats.metadata_files_deleted = nt->metadata_files_deleted;
        floe_ice_table_free(nt);
        attempt_cleanup(io, &a, DELETE_UNUSED);
        return 0;
    }
    if (err && err->code == FLOE_EUNKNOWN) {
        floe_err_t saved = *err, e2;
        int l = landed(c, &e2);
        if (l == 1) {
            note_stats(c, &a);
            attempt_cleanup(io, &a, DELETE_UNUSED);
            return 0;
        }
        if (l < 0) {
            attempt_cleanup(io, &a, KEEP_FILES); /* keep the files: they may be referenced */
            *err = saved;
            return -1;
        }
        attempt_cleanup(io, &a, DELETE_FILES); /* not published: go again */
        return floe_err_retry(err, FLOE_ECONFLICT, "not published (%s)", saved.msg);
    }
    attempt_cleanup(io, &a, DELETE_FILES);
    if (err && err->code == FLOE_ECONFLICT) err->retriable = true; /* lost the race */
    return -1;
}

int floe_ice_commit_run(floe_ice_commit_t *c, int64_t *snapshot_id, floe_err_t *err)
{
    memset(&c->stats, 0, sizeof c->stats);
    int rc = floe_ice_retry(c->cat, c->ns, c->name, "commit", c->max_attempts, commit_attempt, c,
                            &c->attempts, err);
    if (rc == 0 && snapshot_id) *snapshot_id = c->snapshot_id;
    return rc;
}
