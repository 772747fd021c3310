/* Catalog dispatch, table values, and the filesystem (Hadoop-layout)
 * catalog: WAREHOUSE/NS/T/metadata/vN.metadata.json + version-hint.text.
 * Its commit locks and multi-table transactions are catalog_txn.c. */
#include "iceberg/catalog_fs_int.h"

#include <ctype.h>
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

/* ---- dispatch ---- */

/* the filesystem catalog's own (below) */
static void fs_destroy(floe_ice_catalog_t *cat);
static const struct floe_ice_catalog_ops fs_ops;
static int fs_list_namespaces_in(floe_ice_catalog_t *cat, const char *parent, char ***names,
                                 size_t *n, floe_err_t *err);

void floe_ice_catalog_free(floe_ice_catalog_t *c)
{
    if (c) c->ops->destroy(c);
}

floe_fileio_t *floe_ice_catalog_io(floe_ice_catalog_t *c)
{
    return c->io;
}

int floe_ice_warehouse_of(const char *data_dir, char *out, size_t size, floe_err_t *err)
{
    return floe_path_join(out, size, data_dir, "warehouse", err);
}

int floe_ice_catalog_create_namespace(floe_ice_catalog_t *c, const char *ns, floe_err_t *err)
{
    return c->ops->create_namespace(c, ns, err);
}

int floe_ice_catalog_drop_namespace(floe_ice_catalog_t *c, const char *ns, floe_err_t *err)
{
    return c->ops->drop_namespace(c, ns, err);
}

int floe_ice_catalog_list_namespaces(floe_ice_catalog_t *c, char ***names, size_t *n,
                                     floe_err_t *err)
{
    *names = NULL;
    *n = 0;
    return c->ops->list_namespaces(c, names, n, err);
}

int floe_ice_catalog_list_namespaces_in(floe_ice_catalog_t *c, const char *parent, char ***names,
                                        size_t *n, floe_err_t *err)
{
    *names = NULL;
    *n = 0;
    if (!parent) return c->ops->list_namespaces(c, names, n, err);
    if (c->ops->destroy != fs_destroy)
        return floe_err_set(err, FLOE_EUNSUPPORTED, "this catalog keeps one namespace level");
    return fs_list_namespaces_in(c, parent, names, n, err);
}

int floe_ice_catalog_list_tables(floe_ice_catalog_t *c, const char *ns, char ***names, size_t *n,
                                 floe_err_t *err)
{
    *names = NULL;
    *n = 0;
    return c->ops->list_tables(c, ns, names, n, err);
}

int floe_ice_catalog_load_namespace(floe_ice_catalog_t *c, const char *ns, floe_ice_props_t *out,
                                    floe_err_t *err)
{
    floe_ice_props_clear(out);
    return c->ops->load_namespace(c, ns, out, err);
}

int floe_ice_catalog_update_namespace(floe_ice_catalog_t *c, const char *ns,
                                      const floe_ice_props_t *updates,
                                      const floe_ice_props_t *removals, floe_err_t *err)
{
    return c->ops->update_namespace(c, ns, updates, removals, err);
}

int floe_ice_catalog_table_location(floe_ice_catalog_t *c, const char *ns, const char *name,
                                    char **out, floe_err_t *err)
{
    *out = NULL;
    return c->ops->table_location(c, ns, name, out, err);
}

int floe_ice_catalog_rename_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                  const char *to_ns, const char *to_name, floe_err_t *err)
{
    return c->ops->rename_table(c, ns, name, to_ns, to_name, err);
}

int floe_ice_catalog_create_from(floe_ice_catalog_t *c, const char *ns, const char *name,
                                 const floe_ice_metadata_t *md, floe_ice_table_t **out,
                                 floe_err_t *err)
{
    if (out) *out = NULL;
    return c->ops->create_from(c, ns, name, md, out, err);
}

int floe_ice_catalog_register_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                    const char *metadata_location, floe_ice_table_t **out,
                                    floe_err_t *err)
{
    if (out) *out = NULL;
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_fileio_read(c->io, metadata_location, FLOE_ICE_MAX_METADATA_BYTES, &b, err) < 0) {
        floe_buf_free(&b);
        return -1;
    }
    floe_ice_metadata_t *md = floe_ice_metadata_from_json((const char *)b.data, b.len, err);
    floe_buf_free(&b);
    if (!md) {
        floe_err_wrap(err, "%s", metadata_location);
        return -1;
    }
    int rc = c->ops->create_from(c, ns, name, md, out, err);
    floe_ice_metadata_free(md);
    return rc;
}

int floe_ice_catalog_create_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                  const floe_ice_schema_t *schema, const floe_ice_spec_t *spec,
                                  const floe_ice_sort_order_t *order, const floe_ice_props_t *props,
                                  floe_ice_table_t **out, floe_err_t *err)
{
    if (out) *out = NULL;
    return c->ops->create_table(c, ns, name, schema, spec, order, props, out, err);
}

int floe_ice_catalog_load_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                floe_ice_table_t **out, floe_err_t *err)
{
    *out = NULL;
    return c->ops->load_table(c, ns, name, out, err);
}

int floe_ice_catalog_drop_table(floe_ice_catalog_t *c, const char *ns, const char *name, bool purge,
                                floe_err_t *err)
{
    return c->ops->drop_table(c, ns, name, purge, err);
}

int floe_ice_catalog_commit(floe_ice_catalog_t *c, const char *ns, const char *name,
                            const floe_ice_req_t *reqs, size_t nreqs, const floe_ice_update_t *ups,
                            size_t nups, floe_ice_table_t **out, floe_err_t *err)
{
    if (out) *out = NULL;
    return c->ops->commit(c, ns, name, NULL, reqs, nreqs, ups, nups, out, err);
}

