/* libFuzzer target: the size and duration parsers on arbitrary strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t sz;
    int64_t d;
    floe_err_t e;
    if (floe_parse_size(s, &sz, &e) < 0 && e.msg[0] == '\0') abort();
    if (floe_parse_duration_ms(s, &d, &e) == 0 && d < 0) abort();
    if (floe_parse_duration_us(s, &d, &e) == 0 && d < 0) abort();
    free(s);
    return 0;
}
