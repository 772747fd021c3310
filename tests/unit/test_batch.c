/* RecordBatch v2 codec: builder round trips with every codec, header and
 * CRC checks, multi-batch iteration errors, in-place patches, record and
 * header decoding of hand-made bad bytes, decompression caps, and the
 * snappy-java framing. */
#include <stdint.h>
#include <stdlib.h>

#include "log/batch.h"
#include "log/kcodec.h"
#include "test.h"
#include "util/crc32c.h"
#include "util/varint.h"

static const int codecs[] = {FLOE_COMPRESSION_NONE, FLOE_COMPRESSION_GZIP, FLOE_COMPRESSION_SNAPPY,
                             FLOE_COMPRESSION_LZ4, FLOE_COMPRESSION_ZSTD};

/* A batch of n records: key "k<i>" (null for i%7==3), value of i%50*20
 * bytes (null for i%11==5), headers h0..h(i%3) with a null value on h1. */
static void build(floe_buf_t *out, int codec, int n, int64_t ts0)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = codec;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    char key[32], val[1000];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "k%d", i);
        size_t vl = (size_t)(i % 50) * 20;
        for (size_t j = 0; j < vl; j++) val[j] = (char)('a' + (i + j) % 26);
        floe_slice_t k = floe_slice_str(key), v = floe_slice(val, vl);
        floe_record_header_t hs[3];
        int nh = i % 3;
        for (int j = 0; j < nh; j++) {
            hs[j].key = floe_slice_str(j == 0 ? "h0" : "h1");
            hs[j].value = floe_slice_str(j == 0 ? "v0" : "");
            hs[j].value_null = j == 1;
        }
        floe_err_t err;
        int rc = floe_batch_builder_add(b, ts0 + (i % 4 == 2 ? -5 : i), i % 7 == 3 ? NULL : &k,
                                        i % 11 == 5 ? NULL : &v, hs, (size_t)nh, &err);
        CHECK_EQ(rc, 0);
    }
    CHECK_EQ(floe_batch_builder_count(b), (size_t)n);
    floe_err_t err;
    CHECK_EQ(floe_batch_builder_finish(b, out, &err), 0);
    floe_batch_builder_free(b);
}

static void check_records(const uint8_t *p, size_t len, int n, int64_t ts0, int64_t base)
{
    floe_batch_hdr_t h;
    floe_err_t err;
    CHECK_EQ(floe_batch_parse_hdr(p, len, &h, &err), 0);
    CHECK_EQ(h.record_count, n);
    CHECK_EQ(h.last_offset_delta, n - 1);
    CHECK_EQ(h.base_offset, base);
    floe_buf_t scratch = FLOE_BUF_INIT;
    floe_slice_t recs;
    CHECK_EQ(floe_batch_records(p, len, &h, &scratch, 0, &recs, &err), 0);
    floe_record_iter_t it;
    floe_record_iter_init(&it, &h, recs);
    floe_record_t r;
    int i = 0, rc;
    char key[32];
    while ((rc = floe_record_iter_next(&it, &r, &err)) == 1) {
        CHECK_EQ(r.offset_delta, i);
        CHECK_EQ(r.offset, base + i);
        CHECK_EQ(r.timestamp, ts0 + (i % 4 == 2 ? -5 : i));
        if (i % 7 == 3) {
            CHECK(r.key_null);
        } else {
            snprintf(key, sizeof key, "k%d", i);
            CHECK(!r.key_null && floe_slice_eq(r.key, floe_slice_str(key)));
        }
        if (i % 11 == 5) {
            CHECK(r.value_null);
        } else {
            CHECK(!r.value_null);
            CHECK_EQ(r.value.len, (size_t)(i % 50) * 20);
            if (r.value.len)
                CHECK_EQ(r.value.ptr[r.value.len - 1], 'a' + (i + r.value.len - 1) % 26);
        }
        CHECK_EQ(r.header_count, i % 3);
        floe_header_iter_t hi;
        floe_header_iter_init(&hi, &r);
        floe_record_header_t hh;
        int j = 0;
        while (floe_header_iter_next(&hi, &hh) == 1) {
            CHECK(floe_slice_eq(hh.key, floe_slice_str(j == 0 ? "h0" : "h1")));
            if (j == 0) CHECK(!hh.value_null && floe_slice_eq(hh.value, floe_slice_str("v0")));
            else
                CHECK(hh.value_null);
            j++;
        }
        CHECK_EQ(j, i % 3);
        i++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(i, n);
    CHECK_EQ(floe_batch_validate_records(p, len, &h, &scratch, 0, &err), 0);
    floe_buf_free(&scratch);
}

static void builder_roundtrip_every_codec(void)
{
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        floe_buf_t out = FLOE_BUF_INIT;
        build(&out, codecs[c], 300, 1700000000000);
        floe_batch_hdr_t h;
        floe_err_t err;
        CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
        CHECK_EQ(floe_batch_compression(&h), codecs[c]);
        CHECK_EQ(h.base_timestamp, 1700000000000);
        CHECK_EQ(h.max_timestamp, 1700000000000 + 299);
        CHECK_EQ(h.producer_id, -1);
        CHECK_EQ(h.base_sequence, -1);
        CHECK_EQ(floe_batch_size(&h), out.len);
        check_records(out.data, out.len, 300, 1700000000000, 0);
        /* patch the base offset: outside the CRC, still valid */
        floe_batch_set_base_offset(out.data, 12345);
        check_records(out.data, out.len, 300, 1700000000000, 12345);
        floe_buf_free(&out);
    }
}

