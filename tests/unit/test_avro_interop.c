/* Avro interop with readers and writers nobody here wrote: avsc (node) and
 * python3-avro.  The cases are tests/interop/avro_cases.json (schemas with
 * Iceberg field ids, records in floe's JSON rendering) plus random schemas
 * and records generated here.
 *   - floe writes every case with every codec; avsc reads all of them,
 *     python-avro those whose codec it has (null, deflate; snappy and
 *     zstandard with python3-snappy/python3-zstandard); both check the
 *     header schema (field ids intact), header metadata and every value.
 *   - avsc (null, deflate, snappy) and python-avro (every codec it has)
 *     write every case; floe reads them back with equal values and schemas,
 *     and resolves them to an evolved reader schema.
 *   - floe's canonical form of each case schema equals avsc's.
 * The peers print "ok - ..." / "not ok - ..." lines that are checked here. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "format/avro.h"
#include "test.h"

static char root[4096], dir[4096];
static json_t *cases;

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Fill v from floe's JSON rendering j, through the public setters. */
static int from_ours(floe_avro_value_t *v, json_t *j, floe_err_t *err)
{
    const floe_avro_schema_t *s = floe_avro_value_schema(v);
    if (floe_avro_schema_type(s) == FLOE_AVRO_UNION) {
        if (json_is_null(j)) return floe_avro_set_null(v, err);
        for (size_t i = 0; i < floe_avro_schema_branch_count(s); i++)
            if (floe_avro_schema_type(floe_avro_schema_branch(s, i)) != FLOE_AVRO_NULL) {
                floe_avro_value_t *b = floe_avro_set_branch(v, (int)i, err);
                return b ? from_ours(b, j, err) : -1;
            }
        return floe_err_set(err, FLOE_EINVAL, "union without a non-null branch");
    }
    switch (floe_avro_schema_type(s)) {
    case FLOE_AVRO_NULL: return floe_avro_set_null(v, err);
    case FLOE_AVRO_BOOLEAN: return floe_avro_set_bool(v, json_is_true(j), err);
    case FLOE_AVRO_INT: return floe_avro_set_int(v, (int32_t)json_integer_value(j), err);
    case FLOE_AVRO_LONG: return floe_avro_set_long(v, json_integer_value(j), err);
    case FLOE_AVRO_FLOAT:
    case FLOE_AVRO_DOUBLE: {
        double d = json_number_value(j);
        const char *str = json_string_value(j);
        if (str)
            d = strcmp(str, "NaN") == 0 ? NAN : strcmp(str, "Infinity") == 0 ? INFINITY : -INFINITY;
        return floe_avro_set_double(v, d, err);
    }
    case FLOE_AVRO_STRING:
        return floe_avro_set_stringn(v, json_string_value(j), json_string_length(j), err);
    case FLOE_AVRO_ENUM: return floe_avro_set_enum(v, json_string_value(j), err);
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED: {
        const char *h = json_string_value(json_object_get(j, "$bytes"));
        if (!h) return floe_err_set(err, FLOE_EINVAL, "bytes without $bytes");
        size_t n = strlen(h) / 2;
        uint8_t *b = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
        int rc = floe_avro_set_bytes(v, b, n, err);
        free(b);
        return rc;
    }
    case FLOE_AVRO_ARRAY:
        for (size_t i = 0; i < json_array_size(j); i++) {
            floe_avro_value_t *item = floe_avro_array_append(v, err);
            if (!item || from_ours(item, json_array_get(j, i), err) != 0) return -1;
        }
        return 0;
    case FLOE_AVRO_MAP: {
        const char *k;
        json_t *x;
        json_object_foreach(j, k, x)
        {
            floe_avro_value_t *item = floe_avro_map_put(v, k, err);
            if (!item || from_ours(item, x, err) != 0) return -1;
        }
        return 0;
    }
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < floe_avro_schema_field_count(s); i++) {
            json_t *x = json_object_get(j, floe_avro_schema_field_name(s, i));
            if (x && from_ours(floe_avro_field_at(v, i), x, err) != 0) {
                floe_err_wrap(err, "%s", floe_avro_schema_field_name(s, i));
                return -1;
            }
        }
        return 0;
    default: return floe_err_set(err, FLOE_EINVAL, "unhandled type");
    }
}

