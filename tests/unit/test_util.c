#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/crc32c.h"
#include "util/err.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/murmur3.h"
#include "util/parse.h"
#include "util/varint.h"

static void crc32c_known_vector(void)
{
    const char *s = "123456789";
    CHECK_EQ_U64(floe_crc32c_sw(0, s, 9), 0xE3069283u);
    CHECK_EQ_U64(floe_crc32c(0, s, 9), 0xE3069283u);
    if (floe_crc32c_hw_available()) CHECK_EQ_U64(floe_crc32c_hw(0, s, 9), 0xE3069283u);
    CHECK_EQ_U64(floe_crc32c_sw(0, "", 0), 0);
    /* RFC 3720 B.4: 32 bytes of zeros, and of 0xff */
    uint8_t z[32] = {0}, f[32];
    memset(f, 0xff, sizeof f);
    CHECK_EQ_U64(floe_crc32c_sw(0, z, 32), 0x8A9136AAu);
    CHECK_EQ_U64(floe_crc32c_sw(0, f, 32), 0x62A8AB43u);
    if (floe_crc32c_hw_available()) {
        CHECK_EQ_U64(floe_crc32c_hw(0, z, 32), 0x8A9136AAu);
        CHECK_EQ_U64(floe_crc32c_hw(0, f, 32), 0x62A8AB43u);
    }
}

/* Both paths agree on every length and alignment, and incremental use
 * equals one call. */
static void crc32c_paths_agree(void)
{
    uint8_t buf[1100];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245 + 12345;
        buf[i] = (uint8_t)(x >> 16);
    }
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n < 1024; n += 37) {
            uint32_t a = floe_crc32c_sw(0, buf + off, n);
            CHECK_EQ_U64(floe_crc32c_hw(0, buf + off, n), a);
            uint32_t half = floe_crc32c_sw(0, buf + off, n / 2);
            CHECK_EQ_U64(floe_crc32c(half, buf + off + n / 2, n - n / 2), a);
        }
}

/* Long buffers take the hardware path's three-stream blocks: it agrees
 * with slicing-by-8 across block boundaries, alignments and a continued
 * crc. */
static void crc32c_long_buffers_agree(void)
{
    static uint8_t buf[40000];
    uint32_t x = 777;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245 + 12345;
        buf[i] = (uint8_t)(x >> 16);
    }
    size_t lens[] = {3071, 3072, 3073, 6143, 6144, 6151, 9216, 12345, 39990};
    for (size_t off = 0; off < 3; off++)
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            size_t n = lens[i];
            uint32_t a = floe_crc32c_sw(0, buf + off, n);
            CHECK_EQ_U64(floe_crc32c(0, buf + off, n), a);
            uint32_t head = floe_crc32c_sw(0, buf + off, 100);
            CHECK_EQ_U64(floe_crc32c(head, buf + off + 100, n - 100), a);
            if (floe_crc32c_hw_available()) CHECK_EQ_U64(floe_crc32c_hw(0, buf + off, n), a);
        }
}

/* Iceberg spec, Appendix B: 32-bit hash requirements. */
static void murmur3_iceberg_vectors(void)
{
    uint8_t le34[8] = {34, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ((int32_t)floe_murmur3_32(le34, 8, 0), 2017239379);
    CHECK_EQ((int32_t)floe_murmur3_32("iceberg", 7, 0), 1210000089);
    uint8_t bin[4] = {0, 1, 2, 3};
    CHECK_EQ((int32_t)floe_murmur3_32(bin, 4, 0), -188683207);
    /* date 2017-11-16 = 17486 days, hashed as a long */
    int64_t d = 17486;
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)((uint64_t)d >> (8 * i));
    CHECK_EQ((int32_t)floe_murmur3_32(le, 8, 0), -653330422);
    /* timestamp 2017-11-16T22:31:08 in microseconds */
    int64_t ts = 1510871468000000LL;
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)((uint64_t)ts >> (8 * i));
    CHECK_EQ((int32_t)floe_murmur3_32(le, 8, 0), -2047944441);
    /* uuid f79c3e09-677c-4bbd-a479-3f349cb785e7, big-endian bytes */
    uint8_t u[16] = {0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
                     0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7};
    CHECK_EQ((int32_t)floe_murmur3_32(u, 16, 0), 1488055340);
}