/* A single known batch: every header field at its documented place. */
static void header_layout(void)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.base_offset = 0x0102030405060708;
    o.producer_id = 77;
    o.producer_epoch = 3;
    o.base_sequence = 10;
    o.partition_leader_epoch = 9;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_slice_t v = floe_slice_str("hello");
    floe_err_t err;
    CHECK_EQ(floe_batch_builder_add(b, 1000, NULL, &v, NULL, 0, &err), 0);
    CHECK_EQ(floe_batch_builder_add(b, 1002, NULL, &v, NULL, 0, &err), 0);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_batch_builder_finish(b, &out, &err), 0);
    const uint8_t *p = out.data;
    CHECK_EQ(floe_rd_be64(p), 0x0102030405060708ull);
    CHECK_EQ(floe_rd_be32(p + 8), out.len - 12);
    CHECK_EQ(floe_rd_be32(p + 12), 9);
    CHECK_EQ(p[16], 2);
    CHECK_EQ_U64(floe_rd_be32(p + 17), floe_crc32c(0, p + 21, out.len - 21));
    CHECK_EQ(floe_rd_be16(p + 21), 0);
    CHECK_EQ(floe_rd_be32(p + 23), 1);
    CHECK_EQ(floe_rd_be64(p + 27), 1000);
    CHECK_EQ(floe_rd_be64(p + 35), 1002);
    CHECK_EQ(floe_rd_be64(p + 43), 77);
    CHECK_EQ(floe_rd_be16(p + 51), 3);
    CHECK_EQ(floe_rd_be32(p + 53), 10);
    CHECK_EQ(floe_rd_be32(p + 57), 2);
    /* first record: length, attributes 0, ts delta 0, offset delta 0,
     * key -1 (zigzag 1), value len 5 (zigzag 10), "hello", 0 headers */
    const uint8_t rec[] = {0, 0, 0, 1, 10, 'h', 'e', 'l', 'l', 'o', 0};
    CHECK_EQ(p[61], sizeof rec * 2); /* zigzag of the length 11 */
    CHECK(memcmp(p + 62, rec, sizeof rec) == 0);
    floe_batch_hdr_t h;
    CHECK_EQ(floe_batch_parse_hdr(p, out.len, &h, &err), 0);
    CHECK_EQ(floe_batch_last_sequence(&h), 11);
    floe_buf_free(&out);
    floe_batch_builder_free(b);
}

static void sequence_wraps(void)
{
    floe_batch_hdr_t h;
    memset(&h, 0, sizeof h);
    h.base_sequence = INT32_MAX - 1;
    h.last_offset_delta = 3;
    CHECK_EQ(floe_batch_last_sequence(&h), 1);
    h.base_sequence = 5;
    CHECK_EQ(floe_batch_last_sequence(&h), 8);
}

static void crc_and_magic_rejected(void)
{
    floe_buf_t out = FLOE_BUF_INIT;
    build(&out, FLOE_COMPRESSION_NONE, 5, 1);
    floe_batch_hdr_t h;
    floe_err_t err;
    for (size_t i = FLOE_BATCH_CRC_START; i < out.len; i += 7) {
        out.data[i] ^= 0x40;
        CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), -1);
        CHECK_EQ(err.code, FLOE_ECORRUPT);
        out.data[i] ^= 0x40;
    }
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
    out.data[16] = 1;
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), -1);
    CHECK(strstr(err.msg, "magic") != NULL);
    out.data[16] = 2;
    for (size_t n = 0; n < out.len; n++) {
        CHECK_EQ(floe_batch_parse_hdr(out.data, n, &h, &err), -1);
        CHECK_EQ(err.code, FLOE_ETRUNC);
    }
    /* batch_length below the header size */
    floe_wr_be32(out.data + 8, 10);
    CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), -1);
    CHECK_EQ(err.code, FLOE_ECORRUPT);
    floe_buf_free(&out);
}

