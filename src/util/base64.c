#include "util/base64.h"

static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int floe_base64_encode(floe_buf_t *out, const void *data, size_t n)
{
    const uint8_t *p = data;
    if (floe_buf_reserve(out, (n + 2) / 3 * 4)) return -1;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], i + 1 < n ? tab[(v >> 6) & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        if (floe_buf_append(out, q, 4)) return -1;
    }
    return 0;
}

static int val(char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

int floe_base64_decode(floe_buf_t *out, const char *s, size_t n)
{
    if (n % 4) return -1;
    if (floe_buf_reserve(out, n / 4 * 3)) return -1;
    for (size_t i = 0; i < n; i += 4) {
        int a = val(s[i]), b = val(s[i + 1]), c = val(s[i + 2]), d = val(s[i + 3]);
        bool last = i + 4 == n;
        if (a < 0 || b < 0) return -1;
        if (c < 0 && !(last && s[i + 2] == '=' && s[i + 3] == '=')) return -1;
        if (d < 0 && !(last && s[i + 3] == '=')) return -1;
        uint8_t o[3] = {(uint8_t)(a << 2 | b >> 4), (uint8_t)((b & 15) << 4 | (c < 0 ? 0 : c >> 2)),
                        (uint8_t)((c < 0 ? 0 : (c & 3) << 6) | (d < 0 ? 0 : d))};
        if (floe_buf_append(out, o, c < 0 ? 1 : d < 0 ? 2 : 3)) return -1;
    }
    return 0;
}
