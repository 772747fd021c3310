/* The Iceberg REST catalog server (rest.h): routes under /v1/, request
 * and response JSON (jansson), the spec's error model. */
#include "http/rest.h"

#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/rest_int.h"
#include "util/diag.h"
#include "util/json.h"
#include "util/murmur3.h"

#define MAX_SEGS 8
#define DEFAULT_PAGE 100
#define MAX_TX_TABLES 100

struct floe_rest {
    floe_ice_catalog_t *cat;
    pthread_mutex_t mu; /* the server's mutations, one at a time */
    atomic_uint_fast64_t requests, reports, commits, conflicts, unauthorized;
    floe_rest_cfg_t cfg;
    floe_rest_auth_t *auth;
    floe_rest_idem_t *idem;
    /* what an engine needs to read the tables' files (s3.endpoint, ...),
     * and the credentials vended with rest.vend.credentials */
    floe_ice_props_t io_config, io_secrets;
};

/* Exactly the routes served, in the spec's literal form. */
static const char *const endpoints[] = {
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
};
/* served when rest.vend.credentials is on */
static const char credentials_endpoint[] =
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials";

/* ---- answers ---- */

/* Send j (taken) as the JSON body with status. */
static int send_json(floe_http_resp_t *rs, int status, json_t *j)
{
    rs->status = status;
    rs->content_type = "application/json";
    floe_buf_reset(&rs->body);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int rc = s ? floe_buf_append_str(&rs->body, s) : -1;
    free(s);
    return rc;
}

static int no_content(floe_http_resp_t *rs)
{
    rs->status = 204;
    rs->content_type = "application/json";
    floe_buf_reset(&rs->body);
    return 0;
}