static void iterate_many_batches(void)
{
    floe_buf_t all = FLOE_BUF_INIT;
    for (int i = 0; i < 5; i++) build(&all, codecs[i], 10 + i, 100 * i);
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, all.data, all.len);
    const uint8_t *b;
    size_t len, total = 0;
    floe_batch_hdr_t h;
    floe_err_t err;
    int n = 0, rc;
    while ((rc = floe_batch_iter_next(&it, &b, &len, &h, &err)) == 1) {
        CHECK_EQ(h.record_count, 10 + n);
        CHECK_EQ(floe_batch_compression(&h), codecs[n]);
        check_records(b, len, 10 + n, 100 * n, 0);
        total += len;
        n++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(n, 5);
    CHECK_EQ(total, all.len);
    /* every truncation of the buffer is an error unless it falls exactly
     * between batches */
    for (size_t cut = 1; cut < all.len; cut += 13) {
        floe_batch_iter_init(&it, all.data, cut);
        size_t seen = 0;
        while ((rc = floe_batch_iter_next(&it, &b, &len, &h, &err)) == 1) seen += len;
        if (seen == cut) CHECK_EQ(rc, 0);
        else
            CHECK_EQ(rc, -1);
    }
    /* trailing garbage */
    floe_buf_append(&all, "garbage!", 8);
    floe_batch_iter_init(&it, all.data, all.len);
    n = 0;
    while ((rc = floe_batch_iter_next(&it, &b, &len, &h, &err)) == 1) n++;
    CHECK_EQ(rc, -1);
    CHECK_EQ(n, 5);
    CHECK(strstr(err.msg, "batch at byte") != NULL);
    floe_buf_free(&all);
}

static void log_append_time_patch(void)
{
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        floe_buf_t out = FLOE_BUF_INIT;
        build(&out, codecs[c], 20, 5000);
        floe_batch_set_log_append_time(out.data, out.len, 99999);
        floe_batch_hdr_t h;
        floe_err_t err;
        CHECK_EQ(floe_batch_parse_hdr(out.data, out.len, &h, &err), 0);
        CHECK(floe_batch_is_log_append_time(&h));
        CHECK_EQ(floe_batch_compression(&h), codecs[c]);
        CHECK_EQ(h.max_timestamp, 99999);
        floe_buf_t scratch = FLOE_BUF_INIT;
        floe_slice_t recs;
        CHECK_EQ(floe_batch_records(out.data, out.len, &h, &scratch, 0, &recs, &err), 0);
        floe_record_iter_t it;
        floe_record_iter_init(&it, &h, recs);
        floe_record_t r;
        int n = 0;
        while (floe_record_iter_next(&it, &r, &err) == 1) {
            CHECK_EQ(r.timestamp, 99999);
            n++;
        }
        CHECK_EQ(n, 20);
        floe_buf_free(&scratch);
        floe_buf_free(&out);
    }
}

/* Build a batch around hand-written record bytes (uncompressed). */
static void raw_batch(floe_buf_t *out, const uint8_t *recs, size_t n, int32_t count)
{
    floe_buf_reset(out);
    uint8_t h[FLOE_BATCH_HDR_SIZE] = {0};
    floe_wr_be32(h + 8, (uint32_t)(FLOE_BATCH_HDR_SIZE - 12 + n));
    h[16] = 2;
    floe_wr_be32(h + 23, (uint32_t)(count - 1));
    floe_wr_be64(h + 43, UINT64_MAX);
    h[51] = h[52] = 0xff;
    floe_wr_be32(h + 53, UINT32_MAX);
    floe_wr_be32(h + 57, (uint32_t)count);
    floe_buf_append(out, h, sizeof h);
    floe_buf_append(out, recs, n);
    floe_batch_update_crc(out->data, out->len);
}

static int validate(const floe_buf_t *b, floe_err_t *err)
{
    floe_batch_hdr_t h;
    if (floe_batch_parse_hdr(b->data, b->len, &h, err) != 0) return -2;
    floe_buf_t scratch = FLOE_BUF_INIT;
    int rc = floe_batch_validate_records(b->data, b->len, &h, &scratch, 0, err);
    floe_buf_free(&scratch);
    return rc;
}

