/* The L1 row buffer and the JSON shredder: Dremel levels against hand-worked
 * examples, evolution, rollback of bad rows, and JSON edge cases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "table/rows.h"
#include "table/tstamp.h"
#include "test.h"

/* Render a column as "def/rep[:value] ..." for comparison. */
static const char *dump(floe_rows_t *r, const char *path)
{
    static char out[4096];
    floe_rnode_t *n = floe_rows_root(r);
    char p[256];
    snprintf(p, sizeof p, "%s", path);
    for (char *tok = strtok(p, "."); tok && n; tok = strtok(NULL, ".")) n = floe_rows_child(n, tok);
    if (!n) return "(no such field)";
    if (!n->col) return "(not a leaf)";
    floe_rcol_t *c = n->col;
    size_t o = 0, j = 0;
    out[0] = '\0';
    for (size_t i = 0; i < c->defs.len && o < sizeof out - 100; i++) {
        int d = c->defs.data[i], rp = c->reps.data[i];
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%d/%d", i ? " " : "", d, rp);
        if (d == n->def) {
            switch (n->kind) {
            case FLOE_TK_LONG:
            case FLOE_TK_TIMESTAMPTZ:
                o += (size_t)snprintf(out + o, sizeof out - o, ":%lld",
                                      (long long)floe_rcol_long(c, j));
                break;
            case FLOE_TK_DOUBLE:
                o += (size_t)snprintf(out + o, sizeof out - o, ":%g", floe_rcol_double(c, j));
                break;
            case FLOE_TK_BOOL:
                o += (size_t)snprintf(out + o, sizeof out - o, ":%s",
                                      c->vals.data[j] ? "true" : "false");
                break;
            case FLOE_TK_INT:
                o += (size_t)snprintf(out + o, sizeof out - o, ":%d", floe_rcol_int(c, j));
                break;
            default: {
                floe_slice_t s = floe_rcol_bytes(c, j);
                o += (size_t)snprintf(out + o, sizeof out - o, ":%.*s", (int)s.len,
                                      (const char *)s.ptr);
            }
            }
            j++;
        }
    }
    return out;
}

/* Every leaf holds exactly one rep-0 entry per row, and as many values as
 * entries at full definition: the buffer is consistent. */
static int consistent(floe_rows_t *r)
{
    size_t n;
    floe_rcol_t *const *l = floe_rows_leaves(r, &n);
    for (size_t i = 0; i < n; i++) {
        size_t rows = 0, vals = 0;
        if (l[i]->defs.len != l[i]->reps.len) return 0;
        for (size_t k = 0; k < l[i]->defs.len; k++) {
            if (l[i]->reps.data[k] == 0) rows++;
            if (l[i]->defs.data[k] == l[i]->node->def) vals++;
        }
        if (rows != floe_rows_count(r) || vals != l[i]->nvals) return 0;
    }
    return 1;
}

static int add(floe_rows_t *r, const char *json, floe_err_t *e)
{
    floe_rows_begin(r);
    if (floe_rows_json(r, floe_rows_root(r), (const uint8_t *)json, strlen(json), e) < 0 ||
        floe_rows_end(r, e) < 0) {
        floe_rows_rollback(r);
        return -1;
    }
    return 0;
}

static void flat_rows_and_new_fields(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"a\":1,\"b\":\"x\"}", &e), 0);
    CHECK_EQ(add(r, " { \"a\" : 2 } ", &e), 0);
    CHECK_EQ(add(r, "{\"b\":\"y\",\"c\":true}", &e), 0);
    CHECK_EQ(floe_rows_count(r), 3);
    CHECK_STR(dump(r, "a"), "1/0:1 1/0:2 0/0");
    CHECK_STR(dump(r, "b"), "1/0:x 0/0 1/0:y");
    CHECK_STR(dump(r, "c"), "0/0 0/0 1/0:true");
    CHECK(consistent(r));
    floe_rows_free(r);
}

