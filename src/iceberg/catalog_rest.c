/* The REST catalog client (catalog.h floe_ice_catalog_rest_new): every
 * catalog operation as a call to an Iceberg REST catalog server, with the
 * server's answers mapped onto the catalog's errors.  Commits: 409 is a
 * conflict (nothing published); a 5xx or no answer at all is an unknown
 * outcome, resolved by the caller reloading (design.md, invariant 3). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/client.h"
#include "iceberg/catalog_int.h"
#include "iceberg/metadata_json_int.h"
#include "util/json.h"

#define TIMEOUT_MS 30000

typedef struct rest_catalog {
    floe_ice_catalog_t base;
    char *root; /* URI + "/v1" [+ "/" prefix], no trailing slash */
    char *auth; /* "Authorization: Bearer ..." or NULL */
} rest_catalog_t;

/* One call: method on root/path (path printf-style) with body (may be
 * NULL).  0 with *status and the parsed answer (*out, NULL when the answer
 * is empty or not JSON; caller json_decrefs), or -1 with *err (EIO: no
 * answer). */
static int call(rest_catalog_t *c, const char *method, const char *body, long *status, json_t **out,
                floe_err_t *err, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int call(rest_catalog_t *c, const char *method, const char *body, long *status, json_t **out,
                floe_err_t *err, const char *fmt, ...)
{
    *out = NULL;
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof path)
        return floe_err_set(err, FLOE_ERANGE, "rest catalog: path too long");
    size_t ul = strlen(c->root) + strlen(path) + 2;
    char *url = malloc(ul);
    if (!url) return floe_err_oom(err);
    snprintf(url, ul, "%s/%s", c->root, path);
    const char *headers[] = {"Content-Type: application/json", "Accept: application/json", c->auth,
                             NULL};
    floe_http_call_t hc = {.method = method,
                           .url = url,
                           .headers = headers,
                           .body = body,
                           .body_len = body ? strlen(body) : 0,
                           .timeout_ms = TIMEOUT_MS};
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_http_call(&hc, status, &b, err);
    free(url);
    if (rc == 0 && b.len) *out = json_loadb((const char *)b.data, b.len, 0, NULL);
    floe_buf_free(&b);
    return rc;
}

/* A non-2xx answer as the catalog's error: 404 ENOENT, 409 EEXIST /
 * ECONFLICT / EINVAL (not empty), 4xx EINVAL, 5xx EIO (the caller of a
 * commit makes that EUNKNOWN). */
static int answer_err(long status, json_t *ans, const char *what, floe_err_t *err)
{
    json_t *e = json_object_get(ans, "error");
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (!type) type = "";
    if (!msg) msg = "";
    floe_code_t code = FLOE_EIO;
    if (status == 404) code = FLOE_ENOENT;
    else if (status == 409 && !strcmp(type, "CommitFailedException"))
        code = FLOE_ECONFLICT;
    else if (status == 409 && !strcmp(type, "NamespaceNotEmptyException"))
        code = FLOE_EINVAL;
    else if (status == 409)
        code = FLOE_EEXIST;
    else if (status >= 400 && status < 500)
        code = FLOE_EINVAL;
    return floe_err_set(err, code, "rest catalog: %s: HTTP %ld %s: %s", what, status, type, msg);
}

/* A table from a LoadTableResult / CommitTableResponse. */
static int table_of(json_t *ans, const char *ns, const char *name, floe_ice_table_t **out,
                    floe_err_t *err)
{
    const char *loc = json_string_value(json_object_get(ans, "metadata-location"));
    json_t *m = json_object_get(ans, "metadata");
    if (!loc || !json_is_object(m))
        return floe_err_set(err, FLOE_ECORRUPT, "rest catalog: %s.%s: no metadata in the answer",
                            ns, name);
    char *text = json_dumps(m, JSON_COMPACT);
    if (!text) return floe_err_oom(err);
    floe_ice_metadata_t *md = floe_ice_metadata_from_json(text, strlen(text), err);
    free(text);
    if (!md) return -1;
    /* the version: vN.metadata.json or NNNNN-uuid.metadata.json; 0 when
     * the name says none */
    const char *base = strrchr(loc, '/');
    base = base ? base + 1 : loc;
    if (*base == 'v') base++;
    int64_t v = strtoll(base, NULL, 10);
    if (!out) {
        floe_ice_metadata_free(md);
        return 0;
    }
    *out = floe_ice_table_make(ns, name, loc, v > 0 ? v : 0, md);
    return *out ? 0 : floe_err_oom(err);
}

