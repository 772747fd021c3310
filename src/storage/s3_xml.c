/* S3's XML answers (s3_xml.h). */
#include "storage/s3_xml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/mem.h"

/* The next <tag>...</tag> in [p, end): its text in [*vs, *ve), and where
 * the scan goes on (*next).  false when there is none. */
static bool element(const char *p, const char *end, const char *tag, const char **vs,
                    const char **ve, const char **next)
{
    size_t tl = strlen(tag);
    for (const char *q = p; q < end; q++) {
        q = memchr(q, '<', (size_t)(end - q));
        if (!q) return false;
        if ((size_t)(end - q) < tl + 2 || memcmp(q + 1, tag, tl) ||
            (q[tl + 1] != '>' && q[tl + 1] != ' '))
            continue;
        const char *gt = memchr(q, '>', (size_t)(end - q));
        if (!gt) return false;
        if (gt[-1] == '/') { /* <tag/> */
            *vs = *ve = gt + 1;
            *next = gt + 1;
            return true;
        }
        const char *s = gt + 1;
        for (const char *c = s; c < end; c++) {
            c = memchr(c, '<', (size_t)(end - c));
            if (!c) return false;
            if ((size_t)(end - c) >= tl + 3 && c[1] == '/' && !memcmp(c + 2, tag, tl) &&
                c[tl + 2] == '>') {
                *vs = s;
                *ve = c;
                *next = c + tl + 3;
                return true;
            }
        }
        return false;
    }
    return false;
}

/* Decode the entities of [s, e) into out (cap with the NUL). */
static size_t decode(const char *s, const char *e, char *out, size_t cap)
{
    size_t o = 0;
    while (s < e && o + 1 < cap) {
        if (*s == '&') {
            const char *semi = memchr(s, ';', (size_t)(e - s));
            size_t l = semi ? (size_t)(semi - s) : 0;
            unsigned long cp = 0;
            bool ok = true;
            if (l == 3 && !memcmp(s, "&lt", 3)) cp = '<';
            else if (l == 3 && !memcmp(s, "&gt", 3))
                cp = '>';
            else if (l == 4 && !memcmp(s, "&amp", 4))
                cp = '&';
            else if (l == 5 && !memcmp(s, "&quot", 5))
                cp = '"';
            else if (l == 5 && !memcmp(s, "&apos", 5))
                cp = '\'';
            else if (l > 2 && s[1] == '#')
                cp = s[2] == 'x' ? strtoul(s + 3, NULL, 16) : strtoul(s + 2, NULL, 10);
            else
                ok = false;
            if (ok && cp) {
                /* UTF-8 */
                char u[4];
                size_t ul = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
                if (ul == 1) u[0] = (char)cp;
                else if (ul == 2)
                    u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 63));
                else if (ul == 3)
                    u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 63)),
                    u[2] = (char)(0x80 | (cp & 63));
                else
                    u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 63)),
                    u[2] = (char)(0x80 | ((cp >> 6) & 63)), u[3] = (char)(0x80 | (cp & 63));
                if (o + ul + 1 > cap) break;
                memcpy(out + o, u, ul);
                o += ul;
                s = semi + 1;
                continue;
            }
        }
        out[o++] = *s++;
    }
    out[o] = 0;
    return o;
}

static char *decode_dup(const char *s, const char *e)
{
    size_t cap = (size_t)(e - s) + 1;
    char *out = malloc(cap);
    if (out) decode(s, e, out, cap);
    return out;
}

bool s3_xml_text(const void *p, size_t n, const char *tag, char *out, size_t cap)
{
    const char *vs, *ve, *next;
    if (!p || !element(p, (const char *)p + n, tag, &vs, &ve, &next)) return false;
    decode(vs, ve, out, cap);
    return true;
}

/* "2026-12-03T17:30:00.000Z" as ms since the epoch; -1 when not that. */
static int64_t iso_ms(const char *s, const char *e)
{
    char b[40];
    decode(s, e, b, sizeof b);
    struct tm tm = {0};
    int ms = 0;
    char *r = strptime(b, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!r) return -1;
    if (*r == '.') {
        char frac[4] = "000";
        for (int i = 0; i < 3 && r[1 + i] >= '0' && r[1 + i] <= '9'; i++) frac[i] = r[1 + i];
        ms = atoi(frac);
    }
    return (int64_t)timegm(&tm) * 1000 + ms;
}