static void lists_of_structs(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"items\":[{\"id\":1},{\"id\":2,\"tag\":\"t\"}]}", &e), 0);
    CHECK_EQ(add(r, "{\"items\":[]}", &e), 0);
    CHECK_EQ(add(r, "{}", &e), 0);
    CHECK_EQ(add(r, "{\"items\":null}", &e), 0);
    CHECK_EQ(add(r, "{\"items\":[null,{\"id\":3}]}", &e), 0);
    floe_rnode_t *items = floe_rows_child(floe_rows_root(r), "items");
    CHECK(items && items->kind == FLOE_TK_LIST);
    floe_rnode_t *el = items->kids[0];
    CHECK_EQ(el->def, 3);
    CHECK_EQ(el->rep, 1);
    /* element.id and element.tag: the path goes through "element" */
    CHECK_STR(dump(r, "items.element.id"), "4/0:1 4/1:2 1/0 0/0 0/0 2/0 4/1:3");
    CHECK_STR(dump(r, "items.element.tag"), "3/0 4/1:t 1/0 0/0 0/0 2/0 3/1");
    CHECK(consistent(r));
    floe_rows_free(r);
}

static void nested_field_added_later(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"u\":{\"id\":1}}", &e), 0);
    CHECK_EQ(add(r, "{\"v\":5}", &e), 0);
    CHECK_EQ(add(r, "{\"u\":{\"id\":2,\"name\":\"n\"}}", &e), 0);
    CHECK_STR(dump(r, "u.id"), "2/0:1 0/0 2/0:2");
    CHECK_STR(dump(r, "u.name"), "1/0 0/0 2/0:n");
    /* a field added inside list elements, after earlier lists */
    CHECK_EQ(add(r, "{\"l\":[{\"a\":1},{\"a\":2}]}", &e), 0);
    CHECK_EQ(add(r, "{\"l\":[{\"a\":3,\"b\":[1,2]}]}", &e), 0);
    CHECK_STR(dump(r, "l.element.b.element"), "0/0 0/0 0/0 3/0 3/1 6/0:1 6/2:2");
    CHECK(consistent(r));
    floe_rows_free(r);
}

