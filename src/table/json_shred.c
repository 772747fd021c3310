/* JSON -> columns in one pass, no DOM.
 *
 * The scanner walks a record value and writes each scalar straight into its
 * leaf column with Dremel levels.  The shape guides it: a key it knows is a
 * pointer away (the next expected key is tried first, since records of one
 * topic mostly repeat their key order).  When the value needs a shape
 * change (a key never seen, a fraction in a long field), the attempt stops,
 * the row's writes are undone, the shape changes at the row boundary, and
 * the value is shredded again: shape changes are rare, rows are many. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "table/rows_int.h"
#include "table/tstamp.h"
#include "util/mem.h"
#include "util/utf8.h"

enum { SH_OK = 0, SH_ERR = -1, SH_EVOLVE = -2 };

typedef struct sh {
    floe_rows_t *r;
    const uint8_t *start, *p, *end;
    floe_err_t *err;
    int depth;
    /* the shape change an attempt asked for */
    floe_rnode_t *ev_parent; /* attach ev_sub under it ... */
    floe_rnode_t *ev_sub;
    floe_rnode_t *ev_widen; /* ... or widen this long node */
    floe_buf_t key;         /* unescaped key scratch */
} sh_t;

static int syntax(sh_t *s, const char *what)
{
    return floe_err_set(s->err, FLOE_ECORRUPT, "invalid JSON at byte %zu: %s",
                        (size_t)(s->p - s->start), what);
}

static int misfit(sh_t *s, const floe_rnode_t *n, const char *got)
{
    return floe_err_set(s->err, FLOE_EINVAL, "field '%s' is %s, value at byte %zu is %s", n->name,
                        floe_tkind_name(n->kind), (size_t)(s->p - s->start), got);
}

static int oom(sh_t *s)
{
    return floe_err_set(s->err, FLOE_ENOMEM, "out of memory shredding JSON");
}

