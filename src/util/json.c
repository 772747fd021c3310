/* JSON string escaping (json.h). */
#include "util/json.h"

#include <stdint.h>
#include <string.h>

#include "util/utf8.h"

int floe_json_str(floe_buf_t *b, const void *data, size_t n)
{
    const uint8_t *p = data, *end = p + n;
    if (floe_buf_append_u8(b, '"')) return -1;
    while (p < end) {
        const uint8_t *run = p;
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p > run && floe_buf_append(b, run, (size_t)(p - run))) return -1;
        if (p == end) break;
        uint8_t c = *p;
        int rc;
        size_t k = 1;
        switch (c) {
        case '"': rc = floe_buf_append_str(b, "\\\""); break;
        case '\\': rc = floe_buf_append_str(b, "\\\\"); break;
        case '\n': rc = floe_buf_append_str(b, "\\n"); break;
        case '\r': rc = floe_buf_append_str(b, "\\r"); break;
        case '\t': rc = floe_buf_append_str(b, "\\t"); break;
        default:
            if (c < 0x20) {
                rc = floe_buf_printf(b, "\\u%04x", c);
            } else if ((k = floe_utf8_seq(p, end)) > 0) {
                rc = floe_buf_append(b, p, k);
            } else {
                k = 1;
                rc = floe_buf_append_str(b, "\\ufffd");
            }
        }
        if (rc) return -1;
        p += k;
    }
    return floe_buf_append_u8(b, '"');
}

int floe_json_cstr(floe_buf_t *b, const char *s)
{
    return s ? floe_json_str(b, s, strlen(s)) : floe_buf_append_str(b, "null");
}