static void varint_round_trips(void)
{
    uint8_t b[16];
    int32_t v32[] = {0, 1, -1, 63, -64, 64, -65, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof v32 / sizeof v32[0]; i++) {
        size_t n = floe_varint_encode(b, v32[i]);
        int32_t out = 12345;
        CHECK(n <= FLOE_VARINT32_MAX_LEN);
        CHECK_EQ(floe_varint_decode(b, n, &out), (int)n);
        CHECK_EQ(out, v32[i]);
    }
    int64_t v64[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1LL << 40, -(1LL << 40)};
    for (size_t i = 0; i < sizeof v64 / sizeof v64[0]; i++) {
        size_t n = floe_varlong_encode(b, v64[i]);
        int64_t out = 12345;
        CHECK(n <= FLOE_VARINT64_MAX_LEN);
        CHECK_EQ(n, floe_uvarint_len(floe_zigzag64(v64[i])));
        CHECK_EQ(floe_varlong_decode(b, n, &out), (int)n);
        CHECK(out == v64[i]);
    }
    /* zigzag mapping as the Kafka spec lists it */
    CHECK_EQ(floe_zigzag32(0), 0);
    CHECK_EQ(floe_zigzag32(-1), 1);
    CHECK_EQ(floe_zigzag32(1), 2);
    CHECK_EQ(floe_zigzag32(-2), 3);
    CHECK_EQ_U64(floe_zigzag32(INT32_MIN), 0xFFFFFFFFu);
    /* known encodings: 300 -> ac 02; max uint32 -> ff ff ff ff 0f */
    CHECK_EQ(floe_uvarint_encode(b, 300), 2);
    CHECK(b[0] == 0xac && b[1] == 0x02);
    CHECK_EQ(floe_uvarint_encode(b, UINT32_MAX), 5);
    CHECK(b[4] == 0x0f);
    uint32_t u;
    CHECK_EQ(floe_uvarint32_decode(b, 5, &u), 5);
    CHECK_EQ_U64(u, UINT32_MAX);
    uint64_t u64;
    CHECK_EQ(floe_uvarint_encode(b, UINT64_MAX), 10);
    CHECK_EQ(floe_uvarint64_decode(b, 10, &u64), 10);
    CHECK_EQ_U64(u64, UINT64_MAX);
}