/* JSON equality where numbers compare by value (1 == 1.0). */
static int jeq(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b)) return 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!jeq(json_array_get(a, i), json_array_get(b, i))) return 0;
        return 1;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b)) return 0;
        const char *k;
        json_t *x;
        json_object_foreach(a, k, x)
        {
            json_t *y = json_object_get(b, k);
            if (!y || !jeq(x, y)) return 0;
        }
        return 1;
    }
    return json_equal(a, b);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static const floe_avro_codec_t ALL_CODECS[] = {FLOE_AVRO_CODEC_NULL, FLOE_AVRO_CODEC_DEFLATE,
                                               FLOE_AVRO_CODEC_SNAPPY, FLOE_AVRO_CODEC_ZSTD};

/* Write floe_CASE_CODEC.avro and its .json (schema, meta, our renders). */
static void floe_writes_cases(void)
{
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *cname = json_string_value(json_object_get(c, "name"));
        char *stext = json_dumps(json_object_get(c, "schema"), JSON_COMPACT);
        floe_err_t err = {0};
        floe_avro_schema_t *s = NULL;
        CHECK_EQ(floe_avro_schema_parse(stext, strlen(stext), &s, &err), 0);
        free(stext);
        if (!s) {
            fprintf(stderr, "%s: %s\n", cname, err.msg);
            continue;
        }
        floe_arena_t a;
        floe_arena_init(&a, 0, 0);
        json_t *recs = json_object_get(c, "records");
        size_t n = json_array_size(recs);
        const floe_avro_value_t **vals = calloc(n, sizeof *vals);
        json_t *renders = json_array();
        for (size_t k = 0; k < n; k++) {
            floe_avro_value_t *v = floe_avro_value_new(&a, s);
            if (from_ours(v, json_array_get(recs, k), &err) != 0) {
                fprintf(stderr, "%s record %zu: %s\n", cname, k, err.msg);
                CHECK(0);
            }
            vals[k] = v;
            floe_buf_t b = FLOE_BUF_INIT;
            CHECK_EQ(floe_avro_value_to_json(v, &b, &err), 0);
            json_t *r = json_loads(floe_buf_cstr(&b), 0, NULL);
            /* our rendering of what we built equals the case's record */
            CHECK(r && jeq(r, json_array_get(recs, k)));
            json_array_append_new(renders, r ? r : json_null());
            floe_buf_free(&b);
        }
        json_t *meta = json_object_get(c, "meta");
        const char *keys[16], *mvals[16];
        size_t nm = 0;
        const char *k;
        json_t *x;
        json_object_foreach(meta, k, x)
        {
            if (nm < 16) {
                keys[nm] = k;
                mvals[nm++] = json_string_value(x);
            }
        }
        for (size_t ci = 0; ci < 4; ci++) {
            floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
            o.codec = ALL_CODECS[ci];
            o.block_bytes = 150; /* several blocks */
            uint8_t *file = NULL;
            size_t len = 0;
            CHECK_EQ(floe_avro_write_file(s, &o, keys, mvals, nm, vals, n, &file, &len, &err), 0);
            char path[4200];
            snprintf(path, sizeof path, "%s/floe_%s_%s.avro", dir, cname,
                     floe_avro_codec_name(o.codec));
            FILE *f = fopen(path, "wb");
            CHECK(f != NULL);
            if (f) {
                fwrite(file, 1, len, f);
                fclose(f);
            }
            free(file);
            json_t *want = json_pack("{s:O,s:O,s:O}", "schema", json_object_get(c, "schema"),
                                     "meta", meta, "records", renders);
            char *wt = json_dumps(want, JSON_COMPACT);
            snprintf(path, sizeof path, "%s/floe_%s_%s.json", dir, cname,
                     floe_avro_codec_name(o.codec));
            CHECK_EQ(write_text(path, wt), 0);
            free(wt);
            json_decref(want);
        }
        json_decref(renders);
        free(vals);
        floe_arena_free(&a);
        floe_avro_schema_free(s);
    }
}