static void malformed_records(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t err;
    /* good: len 7: attr, ts 0, off 0, key null, value len 1 'x', 0 hdrs */
    const uint8_t good[] = {14, 0, 0, 0, 1, 2, 'x', 0};
    raw_batch(&b, good, sizeof good, 1);
    CHECK_EQ(validate(&b, &err), 0);
    /* count says 2 */
    raw_batch(&b, good, sizeof good, 2);
    CHECK_EQ(validate(&b, &err), -1);
    /* trailing byte after the last record */
    uint8_t extra[sizeof good + 1];
    memcpy(extra, good, sizeof good);
    extra[sizeof good] = 0;
    raw_batch(&b, extra, sizeof extra, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* record length past the end */
    uint8_t longer[sizeof good];
    memcpy(longer, good, sizeof good);
    longer[0] = 40;
    raw_batch(&b, longer, sizeof longer, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* value length past the record */
    uint8_t vbad[sizeof good];
    memcpy(vbad, good, sizeof good);
    vbad[5] = 20;
    raw_batch(&b, vbad, sizeof vbad, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* key length -2 */
    uint8_t kbad[sizeof good];
    memcpy(kbad, good, sizeof good);
    kbad[4] = 3;
    raw_batch(&b, kbad, sizeof kbad, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* header with a null key */
    const uint8_t hnull[] = {18, 0, 0, 0, 1, 2, 'x', 2, 1, 1};
    raw_batch(&b, hnull, sizeof hnull, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* a header count that claims more than is there */
    const uint8_t hmany[] = {14, 0, 0, 0, 1, 2, 'x', 10};
    raw_batch(&b, hmany, sizeof hmany, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* offset delta 1 for the first record */
    const uint8_t odelta[] = {14, 0, 0, 2, 1, 2, 'x', 0};
    raw_batch(&b, odelta, sizeof odelta, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* an over-long varint */
    const uint8_t vlong[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0};
    raw_batch(&b, vlong, sizeof vlong, 1);
    CHECK_EQ(validate(&b, &err), -1);
    /* no records */
    raw_batch(&b, good, 0, 0);
    CHECK_EQ(validate(&b, &err), -1);
    /* every truncation of a good record body */
    for (size_t n = 0; n < sizeof good; n++) {
        raw_batch(&b, good, n, 1);
        CHECK_EQ(validate(&b, &err), -1);
    }
    floe_buf_free(&b);
}

static void decompress_cap_and_garbage(void)
{
    uint8_t *zeros = calloc(1, 1 << 20);
    for (int c = FLOE_COMPRESSION_GZIP; c <= FLOE_COMPRESSION_ZSTD; c++) {
        floe_buf_t z = FLOE_BUF_INIT, o = FLOE_BUF_INIT;
        floe_err_t err;
        CHECK_EQ(floe_kcodec_compress(c, 0, zeros, 1 << 20, &z, &err), 0);
        CHECK(z.len < (1 << 16));
        CHECK_EQ(floe_kcodec_decompress(c, z.data, z.len, &o, 1 << 20, &err), 0);
        CHECK_EQ(o.len, (size_t)1 << 20);
        floe_buf_reset(&o);
        CHECK_EQ(floe_kcodec_decompress(c, z.data, z.len, &o, (1 << 20) - 1, &err), -1);
        CHECK_EQ(err.code, FLOE_ENOMEM);
        CHECK_EQ(o.len, 0);
        CHECK(o.cap <= (1 << 20) + (1 << 18));
        /* every truncation fails cleanly (or, for a prefix that happens to be
         * complete, yields no more than the original) */
        for (size_t n = 0; n < z.len; n += 1 + z.len / 50) {
            floe_buf_reset(&o);
            int rc = floe_kcodec_decompress(c, z.data, n, &o, 1 << 20, &err);
            if (rc == 0) CHECK(o.len <= (size_t)1 << 20);
            else
                CHECK_EQ(o.len, 0);
        }
        /* garbage */
        uint8_t junk[64];
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 37 + c);
        floe_buf_reset(&o);
        CHECK_EQ(floe_kcodec_decompress(c, junk, sizeof junk, &o, 1 << 20, &err), -1);
        floe_buf_free(&z);
        floe_buf_free(&o);
    }
    free(zeros);
}

/* snappy-java's stream framing, the example from its documentation:
 * "foobar\n" in one block. */
static void snappy_java_framing(void)
{
    const uint8_t framed[] = {0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0x00, 0x00,
                              0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09,
                              0x07, 0x18, 0x66, 0x6f, 0x6f, 0x62, 0x61, 0x72, 0x0a};
    floe_buf_t o = FLOE_BUF_INIT;
    floe_err_t err;
    CHECK_EQ(floe_kcodec_decompress(FLOE_COMPRESSION_SNAPPY, framed, sizeof framed, &o, 100, &err),
             0);
    CHECK_EQ(o.len, 7);
    CHECK(o.len == 7 && memcmp(o.data, "foobar\n", 7) == 0);
    /* two blocks: our raw snappy of two halves, framed by hand */
    floe_buf_t f = FLOE_BUF_INIT, blk = FLOE_BUF_INIT;
    floe_buf_append(&f, framed, 16);
    const char *parts[] = {"first half, ", "second half"};
    for (int i = 0; i < 2; i++) {
        floe_buf_reset(&blk);
        CHECK_EQ(floe_kcodec_compress(FLOE_COMPRESSION_SNAPPY, 0, (const uint8_t *)parts[i],
                                      strlen(parts[i]), &blk, &err),
                 0);
        floe_buf_append_be32(&f, (uint32_t)blk.len);
        floe_buf_append(&f, blk.data, blk.len);
    }
    floe_buf_reset(&o);
    CHECK_EQ(floe_kcodec_decompress(FLOE_COMPRESSION_SNAPPY, f.data, f.len, &o, 100, &err), 0);
    CHECK(o.len == 23 && memcmp(o.data, "first half, second half", 23) == 0);
    /* a block length past the end */
    floe_buf_reset(&o);
    CHECK_EQ(floe_kcodec_decompress(FLOE_COMPRESSION_SNAPPY, f.data, f.len - 1, &o, 100, &err), -1);
    floe_buf_free(&f);
    floe_buf_free(&blk);
    floe_buf_free(&o);
}

static void names(void)
{
    CHECK_EQ(floe_compression_parse("zstd"), FLOE_COMPRESSION_ZSTD);
    CHECK_EQ(floe_compression_parse("LZ4"), FLOE_COMPRESSION_LZ4);
    CHECK_EQ(floe_compression_parse("uncompressed"), FLOE_COMPRESSION_NONE);
    CHECK_EQ(floe_compression_parse("producer"), -1);
    CHECK_STR(floe_compression_name(FLOE_COMPRESSION_SNAPPY), "snappy");
}

static void builder_reset_and_empty(void)
{
    floe_batch_builder_t *b = floe_batch_builder_new(NULL);
    floe_buf_t out = FLOE_BUF_INIT;
    floe_err_t err;
    CHECK_EQ(floe_batch_builder_finish(b, &out, &err), -1);
    floe_slice_t v = floe_slice_str("x");
    CHECK_EQ(floe_batch_builder_add(b, 1, NULL, &v, NULL, 0, &err), 0);
    CHECK_EQ(floe_batch_builder_finish(b, &out, &err), 0);
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = FLOE_COMPRESSION_ZSTD;
    floe_batch_builder_reset(b, &o);
    CHECK_EQ(floe_batch_builder_count(b), 0);
    CHECK_EQ(floe_batch_builder_add(b, 2, &v, &v, NULL, 0, &err), 0);
    CHECK_EQ(floe_batch_builder_finish(b, &out, &err), 0);
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, out.data, out.len);
    floe_batch_hdr_t h;
    CHECK_EQ(floe_batch_iter_next(&it, NULL, NULL, &h, &err), 1);
    CHECK_EQ(floe_batch_compression(&h), 0);
    CHECK_EQ(floe_batch_iter_next(&it, NULL, NULL, &h, &err), 1);
    CHECK_EQ(floe_batch_compression(&h), FLOE_COMPRESSION_ZSTD);
    CHECK_EQ(h.base_timestamp, 2);
    CHECK_EQ(floe_batch_iter_next(&it, NULL, NULL, &h, &err), 0);
    floe_buf_free(&out);
    floe_batch_builder_free(b);
}

TEST_MAIN(RUN(builder_roundtrip_every_codec); RUN(header_layout); RUN(sequence_wraps);
          RUN(crc_and_magic_rejected); RUN(iterate_many_batches); RUN(log_append_time_patch);
          RUN(malformed_records); RUN(decompress_cap_and_garbage); RUN(snappy_java_framing);
          RUN(names); RUN(builder_reset_and_empty))