/* An IcebergErrorResponse. */
static int fail(floe_http_resp_t *rs, int code, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(floe_http_resp_t *rs, int code, const char *type, const char *fmt, ...)
{
    char msg[FLOE_ERR_MSG_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return send_json(
        rs, code,
        json_pack("{s:{s:s,s:s,s:i}}", "error", "message", msg, "type", type, "code", code));
}

static int bad(floe_http_resp_t *rs, const char *msg)
{
    return fail(rs, 400, "BadRequestException", "%s", msg);
}

/* The same for helpers that answer and then fail: -1 once answered. */
static int reject(floe_http_resp_t *rs, const char *msg)
{
    bad(rs, msg);
    return -1;
}

typedef enum { ON_TABLE, ON_NAMESPACE } subject_t;

/* A catalog error as the spec's answer: what a missing thing is depends
 * on what the request named. */
static int fail_err(floe_http_resp_t *rs, const floe_err_t *err, subject_t on)
{
    switch (err->code) {
    case FLOE_ENOENT:
        return fail(rs, 404, on == ON_TABLE ? "NoSuchTableException" : "NoSuchNamespaceException",
                    "%s", err->msg);
    case FLOE_EEXIST: return fail(rs, 409, "AlreadyExistsException", "%s", err->msg);
    case FLOE_ECONFLICT: return fail(rs, 409, "CommitFailedException", "%s", err->msg);
    case FLOE_EUNKNOWN: return fail(rs, 500, "CommitStateUnknownException", "%s", err->msg);
    case FLOE_EINVAL:
    case FLOE_ECORRUPT:
    case FLOE_EUNSUPPORTED:
    case FLOE_ERANGE: return fail(rs, 400, "BadRequestException", "%s", err->msg);
    default: return fail(rs, 500, "ServiceFailureException", "%s", err->msg);
    }
}

/* ---- request pieces ---- */

static json_t *body_object(const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    json_error_t je;
    json_t *j = rq->body_len ? json_loadb((const char *)rq->body, rq->body_len, 0, &je) : NULL;
    if (!json_is_object(j)) {
        json_decref(j);
        if (rq->body_len)
            fail(rs, 400, "BadRequestException", "the body is not a JSON object: %s", je.text);
        else
            bad(rs, "the body is not a JSON object");
        return NULL;
    }
    return j;
}

/* A namespace from JSON (an array of strings) as the catalog names it:
 * its levels joined by FLOE_ICE_NS_SEP.  Caller frees; NULL after
 * answering. */
static char *ns_of_json(json_t *a, floe_http_resp_t *rs)
{
    size_t n = json_array_size(a), len = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        const char *p = json_string_value(v);
        if (!p || !*p || strchr(p, FLOE_ICE_NS_SEP)) n = 0;
        len += p ? strlen(p) + 1 : 0;
    }
    if (!json_is_array(a) || n == 0) {
        bad(rs, "namespace must be a non-empty array of non-empty strings");
        return NULL;
    }
    char *ns = malloc(len);
    if (!ns) return NULL;
    char *o = ns;
    for (size_t i = 0; i < n; i++) {
        const char *p = json_string_value(json_array_get(a, i));
        if (i) *o++ = FLOE_ICE_NS_SEP;
        memcpy(o, p, strlen(p));
        o += strlen(p);
    }
    *o = '\0';
    return ns;
}

/* A TableIdentifier {"namespace": [...], "name": "..."}; *ns the
 * caller's to free. */
static int ident_of_json(json_t *j, char **ns, const char **name, floe_http_resp_t *rs)
{
    json_t *n = json_object_get(j, "name");
    *ns = NULL;
    if (!json_is_object(j) || !json_is_string(n))
        return reject(rs, "a table identifier needs a name");
    if (!(*ns = ns_of_json(json_object_get(j, "namespace"), rs))) return -1;
    *name = json_string_value(n);
    return 0;
}

/* The namespace ns as JSON: an array of its levels; with child, one more
 * level. */
static json_t *ns_json_in(const char *ns, const char *child)
{
    json_t *a = json_array();
    for (const char *p = ns; a && p;) {
        const char *e = strchr(p, FLOE_ICE_NS_SEP);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (json_array_append_new(a, json_stringn(p, n))) {
            json_decref(a);
            return NULL;
        }
        p = e ? e + 1 : NULL;
    }
    if (a && child && json_array_append_new(a, json_string(child))) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *ns_json(const char *ns)
{
    return ns_json_in(ns, NULL);
}

static json_t *props_json(const floe_ice_props_t *p)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < p->n; i++)
        if (json_object_set_new(o, p->kv[i].key, json_string(p->kv[i].value))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* String members of o (NULL: none) into p.  -1 after answering. */
static int props_of_json(json_t *o, floe_ice_props_t *p, floe_http_resp_t *rs)
{
    if (!o || json_is_null(o)) return 0;
    if (!json_is_object(o)) return reject(rs, "properties must be an object of strings");
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (!json_is_string(v)) return reject(rs, "properties must be an object of strings");
        if (floe_ice_props_set(p, k, json_string_value(v)) < 0) return -1;
    }
    return 0;
}

/* Does namespace ns exist?  0, or -1 after answering (404 or else). */
static int need_ns(floe_rest_t *r, const char *ns, floe_http_resp_t *rs)
{
    floe_ice_props_t p = {0};
    floe_err_t err;
    int rc = floe_ice_catalog_load_namespace(r->cat, ns, &p, &err);
    floe_ice_props_clear(&p);
    if (rc < 0) return fail_err(rs, &err, ON_NAMESPACE), -1;
    return 0;
}

/* Paging: with no pageToken, everything; with one (empty starts), names
 * after the token, pageSize at a time.  names are sorted; the token is
 * the last name sent.  *from, *to bound the page; *next is the next
 * token (NULL: no more).  -1 after answering 400. */
static int page_of(const floe_http_req_t *rq, char **names, size_t n, size_t *from, size_t *to,
                   const char **next, floe_http_resp_t *rs)
{
    int paged = 0;
    const char *tok = floe_http_query(rq, "pageToken", &paged);
    const char *ps = floe_http_query(rq, "pageSize", NULL);
    *from = 0;
    *to = n;
    *next = NULL;
    long size = DEFAULT_PAGE;
    if (ps && *ps) {
        char *end;
        size = strtol(ps, &end, 10);
        if (*end || size < 1 || size > 100000) return reject(rs, "pageSize must be 1..100000");
    }
    if (!paged) return 0;
    if (tok && *tok)
        while (*from < n && strcmp(names[*from], tok) <= 0) (*from)++;
    if (n - *from > (size_t)size) {
        *to = *from + (size_t)size;
        *next = names[*to - 1];
    }
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- tables as JSON ---- */

/* The table's metadata as JSON; with refs_only, only the snapshots a ref
 * names (snapshots=refs). */
static json_t *metadata_json(const floe_ice_metadata_t *md, bool refs_only, floe_err_t *err)
{
    char *s = floe_ice_metadata_to_json(md, err);
    if (!s) return NULL;
    json_t *j = json_loads(s, 0, NULL);
    free(s);
    if (!j) {
        floe_err_oom(err);
        return NULL;
    }
    json_t *snaps = json_object_get(j, "snapshots");
    if (refs_only && json_is_array(snaps)) {
        for (size_t i = json_array_size(snaps); i-- > 0;) {
            json_int_t id =
                json_integer_value(json_object_get(json_array_get(snaps, i), "snapshot-id"));
            bool keep = false;
            for (size_t k = 0; !keep && k < md->nrefs; k++) keep = md->refs[k].snapshot_id == id;
            if (!keep) json_array_remove(snaps, i);
        }
    }
    return j;
}

/* The ETag of a table's answer: its uuid and metadata version (and the
 * snapshots mode, which changes the answer). */
static void etag_of(const floe_ice_metadata_t *md, int64_t version, bool refs_only, char *out,
                    size_t size)
{
    snprintf(out, size, "\"%s-v%" PRId64 "%s\"", md->table_uuid, version, refs_only ? "-refs" : "");
}

/* The storage credentials vended for a table at location: one
 * StorageCredential for its prefix.  NULL when vending is off. */
static json_t *storage_credentials(floe_rest_t *r, const char *location)
{
    if (!r->cfg.vend_credentials || !r->io_secrets.n) return NULL;
    return json_pack("[{s:s,s:o}]", "prefix", location, "config", props_json(&r->io_secrets));
}

/* The "config" of a LoadTableResult: what an engine needs to read the
 * files (s3.endpoint, s3.path-style-access, s3.region), with the
 * credentials when vending is on; and the storage-credentials. */
static int append_table_config(floe_rest_t *r, const floe_ice_metadata_t *md, floe_buf_t *out)
{
    json_t *cfg = props_json(&r->io_config);
    for (size_t i = 0; cfg && r->cfg.vend_credentials && i < r->io_secrets.n; i++)
        if (json_object_set_new(cfg, r->io_secrets.kv[i].key,
                                json_string(r->io_secrets.kv[i].value))) {
            json_decref(cfg);
            cfg = NULL;
        }
    json_t *sc = storage_credentials(r, md->location);
    char *a = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL, *b = NULL;
    int rc = !a || floe_buf_append_str(out, ",\"config\":") || floe_buf_append_str(out, a);
    if (!rc && sc)
        rc = !(b = json_dumps(sc, JSON_COMPACT)) ||
             floe_buf_append_str(out, ",\"storage-credentials\":") || floe_buf_append_str(out, b);
    json_decref(cfg);
    json_decref(sc);
    free(a);
    free(b);
    return rc ? -1 : 0;
}

/* A LoadTableResult for md, loaded as t (NULL: staged, no
 * metadata-location); a CommitTableResponse (no config) when commit. */
static int send_table(floe_rest_t *r, floe_http_resp_t *rs, const floe_ice_metadata_t *md,
                      const floe_ice_table_t *t, bool refs_only, bool commit)
{
    floe_err_t err;
    char *text = NULL;
    const char *location = t ? floe_ice_table_metadata_location(t) : NULL;
    int64_t version = t ? floe_ice_table_version(t) : 0;
    size_t kept_len = 0;
    /* the metadata file's own text, when the catalog kept it: neither a
     * parse nor a print per request */
    const char *kept = t && !refs_only ? floe_ice_table_metadata_text(t, &kept_len) : NULL;
    if (!kept && refs_only) {
        json_t *m = metadata_json(md, true, &err);
        text = m ? json_dumps(m, JSON_COMPACT) : NULL;
        json_decref(m);
        if (m && !text) return -1;
    } else if (!kept) {
        /* the metadata's own text: no second pass through a JSON tree */
        text = floe_ice_metadata_to_json(md, &err);
    }
    if (!text && !kept) return fail_err(rs, &err, ON_TABLE);
    floe_buf_reset(&rs->body);
    int rc =
        floe_buf_append_str(&rs->body, "{\"metadata\":") ||
        (kept ? floe_buf_append(&rs->body, kept, kept_len) : floe_buf_append_str(&rs->body, text));
    free(text);
    if (location)
        rc = rc || floe_buf_append_str(&rs->body, ",\"metadata-location\":") ||
             floe_json_cstr(&rs->body, location);
    if (!commit) rc = rc || append_table_config(r, md, &rs->body);
    rc = rc || floe_buf_append_u8(&rs->body, '}');
    if (rc) return -1;
    rs->status = 200;
    rs->content_type = "application/json";
    if (location) etag_of(md, version, refs_only, rs->etag, sizeof rs->etag);
    return 0;
}

/* ---- requirements and updates ---- */

typedef struct change {
    floe_ice_req_t *reqs;
    size_t nreqs;
    floe_ice_update_t *ups;
    size_t nups;
} change_t;

static void change_clear(change_t *c)
{
    for (size_t i = 0; i < c->nups; i++) floe_ice_update_clear(&c->ups[i]);
    free(c->ups);
    free(c->reqs);
    memset(c, 0, sizeof *c);
}

static int req_parse(const char *s, size_t n, void *out, floe_err_t *err)
{
    return floe_ice_req_from_json(s, n, out, err);
}

static int update_parse(const char *s, size_t n, void *out, floe_err_t *err)
{
    return floe_ice_update_from_json(s, n, out, err);
}

/* Each element of JSON array a through parse into items (elements of
 * size bytes), counting the parsed ones in *n.  -1 after answering 400
 * (or out of memory). */
static int parse_each(json_t *a, void *items, size_t size, size_t *n,
                      int (*parse)(const char *, size_t, void *, floe_err_t *), const char *what,
                      floe_http_resp_t *rs)
{
    floe_err_t err;
    for (size_t i = 0; i < json_array_size(a); i++) {
        char *s = json_dumps(json_array_get(a, i), JSON_COMPACT);
        if (!s) return -1;
        int rc = parse(s, strlen(s), (char *)items + i * size, &err);
        free(s);
        if (rc < 0) {
            fail(rs, 400, "BadRequestException", "%s %zu: %s", what, i, err.msg);
            return -1;
        }
        (*n)++;
    }
    return 0;
}

/* The requirements and updates of a CommitTableRequest; an unknown
 * requirement type or update action is a 400.  -1 after answering. */
static int change_of_json(json_t *j, change_t *c, floe_http_resp_t *rs)
{
    json_t *rq = json_object_get(j, "requirements"), *up = json_object_get(j, "updates");
    if ((rq && !json_is_array(rq)) || (up && !json_is_array(up)))
        return reject(rs, "requirements and updates must be arrays");
    c->reqs = calloc(json_array_size(rq) + 1, sizeof *c->reqs);
    c->ups = calloc(json_array_size(up) + 1, sizeof *c->ups);
    if (!c->reqs || !c->ups) return -1;
    return parse_each(rq, c->reqs, sizeof *c->reqs, &c->nreqs, req_parse, "requirement", rs) ||
                   parse_each(up, c->ups, sizeof *c->ups, &c->nups, update_parse, "update", rs)
               ? -1
               : 0;
}

static bool asserts_create(const change_t *c)
{
    for (size_t i = 0; i < c->nreqs; i++)
        if (c->reqs[i].kind == FLOE_ICE_REQ_ASSERT_CREATE) return true;
    return false;
}

/* A staged create's commit (assert-create on a table that does not
 * exist): the metadata built from the updates in memory, published as
 * version 1 (EEXIST -> 409: someone created it first). */
static int commit_create(floe_rest_t *r, const char *ns, const char *name, const change_t *c,
                         floe_http_resp_t *rs)
{
    const floe_ice_schema_t *schema = NULL;
    for (size_t i = 0; !schema && i < c->nups; i++)
        if (c->ups[i].kind == FLOE_ICE_UP_ADD_SCHEMA) schema = c->ups[i].schema;
    if (!schema) return bad(rs, "a create (assert-create) needs an add-schema update");
    if (need_ns(r, ns, rs) < 0) return 0;
    floe_err_t err;
    char *loc = NULL;
    if (floe_ice_catalog_table_location(r->cat, ns, name, &loc, &err) < 0)
        return fail_err(rs, &err, ON_TABLE);
    floe_ice_metadata_t *md = floe_ice_metadata_new_table(schema, NULL, NULL, loc, NULL, &err);
    free(loc);
    if (!md) return fail_err(rs, &err, ON_TABLE);
    for (size_t i = 0; i < c->nups; i++)
        if (floe_ice_update_apply(md, &c->ups[i], &err) < 0) {
            floe_ice_metadata_free(md);
            return fail(rs, 400, "BadRequestException", "update %zu: %s", i, err.msg);
        }
    floe_ice_table_t *t = NULL;
    int rc = floe_ice_catalog_create_from(r->cat, ns, name, md, &t, &err);
    floe_ice_metadata_free(md);
    if (rc < 0) {
        if (err.code == FLOE_EEXIST)
            return fail(rs, 409, "CommitFailedException", "%s (assert-create failed)", err.msg);
        return fail_err(rs, &err, ON_TABLE);
    }
    rc = send_table(r, rs, floe_ice_table_metadata(t), t, false, true);
    floe_ice_table_free(t);
    return rc;
}

/* Commit one table's change: the catalog checks the requirements against
 * the current metadata and publishes only if nobody published in between
 * (a failed requirement changes nothing).  Server lock held. */
static int commit_one(floe_rest_t *r, const char *ns, const char *name, const change_t *c,
                      floe_ice_table_t **out, floe_err_t *err)
{
    int rc =
        floe_ice_catalog_commit(r->cat, ns, name, c->reqs, c->nreqs, c->ups, c->nups, out, err);
    if (rc == 0) atomic_fetch_add(&r->commits, 1);
    else if (err->code == FLOE_ECONFLICT)
        atomic_fetch_add(&r->conflicts, 1);
    return rc;
}

static int h_commit(floe_rest_t *r, const char *ns, const char *name, json_t *j,
                    floe_http_resp_t *rs)
{
    change_t c = {0};
    int rc = change_of_json(j, &c, rs);
    json_t *id = json_object_get(j, "identifier");
    char *ins = NULL;
    const char *iname;
    if (rc == 0 && id && !json_is_null(id)) {
        if (ident_of_json(id, &ins, &iname, rs) < 0) rc = -1;
        else if (strcmp(ins, ns) || strcmp(iname, name))
            rc = reject(rs, "the identifier in the body names another table than the URL");
    }
    free(ins);
    if (rc < 0) {
        change_clear(&c);
        return rs->status >= 400 ? 0 : -1;
    }
    pthread_mutex_lock(&r->mu);
    floe_ice_table_t *t = NULL;
    floe_err_t err;
    bool exists = floe_ice_catalog_load_table(r->cat, ns, name, &t, &err) == 0;
    floe_ice_table_free(t);
    t = NULL;
    if (!exists && err.code == FLOE_ENOENT && asserts_create(&c))
        rc = commit_create(r, ns, name, &c, rs);
    else if (commit_one(r, ns, name, &c, &t, &err) < 0)
        rc = fail_err(rs, &err, ON_TABLE);
    else
        rc = send_table(r, rs, floe_ice_table_metadata(t), t, false, true);
    pthread_mutex_unlock(&r->mu);
    floe_ice_table_free(t);
    change_clear(&c);
    return rc;
}

/* POST /v1/transactions/commit: all tables or none.  The catalog holds
 * the commit locks of every table (floe's table engine takes the same
 * ones) while it checks every requirement, applies every update, stages
 * the new metadata and writes a redo journal; only then are the tables
 * published.  A failed requirement changes nothing (409); a crash or a
 * storage failure after the journal is rolled forward when the catalog
 * opens again (or before its next load), so the tables never stay partly
 * committed (the answer is then 500 CommitStateUnknownException). */
static int h_transaction(floe_rest_t *r, json_t *j, floe_http_resp_t *rs)
{
    json_t *tc = json_object_get(j, "table-changes");
    size_t n = json_array_size(tc);
    if (!json_is_array(tc) || n == 0 || n > MAX_TX_TABLES) {
        return bad(rs, "table-changes must be an array of 1..100 table changes");
    }
    change_t *cs = calloc(n, sizeof *cs);
    char **nss = calloc(n, sizeof *nss);
    const char **names = calloc(n, sizeof *names);
    int rc = (!cs || !nss || !names) ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *e = json_array_get(tc, i);
        rc = json_is_object(e) ? 0 : reject(rs, "a table change must be an object");
        if (rc == 0) rc = ident_of_json(json_object_get(e, "identifier"), &nss[i], &names[i], rs);
        if (rc == 0) rc = change_of_json(e, &cs[i], rs);
        for (size_t k = 0; rc == 0 && k < i; k++)
            if (!strcmp(nss[k], nss[i]) && !strcmp(names[k], names[i]))
                rc = reject(rs, "a table appears twice in table-changes");
    }
    floe_ice_table_change_t *ch = rc == 0 ? calloc(n, sizeof *ch) : NULL;
    if (rc == 0 && !ch) rc = -1;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            ch[i] = (floe_ice_table_change_t){nss[i],      names[i],  cs[i].reqs,
                                              cs[i].nreqs, cs[i].ups, cs[i].nups};
        floe_err_t err;
        size_t bad = n;
        pthread_mutex_lock(&r->mu);
        if (floe_ice_catalog_commit_tx(r->cat, ch, n, &bad, &err) < 0) {
            if (err.code == FLOE_ECONFLICT) atomic_fetch_add(&r->conflicts, 1);
            if (bad < n && err.code == FLOE_ECONFLICT)
                rc = fail(rs, 409, "CommitFailedException", "%s.%s: %s", nss[bad], names[bad],
                          err.msg);
            else if (bad < n && err.code == FLOE_EINVAL)
                rc = fail(rs, 400, "BadRequestException", "%s.%s: %s", nss[bad], names[bad],
                          err.msg);
            else
                rc = fail_err(rs, &err, ON_TABLE);
            if (rc == 0) rc = 1;
        } else
            atomic_fetch_add(&r->commits, n);
        pthread_mutex_unlock(&r->mu);
    }
    free(ch);
    if (rc == 0) rc = no_content(rs);
    else if (rc > 0 || rs->status >= 400)
        rc = 0;
    for (size_t i = 0; cs && i < n; i++) change_clear(&cs[i]);
    for (size_t i = 0; nss && i < n; i++) free(nss[i]);
    free(cs);
    free(nss);
    free(names);
    return rc;
}