int floe_ice_catalog_commit_on(floe_ice_catalog_t *c, const floe_ice_table_t *base,
                               const floe_ice_req_t *reqs, size_t nreqs,
                               const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                               floe_err_t *err)
{
    if (out) *out = NULL;
    return c->ops->commit(c, base->ns, base->name, base, reqs, nreqs, ups, nups, out, err);
}

/* ---- tables ---- */

floe_ice_table_t *floe_ice_table_make(const char *ns, const char *name, const char *location,
                                      int64_t version, floe_ice_metadata_t *md)
{
    floe_ice_table_t *t = calloc(1, sizeof *t);
    if (t) {
        t->ns = strdup(ns);
        t->name = strdup(name);
        t->metadata_location = strdup(location);
        t->version = version;
        t->md = md;
    }
    if (!t || !t->ns || !t->name || !t->metadata_location) {
        if (t) {
            t->md = md;
            floe_ice_table_free(t);
        } else
            floe_ice_metadata_free(md);
        return NULL;
    }
    return t;
}

const floe_ice_metadata_t *floe_ice_table_metadata(const floe_ice_table_t *t)
{
    return t->md;
}
const char *floe_ice_table_metadata_location(const floe_ice_table_t *t)
{
    return t->metadata_location;
}
const char *floe_ice_table_namespace(const floe_ice_table_t *t)
{
    return t->ns;
}
const char *floe_ice_table_name(const floe_ice_table_t *t)
{
    return t->name;
}
int64_t floe_ice_table_version(const floe_ice_table_t *t)
{
    return t->version;
}

/* ---- the metadata cache ---- */

/* One parsed metadata file and its text, shared by the cache (while it
 * holds the entry) and by every table loaded from it. */
typedef struct floe_ice_md_entry {
    struct floe_ice_md_entry *prev, *next; /* the cache's LRU list, newest first */
    char *path;
    floe_ice_metadata_t *md;
    char *text;
    size_t text_len, bytes;
    atomic_int refs;
} md_entry_t;

static void entry_unref(md_entry_t *e)
{
    if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
        free(e->path);
        floe_ice_metadata_free(e->md);
        free(e->text);
        free(e);
    }
}

/* Takes md and text (freed on failure); one reference, the caller's. */
static md_entry_t *entry_new(const char *path, floe_ice_metadata_t *md, char *text, size_t len)
{
    md_entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) {
        free(e);
        floe_ice_metadata_free(md);
        free(text);
        return NULL;
    }
    e->md = md;
    e->text = text;
    e->text_len = len;
    /* the text, and its parsed form: 1.13 times the text for metadata of
     * 10,000 snapshots (malloc'd bytes, measured with mallinfo2) */
    e->bytes = len + len + len / 4 + sizeof *e;
    atomic_init(&e->refs, 1);
    return e;
}

/* A table over e's metadata: takes the caller's reference to e. */
static floe_ice_table_t *table_shared(const char *ns, const char *name, int64_t version,
                                      md_entry_t *e)
{
    floe_ice_table_t *t = calloc(1, sizeof *t);
    if (t) {
        t->ns = strdup(ns);
        t->name = strdup(name);
        t->metadata_location = strdup(e->path);
        t->version = version;
        t->md = e->md;
        t->shared = e;
    }
    if (!t || !t->ns || !t->name || !t->metadata_location) {
        if (t) floe_ice_table_free(t);
        else
            entry_unref(e);
        return NULL;
    }
    return t;
}

void floe_ice_table_free(floe_ice_table_t *t)
{
    if (!t) return;
    free(t->ns);
    free(t->name);
    free(t->metadata_location);
    if (t->shared) entry_unref(t->shared);
    else
        floe_ice_metadata_free(t->md);
    free(t);
}

const char *floe_ice_table_metadata_text(const floe_ice_table_t *t, size_t *len)
{
    if (!t->shared) return NULL;
    *len = t->shared->text_len;
    return t->shared->text;
}

/* ---- filesystem catalog ---- */

#define NS_MARKER ".floe-namespace"

int floe_ice_fs_check_name(const char *what, const char *s, floe_err_t *err)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 200)
        return floe_err_set(err, FLOE_EINVAL, "%s name must be 1..200 characters", what);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
            return floe_err_set(err, FLOE_EINVAL,
                                "%s name '%.64s': only letters, digits, '_' and '-'", what, s);
    return 0;
}

/* A namespace: one level, or levels joined by FLOE_ICE_NS_SEP, each a
 * name as floe_ice_fs_check_name wants. */
int floe_ice_fs_check_ns(const char *ns, floe_err_t *err)
{
    if (!ns) return floe_ice_fs_check_name("namespace", ns, err);
    int depth = 0;
    for (const char *p = ns;; p++) {
        const char *e = strchr(p, FLOE_ICE_NS_SEP);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char part[201];
        if (n == 0 || n >= sizeof part || ++depth > FLOE_ICE_NS_MAX_DEPTH)
            return floe_err_set(err, FLOE_EINVAL,
                                "namespace: 1..%d levels of 1..200 characters each",
                                FLOE_ICE_NS_MAX_DEPTH);
        memcpy(part, p, n);
        part[n] = '\0';
        if (floe_ice_fs_check_name("namespace", part, err) < 0) return -1;
        if (!e) return 0;
        p = e;
    }
}

char *floe_ice_fs_path(const char *a, const char *b, const char *c, const char *d)
{
    size_t n =
        strlen(a) + (b ? strlen(b) + 1 : 0) + (c ? strlen(c) + 1 : 0) + (d ? strlen(d) + 1 : 0) + 1;
    char *p = malloc(n);
    if (!p) return NULL;
    snprintf(p, n, "%s%s%s%s%s%s%s", a, b ? "/" : "", b ? b : "", c ? "/" : "", c ? c : "",
             d ? "/" : "", d ? d : "");
    /* a multi-level namespace's parts are nested folders */
    for (char *q = p + strlen(a); *q; q++)
        if (*q == FLOE_ICE_NS_SEP) *q = '/';
    return p;
}