static void varint_rejects_bad_input(void)
{
    uint32_t u;
    uint64_t u64;
    int32_t s;
    /* truncated: continuation bit on the last available byte */
    uint8_t t[] = {0x80, 0x80};
    CHECK_EQ(floe_uvarint32_decode(t, 2, &u), -1);
    CHECK_EQ(floe_uvarint32_decode(t, 0, &u), -1);
    CHECK_EQ(floe_varint_decode(t, 1, &s), -1);
    /* too long for 32 bits: 6 bytes */
    uint8_t l[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    CHECK_EQ(floe_uvarint32_decode(l, 6, &u), -1);
    /* 5 bytes but bits above 32: ff ff ff ff 1f */
    uint8_t o[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    CHECK_EQ(floe_uvarint32_decode(o, 5, &u), -1);
    /* 64-bit: 10th byte may only hold one bit */
    uint8_t o64[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    CHECK_EQ(floe_uvarint64_decode(o64, 10, &u64), -1);
    uint8_t l64[11];
    memset(l64, 0x80, 10);
    l64[10] = 0;
    CHECK_EQ(floe_uvarint64_decode(l64, 11, &u64), -1);
}

static void buf_grows_and_encodes(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    for (int i = 0; i < 1000; i++) CHECK_EQ(floe_buf_append_u8(&b, (uint8_t)i), 0);
    CHECK_EQ(b.len, 1000);
    CHECK_EQ(b.data[999], (uint8_t)999);
    floe_buf_reset(&b);
    floe_buf_append_be32(&b, 0x01020304);
    floe_buf_append_le32(&b, 0x01020304);
    floe_buf_append_be64(&b, 0x0102030405060708ull);
    CHECK_EQ(floe_rd_be32(b.data), 0x01020304);
    CHECK_EQ(b.data[4], 4);
    CHECK_EQ(floe_rd_le32(b.data + 4), 0x01020304);
    CHECK_EQ_U64(floe_rd_be64(b.data + 8), 0x0102030405060708ull);
    floe_buf_reset(&b);
    floe_buf_printf(&b, "%s-%d", "x", 42);
    CHECK_STR(floe_buf_cstr(&b), "x-42");
    size_t n;
    uint8_t *p = floe_buf_detach(&b, &n);
    CHECK_EQ(n, 4);
    CHECK(b.data == NULL && b.len == 0);
    free(p);
    floe_buf_free(&b);
}

/* A buffer emptied at about `settle` bytes stops there, where doubling
 * would have gone to the next power of two; past it, it grows by need. */
static void buf_reserve_settles(void)
{
    const size_t page = 1 << 20, settle = page + page / 8;
    floe_buf_t b = FLOE_BUF_INIT, d = FLOE_BUF_INIT;
    uint8_t chunk[1000] = {7};
    while (b.len < page + 500) {
        CHECK_EQ(floe_buf_reserve_settle(&b, sizeof chunk, settle), 0);
        CHECK_EQ(floe_buf_append(&b, chunk, sizeof chunk), 0);
        CHECK_EQ(floe_buf_append(&d, chunk, sizeof chunk), 0);
    }
    CHECK_EQ(b.cap, settle);   /* not 2 MiB */
    CHECK_EQ(d.cap, 2 * page); /* what plain doubling does */
    CHECK_EQ(b.data[b.len - sizeof chunk], 7);
    b.len = 0; /* reused for the next page: no growth */
    CHECK_EQ(floe_buf_reserve_settle(&b, page, settle), 0);
    CHECK_EQ(b.cap, settle);
    /* one value larger than the settle point: exactly what is needed and
     * an eighth, not a power of two */
    CHECK_EQ(floe_buf_reserve_settle(&b, 3 * page, settle), 0);
    CHECK_EQ(b.cap, 3 * page + 3 * page / 8);
    CHECK_EQ(floe_buf_reserve_settle(&b, (size_t)-1 / 2, settle), -1); /* too large: unchanged */
    CHECK_EQ(b.cap, 3 * page + 3 * page / 8);
    floe_buf_free(&b);
    floe_buf_free(&d);
}

static void arena_allocates_and_caps(void)
{
    floe_arena_t a;
    floe_arena_init(&a, 128, 0);
    char *s = floe_arena_strndup(&a, "hello", 5);
    CHECK_STR(s, "hello");
    void *big = floe_arena_alloc(&a, 10000); /* larger than a block */
    CHECK(big != NULL);
    CHECK(((uintptr_t)big & 15) == 0);
    memset(big, 1, 10000);
    floe_arena_reset(&a);
    CHECK_EQ(a.used, 0);
    int *z = floe_arena_calloc(&a, 10, sizeof(int));
    CHECK(z && z[9] == 0);
    floe_arena_free(&a);

    floe_arena_init(&a, 0, 1024);
    CHECK(floe_arena_alloc(&a, 1000) != NULL);
    CHECK(floe_arena_alloc(&a, 100) == NULL); /* over the cap */
    CHECK(floe_arena_alloc(&a, SIZE_MAX) == NULL);
    CHECK(floe_arena_calloc(&a, SIZE_MAX / 2, 4) == NULL);
    floe_arena_free(&a);
}

static void sizes_parse(void)
{
    uint64_t v;
    floe_err_t e;
    CHECK_EQ(floe_parse_size("64MB", &v, &e), 0);
    CHECK_EQ_U64(v, 64000000);
    CHECK_EQ(floe_parse_size("32MiB", &v, &e), 0);
    CHECK_EQ_U64(v, 32ull << 20);
    CHECK_EQ(floe_parse_size("4096", &v, &e), 0);
    CHECK_EQ_U64(v, 4096);
    CHECK_EQ(floe_parse_size("1 gib", &v, &e), 0);
    CHECK_EQ_U64(v, 1ull << 30);
    CHECK_EQ(floe_parse_size("10b", &v, &e), 0);
    CHECK_EQ_U64(v, 10);
    const char *bad[] = {"", "MB", "-1MB", "1.5MB", "12 XB", "64MB ", " 64MB", "1e3", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.code = FLOE_OK;
        CHECK_EQ(floe_parse_size(bad[i], &v, &e), -1);
        CHECK_EQ(e.code, FLOE_EINVAL);
        CHECK(strstr(e.msg, "invalid size") != NULL);
    }
    CHECK_EQ(floe_parse_size("99999999999999999999", &v, &e), -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
    CHECK_EQ(floe_parse_size("20000000TiB", &v, &e), -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
    CHECK_EQ(floe_parse_size(NULL, &v, NULL), -1);
}

static void durations_parse(void)
{
    int64_t v;
    floe_err_t e;
    CHECK_EQ(floe_parse_duration_ms("10s", &v, &e), 0);
    CHECK_EQ(v, 10000);
    CHECK_EQ(floe_parse_duration_ms("500ms", &v, &e), 0);
    CHECK_EQ(v, 500);
    CHECK_EQ(floe_parse_duration_ms("1.5s", &v, &e), 0);
    CHECK_EQ(v, 1500);
    CHECK_EQ(floe_parse_duration_ms("250", &v, &e), 0);
    CHECK_EQ(v, 250);
    CHECK_EQ(floe_parse_duration_ms("2m", &v, &e), 0);
    CHECK_EQ(v, 120000);
    CHECK_EQ(floe_parse_duration_ms("1h", &v, &e), 0);
    CHECK_EQ(v, 3600000);
    CHECK_EQ(floe_parse_duration_ms("7d", &v, &e), 0);
    CHECK_EQ(v, 604800000);
    CHECK_EQ(floe_parse_duration_us("250us", &v, &e), 0);
    CHECK_EQ(v, 250);
    CHECK_EQ(floe_parse_duration_ms("250us", &v, &e), -1);
    CHECK(strstr(e.msg, "whole number of milliseconds") != NULL);
    const char *bad[] = {"", "s", "-1s", "10 parsecs", "1..5s", "1.s", "10s x", "+5s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(floe_parse_duration_ms(bad[i], &v, &e), -1);
        CHECK_EQ(e.code, FLOE_EINVAL);
    }
    CHECK_EQ(floe_parse_duration_ms("999999999999999999d", &v, &e), -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
}

static void ints_and_bools_parse(void)
{
    int64_t v;
    bool b;
    floe_err_t e;
    CHECK_EQ(floe_parse_int64("-5", -10, 10, &v, &e), 0);
    CHECK_EQ(v, -5);
    CHECK_EQ(floe_parse_int64("11", -10, 10, &v, &e), -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
    CHECK_EQ(floe_parse_int64("1x", -10, 10, &v, &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK_EQ(floe_parse_bool("TRUE", &b, &e), 0);
    CHECK(b);
    CHECK_EQ(floe_parse_bool("off", &b, &e), 0);
    CHECK(!b);
    CHECK_EQ(floe_parse_bool("maybe", &b, &e), -1);
}

static void errors_carry_context(void)
{
    floe_err_t e;
    CHECK_EQ(floe_err_set(&e, FLOE_ECORRUPT, "bad crc %08x", 0xdeadbeefu), -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    CHECK(!e.retriable);
    floe_err_wrap(&e, "segment %d", 7);
    CHECK_STR(e.msg, "segment 7: bad crc deadbeef");
    CHECK_EQ(floe_err_retry(&e, FLOE_ECONFLICT, "lost race"), -1);
    CHECK(e.retriable);
    floe_err_errno(&e, 2, "open x");
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(strstr(e.msg, "open x: ") == e.msg);
    CHECK_STR(floe_code_name(FLOE_EUNKNOWN), "outcome unknown");
    CHECK_STR(floe_code_name((floe_code_t)999), "unknown");
    CHECK_EQ(floe_err_set(NULL, FLOE_EIO, "x"), -1);
}

static void clocks_move_forward(void)
{
    int64_t a = floe_mono_ns();
    floe_sleep_ms(2);
    int64_t b = floe_mono_ns();
    CHECK(b - a >= 2000000);
    CHECK(floe_wall_ms() > 1600000000000LL); /* after 2020 */
    CHECK_EQ(floe_diag_level_parse("warn"), FLOE_DIAG_WARN);
    CHECK_EQ(floe_diag_level_parse("loud"), -1);
}

/* The one time formatter: every precision, dates, times before 1970 count
 * down, and a time the calendar cannot hold comes out as its number. */
static void times_format_iso(void)
{
    char t[40];
    CHECK_EQ(floe_time_iso(t, sizeof t, 1700000000123LL, 3, true), 24);
    CHECK_STR(t, "2023-11-14T22:13:20.123Z");
    floe_time_iso(t, sizeof t, -1, 3, true);
    CHECK_STR(t, "1969-12-31T23:59:59.999Z");
    floe_time_iso(t, sizeof t, 1700000000123456LL, 6, false);
    CHECK_STR(t, "2023-11-14T22:13:20.123456");
    floe_time_iso(t, sizeof t, -1, 9, true);
    CHECK_STR(t, "1969-12-31T23:59:59.999999999Z");
    floe_time_iso(t, sizeof t, 0, 0, true);
    CHECK_STR(t, "1970-01-01T00:00:00Z");
    floe_time_iso(t, sizeof t, 19000, FLOE_TIME_DATE, false);
    CHECK_STR(t, "2022-01-08");
    floe_time_iso(t, sizeof t, -1, FLOE_TIME_DATE, false);
    CHECK_STR(t, "1969-12-31");
    CHECK_EQ(floe_time_iso(t, sizeof t, INT64_MAX, 0, true), -1);
    CHECK_STR(t, "9223372036854775807");
    CHECK_EQ(floe_time_iso(t, sizeof t, INT64_MIN, FLOE_TIME_DATE, false), -1);
}

/* floe_grow: doubling (at least 16, at least what is needed), contents
 * kept, and on an impossible size the array stays as it was. */
static void grow_doubles_and_fails_cleanly(void)
{
    int64_t *v = NULL;
    size_t cap = 0;
    CHECK_EQ(floe_grow(&v, &cap, 0, sizeof *v), 0);
    CHECK(v != NULL);
    CHECK_EQ(cap, 16);
    for (size_t i = 0; i < 100; i++) {
        CHECK_EQ(floe_grow(&v, &cap, i + 1, sizeof *v), 0);
        v[i] = (int64_t)i * 3;
    }
    CHECK_EQ(cap, 128);
    CHECK_EQ(floe_grow(&v, &cap, 1000, sizeof *v), 0);
    CHECK_EQ(cap, 1000);
    CHECK_EQ(floe_grow(&v, &cap, 1001, sizeof *v), 0);
    CHECK_EQ(cap, 2000);
    int64_t *before = v;
    CHECK_EQ(floe_grow(&v, &cap, SIZE_MAX / 4, sizeof *v), -1);
    CHECK(v == before);
    CHECK_EQ(cap, 2000);
    int sum_ok = 1;
    for (size_t i = 0; i < 100; i++) sum_ok &= v[i] == (int64_t)i * 3;
    CHECK(sum_ok);
    free(v);
}

static int cmp_int(const void *key, const void *elem)
{
    int a = *(const int *)key, b = *(const int *)elem;
    return (a > b) - (a < b);
}

/* floe_lower_bound: where a key is, or would go, in a sorted array
 * (duplicates: the first of them), empty arrays included. */
static void lower_bound_finds_the_place(void)
{
    const int v[] = {1, 3, 3, 3, 7, 9};
    const struct {
        int key;
        size_t at;
    } cases[] = {{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 4}, {7, 4}, {8, 5}, {9, 5}, {10, 6}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_EQ(floe_lower_bound(&cases[i].key, v, 6, sizeof v[0], cmp_int), cases[i].at);
    int k = 5;
    CHECK_EQ(floe_lower_bound(&k, v, 0, sizeof v[0], cmp_int), 0);
    CHECK_EQ(floe_lower_bound(&k, v, 1, sizeof v[0], cmp_int), 1);
}

TEST_MAIN(RUN(crc32c_known_vector); RUN(crc32c_paths_agree); RUN(crc32c_long_buffers_agree);
          RUN(murmur3_iceberg_vectors); RUN(varint_round_trips); RUN(varint_rejects_bad_input);
          RUN(buf_grows_and_encodes); RUN(buf_reserve_settles); RUN(arena_allocates_and_caps);
          RUN(sizes_parse); RUN(durations_parse); RUN(ints_and_bools_parse);
          RUN(errors_carry_context); RUN(clocks_move_forward); RUN(times_format_iso);
          RUN(grow_doubles_and_fails_cleanly); RUN(lower_bound_finds_the_place))