static inline void ws(sh_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

/* The first byte of [p, end) that ends a plain string run: '"', '\\', a
 * control character or a byte >= 0x80.  Eight bytes at a time: a word
 * with none of them is skipped whole (the tests may flag a clean byte
 * after a real hit, never miss one, and the byte loop decides). */
static inline const uint8_t *plain_run(const uint8_t *p, const uint8_t *end)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    while (end - p >= 8) {
        uint64_t x, q, b;
        memcpy(&x, p, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        uint64_t hit =
            (x | ((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) & high;
        if (hit) break;
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) p++;
    return p;
}

static int lit(sh_t *s, const char *word, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return syntax(s, "unknown literal");
    s->p += n;
    return SH_OK;
}

/* After an item of an object or array: 1 when a ',' announces another,
 * 0 when `close` ends the container (consumed), else a syntax error. */
static int next_item(sh_t *s, uint8_t close)
{
    ws(s);
    if (s->p < s->end && *s->p == ',') {
        s->p++;
        ws(s);
        return 1;
    }
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return 0;
    }
    return syntax(s, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
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
static int string_into(sh_t *s, floe_buf_t *out)
{
    /* the common case: printable ASCII up to the closing quote, one copy */
    const uint8_t *q = plain_run(s->p, s->end);
    if (q < s->end && *q == '"') {
        size_t n = (size_t)(q - s->p);
        size_t left = (size_t)(s->end - s->p);
        if (n <= 16 && left >= 16) { /* near the record's end: 16 bytes */
            if (out->cap - out->len < 17 && floe_buf_reserve(out, 17) < 0) return oom(s);
            memcpy(out->data + out->len, s->p, 16);
        } else if (n <= 64 && left >= 64) {
            /* short: copy a fixed 32 or 64 bytes (inline moves, no call);
             * the bytes past n land in spare capacity */
            if (out->cap - out->len < 65 && floe_buf_reserve(out, 65) < 0) return oom(s);
            memcpy(out->data + out->len, s->p, 32);
            if (n > 32) memcpy(out->data + out->len + 32, s->p + 32, 32);
        } else {
            if (floe_buf_reserve(out, n + 1) < 0) return oom(s); /* +1: never NULL */
            memcpy(out->data + out->len, s->p, n);
        }
        out->len += n;
        s->p = q + 1;
        return SH_OK;
    }
    /* the unescaped text is never longer than the raw text */
    q = s->p;
    while (q < s->end && *q != '"') q += (*q == '\\' && q + 1 < s->end) ? 2 : 1;
    if (q >= s->end) return syntax(s, "unterminated string");
    if (floe_buf_reserve(out, (size_t)(q - s->p) + 1) < 0) return oom(s); /* +1: never NULL */
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
            return syntax(s, "control character in string");
        }
        if (c >= 0x80) {
            size_t n = floe_utf8_seq(p, q);
            if (!n) {
                s->p = p;
                return syntax(s, "invalid UTF-8 in string");
            }
            memcpy(w, p, n);
            w += n;
            p += n;
            continue;
        }
        /* escape */
        if (p + 1 >= q) {
            s->p = p;
            return syntax(s, "bad escape");
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
                return syntax(s, "bad \\u escape");
            }
            p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff) {
                s->p = p;
                return syntax(s, "lone low surrogate");
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (q - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) < 0 ||
                    lo < 0xdc00 || lo > 0xdfff) {
                    s->p = p;
                    return syntax(s, "lone high surrogate");
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
        default: s->p = p - 1; return syntax(s, "bad escape");
        }
    }
    out->len = (size_t)(w - out->data);
    s->p = q + 1;
    return SH_OK;
}

/* A key: a borrowed slice of the input when it has no escape (the common
 * case), else unescaped into s->key. */
static int key(sh_t *s, floe_slice_t *k)
{
    if (s->p >= s->end || *s->p != '"') return syntax(s, "expected a key");
    s->p++;
    const uint8_t *b = s->p;
    s->p = plain_run(b, s->end);
    if (s->p < s->end && *s->p == '"') {
        *k = floe_slice(b, (size_t)(s->p - b));
        s->p++;
    } else {
        s->p = b;
        floe_buf_reset(&s->key);
        if (string_into(s, &s->key) < 0) return SH_ERR;
        *k = floe_buf_slice(&s->key);
    }
    ws(s);
    if (s->p >= s->end || *s->p != ':') return syntax(s, "expected ':'");
    s->p++;
    ws(s);
    return SH_OK;
}

/* ---- numbers ---------------------------------------------------------- */

static const double pow10tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Parse a JSON number.  *is_int when it has no fraction or exponent and fits
 * an int64.  Doubles are exact: the Clinger fast path when the digits fit
 * 2^53 and the power of ten is exact, else strtod. */
static int number(sh_t *s, bool *is_int, int64_t *iv, double *dv)
{
    const uint8_t *b = s->p, *p = s->p;
    bool neg = false;
    if (p < s->end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= s->end || *p < '0' || *p > '9') return syntax(s, "bad number");
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
            return syntax(s, "bad number fraction");
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
            return syntax(s, "bad number exponent");
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
        if (n > 4096) return syntax(s, "number too long");
        t = heap = malloc(n + 1);
        if (!heap) return oom(s);
    }
    memcpy(t, b, n);
    t[n] = '\0';
    *dv = strtod(t, NULL);
    free(heap);
    if (!isfinite(*dv)) return syntax(s, "number out of double range");
    return SH_OK;
}

/* ---- skipping and inference ------------------------------------------- */

static int skip_value(sh_t *s);

static int skip_string(sh_t *s)
{
    /* validate as we would write: escapes and UTF-8 */
    floe_buf_reset(&s->key);
    return string_into(s, &s->key);
}