/* ---- tables ---- */

static int h_create_table(floe_rest_t *r, const char *ns, json_t *j, floe_http_resp_t *rs)
{
    json_t *name = json_object_get(j, "name"), *schema = json_object_get(j, "schema"),
           *spec = json_object_get(j, "partition-spec"), *order = json_object_get(j, "write-order"),
           *loc = json_object_get(j, "location"), *stage = json_object_get(j, "stage-create");
    floe_ice_props_t props = {0};
    floe_ice_update_t us = {0}, up = {0}, uo = {0};
    floe_ice_metadata_t *md = NULL;
    floe_ice_table_t *t = NULL;
    char *dloc = NULL;
    floe_err_t err;
    int rc = 0;
    /* the schema, spec and order through the REST update parser: the same
     * JSON forms an add-schema, add-spec and add-sort-order carry */
    json_t *w = json_object();
    if (!json_is_string(name) || !json_is_object(schema)) {
        rc = bad(rs, "a table needs a name and a schema");
        goto out;
    }
    if ((loc && !json_is_null(loc) && !json_is_string(loc)) || (stage && !json_is_boolean(stage))) {
        rc = bad(rs, "location must be a string and stage-create a boolean");
        goto out;
    }
    if (props_of_json(json_object_get(j, "properties"), &props, rs) < 0) goto out;
    struct {
        json_t *v;
        const char *action, *key;
        floe_ice_update_t *u;
    } parts[] = {{schema, "add-schema", "schema", &us},
                 {spec, "add-spec", "spec", &up},
                 {order, "add-sort-order", "sort-order", &uo}};
    for (size_t i = 0; i < 3; i++) {
        if (!parts[i].v || json_is_null(parts[i].v)) continue;
        json_object_clear(w);
        json_object_set_new(w, "action", json_string(parts[i].action));
        json_object_set(w, parts[i].key, parts[i].v);
        char *s = json_dumps(w, JSON_COMPACT);
        int prc = s ? floe_ice_update_from_json(s, strlen(s), parts[i].u, &err) : -1;
        free(s);
        if (prc < 0) {
            rc = s ? fail(rs, 400, "BadRequestException", "%s: %s", parts[i].key, err.msg) : -1;
            goto out;
        }
    }
    const char *tname = json_string_value(name);
    if (need_ns(r, ns, rs) < 0) goto out;
    if (floe_ice_catalog_table_location(r->cat, ns, tname, &dloc, &err) < 0) {
        rc = fail_err(rs, &err, ON_TABLE);
        goto out;
    }
    const char *where = json_is_string(loc) ? json_string_value(loc) : dloc;
    if (!(md = floe_ice_metadata_new_table(us.schema, up.spec, uo.order, where, &props, &err))) {
        rc = fail_err(rs, &err, ON_TABLE);
        goto out;
    }
    if (json_is_true(stage)) {
        /* staged: nothing is written; the create lands with the commit
         * that asserts it */
        if (floe_ice_catalog_load_table(r->cat, ns, tname, &t, &err) == 0) {
            rc = fail(rs, 409, "AlreadyExistsException", "table %s.%s already exists", ns, tname);
            goto out;
        }
        rc = send_table(r, rs, md, NULL, false, false);
        goto out;
    }
    pthread_mutex_lock(&r->mu);
    int crc = floe_ice_catalog_create_from(r->cat, ns, tname, md, &t, &err);
    pthread_mutex_unlock(&r->mu);
    if (crc < 0) rc = fail_err(rs, &err, ON_TABLE);
    else
        rc = send_table(r, rs, floe_ice_table_metadata(t), t, false, false);
out:
    if (rc < 0 && rs->status >= 400) rc = 0;
    json_decref(w);
    floe_ice_props_clear(&props);
    floe_ice_update_clear(&us);
    floe_ice_update_clear(&up);
    floe_ice_update_clear(&uo);
    floe_ice_metadata_free(md);
    floe_ice_table_free(t);
    free(dloc);
    return rc;
}

