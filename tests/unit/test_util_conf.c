/* util/conf: the declarative key tables, one type at a time (storage
 * width, ranges, messages), suggestions for misspelt keys, the Markdown
 * reference. */
#include <stddef.h>
#include <stdlib.h>

#include "util/conf.h"
#include "test.h"

typedef struct demo {
    int32_t small;
    int32_t guard; /* must survive writes to small */
    int64_t big;
    uint64_t bytes;
    int64_t ms;
    bool on;
    int mode;
    char name[8];
} demo_t;

static int no_x(const char *v, floe_err_t *err)
{
    return strchr(v, 'x') ? floe_err_set(err, FLOE_EINVAL, "no x please") : 0;
}

static const floe_conf_enum_t modes[] = {{"fast", 1}, {"safe", 2}, {NULL, 0}};

#define F(f) FLOE_CONF_FIELD(demo_t, f)
static const floe_conf_key_t DEMO[] = {
    {.name = "small", .type = FLOE_CONF_INT, .min = -5, .max = 5, .def = "3", F(small)},
    {.name = "big", .type = FLOE_CONF_INT, .min = 0, .max = INT64_MAX, .def = "7", F(big)},
    {.name = "bytes",
     .type = FLOE_CONF_SIZE,
     .min = 1024,
     .max = 1ll << 40,
     .def = "1MiB",
     .live = true,
     F(bytes),
     .doc = "a | b"},
    {.name = "ms",
     .type = FLOE_CONF_DURATION,
     .min = 100,
     .max = 3600000,
     .def = "1s",
     .live = true,
     F(ms)},
    {.name = "on", .type = FLOE_CONF_BOOL, .def = "false", F(on)},
    {.name = "mode", .type = FLOE_CONF_ENUM, .values = modes, .def = "safe", F(mode)},
    {.name = "name", .type = FLOE_CONF_STRING, .check = no_x, .def_doc = "derived", F(name)},
};
#undef F
#define NDEMO (sizeof DEMO / sizeof DEMO[0])

static void each_type_parses_checks_and_stores(void)
{
    demo_t d;
    memset(&d, 0, sizeof d);
    d.guard = 0x5a5a;
    floe_err_t e;
    CHECK_EQ(floe_conf_defaults(DEMO, NDEMO, &d, &e), 0);
    CHECK_EQ(d.small, 3);
    CHECK_EQ(d.guard, 0x5a5a);
    CHECK_EQ(d.big, 7);
    CHECK_EQ_U64(d.bytes, 1u << 20);
    CHECK_EQ(d.ms, 1000);
    CHECK(!d.on);
    CHECK_EQ(d.mode, 2);
    CHECK_STR(d.name, "");

    const floe_conf_key_t *k = floe_conf_find(DEMO, NDEMO, "small");
    CHECK_EQ(floe_conf_set(k, &d, "-5", &e), 0);
    CHECK_EQ(d.small, -5);
    CHECK_EQ(d.guard, 0x5a5a);
    CHECK_EQ(floe_conf_set(k, &d, "6", &e), -1);
    CHECK_STR(e.msg, "small: 6 is outside -5..5");
    CHECK_EQ(d.small, -5); /* unchanged on error */
    CHECK_EQ(floe_conf_set(k, &d, "1e3", &e), -1);
    CHECK_STR(e.msg, "small: invalid integer '1e3'");
    CHECK_EQ(floe_conf_set(floe_conf_find(DEMO, NDEMO, "big"), &d, "9223372036854775807", &e), 0);
    CHECK(d.big == INT64_MAX);

    k = floe_conf_find(DEMO, NDEMO, "bytes");
    CHECK_EQ(floe_conf_set(k, &d, "64 KiB", &e), 0);
    CHECK_EQ_U64(d.bytes, 64u << 10);
    CHECK_EQ(floe_conf_set(k, &d, "1000", &e), -1);
    CHECK_STR(e.msg, "bytes: 1000 is outside 1KiB..1TiB");
    CHECK_EQ(floe_conf_set(k, &d, "lots", &e), -1);
    CHECK(!strncmp(e.msg, "bytes: invalid size 'lots'", 26));

    k = floe_conf_find(DEMO, NDEMO, "ms");
    CHECK_EQ(floe_conf_set(k, &d, "2.5s", &e), 0);
    CHECK_EQ(d.ms, 2500);
    CHECK_EQ(floe_conf_set(k, &d, "2h", &e), -1);
    CHECK_STR(e.msg, "ms: 2h is outside 100ms..1h");

    k = floe_conf_find(DEMO, NDEMO, "on");
    CHECK_EQ(floe_conf_set(k, &d, "ON", &e), 0);
    CHECK(d.on);
    CHECK_EQ(floe_conf_set(k, &d, "ture", &e), -1);
    CHECK_STR(e.msg, "on: invalid boolean 'ture': expected true or false");

    k = floe_conf_find(DEMO, NDEMO, "mode");
    CHECK_EQ(floe_conf_set(k, &d, "FAST", &e), 0);
    CHECK_EQ(d.mode, 1);
    CHECK_EQ(floe_conf_set(k, &d, "slow", &e), -1);
    CHECK_STR(e.msg, "mode: 'slow' is not fast or safe");

    k = floe_conf_find(DEMO, NDEMO, "name");
    CHECK_EQ(floe_conf_set(k, &d, "abcdefg", &e), 0);
    CHECK_EQ(floe_conf_set(k, &d, "ab", &e), 0);
    CHECK(!memcmp(d.name, "ab\0\0\0\0\0\0", 8)); /* NUL-padded: equal values compare equal */
    CHECK_EQ(floe_conf_set(k, &d, "abcdefgh", &e), -1);
    CHECK_STR(e.msg, "name: longer than 7 bytes");
    CHECK_EQ(floe_conf_set(k, &d, "box", &e), -1);
    CHECK_STR(e.msg, "name: no x please");
    CHECK_STR(d.name, "ab");
    CHECK(floe_conf_find(DEMO, NDEMO, "nope") == NULL);
}

