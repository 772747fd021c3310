#include "table/tstamp.h"

#include <inttypes.h>
#include <stdio.h>

#include "iceberg/types.h"

/* n decimal digits at p, or -1. */
static int digits(const uint8_t *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

static int days_in_month(int y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

bool floe_tstamp_parse(const uint8_t *p, size_t n, int64_t *us)
{
    /* YYYY-MM-DDTHH:MM:SS is 19 bytes, and a zone follows */
    if (n < 20 || n > 40) return false;
    if (p[4] != '-' || p[7] != '-' || p[13] != ':' || p[16] != ':') return false;
    if (p[10] != 'T' && p[10] != 't' && p[10] != ' ') return false;
    int y = digits(p, 4), mo = digits(p + 5, 2), d = digits(p + 8, 2);
    int h = digits(p + 11, 2), mi = digits(p + 14, 2), s = digits(p + 17, 2);
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 ||
        s > 60 || d > days_in_month(y, mo))
        return false;
    size_t i = 19;
    int64_t frac = 0;
    if (p[i] == '.') {
        int nd = 0;
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, nd++)
            if (nd < 6) frac = frac * 10 + (p[i] - '0');
        if (nd == 0 || nd > 9) return false;
        for (; nd < 6; nd++) frac *= 10;
    }
    if (i >= n) return false; /* no zone: a local time names no instant */
    int64_t off_min = 0;
    if (p[i] == 'Z' || p[i] == 'z') {
        i++;
    } else if (p[i] == '+' || p[i] == '-') {
        int sign = p[i++] == '-' ? -1 : 1;
        size_t left = n - i;
        int oh, om = 0;
        if (left == 2) {
            oh = digits(p + i, 2);
        } else if (left == 4) {
            oh = digits(p + i, 2);
            om = digits(p + i + 2, 2);
        } else if (left == 5 && p[i + 2] == ':') {
            oh = digits(p + i, 2);
            om = digits(p + i + 3, 2);
        } else {
            return false;
        }
        if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
        off_min = sign * (oh * 60 + om);
        i = n;
    } else {
        return false;
    }
    if (i != n) return false;
    int64_t days = floe_ice_days_from_civil(y, (unsigned)mo, (unsigned)d);
    int64_t secs = days * 86400 + h * 3600 + mi * 60 + s - off_min * 60;
    *us = secs * 1000000 + frac;
    return true;
}

bool floe_tstamp_format(int64_t us, char *out)
{
    int64_t days = us / 86400000000LL, rest = us % 86400000000LL, y;
    if (rest < 0) { /* floor, without overflow near INT64_MIN */
        rest += 86400000000LL;
        days--;
    }
    unsigned m, d;
    floe_ice_civil_from_days(days, &y, &m, &d);
    if (y < 1 || y > 9999) return false;
    int64_t s = rest / 1000000;
    snprintf(out, 32, "%04" PRId64 "-%02u-%02uT%02d:%02d:%02d.%06dZ", y, m, d, (int)(s / 3600),
             (int)(s / 60 % 60), (int)(s % 60), (int)(rest % 1000000));
    return true;
}