static int h_list_tables(floe_rest_t *r, const char *ns, const floe_http_req_t *rq,
                         floe_http_resp_t *rs)
{
    if (need_ns(r, ns, rs) < 0) return 0;
    char **names;
    size_t n;
    floe_err_t err;
    if (floe_ice_catalog_list_tables(r->cat, ns, &names, &n, &err) < 0)
        return fail_err(rs, &err, ON_NAMESPACE);
    if (n) qsort(names, n, sizeof *names, cmp_names);
    size_t from, to;
    const char *next;
    int rc = page_of(rq, names, n, &from, &to, &next, rs);
    if (rc < 0 && rs->status >= 400) rc = 0;
    else if (rc == 0) {
        json_t *ids = json_array();
        for (size_t i = from; ids && i < to; i++)
            if (json_array_append_new(
                    ids, json_pack("{s:o,s:s}", "namespace", ns_json(ns), "name", names[i]))) {
                json_decref(ids);
                ids = NULL;
            }
        rc = ids ? send_json(rs, 200,
                             json_pack("{s:o,s:s?}", "identifiers", ids, "next-page-token", next))
                 : -1;
    }
    floe_fileio_names_free(names, n);
    return rc;
}

static int h_load_table(floe_rest_t *r, const char *ns, const char *name, const floe_http_req_t *rq,
                        floe_http_resp_t *rs)
{
    const char *snaps = floe_http_query(rq, "snapshots", NULL);
    if (snaps && strcmp(snaps, "all") && strcmp(snaps, "refs"))
        return bad(rs, "snapshots must be all or refs");
    floe_ice_table_t *t;
    floe_err_t err;
    if (floe_ice_catalog_load_table(r->cat, ns, name, &t, &err) < 0)
        return fail_err(rs, &err, ON_TABLE);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    bool refs = snaps && !strcmp(snaps, "refs");
    int rc;
    const char *inm = floe_http_header(rq, "If-None-Match");
    char tag[sizeof rs->etag];
    etag_of(md, floe_ice_table_version(t), refs, tag, sizeof tag);
    if (!strcmp(rq->method, "HEAD")) {
        rc = no_content(rs);
    } else if (inm && (!strcmp(inm, "*") || strstr(inm, tag))) {
        /* one tag, a list of them, or "*": unchanged, no body */
        rs->status = 304;
        memcpy(rs->etag, tag, sizeof tag);
        floe_buf_reset(&rs->body);
        rc = 0;
    } else {
        rc = send_table(r, rs, md, t, refs, false);
    }
    floe_ice_table_free(t);
    return rc;
}

