/* The schema registry (src/registry): the Avro compatibility matrix per
 * level, and the REST API driven through its handler, with its records
 * replayed into a second registry. */
#include <jansson.h>

#include "http/client.h"
#include "registry/registry.h"
#include "util/base64.h"
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

/* A new registry with every record of st applied, in order. */
static floe_registry_t *replayed(const store_t *st)
{
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(NULL, NULL, &r, &err), 0);
    for (int i = 0; r && i < st->n; i++)
        CHECK_EQ(floe_registry_apply(r, (const uint8_t *)st->key[i], strlen(st->key[i]),
                                     (const uint8_t *)st->val[i],
                                     st->val[i] ? strlen(st->val[i]) : 0),
                 0);
    return r;
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

static int reg_typed(floe_registry_t *r, const char *subject, const char *type, const char *schema,
                     const char *refs, char **out);

static int reg(floe_registry_t *r, const char *subject, const char *schema, char **out)
{
    return reg_typed(r, subject, NULL, schema, NULL, out);
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
                  "{\"schemaType\":\"THRIFT\",\"schema\":\"{}\"}", &b),
             422);
    CHECK(strstr(b, "not supported yet") != NULL);
    free(b);
    CHECK_EQ(call(r, "POST", "/subjects/p/versions", NULL,
                  "{\"schemaType\":\"PROTOBUF\",\"schema\":\"message {\"}", &b),
             422);
    CHECK_EQ(jint(b, "error_code"), 42201);
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
    floe_registry_t *r2 = replayed(&st);
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

/* ---- Protobuf ---- */

static int reg_typed(floe_registry_t *r, const char *subject, const char *type, const char *schema,
                     const char *refs, char **out)
{
    char path[256];
    snprintf(path, sizeof path, "/subjects/%s/versions", subject);
    json_t *j = json_pack("{s:s}", "schema", schema);
    if (type) json_object_set_new(j, "schemaType", json_string(type));
    if (refs) json_object_set_new(j, "references", json_loads(refs, 0, NULL));
    char *b = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    int st = call(r, "POST", path, "normalize=false", b, out);
    free(b);
    return st;
}

/* Is `next` of schema type `type` compatible with the history at `level`
 * (the registry's verdict). */
static int verdict(const char *type, const char *level, const char *const *history, size_t nh,
                   const char *next)
{
    floe_registry_t *r;
    floe_err_t err = {0};
    if (floe_registry_new(NULL, NULL, &r, &err)) return -1;
    call(r, "PUT", "/config", NULL, "{\"compatibility\":\"NONE\"}", NULL);
    int v = -1;
    for (size_t i = 0; i < nh; i++)
        if (reg_typed(r, "s", type, history[i], NULL, NULL) != 200) goto out;
    char cfg[80];
    snprintf(cfg, sizeof cfg, "{\"compatibility\":\"%s\"}", level);
    call(r, "PUT", "/config", NULL, cfg, NULL);
    /* the answer of a registration: 200 compatible, 409 not */
    int st = reg_typed(r, "s", type, next, NULL, NULL);
    v = st == 200 ? 1 : st == 409 ? 0 : -1;
out:
    unserve(r);
    floe_registry_free(r);
    return v;
}

/* A pair (old, new) with Confluent's verdicts for data old wrote read by
 * new (backward) and the other way (forward). */
typedef struct pair {
    const char *old, *new_;
    int backward, forward;
    const char *why;
} pair_t;

/* Every pair at all seven levels. */
static void check_levels(const char *type, const pair_t *cases, size_t n)
{
    static const char *const levels[] = {
        "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
        "FULL",     "FULL_TRANSITIVE",     "NONE"};
    for (size_t i = 0; i < n; i++)
        for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
            const char *lv = levels[l];
            int b = cases[i].backward, f = cases[i].forward;
            int want = !strcmp(lv, "NONE")       ? 1
                       : !strncmp(lv, "FULL", 4) ? (b && f)
                       : !strncmp(lv, "BACK", 4) ? b
                                                 : f;
            int got = verdict(type, lv, &cases[i].old, 1, cases[i].new_);
            if (got != want) {
                char m[300];
                snprintf(m, sizeof m, "%s at %s: got %d, want %d", cases[i].why, lv, got, want);
                t_fail(__FILE__, __LINE__, m);
            }
        }
}

#define P3(body) "syntax = \"proto3\"; package p; " body
#define P2(body) "syntax = \"proto2\"; package p; " body

/* Pairs (old, new) with Confluent's verdicts for data old wrote read by
 * new (backward) and the other way (forward), at all seven levels. */
