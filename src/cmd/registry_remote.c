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
        bool json;                /* a JSON schema, else Avro */
        floe_jschema_doc_t *refs; /* its references' names and texts, dependencies first */
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
    for (size_t i = 0; i < k->nrefs; i++) {
        free((char *)k->refs[i].name);
        free((char *)k->refs[i].text);
    }
    free(k->refs);
    *k = (struct known){0};
}

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

#define MAX_REF_DEPTH 16

/* What walk_refs hands on: a schema a reference names (name, the
 * reference's), as the registry answered it (doc; what names it). */
typedef int (*ref_fn)(void *ctx, const char *name, const json_t *doc, const char *what,
                      floe_err_t *err);

/* walk_refs at depth; seen holds the reference names taken. */
static int walk(registry_remote_t *r, const json_t *doc, const char *type, const char *query,
                json_t *seen, ref_fn fn, void *ctx, int depth, floe_err_t *err)
{
    if (depth > MAX_REF_DEPTH)
        return floe_err_set(err, FLOE_EINVAL, "references nested deeper than %d", MAX_REF_DEPTH);
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(doc, "references"), i, ref)
    {
        const char *name = json_string_value(json_object_get(ref, "name"));
        const char *subject = json_string_value(json_object_get(ref, "subject"));
        json_t *ver = json_object_get(ref, "version");
        if (!name || !subject || !json_is_integer(ver))
            return floe_err_set(err, FLOE_EINVAL, "a reference without name, subject or version");
        if (json_object_get(seen, name)) continue;
        if (json_object_set_new(seen, name, json_true())) return floe_err_oom(err);
        char esc[1024], path[1300], what[1300];
        url_escape(subject, esc, sizeof esc);
        snprintf(path, sizeof path, "/subjects/%s/versions/%lld%s", esc,
                 (long long)json_integer_value(ver), query);
        snprintf(what, sizeof what, "reference %s (subject %s version %lld)", name, subject,
                 (long long)json_integer_value(ver));
        json_t *d = get_doc(r, path, what, err);
        if (!d) return -1;
        int rc = -1;
        if (strcmp(type_of(d), type))
            floe_err_set(err, FLOE_EINVAL, "%s is %s, not %s", what, type_of(d), type);
        else if (!walk(r, d, type, query, seen, fn, ctx, depth + 1, err))
            rc = fn(ctx, name, d, what, err);
        json_decref(d);
        if (rc) return -1;
    }
    return 0;
}

/* The schemas doc's `references` name ({name, subject, version}, each
 * fetched as GET /subjects/{subject}/versions/{version}{query}), and
 * theirs, each reference name once, all of schemaType type: each handed
 * to fn after the schemas it references (dependencies first).  0, or -1
 * with err. */
static int walk_refs(registry_remote_t *r, const json_t *doc, const char *type, const char *query,
                     ref_fn fn, void *ctx, floe_err_t *err)
{
    json_t *seen = json_object();
    if (!seen) return floe_err_oom(err);
    int rc = walk(r, doc, type, query, seen, fn, ctx, 0, err);
    json_decref(seen);
    return rc;
}

/* ref_fn for Avro and JSON schemas: the reference's name and text into
 * the struct known ctx. */
static int keep_text(void *ctx, const char *name, const json_t *doc, const char *what,
                     floe_err_t *err)
{
    (void)what;
    struct known *k = ctx;
    const char *text = json_string_value(json_object_get(doc, "schema"));
    floe_jschema_doc_t *t = realloc(k->refs, (k->nrefs + 1) * sizeof *t);
    if (!t) return floe_err_oom(err);
    k->refs = t;
    char *n = strdup(name), *x = strdup(text);
    if (!n || !x) {
        free(n);
        free(x);
        return floe_err_oom(err);
    }
    k->refs[k->nrefs++] = (floe_jschema_doc_t){n, x, strlen(x)};
    return 0;
}

/* Schema id from the registry into *k: an Avro or (json) a JSON schema
 * with the texts of the schemas it references.  0, or -1 with err
 * (FLOE_ENOENT when the registry has no such id). */
