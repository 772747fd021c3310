/* The schema registry (src/registry): the Avro compatibility matrix per
 * level, and the REST API driven through its handler, with its records
 * replayed into a second registry. */
#include <jansson.h>

#include "http/client.h"
#include "registry/registry.h"
#include "test.h"

/* ---- compatibility matrix ---- */

#define REC(fields) "{\"type\":\"record\",\"name\":\"U\",\"fields\":[" fields "]}"
static const char *A = REC("{\"name\":\"a\",\"type\":\"int\"}");
static const char *B =
    REC("{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\",\"type\":\"string\"}");
static const char *C = REC("{\"name\":\"a\",\"type\":\"int\"},"
                           "{\"name\":\"b\",\"type\":\"string\",\"default\":\"x\"}");
static const char *D = REC("{\"name\":\"a\",\"type\":\"long\"}");
static const char *E = REC("");
static const char *V = "{\"type\":\"record\",\"name\":\"V\",\"fields\":[{\"name\":\"a\",\"type\":"
                       "\"int\"}]}";
static const char *EN2 = "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\"]}";
static const char *EN3 = "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\",\"Z\"]}";
static const char *EN2D =
    "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\"],\"default\":\"X\"}";
static const char *STR = "\"string\"";
static const char *BYTES = "\"bytes\"";
static const char *OPT = "[\"null\",\"string\"]";
static const char *FLT = "\"float\"";
static const char *DBL = "\"double\"";
static const char *ARR_INT = "{\"type\":\"array\",\"items\":\"int\"}";
static const char *ARR_LONG = "{\"type\":\"array\",\"items\":\"long\"}";
static const char *MAP_STR = "{\"type\":\"map\",\"values\":\"string\"}";
static const char *FIX4 = "{\"type\":\"fixed\",\"name\":\"F\",\"size\":4}";
static const char *FIX8 = "{\"type\":\"fixed\",\"name\":\"F\",\"size\":8}";
static const char *NESTED_A =
    REC("{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"x\","
        "\"type\":\"int\"}]}}");
static const char *NESTED_B =
    REC("{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"x\","
        "\"type\":\"int\"},{\"name\":\"y\",\"type\":\"int\"}]}}");
static const char *LIST = "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"next\","
                          "\"type\":[\"null\",\"L\"]}]}";

/* old -> new, and whether BACKWARD (new reads old), FORWARD (old reads
 * new) hold; FULL is both, NONE is always. */
static const struct {
    const char **old, **new_;
    int backward, forward;
} matrix[] = {
    {&A, &A, 1, 1},
    {&A, &B, 0, 1},
    {&A, &C, 1, 1},
    {&A, &D, 1, 0},
    {&A, &E, 1, 0},
    {&A, &V, 0, 0},
    {&EN2, &EN3, 1, 0},
    {&EN3, &EN2, 0, 1},
    {&EN2D, &EN3, 1, 1},
    {&STR, &OPT, 1, 0},
    {&OPT, &STR, 0, 1},
    {&STR, &BYTES, 1, 1},
    {&FLT, &DBL, 1, 0},
    {&ARR_INT, &ARR_LONG, 1, 0},
    {&MAP_STR, &STR, 0, 0},
    {&FIX4, &FIX8, 0, 0},
    {&NESTED_A, &NESTED_B, 0, 1},
    {&LIST, &LIST, 1, 1},
};

static floe_avro_schema_t *parse(const char *s)
{
    floe_avro_schema_t *out = NULL;
    floe_err_t err = {0};
    if (floe_avro_schema_parse(s, strlen(s), &out, &err)) fprintf(stderr, "%s: %s\n", s, err.msg);
    return out;
}