/* ---- random schemas and values (property test through the peers) ---- */

#define RANDOM_SCHEMAS 24
#define RANDOM_RECORDS 6
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static int random_files_by_codec[4];

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int named_seq, field_id_seq;

/* A random schema; every field, array and map carries Iceberg-style ids. */
static json_t *gen_schema(int depth, bool in_union)
{
    static const char *prims[] = {"boolean", "int", "long", "float", "double", "bytes", "string"};
    int k = (int)(rnd() % (depth > 2 ? 9 : 14));
    char name[32];
    if (k < 7) return json_string(prims[k]);
    if (k == 7) {
        snprintf(name, sizeof name, "e%d", ++named_seq);
        json_t *sy = json_array();
        int n = 1 + (int)(rnd() % 4);
        for (int i = 0; i < n; i++) {
            char sym[16];
            snprintf(sym, sizeof sym, "S%d", i);
            json_array_append_new(sy, json_string(sym));
        }
        return json_pack("{s:s,s:s,s:o}", "type", "enum", "name", name, "symbols", sy);
    }
    if (k == 8) {
        snprintf(name, sizeof name, "f%d", ++named_seq);
        return json_pack("{s:s,s:s,s:i}", "type", "fixed", "name", name, "size", (int)(rnd() % 9));
    }
    if (k == 9 || k == 10) {
        json_t *items = gen_schema(depth + 1, false);
        json_t *a = json_pack("{s:s,s:o,s:i}", "type", k == 9 ? "array" : "map",
                              k == 9 ? "items" : "values", items,
                              k == 9 ? "element-id" : "value-id", ++field_id_seq);
        if (k == 10) json_object_set_new(a, "key-id", json_integer(++field_id_seq));
        return a;
    }
    if (k == 11 && !in_union) {
        /* [null, X] or [X, null]; X not a union */
        json_t *x = gen_schema(depth + 1, true);
        return rnd() % 2 ? json_pack("[s,o]", "null", x) : json_pack("[o,s]", x, "null");
    }
    snprintf(name, sizeof name, "r%d", ++named_seq);
    json_t *fields = json_array();
    int n = (int)(rnd() % 5);
    for (int i = 0; i < n; i++) {
        char fname[16];
        snprintf(fname, sizeof fname, "c%d", i);
        json_array_append_new(fields,
                              json_pack("{s:s,s:o,s:i}", "name", fname, "type",
                                        gen_schema(depth + 1, false), "field-id", ++field_id_seq));
    }
    return json_pack("{s:s,s:s,s:o}", "type", "record", "name", name, "fields", fields);
}

