/* The filesystem catalog's commit locks and multi-table transactions:
 * process-wide lock stripes per table, and transactions staged under
 * WAREHOUSE/_floe_txn/ with a redo journal rolled forward at open. */
#include "iceberg/catalog_fs_int.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/commit_int.h"
#include "iceberg/metadata_json_int.h"
#include "util/diag.h"
#include "util/fs.h"

/* Commits to one table are serialized by a process-wide lock stripe
 * chosen by warehouse and table (every catalog over the same warehouse in
 * this process, the table engine's and the REST server's, shares them);
 * a transaction holds the stripes of all its tables, taken in ascending
 * order so two transactions cannot deadlock. */
static pthread_mutex_t stripes[FLOE_ICE_FS_STRIPES];
static pthread_once_t stripes_once = PTHREAD_ONCE_INIT;
/* transactions under way in this process: their staged folders have no
 * journal yet, and a catalog opening meanwhile must not take them for
 * the leftovers of a crash */
static atomic_int live_txns;

static void stripes_init(void)
{
    for (size_t i = 0; i < FLOE_ICE_FS_STRIPES; i++) pthread_mutex_init(&stripes[i], NULL);
}

size_t floe_ice_fs_stripe_of(const floe_ice_fs_t *c, const char *ns, const char *name)
{
    uint64_t h = 1469598103934665603ull;
    const char *parts[3] = {c->warehouse, ns, name};
    for (size_t k = 0; k < 3; k++)
        for (const char *p = parts[k];; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
            if (!*p) break;
        }
    return (size_t)(h % FLOE_ICE_FS_STRIPES);
}

/* Lock (or unlock) the stripes marked in held[], ascending. */
void floe_ice_fs_stripes_lock(const bool *held, bool lock)
{
    pthread_once(&stripes_once, stripes_init);
    for (size_t i = 0; i < FLOE_ICE_FS_STRIPES; i++)
        if (held[i]) {
            if (lock) pthread_mutex_lock(&stripes[i]);
            else
                pthread_mutex_unlock(&stripes[i]);
        }
}

#define TXN_DIR "_floe_txn"

/* Roll journal WAREHOUSE/_floe_txn/<id>.json forward: floe_ice_fs_publish every
 * table still at its expected version; one already at its new version
 * with the staged bytes is done; one that moved elsewhere is an ERROR
 * (left as it is).  Then the journal and its staged files go.  -1 when
 * storage failed (the journal stays for the next try). */