static void long_widens_to_double(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"x\":1}", &e), 0);
    uint64_t v = floe_rows_shape_version(r);
    CHECK_EQ(add(r, "{\"x\":2.5}", &e), 0);
    CHECK(floe_rows_shape_version(r) > v);
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "x")->kind, FLOE_TK_DOUBLE);
    CHECK_STR(dump(r, "x"), "1/0:1 1/0:2.5");
    CHECK_EQ(add(r, "{\"x\":7}", &e), 0);
    CHECK_STR(dump(r, "x"), "1/0:1 1/0:2.5 1/0:7");
    floe_rows_free(r);

    floe_rows_opts_t o = {.widen_long_to_double = false};
    r = floe_rows_new(&o);
    CHECK_EQ(add(r, "{\"x\":1}", &e), 0);
    CHECK_EQ(add(r, "{\"x\":2.5}", &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(strstr(e.msg, "'x' is long") != NULL);
    CHECK_EQ(floe_rows_count(r), 1);
    floe_rows_free(r);
}

static int64_t ts(const char *text)
{
    int64_t us = -1;
    return floe_tstamp_parse((const uint8_t *)text, strlen(text), &us) ? us : -1;
}

static void rfc3339_date_times(void)
{
    CHECK_EQ(ts("1970-01-01T00:00:00Z"), 0);
    CHECK_EQ(ts("2026-12-02T17:16:57Z"), 1796231817000000LL);
    CHECK_EQ(ts("2026-12-02t17:16:57.5z"), 1796231817500000LL);
    CHECK_EQ(ts("2026-12-02 18:16:57.123456789+01:00"), 1796231817123456LL);
    CHECK_EQ(ts("2026-12-02T12:16:57-0500"), 1796231817000000LL);
    CHECK_EQ(ts("2026-12-02T19:16:57+02"), 1796231817000000LL);
    CHECK_EQ(ts("1969-12-31T23:59:59.999999Z"), -1); /* -1 us is also the miss value */
    CHECK_EQ(ts("1969-12-31T23:59:58Z"), -2000000LL);
    CHECK_EQ(ts("2024-02-29T00:00:00Z"), 1709164800000000LL);
    /* not date-times with a zone */
    CHECK_EQ(ts("2026-12-02T17:16:57"), -1);
    CHECK_EQ(ts("2026-12-02"), -1);
    CHECK_EQ(ts("2023-02-29T00:00:00Z"), -1);
    CHECK_EQ(ts("2026-13-02T17:16:57Z"), -1);
    CHECK_EQ(ts("2026-12-02T24:00:00Z"), -1);
    CHECK_EQ(ts("2026-12-02T17:16:57.Z"), -1);
    CHECK_EQ(ts("2026-12-02T17:16:57Zx"), -1);
    CHECK_EQ(ts("2026-12-02T17:16:57+1:00"), -1);
    CHECK_EQ(ts("x026-12-02T17:16:57Z"), -1);
    CHECK_EQ(ts("2026-12-02T17:16:57.1234567890Z"), -1);
}

static void strings_holding_timestamps(void)
{
    floe_rows_opts_t o = {.infer_timestamps = true};
    floe_rows_t *r = floe_rows_new(&o);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"ts\":\"2026-12-02T17:16:57Z\",\"s\":\"2026-12-02\"}", &e), 0);
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "ts")->kind, FLOE_TK_TIMESTAMPTZ);
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "s")->kind, FLOE_TK_STRING);
    CHECK_EQ(add(r, "{\"ts\":\"2026-12-02T18:16:57.25+01:00\"}", &e), 0);
    CHECK_STR(dump(r, "ts"), "1/0:1796231817000000 1/0:1796231817250000");
    /* a string that is no date-time does not fit the column: the row goes */
    CHECK_EQ(add(r, "{\"ts\":\"yesterday\"}", &e), -1);
    CHECK(strstr(e.msg, "'ts' is timestamptz") && strstr(e.msg, "RFC 3339"));
    CHECK_EQ(add(r, "{\"ts\":17}", &e), -1);
    CHECK_EQ(floe_rows_count(r), 2);
    /* a list mixing date-times and other strings holds strings */
    CHECK_EQ(add(r, "{\"l\":[\"2026-12-02T17:16:57Z\",\"x\"]}", &e), 0);
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "l")->kids[0]->kind, FLOE_TK_STRING);
    CHECK(consistent(r));
    floe_rows_free(r);
    /* off: date-times stay strings */
    o.infer_timestamps = false;
    r = floe_rows_new(&o);
    CHECK_EQ(add(r, "{\"ts\":\"2026-12-02T17:16:57Z\"}", &e), 0);
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "ts")->kind, FLOE_TK_STRING);
    floe_rows_free(r);
}

