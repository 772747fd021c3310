#include "util/conf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/parse.h"

const floe_conf_key_t *floe_conf_find(const floe_conf_key_t *keys, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(keys[i].name, name)) return &keys[i];
    return NULL;
}

/* 12 KiB, 64 MiB, 10 s: the largest unit that divides v, for messages and
 * the reference; the text parses back to v. */
static const char *human(const floe_conf_key_t *k, int64_t v, char *buf, size_t size)
{
    static const struct {
        int64_t mult;
        const char *unit;
    } sizes[] = {{1ll << 40, "TiB"}, {1ll << 30, "GiB"}, {1ll << 20, "MiB"}, {1ll << 10, "KiB"}},
      times[] = {{86400000, "d"}, {3600000, "h"}, {60000, "min"}, {1000, "s"}};
    if (k->type == FLOE_CONF_SIZE || k->type == FLOE_CONF_DURATION) {
        bool sz = k->type == FLOE_CONF_SIZE;
        for (size_t i = 0; i < 4; i++) {
            int64_t m = sz ? sizes[i].mult : times[i].mult;
            if (v > 0 && v % m == 0) {
                snprintf(buf, size, "%" PRId64 "%s", v / m, sz ? sizes[i].unit : times[i].unit);
                return buf;
            }
        }
        snprintf(buf, size, "%" PRId64 "%s", v, sz ? "" : "ms");
        return buf;
    }
    snprintf(buf, size, "%" PRId64, v);
    return buf;
}

static void store_int(void *field, size_t size, int64_t v)
{
    if (size == sizeof(int32_t)) {
        int32_t x = (int32_t)v;
        memcpy(field, &x, sizeof x);
    } else {
        memcpy(field, &v, sizeof v);
    }
}

static int range_error(const floe_conf_key_t *k, const char *value, floe_err_t *err)
{
    char lo[32], hi[32];
    return floe_err_set(err, FLOE_ERANGE, "%s: %s is outside %s..%s", k->name, value,
                        human(k, k->min, lo, sizeof lo), human(k, k->max, hi, sizeof hi));
}

int floe_conf_set(const floe_conf_key_t *k, void *obj, const char *value, floe_err_t *err)
{
    char *field = (char *)obj + k->off;
    if (!value) return floe_err_set(err, FLOE_EINVAL, "%s: no value", k->name);
    int rc = 0;
    switch (k->type) {
    case FLOE_CONF_BOOL: {
        bool b;
        if ((rc = floe_parse_bool(value, &b, err)) == 0) memcpy(field, &b, sizeof b);
        break;
    }
    case FLOE_CONF_INT: {
        int64_t v;
        if ((rc = floe_parse_int64(value, INT64_MIN, INT64_MAX, &v, err)) < 0) break;
        if (v < k->min || v > k->max) return range_error(k, value, err);
        store_int(field, k->size, v);
        break;
    }
    case FLOE_CONF_SIZE: {
        uint64_t v;
        if ((rc = floe_parse_size(value, &v, err)) < 0) break;
        if (v < (uint64_t)k->min || v > (uint64_t)k->max) return range_error(k, value, err);
        store_int(field, k->size, (int64_t)v);
        break;
    }
    case FLOE_CONF_DURATION: {
        int64_t v;
        if ((rc = floe_parse_duration_ms(value, &v, err)) < 0) break;
        if (v < k->min || v > k->max) return range_error(k, value, err);
        store_int(field, k->size, v);
        break;
    }
    case FLOE_CONF_ENUM: {
        for (const floe_conf_enum_t *e = k->values; e && e->name; e++)
            if (!strcasecmp(value, e->name)) {
                memcpy(field, &e->value, sizeof e->value);
                return 0;
            }
        char list[256] = "";
        for (const floe_conf_enum_t *e = k->values; e && e->name; e++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     e == k->values ? ""
                     : e[1].name    ? ", "
                                    : " or ",
                     e->name);
        return floe_err_set(err, FLOE_EINVAL, "%s: '%.64s' is not %s", k->name, value, list);
    }
    case FLOE_CONF_STRING: {
        size_t len = strlen(value);
        if (len >= k->size)
            return floe_err_set(err, FLOE_EINVAL, "%s: longer than %zu bytes", k->name,
                                k->size - 1);
        if (k->check && (rc = k->check(value, err)) < 0) break;
        memset(field, 0, k->size);
        memcpy(field, value, len);
        break;
    }
    }
    if (rc < 0) floe_err_wrap(err, "%s", k->name);
    return rc;
}

int floe_conf_defaults(const floe_conf_key_t *keys, size_t n, void *obj, floe_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i].def && floe_conf_set(&keys[i], obj, keys[i].def, err) < 0) {
            floe_err_wrap(err, "default");
            return -1;
        }
    return 0;
}

