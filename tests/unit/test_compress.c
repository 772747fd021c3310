#include <stdlib.h>
#include <zstd.h>

#include "util/compress.h"
#include "test.h"

/* Every codec round-trips compressible and random data, both through the
 * exact-size and the capped unknown-size decoders; truncated input fails. */
static void codecs_round_trip(void)
{
    size_t n = 200000;
    uint8_t *src = malloc(n);
    uint32_t x = 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245 + 12345;
        src[i] = i < n / 2 ? (uint8_t)("abcabcabd"[i % 9]) : (uint8_t)(x >> 16);
    }
    floe_codec_ctx_t *ctx = floe_codec_ctx_new(3);
    for (int c = 0; c < FLOE_CODEC_COUNT; c++) {
        floe_buf_t z = FLOE_BUF_INIT, back = FLOE_BUF_INIT;
        floe_err_t err;
        CHECK_EQ(floe_compress(ctx, (floe_codec_t)c, src, n, &z, &err), 0);
        uint8_t *dst = malloc(n);
        CHECK_EQ(floe_decompress_exact(ctx, (floe_codec_t)c, z.data, z.len, dst, n, &err), 0);
        CHECK(memcmp(dst, src, n) == 0);
        CHECK_EQ(floe_decompress(ctx, (floe_codec_t)c, z.data, z.len, &back, n, &err), 0);
        CHECK_EQ(back.len, n);
        CHECK(back.len == n && memcmp(back.data, src, n) == 0);
        if (c != FLOE_CODEC_NONE) {
            CHECK(floe_decompress_exact(ctx, (floe_codec_t)c, z.data, z.len / 2, dst, n, &err) < 0);
            back.len = 0;
            CHECK(floe_decompress(ctx, (floe_codec_t)c, z.data, z.len, &back, n / 2, &err) < 0);
        }
        floe_codec_t p;
        CHECK_EQ(floe_codec_parse(floe_codec_name((floe_codec_t)c), &p), 0);
        CHECK_EQ(p, c);
        free(dst);
        floe_buf_free(&z);
        floe_buf_free(&back);
    }
    floe_codec_ctx_free(ctx);
    free(src);
}

/* Decoding of unknown size stops at the cap for every codec: FLOE_ERANGE,
 * out as it was, and the buffer not grown far past the cap. */
static void caps_hold_for_every_codec(void)
{
    size_t n = 1u << 20;
    uint8_t *zeros = calloc(1, n);
    for (int c = 0; c < FLOE_CODEC_COUNT; c++) {
        floe_buf_t z = FLOE_BUF_INIT, o = FLOE_BUF_INIT;
        floe_err_t err;
        CHECK_EQ(floe_compress(NULL, (floe_codec_t)c, zeros, n, &z, &err), 0);
        CHECK_EQ(floe_decompress(NULL, (floe_codec_t)c, z.data, z.len, &o, n - 1, &err), -1);
        if (c == FLOE_CODEC_LZ4_RAW) /* no size anywhere: corrupt or too large */
            CHECK_EQ(err.code, FLOE_ECORRUPT);
        else
            CHECK_EQ(err.code, FLOE_ERANGE);
        CHECK_EQ(o.len, 0);
        CHECK(o.cap <= n);
        CHECK_EQ(floe_buf_append(&o, "keep", 4), 0);
        CHECK_EQ(floe_decompress(NULL, (floe_codec_t)c, z.data, z.len, &o, n, &err), 0);
        CHECK_EQ(o.len, n + 4);
        /* every truncation fails and leaves out as it was, or (a prefix
         * that is complete by itself) yields no more than the whole */
        for (size_t k = 0; c != FLOE_CODEC_NONE && k < z.len; k += 1 + z.len / 40) {
            o.len = 4;
            int rc = floe_decompress(NULL, (floe_codec_t)c, z.data, k, &o, n, &err);
            if (rc == 0) CHECK(o.len <= n + 4);
            else
                CHECK_EQ(o.len, 4);
        }
        floe_buf_free(&z);
        floe_buf_free(&o);
    }
    /* a zstd header that announces more than the cap: refused before any
     * allocation */
    floe_buf_t z = FLOE_BUF_INIT, o = FLOE_BUF_INIT;
    floe_err_t err;
    CHECK_EQ(floe_compress(NULL, FLOE_CODEC_ZSTD, zeros, n, &z, &err), 0);
    CHECK_EQ(floe_decompress(NULL, FLOE_CODEC_ZSTD, z.data, z.len, &o, 1000, &err), -1);
    CHECK_EQ(err.code, FLOE_ERANGE);
    CHECK(o.cap == 0);
    floe_buf_free(&z);
    floe_buf_free(&o);
    free(zeros);
}