static void coercion_when_lossless(void)
{
    floe_rows_opts_t o = {.coerce = false};
    floe_rows_t *r = floe_rows_new(&o);
    floe_err_t e;
    const char *first = "{\"n\":1,\"d\":1.5,\"b\":true,\"s\":\"x\"}";
    CHECK_EQ(add(r, first, &e), 0);
    CHECK_EQ(add(r, "{\"n\":\"42\"}", &e), -1);
    CHECK(strstr(e.msg, "'n' is long") && strstr(e.msg, "a string"));
    floe_rows_free(r);

    o.coerce = true;
    r = floe_rows_new(&o);
    CHECK_EQ(add(r, first, &e), 0);
    CHECK_EQ(add(r, "{\"n\":\"-42\",\"d\":\"2.5e1\",\"b\":\"false\",\"s\":7.25}", &e), 0);
    CHECK_EQ(add(r, "{\"d\":\"3\",\"s\":{\"k\":[1, true]}}", &e), 0);
    CHECK_EQ(add(r, "{\"s\":false}", &e), 0);
    CHECK_STR(dump(r, "n"), "1/0:1 1/0:-42 0/0 0/0");
    CHECK_STR(dump(r, "d"), "1/0:1.5 1/0:25 1/0:3 0/0");
    CHECK_STR(dump(r, "b"), "1/0:true 1/0:false 0/0 0/0");
    CHECK_STR(dump(r, "s"), "1/0:x 1/0:7.25 1/0:{\"k\":[1, true]} 1/0:false");
    /* what would lose or invent something still does not fit */
    const char *bad[] = {"{\"n\":\"2.5\"}",   "{\"n\":\"42 \"}",
                         "{\"n\":\"\"}",      "{\"n\":true}",
                         "{\"b\":\"yes\"}",   "{\"b\":1}",
                         "{\"d\":\"1e999\"}", "{\"n\":\"99999999999999999999\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(add(r, bad[i], &e), -1);
        CHECK(e.msg[0] != '\0');
    }
    CHECK_EQ(floe_rows_count(r), 4);
    CHECK(consistent(r));
    floe_rows_free(r);
}