char *floe_ice_fs_metadata_file(const char *mdir, int64_t v)
{
    size_t n = strlen(mdir) + 48;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/v%" PRId64 ".metadata.json", mdir, v);
    return p;
}

static void cache_unlink(floe_ice_fs_t *c, md_entry_t *e)
{
    if (e->prev) e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
    c->cached -= e->bytes;
}

/* Drop the least recently used entries beyond the budget.  cmu held. */
static void cache_shrink(floe_ice_fs_t *c)
{
    while (c->cached > c->max_cached && c->tail) {
        md_entry_t *old = c->tail;
        cache_unlink(c, old);
        entry_unref(old);
    }
}

/* The entry of metadata file path, with a reference for the caller. */
static md_entry_t *cache_get(floe_ice_fs_t *c, const char *path)
{
    pthread_mutex_lock(&c->cmu);
    md_entry_t *e = c->head;
    while (e && strcmp(e->path, path)) e = e->next;
    if (e) {
        atomic_fetch_add(&e->refs, 1);
        if (e != c->head) {
            cache_unlink(c, e);
            e->next = c->head;
            c->head->prev = e;
            c->head = e;
            if (!c->tail) c->tail = e;
            c->cached += e->bytes;
        }
    }
    pthread_mutex_unlock(&c->cmu);
    return e;
}

/* Keep e (the cache takes a reference of its own) within the budget. */
static void cache_put(floe_ice_fs_t *c, md_entry_t *e)
{
    pthread_mutex_lock(&c->cmu);
    if (e->bytes <= c->max_cached) {
        atomic_fetch_add(&e->refs, 1);
        e->next = c->head;
        if (c->head) c->head->prev = e;
        c->head = e;
        if (!c->tail) c->tail = e;
        c->cached += e->bytes;
    }
    cache_shrink(c);
    pthread_mutex_unlock(&c->cmu);
}

/* Forget the entries of files under dir (a table's metadata folder, a
 * namespace's folder): a name dropped and created again publishes
 * v1.metadata.json anew. */
static void cache_forget(floe_ice_fs_t *c, const char *dir)
{
    size_t n = strlen(dir);
    pthread_mutex_lock(&c->cmu);
    for (md_entry_t *e = c->head, *next; e; e = next) {
        next = e->next;
        if (!strncmp(e->path, dir, n) && e->path[n] == '/') {
            cache_unlink(c, e);
            entry_unref(e);
        }
    }
    pthread_mutex_unlock(&c->cmu);
}

void floe_ice_catalog_cache_metadata(floe_ice_catalog_t *cat, size_t bytes)
{
    if (cat->ops->destroy != fs_destroy) return;
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    pthread_mutex_lock(&c->cmu);
    c->max_cached = bytes;
    cache_shrink(c);
    pthread_mutex_unlock(&c->cmu);
}

bool floe_ice_fs_metadata_version(const char *name, int64_t *v)
{
    char *end;
    if (name[0] != 'v' || !isdigit((unsigned char)name[1])) return false;
    long long x = strtoll(name + 1, &end, 10);
    if (strcmp(end, ".metadata.json") != 0 || x < 1) return false;
    *v = x;
    return true;
}

/* The current version: version-hint.text, then probe upward (the hint is
 * written after the version and may lag); without a hint, list.  A hint
 * found behind is brought up to date (best effort): readers that trust
 * the hint alone (icebird, DuckDB) then see the table as it is. */
int floe_ice_fs_current_version(floe_fileio_t *io, const char *mdir, int64_t *out, floe_err_t *err)
{
    int64_t v = 0, hinted;
    char *hint = floe_ice_fs_path(mdir, "version-hint.text", NULL, NULL);
    if (!hint) return floe_err_oom(err);
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t e2;
    if (floe_fileio_read(io, hint, 64, &b, &e2) == 0) {
        char tmp[65];
        memcpy(tmp, b.data ? (const char *)b.data : "", b.len);
        tmp[b.len] = '\0';
        char *end;
        long long x = strtoll(tmp, &end, 10);
        while (*end && isspace((unsigned char)*end)) end++;
        if (x >= 1 && *end == '\0' && end != tmp) v = x;
    } else if (e2.code != FLOE_ENOENT && e2.code != FLOE_ERANGE) {
        free(hint);
        floe_buf_free(&b);
        if (err) *err = e2;
        return -1;
    }
    floe_buf_free(&b);
    hinted = v;
    if (v > 0) {
        char *p = floe_ice_fs_metadata_file(mdir, v);
        bool ex = false;
        int rc = p ? floe_fileio_exists(io, p, &ex, err) : floe_err_oom(err);
        free(p);
        if (rc < 0) {
            free(hint);
            return -1;
        }
        if (!ex) v = 0;
    }
    if (v == 0) {
        char **names;
        size_t n;
        if (floe_fileio_list(io, mdir, &names, &n, err) < 0) {
            free(hint);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            int64_t x;
            if (floe_ice_fs_metadata_version(names[i], &x) && x > v) v = x;
        }
        floe_fileio_names_free(names, n);
        if (v == 0) {
            free(hint);
            return floe_err_set(err, FLOE_ENOENT, "no table metadata in %s", mdir);
        }
    }
    for (;;) {
        char *p = floe_ice_fs_metadata_file(mdir, v + 1);
        bool ex = false;
        int rc = p ? floe_fileio_exists(io, p, &ex, err) : floe_err_oom(err);
        free(p);
        if (rc < 0) {
            free(hint);
            return -1;
        }
        if (!ex) break;
        v++;
    }
    if (v != hinted) {
        char vs[32];
        int n = snprintf(vs, sizeof vs, "%" PRId64 "\n", v);
        if (floe_fileio_write(io, hint, vs, (size_t)n, 0, &e2) < 0)
            FLOE_DEBUG("iceberg: cannot bring %s up to v%" PRId64 ": %s", hint, v, e2.msg);
    }
    free(hint);
    *out = v;
    return 0;
}