static int skip_value(sh_t *s)
{
    if (s->p >= s->end) return syntax(s, "expected a value");
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
        ws(s);
        if (s->p < s->end && *s->p == close) {
            s->p++;
            s->depth--;
            return SH_OK;
        }
        for (;;) {
            if (obj) {
                floe_slice_t k;
                if (key(s, &k) < 0) return SH_ERR;
            }
            if (skip_value(s) < 0) return SH_ERR;
            int k = next_item(s, close);
            if (k > 0) continue;
            if (k < 0) return SH_ERR;
            s->depth--;
            return SH_OK;
        }
    }
    case 't': return lit(s, "true", 4);
    case 'f': return lit(s, "false", 5);
    case 'n': return lit(s, "null", 4);
    default: {
        bool is_int;
        int64_t iv;
        double dv;
        return number(s, &is_int, &iv, &dv);
    }
    }
}

/* Merge inferred shape b into a (both owned, a may be NULL); returns the
 * merged tree or NULL with s->err set on a conflict (both freed then). */
static floe_rnode_t *merge(sh_t *s, floe_rnode_t *a, floe_rnode_t *b, int *failed)
{
    if (!a) return b;
    if (!b) return a;
    if (a->kind == b->kind && a->kind != FLOE_TK_STRUCT && a->kind != FLOE_TK_LIST) {
        floe_rnode_free(b);
        return a;
    }
    if ((a->kind == FLOE_TK_LONG && b->kind == FLOE_TK_DOUBLE) ||
        (a->kind == FLOE_TK_DOUBLE && b->kind == FLOE_TK_LONG)) {
        a->kind = FLOE_TK_DOUBLE;
        floe_rnode_free(b);
        return a;
    }
    /* timestamps mixed with other strings: all strings */
    if ((a->kind == FLOE_TK_STRING && b->kind == FLOE_TK_TIMESTAMPTZ) ||
        (a->kind == FLOE_TK_TIMESTAMPTZ && b->kind == FLOE_TK_STRING)) {
        a->kind = FLOE_TK_STRING;
        floe_rnode_free(b);
        return a;
    }
    if (a->kind == b->kind && a->kind == FLOE_TK_LIST) {
        floe_rnode_t *ea = a->nkids ? a->kids[0] : NULL, *eb = b->nkids ? b->kids[0] : NULL;
        a->nkids = b->nkids = 0;
        floe_rnode_free(b);
        floe_rnode_t *m = merge(s, ea, eb, failed);
        if (*failed) {
            floe_rnode_free(a);
            return NULL;
        }
        if (m && floe_rnode_add_kid(a, m) < 0) {
            floe_rnode_free(m);
            floe_rnode_free(a);
            *failed = 1;
            oom(s);
            return NULL;
        }
        return a;
    }
    if (a->kind == b->kind && a->kind == FLOE_TK_STRUCT) {
        for (size_t i = 0; i < b->nkids; i++) {
            floe_rnode_t *bk = b->kids[i], *ak = NULL;
            size_t ai = 0;
            for (; ai < a->nkids; ai++)
                if (a->kids[ai]->name_len == bk->name_len &&
                    memcmp(a->kids[ai]->name, bk->name, bk->name_len) == 0) {
                    ak = a->kids[ai];
                    break;
                }
            b->kids[i] = NULL;
            if (!ak) {
                if (floe_rnode_add_kid(a, bk) < 0) {
                    floe_rnode_free(bk);
                    goto fail_oom;
                }
                continue;
            }
            floe_rnode_t *m = merge(s, ak, bk, failed);
            if (*failed) {
                a->kids[ai] = NULL; /* merge freed it */
                goto fail;
            }
            a->kids[ai] = m;
            m->parent = a;
        }
        floe_rnode_free(b);
        return a;
    fail_oom:
        oom(s);
        *failed = 1;
    fail:
        /* drop NULL holes before freeing */
        {
            size_t w = 0;
            for (size_t i = 0; i < a->nkids; i++)
                if (a->kids[i]) a->kids[w++] = a->kids[i];
            a->nkids = w;
            w = 0;
            for (size_t i = 0; i < b->nkids; i++)
                if (b->kids[i]) b->kids[w++] = b->kids[i];
            b->nkids = w;
        }
        floe_rnode_free(a);
        floe_rnode_free(b);
        return NULL;
    }
    floe_err_set(s->err, FLOE_EINVAL, "values of '%s' mix %s and %s", a->name,
                 floe_tkind_name(a->kind), floe_tkind_name(b->kind));
    *failed = 1;
    floe_rnode_free(a);
    floe_rnode_free(b);
    return NULL;
}