static void bad_rows_leave_nothing(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"a\":1,\"s\":\"x\"}", &e), 0);
    uint64_t v = floe_rows_shape_version(r);
    /* adds a field, then fails: the field goes away with the row */
    CHECK_EQ(add(r, "{\"new\":{\"deep\":1},\"a\":\"oops\"}", &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(strstr(e.msg, "'a' is long, value at byte") != NULL);
    CHECK(floe_rows_child(floe_rows_root(r), "new") == NULL);
    CHECK(floe_rows_shape_version(r) != v); /* changed and changed back */
    const char *bad[] = {
        "{\"a\":1",                 /* cut short */
        "{\"a\":tru}",              /* bad literal */
        "{\"a\":01}",               /* leading zero */
        "{\"s\":\"\xff\"}",         /* invalid UTF-8 */
        "{\"s\":\"\xed\xa0\x80\"}", /* UTF-8 surrogate */
        "{\"s\":\"\\ud800\"}",      /* lone surrogate */
        "{\"s\":\"a\nb\"}",         /* raw control character */
        "{\"s\":\"\\q\"}",          /* bad escape */
        "{\"a\":1} x",              /* trailing bytes */
        "{\"a\":1,}",               /* trailing comma */
        "{\"a\" 1}",                /* missing colon */
        "",                         /* empty */
        "{\"a\":-}",                /* bare minus */
        "{\"a\":1.}",               /* bare dot */
        "{\"a\":1e}",               /* bare exponent */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.code = FLOE_OK;
        CHECK_EQ(add(r, bad[i], &e), -1);
        CHECK_EQ(e.code, FLOE_ECORRUPT);
        CHECK(strstr(e.msg, "invalid JSON at byte") != NULL);
        if (e.code != FLOE_ECORRUPT) printf("# %s -> %s\n", bad[i], e.msg);
    }
    CHECK_EQ(add(r, "[1,2]", &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(strstr(e.msg, "is an array, not an object") != NULL);
    CHECK_EQ(add(r, "this is not json", &e), -1); /* not "a boolean" */
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    CHECK(strstr(e.msg, "invalid JSON at byte 0") != NULL);
    CHECK_EQ(add(r, "{\"a\":1,\"a\":2}", &e), -1);
    CHECK(strstr(e.msg, "duplicate key 'a'") != NULL);
    CHECK_EQ(add(r, "{\"s\":{\"x\":1}}", &e), -1);
    CHECK(strstr(e.msg, "'s' is string, value at byte 5 is an object") != NULL);
    CHECK_EQ(add(r, "{\"m\":[1,\"x\"]}", &e), -1);
    CHECK(strstr(e.msg, "mix") != NULL);
    CHECK(floe_rows_child(floe_rows_root(r), "m") == NULL);
    /* the good rows around them are intact */
    CHECK_EQ(add(r, "{\"a\":2}", &e), 0);
    CHECK_EQ(floe_rows_count(r), 2);
    CHECK_STR(dump(r, "a"), "1/0:1 1/0:2");
    CHECK_STR(dump(r, "s"), "1/0:x 0/0");
    CHECK(consistent(r));
    floe_rows_free(r);
}

static void strings_and_numbers(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"s\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\n\\/\",\"k\\u0041\":1}", &e), 0);
    CHECK_STR(dump(r, "s"), "1/0:a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\n/");
    CHECK_STR(dump(r, "kA"), "1/0:1");
    floe_rows_free(r);

    r = floe_rows_new(NULL);
    const char *nums[] = {"0", "-0", "9223372036854775807", "-9223372036854775808",
                          "123456789012345678"};
    const long long want[] = {0, 0, INT64_MAX, INT64_MIN, 123456789012345678LL};
    for (int i = 0; i < 5; i++) {
        char doc[128];
        snprintf(doc, sizeof doc, "{\"n\":%s}", nums[i]);
        CHECK_EQ(add(r, doc, &e), 0);
    }
    floe_rcol_t *c = floe_rows_child(floe_rows_root(r), "n")->col;
    for (int i = 0; i < 5; i++) CHECK(floe_rcol_long(c, (size_t)i) == want[i]);
    floe_rows_free(r);

    /* doubles: exactly what strtod gives, fast path or not */
    const char *dbl[] = {"0.1",
                         "1e2",
                         "-1.5e-7",
                         "3.141592653589793",
                         "1e22",
                         "1e23",
                         "9223372036854775808",
                         "123456789012345678901234567890",
                         "2.2250738585072014e-308",
                         "0.000000000000000000001",
                         "4.35"};
    r = floe_rows_new(NULL);
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++) {
        char doc[128];
        snprintf(doc, sizeof doc, "{\"d\":%s}", dbl[i]);
        CHECK_EQ(add(r, doc, &e), 0);
    }
    c = floe_rows_child(floe_rows_root(r), "d")->col;
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "d")->kind, FLOE_TK_DOUBLE);
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
        CHECK(floe_rcol_double(c, i) == strtod(dbl[i], NULL));
    CHECK_EQ(add(r, "{\"d\":1e400}", &e), -1);
    floe_rows_free(r);
}

/* Strings and keys of every length up to 40 with one special byte (quote
 * escape, backslash escape, UTF-8, control character, raw quote) at every
 * position: the word-at-a-time scan must find each one, whatever its
 * place in an 8-byte step. */