static void test_compat_matrix(void)
{
    for (size_t i = 0; i < sizeof matrix / sizeof *matrix; i++) {
        floe_avro_schema_t *o = parse(*matrix[i].old), *n = parse(*matrix[i].new_);
        CHECK(o && n);
        if (!o || !n) continue;
        floe_buf_t msgs = FLOE_BUF_INIT;
        bool back = floe_registry_avro_compatible(n, o, &msgs);
        bool fwd = floe_registry_avro_compatible(o, n, NULL);
        if (back != (bool)matrix[i].backward || fwd != (bool)matrix[i].forward)
            fprintf(stderr, "pair %zu: backward %d forward %d\n", i, back, fwd);
        CHECK_EQ(back, matrix[i].backward);
        CHECK_EQ(fwd, matrix[i].forward);
        /* an incompatible verdict always says why */
        CHECK_EQ(back, msgs.len == 0);
        floe_buf_free(&msgs);
        floe_avro_schema_free(o);
        floe_avro_schema_free(n);
    }
}

/* ---- the REST API ---- */

/* The records a registry wrote: keys and values (NULL: tombstone). */
typedef struct store {
    char *key[256], *val[256];
    int n;
    int fail; /* fail the next persist */
} store_t;

static int persist(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl,
                   floe_err_t *err)
{
    store_t *s = arg;
    if (s->fail) {
        s->fail = 0;
        return floe_err_set(err, FLOE_EIO, "disk on fire");
    }
    if (s->n == 256) return floe_err_set(err, FLOE_ENOMEM, "full");
    s->key[s->n] = strndup((const char *)k, kl);
    s->val[s->n] = v ? strndup((const char *)v, vl) : NULL;
    s->n++;
    return 0;
}

static void store_free(store_t *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->key[i]);
        free(s->val[i]);
    }
}

/* Registries served on a real listener (floe_registry_http), started at
 * their first request and stopped by unserve before the registry goes. */
static struct {
    floe_registry_t *r;
    floe_http_t *h;
    int port;
} served[4];

static int port_of(floe_registry_t *r)
{
    size_t free_slot = sizeof served / sizeof served[0];
    for (size_t i = 0; i < sizeof served / sizeof served[0]; i++) {
        if (served[i].r == r) return served[i].port;
        if (!served[i].r && free_slot == sizeof served / sizeof served[0]) free_slot = i;
    }
    floe_err_t e;
    if (free_slot == sizeof served / sizeof served[0]) return -1;
    floe_http_t *h = NULL;
    if (floe_http_new(&h, &e) || floe_registry_http(r, h, &e) ||
        floe_http_start(h, "127.0.0.1", 0, &e)) {
        printf("# cannot serve the registry: %s\n", e.msg);
        if (h) floe_http_free(h);
        return -1;
    }
    served[free_slot].r = r;
    served[free_slot].h = h;
    served[free_slot].port = floe_http_port(h);
    return served[free_slot].port;
}

static void unserve(floe_registry_t *r)
{
    for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
        if (served[i].r == r) {
            floe_http_free(served[i].h);
            served[i].r = NULL;
        }
}

/* One request over HTTP; the answer's status, its body in *out (caller
 * frees; may be NULL). */
static int call(floe_registry_t *r, const char *method, const char *path, const char *query,
                const char *body, char **out)
{
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s%s%s", port_of(r), path, query ? "?" : "",
             query ? query : "");
    floe_http_call_t c = {.method = method,
                          .url = url,
                          .body = body,
                          .body_len = body ? strlen(body) : 0,
                          .timeout_ms = 10000,
                          .max_answer = 1 << 20};
    floe_buf_t b = FLOE_BUF_INIT;
    long status = 0;
    floe_err_t e;
    if (floe_http_call(&c, &status, &b, &e)) {
        printf("# %s %s: %s\n", method, url, e.msg);
        status = 0;
    }
    floe_buf_append_u8(&b, 0);
    if (out) *out = strdup((const char *)b.data);
    floe_buf_free(&b);
    return (int)status;
}

/* {"schema": s} */
static char *wrap(const char *s)
{
    json_t *j = json_pack("{s:s}", "schema", s);
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return t;
}

static int reg(floe_registry_t *r, const char *subject, const char *schema, char **out)
{
    char path[256];
    snprintf(path, sizeof path, "/subjects/%s/versions", subject);
    char *b = wrap(schema);
    int st = call(r, "POST", path, "normalize=false", b, out);
    free(b);
    return st;
}