static void test_proto_matrix(void)
{
    static const pair_t cases[] = {
        {P3("message M { int32 a = 1; }"), P3("message M { int32 a = 1; string b = 2; }"), 1, 1,
         "field added"},
        {P3("message M { int32 a = 1; string b = 2; }"), P3("message M { int32 a = 1; }"), 1, 1,
         "field removed"},
        {P3("message M { int32 a = 1; }"), P3("message M { int32 renamed = 1; }"), 1, 1,
         "field renamed"},
        {P3("message M { int32 a = 1; }"), P3("message M { int64 a = 1; }"), 1, 1,
         "int32 -> int64, one wire group"},
        {P3("message M { int32 a = 1; }"), P3("message M { string a = 1; }"), 0, 0,
         "number reused with another scalar type"},
        {P3("message M { int32 a = 1; }"), P3("message M { sint32 a = 1; }"), 0, 0,
         "int32 -> sint32 (zigzag)"},
        {P3("message M { string a = 1; }"), P3("message M { bytes a = 1; }"), 1, 1,
         "string -> bytes"},
        {P3("message M { int32 a = 1; }"), P3("message M { N a = 1; } message N { int32 x = 1; }"),
         0, 0, "scalar -> message"},
        {P3("message M { N a = 1; } message N { int32 x = 1; }"),
         P3("message M { O a = 1; } message N { int32 x = 1; } message O { int32 x = 1; }"), 0, 0,
         "field's message type changed"},
        {P3("message M { int32 a = 1; }"), P3("message Renamed { int32 a = 1; }"), 0, 0,
         "message renamed"},
        {P3("message M { int32 a = 1; } message X { int32 b = 1; }"),
         P3("message M { int32 a = 1; }"), 0, 1, "message removed"},
        {P3("message M { oneof o { int32 a = 1; string b = 2; } }"),
         P3("message M { oneof o { int32 a = 1; } }"), 0, 1, "field removed from a oneof"},
        {P3("message M { int32 a = 1; int32 b = 2; }"),
         P3("message M { oneof o { int32 a = 1; int32 b = 2; } }"), 0, 1,
         "two fields moved into a new oneof"},
        {P3("message M { int32 a = 1; }"), P3("message M { oneof o { int32 a = 1; } }"), 1, 1,
         "one field moved into a new oneof"},
        {P3("message M { int32 a = 1; oneof o { int32 b = 2; } }"),
         P3("message M { oneof o { int32 a = 1; int32 b = 2; } }"), 0, 1,
         "field moved into an existing oneof"},
        {P2("message M { optional int32 a = 1; }"),
         P2("message M { optional int32 a = 1; required int32 b = 2; }"), 0, 0,
         "required field added"},
        {P3("message M { int32 a = 1; }"), P3("message M { repeated int32 a = 1; }"), 1, 1,
         "numeric label change"},
        {P3("message M { map<string, int32> m = 1; }"),
         P3("message M { map<string, string> m = 1; }"), 0, 0, "map value type changed"},
        {P3("message M { E e = 1; } enum E { A = 0; B = 1; }"),
         P3("message M { E e = 1; } enum E { A = 0; }"), 1, 1, "enum constant removed"},
        {P3("message M { int32 a = 1; }"),
         "syntax = \"proto3\"; package q; message M { int32 a = 1; }", 1, 1, "package changed"},
    };
    check_levels("PROTOBUF", cases, sizeof cases / sizeof *cases);
    /* transitive levels check every version, the others the newest only:
     * v1 int32 a, v2 without it, v3 string a */
    const char *hist[] = {P3("message M { int32 a = 1; }"), P3("message M { }")};
    const char *v3 = P3("message M { string a = 1; }");
    CHECK_EQ(verdict("PROTOBUF", "BACKWARD", hist, 2, v3), 1);
    CHECK_EQ(verdict("PROTOBUF", "BACKWARD_TRANSITIVE", hist, 2, v3), 0);
    CHECK_EQ(verdict("PROTOBUF", "FORWARD", hist, 2, v3), 1);
    CHECK_EQ(verdict("PROTOBUF", "FORWARD_TRANSITIVE", hist, 2, v3), 0);
    CHECK_EQ(verdict("PROTOBUF", "FULL", hist, 2, v3), 1);
    CHECK_EQ(verdict("PROTOBUF", "FULL_TRANSITIVE", hist, 2, v3), 0);
}