/* A table of ns.name at version v from metadata file path: md and text
 * (may be NULL; its length len) taken, kept in the cache when it is on
 * (then shared with the table), else md owned by the table. */
static floe_ice_table_t *table_of(floe_ice_fs_t *c, const char *ns, const char *name,
                                  const char *path, int64_t v, floe_ice_metadata_t *md, char *text,
                                  size_t len)
{
    pthread_mutex_lock(&c->cmu);
    bool on = c->max_cached > 0;
    pthread_mutex_unlock(&c->cmu);
    if (!on || !text) {
        free(text);
        return floe_ice_table_make(ns, name, path, v, md);
    }
    md_entry_t *e = entry_new(path, md, text, len);
    if (!e) return NULL;
    cache_put(c, e);
    return table_shared(ns, name, v, e);
}

static int fs_load(floe_ice_fs_t *c, const char *ns, const char *name, floe_ice_table_t **out,
                   floe_err_t *err)
{
    if (floe_ice_fs_check_ns(ns, err) < 0 || floe_ice_fs_check_name("table", name, err) < 0)
        return -1;
    char *mdir = floe_ice_fs_path(c->warehouse, ns, name, "metadata");
    if (!mdir) return floe_err_oom(err);
    int64_t v;
    if (floe_ice_fs_current_version(c->base.io, mdir, &v, err) < 0) {
        if (err && err->code == FLOE_ENOENT)
            floe_err_set(err, FLOE_ENOENT, "table %s.%s does not exist", ns, name);
        free(mdir);
        return -1;
    }
    char *path = floe_ice_fs_metadata_file(mdir, v);
    free(mdir);
    if (!path) return floe_err_oom(err);
    md_entry_t *e = cache_get(c, path);
    if (e) {
        free(path);
        return (*out = table_shared(ns, name, v, e)) ? 0 : floe_err_oom(err);
    }
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_fileio_read(c->base.io, path, FLOE_ICE_MAX_METADATA_BYTES, &b, err) < 0) {
        free(path);
        floe_buf_free(&b);
        return -1;
    }
    floe_ice_metadata_t *md = floe_ice_metadata_from_json((const char *)b.data, b.len, err);
    if (!md) {
        floe_buf_free(&b);
        floe_err_wrap(err, "%s", path);
        free(path);
        return -1;
    }
    size_t len = b.len;
    char *text = floe_buf_cstr(&b) ? (char *)floe_buf_detach(&b, &len) : NULL;
    floe_buf_free(&b);
    *out = table_of(c, ns, name, path, v, md, text, len);
    free(path);
    if (!*out) return floe_err_oom(err);
    return 0;
}

static int fs_load_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                         floe_ice_table_t **out, floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (atomic_load(&c->pending)) floe_ice_fs_recover(c);
    return fs_load(c, ns, name, out, err);
}

/* Publish metadata version v (create-if-absent), then the hint.
 * EEXIST -> ECONFLICT; a failure while publishing -> EUNKNOWN. */
int floe_ice_fs_publish(floe_ice_fs_t *c, const char *ns, const char *name, int64_t v,
                        const floe_ice_metadata_t *md, const char *text, char **path_out,
                        char **json_out, bool *hinted, floe_err_t *err)
{
    if (hinted) *hinted = false;
    char *mdir = floe_ice_fs_path(c->warehouse, ns, name, "metadata");
    char *path = mdir ? floe_ice_fs_metadata_file(mdir, v) : NULL;
    char *hint = mdir ? floe_ice_fs_path(mdir, "version-hint.text", NULL, NULL) : NULL;
    char *json = text ? strdup(text) : floe_ice_metadata_to_json(md, err);
    int rc = -1;
    if (text && !json) floe_err_oom(err);
    if (!mdir || !path || !hint) {
        floe_err_oom(err);
        goto out;
    }
    if (!json) goto out;
    floe_outfile_t *f;
    if (floe_fileio_create(c->base.io, path, FLOE_IO_EXCL, &f, err) < 0) goto out;
    if (floe_outfile_write(f, json, strlen(json), err) < 0) {
        floe_outfile_abort(f);
        goto out;
    }
    if (floe_outfile_close(f, err) < 0) {
        if (err && err->code == FLOE_EEXIST)
            floe_err_retry(err, FLOE_ECONFLICT,
                           "commit conflict: %s.%s version %" PRId64
                           " was published by another writer",
                           ns, name, v);
        else if (err) {
            char m[FLOE_ERR_MSG_MAX];
            snprintf(m, sizeof m, "%s", err->msg);
            floe_err_set(err, FLOE_EUNKNOWN, "commit outcome unknown: publishing %s failed: %s",
                         path, m);
        }
        goto out;
    }
    rc = 0;
    char vs[32];
    int n = snprintf(vs, sizeof vs, "%" PRId64 "\n", v);
    floe_err_t e2;
    if (floe_fileio_write(c->base.io, hint, vs, (size_t)n, 0, &e2) < 0)
        FLOE_WARN("iceberg: %s.%s v%" PRId64 " committed but version-hint not updated: %s", ns,
                  name, v, e2.msg);
    else if (hinted)
        *hinted = true;
    if (path_out) {
        *path_out = path;
        path = NULL;
    }
    if (json_out) {
        *json_out = json;
        json = NULL;
    }
out:
    free(json);
    free(mdir);
    free(path);
    free(hint);
    return rc;
}

