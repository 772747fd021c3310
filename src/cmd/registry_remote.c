/* Schemas by id from an external registry (registry_remote.h). */
#include "cmd/registry_remote.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/client.h"
#include "util/base64.h"
#include "util/buf.h"

struct registry_remote {
    char *url;
    char *auth; /* "Authorization: Basic ..." or NULL */
    pthread_mutex_t mu;
    struct known {
        int32_t id;
        char *text;
        floe_avro_text_t *refs; /* its references' texts, dependencies first */
        size_t nrefs;
    } * known;
    size_t nknown, capknown;
};

/* "Authorization: Basic " + base64(user_info) (RFC 7617). */
static char *basic_auth(const char *ui)
{
    floe_buf_t h = FLOE_BUF_INIT;
    if (floe_buf_append(&h, "Authorization: Basic ", 21) ||
        floe_base64_encode(&h, ui, strlen(ui))) {
        floe_buf_free(&h);
        return NULL;
    }
    char *c = floe_buf_cstr(&h);
    if (!c) floe_buf_free(&h);
    return c;
}

int registry_remote_new(const char *url, const char *user_info, registry_remote_t **out,
                        floe_err_t *err)
{
    *out = NULL;
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return floe_err_set(err, FLOE_EINVAL,
                            "schema.registry.url: '%s' is not an http:// or https:// URL", url);
    registry_remote_t *r = calloc(1, sizeof *r);
    if (!r || !(r->url = strdup(url)) ||
        (user_info && *user_info && !(r->auth = basic_auth(user_info)))) {
        if (r) free(r->url);
        free(r);
        return floe_err_oom(err);
    }
    size_t n = strlen(r->url);
    while (n && r->url[n - 1] == '/') r->url[--n] = '\0';
    pthread_mutex_init(&r->mu, NULL);
    *out = r;
    return 0;
}

void registry_remote_free(registry_remote_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nknown; i++) {
        free(r->known[i].text);
        for (size_t k = 0; k < r->known[i].nrefs; k++) free((char *)r->known[i].refs[k].json);
        free(r->known[i].refs);
    }
    free(r->known);
    pthread_mutex_destroy(&r->mu);
    free(r->auth);
    free(r->url);
    free(r);
}

/* GET {url}{path} as a JSON object: a new reference, or NULL with err
 * (FLOE_ENOENT on a 404); what names it in messages. */
static json_t *get_json(registry_remote_t *r, const char *path, const char *what, floe_err_t *err)
{
    char url[2048];
    snprintf(url, sizeof url, "%s%s", r->url, path);
    const char *hdrs[] = {"Accept: application/vnd.schemaregistry.v1+json, application/json",
                          r->auth, NULL};
    floe_http_call_t c = {
        .url = url, .headers = hdrs, .timeout_ms = 10000, .max_answer = 16u << 20};
    floe_buf_t body = FLOE_BUF_INIT;
    long status = 0;
    json_t *doc = NULL;
    if (floe_http_call(&c, &status, &body, err)) floe_err_wrap(err, "%s from %s", what, r->url);
    else if (status == 404)
        floe_err_set(err, FLOE_ENOENT, "%s is not in the registry at %s", what, r->url);
    else if (status != 200)
        floe_err_set(err, FLOE_EIO, "%s: the registry at %s answered %ld: %.*s", what, r->url,
                     status, (int)(body.len < 200 ? body.len : 200),
                     body.data ? (const char *)body.data : "");
    else if (!(doc = json_loadb((const char *)body.data, body.len, 0, NULL)) ||
             !json_is_object(doc)) { /* (json_is_object evaluates its argument twice) */
        json_decref(doc);
        doc = NULL;
        floe_err_set(err, FLOE_EIO, "%s: the registry at %s answered no JSON object", what, r->url);
    }
    floe_buf_free(&body);
    return doc;
}

/* subject percent-encoded into a path segment. */
static void path_segment(char *out, size_t cap, const char *subject)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)subject; *p && n + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
}

/* The Avro schema text of doc (an answer holding "schema" and maybe
 * "schemaType"): a malloc'd string, or NULL with err. */
static char *avro_text(json_t *doc, const char *what, floe_err_t *err)
{
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    const char *type = json_string_value(json_object_get(doc, "schemaType"));
    char *text = NULL;
    if (!schema) floe_err_set(err, FLOE_EIO, "%s: the registry answered no schema", what);
    else if (type && strcmp(type, "AVRO"))
        floe_err_set(err, FLOE_EINVAL, "%s is %s, not AVRO", what, type);
    else if (!(text = strdup(schema)))
        floe_err_oom(err);
    return text;
}

/* The texts of the schemas doc's "references" name, and theirs, appended
 * to k->refs (dependencies first; each subject/version once, as seen). */
