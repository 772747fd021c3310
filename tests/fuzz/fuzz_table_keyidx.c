/* libFuzzer target: the key index file decoder (table/keyidx.h) on
 * arbitrary bytes.  The checksum is fixed up first (the first byte says
 * whether), so the fuzzer reaches the fields behind it.  Whatever the
 * input: an error is FLOE_ECORRUPT or FLOE_ENOMEM with a message; an
 * index that decodes encodes to the same number of keys and decodes
 * again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/keyidx.h"
#include "util/crc32c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    bool fix = data[0] & 1;
    size_t n = size - 1;
    uint8_t *p = malloc(n ? n : 1);
    if (!p) return 0;
    memcpy(p, data + 1, n);
    if (fix && n >= 4) {
        uint32_t c = floe_crc32c(0, p, n - 4);
        memcpy(p + n - 4, &c, 4); /* little-endian hosts */
    }
    floe_err_t e;
    e.msg[0] = 0;
    floe_tkeyidx_t *x = floe_tkeyidx_decode(p, n, &e);
    if (!x) {
        if ((e.code != FLOE_ECORRUPT && e.code != FLOE_ENOMEM) || !e.msg[0]) abort();
    } else {
        floe_buf_t b = FLOE_BUF_INIT;
        if (floe_tkeyidx_encode(x, &b) == 0) {
            floe_tkeyidx_t *y = floe_tkeyidx_decode(b.data, b.len, &e);
            if (!y || floe_tkeyidx_count(y) != floe_tkeyidx_count(x) ||
                floe_tkeyidx_snapshot(y) != floe_tkeyidx_snapshot(x))
                abort();
            floe_tkeyidx_free(y);
        }
        floe_buf_free(&b);
        floe_tkeyidx_free(x);
    }
    free(p);
    return 0;
}