static int roll_forward(floe_ice_fs_t *c, const char *id)
{
    floe_fileio_t *io = c->base.io;
    char *jpath = floe_ice_fs_path(c->warehouse, TXN_DIR, id, NULL);
    char *sdir = jpath ? strndup(jpath, strlen(jpath) - 5) : NULL; /* without ".json" */
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t err;
    json_t *j = NULL;
    int rc = -1;
    bool held[FLOE_ICE_FS_STRIPES] = {false}, locked = false;
    if (!jpath || !sdir) goto out;
    if (floe_fileio_read(io, jpath, 0, &b, &err) < 0) {
        if (err.code == FLOE_ENOENT) rc = 0; /* finished by another thread */
        else
            FLOE_WARN("iceberg: transaction journal %s unreadable: %s", jpath, err.msg);
        goto out;
    }
    j = mj_load((const char *)b.data, b.len, &err);
    json_t *ts = j ? json_object_get(j, "tables") : NULL;
    if (!json_is_array(ts)) {
        FLOE_ERROR("iceberg: transaction journal %s is not a journal: removed", jpath);
        rc = floe_fileio_remove(io, jpath, &err);
        goto out;
    }
    for (size_t i = 0; i < json_array_size(ts); i++) {
        const char *ns = json_string_value(json_object_get(json_array_get(ts, i), "namespace"));
        const char *name = json_string_value(json_object_get(json_array_get(ts, i), "name"));
        if (ns && name) held[floe_ice_fs_stripe_of(c, ns, name)] = true;
    }
    floe_ice_fs_stripes_lock(held, true);
    locked = true;
    bool still = false;
    if (floe_fileio_exists(io, jpath, &still, &err) < 0) goto out;
    if (!still) { /* the transaction finished it while we waited */
        rc = 0;
        goto out;
    }
    bool io_failed = false;
    for (size_t i = 0; i < json_array_size(ts); i++) {
        json_t *e = json_array_get(ts, i);
        const char *ns = json_string_value(json_object_get(e, "namespace"));
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *staged = json_string_value(json_object_get(e, "staged"));
        const char *newloc = json_string_value(json_object_get(e, "new-location"));
        json_int_t ev = json_integer_value(json_object_get(e, "expected-version"));
        if (!ns || !name || !staged || !newloc || ev < 1) {
            FLOE_ERROR("iceberg: transaction %s: table entry %zu malformed: left", id, i);
            continue;
        }
        char *mdir = floe_ice_fs_path(c->warehouse, ns, name, "metadata");
        int64_t cv = 0;
        floe_buf_t sb = FLOE_BUF_INIT, nb = FLOE_BUF_INIT;
        if (!mdir || floe_ice_fs_current_version(io, mdir, &cv, &err) < 0 ||
            floe_fileio_read(io, staged, FLOE_ICE_MAX_METADATA_BYTES, &sb, &err) < 0 ||
            (!floe_buf_cstr(&sb) && floe_err_oom(&err) < 0)) {
            if (mdir && err.code == FLOE_ENOENT)
                FLOE_ERROR("iceberg: transaction %s: %s.%s: %s: left as it is", id, ns, name,
                           err.msg);
            else
                io_failed = true;
        } else if (cv == ev) {
            if (floe_ice_fs_publish(c, ns, name, ev + 1, NULL, (const char *)sb.data, NULL, NULL,
                                    NULL, &err) < 0) {
                if (err.code == FLOE_ECONFLICT)
                    FLOE_ERROR("iceberg: transaction %s: %s.%s: %s outside floe: its part of "
                               "the transaction is left",
                               id, ns, name, err.msg);
                else {
                    FLOE_WARN("iceberg: transaction %s: publishing %s.%s: %s", id, ns, name,
                              err.msg);
                    io_failed = true;
                }
            } else
                FLOE_INFO("iceberg: transaction %s: rolled %s.%s forward to v%" PRId64, id, ns,
                          name, (int64_t)ev + 1);
        } else if (cv > ev &&
                   floe_fileio_read(io, newloc, FLOE_ICE_MAX_METADATA_BYTES, &nb, &err) < 0) {
            io_failed = true;
        } else if (cv < ev || nb.len != sb.len || memcmp(nb.data, sb.data, sb.len)) {
            FLOE_ERROR("iceberg: transaction %s: %s.%s moved from v%" PRId64 " to v%" PRId64
                       " outside floe: its part of the transaction is left",
                       id, ns, name, (int64_t)ev, cv);
        }
        floe_buf_free(&sb);
        floe_buf_free(&nb);
        free(mdir);
    }
    if (io_failed) goto out;
    if (floe_fileio_remove(io, jpath, &err) < 0) goto out;
    if (floe_ice_fs_remove_tree(io, sdir, &err) < 0)
        FLOE_DEBUG("iceberg: transaction %s: staged files stay: %s", id, err.msg);
    rc = 0;
out:
    if (locked) floe_ice_fs_stripes_lock(held, false);
    json_decref(j);
    floe_buf_free(&b);
    free(jpath);
    free(sdir);
    return rc;
}

/* Roll every pending journal forward; the ones storage kept from
 * finishing mark the catalog pending (tried again before the next load
 * or commit).  At open, staged folders without a journal (a transaction
 * that died before its journal) go too. */
