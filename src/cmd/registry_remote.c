/* Schemas by id from an external registry (registry_remote.h). */
#include "cmd/registry_remote.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"
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
        bool json;              /* a JSON schema, else Avro */
        floe_avro_text_t *refs; /* Avro: its references' texts, dependencies first */
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

static void known_clear(struct known *k)
{
    free(k->text);
    for (size_t i = 0; i < k->nrefs; i++) free((char *)k->refs[i].json);
    free(k->refs);
    *k = (struct known){0};
}

static void url_escape(const char *s, char *out, size_t size);

void registry_remote_free(registry_remote_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nknown; i++) known_clear(&r->known[i]);
    free(r->known);
    pthread_mutex_destroy(&r->mu);
    free(r->auth);
    free(r->url);
    free(r);
}

/* GET {url}{path} from the registry: its JSON answer (caller frees with
 * json_decref), or NULL with err (FLOE_ENOENT on a 404); what names the
 * thing asked for in messages. */
static json_t *get_doc(registry_remote_t *r, const char *path, const char *what, floe_err_t *err)
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
    if (floe_http_call(&c, &status, &body, err)) {
        floe_err_wrap(err, "%s from %s", what, r->url);
    } else if (status == 404) {
        floe_err_set(err, FLOE_ENOENT, "%s is not in the registry at %s", what, r->url);
    } else if (status != 200) {
        floe_err_set(err, FLOE_EIO, "%s: the registry at %s answered %ld: %.*s", what, r->url,
                     status, (int)(body.len < 200 ? body.len : 200),
                     body.data ? (const char *)body.data : "");
    } else if (!(doc = json_loadb((const char *)body.data, body.len, 0, NULL)) ||
               !json_string_value(json_object_get(doc, "schema"))) {
        floe_err_set(err, FLOE_EIO, "%s: the registry at %s answered no schema", what, r->url);
        json_decref(doc);
        doc = NULL;
    }
    floe_buf_free(&body);
    return doc;
}

/* The schemaType of a registry answer ("AVRO" when it names none). */
static const char *type_of(const json_t *doc)
{
    const char *t = json_string_value(json_object_get(doc, "schemaType"));
    return t ? t : "AVRO";
}

/* The texts of the Avro schemas doc's references name, and theirs,
 * appended to k->refs (dependencies first; each subject/version once, as
 * seen holds them). */
static int avro_refs(registry_remote_t *r, const json_t *doc, struct known *k, json_t *seen,
                     int depth, floe_err_t *err)
{
    if (depth > 16) return floe_err_set(err, FLOE_EINVAL, "references nested deeper than 16");
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(doc, "references"), i, ref)
    {
        const char *subject = json_string_value(json_object_get(ref, "subject"));
        json_t *ver = json_object_get(ref, "version");
        if (!subject || !json_is_integer(ver))
            return floe_err_set(err, FLOE_EINVAL, "a reference without subject or version");
        char esc[1024], path[1200], what[1200];
        url_escape(subject, esc, sizeof esc);
        snprintf(path, sizeof path, "/subjects/%s/versions/%lld", esc,
                 (long long)json_integer_value(ver));
        if (json_object_get(seen, path)) continue;
        if (json_object_set_new(seen, path, json_true())) return floe_err_oom(err);
        snprintf(what, sizeof what, "reference %s version %lld", subject,
                 (long long)json_integer_value(ver));
        json_t *d = get_doc(r, path, what, err);
        if (!d) return -1;
        char *text = NULL;
        floe_avro_text_t *t = NULL;
        int rc = -1;
        if (strcmp(type_of(d), "AVRO"))
            floe_err_set(err, FLOE_EINVAL, "%s is %s, not AVRO", what, type_of(d));
        else if (!(text = strdup(json_string_value(json_object_get(d, "schema")))))
            floe_err_oom(err);
        else if (!avro_refs(r, d, k, seen, depth + 1, err) &&
                 !(t = realloc(k->refs, (k->nrefs + 1) * sizeof *t)))
            floe_err_oom(err);
        else if (t) {
            k->refs = t;
            k->refs[k->nrefs++] = (floe_avro_text_t){text, strlen(text)};
            text = NULL;
            rc = 0;
        }
        free(text);
        json_decref(d);
        if (rc) return -1;
    }
    return 0;
}