static char *ns_body(const char *ns, const floe_ice_props_t *props)
{
    json_t *o = json_pack("{s:[s]}", "namespace", ns);
    if (o && props && props->n) json_object_set_new(o, "properties", mj_props_to_json(props));
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static int r_create_namespace(floe_ice_catalog_t *cat, const char *ns, floe_err_t *err)
{
    rest_catalog_t *c = (rest_catalog_t *)cat;
    char *body = ns_body(ns, NULL);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call(c, "POST", body, &st, &a, err, "namespaces");
    free(body);
    if (rc == 0 && st != 200) rc = answer_err(st, a, "create namespace", err);
    json_decref(a);
    return rc;
}

static int r_drop_namespace(floe_ice_catalog_t *cat, const char *ns, floe_err_t *err)
{
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, "DELETE", NULL, &st, &a, err, "namespaces/%s", ns);
    if (rc == 0 && st != 204 && st != 200) rc = answer_err(st, a, "drop namespace", err);
    json_decref(a);
    return rc;
}

/* Every page of a listing: member key's items, each through item() into
 * names (a NULL from item: skipped). */
static int list_all(rest_catalog_t *c, const char *path, const char *key,
                    const char *(*item)(json_t *), char ***names, size_t *n, floe_err_t *err)
{
    char *tok = NULL;
    size_t cap = 0;
    int rc = 0;
    do {
        long st;
        json_t *a;
        /* tokens are opaque: sent back as they came (they are names or
         * numbers in practice; anything else is refused) */
        rc = tok ? call(c, "GET", NULL, &st, &a, err, "%s?pageToken=%s", path, tok)
                 : call(c, "GET", NULL, &st, &a, err, "%s", path);
        free(tok);
        tok = NULL;
        if (rc < 0) break;
        if (st != 200) {
            rc = answer_err(st, a, path, err);
            json_decref(a);
            break;
        }
        json_t *arr = json_object_get(a, key), *v;
        size_t i;
        json_array_foreach(arr, i, v)
        {
            const char *s = item(v);
            if (!s) continue;
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                char **nn = realloc(*names, nc * sizeof *nn);
                if (!nn) {
                    rc = floe_err_oom(err);
                    break;
                }
                *names = nn;
                cap = nc;
            }
            if (!((*names)[*n] = strdup(s))) {
                rc = floe_err_oom(err);
                break;
            }
            (*n)++;
        }
        const char *next = json_string_value(json_object_get(a, "next-page-token"));
        if (rc == 0 && next && *next) {
            for (const char *p = next; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
                            *p))
                    rc = floe_err_set(err, FLOE_EUNSUPPORTED,
                                      "rest catalog: a page token floe cannot send back");
            if (rc == 0 && !(tok = strdup(next))) rc = floe_err_oom(err);
        }
        json_decref(a);
    } while (rc == 0 && tok);
    free(tok);
    if (rc < 0) {
        floe_fileio_names_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return rc;
}

static const char *ns_item(json_t *v)
{
    return json_array_size(v) == 1 ? json_string_value(json_array_get(v, 0)) : NULL;
}

static const char *table_item(json_t *v)
{
    return json_string_value(json_object_get(v, "name"));
}

static int r_list_namespaces(floe_ice_catalog_t *cat, char ***names, size_t *n, floe_err_t *err)
{
    return list_all((rest_catalog_t *)cat, "namespaces", "namespaces", ns_item, names, n, err);
}

static int r_list_tables(floe_ice_catalog_t *cat, const char *ns, char ***names, size_t *n,
                         floe_err_t *err)
{
    char path[512];
    snprintf(path, sizeof path, "namespaces/%s/tables", ns);
    return list_all((rest_catalog_t *)cat, path, "identifiers", table_item, names, n, err);
}

static int r_create_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                          const floe_ice_schema_t *schema, const floe_ice_spec_t *spec,
                          const floe_ice_sort_order_t *order, const floe_ice_props_t *props,
                          floe_ice_table_t **out, floe_err_t *err)
{
    rest_catalog_t *c = (rest_catalog_t *)cat;
    /* the namespace first, as the filesystem catalog does */
    if (r_create_namespace(cat, ns, err) < 0 && err && err->code != FLOE_EEXIST) return -1;
    json_t *o = json_pack("{s:s,s:o}", "name", name, "schema", mj_schema_to_json(schema));
    if (o && spec) json_object_set_new(o, "partition-spec", mj_spec_to_json(spec));
    if (o && order) json_object_set_new(o, "write-order", mj_order_to_json(order));
    if (o && props) json_object_set_new(o, "properties", mj_props_to_json(props));
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call(c, "POST", body, &st, &a, err, "namespaces/%s/tables", ns);
    free(body);
    if (rc == 0)
        rc = st == 200 ? table_of(a, ns, name, out, err) : answer_err(st, a, "create table", err);
    json_decref(a);
    return rc;
}

