#include "hex.h"

#include <stdio.h>

size_t floe_test_unhex(const char *h, uint8_t *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        while (*h == ' ') h++;
        unsigned v;
        if (sscanf(h, "%2x", &v) != 1) break;
        out[n++] = (uint8_t)v;
    }
    return n;
}