/* Schema id from the registry into *k: an Avro schema with the texts of
 * the schemas it references, or (json) a JSON schema without references.
 * 0, or -1 with err (FLOE_ENOENT when the registry has no such id). */
static int fetch(registry_remote_t *r, int32_t id, bool json, struct known *k, floe_err_t *err)
{
    char path[64], what[64];
    snprintf(path, sizeof path, "/schemas/ids/%d", (int)id);
    snprintf(what, sizeof what, "schema id %d", (int)id);
    *k = (struct known){.id = id, .json = json};
    json_t *doc = get_doc(r, path, what, err), *seen = NULL;
    if (!doc) return -1;
    int rc = -1;
    const char *want = json ? "JSON" : "AVRO";
    if (strcmp(type_of(doc), want)) {
        floe_err_set(err, FLOE_EINVAL, "schema id %d is %s, not %s", (int)id, type_of(doc), want);
    } else if (json && json_array_size(json_object_get(doc, "references"))) {
        floe_err_set(err, FLOE_EINVAL,
                     "schema id %d refers to other schemas, which floe does not follow through "
                     "an external registry yet",
                     (int)id);
    } else if (!(k->text = strdup(json_string_value(json_object_get(doc, "schema")))) ||
               (!json && !(seen = json_object()))) {
        floe_err_oom(err);
    } else {
        rc = json ? 0 : avro_refs(r, doc, k, seen, 0, err);
    }
    json_decref(seen);
    json_decref(doc);
    if (rc) known_clear(k);
    return rc;
}

/* Schema id (json: a JSON schema, else Avro), fetched once: *out holds
 * texts borrowed until r is freed; 0, or -1 with err. */
static int known_by_id(registry_remote_t *r, int32_t id, bool json, struct known *out,
                       floe_err_t *err)
{
    bool have = false;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nknown && !have; i++)
        if (r->known[i].id == id && r->known[i].json == json) {
            *out = r->known[i];
            have = true;
        }
    pthread_mutex_unlock(&r->mu); /* texts are never freed before r */
    if (have) return 0;
    struct known k;
    if (fetch(r, id, json, &k, err)) return -1;
    pthread_mutex_lock(&r->mu);
    if (r->nknown == r->capknown) {
        size_t cap = r->capknown ? r->capknown * 2 : 16;
        struct known *n = realloc(r->known, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&r->mu);
            known_clear(&k);
            return floe_err_oom(err);
        }
        r->known = n;
        r->capknown = cap;
    }
    r->known[r->nknown++] = k;
    pthread_mutex_unlock(&r->mu);
    *out = k;
    return 0;
}

static int schema_by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    struct known k;
    if (known_by_id(arg, id, false, &k, err)) return -1;
    return floe_avro_schema_parse_refs(k.text, strlen(k.text), k.refs, k.nrefs, out, err);
}

static int json_by_id(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    struct known k;
    if (known_by_id(arg, id, true, &k, err)) return -1;
    return floe_jschema_parse(k.text, strlen(k.text), NULL, 0, out, err);
}

/* The id of subject's version (0: latest) from the registry. */
static int id_of(void *arg, const char *subject, int32_t version, int32_t *id, floe_err_t *err)
{
    registry_remote_t *r = arg;
    char esc[1024], path[1200], what[1200];
    url_escape(subject, esc, sizeof esc);
    if (version) snprintf(path, sizeof path, "/subjects/%s/versions/%d", esc, (int)version);
    else
        snprintf(path, sizeof path, "/subjects/%s/versions/latest", esc);
    snprintf(what, sizeof what, "subject %s version %s", subject, strrchr(path, '/') + 1);
    json_t *doc = get_doc(r, path, what, err);
    if (!doc) return -1;
    json_t *j = json_object_get(doc, "id");
    int rc = json_is_integer(j) && json_integer_value(j) > 0 && json_integer_value(j) <= INT32_MAX
                 ? 0
                 : floe_err_set(err, FLOE_EIO, "%s: the registry answered no id", what);
    if (!rc) *id = (int32_t)json_integer_value(j);
    json_decref(doc);
    return rc;
}

/* ---- Protobuf: the .proto text of an id and the files it references ---- */

#define MAX_REF_DEPTH 16

typedef struct pfiles {
    floe_proto_file_t **f;
    size_t n;
} pfiles_t;