static int fs_create_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                           const floe_ice_schema_t *schema, const floe_ice_spec_t *spec,
                           const floe_ice_sort_order_t *order, const floe_ice_props_t *props,
                           floe_ice_table_t **out, floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (floe_ice_fs_check_ns(ns, err) < 0 || floe_ice_fs_check_name("table", name, err) < 0)
        return -1;
    floe_ice_table_t *t = NULL;
    floe_err_t e2;
    if (fs_load(c, ns, name, &t, &e2) == 0) {
        floe_ice_table_free(t);
        return floe_err_set(err, FLOE_EEXIST, "table %s.%s already exists", ns, name);
    }
    if (e2.code != FLOE_ENOENT) {
        if (err) *err = e2;
        return -1;
    }
    /* the namespace and its parents, as needed */
    for (const char *e = ns;; e++) {
        e = strchr(e, FLOE_ICE_NS_SEP);
        char *level = e ? strndup(ns, (size_t)(e - ns)) : strdup(ns);
        int nrc = level ? cat->ops->create_namespace(cat, level, err) : floe_err_oom(err);
        free(level);
        if (nrc < 0 && err && err->code != FLOE_EEXIST) return -1;
        if (!e) break;
    }
    char *loc = floe_ice_fs_path(c->warehouse, ns, name, NULL);
    if (!loc) return floe_err_oom(err);
    floe_ice_metadata_t *md = floe_ice_metadata_new_table(schema, spec, order, loc, props, err);
    free(loc);
    if (!md) return -1;
    char *path = NULL;
    if (floe_ice_fs_publish(c, ns, name, 1, md, NULL, &path, NULL, NULL, err) < 0) {
        if (err && err->code == FLOE_ECONFLICT)
            floe_err_set(err, FLOE_EEXIST, "table %s.%s already exists", ns, name);
        floe_ice_metadata_free(md);
        return -1;
    }
    if (out) {
        *out = floe_ice_table_make(ns, name, path, 1, md);
        md = NULL;
        if (!*out) {
            free(path);
            return floe_err_oom(err);
        }
    }
    floe_ice_metadata_free(md);
    free(path);
    return 0;
}

/* The current table; when base is still the current version (versions are
 * immutable once published), a copy of it instead of a re-read. */
static int fs_current(floe_ice_fs_t *c, const char *ns, const char *name,
                      const floe_ice_table_t *base, floe_ice_table_t **out, floe_err_t *err)
{
    if (base) {
        char *mdir = floe_ice_fs_path(c->warehouse, ns, name, "metadata");
        if (!mdir) return floe_err_oom(err);
        int64_t v;
        int rc = floe_ice_fs_current_version(c->base.io, mdir, &v, err);
        free(mdir);
        if (rc < 0) return -1;
        if (v == base->version) {
            floe_ice_metadata_t *md = floe_ice_metadata_dup(base->md);
            *out = md ? floe_ice_table_make(ns, name, base->metadata_location, v, md) : NULL;
            if (!*out) return floe_err_oom(err);
            return 0;
        }
    }
    return fs_load(c, ns, name, out, err);
}

static bool in_log(const floe_ice_metadata_t *md, const char *file)
{
    for (size_t i = 0; i < md->nmetadata_log; i++)
        if (!strcmp(md->metadata_log[i].file, file)) return true;
    return false;
}

/* After publishing version v with metadata md over cur: delete the
 * metadata files cur knew (its own and its log's) that md's log no longer
 * names: what write.metadata.previous-versions-max lets go.  Only files of
 * this table's metadata folder named vN.metadata.json with N < v are
 * touched.  Returns how many went; failures are logged (orphan removal
 * takes them later). */
size_t floe_ice_fs_drop_old_versions(floe_ice_fs_t *c, const char *ns, const char *name,
                                     const floe_ice_table_t *cur, const floe_ice_metadata_t *md,
                                     int64_t v)
{
    char *mdir = floe_ice_fs_path(c->warehouse, ns, name, "metadata");
    const char **del = calloc(cur->md->nmetadata_log + 1, sizeof *del);
    bool *done = calloc(cur->md->nmetadata_log + 1, sizeof *done);
    size_t n = 0, deleted = 0;
    if (!mdir || !del || !done) goto out;
    size_t dl = strlen(mdir);
    for (size_t i = 0; i <= cur->md->nmetadata_log; i++) {
        const char *f =
            i < cur->md->nmetadata_log ? cur->md->metadata_log[i].file : cur->metadata_location;
        int64_t fv;
        if (strncmp(f, mdir, dl) != 0 || f[dl] != '/' || strchr(f + dl + 1, '/') ||
            !floe_ice_fs_metadata_version(f + dl + 1, &fv) || fv >= v || in_log(md, f))
            continue;
        del[n++] = f;
    }
    if (n) floe_ice_delete_batched(c->base.io, del, n, done);
    for (size_t i = 0; i < n; i++) deleted += done[i];
out:
    free(mdir);
    free(del);
    free(done);
    return deleted;
}

/* A commit's next metadata: the current table into *cur, reqs checked
 * against it, ups applied and the replaced version logged into *mdout.
 * Both the caller's on success. */