void floe_ice_fs_recover_at(floe_ice_fs_t *c, bool at_open)
{
    atomic_store(&c->pending, false);
    char *dir = floe_ice_fs_path(c->warehouse, TXN_DIR, NULL, NULL);
    char **names = NULL;
    size_t n = 0;
    floe_err_t err;
    if (!dir || floe_fileio_list(c->base.io, dir, &names, &n, &err) < 0) {
        if (dir) FLOE_WARN("iceberg: cannot list %s: %s", dir, err.msg);
        atomic_store(&c->pending, true);
        free(dir);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(names[i]);
        if (l > 5 && !strcmp(names[i] + l - 5, ".json")) {
            if (roll_forward(c, names[i]) < 0) atomic_store(&c->pending, true);
        } else if (at_open && atomic_load(&live_txns) == 0 && !strchr(names[i], '.')) {
            char js[160];
            snprintf(js, sizeof js, "%s.json", names[i]);
            bool journaled = false;
            for (size_t k = 0; k < n; k++) journaled = journaled || !strcmp(names[k], js);
            char *p = journaled ? NULL : floe_ice_fs_path(dir, names[i], NULL, NULL);
            if (p && floe_ice_fs_remove_tree(c->base.io, p, &err) < 0)
                FLOE_DEBUG("iceberg: cannot remove %s: %s", p, err.msg);
            free(p);
        }
    }
    floe_fileio_names_free(names, n);
    free(dir);
}

void floe_ice_fs_recover(floe_ice_fs_t *c)
{
    floe_ice_fs_recover_at(c, false);
}

/* A transaction over n tables (see floe_ice_catalog_commit_tx): under the
 * stripes of all of them, every table's next metadata is built and
 * staged, then the journal naming them is written (the commit point),
 * then every table is published, then the journal goes. */
