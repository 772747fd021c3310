/* libFuzzer target: the RecordBatch v2 decoder on arbitrary bytes.
 * Iterates batches, decompresses (capped), walks every record and header,
 * validates; also feeds the raw input to each Kafka decompressor and to
 * each of the compression core's.  So that the fuzzer gets past the CRC,
 * an input whose first byte is odd has the CRC of each batch it contains
 * fixed up before parsing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log/batch.h"
#include "log/kcodec.h"
#include "util/compress.h"
#include "util/crc32c.h"

#define CAP (1u << 20)

static void walk(const uint8_t *p, size_t n, floe_buf_t *scratch)
{
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, p, n);
    const uint8_t *b;
    size_t len;
    floe_batch_hdr_t h;
    floe_err_t err;
    while (floe_batch_iter_next(&it, &b, &len, &h, &err) == 1) {
        if (len != floe_batch_size(&h) || b + len > p + n) abort();
        floe_slice_t recs;
        if (floe_batch_records(b, len, &h, scratch, CAP, &recs, &err) == 0) {
            if (recs.len > CAP && floe_batch_compression(&h) != 0) abort();
            floe_record_iter_t ri;
            floe_record_iter_init(&ri, &h, recs);
            floe_record_t r;
            while (floe_record_iter_next(&ri, &r, &err) == 1) {
                if (!r.key_null && r.key.ptr + r.key.len > recs.ptr + recs.len) abort();
                if (!r.value_null && r.value.ptr + r.value.len > recs.ptr + recs.len) abort();
                floe_header_iter_t hi;
                floe_header_iter_init(&hi, &r);
                floe_record_header_t hh;
                int k, nh = 0;
                while ((k = floe_header_iter_next(&hi, &hh)) == 1) nh++;
                if (k != 0 || nh != r.header_count) abort(); /* validated already */
            }
        }
        floe_batch_validate_records(b, len, &h, scratch, CAP, &err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    floe_buf_t scratch = FLOE_BUF_INIT, out = FLOE_BUF_INIT;
    uint8_t mode = data[0];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    if (mode & 1) {
        uint8_t *c = malloc(n ? n : 1);
        memcpy(c, p, n);
        size_t off = 0;
        while (off + FLOE_BATCH_HDR_SIZE <= n) {
            uint32_t bl = floe_rd_be32(c + off + 8);
            size_t sz = (size_t)bl + FLOE_BATCH_LOG_OVERHEAD;
            if (bl < FLOE_BATCH_HDR_SIZE - FLOE_BATCH_LOG_OVERHEAD || sz > n - off) break;
            floe_batch_update_crc(c + off, sz);
            off += sz;
        }
        walk(c, n, &scratch);
        free(c);
    } else {
        walk(p, n, &scratch);
    }
    /* each Kafka decompressor, and each of the core's, on the raw bytes */
    floe_compression_t codec = (floe_compression_t)(1 + (mode >> 1) % 4);
    floe_err_t err;
    if (floe_kcodec_decompress(codec, p, n, &out, CAP, &err) == 0 && out.len > CAP) abort();
    floe_buf_reset(&out);
    floe_codec_t core = (floe_codec_t)((mode >> 3) % FLOE_CODEC_COUNT);
    if (floe_decompress(NULL, core, p, n, &out, CAP, &err) == 0 && out.len > CAP) abort();
    floe_buf_free(&out);
    floe_buf_free(&scratch);
    return 0;
}
