#include "util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Split "  12.5 MiB " into a number string and a unit; the number part is
 * digits with at most one '.', when allow_frac.  Returns 0 or -1. */
static int split(const char *s, bool allow_frac, const char **num_end, const char **unit,
                 size_t *unit_len)
{
    const char *p = s;
    if (!isdigit((unsigned char)*p)) return -1;
    bool dot = false;
    while (isdigit((unsigned char)*p) || (allow_frac && *p == '.' && !dot)) {
        if (*p == '.') {
            dot = true;
            if (!isdigit((unsigned char)p[1])) return -1;
        }
        p++;
    }
    *num_end = p;
    while (*p == ' ') p++;
    *unit = p;
    while (isalpha((unsigned char)*p)) p++;
    *unit_len = (size_t)(p - *unit);
    if (*p != '\0') return -1;
    return 0;
}

int floe_parse_size(const char *s, uint64_t *out, floe_err_t *err)
{
    static const struct {
        const char *name;
        uint64_t mult;
    } units[] = {
        {"", 1},
        {"b", 1},
        {"kb", 1000ull},
        {"mb", 1000000ull},
        {"gb", 1000000000ull},
        {"tb", 1000000000000ull},
        {"kib", 1ull << 10},
        {"mib", 1ull << 20},
        {"gib", 1ull << 30},
        {"tib", 1ull << 40},
    };
    const char *num_end, *unit;
    size_t ulen;
    if (!s || split(s, false, &num_end, &unit, &ulen) < 0) goto bad;
    uint64_t mult = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == ulen && strncasecmp(unit, units[i].name, ulen) == 0)
            mult = units[i].mult;
    if (!mult) goto bad;
    uint64_t v = 0;
    for (const char *p = s; p < num_end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) goto overflow;
        v = v * 10 + d;
    }
    if (v > UINT64_MAX / mult) goto overflow;
    *out = v * mult;
    return 0;
overflow:
    return floe_err_set(err, FLOE_ERANGE, "size '%s' is too large", s);
bad:
    return floe_err_set(err, FLOE_EINVAL,
                        "invalid size '%s': expected a whole number with an "
                        "optional unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB",
                        s ? s : "(null)");
}

static int parse_duration(const char *s, int64_t per_us_div, int64_t *out, floe_err_t *err,
                          const char *out_unit)
{
    /* microseconds per unit */
    static const struct {
        const char *name;
        int64_t us;
    } units[] = {
        {"us", 1},         {"ms", 1000},        {"s", 1000000},       {"m", 60000000},
        {"min", 60000000}, {"h", 3600000000LL}, {"d", 86400000000LL},
    };
    const char *num_end, *unit;
    size_t ulen;
    if (!s || split(s, true, &num_end, &unit, &ulen) < 0) goto bad;
    int64_t mult = 0;
    if (ulen == 0) {
        mult = 1000; /* bare number: milliseconds */
    } else {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strlen(units[i].name) == ulen && strncasecmp(unit, units[i].name, ulen) == 0)
                mult = units[i].us;
    }
    if (!mult) goto bad;
    /* integer part and fraction, exactly, in microseconds */
    int64_t ip = 0, frac_num = 0, frac_den = 1;
    const char *p = s;
    for (; p < num_end && *p != '.'; p++) {
        int d = *p - '0';
        if (ip > (INT64_MAX - d) / 10) goto overflow;
        ip = ip * 10 + d;
    }
    if (p < num_end && *p == '.') {
        for (p++; p < num_end; p++) {
            if (frac_den > INT64_MAX / 10 / mult) goto notwhole; /* too precise */
            frac_num = frac_num * 10 + (*p - '0');
            frac_den *= 10;
        }
    }
    if (ip > INT64_MAX / mult) goto overflow;
    int64_t us = ip * mult;
    int64_t f = frac_num * mult; /* < frac_den * mult, no overflow by the check */
    if (f % frac_den) goto notwhole;
    if (us > INT64_MAX - f / frac_den) goto overflow;
    us += f / frac_den;
    if (us % per_us_div) goto notwhole;
    *out = us / per_us_div;
    return 0;
notwhole:
    return floe_err_set(err, FLOE_EINVAL, "duration '%s' is not a whole number of %s", s, out_unit);
overflow:
    return floe_err_set(err, FLOE_ERANGE, "duration '%s' is too large", s);
bad:
    return floe_err_set(err, FLOE_EINVAL,
                        "invalid duration '%s': expected a number with an "
                        "optional unit us, ms, s, m, min, h or d (no unit = ms)",
                        s ? s : "(null)");
}

int floe_parse_duration_ms(const char *s, int64_t *out, floe_err_t *err)
{
    return parse_duration(s, 1000, out, err, "milliseconds");
}

int floe_parse_duration_us(const char *s, int64_t *out, floe_err_t *err)
{
    return parse_duration(s, 1, out, err, "microseconds");
}

int floe_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out, floe_err_t *err)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return floe_err_set(err, FLOE_EINVAL, "invalid integer '%s'", s ? s : "(null)");
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0') return floe_err_set(err, FLOE_EINVAL, "invalid integer '%s'", s);
    if (errno == ERANGE || v < min || v > max)
        return floe_err_set(err, FLOE_ERANGE, "integer '%s' is outside [%lld, %lld]", s,
                            (long long)min, (long long)max);
    *out = v;
    return 0;
}

int floe_parse_bool(const char *s, bool *out, floe_err_t *err)
{
    static const char *const t[] = {"true", "1", "yes", "on"};
    static const char *const f[] = {"false", "0", "no", "off"};
    for (int i = 0; s && i < 4; i++) {
        if (strcasecmp(s, t[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, f[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return floe_err_set(err, FLOE_EINVAL, "invalid boolean '%s': expected true or false",
                        s ? s : "(null)");
}