/* Infer the shape of the value at s->p under `name`.  *out is NULL when the
 * value carries no type (null, {}, [], or only such inside). */
static int infer(sh_t *s, const uint8_t *name, size_t name_len, floe_rnode_t **out)
{
    *out = NULL;
    if (s->p >= s->end) return syntax(s, "expected a value");
    floe_tkind_t k;
    switch (*s->p) {
    case '"': {
        k = FLOE_TK_STRING;
        if (skip_value(s) < 0) return SH_ERR; /* leaves the text in s->key */
        int64_t us;
        if (s->r->opts.infer_timestamps && floe_tstamp_parse(s->key.data, s->key.len, &us))
            k = FLOE_TK_TIMESTAMPTZ;
        break;
    }
    case 't':
    case 'f':
        k = FLOE_TK_BOOL;
        if (skip_value(s) < 0) return SH_ERR;
        break;
    case 'n': return lit(s, "null", 4);
    case '{':
    case '[': {
        if (++s->depth > s->r->opts.max_depth)
            return floe_err_set(s->err, FLOE_ERANGE, "JSON nested deeper than %d",
                                s->r->opts.max_depth);
        bool obj = *s->p == '{';
        uint8_t close = obj ? '}' : ']';
        floe_rnode_t *acc = NULL;
        int failed = 0;
        s->p++;
        ws(s);
        if (s->p < s->end && *s->p == close) {
            s->p++;
            s->depth--;
            return SH_OK;
        }
        for (;;) {
            floe_rnode_t *kid;
            if (obj) {
                floe_slice_t kn;
                if (key(s, &kn) < 0) goto fail;
                /* the key may live in s->key, which infer reuses: copy */
                char kb[256];
                char *kname = kb;
                if (kn.len >= sizeof kb && !(kname = malloc(kn.len + 1))) {
                    oom(s);
                    goto fail;
                }
                memcpy(kname, kn.ptr, kn.len);
                int rc = infer(s, (const uint8_t *)kname, kn.len, &kid);
                if (rc == 0 && kid) {
                    floe_rnode_t *st = floe_rnode_new((const char *)name, name_len, FLOE_TK_STRUCT);
                    if (!st || floe_rnode_add_kid(st, kid) < 0) {
                        floe_rnode_free(st);
                        floe_rnode_free(kid);
                        if (kname != kb) free(kname);
                        oom(s);
                        goto fail;
                    }
                    kid = st;
                }
                if (kname != kb) free(kname);
                if (rc < 0) goto fail;
            } else {
                if (infer(s, (const uint8_t *)"element", 7, &kid) < 0) goto fail;
                if (kid) {
                    floe_rnode_t *l = floe_rnode_new((const char *)name, name_len, FLOE_TK_LIST);
                    if (!l || floe_rnode_add_kid(l, kid) < 0) {
                        floe_rnode_free(l);
                        floe_rnode_free(kid);
                        oom(s);
                        goto fail;
                    }
                    kid = l;
                }
            }
            acc = merge(s, acc, kid, &failed);
            if (failed) return SH_ERR;
            int k = next_item(s, close);
            if (k > 0) continue;
            if (k < 0) goto fail;
            s->depth--;
            break;
        }
        /* a list whose elements carried no type is untyped too */
        if (acc && acc->kind == FLOE_TK_LIST && acc->nkids == 0) {
            floe_rnode_free(acc);
            acc = NULL;
        }
        *out = acc;
        return SH_OK;
    fail:
        floe_rnode_free(acc);
        return SH_ERR;
    }
    default: {
        bool is_int;
        int64_t iv;
        double dv;
        if (number(s, &is_int, &iv, &dv) < 0) return SH_ERR;
        k = is_int ? FLOE_TK_LONG : FLOE_TK_DOUBLE;
        break;
    }
    }
    if (!(*out = floe_rnode_new((const char *)name, name_len, k))) return oom(s);
    return SH_OK;
}