int floe_ice_fs_commit_tx(floe_ice_fs_t *c, const floe_ice_table_change_t *ch, size_t n,
                          size_t *failed, floe_err_t *err)
{
    if (atomic_load(&c->pending)) floe_ice_fs_recover(c);
    int rc = -1;
    bool held[FLOE_ICE_FS_STRIPES] = {false};
    for (size_t i = 0; i < n; i++) {
        if (floe_ice_fs_check_ns(ch[i].ns, err) < 0 ||
            floe_ice_fs_check_name("table", ch[i].name, err) < 0) {
            if (failed) *failed = i;
            return -1;
        }
        held[floe_ice_fs_stripe_of(c, ch[i].ns, ch[i].name)] = true;
    }
    floe_ice_table_t **cur = calloc(n, sizeof *cur);
    floe_ice_metadata_t **md = calloc(n, sizeof *md);
    char **json = calloc(n, sizeof *json), **staged = calloc(n, sizeof *staged);
    char id[37], *jpath = NULL, *sdir = NULL, *jtext = NULL;
    floe_ice_uuid4(id);
    json_t *j = NULL, *ts = NULL;
    if (!cur || !md || !json || !staged) {
        free(cur);
        free(md);
        free(json);
        free(staged);
        return floe_err_oom(err);
    }
    atomic_fetch_add(&live_txns, 1);
    floe_ice_fs_stripes_lock(held, true);
    for (size_t i = 0; i < n; i++)
        if (floe_ice_fs_prepare(c, ch[i].ns, ch[i].name, NULL, ch[i].reqs, ch[i].nreqs, ch[i].ups,
                                ch[i].nups, &cur[i], &md[i], err) < 0) {
            if (failed) *failed = i;
            goto out;
        }
    if (failed) *failed = n;
    char jname[48];
    snprintf(jname, sizeof jname, "%s.json", id);
    jpath = floe_ice_fs_path(c->warehouse, TXN_DIR, jname, NULL);
    sdir = floe_ice_fs_path(c->warehouse, TXN_DIR, id, NULL);
    j = json_object();
    ts = json_array();
    if (!jpath || !sdir || !j || !ts || json_object_set_new(j, "transaction", json_string(id)) ||
        json_object_set(j, "tables", ts)) {
        floe_err_oom(err);
        goto out;
    }
    /* 1. every table's new metadata, staged */
    for (size_t i = 0; i < n; i++) {
        char sname[48];
        snprintf(sname, sizeof sname, "%zu.metadata.json", i);
        if (!(json[i] = floe_ice_metadata_to_json(md[i], err))) goto unstage;
        if (!(staged[i] = floe_ice_fs_path(sdir, sname, NULL, NULL))) {
            floe_err_oom(err);
            goto unstage;
        }
        if (floe_fileio_write(c->base.io, staged[i], json[i], strlen(json[i]), FLOE_IO_EXCL, err) <
            0)
            goto unstage;
        char *mdir = floe_ice_fs_path(c->warehouse, ch[i].ns, ch[i].name, "metadata");
        char *newloc = mdir ? floe_ice_fs_metadata_file(mdir, cur[i]->version + 1) : NULL;
        json_t *e = json_object();
        int bad =
            !newloc || !e || json_object_set_new(e, "namespace", json_string(ch[i].ns)) ||
            json_object_set_new(e, "name", json_string(ch[i].name)) ||
            json_object_set_new(e, "expected-version", json_integer(cur[i]->version)) ||
            json_object_set_new(e, "expected-location", json_string(cur[i]->metadata_location)) ||
            json_object_set_new(e, "new-location", json_string(newloc)) ||
            json_object_set_new(e, "staged", json_string(staged[i])) || json_array_append(ts, e);
        json_decref(e);
        free(mdir);
        free(newloc);
        if (bad) {
            floe_err_oom(err);
            goto unstage;
        }
    }
    /* 2. the journal: from here on the transaction is committed */
    jtext = mj_dump(j, err); /* takes j */
    j = NULL;
    if (!jtext) goto unstage;
    if (floe_fileio_write(c->base.io, jpath, jtext, strlen(jtext), FLOE_IO_EXCL, err) < 0) {
        floe_err_t e2;
        if (floe_fileio_remove(c->base.io, jpath, &e2) == 0) goto unstage;
        atomic_store(&c->pending, true);
        floe_err_set(err, FLOE_EUNKNOWN,
                     "transaction %s outcome unknown: writing its journal failed: %s", id, e2.msg);
        goto out;
    }
    /* 3. floe_ice_fs_publish each */
    for (size_t i = 0; i < n; i++) {
        bool hinted = false;
        if (floe_ice_fs_publish(c, ch[i].ns, ch[i].name, cur[i]->version + 1, md[i], json[i], NULL,
                                NULL, &hinted, err) < 0) {
            atomic_store(&c->pending, true);
            char m[FLOE_ERR_MSG_MAX];
            snprintf(m, sizeof m, "%s", err->msg);
            floe_err_set(err, FLOE_EUNKNOWN,
                         "transaction %s is committed but %s.%s is not published yet (finished "
                         "by recovery): %s",
                         id, ch[i].ns, ch[i].name, m);
            goto out;
        }
        if (hinted && floe_ice_props_get_bool(&md[i]->properties,
                                              "write.metadata.delete-after-commit.enabled", false))
            floe_ice_fs_drop_old_versions(c, ch[i].ns, ch[i].name, cur[i], md[i],
                                          cur[i]->version + 1);
    }
    rc = 0;
    /* 4. the journal goes (left behind, recovery finds every table done) */
    floe_err_t e2;
    if (floe_fileio_remove(c->base.io, jpath, &e2) < 0) {
        FLOE_WARN("iceberg: transaction %s done but its journal stays: %s", id, e2.msg);
        atomic_store(&c->pending, true);
        goto out;
    }
unstage:
    if (sdir) {
        floe_err_t e3;
        if (floe_ice_fs_remove_tree(c->base.io, sdir, &e3) < 0)
            FLOE_DEBUG("iceberg: transaction %s: staged files stay: %s", id, e3.msg);
    }
out:
    floe_ice_fs_stripes_lock(held, false);
    atomic_fetch_sub(&live_txns, 1);
    for (size_t i = 0; i < n; i++) {
        floe_ice_table_free(cur[i]);
        floe_ice_metadata_free(md[i]);
        free(json[i]);
        free(staged[i]);
    }
    free(cur);
    free(md);
    free(json);
    free(staged);
    free(jpath);
    free(sdir);
    free(jtext);
    json_decref(ts);
    json_decref(j);
    return rc;
}