int floe_ice_fs_prepare(floe_ice_fs_t *c, const char *ns, const char *name,
                        const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                        const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **curout,
                        floe_ice_metadata_t **mdout, floe_err_t *err)
{
    floe_ice_table_t *cur = NULL;
    if (fs_current(c, ns, name, base, &cur, err) < 0) return -1;
    for (size_t i = 0; i < nreqs; i++)
        if (floe_ice_req_check(&reqs[i], cur->md, err) < 0) {
            floe_ice_table_free(cur);
            return -1;
        }
    floe_ice_metadata_t *md = floe_ice_metadata_dup(cur->md);
    if (!md) {
        floe_ice_table_free(cur);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < nups; i++)
        if (floe_ice_update_apply(md, &ups[i], err) < 0) {
            floe_ice_metadata_free(md);
            floe_ice_table_free(cur);
            return -1;
        }
    /* metadata log: the version this commit replaces, bounded */
    int64_t keep = floe_ice_props_get_i64(&md->properties, "write.metadata.previous-versions-max",
                                          1, INT32_MAX, 100);
    floe_ice_metadata_log_t *nl = realloc(md->metadata_log, (md->nmetadata_log + 1) * sizeof *nl);
    char *prev = strdup(cur->metadata_location);
    if (!nl || !prev) {
        if (nl) md->metadata_log = nl;
        free(prev);
        floe_ice_metadata_free(md);
        floe_ice_table_free(cur);
        return floe_err_oom(err);
    }
    md->metadata_log = nl;
    nl[md->nmetadata_log].timestamp_ms = cur->md->last_updated_ms;
    nl[md->nmetadata_log].file = prev;
    md->nmetadata_log++;
    while (md->nmetadata_log > (size_t)keep) {
        free(md->metadata_log[0].file);
        memmove(md->metadata_log, md->metadata_log + 1, (md->nmetadata_log - 1) * sizeof *nl);
        md->nmetadata_log--;
    }
    *curout = cur;
    *mdout = md;
    return 0;
}

static int fs_commit_locked(floe_ice_fs_t *c, const char *ns, const char *name,
                            const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                            const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                            floe_err_t *err)
{
    floe_ice_table_t *cur = NULL;
    floe_ice_metadata_t *md = NULL;
    if (floe_ice_fs_prepare(c, ns, name, base, reqs, nreqs, ups, nups, &cur, &md, err) < 0)
        return -1;
    int64_t v = cur->version + 1;
    char *path = NULL, *json = NULL;
    bool hinted;
    if (floe_ice_fs_publish(c, ns, name, v, md, NULL, &path, &json, &hinted, err) < 0) {
        floe_ice_metadata_free(md);
        floe_ice_table_free(cur);
        return -1;
    }
    /* old versions go only while the hint names this one: a reader that
     * trusts the hint alone must find the version it names */
    size_t deleted = 0;
    if (hinted && floe_ice_props_get_bool(&md->properties,
                                          "write.metadata.delete-after-commit.enabled", false))
        deleted = floe_ice_fs_drop_old_versions(c, ns, name, cur, md, v);
    floe_ice_table_free(cur);
    if (out) {
        /* the new version goes to the cache as published: the next load
         * or commit of the table starts from it */
        *out = table_of(c, ns, name, path, v, md, json, json ? strlen(json) : 0);
        md = NULL;
        json = NULL;
        if (!*out)
            FLOE_WARN("iceberg: committed %s.%s v%" PRId64 " but out of memory for the result", ns,
                      name, v);
        else
            (*out)->metadata_files_deleted = deleted;
    }
    floe_ice_metadata_free(md);
    free(json);
    free(path);
    return 0;
}

static int fs_commit(floe_ice_catalog_t *cat, const char *ns, const char *name,
                     const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                     const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                     floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (atomic_load(&c->pending)) floe_ice_fs_recover(c);
    bool held[FLOE_ICE_FS_STRIPES] = {false};
    held[floe_ice_fs_stripe_of(c, ns, name)] = true;
    floe_ice_fs_stripes_lock(held, true);
    int rc = fs_commit_locked(c, ns, name, base, reqs, nreqs, ups, nups, out, err);
    floe_ice_fs_stripes_lock(held, false);
    return rc;
}

int floe_ice_catalog_commit_tx(floe_ice_catalog_t *c, const floe_ice_table_change_t *ch, size_t n,
                               size_t *failed, floe_err_t *err)
{
    if (failed) *failed = n;
    if (c->ops != &fs_ops)
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "multi-table transactions need floe's filesystem catalog");
    return floe_ice_fs_commit_tx((floe_ice_fs_t *)c, ch, n, failed, err);
}

static int ns_exists(floe_ice_fs_t *c, const char *ns, floe_err_t *err);

static int fs_create_namespace(floe_ice_catalog_t *cat, const char *ns, floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (floe_ice_fs_check_ns(ns, err) < 0) return -1;
    const char *last = strrchr(ns, FLOE_ICE_NS_SEP);
    if (last) {
        /* a level goes under an existing parent */
        char *parent = strndup(ns, (size_t)(last - ns));
        int prc = parent ? ns_exists(c, parent, err) : floe_err_oom(err);
        free(parent);
        if (prc < 0) return -1;
    }
    char *p = floe_ice_fs_path(c->warehouse, ns, NS_MARKER, NULL);
    if (!p) return floe_err_oom(err);
    int rc = floe_fileio_write(cat->io, p, "", 0, FLOE_IO_EXCL, err);
    if (rc < 0 && err && err->code == FLOE_EEXIST)
        floe_err_set(err, FLOE_EEXIST, "namespace %s already exists", ns);
    free(p);
    return rc;
}

static int fs_list_tables(floe_ice_catalog_t *cat, const char *ns, char ***names, size_t *n,
                          floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (floe_ice_fs_check_ns(ns, err) < 0) return -1;
    char *dir = floe_ice_fs_path(c->warehouse, ns, NULL, NULL);
    if (!dir) return floe_err_oom(err);
    char **all;
    size_t na;
    if (floe_fileio_list(cat->io, dir, &all, &na, err) < 0) {
        free(dir);
        return -1;
    }
    size_t o = 0;
    for (size_t i = 0; i < na; i++) {
        bool keep = false;
        if (floe_ice_fs_check_name("table", all[i], NULL) == 0) {
            char *mdir = floe_ice_fs_path(dir, all[i], "metadata", NULL);
            int64_t v;
            floe_err_t e2;
            keep = mdir && floe_ice_fs_current_version(cat->io, mdir, &v, &e2) == 0;
            free(mdir);
        }
        if (keep) all[o++] = all[i];
        else
            free(all[i]);
    }
    free(dir);
    *names = all;
    *n = o;
    return 0;
}