static int r_load_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                        floe_ice_table_t **out, floe_err_t *err)
{
    long st;
    json_t *a;
    int rc =
        call((rest_catalog_t *)cat, "GET", NULL, &st, &a, err, "namespaces/%s/tables/%s", ns, name);
    if (rc == 0)
        rc = st == 200 ? table_of(a, ns, name, out, err) : answer_err(st, a, "load table", err);
    json_decref(a);
    return rc;
}

static int r_drop_table(floe_ice_catalog_t *cat, const char *ns, const char *name, bool purge,
                        floe_err_t *err)
{
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, "DELETE", NULL, &st, &a, err,
                  "namespaces/%s/tables/%s?purgeRequested=%s", ns, name, purge ? "true" : "false");
    if (rc == 0 && st != 204 && st != 200) rc = answer_err(st, a, "drop table", err);
    json_decref(a);
    return rc;
}

static int r_commit(floe_ice_catalog_t *cat, const char *ns, const char *name,
                    const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                    const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                    floe_err_t *err)
{
    (void)base;
    rest_catalog_t *c = (rest_catalog_t *)cat;
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_buf_append_str(&b, "{\"identifier\":{\"namespace\":[") ||
             floe_json_cstr(&b, ns) || floe_buf_append_str(&b, "],\"name\":") ||
             floe_json_cstr(&b, name) || floe_buf_append_str(&b, "},\"requirements\":[");
    for (size_t i = 0; rc == 0 && i < nreqs; i++) {
        if (i && floe_buf_append_u8(&b, ',')) rc = -1;
        else if (floe_ice_req_to_json(&reqs[i], &b, err) < 0)
            rc = -2;
    }
    if (rc == 0 && floe_buf_append_str(&b, "],\"updates\":[")) rc = -1;
    for (size_t i = 0; rc == 0 && i < nups; i++) {
        if (i && floe_buf_append_u8(&b, ',')) rc = -1;
        else if (floe_ice_update_to_json(&ups[i], &b, err) < 0)
            rc = -2;
    }
    if (rc == 0 && (floe_buf_append_str(&b, "]}") || floe_buf_append_u8(&b, 0))) rc = -1;
    if (rc < 0) {
        floe_buf_free(&b);
        return rc == -1 ? floe_err_oom(err) : -1;
    }
    long st;
    json_t *a;
    rc = call(c, "POST", (const char *)b.data, &st, &a, err, "namespaces/%s/tables/%s", ns, name);
    floe_buf_free(&b);
    if (rc < 0) {
        /* sent, maybe applied: nobody knows until the table is read */
        char m[FLOE_ERR_MSG_MAX];
        snprintf(m, sizeof m, "%s", err ? err->msg : "");
        return floe_err_set(err, FLOE_EUNKNOWN, "commit outcome unknown: %s.%s: %s", ns, name, m);
    }
    if (st == 200) rc = table_of(a, ns, name, out, err);
    else {
        rc = answer_err(st, a, "commit", err);
        if (st >= 500 && err) {
            char m[FLOE_ERR_MSG_MAX];
            snprintf(m, sizeof m, "%s", err->msg);
            floe_err_set(err, FLOE_EUNKNOWN, "commit outcome unknown: %s", m);
        }
    }
    json_decref(a);
    return rc;
}

static int r_load_namespace(floe_ice_catalog_t *cat, const char *ns, floe_ice_props_t *out,
                            floe_err_t *err)
{
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, "GET", NULL, &st, &a, err, "namespaces/%s", ns);
    if (rc == 0)
        rc = st == 200 ? mj_props_from_json(json_object_get(a, "properties"), out, NULL, err)
                       : answer_err(st, a, "load namespace", err);
    json_decref(a);
    return rc;
}

static int r_update_namespace(floe_ice_catalog_t *cat, const char *ns,
                              const floe_ice_props_t *updates, const floe_ice_props_t *removals,
                              floe_err_t *err)
{
    json_t *rm = json_array();
    for (size_t i = 0; rm && removals && i < removals->n; i++)
        json_array_append_new(rm, json_string(removals->kv[i].key));
    floe_ice_props_t none = {0};
    json_t *o = json_pack("{s:o,s:o}", "removals", rm, "updates",
                          mj_props_to_json(updates ? updates : &none));
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc =
        call((rest_catalog_t *)cat, "POST", body, &st, &a, err, "namespaces/%s/properties", ns);
    free(body);
    if (rc == 0 && st != 200) rc = answer_err(st, a, "update namespace", err);
    json_decref(a);
    return rc;
}