/* Fill v with random data of its schema. */
static int gen_value(floe_avro_value_t *v, int depth, floe_err_t *err)
{
    const floe_avro_schema_t *s = floe_avro_value_schema(v);
    char buf[64];
    switch (floe_avro_schema_type(s)) {
    case FLOE_AVRO_NULL: return floe_avro_set_null(v, err);
    case FLOE_AVRO_BOOLEAN: return floe_avro_set_bool(v, rnd() & 1, err);
    case FLOE_AVRO_INT: return floe_avro_set_int(v, (int32_t)(rnd() >> (rnd() % 40)), err);
    case FLOE_AVRO_LONG: return floe_avro_set_long(v, (int64_t)(rnd() >> (rnd() % 64)), err);
    case FLOE_AVRO_FLOAT: return floe_avro_set_float(v, (float)((int32_t)rnd()) / 1024.0f, err);
    case FLOE_AVRO_DOUBLE: return floe_avro_set_double(v, (double)(int64_t)rnd() / 3.0e6, err);
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED: {
        size_t n = floe_avro_schema_type(s) == FLOE_AVRO_FIXED ? floe_avro_schema_fixed_size(s)
                                                               : rnd() % 12;
        for (size_t i = 0; i < n; i++) buf[i] = (char)rnd();
        return floe_avro_set_bytes(v, buf, n, err);
    }
    case FLOE_AVRO_STRING: {
        static const char *parts[] = {"a",  "Z",  " ",  "\xc3\xa9", "\xe2\x98\x83",
                                      "\"", "\\", "\n", "42"};
        buf[0] = 0;
        for (int i = (int)(rnd() % 6); i > 0; i--) strcat(buf, parts[rnd() % 9]);
        return floe_avro_set_string(v, buf, err);
    }
    case FLOE_AVRO_ENUM:
        return floe_avro_set_enum_index(v, (int)(rnd() % floe_avro_schema_symbol_count(s)), err);
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: {
        int n = depth > 3 ? 0 : (int)(rnd() % 4);
        for (int i = 0; i < n; i++) {
            floe_avro_value_t *item;
            if (floe_avro_schema_type(s) == FLOE_AVRO_ARRAY) {
                item = floe_avro_array_append(v, err);
            } else {
                snprintf(buf, sizeof buf, "k%d", i);
                item = floe_avro_map_put(v, buf, err);
            }
            if (!item || gen_value(item, depth + 1, err) != 0) return -1;
        }
        return 0;
    }
    case FLOE_AVRO_UNION: {
        int b = (int)(rnd() % floe_avro_schema_branch_count(s));
        floe_avro_value_t *bv = floe_avro_set_branch(v, b, err);
        return bv ? gen_value(bv, depth + 1, err) : -1;
    }
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < floe_avro_schema_field_count(s); i++)
            if (gen_value(floe_avro_field_at(v, i), depth + 1, err) != 0) return -1;
        return 0;
    }
    return -1;
}

/* Random schemas (records at the top) with random records: written with
 * every codec in turn, read back equal by floe; the peers read them in the
 * read tests below (floe_rand_*.avro). */
static void random_schemas_round_trip(void)
{
    for (int k = 0; k < RANDOM_SCHEMAS; k++) {
        named_seq = 0;
        json_t *js;
        do {
            js = gen_schema(0, false);
            if (json_is_object(js) &&
                strcmp(json_string_value(json_object_get(js, "type")), "record") == 0)
                break;
            json_decref(js);
        } while (1);
        char *text = json_dumps(js, JSON_COMPACT);
        floe_err_t err = {0};
        floe_avro_schema_t *s = NULL;
        CHECK_EQ(floe_avro_schema_parse(text, strlen(text), &s, &err), 0);
        if (!s) {
            fprintf(stderr, "random schema %d: %s\n%s\n", k, err.msg, text);
            free(text);
            json_decref(js);
            continue;
        }
        floe_arena_t a;
        floe_arena_init(&a, 0, 0);
        const floe_avro_value_t *vals[RANDOM_RECORDS];
        json_t *renders = json_array();
        for (int r = 0; r < RANDOM_RECORDS; r++) {
            floe_avro_value_t *v = floe_avro_value_new(&a, s);
            CHECK_EQ(gen_value(v, 0, &err), 0);
            vals[r] = v;
            floe_buf_t b = FLOE_BUF_INIT;
            floe_avro_value_to_json(v, &b, &err);
            json_t *rj = json_loads(floe_buf_cstr(&b), 0, NULL);
            CHECK(rj != NULL);
            json_array_append_new(renders, rj ? rj : json_null());
            floe_buf_free(&b);
        }
        floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
        o.codec = ALL_CODECS[k % 4];
        o.block_bytes = 1 + rnd() % 200;
        uint8_t *file = NULL;
        size_t len = 0;
        CHECK_EQ(
            floe_avro_write_file(s, &o, NULL, NULL, 0, vals, RANDOM_RECORDS, &file, &len, &err), 0);
        /* floe reads its own file back equal */
        floe_avro_reader_t *rd;
        CHECK_EQ(floe_avro_reader_open(&rd, file, len, NULL, &err), 0);
        floe_avro_value_t *back;
        int n = 0;
        while (rd && floe_avro_reader_next(rd, &a, &back, &err) == 1) {
            CHECK(n < RANDOM_RECORDS && floe_avro_value_equal(back, vals[n]));
            n++;
        }
        CHECK_EQ(n, RANDOM_RECORDS);
        floe_avro_reader_free(rd);
        char path[4300];
        snprintf(path, sizeof path, "%s/floe_rand%02d_%s.avro", dir, k,
                 floe_avro_codec_name(o.codec));
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(file, 1, len, f);
            fclose(f);
        }
        random_files_by_codec[k % 4]++;
        json_t *want = json_pack("{s:O,s:{},s:O}", "schema", js, "meta", "records", renders);
        char *wt = json_dumps(want, JSON_COMPACT);
        snprintf(path, sizeof path, "%s/floe_rand%02d_%s.json", dir, k,
                 floe_avro_codec_name(o.codec));
        CHECK_EQ(write_text(path, wt), 0);
        free(wt);
        json_decref(want);
        json_decref(renders);
        free(file);
        free(text);
        json_decref(js);
        floe_arena_free(&a);
        floe_avro_schema_free(s);
    }
}