static int add_entry(floe_fileio_entry_t **out, size_t *nout, size_t *cap, const char *name,
                     bool dir, int64_t size, int64_t mtime)
{
    if (floe_grow(out, cap, *nout + 1, sizeof **out) != 0) return -1;
    floe_fileio_entry_t *x = &(*out)[*nout];
    if (!(x->name = strdup(name))) return -1;
    x->is_dir = dir;
    x->size = size;
    x->mtime_ms = mtime;
    (*nout)++;
    return 0;
}

int s3_xml_list(const void *p, size_t n, size_t plen, floe_fileio_entry_t **out, size_t *nout,
                size_t *cap, char **token, floe_err_t *err)
{
    *token = NULL;
    const char *b = p ? p : "", *end = b + n;
    const char *vs, *ve, *next;
    if (!element(b, end, "ListBucketResult", &vs, &ve, &next))
        return floe_err_set(err, FLOE_ECORRUPT, "s3: the listing is not a ListBucketResult");
    const char *lb = vs, *le = ve;
    for (const char *q = lb; element(q, le, "Contents", &vs, &ve, &next); q = next) {
        const char *ks, *ke, *n2, *ss, *se, *ms, *me;
        if (!element(vs, ve, "Key", &ks, &ke, &n2)) continue;
        char *key = decode_dup(ks, ke);
        if (!key) return floe_err_oom(err);
        int64_t size = -1, mt = -1;
        if (element(vs, ve, "Size", &ss, &se, &n2)) size = strtoll(ss, NULL, 10);
        if (element(vs, ve, "LastModified", &ms, &me, &n2)) mt = iso_ms(ms, me);
        int rc = 0;
        if (strlen(key) > plen && !strchr(key + plen, '/'))
            rc = add_entry(out, nout, cap, key + plen, false, size, mt);
        free(key);
        if (rc < 0) return floe_err_oom(err);
    }
    for (const char *q = lb; element(q, le, "CommonPrefixes", &vs, &ve, &next); q = next) {
        const char *ps, *pe, *n2;
        if (!element(vs, ve, "Prefix", &ps, &pe, &n2)) continue;
        char *pre = decode_dup(ps, pe);
        if (!pre) return floe_err_oom(err);
        size_t l = strlen(pre);
        if (l && pre[l - 1] == '/') pre[--l] = 0;
        int rc = l > plen ? add_entry(out, nout, cap, pre + plen, true, -1, -1) : 0;
        free(pre);
        if (rc < 0) return floe_err_oom(err);
    }
    char trunc[8] = "";
    s3_xml_text(lb, (size_t)(le - lb), "IsTruncated", trunc, sizeof trunc);
    if (!strcmp(trunc, "true") && element(lb, le, "NextContinuationToken", &vs, &ve, &next)) {
        if (!(*token = decode_dup(vs, ve))) return floe_err_oom(err);
        if (!**token) {
            free(*token);
            *token = NULL;
        }
    }
    return 0;
}

int s3_xml_delete_errors(const void *p, size_t n, const char *const *keys, size_t cnt, bool *gone,
                         floe_err_t *err)
{
    const char *b = p ? p : "", *end = b + n, *vs, *ve, *next;
    int rc = 0;
    for (const char *q = b; element(q, end, "Error", &vs, &ve, &next); q = next) {
        char key[1024] = "", code[64] = "", msg[128] = "";
        s3_xml_text(vs, (size_t)(ve - vs), "Key", key, sizeof key);
        s3_xml_text(vs, (size_t)(ve - vs), "Code", code, sizeof code);
        s3_xml_text(vs, (size_t)(ve - vs), "Message", msg, sizeof msg);
        if (!strcmp(code, "NoSuchKey")) continue; /* absent: gone */
        for (size_t i = 0; i < cnt; i++)
            if (!strcmp(keys[i], key)) gone[i] = false;
        if (rc == 0)
            rc = floe_err_set(err, FLOE_EIO, "s3: cannot delete %s: %s%s%s", key, code,
                              *msg ? ": " : "", msg);
    }
    return rc;
}

int s3_xml_escape(const char *s, floe_buf_t *out)
{
    for (; *s; s++) {
        const char *e = *s == '&'    ? "&amp;"
                        : *s == '<'  ? "&lt;"
                        : *s == '>'  ? "&gt;"
                        : *s == '"'  ? "&quot;"
                        : *s == '\'' ? "&apos;"
                                     : NULL;
        if (e ? floe_buf_append_str(out, e) < 0 : floe_buf_append_u8(out, (uint8_t)*s) < 0)
            return -1;
    }
    return 0;
}
