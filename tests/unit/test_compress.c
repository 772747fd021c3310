#include <stdlib.h>

#include "format/compress.h"
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

TEST_MAIN(RUN(codecs_round_trip))