/* ---- shredding --------------------------------------------------------- */

static int value(sh_t *s, floe_rnode_t *n, int rep);

static inline int push_fixed(sh_t *s, floe_rnode_t *n, int rep, const void *v, size_t w)
{
    floe_rcol_t *c = n->col;
    if (floe_rcol_push_level(c, n->def, rep) < 0 || floe_rbuf_put(&c->vals, v, w) < 0)
        return oom(s);
    c->nvals++;
    return SH_OK;
}

static int null_at(sh_t *s, floe_rnode_t *n, int rep)
{
    if (n->required) return misfit(s, n, "null");
    if (floe_rows_write_nulls(n, n->def - 1, rep) < 0) return oom(s);
    return SH_OK;
}

static int object(sh_t *s, floe_rnode_t *st, int rep, uint64_t stamp, bool fill);

static int array(sh_t *s, floe_rnode_t *l, int rep)
{
    floe_rnode_t *e = l->kids[0];
    if (++s->depth > s->r->opts.max_depth)
        return floe_err_set(s->err, FLOE_ERANGE, "JSON nested deeper than %d",
                            s->r->opts.max_depth);
    s->p++; /* '[' */
    ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        s->depth--;
        if (floe_rows_write_nulls(e, l->def, rep) < 0) return oom(s); /* empty */
        return SH_OK;
    }
    for (int i = 0;; i++) {
        int r = i ? e->rep : rep;
        if (s->p < s->end && *s->p == 'n') {
            if (lit(s, "null", 4) < 0) return SH_ERR;
            if (floe_rows_write_nulls(e, l->def + 1, r) < 0) return oom(s);
        } else {
            int rc = value(s, e, r);
            if (rc < 0) return rc;
        }
        int k = next_item(s, ']');
        if (k > 0) continue;
        if (k < 0) return SH_ERR;
        s->depth--;
        return SH_OK;
    }
}

static const char *json_kind(uint8_t c);
static int skip_value(sh_t *s);

/* The value at s->p does not fit n: report it, unless the value is not even
 * valid JSON, which is the better reason. */
static int misfit_value(sh_t *s, const floe_rnode_t *n)
{
    const uint8_t *at = s->p;
    int depth = s->depth;
    if (skip_value(s) < 0) return SH_ERR;
    s->p = at;
    s->depth = depth;
    return misfit(s, n, json_kind(*at));
}

static const char *json_kind(uint8_t c)
{
    switch (c) {
    case '"': return "a string";
    case '{': return "an object";
    case '[': return "an array";
    case 't':
    case 'f': return "a boolean";
    default: return "a number";
    }
}

/* The text of the JSON string at s->p (at its opening quote) into s->key;
 * s->p ends past the closing quote. */
static int string_text(sh_t *s)
{
    s->p++;
    floe_buf_reset(&s->key);
    return string_into(s, &s->key);
}

/* table.json.coerce: a scalar of another JSON type goes into n when the
 * conversion loses nothing: "42" into a long, "2.5" into a double,
 * "true" into a boolean, any number, boolean, object or array into a
 * string (its JSON text).  Anything else is the misfit it was. */