static long long jint(const char *body, const char *key)
{
    json_t *j = json_loads(body, 0, NULL);
    long long v = json_integer_value(json_object_get(j, key));
    json_decref(j);
    return v;
}

static void test_api(void)
{
    store_t st = {0};
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(persist, &st, &r, &err), 0);
    char *b = NULL;
    CHECK_EQ(reg(r, "t-value", A, &b), 200);
    CHECK_EQ(jint(b, "id"), 1);
    free(b);
    /* the same schema, written differently: the same id, no new version */
    CHECK_EQ(reg(r, "t-value",
                 "{ \"name\" : \"U\", \"type\": \"record\", \"fields\": [ {\"type\": \"int\", "
                 "\"name\": \"a\"} ] }",
                 &b),
             200);
    CHECK_EQ(jint(b, "id"), 1);
    free(b);
    CHECK_EQ(reg(r, "t-value", B, &b), 409); /* BACKWARD: b has no default */
    CHECK(strstr(b, "READER_FIELD_MISSING_DEFAULT_VALUE") != NULL);
    CHECK_EQ(jint(b, "error_code"), 409);
    free(b);
    CHECK_EQ(reg(r, "t-value", C, &b), 200);
    CHECK_EQ(jint(b, "id"), 2);
    free(b);
    /* the same schema in another subject keeps its global id */
    CHECK_EQ(reg(r, "other", C, &b), 200);
    CHECK_EQ(jint(b, "id"), 2);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/t-value/versions", NULL, NULL, &b), 200);
    CHECK_STR(b, "[1,2]");
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/t-value/versions/latest", NULL, NULL, &b), 200);
    CHECK_EQ(jint(b, "version"), 2);
    CHECK_EQ(jint(b, "id"), 2);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/t-value/versions/1/schema", NULL, NULL, &b), 200);
    CHECK_STR(b, A);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/t-value/versions/9", NULL, NULL, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40402);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/t-value/versions/x", NULL, NULL, &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42202);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/nope/versions", NULL, NULL, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40401);
    free(b);
    CHECK_EQ(call(r, "GET", "/schemas/ids/2", "subject=x", NULL, &b), 200);
    CHECK(strstr(b, "\"schema\"") != NULL);
    free(b);
    CHECK_EQ(call(r, "GET", "/schemas/ids/77", NULL, NULL, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40403);
    free(b);
    CHECK_EQ(call(r, "GET", "/schemas/ids/2/versions", NULL, NULL, &b), 200);
    CHECK_STR(b, "[{\"subject\":\"t-value\",\"version\":2},{\"subject\":\"other\",\"version\":1}]");
    free(b);
    /* lookup compares parsed schemas */
    char *w = wrap("{\"type\":\"record\",\"name\":\"U\",\"fields\":[{\"name\":\"a\",\"type\":"
                   "{\"type\":\"int\"}}]}");
    CHECK_EQ(call(r, "POST", "/subjects/t-value", NULL, w, &b), 200);
    CHECK_EQ(jint(b, "version"), 1);
    free(b);
    free(w);
    w = wrap(D);
    CHECK_EQ(call(r, "POST", "/subjects/t-value", NULL, w, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40403);
    free(b);
    /* compatibility: D (a: long) reads v1, but v2's reader cannot read it back under FULL */
    CHECK_EQ(call(r, "POST", "/compatibility/subjects/t-value/versions/1", "verbose=true", w, &b),
             200);
    CHECK(strstr(b, "\"is_compatible\":true") != NULL);
    free(b);
    CHECK_EQ(call(r, "PUT", "/config/t-value", NULL, "{\"compatibility\":\"FULL\"}", &b), 200);
    free(b);
    CHECK_EQ(
        call(r, "POST", "/compatibility/subjects/t-value/versions/latest", "verbose=true", w, &b),
        200);
    CHECK(strstr(b, "\"is_compatible\":false") != NULL);
    CHECK(strstr(b, "TYPE_MISMATCH") != NULL);
    free(b);
    free(w);
    CHECK_EQ(call(r, "GET", "/config/t-value", NULL, NULL, &b), 200);
    CHECK_STR(b, "{\"compatibilityLevel\":\"FULL\"}");
    free(b);
    CHECK_EQ(call(r, "GET", "/config/other", NULL, NULL, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40408);
    free(b);
    CHECK_EQ(call(r, "GET", "/config/other", "defaultToGlobal=true", NULL, &b), 200);
    CHECK_STR(b, "{\"compatibilityLevel\":\"BACKWARD\"}");
    free(b);
    CHECK_EQ(call(r, "PUT", "/config", NULL, "{\"compatibility\":\"SIDEWAYS\"}", &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42203);
    free(b);
    /* refused cleanly: other schema types, references, invalid schemas */
    CHECK_EQ(call(r, "POST", "/subjects/p/versions", NULL,
                  "{\"schemaType\":\"PROTOBUF\",\"schema\":\"syntax = \\\"proto3\\\";\"}", &b),
             422);
    CHECK(strstr(b, "not supported yet") != NULL);
    free(b);
    CHECK_EQ(call(r, "POST", "/subjects/p/versions", NULL,
                  "{\"schema\":\"\\\"string\\\"\",\"references\":[{\"name\":\"x\",\"subject\":"
                  "\"y\",\"version\":1}]}",
                  &b),
             422);
    free(b);
    CHECK_EQ(reg(r, "p", "{\"type\":\"record\"}", &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42201);
    free(b);
    /* the JavaScript client's association lookup must be a plain 404 */
    CHECK_EQ(call(r, "GET", "/associations/resources/-/t",
                  "resourceType=topic&associationType=value", NULL, &b),
             404);
    free(b);
    /* deletes: soft first, then permanent */
    CHECK_EQ(call(r, "DELETE", "/subjects/other/versions/1", "permanent=true", NULL, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40407);
    free(b);
    CHECK_EQ(call(r, "DELETE", "/subjects/other", NULL, NULL, &b), 200);
    CHECK_STR(b, "[1]");
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects", NULL, NULL, &b), 200);
    CHECK_STR(b, "[\"t-value\"]");
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects", "deleted=true", NULL, &b), 200);
    CHECK_STR(b, "[\"t-value\",\"other\"]");
    free(b);
    CHECK_EQ(call(r, "DELETE", "/subjects/other", NULL, NULL, &b), 404);
    CHECK_EQ(jint(b, "error_code"), 40404);
    free(b);
    CHECK_EQ(call(r, "DELETE", "/subjects/other", "permanent=true", NULL, &b), 200);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects", "deleted=true", NULL, &b), 200);
    CHECK_STR(b, "[\"t-value\"]");
    free(b);
    /* read-only mode refuses registrations */
    CHECK_EQ(call(r, "PUT", "/mode", NULL, "{\"mode\":\"READONLY\"}", &b), 200);
    free(b);
    CHECK_EQ(reg(r, "q", STR, &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42205);
    free(b);
    CHECK_EQ(call(r, "PUT", "/mode", NULL, "{\"mode\":\"READWRITE\"}", &b), 200);
    free(b);
    /* a store that fails: 500, and nothing changed */
    st.fail = 1;
    CHECK_EQ(reg(r, "q", STR, &b), 500);
    CHECK_EQ(jint(b, "error_code"), 50001);
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/q/versions", NULL, NULL, NULL), 404);

    /* replay every record into a new registry: the same answers, and a
     * new schema gets an id above every id ever given */
    floe_registry_t *r2;
    CHECK_EQ(floe_registry_new(NULL, NULL, &r2, &err), 0);
    for (int i = 0; i < st.n; i++)
        CHECK_EQ(floe_registry_apply(r2, (const uint8_t *)st.key[i], strlen(st.key[i]),
                                     (const uint8_t *)st.val[i], st.val[i] ? strlen(st.val[i]) : 0),
                 0);
    const char *gets[] = {"/subjects",
                          "/subjects/t-value/versions",
                          "/subjects/t-value/versions/1",
                          "/subjects/t-value/versions/latest",
                          "/config/t-value",
                          "/schemas/ids/1",
                          "/schemas/ids/2",
                          "/mode",
                          "/config"};
    for (size_t i = 0; i < sizeof gets / sizeof *gets; i++) {
        char *b1 = NULL, *b2 = NULL;
        CHECK_EQ(call(r, "GET", gets[i], NULL, NULL, &b1),
                 call(r2, "GET", gets[i], NULL, NULL, &b2));
        CHECK_STR(b1, b2);
        free(b1);
        free(b2);
    }
    CHECK_EQ(reg(r2, "q", STR, &b), 200);
    CHECK_EQ(jint(b, "id"), 3);
    free(b);
    /* unknown records are skipped */
    CHECK_EQ(floe_registry_apply(r2, (const uint8_t *)"{\"keytype\":\"NOOP\"}", 18, NULL, 0), 1);
    CHECK_EQ(floe_registry_apply(r2, (const uint8_t *)"not json", 8, NULL, 0), 1);
    unserve(r2);
    floe_registry_free(r2);
    unserve(r);
    floe_registry_free(r);
    store_free(&st);
}

/* A permanently deleted schema that held the highest id: after the log
 * is compacted (the latest record per key, tombstones gone) and replayed,
 * its id is still not given again. */
static void ids_survive_compaction(void)
{
    store_t st = {0};
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(persist, &st, &r, &err), 0);
    CHECK_EQ(reg(r, "a", STR, NULL), 200);
    CHECK_EQ(reg(r, "b", BYTES, NULL), 200);
    CHECK_EQ(call(r, "DELETE", "/subjects/b", NULL, NULL, NULL), 200);
    CHECK_EQ(call(r, "DELETE", "/subjects/b", "permanent=true", NULL, NULL), 200);
    floe_registry_t *r2;
    CHECK_EQ(floe_registry_new(NULL, NULL, &r2, &err), 0);
    for (int i = 0; i < st.n; i++) {
        bool newest = true;
        for (int j = i + 1; j < st.n; j++)
            if (!strcmp(st.key[i], st.key[j])) newest = false;
        if (newest && st.val[i])
            floe_registry_apply(r2, (const uint8_t *)st.key[i], strlen(st.key[i]),
                                (const uint8_t *)st.val[i], strlen(st.val[i]));
    }
    char *b = NULL;
    CHECK_EQ(call(r2, "GET", "/schemas/ids/2", NULL, NULL, NULL), 404);
    CHECK_EQ(reg(r2, "c", FLT, &b), 200);
    CHECK_EQ(jint(b, "id"), 3);
    free(b);
    unserve(r2);
    floe_registry_free(r2);
    unserve(r);
    floe_registry_free(r);
    store_free(&st);
}

/* BACKWARD checks the newest version only; BACKWARD_TRANSITIVE all. */
static void test_transitive(void)
{
    const char *v1 = REC("{\"name\":\"a\",\"type\":\"int\"}"), *v2 = REC(""),
               *v3 = REC("{\"name\":\"a\",\"type\":\"string\",\"default\":\"z\"}");
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(NULL, NULL, &r, &err), 0);
    CHECK_EQ(
        call(r, "PUT", "/config/tr", NULL, "{\"compatibility\":\"BACKWARD_TRANSITIVE\"}", NULL),
        200);
    const char *subjects[] = {"plain", "tr"};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(reg(r, subjects[i], v1, NULL), 200);
        CHECK_EQ(reg(r, subjects[i], v2, NULL), 200);
        CHECK_EQ(reg(r, subjects[i], v3, NULL), i ? 409 : 200);
    }
    unserve(r);
    floe_registry_free(r);
}

TEST_MAIN({
    RUN(test_compat_matrix);
    RUN(test_api);
    RUN(test_transitive);
    RUN(ids_survive_compaction);
})
