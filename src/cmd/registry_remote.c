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
        bool json; /* a JSON schema, else Avro */
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
    for (size_t i = 0; i < r->nknown; i++) free(r->known[i].text);
    free(r->known);
    pthread_mutex_destroy(&r->mu);
    free(r->auth);
    free(r->url);
    free(r);
}

/* The schema text of id from the registry, an Avro schema or (json) a
 * JSON schema without references: a malloc'd string, or NULL with err
 * (FLOE_ENOENT when the registry has no such id). */
static char *fetch(registry_remote_t *r, int32_t id, bool json, floe_err_t *err)
{
    char url[2048];
    snprintf(url, sizeof url, "%s/schemas/ids/%d", r->url, (int)id);
    const char *hdrs[] = {"Accept: application/vnd.schemaregistry.v1+json, application/json",
                          r->auth, NULL};
    floe_http_call_t c = {
        .url = url, .headers = hdrs, .timeout_ms = 10000, .max_answer = 16u << 20};
    floe_buf_t body = FLOE_BUF_INIT;
    long status = 0;
    char *text = NULL;
    if (floe_http_call(&c, &status, &body, err)) {
        floe_err_wrap(err, "schema id %d from %s", (int)id, r->url);
        goto out;
    }
    if (status == 404) {
        floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry at %s", (int)id,
                     r->url);
        goto out;
    }
    if (status != 200) {
        floe_err_set(err, FLOE_EIO, "schema id %d: the registry at %s answered %ld: %.*s", (int)id,
                     r->url, status, (int)(body.len < 200 ? body.len : 200),
                     body.data ? (const char *)body.data : "");
        goto out;
    }
    json_error_t je;
    json_t *doc = json_loadb((const char *)body.data, body.len, 0, &je);
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    const char *type = json_string_value(json_object_get(doc, "schemaType"));
    if (!schema) {
        floe_err_set(err, FLOE_EIO, "schema id %d: the registry at %s answered no schema", (int)id,
                     r->url);
    } else if (json ? !type || strcmp(type, "JSON") : type && strcmp(type, "AVRO")) {
        floe_err_set(err, FLOE_EINVAL, "schema id %d is %s, not %s", (int)id, type ? type : "AVRO",
                     json ? "JSON" : "AVRO");
    } else if (json && json_array_size(json_object_get(doc, "references"))) {
        floe_err_set(err, FLOE_EINVAL,
                     "schema id %d refers to other schemas, which floe does not follow through "
                     "an external registry yet",
                     (int)id);
    } else if (!(text = strdup(schema))) {
        floe_err_oom(err);
    }
    json_decref(doc);
out:
    floe_buf_free(&body);
    return text;
}

/* The text of schema id (json: a JSON schema, else Avro), fetched once:
 * borrowed until r is freed, or NULL with err. */
static const char *text_by_id(registry_remote_t *r, int32_t id, bool json, floe_err_t *err)
{
    const char *text = NULL;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nknown && !text; i++)
        if (r->known[i].id == id && r->known[i].json == json) text = r->known[i].text;
    pthread_mutex_unlock(&r->mu); /* texts are never freed before r */
    if (!text) {
        char *got = fetch(r, id, json, err);
        if (!got) return NULL;
        pthread_mutex_lock(&r->mu);
        if (r->nknown == r->capknown) {
            size_t cap = r->capknown ? r->capknown * 2 : 16;
            struct known *k = realloc(r->known, cap * sizeof *k);
            if (!k) {
                pthread_mutex_unlock(&r->mu);
                free(got);
                floe_err_oom(err);
                return NULL;
            }
            r->known = k;
            r->capknown = cap;
        }
        r->known[r->nknown++] = (struct known){id, got, json};
        pthread_mutex_unlock(&r->mu);
        text = got;
    }
    return text;
}

static int schema_by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    const char *text = text_by_id(arg, id, false, err);
    return text ? floe_avro_schema_parse(text, strlen(text), out, err) : -1;
}

static int json_by_id(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    const char *text = text_by_id(arg, id, true, err);
    return text ? floe_jschema_parse(text, strlen(text), NULL, 0, out, err) : -1;
}

floe_conv_schemas_t registry_remote_schemas(registry_remote_t *r)
{
    /* Avro and JSON Schema: protobuf records find no schema source (dead
     * letters) */
    return (floe_conv_schemas_t){.fn = schema_by_id, .arg = r, .proto = NULL, .json = json_by_id};
}