/* The namespaces in folder dir: its folders holding a marker. */
static int list_ns_in(floe_fileio_t *io, const char *dir, char ***names, size_t *n, floe_err_t *err)
{
    char **all;
    size_t na;
    if (floe_fileio_list(io, dir, &all, &na, err) < 0) return -1;
    size_t o = 0;
    for (size_t i = 0; i < na; i++) {
        bool keep = false;
        if (floe_ice_fs_check_name("namespace", all[i], NULL) == 0) {
            char *m = floe_ice_fs_path(dir, all[i], NS_MARKER, NULL);
            floe_err_t e2;
            keep = m && floe_fileio_exists(io, m, &keep, &e2) == 0 && keep;
            free(m);
        }
        if (keep) all[o++] = all[i];
        else
            free(all[i]);
    }
    *names = all;
    *n = o;
    return 0;
}

static int fs_list_namespaces(floe_ice_catalog_t *cat, char ***names, size_t *n, floe_err_t *err)
{
    return list_ns_in(cat->io, ((floe_ice_fs_t *)cat)->warehouse, names, n, err);
}

static int fs_list_namespaces_in(floe_ice_catalog_t *cat, const char *parent, char ***names,
                                 size_t *n, floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (ns_exists(c, parent, err) < 0) return -1;
    char *dir = floe_ice_fs_path(c->warehouse, parent, NULL, NULL);
    int rc = dir ? list_ns_in(cat->io, dir, names, n, err) : floe_err_oom(err);
    free(dir);
    return rc;
}

/* Delete a tree through the FileIO: entries first, then the folder. */
int floe_ice_fs_remove_tree(floe_fileio_t *io, const char *path, floe_err_t *err)
{
    char **names;
    size_t n;
    if (floe_fileio_list(io, path, &names, &n, err) < 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *p = floe_ice_fs_path(path, names[i], NULL, NULL);
        rc = p ? floe_ice_fs_remove_tree(io, p, err) : floe_err_oom(err);
        free(p);
    }
    floe_fileio_names_free(names, n);
    if (rc == 0) rc = floe_fileio_remove(io, path, err);
    return rc;
}

static int fs_drop_namespace(floe_ice_catalog_t *cat, const char *ns, floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    char **t;
    size_t n;
    if (fs_list_tables(cat, ns, &t, &n, err) < 0) return -1;
    floe_fileio_names_free(t, n);
    if (n) return floe_err_set(err, FLOE_EINVAL, "namespace %s is not empty (%zu tables)", ns, n);
    if (fs_list_namespaces_in(cat, ns, &t, &n, err) < 0) return -1;
    floe_fileio_names_free(t, n);
    if (n)
        return floe_err_set(err, FLOE_EINVAL, "namespace %s is not empty (%zu namespaces)", ns, n);
    char *dir = floe_ice_fs_path(c->warehouse, ns, NULL, NULL);
    char *m = floe_ice_fs_path(c->warehouse, ns, NS_MARKER, NULL);
    bool ex = false;
    int rc = (!dir || !m) ? floe_err_oom(err) : floe_fileio_exists(cat->io, m, &ex, err);
    if (rc == 0 && !ex) rc = floe_err_set(err, FLOE_ENOENT, "namespace %s does not exist", ns);
    if (rc == 0) cache_forget(c, dir);
    if (rc == 0) rc = floe_ice_fs_remove_tree(cat->io, dir, err);
    free(dir);
    free(m);
    return rc;
}

static int fs_drop_table(floe_ice_catalog_t *cat, const char *ns, const char *name, bool purge,
                         floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    floe_ice_table_t *t;
    if (fs_load(c, ns, name, &t, err) < 0) return -1;
    floe_ice_table_free(t);
    char *p = purge ? floe_ice_fs_path(c->warehouse, ns, name, NULL)
                    : floe_ice_fs_path(c->warehouse, ns, name, "metadata");
    if (!p) return floe_err_oom(err);
    cache_forget(c, p);
    int rc = floe_ice_fs_remove_tree(cat->io, p, err);
    free(p);
    return rc;
}

/* Namespace properties live in the namespace's marker file as a JSON
 * object (an empty marker: none). */
static int fs_load_namespace(floe_ice_catalog_t *cat, const char *ns, floe_ice_props_t *out,
                             floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (floe_ice_fs_check_ns(ns, err) < 0) return -1;
    char *m = floe_ice_fs_path(c->warehouse, ns, NS_MARKER, NULL);
    if (!m) return floe_err_oom(err);
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_fileio_read(cat->io, m, 1u << 20, &b, err);
    free(m);
    if (rc < 0) {
        floe_buf_free(&b);
        if (err && err->code == FLOE_ENOENT)
            floe_err_set(err, FLOE_ENOENT, "namespace %s does not exist", ns);
        return -1;
    }
    if (b.len) {
        json_t *j = mj_load((const char *)b.data, b.len, err);
        rc = j ? mj_props_from_json(j, out, NULL, err) : -1;
        json_decref(j);
        if (rc < 0) floe_err_wrap(err, "namespace %s properties", ns);
    }
    floe_buf_free(&b);
    return rc;
}

static int fs_update_namespace(floe_ice_catalog_t *cat, const char *ns,
                               const floe_ice_props_t *updates, const floe_ice_props_t *removals,
                               floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    floe_ice_props_t p = {0};
    if (fs_load_namespace(cat, ns, &p, err) < 0) return -1;
    int rc = 0;
    for (size_t i = 0; removals && i < removals->n; i++)
        floe_ice_props_remove(&p, removals->kv[i].key);
    for (size_t i = 0; rc == 0 && updates && i < updates->n; i++)
        rc = floe_ice_props_set(&p, updates->kv[i].key, updates->kv[i].value);
    char *text = rc == 0 ? mj_dump(mj_props_to_json(&p), err) : NULL;
    char *m = floe_ice_fs_path(c->warehouse, ns, NS_MARKER, NULL);
    if (rc < 0 || !m) rc = floe_err_oom(err);
    else if (!text)
        rc = -1;
    else
        rc = floe_fileio_write(cat->io, m, text, strlen(text), 0, err);
    free(text);
    free(m);
    floe_ice_props_clear(&p);
    return rc;
}