static int coerce(sh_t *s, floe_rnode_t *n, int rep)
{
    const uint8_t *at = s->p;
    uint8_t c = *at;
    if (n->kind == FLOE_TK_STRING) {
        if (c == '"' || skip_value(s) < 0) goto misfit;
        floe_rcol_t *col = n->col;
        if (floe_buf_append(&col->bytes, at, (size_t)(s->p - at)) < 0) return oom(s);
        if (col->bytes.len > UINT32_MAX)
            return floe_err_set(s->err, FLOE_ERANGE, "string column over 4 GiB");
        uint32_t end = (uint32_t)col->bytes.len;
        return push_fixed(s, n, rep, &end, 4);
    }
    if (c != '"' || string_text(s) < 0) goto misfit;
    const uint8_t *t = s->key.data;
    size_t len = s->key.len;
    if (n->kind == FLOE_TK_BOOL) {
        uint8_t b = len == 4 && !memcmp(t, "true", 4);
        if (!b && !(len == 5 && !memcmp(t, "false", 5))) goto misfit;
        return push_fixed(s, n, rep, &b, 1);
    }
    if ((n->kind == FLOE_TK_LONG || n->kind == FLOE_TK_DOUBLE) && len &&
        (*t == '-' || (*t >= '0' && *t <= '9'))) {
        /* the string must be exactly one JSON number */
        sh_t sub = {.r = s->r, .start = t, .p = t, .end = t + len, .err = s->err};
        bool is_int;
        int64_t iv;
        double dv;
        if (number(&sub, &is_int, &iv, &dv) < 0 || sub.p != sub.end) goto misfit;
        if (n->kind == FLOE_TK_DOUBLE) {
            if (is_int) dv = (double)iv;
            return push_fixed(s, n, rep, &dv, 8);
        }
        if (is_int) return push_fixed(s, n, rep, &iv, 8);
    }
misfit:
    s->p = at;
    return misfit_value(s, n);
}

static inline int mismatch(sh_t *s, floe_rnode_t *n, int rep)
{
    return s->r->opts.coerce ? coerce(s, n, rep) : misfit_value(s, n);
}

static int value(sh_t *s, floe_rnode_t *n, int rep)
{
    if (s->p >= s->end) return syntax(s, "expected a value");
    uint8_t c = *s->p;
    if (c == 'n') {
        if (lit(s, "null", 4) < 0) return SH_ERR;
        return null_at(s, n, rep);
    }
    switch (n->kind) {
    case FLOE_TK_STRUCT:
        if (c != '{') return mismatch(s, n, rep);
        return object(s, n, rep, ++s->r->stamp_seq, true);
    case FLOE_TK_LIST:
        if (c != '[') return mismatch(s, n, rep);
        return array(s, n, rep);
    case FLOE_TK_STRING: {
        if (c != '"') return mismatch(s, n, rep);
        floe_rcol_t *col = n->col;
        s->p++;
        if (string_into(s, &col->bytes) < 0) return SH_ERR;
        if (col->bytes.len > UINT32_MAX)
            return floe_err_set(s->err, FLOE_ERANGE, "string column over 4 GiB");
        uint32_t end = (uint32_t)col->bytes.len;
        return push_fixed(s, n, rep, &end, 4);
    }
    case FLOE_TK_BOOL:
        if (c == 't') {
            if (lit(s, "true", 4) < 0) return SH_ERR;
            uint8_t b = 1;
            return push_fixed(s, n, rep, &b, 1);
        }
        if (c == 'f') {
            if (lit(s, "false", 5) < 0) return SH_ERR;
            uint8_t b = 0;
            return push_fixed(s, n, rep, &b, 1);
        }
        return mismatch(s, n, rep);
    case FLOE_TK_LONG:
    case FLOE_TK_DOUBLE: {
        if (c != '-' && (c < '0' || c > '9')) return mismatch(s, n, rep);
        bool is_int;
        int64_t iv;
        double dv;
        const uint8_t *at = s->p;
        if (number(s, &is_int, &iv, &dv) < 0) return SH_ERR;
        if (n->kind == FLOE_TK_DOUBLE) {
            if (is_int) dv = (double)iv;
            return push_fixed(s, n, rep, &dv, 8);
        }
        if (is_int) return push_fixed(s, n, rep, &iv, 8);
        if (!s->r->opts.widen_long_to_double || n->pinned || n->required) {
            s->p = at;
            return misfit(s, n, "a fraction");
        }
        s->ev_widen = n;
        return SH_EVOLVE;
    }
    case FLOE_TK_TIMESTAMPTZ: {
        if (c != '"') return mismatch(s, n, rep);
        const uint8_t *at = s->p;
        if (string_text(s) < 0) return SH_ERR;
        int64_t us;
        if (floe_tstamp_parse(s->key.data, s->key.len, &us)) return push_fixed(s, n, rep, &us, 8);
        s->p = at;
        return misfit(s, n, "a string that is not an RFC 3339 date-time with a zone");
    }
    default: return mismatch(s, n, rep);
    }
}

