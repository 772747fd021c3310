/* The JSON lexer of the shredder: whitespace, strings (unescaped and
 * UTF-8 checked), keys, numbers (exact doubles) and skipping a value.  It
 * writes nothing into the rows buffer, so it can be fuzzed alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "table/json_int.h"
#include "util/utf8.h"

int js_syntax(sh_t *s, const char *what)
{
    return floe_err_set(s->err, FLOE_ECORRUPT, "invalid JSON at byte %zu: %s",
                        (size_t)(s->p - s->start), what);
}

int js_oom(sh_t *s)
{
    return floe_err_set(s->err, FLOE_ENOMEM, "out of memory shredding JSON");
}

/* ---- strings ---------------------------------------------------------- */

static int hex4(const uint8_t *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Unescape the string at s->p (just past the opening quote) onto out,
 * checking UTF-8.  Leaves s->p past the closing quote. */
int js_string_into(sh_t *s, floe_buf_t *out)
{
    /* the common case: printable ASCII up to the closing quote, one copy */
    const uint8_t *q = js_plain_run(s->p, s->end);
    if (q < s->end && *q == '"') {
        size_t n = (size_t)(q - s->p);
        size_t left = (size_t)(s->end - s->p);
        if (n <= 16 && left >= 16) { /* near the record's end: 16 bytes */
            if (out->cap - out->len < 17 && floe_buf_reserve(out, 17) < 0) return js_oom(s);
            memcpy(out->data + out->len, s->p, 16);
        } else if (n <= 64 && left >= 64) {
            /* short: copy a fixed 32 or 64 bytes (inline moves, no call);
             * the bytes past n land in spare capacity */
            if (out->cap - out->len < 65 && floe_buf_reserve(out, 65) < 0) return js_oom(s);
            memcpy(out->data + out->len, s->p, 32);
            if (n > 32) memcpy(out->data + out->len + 32, s->p + 32, 32);
        } else {
            if (floe_buf_reserve(out, n + 1) < 0) return js_oom(s); /* +1: never NULL */
            memcpy(out->data + out->len, s->p, n);
        }
        out->len += n;
        s->p = q + 1;
        return SH_OK;
    }
    /* the unescaped text is never longer than the raw text */
    q = s->p;
    while (q < s->end && *q != '"') q += (*q == '\\' && q + 1 < s->end) ? 2 : 1;
    if (q >= s->end) return js_syntax(s, "unterminated string");
    if (floe_buf_reserve(out, (size_t)(q - s->p) + 1) < 0) return js_oom(s); /* +1: never NULL */
    uint8_t *w = out->data + out->len;
    const uint8_t *p = s->p;
    for (;;) {
        const uint8_t *run = p;
        while (p < q && *p >= 0x20 && *p < 0x80 && *p != '\\') p++;
        memcpy(w, run, (size_t)(p - run));
        w += p - run;
        if (p == q) break;
        uint8_t c = *p;
        if (c < 0x20) {
            s->p = p;
            return js_syntax(s, "control character in string");
        }
        if (c >= 0x80) {
            size_t n = floe_utf8_seq(p, q);
            if (!n) {
                s->p = p;
                return js_syntax(s, "invalid UTF-8 in string");
            }
            memcpy(w, p, n);
            w += n;
            p += n;
            continue;
        }
        /* escape */
        if (p + 1 >= q) {
            s->p = p;
            return js_syntax(s, "bad escape");
        }
        c = p[1];
        p += 2;
        switch (c) {
        case '"': *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '/': *w++ = '/'; break;
        case 'b': *w++ = '\b'; break;
        case 'f': *w++ = '\f'; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case 't': *w++ = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (q - p < 4 || hex4(p, &cp) < 0) {
                s->p = p;
                return js_syntax(s, "bad \\u escape");
            }
            p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff) {
                s->p = p;
                return js_syntax(s, "lone low surrogate");
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (q - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) < 0 ||
                    lo < 0xdc00 || lo > 0xdfff) {
                    s->p = p;
                    return js_syntax(s, "lone high surrogate");
                }
                p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            /* 12 raw bytes (two escapes) always cover 4 UTF-8 bytes, 6 cover 3 */
            if (cp < 0x80) {
                *w++ = (uint8_t)cp;
            } else if (cp < 0x800) {
                *w++ = (uint8_t)(0xc0 | (cp >> 6));
                *w++ = (uint8_t)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                *w++ = (uint8_t)(0xe0 | (cp >> 12));
                *w++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
                *w++ = (uint8_t)(0x80 | (cp & 0x3f));
            } else {
                *w++ = (uint8_t)(0xf0 | (cp >> 18));
                *w++ = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
                *w++ = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
                *w++ = (uint8_t)(0x80 | (cp & 0x3f));
            }
            break;
        }
        default: s->p = p - 1; return js_syntax(s, "bad escape");
        }
    }
    out->len = (size_t)(w - out->data);
    s->p = q + 1;
    return SH_OK;
}

/* A key: a borrowed slice of the input when it has no escape (the common
 * case), else unescaped into s->key. */
