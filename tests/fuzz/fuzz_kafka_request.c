/* libFuzzer target: the Kafka request decoder (header + any declared API
 * body) never reads past the input or crashes, memory stays within the
 * arena cap, and whatever it accepts re-encodes to bytes that decode and
 * re-encode identically. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/proto.h"
#include "kafka/proto_gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_arena_t a;
    floe_arena_init(&a, 4096, 16 * size + (1u << 16));
    floe_kreq_hdr_t h;
    const floe_kapi_t *api;
    void *body;
    floe_err_t err;
    if (floe_kreq_decode(data, size, &a, &h, &api, &body, &err) == 0 && api) {
        bool flex = floe_kapi_flexible(api, h.api_version);
        floe_buf_t b1 = FLOE_BUF_INIT, b2 = FLOE_BUF_INIT;
        if (floe_kproto_encode(api->req, h.api_version, flex, body, &b1, &err)) abort();
        void *again = floe_arena_alloc(&a, api->req->size);
        size_t used;
        if (again) {
            if (floe_kproto_decode(api->req, h.api_version, flex, b1.data, b1.len, &used, &a, again,
                                   &err) == 0) {
                if (used != b1.len) abort();
                if (floe_kproto_encode(api->req, h.api_version, flex, again, &b2, &err)) abort();
                if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len)) abort();
            } else if (err.code != FLOE_ENOMEM) {
                abort(); /* our own encoding must decode */
            }
        }
        floe_buf_free(&b1);
        floe_buf_free(&b2);
    }
    floe_arena_free(&a);
    return 0;
}