static void string_specials_at_every_position(void)
{
    floe_err_t e;
    static const struct {
        const char *raw, *want; /* raw JSON text of the special, its value */
        bool bad;
    } sp[] = {{"\\\"", "\"", false},   {"\\\\", "\\", false}, {"\xc3\xa9", "\xc3\xa9", false},
              {"\\u0041", "A", false}, {"\x01", NULL, true},  {"\x7f", "\x7f", false},
              {"\xff", NULL, true},    {"~", "~", false}};
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++) {
        for (size_t len = 0; len <= 40; len++) {
            for (size_t at = 0; at <= len; at++) {
                char doc[256], want[128], name[128];
                size_t o = 0, w = 0;
                for (size_t i = 0; i < len; i++) {
                    if (i == at) {
                        o += (size_t)sprintf(doc + o, "%s", sp[k].raw);
                        if (sp[k].want) w += (size_t)sprintf(want + w, "%s", sp[k].want);
                    }
                    doc[o++] = (char)('a' + i % 26);
                    want[w++] = (char)('a' + i % 26);
                }
                want[w] = '\0';
                /* the value, then the same text as a key (keys copy once more) */
                char full[512];
                snprintf(name, sizeof name, "%.*s", (int)o, doc);
                snprintf(full, sizeof full, "{\"s\":\"%.*s\",\"k%.*s\":1}", (int)o, doc, (int)o,
                         doc);
                floe_rows_t *r = floe_rows_new(NULL);
                int rc = add(r, full, &e);
                if (sp[k].bad && at < len) {
                    CHECK_EQ(rc, -1);
                } else {
                    CHECK_EQ(rc, 0);
                    char exp[160];
                    snprintf(exp, sizeof exp, "1/0:%s", want);
                    CHECK_STR(dump(r, "s"), exp);
                    char kn[160];
                    snprintf(kn, sizeof kn, "k%s", want);
                    floe_rnode_t *kid =
                        floe_rows_root(r)->nkids == 2 ? floe_rows_root(r)->kids[1] : NULL;
                    CHECK(kid && strcmp(kid->name, kn) == 0);
                }
                floe_rows_free(r);
            }
        }
    }
}

/* Keys matched in place against the expected field (after the first
 * row) keep the full syntax checks. */
static void expected_keys_still_checked(void)
{
    floe_err_t e;
    floe_rows_t *r = floe_rows_new(NULL);
    CHECK_EQ(add(r, "{\"ab\":1,\"cd\":2}", &e), 0);
    CHECK_EQ(add(r, "{\"ab\" 1}", &e), -1);
    CHECK_EQ(add(r, "{\"ab\":1,\"cd\"}", &e), -1);
    CHECK_EQ(add(r, "{\"ab\":1,\"ab\":2}", &e), -1);
    CHECK_EQ(add(r, "{\"ab\"", &e), -1);
    CHECK_EQ(add(r, "{\"ab", &e), -1);
    CHECK_EQ(add(r, "{\"ab\":1 , \"cd\" :\t2}", &e), 0);
    CHECK_EQ(add(r, "{\"a\\u0062\":3,\"cd\":4}", &e), 0); /* escaped spelling of "ab" */
    CHECK_EQ(add(r, "{\"abc\":5}", &e), 0);               /* a longer key: a new field */
    CHECK_STR(dump(r, "ab"), "1/0:1 1/0:1 1/0:3 0/0");
    CHECK_STR(dump(r, "cd"), "1/0:2 1/0:2 1/0:4 0/0");
    floe_rows_free(r);
}

static void system_fields_and_puts(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    floe_rnode_t *k = floe_rows_add_field(r, floe_rows_root(r), "_kafka", FLOE_TK_STRUCT, true, &e);
    CHECK(k != NULL);
    floe_rows_mark_sys(k);
    floe_rnode_t *off = floe_rows_add_field(r, k, "offset", FLOE_TK_LONG, true, &e);
    floe_rnode_t *key = floe_rows_add_field(r, k, "key", FLOE_TK_BINARY, false, &e);
    CHECK(off && key);
    for (int i = 0; i < 3; i++) {
        floe_rows_begin(r);
        CHECK_EQ(floe_rows_put_long(r, off, 100 + i), 0);
        if (i == 1) CHECK_EQ(floe_rows_put_bytes(r, key, "k1", 2), 0);
        const char *doc = i == 2 ? "{\"v\":\"late\"}" : "{\"n\":1}";
        CHECK_EQ(floe_rows_json(r, floe_rows_root(r), (const uint8_t *)doc, strlen(doc), &e), 0);
        CHECK_EQ(floe_rows_end(r, &e), 0);
    }
    /* required fields add no definition level */
    CHECK_STR(dump(r, "_kafka.offset"), "0/0:100 0/0:101 0/0:102");
    CHECK_STR(dump(r, "_kafka.key"), "0/0 1/0:k1 0/0");
    CHECK_STR(dump(r, "v"), "0/0 0/0 1/0:late");
    CHECK_STR(dump(r, "n"), "1/0:1 1/0:1 0/0");
    /* the JSON may not write into a system field */
    floe_rows_begin(r);
    floe_rows_put_long(r, off, 9);
    CHECK_EQ(floe_rows_json(r, floe_rows_root(r), (const uint8_t *)"{\"_kafka\":1}", 12, &e), -1);
    CHECK(strstr(e.msg, "reserved") != NULL);
    floe_rows_rollback(r);
    /* a required field left unset fails the row */
    floe_rows_begin(r);
    CHECK_EQ(floe_rows_json(r, floe_rows_root(r), (const uint8_t *)"{}", 2, &e), 0);
    CHECK_EQ(floe_rows_end(r, &e), -1);
    CHECK(strstr(e.msg, "required field") != NULL);
    floe_rows_rollback(r);
    CHECK_EQ(floe_rows_count(r), 3);
    CHECK(consistent(r));
    floe_rows_clear(r);
    CHECK_EQ(floe_rows_count(r), 0);
    CHECK_EQ(floe_rows_bytes(r), 0);
    CHECK(consistent(r));
    floe_rows_free(r);
}