/* s with every byte but [A-Za-z0-9._~-] as %XX (a subject in a path). */
static void url_escape(const char *s, char *out, size_t size)
{
    size_t at = 0;
    for (; *s && at + 4 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            strchr("._~-", c))
            out[at++] = (char)c;
        else
            at += (size_t)snprintf(out + at, size - at, "%%%02X", c);
    }
    out[at] = '\0';
}

/* The files a registry answer's `references` name ({name, subject,
 * version}, each fetched as GET /subjects/{subject}/versions/{version}),
 * and theirs, parsed into fs, each once. */
static int proto_refs(registry_remote_t *r, const json_t *refs, pfiles_t *fs, int depth,
                      floe_err_t *err)
{
    if (depth > MAX_REF_DEPTH)
        return floe_err_set(err, FLOE_EINVAL, "references nested deeper than %d", MAX_REF_DEPTH);
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        const char *name = json_string_value(json_object_get(ref, "name"));
        const char *subject = json_string_value(json_object_get(ref, "subject"));
        json_t *ver = json_object_get(ref, "version");
        if (!name || !subject || !json_is_integer(ver))
            return floe_err_set(err, FLOE_EINVAL, "a reference without name, subject or version");
        bool have = false;
        for (size_t k = 0; k < fs->n && !have; k++) have = !strcmp(fs->f[k]->name, name);
        if (have) continue;
        char esc[1024], path[1200], what[1200];
        url_escape(subject, esc, sizeof esc);
        snprintf(path, sizeof path, "/subjects/%s/versions/%lld", esc,
                 (long long)json_integer_value(ver));
        snprintf(what, sizeof what, "reference %s (subject %s version %lld)", name, subject,
                 (long long)json_integer_value(ver));
        json_t *doc = get_doc(r, path, what, err);
        if (!doc) return -1;
        const char *text = json_string_value(json_object_get(doc, "schema"));
        floe_proto_file_t *f = NULL, **slot = NULL;
        int rc = -1;
        if (strcmp(type_of(doc), "PROTOBUF")) {
            floe_err_set(err, FLOE_EINVAL, "%s is %s, not PROTOBUF", what, type_of(doc));
        } else if (floe_proto_parse(text, strlen(text), name, &f, err)) {
            floe_err_wrap(err, "%s", what);
        } else if (!(slot = realloc(fs->f, (fs->n + 1) * sizeof *slot))) {
            floe_proto_file_free(f);
            floe_err_oom(err);
        } else {
            fs->f = slot;
            fs->f[fs->n++] = f;
            rc = proto_refs(r, json_object_get(doc, "references"), fs, depth + 1, err);
        }
        json_decref(doc);
        if (rc) return -1;
    }
    return 0;
}

/* The Protobuf schema of id with the files it references, resolved.  The
 * converters keep it per id, so the registry is asked once per id. */
static int proto_by_id(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    registry_remote_t *r = arg;
    char path[64], what[64];
    snprintf(path, sizeof path, "/schemas/ids/%d", (int)id);
    snprintf(what, sizeof what, "schema id %d", (int)id);
    json_t *doc = get_doc(r, path, what, err);
    if (!doc) return -1;
    const char *text = json_string_value(json_object_get(doc, "schema"));
    floe_proto_file_t *main = NULL;
    pfiles_t fs = {0};
    int rc = -1;
    if (strcmp(type_of(doc), "PROTOBUF"))
        floe_err_set(err, FLOE_EINVAL, "schema id %d is %s, not PROTOBUF", (int)id, type_of(doc));
    else if (!floe_proto_parse(text, strlen(text), NULL, &main, err) &&
             !proto_refs(r, json_object_get(doc, "references"), &fs, 0, err)) {
        rc = floe_proto_schema_new(main, fs.f, fs.n, out, err); /* takes the files */
        main = NULL;
        fs.n = 0;
    }
    floe_proto_file_free(main);
    for (size_t i = 0; i < fs.n; i++) floe_proto_file_free(fs.f[i]);
    free(fs.f);
    json_decref(doc);
    return rc;
}

floe_conv_schemas_t registry_remote_schemas(registry_remote_t *r)
{
    return (floe_conv_schemas_t){
        .fn = schema_by_id, .arg = r, .proto = proto_by_id, .json = json_by_id, .id_of = id_of};
}