static int fetch(registry_remote_t *r, int32_t id, bool json, struct known *k, floe_err_t *err)
{
    char path[64], what[64];
    snprintf(path, sizeof path, "/schemas/ids/%d", (int)id);
    snprintf(what, sizeof what, "schema id %d", (int)id);
    *k = (struct known){.id = id, .json = json};
    json_t *doc = get_doc(r, path, what, err);
    if (!doc) return -1;
    int rc = -1;
    const char *want = json ? "JSON" : "AVRO";
    if (strcmp(type_of(doc), want))
        floe_err_set(err, FLOE_EINVAL, "schema id %d is %s, not %s", (int)id, type_of(doc), want);
    else if (!(k->text = strdup(json_string_value(json_object_get(doc, "schema")))))
        floe_err_oom(err);
    else
        rc = walk_refs(r, doc, want, "", keep_text, k, err);
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
    floe_avro_text_t *t = k.nrefs ? calloc(k.nrefs, sizeof *t) : NULL;
    if (k.nrefs && !t) return floe_err_oom(err);
    for (size_t i = 0; i < k.nrefs; i++) t[i] = (floe_avro_text_t){k.refs[i].text, k.refs[i].len};
    int rc = floe_avro_schema_parse_refs(k.text, strlen(k.text), t, k.nrefs, out, err);
    free(t);
    return rc;
}

/* A JSON schema whose "$ref"s reach its references' documents by their
 * names, as floe's own registry resolves them (registry/json.c). */
static int json_by_id(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    struct known k;
    if (known_by_id(arg, id, true, &k, err)) return -1;
    if (!floe_jschema_parse(k.text, strlen(k.text), k.refs, k.nrefs, out, err)) return 0;
    floe_err_wrap(err, "schema id %d", (int)id);
    return -1;
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

/* ---- Protobuf: the file of an id and the files it references ---- */

typedef struct pfiles {
    floe_proto_file_t **f;
    size_t n;
} pfiles_t;

/* ref_fn for Protobuf: the referenced file, called by the reference's
 * name (the import it satisfies), into the pfiles_t ctx. */
static int keep_file(void *ctx, const char *name, const json_t *doc, const char *what,
                     floe_err_t *err)
{
    pfiles_t *fs = ctx;
    const char *text = json_string_value(json_object_get(doc, "schema"));
    floe_proto_file_t *f = NULL, **slot;
    if (floe_proto_load(text, strlen(text), name, &f, err)) {
        floe_err_wrap(err, "%s", what);
        return -1;
    }
    if (!(slot = realloc(fs->f, (fs->n + 1) * sizeof *slot))) {
        floe_proto_file_free(f);
        return floe_err_oom(err);
    }
    fs->f = slot;
    fs->f[fs->n++] = f;
    return 0;
}

/* The Protobuf schema of id with the files it references, resolved.  Each
 * is asked for with ?format=serialized, the FileDescriptorProto the
 * producer registered, which needs no .proto printer and parser between
 * the registry and floe; a registry that does not know the parameter
 * answers .proto text, and some (Apicurio, Karapace) keep what the
 * serializer registered: floe_proto_load takes either.  The converters
 * keep the schema per id, so the registry is asked once per id. */
static int proto_by_id(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    registry_remote_t *r = arg;
    char path[80], what[64];
    snprintf(path, sizeof path, "/schemas/ids/%d?format=serialized", (int)id);
    snprintf(what, sizeof what, "schema id %d", (int)id);
    json_t *doc = get_doc(r, path, what, err);
    if (!doc) return -1;
    const char *text = json_string_value(json_object_get(doc, "schema"));
    floe_proto_file_t *main = NULL;
    pfiles_t fs = {0};
    int rc = -1;
    if (strcmp(type_of(doc), "PROTOBUF"))
        floe_err_set(err, FLOE_EINVAL, "schema id %d is %s, not PROTOBUF", (int)id, type_of(doc));
    else if (floe_proto_load(text, strlen(text), NULL, &main, err))
        floe_err_wrap(err, "%s", what);
    else if (!walk_refs(r, doc, "PROTOBUF", "?format=serialized", keep_file, &fs, err)) {
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