static char *file_b64(const char *name)
{
    char path[1024];
    const char *root = getenv("FLOE_ROOT");
    snprintf(path, sizeof path, "%s/tests/unit/data/%s", root ? root : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    /* the first FileDescriptorProto of protoc's FileDescriptorSet */
    size_t off = 0;
    floe_proto_wire_t w;
    floe_err_t err;
    if (floe_proto_wire_next(buf, n, &off, &w, &err) != 1) return NULL;
    floe_buf_t b = FLOE_BUF_INIT;
    floe_base64_encode(&b, w.p, w.len);
    return floe_buf_cstr(&b);
}

static char *file_text(const char *name)
{
    char path[1024];
    const char *root = getenv("FLOE_ROOT");
    snprintf(path, sizeof path, "%s/tests/unit/data/%s", root ? root : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *t = calloc(1, 65536);
    if (t) fread(t, 1, 65535, f);
    fclose(f);
    return t;
}

/* Protobuf through the API: protoc's descriptor and the .proto text are
 * one schema; both forms are answered; references; records replay. */
static void test_proto_api(void)
{
    store_t st = {0};
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(persist, &st, &r, &err), 0);
    char *b64 = file_b64("proto_shop.pb"), *text = file_text("proto_shop.proto"), *b = NULL;
    CHECK(b64 && text);
    if (!b64 || !text) return;
    CHECK_EQ(reg_typed(r, "shop-value", "PROTOBUF", b64, NULL, &b), 200);
    long long id = jint(b, "id");
    free(b);
    /* the text is the same schema: the same id, and a lookup finds it */
    CHECK_EQ(reg_typed(r, "shop-value", "PROTOBUF", text, NULL, &b), 200);
    CHECK_EQ(jint(b, "id"), id);
    free(b);
    json_t *j = json_pack("{s:s,s:s}", "schema", text, "schemaType", "PROTOBUF");
    char *body = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    CHECK_EQ(call(r, "POST", "/subjects/shop-value", "normalize=false&deleted=false", body, &b),
             200);
    CHECK_EQ(jint(b, "version"), 1);
    CHECK(strstr(b, "\"schemaType\":\"PROTOBUF\"") != NULL);
    free(b);
    free(body);
    /* default: .proto text; format=serialized: a descriptor of the same */
    char path[64];
    snprintf(path, sizeof path, "/schemas/ids/%lld", id);
    CHECK_EQ(call(r, "GET", path, "subject=shop-value", NULL, &b), 200);
    j = json_loads(b, 0, NULL);
    CHECK(strstr(json_string_value(json_object_get(j, "schema")), "message Payment {") != NULL);
    CHECK_STR(json_string_value(json_object_get(j, "schemaType")), "PROTOBUF");
    json_decref(j);
    free(b);
    CHECK_EQ(call(r, "GET", path, "format=serialized", NULL, &b), 200);
    j = json_loads(b, 0, NULL);
    const char *ser = json_string_value(json_object_get(j, "schema"));
    floe_buf_t raw = FLOE_BUF_INIT;
    floe_proto_file_t *f = NULL;
    CHECK(ser && !floe_base64_decode(&raw, ser, strlen(ser)));
    CHECK(!floe_proto_fdp_decode(raw.data, raw.len, &f, &err));
    CHECK(f && f->nmsgs == 2 && !strcmp(f->msgs[0].name, "Payment"));
    floe_proto_file_free(f);
    floe_buf_free(&raw);
    json_decref(j);
    free(b);
    /* v2 adds a field; v3 reuses a number with another type: 409 */
    const char *v2 = "syntax = \"proto3\"; package shop.v1; message Payment { int64 id = 1; "
                     "string coupon = 40; }";
    CHECK_EQ(reg_typed(r, "mini", "PROTOBUF", v2, NULL, NULL), 200);
    CHECK_EQ(reg_typed(r, "mini", "PROTOBUF",
                       "syntax = \"proto3\"; package shop.v1; message Payment { string id = 1; }",
                       NULL, &b),
             409);
    CHECK(b && strstr(b, "FIELD_SCALAR_KIND_CHANGED") != NULL);
    free(b);
    /* references: an import resolves only through one */
    const char *money =
        "syntax = \"proto3\"; package common; message Money { int64 units = 1; string cur = 2; }";
    const char *order = "syntax = \"proto3\"; package shop; import \"common/money.proto\"; "
                        "message Order { common.Money total = 1; }";
    CHECK_EQ(reg_typed(r, "money", "PROTOBUF", money, NULL, NULL), 200);
    CHECK_EQ(reg_typed(r, "order-value", "PROTOBUF", order, NULL, &b), 422);
    free(b);
    const char *refs = "[{\"name\":\"common/money.proto\",\"subject\":\"money\",\"version\":1}]";
    CHECK_EQ(reg_typed(r, "order-value", "PROTOBUF", order, refs, &b), 200);
    long long oid = jint(b, "id");
    free(b);
    CHECK_EQ(call(r, "GET", "/subjects/money/versions/1/referencedby", NULL, NULL, &b), 200);
    char want[32];
    snprintf(want, sizeof want, "[%lld]", oid);
    CHECK_STR(b, want);
    free(b);
    floe_proto_schema_t *ps = NULL;
    CHECK_EQ(floe_registry_proto_schema(r, (int32_t)oid, &ps, &err), 0);
    CHECK(ps && floe_proto_schema_find_msg(ps, ".common.Money") != NULL);
    floe_proto_schema_free(ps);
    /* replayed: the same schemas under the same ids */
    floe_registry_t *r2 = replayed(&st);
    CHECK_EQ(reg_typed(r2, "order-value", "PROTOBUF", order, refs, &b), 200);
    CHECK_EQ(jint(b, "id"), oid);
    free(b);
    CHECK_EQ(floe_registry_proto_schema(r2, (int32_t)id, &ps, &err), 0);
    floe_proto_schema_free(ps);
    unserve(r2);
    floe_registry_free(r2);
    unserve(r);
    floe_registry_free(r);
    store_free(&st);
    free(b64);
    free(text);
}

/* ---- JSON Schema ---- */

#define OBJ(props) "{\"type\":\"object\",\"properties\":{" props "}}"
#define CLOSED(props) \
    "{\"type\":\"object\",\"properties\":{" props "},\"additionalProperties\":false}"
#define INT "{\"type\":\"integer\"}"
#define NUM "{\"type\":\"number\"}"
#define STR "{\"type\":\"string\"}"

/* Pairs with the verdicts of Confluent's JSON Schema rules (json_compat.c
 * says which), at all seven levels. */
static void test_json_matrix(void)
{
    static const pair_t cases[] = {
        {OBJ("\"a\":" INT), OBJ("\"a\":" INT ",\"b\":" STR), 0, 1,
         "property added to an open content model"},
        {OBJ("\"a\":" INT ",\"b\":" STR), OBJ("\"a\":" INT), 1, 0,
         "property removed from an open content model"},
        {CLOSED("\"a\":" INT), CLOSED("\"a\":" INT ",\"b\":" STR), 1, 0,
         "optional property added to a closed content model"},
        {OBJ("\"a\":" INT), OBJ("\"a\":" INT ",\"b\":{}"), 1, 1,
         "property with an empty schema added to an open content model"},
        {CLOSED("\"a\":" INT),
         "{\"type\":\"object\",\"properties\":{\"a\":" INT ",\"b\":" STR
         "},\"required\":[\"b\"],\"additionalProperties\":false}",
         0, 0, "required property added to a closed content model"},
        {OBJ("\"a\":" INT),
         "{\"type\":\"object\",\"properties\":{\"a\":" INT "},\"required\":[\"a\"]}", 0, 1,
         "required added"},
        {OBJ("\"a\":" INT),
         "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"default\":0}},"
         "\"required\":[\"a\"]}",
         1, 1, "required with a default added"},
        {OBJ("\"a\":" INT), OBJ("\"a\":" NUM), 1, 0, "integer -> number"},
        {OBJ("\"a\":" INT), OBJ("\"a\":" STR), 0, 0, "integer -> string"},
        {STR, "{\"type\":[\"string\",\"null\"]}", 1, 0, "string -> nullable string"},
        {"{\"enum\":[\"A\",\"B\"]}", "{\"enum\":[\"A\",\"B\",\"C\"]}", 1, 0, "enum extended"},
        {"{\"enum\":[\"A\",\"B\"]}", "{\"enum\":[\"A\",\"C\"]}", 0, 0, "enum changed"},
        {STR, "{\"type\":\"string\",\"maxLength\":5}", 0, 1, "maxLength added"},
        {"{\"type\":\"string\",\"maxLength\":5}", "{\"type\":\"string\",\"maxLength\":9}", 1, 0,
         "maxLength increased"},
        {STR, "{\"type\":\"string\",\"pattern\":\"^a\"}", 0, 1, "pattern added"},
        {"{\"type\":\"number\",\"maximum\":10}", "{\"type\":\"number\",\"maximum\":20}", 1, 0,
         "maximum increased"},
        {"{\"type\":\"number\",\"minimum\":0}", "{\"type\":\"number\",\"minimum\":5}", 0, 1,
         "minimum increased"},
        {"{\"type\":\"integer\",\"multipleOf\":4}", "{\"type\":\"integer\",\"multipleOf\":2}", 1, 0,
         "multipleOf reduced to a divisor"},
        {OBJ("\"a\":" INT), CLOSED("\"a\":" INT), 0, 1, "additionalProperties false added"},
        {OBJ("\"a\":" INT),
         "{\"type\":\"object\",\"properties\":{\"a\":" INT "},\"additionalProperties\":" STR "}", 0,
         1, "additionalProperties narrowed to a schema"},
        {"{\"type\":\"array\",\"items\":" INT "}", "{\"type\":\"array\",\"items\":" STR "}", 0, 0,
         "items changed type"},
        {"{\"type\":\"array\",\"items\":" INT "}",
         "{\"type\":\"array\",\"items\":" INT ",\"maxItems\":3}", 0, 1, "maxItems added"},
        {"{\"oneOf\":[" STR "," INT "]}", "{\"oneOf\":[" STR "," INT ",{\"type\":\"boolean\"}]}", 1,
         0, "oneOf extended"},
        {"{\"oneOf\":[" STR "," INT "]}", "{\"oneOf\":[" STR ",{\"type\":\"boolean\"}]}", 0, 0,
         "oneOf branch changed"},
        {"{\"definitions\":{\"N\":" INT "},\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":"
         "\"#/definitions/N\"}}}",
         "{\"$defs\":{\"N\":" INT "},\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":"
         "\"#/$defs/N\"}}}",
         1, 1, "definitions moved to $defs, same types"},
        {"{\"definitions\":{\"N\":" INT "},\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":"
         "\"#/definitions/N\"}}}",
         "{\"definitions\":{\"N\":" STR "},\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":"
         "\"#/definitions/N\"}}}",
         0, 0, "a referenced definition changed type"},
        {OBJ("\"n\":" OBJ("\"x\":" INT)), OBJ("\"n\":" OBJ("\"x\":" STR)), 0, 0,
         "nested property changed type"},
        {"{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"},\"v\":" INT "}}",
         "{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"},\"v\":" NUM "}}", 1, 0,
         "recursive schema, integer -> number"},
        {STR, "{}", 1, 0, "anything reads a string"},
    };
    check_levels("JSON", cases, sizeof cases / sizeof *cases);
    /* transitive levels check every version, the others the newest only */
    const char *hist[] = {INT, STR}, *v3 = "{\"type\":\"string\",\"description\":\"d\"}";
    CHECK_EQ(verdict("JSON", "BACKWARD", hist, 2, v3), 1);
    CHECK_EQ(verdict("JSON", "BACKWARD_TRANSITIVE", hist, 2, v3), 0);
    CHECK_EQ(verdict("JSON", "FORWARD", hist, 2, v3), 1);
    CHECK_EQ(verdict("JSON", "FORWARD_TRANSITIVE", hist, 2, v3), 0);
    CHECK_EQ(verdict("JSON", "FULL", hist, 2, v3), 1);
    CHECK_EQ(verdict("JSON", "FULL_TRANSITIVE", hist, 2, v3), 0);
}