static void caps_hold(void)
{
    floe_rows_opts_t o = {.widen_long_to_double = true, .max_depth = 4, .max_leaves = 3};
    floe_rows_t *r = floe_rows_new(&o);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"a\":{\"b\":{\"c\":1}}}", &e), 0);
    CHECK_EQ(add(r, "{\"x\":[[[[[1]]]]]}", &e), -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
    CHECK_EQ(add(r, "{\"p\":1,\"q\":2,\"s\":3}", &e), -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
    CHECK(floe_rows_child(floe_rows_root(r), "p") == NULL);
    CHECK_EQ(floe_rows_count(r), 1);
    CHECK(consistent(r));
    floe_rows_free(r);
}

/* Random documents over a small vocabulary: after each append or rejected
 * append, the buffer stays consistent. */
static void random_documents_stay_consistent(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    const char *vals[] = {
        "1",           "2.5",        "\"s\"", "true",      "null",
        "{}",          "[]",         "[1,2]", "{\"x\":1}", "{\"x\":\"y\",\"z\":[true]}",
        "[{\"x\":3}]", "[[1],[2,3]]"};
    const char *keys[] = {"a", "b", "c", "d"};
    uint32_t seed = 7;
    int ok = 0;
    for (int i = 0; i < 3000; i++) {
        char doc[512];
        size_t o = 0;
        doc[o++] = '{';
        int nk = (int)((seed = seed * 1103515245 + 12345) >> 16) % 4;
        for (int k = 0; k < nk; k++) {
            seed = seed * 1103515245 + 12345;
            o += (size_t)snprintf(doc + o, sizeof doc - o, "%s\"%s\":%s", k ? "," : "",
                                  keys[(seed >> 8) % 4], vals[(seed >> 16) % 12]);
        }
        doc[o++] = '}';
        doc[o] = '\0';
        if (add(r, doc, &e) == 0) ok++;
        if (!consistent(r)) {
            CHECK(!"inconsistent after");
            printf("# doc: %s\n", doc);
            break;
        }
    }
    CHECK(ok > 100);
    CHECK_EQ(floe_rows_count(r), ok);
    floe_rows_free(r);
}

TEST_MAIN(RUN(flat_rows_and_new_fields); RUN(lists_of_structs); RUN(nested_field_added_later);
          RUN(long_widens_to_double); RUN(bad_rows_leave_nothing); RUN(strings_and_numbers);
          RUN(string_specials_at_every_position); RUN(expected_keys_still_checked);
          RUN(system_fields_and_puts); RUN(caps_hold); RUN(random_documents_stay_consistent);
          RUN(rfc3339_date_times); RUN(strings_holding_timestamps); RUN(coercion_when_lossless))
