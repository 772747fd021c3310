/* libFuzzer target: the table engine's messages from stored batches
 * (table/source_batches.h) on arbitrary bytes.  Byte 0 picks the fetched
 * offset (0..31) and, when odd, has the CRC of each batch the input holds
 * fixed up first, so that the fuzzer gets past it.  Every message must lie
 * in the input, come in offset order at or past the fetched offset, and
 * have readable headers; the walk must end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log/batch.h"
#include "table/source_batches.h"

static bool inside(floe_slice_t s, const uint8_t *p, size_t n, const floe_buf_t *scratch)
{
    if (!s.len) return true;
    return (s.ptr >= p && s.ptr + s.len <= p + n) ||
           (scratch->data && s.ptr >= scratch->data &&
            s.ptr + s.len <= scratch->data + scratch->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    size_t n = size - 1;
    uint8_t *p = malloc(n ? n : 1);
    memcpy(p, data + 1, n);
    floe_batch_hdr_t h;
    floe_err_t he;
    for (size_t off = 0;
         (mode & 1) && off < n && floe_batch_decode_hdr(p + off, n - off, &h, &he) == 0 &&
         floe_batch_size(&h) <= n - off;
         off += floe_batch_size(&h))
        floe_batch_update_crc(p + off, floe_batch_size(&h)); /* past the CRC check */
    int64_t from = mode >> 3, last = from - 1;
    floe_tbatches_t d;
    floe_tbatches_init(&d);
    floe_tbatches_start(&d, p, n, from);
    floe_tmsg_t m;
    floe_err_t err;
    int rc, steps = 0;
    while ((rc = floe_tbatches_next(&d, &m, &err)) == 1) {
        if (++steps > 1 << 20) abort(); /* the walk must end */
        if (m.kind == FLOE_TMSG_RECORD) {
            if ((m.offset <= last && last < INT64_MAX) || m.offset < from || m.last != m.offset)
                abort();
            if (!inside(m.key, p, n, &d.scratch) || !inside(m.value, p, n, &d.scratch)) abort();
            floe_theaders_iter_t it;
            floe_theaders_iter_init(&it, &m.headers);
            floe_record_header_t h;
            size_t k = 0;
            while (floe_theaders_iter_next(&it, &h) == 1) k++;
            if (k != m.headers.count) abort(); /* validated by the decoder */
        } else if (m.kind == FLOE_TMSG_BAD) {
            if (!m.why || !inside(m.value, p, n, &d.scratch)) abort();
        } else if (m.kind != FLOE_TMSG_SKIP) {
            abort();
        }
        if (m.last > last) last = m.last;
    }
    if (rc < 0 && err.code != FLOE_ECORRUPT) abort();
    floe_tbatches_free(&d);
    free(p);
    return 0;
}