/* Registration, canonical lookups, 422s, references to other subjects,
 * the reasons of a 409, and the parsed schema for the converter. */
static void test_json_api(void)
{
    store_t st = {0};
    floe_err_t err = {0};
    floe_registry_t *r;
    CHECK_EQ(floe_registry_new(persist, &st, &r, &err), 0);
    char *b = NULL;
    const char *v1 = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}";
    CHECK_EQ(reg_typed(r, "j-value", "JSON", v1, NULL, &b), 200);
    long long id = jint(b, "id");
    free(b);
    /* the same schema spelled otherwise: the same id, found by lookup */
    const char *again = "{ \"properties\" : { \"a\" : { \"type\" : \"integer\" } },\n"
                        "  \"type\" : \"object\" }";
    CHECK_EQ(reg_typed(r, "j-value", "JSON", again, NULL, &b), 200);
    CHECK_EQ(jint(b, "id"), id);
    free(b);
    json_t *q = json_pack("{s:s,s:s}", "schema", again, "schemaType", "JSON");
    char *qb = json_dumps(q, JSON_COMPACT);
    json_decref(q);
    CHECK_EQ(call(r, "POST", "/subjects/j-value", NULL, qb, &b), 200);
    CHECK_EQ(jint(b, "version"), 1);
    free(b);
    free(qb);
    char path[64];
    snprintf(path, sizeof path, "/schemas/ids/%lld", id);
    CHECK_EQ(call(r, "GET", path, NULL, NULL, &b), 200);
    CHECK(strstr(b, "\"schemaType\":\"JSON\"") != NULL);
    free(b);
    /* invalid schemas: 422 with the reason */
    const char *invalid[][2] = {
        {"{\"type\":\"strin\"}", "names no JSON Schema type"},
        {"[1]", "neither an object nor a boolean"},
        {"{\"properties\":{\"a\":{\"$ref\":\"#/definitions/nope\"}}}", "resolves to nothing"},
        {"{\"type\":\"object\",\"required\":\"a\"}", "'required' is not an array"},
        {"{\"type\":\"string\",\"minLength\":-1}", "minLength"},
        {"{not json", "is not JSON"},
    };
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
        CHECK_EQ(reg_typed(r, "bad-value", "JSON", invalid[i][0], NULL, &b), 422);
        if (!strstr(b, invalid[i][1])) printf("# %s\n", b);
        CHECK(strstr(b, invalid[i][1]) != NULL);
        free(b);
    }
    /* a property added to the open content model: 409 with the reason */
    const char *v2 = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                     "\"b\":{\"type\":\"string\"}}}";
    CHECK_EQ(reg_typed(r, "j-value", "JSON", v2, NULL, &b), 409);
    CHECK(strstr(b, "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL") != NULL);
    free(b);
    /* references: another subject's schema by the reference's name */
    const char *addr = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}";
    CHECK_EQ(reg_typed(r, "addr", "JSON", addr, NULL, &b), 200);
    free(b);
    const char *order = "{\"type\":\"object\",\"properties\":{\"ship\":{\"$ref\":\"addr.json\"},"
                        "\"city2\":{\"$ref\":\"addr.json#/properties/city\"}}}";
    const char *refs = "[{\"name\":\"addr.json\",\"subject\":\"addr\",\"version\":1}]";
    CHECK_EQ(reg_typed(r, "order-value", "JSON", order, refs, &b), 200);
    long long oid = jint(b, "id");
    free(b);
    CHECK_EQ(reg_typed(r, "order2-value", "JSON", order, NULL, &b), 422);
    CHECK(strstr(b, "addr.json") != NULL);
    free(b);
    floe_jschema_t *js = NULL;
    CHECK_EQ(floe_registry_json_schema(r, (int32_t)oid, &js, &err), 0);
    const floe_jsnode_t *root = js ? floe_jschema_root(js) : NULL;
    /* properties in document order: ship, then city2 */
    CHECK(root && root->kind == FLOE_JS_OBJECT && root->nprops == 2 &&
          root->props[0]->kind == FLOE_JS_OBJECT && root->props[1]->kind == FLOE_JS_STRING);
    floe_jschema_free(js);
    CHECK_EQ(floe_registry_json_schema(r, 99999, &js, &err), -1);
    CHECK_EQ(err.code, FLOE_ENOENT);
    /* replayed: the same schemas under the same ids */
    floe_registry_t *r2;
    CHECK_EQ(floe_registry_new(NULL, NULL, &r2, &err), 0);
    for (int i = 0; i < st.n; i++)
        floe_registry_apply(r2, (const uint8_t *)st.key[i], strlen(st.key[i]),
                            (const uint8_t *)st.val[i], st.val[i] ? strlen(st.val[i]) : 0);
    CHECK_EQ(reg_typed(r2, "order-value", "JSON", order, refs, &b), 200);
    CHECK_EQ(jint(b, "id"), oid);
    free(b);
    unserve(r2);
    floe_registry_free(r2);
    unserve(r);
    floe_registry_free(r);
    store_free(&st);
}