static int h_register(floe_rest_t *r, const char *ns, json_t *j, floe_http_resp_t *rs)
{
    json_t *name = json_object_get(j, "name"), *loc = json_object_get(j, "metadata-location"),
           *ow = json_object_get(j, "overwrite");
    int rc;
    floe_ice_table_t *t = NULL;
    floe_err_t err;
    if (!json_is_string(name) || !json_is_string(loc)) rc = bad(rs, "name and metadata-location");
    else if (json_is_true(ow))
        rc = fail(rs, 406, "UnsupportedOperationException",
                  "register with overwrite is not supported: drop the table first");
    else if (need_ns(r, ns, rs) < 0)
        rc = 0;
    else {
        pthread_mutex_lock(&r->mu);
        int crc = floe_ice_catalog_register_table(r->cat, ns, json_string_value(name),
                                                  json_string_value(loc), &t, &err);
        pthread_mutex_unlock(&r->mu);
        rc = crc < 0 ? fail_err(rs, &err, ON_TABLE)
                     : send_table(r, rs, floe_ice_table_metadata(t), t, false, false);
    }
    floe_ice_table_free(t);
    return rc;
}

static int h_rename(floe_rest_t *r, json_t *j, floe_http_resp_t *rs)
{
    char *sns = NULL, *dns = NULL;
    const char *sname, *dname;
    int rc = 0;
    if (ident_of_json(json_object_get(j, "source"), &sns, &sname, rs) < 0 ||
        ident_of_json(json_object_get(j, "destination"), &dns, &dname, rs) < 0) {
        rc = rs->status >= 400 ? 0 : -1;
    } else {
        floe_ice_table_t *t = NULL;
        floe_err_t err;
        pthread_mutex_lock(&r->mu);
        if (floe_ice_catalog_load_table(r->cat, sns, sname, &t, &err) < 0)
            rc = fail_err(rs, &err, ON_TABLE);
        else if (need_ns(r, dns, rs) < 0)
            rc = 0;
        else if (floe_ice_catalog_rename_table(r->cat, sns, sname, dns, dname, &err) < 0)
            rc = fail_err(rs, &err, ON_TABLE);
        else
            rc = no_content(rs);
        pthread_mutex_unlock(&r->mu);
        floe_ice_table_free(t);
    }
    free(sns);
    free(dns);
    return rc;
}

static int h_drop_table(floe_rest_t *r, const char *ns, const char *name, const floe_http_req_t *rq,
                        floe_http_resp_t *rs)
{
    const char *p = floe_http_query(rq, "purgeRequested", NULL);
    bool purge = p && !strcmp(p, "true");
    floe_err_t err;
    pthread_mutex_lock(&r->mu);
    int rc = floe_ice_catalog_drop_table(r->cat, ns, name, purge, &err);
    pthread_mutex_unlock(&r->mu);
    return rc < 0 ? fail_err(rs, &err, ON_TABLE) : no_content(rs);
}

/* A ReportMetricsRequest: accepted and counted (floe keeps no reports). */
static int h_metrics_report(floe_rest_t *r, const char *ns, const char *name, json_t *j,
                            floe_http_resp_t *rs)
{
    int rc;
    floe_ice_table_t *t = NULL;
    floe_err_t err;
    if (!json_is_string(json_object_get(j, "report-type")))
        rc = bad(rs, "a metrics report needs a report-type");
    else if (floe_ice_catalog_load_table(r->cat, ns, name, &t, &err) < 0)
        rc = fail_err(rs, &err, ON_TABLE);
    else {
        atomic_fetch_add(&r->reports, 1);
        rc = no_content(rs);
    }
    floe_ice_table_free(t);
    return rc;
}

/* ---- namespaces ---- */