/* Run a peer script; check its lines; return the number of ok lines. */
static int run_peer(const char *cmd)
{
    char full[9000];
    snprintf(full, sizeof full, "cd '%s/tests/interop' && %s 2>&1", root, cmd);
    FILE *p = popen(full, "r");
    CHECK(p != NULL);
    if (!p) return 0;
    char line[8192];
    int ok = 0, bad = 0;
    while (fgets(line, sizeof line, p)) {
        if (strncmp(line, "ok - ", 5) == 0) ok++;
        else if (strncmp(line, "not ok - ", 9) == 0) {
            bad++;
            fprintf(stderr, "%s", line);
        } else {
            fprintf(stderr, "peer: %s", line);
        }
    }
    int st = pclose(p);
    CHECK_EQ(st, 0);
    CHECK_EQ(bad, 0);
    return ok;
}

static void avsc_reads_floe_files(void)
{
    int ok = run_peer("node avro_interop.mjs read \"$FLOE_AVRO_DIR\"");
    CHECK_EQ(ok, (int)json_array_size(cases) * 4 + RANDOM_SCHEMAS);
}

static void python_avro_reads_floe_files(void)
{
    int ok = run_peer("/usr/bin/python3 avro_interop.py read \"$FLOE_AVRO_DIR\"");
    /* null and deflate files; more if this python-avro has snappy/zstandard */
    CHECK(ok >=
          (int)json_array_size(cases) * 2 + random_files_by_codec[0] + random_files_by_codec[1]);
}