static int r_rename_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                          const char *to_ns, const char *to_name, floe_err_t *err)
{
    json_t *o = json_pack("{s:{s:[s],s:s},s:{s:[s],s:s}}", "source", "namespace", ns, "name", name,
                          "destination", "namespace", to_ns, "name", to_name);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, "POST", body, &st, &a, err, "tables/rename");
    free(body);
    if (rc == 0 && st != 204 && st != 200) rc = answer_err(st, a, "rename table", err);
    json_decref(a);
    return rc;
}

static int r_create_from(floe_ice_catalog_t *cat, const char *ns, const char *name,
                         const floe_ice_metadata_t *md, floe_ice_table_t **out, floe_err_t *err)
{
    (void)cat;
    (void)md;
    (void)out;
    return floe_err_set(err, FLOE_EUNSUPPORTED,
                        "rest catalog: %s.%s: a table from given metadata is registered by "
                        "the server, not made by the client",
                        ns, name);
}

static int r_table_location(floe_ice_catalog_t *cat, const char *ns, const char *name, char **out,
                            floe_err_t *err)
{
    (void)cat;
    (void)out;
    return floe_err_set(err, FLOE_EUNSUPPORTED,
                        "rest catalog: %s.%s: the server chooses a table's location", ns, name);
}

static void r_destroy(floe_ice_catalog_t *cat)
{
    rest_catalog_t *c = (rest_catalog_t *)cat;
    free(c->root);
    free(c->auth);
    free(c);
}

static const floe_ice_catalog_ops_t rest_ops = {
    r_create_namespace, r_drop_namespace, r_list_namespaces, r_list_tables,    r_create_table,
    r_load_table,       r_drop_table,     r_commit,          r_load_namespace, r_update_namespace,
    r_rename_table,     r_create_from,    r_table_location,  r_destroy,
};

floe_ice_catalog_t *floe_ice_catalog_rest_new(floe_fileio_t *io, const char *uri,
                                              const char *warehouse, const char *token,
                                              floe_err_t *err)
{
    if (!uri || strncmp(uri, "http", 4)) {
        floe_err_set(err, FLOE_EINVAL, "rest catalog: uri '%s' is not an http(s) URL",
                     uri ? uri : "");
        return NULL;
    }
    rest_catalog_t *c = calloc(1, sizeof *c);
    size_t ul = strlen(uri);
    while (ul && uri[ul - 1] == '/') ul--;
    if (c) c->root = malloc(ul + 4);
    if (c && c->root) snprintf(c->root, ul + 4, "%.*s/v1", (int)ul, uri);
    if (c && token) {
        size_t n = strlen(token) + 32;
        if ((c->auth = malloc(n))) snprintf(c->auth, n, "Authorization: Bearer %s", token);
    }
    if (!c || !c->root || (token && !c->auth)) {
        if (c) r_destroy(&c->base);
        floe_err_oom(err);
        return NULL;
    }
    c->base.ops = &rest_ops;
    c->base.io = io;
    /* the server's configuration: its prefix, when it names one */
    long st;
    json_t *a;
    char wh[600] = "";
    for (size_t i = 0, o = 0; warehouse && warehouse[i] && o + 4 < sizeof wh; i++) {
        unsigned char ch = (unsigned char)warehouse[i];
        if (strchr("-_.~", ch) || (ch >= '0' && ch <= '9') ||
            ((ch | 32) >= 'a' && (ch | 32) <= 'z'))
            wh[o++] = (char)ch;
        else
            o += (size_t)snprintf(wh + o, sizeof wh - o, "%%%02X", ch);
        wh[o] = '\0';
    }
    int rc = *wh ? call(c, "GET", NULL, &st, &a, err, "config?warehouse=%s", wh)
                 : call(c, "GET", NULL, &st, &a, err, "config");
    if (rc == 0 && st != 200) rc = answer_err(st, a, "config", err);
    const char *prefix =
        rc == 0 ? json_string_value(json_object_get(json_object_get(a, "overrides"), "prefix"))
                : NULL;
    if (!prefix && rc == 0)
        prefix = json_string_value(json_object_get(json_object_get(a, "defaults"), "prefix"));
    if (prefix && *prefix) {
        size_t n = strlen(c->root) + strlen(prefix) + 2;
        char *r = malloc(n);
        if (!r) rc = floe_err_oom(err);
        else {
            snprintf(r, n, "%s/%s", c->root, prefix);
            free(c->root);
            c->root = r;
        }
    }
    json_decref(a);
    if (rc < 0) {
        r_destroy(&c->base);
        return NULL;
    }
    return &c->base;
}