static floe_rnode_t *find_kid(floe_rnode_t *st, floe_slice_t k)
{
    size_t n = st->nkids;
    if (!n) return NULL;
    size_t h = st->hint < n ? st->hint : 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = h + i < n ? h + i : h + i - n;
        floe_rnode_t *kid = st->kids[j];
        if (kid->name_len == k.len && floe_mem_eq_short(kid->name, k.ptr, k.len)) {
            st->hint = j + 1;
            return kid;
        }
    }
    return NULL;
}

/* Shred an object into struct st.  stamp marks the fields this instance
 * sets; with fill, the fields it does not set are written null. */
static int object(sh_t *s, floe_rnode_t *st, int rep, uint64_t stamp, bool fill)
{
    if (++s->depth > s->r->opts.max_depth)
        return floe_err_set(s->err, FLOE_ERANGE, "JSON nested deeper than %d",
                            s->r->opts.max_depth);
    s->p++; /* '{' */
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
    } else {
        for (;;) {
            floe_slice_t k = {0};
            floe_rnode_t *kid = NULL;
            /* the key expected next, spelled plainly in the input: matched
             * in place, without scanning it as a string first */
            size_t h = st->hint;
            if (h < st->nkids && st->kids[h]->plain_name) {
                floe_rnode_t *g = st->kids[h];
                size_t len = g->name_len;
                const uint8_t *q = s->p;
                if ((size_t)(s->end - q) >= len + 2 && q[0] == '"' && q[len + 1] == '"' &&
                    floe_mem_eq_short(g->name, q + 1, len)) {
                    s->p = q + len + 2;
                    ws(s);
                    if (s->p >= s->end || *s->p != ':') return syntax(s, "expected ':'");
                    s->p++;
                    ws(s);
                    kid = g;
                    st->hint = h + 1;
                }
            }
            if (!kid) {
                if (key(s, &k) < 0) return SH_ERR;
                kid = find_kid(st, k);
            }
            if (!kid) {
                floe_rnode_t *sub;
                /* an escaped key sits in s->key, which skipping reuses */
                char kb[256], *kname = kb;
                if (k.len >= sizeof kb && !(kname = malloc(k.len + 1))) return oom(s);
                memcpy(kname, k.ptr, k.len);
                int irc = infer(s, (const uint8_t *)kname, k.len, &sub);
                if (kname != kb) free(kname);
                if (irc < 0) return SH_ERR;
                if (sub) {
                    if (s->depth + floe_rnode_depth(sub) > s->r->opts.max_depth) {
                        floe_rnode_free(sub);
                        return floe_err_set(s->err, FLOE_ERANGE, "JSON nested deeper than %d",
                                            s->r->opts.max_depth);
                    }
                    s->ev_parent = st;
                    s->ev_sub = sub;
                    return SH_EVOLVE;
                }
            } else {
                if (kid->sys)
                    return floe_err_set(s->err, FLOE_EINVAL, "field name '%s' is reserved",
                                        kid->name);
                if (kid->stamp == stamp)
                    return floe_err_set(s->err, FLOE_EINVAL, "duplicate key '%s' at byte %zu",
                                        kid->name, (size_t)(s->p - s->start));
                kid->stamp = stamp;
                int rc = value(s, kid, rep);
                if (rc < 0) return rc;
            }
            int more = next_item(s, '}');
            if (more > 0) continue;
            if (more < 0) return SH_ERR;
            break;
        }
    }
    s->depth--;
    if (fill) {
        for (size_t i = 0; i < st->nkids; i++) {
            floe_rnode_t *kid = st->kids[i];
            if (kid->stamp == stamp) continue;
            if (kid->required) return misfit(s, kid, "missing");
            if (floe_rows_write_nulls(kid, st->def, rep) < 0) return oom(s);
        }
    }
    return SH_OK;
}