static int fetch_refs(registry_remote_t *r, json_t *doc, struct known *k, json_t *seen, int depth,
                      floe_err_t *err)
{
    json_t *refs = json_object_get(doc, "references");
    if (depth > 16) return floe_err_set(err, FLOE_EINVAL, "references nested deeper than 16");
    for (size_t i = 0; i < json_array_size(refs); i++) {
        json_t *ref = json_array_get(refs, i);
        const char *subject = json_string_value(json_object_get(ref, "subject"));
        json_t *ver = json_object_get(ref, "version");
        if (!subject || !json_is_integer(ver))
            return floe_err_set(err, FLOE_EIO, "the registry answered a malformed reference");
        char seg[1024], path[1200], what[1200];
        path_segment(seg, sizeof seg, subject);
        snprintf(path, sizeof path, "/subjects/%s/versions/%lld", seg,
                 (long long)json_integer_value(ver));
        if (json_object_get(seen, path)) continue;
        json_object_set_new(seen, path, json_true());
        snprintf(what, sizeof what, "reference %s version %lld", subject,
                 (long long)json_integer_value(ver));
        json_t *d = get_json(r, path, what, err);
        char *text = d ? avro_text(d, what, err) : NULL;
        int rc = !text || fetch_refs(r, d, k, seen, depth + 1, err) ? -1 : 0;
        floe_avro_text_t *t = rc ? NULL : realloc(k->refs, (k->nrefs + 1) * sizeof *t);
        if (!rc && !t) rc = floe_err_oom(err);
        json_decref(d);
        if (rc) {
            free(text);
            return -1;
        }
        k->refs = t;
        k->refs[k->nrefs++] = (floe_avro_text_t){text, strlen(text)};
    }
    return 0;
}

/* The schema of id and its references' texts from the registry into *k,
 * or -1 with err (FLOE_ENOENT when the registry has no such id). */
static int fetch(registry_remote_t *r, int32_t id, struct known *k, floe_err_t *err)
{
    char path[64], what[64];
    snprintf(path, sizeof path, "/schemas/ids/%d", (int)id);
    snprintf(what, sizeof what, "schema id %d", (int)id);
    *k = (struct known){.id = id};
    json_t *seen = json_object();
    if (!seen) return floe_err_oom(err);
    json_t *doc = get_json(r, path, what, err);
    int rc = doc && (k->text = avro_text(doc, what, err)) && !fetch_refs(r, doc, k, seen, 0, err)
                 ? 0
                 : -1;
    json_decref(doc);
    json_decref(seen);
    if (rc) {
        free(k->text);
        for (size_t i = 0; i < k->nrefs; i++) free((char *)k->refs[i].json);
        free(k->refs);
        *k = (struct known){0};
    }
    return rc;
}

static int schema_by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    registry_remote_t *r = arg;
    const struct known *have = NULL;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nknown && !have; i++)
        if (r->known[i].id == id) have = &r->known[i];
    struct known k = have ? *have : (struct known){0};
    pthread_mutex_unlock(&r->mu); /* texts are never freed before r */
    if (!have) {
        if (fetch(r, id, &k, err)) return -1;
        pthread_mutex_lock(&r->mu);
        if (r->nknown == r->capknown) {
            size_t cap = r->capknown ? r->capknown * 2 : 16;
            struct known *n = realloc(r->known, cap * sizeof *n);
            if (!n) {
                pthread_mutex_unlock(&r->mu);
                free(k.text);
                for (size_t i = 0; i < k.nrefs; i++) free((char *)k.refs[i].json);
                free(k.refs);
                return floe_err_oom(err);
            }
            r->known = n;
            r->capknown = cap;
        }
        r->known[r->nknown++] = k;
        pthread_mutex_unlock(&r->mu);
    }
    return floe_avro_schema_parse_refs(k.text, strlen(k.text), k.refs, k.nrefs, out, err);
}

/* The id of subject's version (0: latest) from the registry. */
static int id_of(void *arg, const char *subject, int32_t version, int32_t *id, floe_err_t *err)
{
    registry_remote_t *r = arg;
    char seg[1024], path[1200], what[1200];
    path_segment(seg, sizeof seg, subject);
    if (version) snprintf(path, sizeof path, "/subjects/%s/versions/%d", seg, (int)version);
    else
        snprintf(path, sizeof path, "/subjects/%s/versions/latest", seg);
    snprintf(what, sizeof what, "subject %s version %s", subject, strrchr(path, '/') + 1);
    json_t *doc = get_json(r, path, what, err);
    if (!doc) return -1;
    json_t *j = json_object_get(doc, "id");
    int rc = json_is_integer(j) && json_integer_value(j) > 0 && json_integer_value(j) <= INT32_MAX
                 ? 0
                 : floe_err_set(err, FLOE_EIO, "%s: the registry answered no id", what);
    if (!rc) *id = (int32_t)json_integer_value(j);
    json_decref(doc);
    return rc;
}

floe_conv_schemas_t registry_remote_schemas(registry_remote_t *r)
{
    /* Avro only: protobuf records find no schema source (dead letters) */
    return (floe_conv_schemas_t){.fn = schema_by_id, .arg = r, .proto = NULL, .id_of = id_of};
}