/* Read DIR/PREFIX_CASE_CODEC.avro with floe and compare with the case. */
static int floe_reads(const char *prefix, const char *codec, json_t *c)
{
    const char *cname = json_string_value(json_object_get(c, "name"));
    char path[4200];
    snprintf(path, sizeof path, "%s/%s_%s_%s.avro", dir, prefix, cname, codec);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "missing %s\n", path);
        return -1;
    }
    floe_buf_t file = FLOE_BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) floe_buf_append(&file, chunk, got);
    fclose(f);
    floe_err_t err = {0};
    floe_avro_reader_t *r;
    int fails = 0;
    if (floe_avro_reader_open(&r, file.data, file.len, NULL, &err) != 0) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        floe_buf_free(&file);
        return -1;
    }
    if (strcmp(floe_avro_codec_name(floe_avro_reader_codec(r)), codec) != 0) fails++;
    /* the schema as floe parsed it from the peer's header: field ids intact */
    char *sj = floe_avro_schema_to_json(floe_avro_reader_schema(r), &err);
    json_t *got_schema = sj ? json_loads(sj, 0, NULL) : NULL;
    if (!got_schema || !jeq(got_schema, json_object_get(c, "schema"))) {
        fprintf(stderr, "%s: schema differs: %s\n", path, sj ? sj : "(null)");
        fails++;
    }
    json_decref(got_schema);
    free(sj);
    const char *k;
    json_t *x;
    json_object_foreach(json_object_get(c, "meta"), k, x)
    {
        floe_slice_t mv;
        if (!floe_avro_reader_meta(r, k, &mv) || mv.len != json_string_length(x) ||
            memcmp(mv.ptr, json_string_value(x), mv.len) != 0) {
            fprintf(stderr, "%s: meta %s wrong\n", path, k);
            fails++;
        }
    }
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    json_t *recs = json_object_get(c, "records");
    size_t n = 0;
    floe_avro_value_t *v;
    int rc;
    while ((rc = floe_avro_reader_next(r, &a, &v, &err)) == 1) {
        floe_buf_t b = FLOE_BUF_INIT;
        floe_avro_value_to_json(v, &b, &err);
        json_t *j = json_loads(floe_buf_cstr(&b), 0, NULL);
        if (!j || !jeq(j, json_array_get(recs, n))) {
            fprintf(stderr, "%s: record %zu differs: %s\n", path, n, floe_buf_cstr(&b));
            fails++;
        }
        json_decref(j);
        floe_buf_free(&b);
        n++;
    }
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        fails++;
    }
    if (n != json_array_size(recs)) fails++;
    floe_arena_free(&a);
    floe_avro_reader_free(r);
    floe_buf_free(&file);
    return fails ? -1 : 0;
}

static void floe_reads_avsc_files(void)
{
    int ok = run_peer("node avro_interop.mjs write \"$FLOE_AVRO_DIR\"");
    CHECK_EQ(ok, (int)json_array_size(cases) * 3);
    static const char *const codecs[] = {"null", "deflate", "snappy"};
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) for (size_t k = 0; k < 3; k++)
        CHECK_EQ(floe_reads("avsc", codecs[k], c), 0);
}

static void floe_reads_python_avro_files(void)
{
    int ok = run_peer("/usr/bin/python3 avro_interop.py write \"$FLOE_AVRO_DIR\"");
    CHECK(ok >= (int)json_array_size(cases) * 2);
    static const char *const codecs[] = {"null", "deflate"};
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) for (size_t k = 0; k < 2; k++)
        CHECK_EQ(floe_reads("py", codecs[k], c), 0);
}

/* snappy and zstandard from python-avro need python3-snappy and
 * python3-zstandard; with them, floe reads those files too. */
static void floe_reads_python_avro_compressed(void)
{
    static const char *const codecs[] = {"snappy", "zstandard"};
    for (size_t k = 0; k < 2; k++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/py_events_%s.avro", dir, codecs[k]);
        if (access(path, R_OK) != 0) {
            printf("ok - floe_reads_python_avro_%s # SKIP python3-%s not installed\n", codecs[k],
                   k ? "zstandard" : "snappy");
            continue;
        }
        t_checks_failed = 0;
        size_t i;
        json_t *c;
        json_array_foreach(cases, i, c) CHECK_EQ(floe_reads("py", codecs[k], c), 0);
        printf("%s - floe_reads_python_avro_%s%s%s\n", t_checks_failed ? "not ok" : "ok", codecs[k],
               t_checks_failed ? ": " : "", t_checks_failed ? t_first_failure : "");
        if (t_checks_failed) t_tests_failed++;
    }
}