/* Avro references: named types of referenced schemas resolve by full name;
 * ids are stable on re-registration and lookup; referrers are listed and
 * protect what they reference; compatibility resolves both sides; the
 * records replay. */
static void test_avro_refs(void)
{
    store_t st = {0};
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(persist, &st, &r, &err), 0);
    const char *addr = "{\"type\":\"record\",\"name\":\"Address\",\"namespace\":\"com.acme\","
                       "\"fields\":[{\"name\":\"city\",\"type\":\"string\"}]}";
    const char *kind = "{\"type\":\"enum\",\"name\":\"com.acme.Kind\",\"symbols\":[\"A\",\"B\"]}";
    const char *user = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\","
                       "\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"home\","
                       "\"type\":\"Address\"},{\"name\":\"kind\",\"type\":\"com.acme.Kind\"}]}";
    const char *refs = "[{\"name\":\"com.acme.Address\",\"subject\":\"address\",\"version\":1},"
                       "{\"name\":\"com.acme.Kind\",\"subject\":\"kind\",\"version\":1}]";
    char *b = NULL;
    /* a reference to a subject that does not exist: 422 */
    CHECK_EQ(reg_typed(r, "user-value", NULL, user, refs, &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42201);
    free(b);
    CHECK_EQ(reg(r, "address", addr, NULL), 200);
    CHECK_EQ(reg(r, "kind", kind, NULL), 200);
    /* without its references the names are unknown */
    CHECK_EQ(reg(r, "user-value", user, &b), 422);
    free(b);
    CHECK_EQ(reg_typed(r, "user-value", NULL, user, refs, &b), 200);
    long long uid = jint(b, "id");
    free(b);
    CHECK_EQ(uid, 3);
    CHECK_EQ(reg_typed(r, "user-value", NULL, user, refs, &b), 200);
    CHECK_EQ(jint(b, "id"), uid);
    free(b);
    /* the stored text names the referenced types, it does not inline them */
    CHECK_EQ(call(r, "GET", "/schemas/ids/3", NULL, NULL, &b), 200);
    json_t *j = json_loads(b, 0, NULL);
    const char *text = json_string_value(json_object_get(j, "schema"));
    CHECK(text && !strstr(text, "city") && strstr(text, "Address"));
    CHECK_EQ(json_array_size(json_object_get(j, "references")), 2);
    CHECK_STR(json_string_value(
                  json_object_get(json_array_get(json_object_get(j, "references"), 0), "subject")),
              "address");
    json_decref(j);
    free(b);
    /* lookup with the references */
    json_t *lj = json_pack("{s:s,s:o}", "schema", user, "references", json_loads(refs, 0, NULL));
    char *body = json_dumps(lj, JSON_COMPACT);
    json_decref(lj);
    CHECK_EQ(call(r, "POST", "/subjects/user-value", NULL, body, &b), 200);
    CHECK_EQ(jint(b, "id"), uid);
    CHECK(strstr(b, "\"references\"") != NULL);
    free(b);
    free(body);
    /* referrers, by version and by id */
    CHECK_EQ(call(r, "GET", "/subjects/address/versions/1/referencedby", NULL, NULL, &b), 200);
    CHECK_STR(b, "[3]");
    free(b);
    CHECK_EQ(call(r, "GET", "/schemas/ids/2/referencedby", NULL, NULL, &b), 200);
    CHECK_STR(b, "[3]");
    free(b);
    CHECK_EQ(call(r, "GET", "/schemas/ids/3/referencedby", NULL, NULL, &b), 200);
    CHECK_STR(b, "[]");
    free(b);
    /* a referenced version, or its subject, cannot be deleted */
    CHECK_EQ(call(r, "DELETE", "/subjects/address/versions/1", NULL, NULL, &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42206);
    free(b);
    CHECK_EQ(call(r, "DELETE", "/subjects/kind", NULL, NULL, &b), 422);
    CHECK_EQ(jint(b, "error_code"), 42206);
    free(b);
    /* the converter's view: the referenced types resolved */
    floe_avro_schema_t *s = NULL;
    CHECK_EQ(floe_registry_avro_schema(r, (int32_t)uid, &s, &err), 0);
    CHECK(s && floe_avro_schema_type(floe_avro_schema_field_type(s, 1)) == FLOE_AVRO_RECORD);
    CHECK(s && floe_avro_schema_type(floe_avro_schema_field_type(s, 2)) == FLOE_AVRO_ENUM);
    floe_avro_schema_free(s);
    /* compatibility resolves the references of both sides: a new field
     * without a default in a referenced type's next version is refused */
    const char *addr2 = "{\"type\":\"record\",\"name\":\"Address\",\"namespace\":\"com.acme\","
                        "\"fields\":[{\"name\":\"city\",\"type\":\"string\"},{\"name\":\"zip\","
                        "\"type\":\"string\"}]}";
    CHECK_EQ(call(r, "PUT", "/config/address", NULL, "{\"compatibility\":\"NONE\"}", NULL), 200);
    CHECK_EQ(reg(r, "address", addr2, NULL), 200);
    const char *refs2 = "[{\"name\":\"com.acme.Address\",\"subject\":\"address\",\"version\":2},"
                        "{\"name\":\"com.acme.Kind\",\"subject\":\"kind\",\"version\":1}]";
    CHECK_EQ(reg_typed(r, "user-value", NULL, user, refs2, &b), 409);
    CHECK(b && strstr(b, "zip") != NULL);
    free(b);
    /* replayed: the same schema under the same id, the references kept */
    floe_registry_t *r2 = replayed(&st);
    bool keyed = false;
    for (int i = 0; i < st.n; i++)
        if (st.val[i] && strstr(st.val[i], "\"references\":[{\"name\":\"com.acme.Address\","
                                           "\"subject\":\"address\",\"version\":1}"))
            keyed = true;
    CHECK(keyed);
    CHECK_EQ(reg_typed(r2, "user-value", NULL, user, refs, &b), 200);
    CHECK_EQ(jint(b, "id"), uid);
    free(b);
    CHECK_EQ(floe_registry_avro_schema(r2, (int32_t)uid, &s, &err), 0);
    floe_avro_schema_free(s);
    /* a record as Confluent's registry writes it (the text as registered,
     * with references) replays into its parsed form: found again */
    json_t *uj = json_loads(user, 0, NULL);
    char *spaced = json_dumps(uj, JSON_INDENT(3) | JSON_SORT_KEYS);
    json_decref(uj);
    json_t *rec =
        json_pack("{s:s,s:i,s:i,s:s,s:o,s:b}", "subject", "raw-value", "version", 1, "id", 50,
                  "schema", spaced, "references", json_loads(refs, 0, NULL), "deleted", 0);
    free(spaced);
    char *rv = json_dumps(rec, JSON_COMPACT);
    const char *rk = "{\"keytype\":\"SCHEMA\",\"subject\":\"raw-value\",\"version\":1,\"magic\":1}";
    CHECK_EQ(
        floe_registry_apply(r2, (const uint8_t *)rk, strlen(rk), (const uint8_t *)rv, strlen(rv)),
        0);
    json_decref(rec);
    free(rv);
    CHECK_EQ(reg_typed(r2, "raw-value", NULL, user, refs, &b), 200);
    CHECK_EQ(jint(b, "id"), 50);
    free(b);
    unserve(r2);
    floe_registry_free(r2);
    unserve(r);
    floe_registry_free(r);
    store_free(&st);
}

/* Every schema type walks its references through one walker: a reference
 * to a schema of another type is refused by name of the type; Avro takes
 * a schema referenced twice once (a diamond defines its shared type once)
 * and stops a cycle of references at the depth limit; JSON takes each
 * reference name once, so the same cycle resolves. */
static void test_ref_walks(void)
{
    floe_registry_t *r;
    floe_err_t err = {0};
    CHECK_EQ(floe_registry_new(NULL, NULL, &r, &err), 0);
    char *b = NULL;
    CHECK_EQ(reg(r, "av", STR, NULL), 200);
    CHECK_EQ(reg_typed(r, "js", "JSON", "{\"type\":\"string\"}", NULL, NULL), 200);
    const struct {
        const char *type, *schema, *refs, *says;
    } wrong[] = {
        {NULL, "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"S\"}]}",
         "[{\"name\":\"S\",\"subject\":\"js\",\"version\":1}]", "is not a registered Avro schema"},
        {"JSON", "{\"$ref\":\"s.json\"}",
         "[{\"name\":\"s.json\",\"subject\":\"av\",\"version\":1}]",
         "is not a registered JSON schema"},
        {"PROTOBUF", "syntax = \"proto3\"; import \"s.proto\"; message M { int32 a = 1; }",
         "[{\"name\":\"s.proto\",\"subject\":\"av\",\"version\":-1}]",
         "is not a registered Protobuf schema"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        CHECK_EQ(reg_typed(r, "wrong", wrong[i].type, wrong[i].schema, wrong[i].refs, &b), 422);
        CHECK_EQ(jint(b, "error_code"), 42201);
        if (!strstr(b, wrong[i].says)) printf("# %s\n", b);
        CHECK(b && strstr(b, wrong[i].says) != NULL);
        free(b);
    }
    /* a diamond: U references X and Y, both reference Z */
    CHECK_EQ(reg(r, "z", "{\"type\":\"enum\",\"name\":\"Z\",\"symbols\":[\"A\"]}", NULL), 200);
    const char *zref = "[{\"name\":\"Z\",\"subject\":\"z\",\"version\":1}]";
    CHECK_EQ(reg_typed(r, "x", NULL,
                       "{\"type\":\"record\",\"name\":\"X\",\"fields\":[{\"name\":\"z\","
                       "\"type\":\"Z\"}]}",
                       zref, NULL),
             200);
    CHECK_EQ(reg_typed(r, "y", NULL,
                       "{\"type\":\"record\",\"name\":\"Y\",\"fields\":[{\"name\":\"z\","
                       "\"type\":\"Z\"}]}",
                       zref, NULL),
             200);
    CHECK_EQ(reg_typed(r, "u", NULL,
                       "{\"type\":\"record\",\"name\":\"U\",\"fields\":[{\"name\":\"x\",\"type\":"
                       "\"X\"},{\"name\":\"y\",\"type\":\"Y\"}]}",
                       "[{\"name\":\"X\",\"subject\":\"x\",\"version\":1},"
                       "{\"name\":\"Y\",\"subject\":\"y\",\"version\":1}]",
                       &b),
             200);
    long long uid = jint(b, "id");
    free(b);
    floe_avro_schema_t *s = NULL;
    CHECK_EQ(floe_registry_avro_schema(r, (int32_t)uid, &s, &err), 0);
    floe_avro_schema_free(s);
    /* a cycle through latest versions: b references a's latest, whose
     * second version references b's latest */
    CHECK_EQ(call(r, "PUT", "/config/a", NULL, "{\"compatibility\":\"NONE\"}", NULL), 200);
    CHECK_EQ(reg(r, "a", "{\"type\":\"fixed\",\"name\":\"A\",\"size\":1}", NULL), 200);
    CHECK_EQ(reg_typed(r, "b", NULL,
                       "{\"type\":\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"a\","
                       "\"type\":\"A\"}]}",
                       "[{\"name\":\"A\",\"subject\":\"a\",\"version\":-1}]", &b),
             200);
    long long bid = jint(b, "id");
    free(b);
    CHECK_EQ(reg_typed(r, "a", NULL,
                       "{\"type\":\"record\",\"name\":\"A2\",\"fields\":[{\"name\":\"b\","
                       "\"type\":\"B\"}]}",
                       "[{\"name\":\"B\",\"subject\":\"b\",\"version\":-1}]", NULL),
             200);
    CHECK_EQ(floe_registry_avro_schema(r, (int32_t)bid, &s, &err), -1);
    CHECK_EQ(err.code, FLOE_EINVAL);
    CHECK(strstr(err.msg, "references nested deeper than 16") != NULL);
    /* the same cycle in JSON: each name once, so it resolves */
    CHECK_EQ(call(r, "PUT", "/config/ja", NULL, "{\"compatibility\":\"NONE\"}", NULL), 200);
    CHECK_EQ(reg_typed(r, "ja", "JSON", "{\"type\":\"integer\"}", NULL, NULL), 200);
    CHECK_EQ(reg_typed(r, "jb", "JSON",
                       "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"a.json\"}}}",
                       "[{\"name\":\"a.json\",\"subject\":\"ja\",\"version\":-1}]", &b),
             200);
    long long jbid = jint(b, "id");
    free(b);
    CHECK_EQ(reg_typed(r, "ja", "JSON",
                       "{\"type\":\"object\",\"properties\":{\"b\":{\"$ref\":\"b.json\"}}}",
                       "[{\"name\":\"b.json\",\"subject\":\"jb\",\"version\":-1}]", NULL),
             200);
    floe_jschema_t *js = NULL;
    CHECK_EQ(floe_registry_json_schema(r, (int32_t)jbid, &js, &err), 0);
    floe_jschema_free(js);
    unserve(r);
    floe_registry_free(r);
}

TEST_MAIN({
    RUN(test_compat_matrix);
    RUN(test_api);
    RUN(test_transitive);
    RUN(ids_survive_compaction);
    RUN(test_proto_matrix);
    RUN(test_proto_api);
    RUN(test_json_matrix);
    RUN(test_json_api);
    RUN(test_avro_refs);
    RUN(test_ref_walks);
})