/* Lengths of the leaves at the start of an attempt, to undo it. */
typedef struct mark {
    size_t lev, vals, bytes, nvals;
} mark_t;

static void restore(floe_rows_t *r, const mark_t *m)
{
    for (size_t i = 0; i < r->nleaves; i++) {
        floe_rcol_t *c = r->leaves[i];
        c->defs.len = c->reps.len = m[i].lev;
        c->vals.len = m[i].vals;
        c->bytes.len = m[i].bytes;
        c->nvals = m[i].nvals;
    }
}

int floe_rows_json(floe_rows_t *r, floe_rnode_t *parent, const uint8_t *json, size_t len,
                   floe_err_t *err)
{
    sh_t s = {.r = r, .start = json, .end = json + len, .err = err};
    mark_t stackm[32], *m = stackm;
    size_t capm = 32;
    int rc = SH_ERR;
    for (int attempt = 0; attempt < 10000; attempt++) {
        if (r->nleaves > capm) {
            mark_t *nm = malloc(r->nleaves * sizeof *nm);
            if (!nm) {
                oom(&s);
                break;
            }
            if (m != stackm) free(m);
            m = nm;
            capm = r->nleaves;
        }
        for (size_t i = 0; i < r->nleaves; i++) {
            floe_rcol_t *c = r->leaves[i];
            m[i] = (mark_t){c->defs.len, c->vals.len, c->bytes.len, c->nvals};
        }
        s.p = json;
        s.depth = 0;
        s.ev_parent = s.ev_sub = s.ev_widen = NULL;
        ws(&s);
        if (s.p >= s.end || *s.p != '{') {
            /* not an object: say so only when it is valid JSON at all */
            const uint8_t *v = s.p;
            if (s.p >= s.end) {
                rc = syntax(&s, "empty value");
            } else if (skip_value(&s) == 0) {
                ws(&s);
                rc = s.p != s.end ? syntax(&s, "trailing bytes after the value")
                                  : floe_err_set(err, FLOE_EINVAL,
                                                 "JSON value is %s, not an object", json_kind(*v));
            }
            rc = -1;
            break;
        }
        bool is_root = parent == &r->root;
        rc = object(&s, parent, parent->rep, ++r->stamp_seq, !is_root);
        if (rc == SH_OK) {
            ws(&s);
            if (s.p != s.end) rc = syntax(&s, "trailing bytes after the value");
            else if (!is_root)
                parent->stamp = r->row_stamp;
        }
        if (rc != SH_EVOLVE) {
            if (rc < 0) goto undo;
            break;
        }
        /* undo this attempt, change the shape at the row boundary, retry */
        restore(r, m);
        if (s.ev_widen) {
            floe_rows_widen(r, s.ev_widen);
        } else if (floe_rows_attach(r, s.ev_parent, s.ev_sub, err) < 0) {
            rc = SH_ERR;
            break; /* the caller rolls the row back */
        }
        rc = SH_ERR;
        continue;
    undo:
        restore(r, m);
        break;
    }
    if (m != stackm) free(m);
    floe_buf_free(&s.key);
    return rc < 0 ? -1 : 0;
}