/* floe's Parsing Canonical Form equals avsc's for every case schema. */
static void canonical_form_matches_avsc(void)
{
    char full[8400];
    snprintf(full, sizeof full, "cd '%s/tests/interop' && node avro_interop.mjs canonical 2>&1",
             root);
    FILE *p = popen(full, "r");
    CHECK(p != NULL);
    if (!p) return;
    static char line[65536];
    int seen = 0;
    while (fgets(line, sizeof line, p)) {
        char name[64];
        int off = 0;
        if (sscanf(line, "canonical %63s %n", name, &off) != 1 || off == 0) {
            fprintf(stderr, "peer: %s", line);
            continue;
        }
        char *theirs = line + off;
        theirs[strcspn(theirs, "\n")] = 0;
        size_t i;
        json_t *c;
        json_array_foreach(cases, i, c)
        {
            if (strcmp(json_string_value(json_object_get(c, "name")), name) != 0) continue;
            char *text = json_dumps(json_object_get(c, "schema"), JSON_COMPACT);
            floe_err_t err = {0};
            floe_avro_schema_t *s = NULL;
            CHECK_EQ(floe_avro_schema_parse(text, strlen(text), &s, &err), 0);
            char *ours = s ? floe_avro_schema_canonical(s, &err) : NULL;
            if (!ours || strcmp(ours, theirs) != 0) {
                fprintf(stderr, "%s canonical:\n  floe %s\n  avsc %s\n", name,
                        ours ? ours : "(null)", theirs);
                CHECK(0);
            }
            free(ours);
            free(text);
            floe_avro_schema_free(s);
            seen++;
        }
    }
    CHECK_EQ(pclose(p), 0);
    CHECK_EQ(seen, (int)json_array_size(cases));
}

/* Schema resolution on peers' files: events read with an evolved reader
 * schema (promotions, string->bytes, enum default, a removed field, an
 * added one, a renamed one by alias, a nested record changed). */
static const char *EVOLVED =
    "{\"type\":\"record\",\"name\":\"event\",\"namespace\":\"floe.test\",\"fields\":["
    "{\"name\":\"user_id\",\"type\":\"long\"},"
    "{\"name\":\"n\",\"type\":\"long\"},"
    "{\"name\":\"ratio\",\"type\":\"double\"},"
    "{\"name\":\"event\",\"type\":\"bytes\"},"
    "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"kind\",\"symbols\":[\"VIEW\","
    "\"CLICK\",\"OTHER\"],\"default\":\"OTHER\"}},"
    "{\"name\":\"maybe\",\"type\":[\"null\",\"long\",\"string\"]},"
    "{\"name\":\"loc\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"point\",\"fields\":["
    "{\"name\":\"x\",\"type\":\"double\"},{\"name\":\"z\",\"type\":\"int\",\"default\":-1}]}]},"
    "{\"name\":\"added\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"renamed\",\"type\":\"long\",\"aliases\":[\"big\"]}]}";

/* What EVOLVED reads from a case record (floe's JSON rendering). */
static json_t *evolved_expect(json_t *r)
{
    const char *ev = json_string_value(json_object_get(r, "event"));
    char *hex = malloc(2 * strlen(ev) + 1);
    for (size_t i = 0; ev[i]; i++) sprintf(hex + 2 * i, "%02x", (unsigned char)ev[i]);
    hex[2 * strlen(ev)] = 0;
    const char *kind = json_string_value(json_object_get(r, "kind"));
    json_t *loc = json_object_get(r, "loc");
    json_t *eloc = json_is_null(loc)
                       ? json_null()
                       : json_pack("{s:O,s:i}", "x", json_object_get(loc, "x"), "z", -1);
    json_t *e = json_pack(
        "{s:O,s:O,s:O,s:{s:s},s:s,s:O,s:o,s:n,s:O}", "user_id", json_object_get(r, "user_id"), "n",
        json_object_get(r, "n"), "ratio", json_object_get(r, "ratio"), "event", "$bytes", hex,
        "kind", strcmp(kind, "BUY") == 0 ? "OTHER" : kind, "maybe", json_object_get(r, "maybe"),
        "loc", eloc, "added", "renamed", json_object_get(r, "big"));
    free(hex);
    return e;
}