static int h_list_namespaces(floe_rest_t *r, const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    const char *parent = floe_http_query(rq, "parent", NULL);
    char **names = NULL;
    size_t n = 0;
    floe_err_t err;
    /* an empty parent is the top level, as the spec asks for now */
    if (parent && !*parent) parent = NULL;
    if (floe_ice_catalog_list_namespaces_in(r->cat, parent, &names, &n, &err) < 0)
        return fail_err(rs, &err, ON_NAMESPACE);
    if (n) qsort(names, n, sizeof *names, cmp_names);
    size_t from, to;
    const char *next;
    int rc = page_of(rq, names, n, &from, &to, &next, rs);
    if (rc < 0 && rs->status >= 400) rc = 0;
    else if (rc == 0) {
        json_t *a = json_array();
        for (size_t i = from; a && i < to; i++)
            if (json_array_append_new(a,
                                      parent ? ns_json_in(parent, names[i]) : ns_json(names[i]))) {
                json_decref(a);
                a = NULL;
            }
        rc = a ? send_json(rs, 200,
                           json_pack("{s:o,s:s?}", "namespaces", a, "next-page-token", next))
               : -1;
    }
    floe_fileio_names_free(names, n);
    return rc;
}

static int h_create_namespace(floe_rest_t *r, json_t *j, floe_http_resp_t *rs)
{
    floe_ice_props_t props = {0};
    char *ns = ns_of_json(json_object_get(j, "namespace"), rs);
    int rc = 0;
    floe_err_t err;
    if (ns && props_of_json(json_object_get(j, "properties"), &props, rs) == 0) {
        pthread_mutex_lock(&r->mu);
        if (floe_ice_catalog_create_namespace(r->cat, ns, &err) < 0 ||
            (props.n && floe_ice_catalog_update_namespace(r->cat, ns, &props, NULL, &err) < 0))
            rc = fail_err(rs, &err, ON_NAMESPACE);
        else
            rc = send_json(
                rs, 200,
                json_pack("{s:o,s:o}", "namespace", ns_json(ns), "properties", props_json(&props)));
        pthread_mutex_unlock(&r->mu);
    }
    free(ns);
    floe_ice_props_clear(&props);
    return rc;
}

static int h_namespace(floe_rest_t *r, const char *ns, const floe_http_req_t *rq,
                       floe_http_resp_t *rs)
{
    floe_err_t err;
    if (!strcmp(rq->method, "DELETE")) {
        if (need_ns(r, ns, rs) < 0) return 0;
        pthread_mutex_lock(&r->mu);
        int rc = floe_ice_catalog_drop_namespace(r->cat, ns, &err);
        pthread_mutex_unlock(&r->mu);
        if (rc == 0) return no_content(rs);
        if (err.code == FLOE_EINVAL)
            return fail(rs, 409, "NamespaceNotEmptyException", "%s", err.msg);
        return fail_err(rs, &err, ON_NAMESPACE);
    }
    floe_ice_props_t p = {0};
    if (floe_ice_catalog_load_namespace(r->cat, ns, &p, &err) < 0)
        return fail_err(rs, &err, ON_NAMESPACE);
    int rc = !strcmp(rq->method, "HEAD")
                 ? no_content(rs)
                 : send_json(rs, 200,
                             json_pack("{s:o,s:o}", "namespace", ns_json(ns), "properties",
                                       props_json(&p)));
    floe_ice_props_clear(&p);
    return rc;
}

static int h_ns_properties(floe_rest_t *r, const char *ns, json_t *j, floe_http_resp_t *rs)
{
    floe_ice_props_t ups = {0}, rem = {0}, cur = {0};
    json_t *ra = json_object_get(j, "removals");
    int rc = 0;
    floe_err_t err;
    if (props_of_json(json_object_get(j, "updates"), &ups, rs) < 0) goto out;
    if (ra && !json_is_null(ra) && !json_is_array(ra)) {
        rc = bad(rs, "removals must be an array of strings");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(ra); i++) {
        json_t *v = json_array_get(ra, i);
        if (!json_is_string(v)) {
            rc = bad(rs, "removals must be an array of strings");
            goto out;
        }
        if (floe_ice_props_get(&ups, json_string_value(v))) {
            rc = fail(rs, 422, "UnprocessableEntityException",
                      "key '%s' is both updated and removed", json_string_value(v));
            goto out;
        }
        if (floe_ice_props_set(&rem, json_string_value(v), "") < 0) {
            rc = -1;
            goto out;
        }
    }
    pthread_mutex_lock(&r->mu);
    if (floe_ice_catalog_load_namespace(r->cat, ns, &cur, &err) < 0 ||
        floe_ice_catalog_update_namespace(r->cat, ns, &ups, &rem, &err) < 0) {
        pthread_mutex_unlock(&r->mu);
        rc = fail_err(rs, &err, ON_NAMESPACE);
        goto out;
    }
    pthread_mutex_unlock(&r->mu);
    json_t *updated = json_array(), *removed = json_array(), *missing = json_array();
    for (size_t i = 0; i < ups.n; i++) json_array_append_new(updated, json_string(ups.kv[i].key));
    for (size_t i = 0; i < rem.n; i++)
        json_array_append_new(floe_ice_props_get(&cur, rem.kv[i].key) ? removed : missing,
                              json_string(rem.kv[i].key));
    rc = send_json(
        rs, 200,
        json_pack("{s:o,s:o,s:o}", "updated", updated, "removed", removed, "missing", missing));
out:
    if (rc < 0 && rs->status >= 400) rc = 0;
    floe_ice_props_clear(&ups);
    floe_ice_props_clear(&rem);
    floe_ice_props_clear(&cur);
    return rc;
}

/* ---- config and routing ---- */

static bool plain_name(const char *s)
{
    if (!*s || strlen(s) > 100) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-'))
            return false;
    return true;
}

static bool api_word(const char *s)
{
    return !strcmp(s, "config") || !strcmp(s, "namespaces") || !strcmp(s, "tables") ||
           !strcmp(s, "transactions") || !strcmp(s, "oauth");
}

static int h_config(floe_rest_t *r, const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    /* a named warehouse comes back as the prefix clients put in their
     * paths (any prefix reaches the one warehouse) */
    const char *wh = floe_http_query(rq, "warehouse", NULL);
    json_t *ov = json_object(), *eps = json_array();
    if (wh && plain_name(wh) && !api_word(wh)) json_object_set_new(ov, "prefix", json_string(wh));
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++)
        json_array_append_new(eps, json_string(endpoints[i]));
    if (r->cfg.vend_credentials) json_array_append_new(eps, json_string(credentials_endpoint));
    /* Idempotency-Key is honoured: for how long, as an ISO-8601 duration */
    char life[32];
    snprintf(life, sizeof life, "PT%" PRId64 "S", (r->cfg.idempotency_lifetime_ms + 999) / 1000);
    return send_json(rs, 200,
                     json_pack("{s:{},s:o,s:o,s:s}", "defaults", "overrides", ov, "endpoints", eps,
                               "idempotency-key-lifetime", life));
}

