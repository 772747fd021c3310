/* One record through a converter, for unit tests (conv_put.h). */
#include "conv_put.h"

int floe_test_conv_put(floe_conv_t *c, int64_t off, const char *key, const char *value)
{
    floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .offset = off, .last = off, .timestamp = 1000};
    m.key = floe_slice_str(key);
    m.key_null = key == NULL;
    m.value = floe_slice_str(value);
    m.value_null = value == NULL;
    floe_conv_stage_t st;
    floe_err_t e;
    return floe_conv_record(c, 0, &m, &st, &e);
}