bool floe_conf_changed(const floe_conf_key_t *keys, size_t n, const void *a, const void *b)
{
    for (size_t i = 0; i < n; i++) {
        const floe_conf_key_t *k = &keys[i];
        if (k->live) continue;
        const char *fa = (const char *)a + k->off, *fb = (const char *)b + k->off;
        if (k->type == FLOE_CONF_STRING ? strncmp(fa, fb, k->size) != 0
                                        : memcmp(fa, fb, k->size) != 0)
            return true;
    }
    return false;
}

void floe_conf_copy_live(const floe_conf_key_t *keys, size_t n, void *dst, const void *src)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i].live)
            memcpy((char *)dst + keys[i].off, (const char *)src + keys[i].off, keys[i].size);
}

/* Edits (insert, delete, substitute, swap two neighbours) from a to b,
 * stopping early once above limit. */
static size_t distance(const char *a, const char *b, size_t limit)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return limit + 1;
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t m = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < m) m = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < m) m = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < m)
                m = d[i - 2][j - 2] + 1;
            d[i][j] = m;
        }
    return d[la][lb];
}

int floe_conf_unknown(const floe_conf_key_t *keys, size_t n, const char *name, const char *what,
                      floe_err_t *err)
{
    const char *best = NULL;
    size_t bestd = 3; /* at most two edits away */
    for (size_t i = 0; i < n; i++) {
        size_t d = distance(name, keys[i].name, bestd - 1);
        if (d < bestd) {
            bestd = d;
            best = keys[i].name;
        }
    }
    if (best)
        return floe_err_set(err, FLOE_EINVAL, "%.100s: unknown %s config (did you mean %s?)", name,
                            what, best);
    return floe_err_set(err, FLOE_EINVAL, "%.100s: unknown %s config", name, what);
}

/* Markdown table cell text: pipes escaped, newlines as spaces. */
static int cell(floe_buf_t *out, const char *s)
{
    int rc = 0;
    for (; *s && rc == 0; s++)
        rc = *s == '|'    ? floe_buf_append_str(out, "\\|")
             : *s == '\n' ? floe_buf_append_u8(out, ' ')
                          : floe_buf_append_u8(out, (uint8_t)*s);
    return rc;
}

static int value_text(const floe_conf_key_t *k, floe_buf_t *out)
{
    char lo[32], hi[32];
    switch (k->type) {
    case FLOE_CONF_BOOL: return floe_buf_append_str(out, "boolean");
    case FLOE_CONF_STRING: return floe_buf_append_str(out, "text");
    case FLOE_CONF_ENUM: {
        int rc = 0;
        for (const floe_conf_enum_t *e = k->values; e && e->name && rc == 0; e++)
            rc = floe_buf_printf(out, "%s`%s`", e == k->values ? "" : ", ", e->name);
        return rc;
    }
    default: break;
    }
    const char *type = k->type == FLOE_CONF_INT    ? "integer"
                       : k->type == FLOE_CONF_SIZE ? "size"
                                                   : "duration";
    return floe_buf_printf(out, "%s, %s..%s", type, human(k, k->min, lo, sizeof lo),
                           human(k, k->max, hi, sizeof hi));
}

int floe_conf_markdown(const floe_conf_key_t *keys, size_t n, bool live_column, floe_buf_t *out)
{
    int rc = floe_buf_printf(out, "| key | value | default |%s description |\n",
                             live_column ? " live |" : "");
    rc |= floe_buf_printf(out, "| --- | --- | --- |%s --- |\n", live_column ? " --- |" : "");
    for (size_t i = 0; i < n && rc == 0; i++) {
        const floe_conf_key_t *k = &keys[i];
        rc |= floe_buf_printf(out, "| `%s` | ", k->name);
        rc |= value_text(k, out);
        rc |= floe_buf_append_str(out, " | ");
        if (k->def && *k->def && !k->def_doc) {
            rc |= floe_buf_append_u8(out, '`');
            rc |= cell(out, k->def);
            rc |= floe_buf_append_u8(out, '`');
        } else {
            rc |= cell(out, k->def_doc ? k->def_doc : k->def ? "empty" : "none");
        }
        if (live_column) rc |= floe_buf_append_str(out, k->live ? " | yes" : " | no");
        rc |= floe_buf_append_str(out, " | ");
        rc |= cell(out, k->doc ? k->doc : "");
        rc |= floe_buf_append_str(out, " |\n");
    }
    return rc ? -1 : 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    return s;
}

int floe_conf_read_file(const char *path,
                        int (*set)(void *arg, const char *key, const char *value, floe_err_t *err),
                        void *arg, floe_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return floe_err_errno(err, errno, path);
    char line[4096];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fclose(f);
            return floe_err_set(err, FLOE_EINVAL, "%s:%d: expected key = value", path, ln);
        }
        *eq = 0;
        if (set(arg, trim(s), trim(eq + 1), err)) {
            fclose(f);
            floe_err_wrap(err, "%s:%d", path, ln);
            return -1;
        }
    }
    fclose(f);
    return 0;
}