/* Streams written in pieces (gzip members, zstd and lz4 frames back to
 * back, as Kafka clients may send them) decode whole; empty data
 * round-trips through the exact decoder. */
static void concatenated_streams_and_empty_blocks(void)
{
    floe_codec_t multi[] = {FLOE_CODEC_GZIP, FLOE_CODEC_ZSTD, FLOE_CODEC_LZ4_FRAME};
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++) {
        floe_buf_t z = FLOE_BUF_INIT, o = FLOE_BUF_INIT;
        floe_err_t err;
        CHECK_EQ(floe_compress(NULL, multi[i], "first half, ", 12, &z, &err), 0);
        CHECK_EQ(floe_compress(NULL, multi[i], "second half", 11, &z, &err), 0);
        CHECK_EQ(floe_decompress(NULL, multi[i], z.data, z.len, &o, 100, &err), 0);
        CHECK(o.len == 23 && memcmp(o.data, "first half, second half", 23) == 0);
        floe_buf_free(&z);
        floe_buf_free(&o);
    }
    for (int c = 0; c < FLOE_CODEC_COUNT; c++) {
        floe_buf_t z = FLOE_BUF_INIT;
        floe_err_t err;
        uint8_t dst[1];
        CHECK_EQ(floe_compress(NULL, (floe_codec_t)c, "", 0, &z, &err), 0);
        CHECK_EQ(floe_decompress_exact(NULL, (floe_codec_t)c, z.data, z.len, dst, 0, &err), 0);
        floe_buf_free(&z);
    }
    /* garbage is refused by every decoder */
    uint8_t junk[64];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 37 + 5);
    for (int c = 1; c < FLOE_CODEC_COUNT; c++) {
        floe_buf_t o = FLOE_BUF_INIT;
        floe_err_t err;
        CHECK_EQ(floe_decompress(NULL, (floe_codec_t)c, junk, sizeof junk, &o, 1 << 20, &err), -1);
        CHECK_EQ(o.len, 0);
        floe_buf_free(&o);
    }
}

/* zstd frames that do not state their size take the streaming path: they
 * decode up to exactly the cap, not a byte more. */
static void zstd_without_content_size_streams_to_the_cap(void)
{
    size_t n = 700000;
    uint8_t *src = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (uint8_t)("floe-zstd-"[i % 10] + (i >> 16));
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
    size_t bound = ZSTD_compressBound(n);
    uint8_t *z = malloc(bound);
    size_t zn = ZSTD_compress2(cc, z, bound, src, n);
    CHECK(!ZSTD_isError(zn));
    CHECK(ZSTD_getFrameContentSize(z, zn) == ZSTD_CONTENTSIZE_UNKNOWN);
    floe_buf_t o = FLOE_BUF_INIT;
    floe_err_t err;
    CHECK_EQ(floe_decompress(NULL, FLOE_CODEC_ZSTD, z, zn, &o, n, &err), 0);
    CHECK(o.len == n && memcmp(o.data, src, n) == 0);
    floe_buf_reset(&o);
    CHECK_EQ(floe_decompress(NULL, FLOE_CODEC_ZSTD, z, zn, &o, n - 1, &err), -1);
    CHECK_EQ(err.code, FLOE_ERANGE);
    CHECK_EQ(o.len, 0);
    floe_buf_reset(&o);
    CHECK_EQ(floe_decompress(NULL, FLOE_CODEC_ZSTD, z, zn - 1, &o, n, &err), -1);
    CHECK_EQ(o.len, 0);
    floe_buf_free(&o);
    ZSTD_freeCCtx(cc);
    free(z);
    free(src);
}

TEST_MAIN(RUN(codecs_round_trip); RUN(caps_hold_for_every_codec);
          RUN(concatenated_streams_and_empty_blocks);
          RUN(zstd_without_content_size_streams_to_the_cap))