static void floe_resolves_peer_files(void)
{
    floe_err_t err = {0};
    floe_avro_schema_t *rs = NULL;
    CHECK_EQ(floe_avro_schema_parse(EVOLVED, strlen(EVOLVED), &rs, &err), 0);
    if (!rs) return;
    json_t *c = NULL, *x;
    size_t i;
    json_array_foreach(cases, i, x) if (strcmp(json_string_value(json_object_get(x, "name")),
                                               "events") == 0) c = x;
    CHECK(c != NULL);
    static const char *const files[] = {"avsc_events_snappy", "py_events_deflate",
                                        "floe_events_zstandard"};
    for (size_t f = 0; c && f < 3; f++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.avro", dir, files[f]);
        FILE *fh = fopen(path, "rb");
        CHECK(fh != NULL);
        if (!fh) continue;
        floe_buf_t file = FLOE_BUF_INIT;
        char chunk[4096];
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, fh)) > 0) floe_buf_append(&file, chunk, got);
        fclose(fh);
        floe_avro_reader_opts_t o = FLOE_AVRO_READER_OPTS_INIT;
        o.reader_schema = rs;
        floe_avro_reader_t *r;
        CHECK_EQ(floe_avro_reader_open(&r, file.data, file.len, &o, &err), 0);
        floe_arena_t a;
        floe_arena_init(&a, 0, 0);
        floe_avro_value_t *v;
        size_t n = 0;
        int rc;
        while (r && (rc = floe_avro_reader_next(r, &a, &v, &err)) == 1) {
            floe_buf_t b = FLOE_BUF_INIT;
            CHECK_EQ(floe_avro_value_to_json(v, &b, &err), 0);
            json_t *j = json_loads(floe_buf_cstr(&b), 0, NULL);
            json_t *want = evolved_expect(json_array_get(json_object_get(c, "records"), n));
            if (!j || !jeq(j, want)) {
                char *w = json_dumps(want, JSON_COMPACT);
                fprintf(stderr, "%s record %zu: %s\n  want %s\n", files[f], n, floe_buf_cstr(&b),
                        w);
                free(w);
                CHECK(0);
            }
            json_decref(j);
            json_decref(want);
            floe_buf_free(&b);
            n++;
        }
        CHECK_EQ(n, 3);
        if (err.msg[0]) fprintf(stderr, "%s: %s\n", files[f], err.msg);
        floe_avro_reader_free(r);
        floe_arena_free(&a);
        floe_buf_free(&file);
    }
    floe_avro_schema_free(rs);
}

static void cleanup(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int setup(void)
{
    const char *r = getenv("FLOE_ROOT");
    if (r) snprintf(root, sizeof root, "%s", r);
    else if (!getcwd(root, sizeof root))
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/floe_avro_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    setenv("FLOE_AVRO_DIR", dir, 1);
    char path[4200];
    snprintf(path, sizeof path, "%s/tests/interop/avro_cases.json", root);
    json_error_t je;
    json_t *all = json_load_file(path, 0, &je);
    if (!all) {
        fprintf(stderr, "%s: %s\n", path, je.text);
        return -1;
    }
    cases = json_incref(json_object_get(all, "cases"));
    json_decref(all);
    return cases ? 0 : -1;
}

int main(void)
{
    if (setup() != 0) {
        printf("not ok - avro_interop_setup: cannot make a temp dir or read avro_cases.json\n");
        return 1;
    }
    RUN(floe_writes_cases);
    RUN(random_schemas_round_trip);
    RUN(avsc_reads_floe_files);
    RUN(python_avro_reads_floe_files);
    RUN(floe_reads_avsc_files);
    RUN(floe_reads_python_avro_files);
    floe_reads_python_avro_compressed();
    RUN(floe_resolves_peer_files);
    RUN(canonical_form_matches_avsc);
    json_decref(cases);
    if (!getenv("FLOE_TEST_KEEP_TMP")) cleanup(); /* keep the files to debug a failure */
    return t_tests_failed ? 1 : 0;
}