static void live_copy_and_change(void)
{
    demo_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    floe_err_t e;
    floe_conf_defaults(DEMO, NDEMO, &a, &e);
    floe_conf_defaults(DEMO, NDEMO, &b, &e);
    CHECK(!floe_conf_changed(DEMO, NDEMO, &a, &b));
    floe_conf_set(floe_conf_find(DEMO, NDEMO, "ms"), &b, "5s", &e);
    CHECK(!floe_conf_changed(DEMO, NDEMO, &a, &b)); /* live */
    floe_conf_copy_live(DEMO, NDEMO, &a, &b);
    CHECK_EQ(a.ms, 5000);
    floe_conf_set(floe_conf_find(DEMO, NDEMO, "mode"), &b, "fast", &e);
    CHECK(floe_conf_changed(DEMO, NDEMO, &a, &b));
    floe_conf_copy_live(DEMO, NDEMO, &a, &b);
    CHECK_EQ(a.mode, 2); /* not live: not copied */
}

static void unknown_keys_get_the_nearest(void)
{
    floe_err_t e;
    CHECK_EQ(floe_conf_unknown(DEMO, NDEMO, "bytse", "demo", &e), -1);
    CHECK_STR(e.msg, "bytse: unknown demo config (did you mean bytes?)");
    CHECK_EQ(floe_conf_unknown(DEMO, NDEMO, "mod", "demo", &e), -1);
    CHECK_STR(e.msg, "mod: unknown demo config (did you mean mode?)");
    CHECK_EQ(floe_conf_unknown(DEMO, NDEMO, "volume", "demo", &e), -1);
    CHECK_STR(e.msg, "volume: unknown demo config");
}

static void markdown_lists_every_key_once(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_conf_markdown(DEMO, NDEMO, true, &b), 0);
    const char *md = floe_buf_cstr(&b);
    CHECK(strstr(md, "| key | value | default | live | description |\n") == md);
    CHECK(strstr(md, "| `bytes` | size, 1KiB..1TiB | `1MiB` | yes | a \\| b |\n") != NULL);
    CHECK(strstr(md, "| `mode` | `fast`, `safe` | `safe` | no |  |\n") != NULL);
    CHECK(strstr(md, "| `name` | text | derived | no |") != NULL);
    floe_buf_free(&b);
}

TEST_MAIN(RUN(each_type_parses_checks_and_stores); RUN(live_copy_and_change);
          RUN(unknown_keys_get_the_nearest); RUN(markdown_lists_every_key_once))
