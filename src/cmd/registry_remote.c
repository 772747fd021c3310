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

/* The schema text of id from the registry: a malloc'd string, or NULL
 * with err (FLOE_ENOENT when the registry has no such id). */
static char *fetch(registry_remote_t *r, int32_t id, floe_err_t *err)
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
    } else if (type && strcmp(type, "AVRO")) {
        floe_err_set(err, FLOE_EINVAL, "schema id %d is %s, not AVRO", (int)id, type);
    } else if (!(text = strdup(schema))) {
        floe_err_oom(err);
    }
    json_decref(doc);
out:
    floe_buf_free(&body);
    return text;
}

static int schema_by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    registry_remote_t *r = arg;
    const char *text = NULL;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nknown && !text; i++)
        if (r->known[i].id == id) text = r->known[i].text;
    pthread_mutex_unlock(&r->mu); /* texts are never freed before r */
    if (!text) {
        char *got = fetch(r, id, err);
        if (!got) return -1;
        pthread_mutex_lock(&r->mu);
        if (r->nknown == r->capknown) {
            size_t cap = r->capknown ? r->capknown * 2 : 16;
            struct known *k = realloc(r->known, cap * sizeof *k);
            if (!k) {
                pthread_mutex_unlock(&r->mu);
                free(got);
                return floe_err_oom(err);
            }
            r->known = k;
            r->capknown = cap;
        }
        r->known[r->nknown++] = (struct known){id, got};
        pthread_mutex_unlock(&r->mu);
        text = got;
    }
    return floe_avro_schema_parse(text, strlen(text), out, err);
}

floe_conv_schemas_t registry_remote_schemas(registry_remote_t *r)
{
    /* Avro only: protobuf records find no schema source (dead letters) */
    return (floe_conv_schemas_t){.fn = schema_by_id, .arg = r, .proto = NULL};
}
