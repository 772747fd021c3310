/* The table engine's source messages from stored RecordBatch bytes
 * (table/source_batches.h): records from the fetched offset on, with
 * their headers; a transaction marker batch as one SKIP; a batch that does
 * not decompress, the undecodable rest of a batch and a batch that fails
 * its checks as BAD messages carrying their bytes; a damaged batch whose
 * header no longer says its offsets stops the fetch.  And a message's
 * headers read alike from a list and from RecordBatch bytes. */
#include <stdlib.h>

#include "log/batch.h"
#include "table/source_batches.h"
#include "test.h"

/* A batch at base of n records "v<base+i>" with key "k" and, on odd
 * records, one header "h" = "x", appended to out; returns its offset in
 * out. */
static size_t batch(floe_buf_t *out, int64_t base, int n, const char *codec, bool control)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.base_offset = base;
    o.compression = floe_compression_parse(codec);
    o.control = control;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_err_t e;
    for (int i = 0; i < n; i++) {
        char v[32];
        snprintf(v, sizeof v, "v%lld", (long long)(base + i));
        floe_slice_t k = floe_slice_str("k"), vs = floe_slice_str(v);
        floe_record_header_t h = {floe_slice_str("h"), floe_slice_str("x"), false};
        CHECK_EQ(
            floe_batch_builder_add(b, 1700000000000LL + base + i, &k, &vs, &h, (size_t)(i % 2), &e),
            0);
    }
    size_t at = out->len;
    CHECK_EQ(floe_batch_builder_finish(b, out, &e), 0);
    floe_batch_builder_free(b);
    return at;
}

static bool value_is(const floe_tmsg_t *m, const char *v)
{
    return m->value.len == strlen(v) && !memcmp(m->value.ptr, v, m->value.len);
}

static void records_from_the_fetched_offset(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    batch(&b, 10, 3, "none", false);
    batch(&b, 13, 3, "zstd", false);
    floe_tbatches_t d;
    floe_tbatches_init(&d);
    floe_tbatches_start(&d, b.data, b.len, 11);
    floe_tmsg_t m;
    floe_err_t e;
    for (int64_t off = 11; off < 16; off++) {
        CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
        CHECK_EQ(m.kind, FLOE_TMSG_RECORD);
        CHECK_EQ(m.offset, off);
        CHECK_EQ(m.last, off);
        CHECK_EQ(m.timestamp, 1700000000000LL + off);
        char v[32];
        snprintf(v, sizeof v, "v%lld", (long long)off);
        CHECK(value_is(&m, v));
        CHECK(!m.key_null && m.key.len == 1);
        CHECK_EQ(m.headers.count, (size_t)((off - (off < 13 ? 10 : 13)) % 2));
        floe_theaders_iter_t it;
        floe_theaders_iter_init(&it, &m.headers);
        floe_record_header_t h;
        for (size_t i = 0; i < m.headers.count; i++) {
            CHECK_EQ(floe_theaders_iter_next(&it, &h), 1);
            CHECK(h.key.len == 1 && h.key.ptr[0] == 'h' && h.value.ptr[0] == 'x');
        }
        CHECK_EQ(floe_theaders_iter_next(&it, &h), 0);
    }
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 0);
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 0);
    floe_tbatches_free(&d);
    floe_buf_free(&b);
}

static void markers_and_bad_bytes(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    batch(&b, 0, 2, "none", false);
    batch(&b, 2, 1, "none", true); /* a transaction marker */
    /* a batch whose compressed records are garbage, its CRC correct */
    size_t z = batch(&b, 3, 4, "zstd", false);
    size_t zlen = b.len - z;
    for (size_t i = FLOE_BATCH_HDR_SIZE; i < zlen; i++) b.data[z + i] ^= 0x5a;
    floe_batch_update_crc(b.data + z, zlen);
    /* a batch of 3 records that says it holds 2: its third does not decode */
    size_t r = batch(&b, 7, 3, "none", false);
    b.data[r + 60] = 2;
    floe_batch_update_crc(b.data + r, b.len - r);
    /* a batch whose bytes changed after its CRC was taken */
    size_t c = batch(&b, 10, 2, "none", false);
    size_t clen = b.len - c;
    b.data[b.len - 1] ^= 1;
    batch(&b, 12, 1, "none", false); /* never reached: a damaged batch ends the fetch */

    floe_tbatches_t d;
    floe_tbatches_init(&d);
    floe_tbatches_start(&d, b.data, b.len, 1);
    floe_tmsg_t m;
    floe_err_t e;
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_RECORD && m.offset == 1);
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_SKIP && m.offset == 2 && m.last == 2);
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_BAD && m.offset == 3 && m.last == 6);
    CHECK(m.value.ptr == b.data + z && m.value.len == zlen && m.key_null && m.why);
    CHECK_EQ(m.timestamp, 1700000000003LL);
    /* the records that decode, then the rest of their batch as bytes */
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_RECORD && m.offset == 7 && value_is(&m, "v7"));
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_RECORD && m.offset == 8);
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_BAD && m.offset == 9 && m.last == 9);
    CHECK(m.value.ptr == b.data + r);
    /* the damaged batch: its bytes, exactly its offsets, then the end */
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 1);
    CHECK(m.kind == FLOE_TMSG_BAD && m.offset == 10 && m.last == 11);
    CHECK(m.value.ptr == b.data + c && m.value.len == clen);
    CHECK(strstr(m.why, "CRC") != NULL || strstr(m.why, "crc") != NULL);
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), 0);

    /* a damaged batch whose header lost its magic: nothing to skip by */
    b.data[c + 16] = 7;
    floe_tbatches_start(&d, b.data + c, b.len - c, 10);
    CHECK_EQ(floe_tbatches_next(&d, &m, &e), -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    CHECK(strstr(e.msg, "stored batch unreadable") == e.msg);
    floe_tbatches_free(&d);
    floe_buf_free(&b);
}

static void headers_from_a_list(void)
{
    floe_record_header_t list[2] = {{floe_slice_str("a"), floe_slice_str("1"), false},
                                    {floe_slice_str("b"), floe_slice(NULL, 0), true}};
    floe_theaders_t h = {.count = 2, .list = list};
    floe_theaders_iter_t it;
    floe_theaders_iter_init(&it, &h);
    floe_record_header_t out;
    CHECK_EQ(floe_theaders_iter_next(&it, &out), 1);
    CHECK(out.key.ptr[0] == 'a' && out.value.ptr[0] == '1' && !out.value_null);
    CHECK_EQ(floe_theaders_iter_next(&it, &out), 1);
    CHECK(out.key.ptr[0] == 'b' && out.value_null);
    CHECK_EQ(floe_theaders_iter_next(&it, &out), 0);
    /* raw bytes holding fewer headers than counted */
    uint8_t raw[] = {2, 'a', 2, '1'};
    floe_theaders_t r = {.count = 2, .raw = floe_slice(raw, sizeof raw)};
    floe_theaders_iter_init(&it, &r);
    CHECK_EQ(floe_theaders_iter_next(&it, &out), 1);
    CHECK_EQ(floe_theaders_iter_next(&it, &out), -1);
}

TEST_MAIN(RUN(records_from_the_fetched_offset); RUN(markers_and_bad_bytes);
          RUN(headers_from_a_list))