int js_key(sh_t *s, floe_slice_t *k)
{
    if (s->p >= s->end || *s->p != '"') return js_syntax(s, "expected a key");
    s->p++;
    const uint8_t *b = s->p;
    s->p = js_plain_run(b, s->end);
    if (s->p < s->end && *s->p == '"') {
        *k = floe_slice(b, (size_t)(s->p - b));
        s->p++;
    } else {
        s->p = b;
        floe_buf_reset(&s->key);
        if (js_string_into(s, &s->key) < 0) return SH_ERR;
        *k = floe_buf_slice(&s->key);
    }
    js_ws(s);
    if (s->p >= s->end || *s->p != ':') return js_syntax(s, "expected ':'");
    s->p++;
    js_ws(s);
    return SH_OK;
}

/* ---- numbers ---------------------------------------------------------- */

static const double pow10tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Parse a JSON number.  *is_int when it has no fraction or exponent and fits
 * an int64.  Doubles are exact: the Clinger fast path when the digits fit
 * 2^53 and the power of ten is exact, else strtod. */
int js_number(sh_t *s, bool *is_int, int64_t *iv, double *dv)
{
    const uint8_t *b = s->p, *p = s->p;
    bool neg = false;
    if (p < s->end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= s->end || *p < '0' || *p > '9') return js_syntax(s, "bad number");
    uint64_t mant = 0;
    int digits = 0, dropped = 0;
    if (*p == '0') {
        p++;
    } else {
        while (p < s->end && *p >= '0' && *p <= '9') {
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                if (mant) digits++;
            } else {
                dropped++;
            }
            p++;
        }
    }
    int frac_digits = 0;
    bool frac = false, expo = false;
    if (p < s->end && *p == '.') {
        frac = true;
        p++;
        if (p >= s->end || *p < '0' || *p > '9') {
            s->p = p;
            return js_syntax(s, "bad number fraction");
        }
        while (p < s->end && *p >= '0' && *p <= '9') {
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                if (mant) digits++;
                frac_digits++;
            }
            p++;
        }
    }
    int e = 0;
    if (p < s->end && (*p == 'e' || *p == 'E')) {
        expo = true;
        p++;
        bool eneg = false;
        if (p < s->end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= s->end || *p < '0' || *p > '9') {
            s->p = p;
            return js_syntax(s, "bad number exponent");
        }
        while (p < s->end && *p >= '0' && *p <= '9') {
            if (e < 100000) e = e * 10 + (*p - '0');
            p++;
        }
        if (eneg) e = -e;
    }
    s->p = p;
    if (!frac && !expo && !dropped &&
        (mant <= (uint64_t)INT64_MAX || (neg && mant == (uint64_t)INT64_MAX + 1))) {
        *is_int = true;
        *iv = neg ? (int64_t)(0 - mant) : (int64_t)mant;
        return SH_OK;
    }
    *is_int = false;
    int e10 = e - frac_digits + dropped;
    if (!dropped && mant < (1ull << 53) && e10 >= -22 && e10 <= 22) {
        double d = (double)mant;
        d = e10 < 0 ? d / pow10tab[-e10] : d * pow10tab[e10];
        *dv = neg ? -d : d;
        return SH_OK;
    }
    char tmp[128];
    size_t n = (size_t)(p - b);
    char *heap = NULL, *t = tmp;
    if (n >= sizeof tmp) {
        if (n > 4096) return js_syntax(s, "number too long");
        t = heap = malloc(n + 1);
        if (!heap) return js_oom(s);
    }
    memcpy(t, b, n);
    t[n] = '\0';
    *dv = strtod(t, NULL);
    free(heap);
    if (!isfinite(*dv)) return js_syntax(s, "number out of double range");
    return SH_OK;
}

/* ---- skipping ------------------------------------------- */

static int skip_string(sh_t *s)
{
    /* validate as we would write: escapes and UTF-8 */
    floe_buf_reset(&s->key);
    return js_string_into(s, &s->key);
}

int js_skip_value(sh_t *s)
{
    if (s->p >= s->end) return js_syntax(s, "expected a value");
    switch (*s->p) {
    case '"': s->p++; return skip_string(s);
    case '{':
    case '[': {
        if (++s->depth > s->r->opts.max_depth)
            return floe_err_set(s->err, FLOE_ERANGE, "JSON nested deeper than %d",
                                s->r->opts.max_depth);
        uint8_t close = *s->p == '{' ? '}' : ']';
        bool obj = close == '}';
        s->p++;
        js_ws(s);
        if (s->p < s->end && *s->p == close) {
            s->p++;
            s->depth--;
            return SH_OK;
        }
        for (;;) {
            if (obj) {
                floe_slice_t k;
                if (js_key(s, &k) < 0) return SH_ERR;
            }
            if (js_skip_value(s) < 0) return SH_ERR;
            int k = js_next_item(s, close);
            if (k > 0) continue;
            if (k < 0) return SH_ERR;
            s->depth--;
            return SH_OK;
        }
    }
    case 't': return js_lit(s, "true", 4);
    case 'f': return js_lit(s, "false", 5);
    case 'n': return js_lit(s, "null", 4);
    default: {
        bool is_int;
        int64_t iv;
        double dv;
        return js_number(s, &is_int, &iv, &dv);
    }
    }
}