/* GET .../tables/{table}/credentials: a LoadCredentialsResponse. */
static int h_credentials(floe_rest_t *r, const char *ns, const char *name, floe_http_resp_t *rs)
{
    floe_ice_table_t *t;
    floe_err_t err;
    if (floe_ice_catalog_load_table(r->cat, ns, name, &t, &err) < 0)
        return fail_err(rs, &err, ON_TABLE);
    json_t *sc = storage_credentials(r, floe_ice_table_metadata(t)->location);
    floe_ice_table_free(t);
    if (!r->cfg.vend_credentials)
        return fail(rs, 403, "ForbiddenException",
                    "this catalog vends no credentials (rest.vend.credentials is off)");
    return send_json(rs, 200, json_pack("{s:o}", "storage-credentials", sc ? sc : json_array()));
}

static int method_is(const floe_http_req_t *rq, const char *m)
{
    return !strcmp(rq->method, m);
}

/* The handler for the path's segments (after the prefix); j: a POST's
 * body (borrowed), NULL otherwise. */
static int route(floe_rest_t *r, const floe_http_req_t *rq, floe_http_resp_t *rs, char **seg, int n,
                 json_t *j)
{
    const char *m = rq->method;
    bool get = method_is(rq, "GET") || method_is(rq, "HEAD");
    if (n == 1 && !strcmp(seg[0], "config") && get) return h_config(r, rq, rs);
    if (n == 2 && !strcmp(seg[0], "tables") && !strcmp(seg[1], "rename") && method_is(rq, "POST"))
        return h_rename(r, j, rs);
    if (n == 2 && !strcmp(seg[0], "transactions") && !strcmp(seg[1], "commit") &&
        method_is(rq, "POST"))
        return h_transaction(r, j, rs);
    if (n >= 1 && !strcmp(seg[0], "namespaces")) {
        if (n == 1 && get) return h_list_namespaces(r, rq, rs);
        if (n == 1 && method_is(rq, "POST")) return h_create_namespace(r, j, rs);
        /* the URL's namespace: its levels split by %1F, decoded */
        const char *ns = n >= 2 ? seg[1] : NULL;
        if (n == 2 && (get || method_is(rq, "DELETE"))) return h_namespace(r, ns, rq, rs);
        if (n == 3 && !strcmp(seg[2], "properties") && method_is(rq, "POST"))
            return h_ns_properties(r, ns, j, rs);
        if (n == 3 && !strcmp(seg[2], "register") && method_is(rq, "POST"))
            return h_register(r, ns, j, rs);
        if (n == 3 && !strcmp(seg[2], "tables") && method_is(rq, "GET"))
            return h_list_tables(r, ns, rq, rs);
        if (n == 3 && !strcmp(seg[2], "tables") && method_is(rq, "POST"))
            return h_create_table(r, ns, j, rs);
        if (n == 4 && !strcmp(seg[2], "tables")) {
            if (get) return h_load_table(r, ns, seg[3], rq, rs);
            if (method_is(rq, "POST")) return h_commit(r, ns, seg[3], j, rs);
            if (method_is(rq, "DELETE")) return h_drop_table(r, ns, seg[3], rq, rs);
        }
        if (n == 5 && !strcmp(seg[2], "tables") && !strcmp(seg[4], "metrics") &&
            method_is(rq, "POST"))
            return h_metrics_report(r, ns, seg[3], j, rs);
        if (n == 5 && !strcmp(seg[2], "tables") && !strcmp(seg[4], "credentials") &&
            method_is(rq, "GET"))
            return h_credentials(r, ns, seg[3], rs);
    }
    return fail(rs, 404, "NoSuchEndpointException", "no route for %s %s", m, rq->path);
}

static int h_rest(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    floe_rest_t *r = arg;
    atomic_fetch_add(&r->requests, 1);
    rs->content_type = "application/json";
    char path[1024];
    const char *p = rq->path + strlen("/v1/");
    if (strlen(p) >= sizeof path) return bad(rs, "path too long");
    memcpy(path, p, strlen(p) + 1);
    char *seg[MAX_SEGS];
    int n = 0;
    for (char *s = path, *e; *s && n < MAX_SEGS; s = e) {
        e = strchr(s, '/');
        if (e) *e++ = '\0';
        else
            e = s + strlen(s);
        seg[n++] = s;
    }
    if (n > 1 && !api_word(seg[0])) {
        /* the prefix: one warehouse, whatever its name */
        memmove(seg, seg + 1, (size_t)(n - 1) * sizeof *seg);
        n--;
    }
    if (n == 2 && !strcmp(seg[0], "oauth") && !strcmp(seg[1], "tokens"))
        return floe_rest_auth_token(r->auth, rq, rs);
    const char *why;
    if (!floe_rest_auth_check(r->auth, rq, &why)) {
        atomic_fetch_add(&r->unauthorized, 1);
        rs->headers = "WWW-Authenticate: Bearer realm=\"floe\"\n";
        return fail(rs, 401, "NotAuthorizedException", "%s", why);
    }
    /* every POST of the API carries a JSON object */
    json_t *j = NULL;
    if (method_is(rq, "POST") && !(j = body_object(rq, rs))) return rs->status >= 400 ? 0 : -1;
    /* a mutation with an Idempotency-Key: its first final answer again */
    const char *key = floe_http_header(rq, "Idempotency-Key");
    bool mutation = method_is(rq, "DELETE") ||
                    (method_is(rq, "POST") && !(n == 5 && !strcmp(seg[4], "metrics")));
    floe_rest_idem_slot_t *slot = NULL;
    int rc = 0;
    if (key && mutation) {
        size_t kl = strlen(key);
        if (kl == 0 || kl > 128) {
            json_decref(j);
            return bad(rs, "Idempotency-Key must be 1..128 characters");
        }
        uint32_t h1 = floe_murmur3_32(rq->method, strlen(rq->method), 1);
        h1 = floe_murmur3_32(rq->path, strlen(rq->path), h1);
        uint32_t h2 = rq->body_len ? floe_murmur3_32(rq->body, rq->body_len, h1) : h1;
        rc = floe_rest_idem_begin(r->idem, key, (uint64_t)h1 << 32 | h2, rs, &slot);
    }
    if (rc == 0) {
        rc = route(r, rq, rs, seg, n, j);
        if (rc < 0) rs->status = 500; /* not final: a retry runs again */
        floe_rest_idem_end(r->idem, slot, rs);
    } else {
        rc = rc == -2 ? -1 : 0; /* answered from memory, or 422 */
    }
    json_decref(j);
    return rc;
}