static int ns_exists(floe_ice_fs_t *c, const char *ns, floe_err_t *err)
{
    if (floe_ice_fs_check_ns(ns, err) < 0) return -1;
    char *m = floe_ice_fs_path(c->warehouse, ns, NS_MARKER, NULL);
    bool ex = false;
    int rc = m ? floe_fileio_exists(c->base.io, m, &ex, err) : floe_err_oom(err);
    free(m);
    if (rc == 0 && !ex) rc = floe_err_set(err, FLOE_ENOENT, "namespace %s does not exist", ns);
    return rc;
}

/* Publish md as version 1 of ns.name: EEXIST when the name is taken. */
static int publish_new(floe_ice_fs_t *c, const char *ns, const char *name,
                       const floe_ice_metadata_t *md, floe_ice_table_t **out, floe_err_t *err)
{
    if (floe_ice_fs_check_name("table", name, err) < 0 || ns_exists(c, ns, err) < 0) return -1;
    floe_ice_table_t *t = NULL;
    floe_err_t e2;
    if (fs_load(c, ns, name, &t, &e2) == 0) {
        floe_ice_table_free(t);
        return floe_err_set(err, FLOE_EEXIST, "table %s.%s already exists", ns, name);
    }
    char *path = NULL, *json = NULL;
    if (floe_ice_fs_publish(c, ns, name, 1, md, NULL, &path, &json, NULL, err) < 0) {
        if (err && err->code == FLOE_ECONFLICT)
            floe_err_set(err, FLOE_EEXIST, "table %s.%s already exists", ns, name);
        return -1;
    }
    /* the result, and the cache's first entry of the table */
    floe_ice_metadata_t *dup = floe_ice_metadata_dup(md);
    t = dup ? table_of(c, ns, name, path, 1, dup, json, strlen(json)) : NULL;
    if (!dup) free(json);
    if (out) {
        *out = t;
        if (!t) FLOE_WARN("iceberg: published %s.%s but out of memory for the result", ns, name);
    } else {
        floe_ice_table_free(t);
    }
    free(path);
    return 0;
}

static int fs_rename_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                           const char *to_ns, const char *to_name, floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    floe_ice_table_t *t;
    if (fs_load(c, ns, name, &t, err) < 0) return -1;
    /* the old name's metadata files go with it: the log would name
     * files that no longer exist (a copy: t's may be the cache's) */
    floe_ice_metadata_t *md = floe_ice_metadata_dup(t->md);
    floe_ice_table_free(t);
    if (!md) return floe_err_oom(err);
    for (size_t i = 0; i < md->nmetadata_log; i++) free(md->metadata_log[i].file);
    md->nmetadata_log = 0;
    int rc = publish_new(c, to_ns, to_name, md, NULL, err);
    floe_ice_metadata_free(md);
    if (rc < 0) return -1;
    char *p = floe_ice_fs_path(c->warehouse, ns, name, "metadata");
    if (!p) return floe_err_oom(err);
    cache_forget(c, p);
    rc = floe_ice_fs_remove_tree(cat->io, p, err);
    free(p);
    if (rc < 0)
        floe_err_wrap(err, "renamed %s.%s to %s.%s but the old name remains", ns, name, to_ns,
                      to_name);
    return rc;
}

static int fs_create_from(floe_ice_catalog_t *cat, const char *ns, const char *name,
                          const floe_ice_metadata_t *md, floe_ice_table_t **out, floe_err_t *err)
{
    return publish_new((floe_ice_fs_t *)cat, ns, name, md, out, err);
}

static int fs_table_location(floe_ice_catalog_t *cat, const char *ns, const char *name, char **out,
                             floe_err_t *err)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    if (floe_ice_fs_check_ns(ns, err) < 0 || floe_ice_fs_check_name("table", name, err) < 0)
        return -1;
    return (*out = floe_ice_fs_path(c->warehouse, ns, name, NULL)) ? 0 : floe_err_oom(err);
}

static void fs_destroy(floe_ice_catalog_t *cat)
{
    floe_ice_fs_t *c = (floe_ice_fs_t *)cat;
    while (c->head) {
        md_entry_t *e = c->head;
        cache_unlink(c, e);
        entry_unref(e);
    }
    pthread_mutex_destroy(&c->cmu);
    free(c->warehouse);
    free(c);
}

static const struct floe_ice_catalog_ops fs_ops = {
    fs_create_namespace, fs_drop_namespace,   fs_list_namespaces, fs_list_tables,
    fs_create_table,     fs_load_table,       fs_drop_table,      fs_commit,
    fs_load_namespace,   fs_update_namespace, fs_rename_table,    fs_create_from,
    fs_table_location,   fs_destroy,
};

floe_ice_catalog_t *floe_ice_catalog_fs_new(floe_fileio_t *io, const char *warehouse,
                                            floe_err_t *err)
{
    if (!warehouse || !*warehouse) {
        floe_err_set(err, FLOE_EINVAL, "warehouse path is empty");
        return NULL;
    }
    floe_ice_fs_t *c = calloc(1, sizeof *c);
    if (!c || !(c->warehouse = strdup(warehouse))) {
        free(c);
        floe_err_oom(err);
        return NULL;
    }
    size_t n = strlen(c->warehouse);
    while (n > 1 && c->warehouse[n - 1] == '/') c->warehouse[--n] = '\0';
    pthread_mutex_init(&c->cmu, NULL);
    c->base.ops = &fs_ops;
    c->base.io = io;
    floe_ice_fs_recover_at(c, true);
    return &c->base;
}