static int metrics(void *arg, floe_buf_t *out)
{
    floe_rest_t *r = arg;
    return floe_buf_printf(out,
                           "# TYPE floe_rest_requests_total counter\n"
                           "floe_rest_requests_total %" PRIu64 "\n"
                           "# TYPE floe_rest_commits_total counter\n"
                           "floe_rest_commits_total %" PRIu64 "\n"
                           "# TYPE floe_rest_commit_conflicts_total counter\n"
                           "floe_rest_commit_conflicts_total %" PRIu64 "\n"
                           "# TYPE floe_rest_metrics_reports_total counter\n"
                           "floe_rest_metrics_reports_total %" PRIu64 "\n"
                           "# TYPE floe_rest_unauthorized_total counter\n"
                           "floe_rest_unauthorized_total %" PRIu64 "\n"
                           "# TYPE floe_rest_idempotent_replays_total counter\n"
                           "floe_rest_idempotent_replays_total %" PRIu64 "\n"
                           "# TYPE floe_rest_oauth_tokens gauge\n"
                           "floe_rest_oauth_tokens %zu\n"
                           "# TYPE floe_rest_oauth_tokens_issued_total counter\n"
                           "floe_rest_oauth_tokens_issued_total %" PRIu64 "\n",
                           (uint64_t)atomic_load(&r->requests), (uint64_t)atomic_load(&r->commits),
                           (uint64_t)atomic_load(&r->conflicts), (uint64_t)atomic_load(&r->reports),
                           (uint64_t)atomic_load(&r->unauthorized), floe_rest_idem_replays(r->idem),
                           floe_rest_auth_live(r->auth), floe_rest_auth_issued(r->auth));
}

/* ---- configuration ---- */

#define F(f) FLOE_CONF_FIELD(floe_rest_cfg_t, f)

static const floe_conf_key_t KEYS[] = {
    {.name = "rest.auth.tokens",
     .type = FLOE_CONF_STRING,
     .def_doc = "none",
     F(auth_tokens),
     .doc = "Static bearer tokens the REST catalog accepts, comma-separated. With this or "
            "`rest.auth.clients` set, every `/v1/` request needs `Authorization: Bearer TOKEN` "
            "(else 401 `NotAuthorizedException`); with neither, auth is off."},
    {.name = "rest.auth.clients",
     .type = FLOE_CONF_STRING,
     .def_doc = "none",
     F(auth_clients),
     .doc = "OAuth2 clients, `ID:SECRET` comma-separated: `POST /v1/oauth/tokens` with "
            "`grant_type=client_credentials` issues them expiring tokens (an engine's "
            "`credential=ID:SECRET`); token exchange renews a valid token."},
    {.name = "rest.auth.token.ttl.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1000,
     .max = 30LL * 86400000,
     .def = "1h",
     F(token_ttl_ms),
     .doc = "Lifetime of a token issued by `/v1/oauth/tokens` (its `expires_in`)."},
    {.name = "rest.idempotency.lifetime.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1000,
     .max = 7LL * 86400000,
     .def = "30min",
     F(idempotency_lifetime_ms),
     .doc = "How long the answer to a mutation sent with an `Idempotency-Key` is kept: a retry "
            "with the same key gets it again instead of applying twice. `/v1/config` "
            "advertises it as `idempotency-key-lifetime`."},
    {.name = "rest.vend.credentials",
     .type = FLOE_CONF_BOOL,
     .def = "false",
     F(vend_credentials),
     .doc = "Tables on S3: `loadTable` answers carry floe's `s3.access-key-id`, "
            "`s3.secret-access-key` (and `s3.session-token`) in `config` and "
            "`storage-credentials`, and `GET .../tables/T/credentials` is served. Off, engines "
            "get only `s3.endpoint`, `s3.region` and `s3.path-style-access`."},
    {.name = "rest.metadata.cache.bytes",
     .type = FLOE_CONF_SIZE,
     .min = 0,
     .max = 1LL << 40,
     .def = "128MiB",
     F(metadata_cache_bytes),
     .doc = "Parsed table metadata kept in memory, per metadata file, so that loading or "
            "committing to a table with many snapshots does not read and parse its metadata "
            "JSON again; `0` turns it off."},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])
#undef F

#define IDEMPOTENCY_BYTES ((size_t)64 << 20)

const floe_conf_key_t *floe_rest_config_keys(size_t *n)
{
    *n = NKEYS;
    return KEYS;
}

int floe_rest_configure(floe_rest_t *r, const floe_rest_cfg_t *cfg,
                        const floe_ice_props_t *io_config, const floe_ice_props_t *io_secrets,
                        floe_err_t *err)
{
    floe_rest_auth_t *auth = NULL;
    floe_rest_idem_t *idem = NULL;
    if (floe_rest_auth_new(cfg->auth_tokens, cfg->auth_clients, cfg->token_ttl_ms, &auth, err) < 0)
        return -1;
    if (!(idem = floe_rest_idem_new(cfg->idempotency_lifetime_ms, IDEMPOTENCY_BYTES))) {
        floe_rest_auth_free(auth);
        return floe_err_oom(err);
    }
    floe_ice_props_t c = {0}, s = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && io_config && i < io_config->n; i++)
        rc = floe_ice_props_set(&c, io_config->kv[i].key, io_config->kv[i].value);
    for (size_t i = 0; rc == 0 && io_secrets && i < io_secrets->n; i++)
        rc = floe_ice_props_set(&s, io_secrets->kv[i].key, io_secrets->kv[i].value);
    if (rc < 0) {
        floe_ice_props_clear(&c);
        floe_ice_props_clear(&s);
        floe_rest_auth_free(auth);
        floe_rest_idem_free(idem);
        return floe_err_oom(err);
    }
    floe_rest_auth_free(r->auth);
    floe_rest_idem_free(r->idem);
    floe_ice_props_clear(&r->io_config);
    floe_ice_props_clear(&r->io_secrets);
    r->auth = auth;
    r->idem = idem;
    r->io_config = c;
    r->io_secrets = s;
    r->cfg = *cfg;
    floe_ice_catalog_cache_metadata(r->cat, (size_t)cfg->metadata_cache_bytes);
    return 0;
}

int floe_rest_http(floe_http_t *h, floe_ice_catalog_t *cat, floe_rest_t **out, floe_err_t *err)
{
    floe_rest_t *r = calloc(1, sizeof *r);
    if (!r) return floe_err_oom(err);
    r->cat = cat;
    pthread_mutex_init(&r->mu, NULL);
    floe_rest_cfg_t cfg = {0};
    if (floe_conf_defaults(KEYS, NKEYS, &cfg, err) < 0 ||
        floe_rest_configure(r, &cfg, NULL, NULL, err) < 0) {
        floe_rest_free(r);
        return -1;
    }
    if (floe_http_route(h, "/v1/", h_rest, r) || floe_http_metrics_add(h, metrics, r)) {
        floe_rest_free(r);
        return floe_err_oom(err);
    }
    *out = r;
    return 0;
}

void floe_rest_free(floe_rest_t *r)
{
    if (!r) return;
    floe_rest_auth_free(r->auth);
    floe_rest_idem_free(r->idem);
    floe_ice_props_clear(&r->io_config);
    floe_ice_props_clear(&r->io_secrets);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
