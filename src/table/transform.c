#include "table/transform.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table/json_int.h"
#include "util/json.h"

static const struct {
    const char *name;
    floe_xform_step_t step;
} step_names[] = {{"debezium_unwrap", FLOE_XF_DEBEZIUM_UNWRAP}, {"flatten", FLOE_XF_FLATTEN}};
#define NSTEP_NAMES (sizeof step_names / sizeof step_names[0])

int floe_xform_parse(const char *list, floe_xform_t *x, floe_err_t *err)
{
    x->nsteps = 0;
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        const char *b = p;
        while (*p && *p != ',') p++;
        const char *e = p;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (*p == ',') p++;
        if (e == b) {
            if (!*p && x->nsteps) break; /* a trailing comma */
            return floe_err_set(err, FLOE_EINVAL, "empty transform name in '%.64s'", list);
        }
        size_t i;
        for (i = 0; i < NSTEP_NAMES; i++)
            if ((size_t)(e - b) == strlen(step_names[i].name) &&
                !memcmp(b, step_names[i].name, (size_t)(e - b)))
                break;
        if (i == NSTEP_NAMES)
            return floe_err_set(err, FLOE_EINVAL,
                                "unknown transform '%.*s' (known: debezium_unwrap, flatten)",
                                (int)(e - b > 64 ? 64 : e - b), b);
        if (x->nsteps == FLOE_XFORM_MAX)
            return floe_err_set(err, FLOE_EINVAL, "more than %d transforms", FLOE_XFORM_MAX);
        x->steps[x->nsteps++] = step_names[i].step;
    }
    return 0;
}

/* ---- scanning ----------------------------------------------------------- */

/* The value at s->p as a span of the input; s->p past it. */
static int value_span(sh_t *s, floe_slice_t *v)
{
    const uint8_t *b = s->p;
    if (js_skip_value(s) < 0) return SH_ERR;
    *v = floe_slice(b, (size_t)(s->p - b));
    return SH_OK;
}

static bool is_null(floe_slice_t v)
{
    return v.len == 4 && !memcmp(v.ptr, "null", 4);
}

static bool key_is(floe_slice_t k, const char *name)
{
    return k.len == strlen(name) && !memcmp(k.ptr, name, k.len);
}

/* The members named in names[] (n of them) of the object at s->p, as
 * spans in vals[] (len 0: absent).  *other: a member not named was seen. */
static int members(sh_t *s, const char *const *names, floe_slice_t *vals, size_t n, bool *other)
{
    js_ws(s);
    if (s->p >= s->end || *s->p != '{') return js_syntax(s, "expected an object");
    s->p++;
    js_ws(s);
    for (size_t i = 0; i < n; i++) vals[i] = floe_slice(NULL, 0);
    if (other) *other = false;
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return SH_OK;
    }
    for (;;) {
        floe_slice_t k;
        if (js_key(s, &k) < 0) return SH_ERR;
        size_t i;
        for (i = 0; i < n; i++)
            if (key_is(k, names[i])) break;
        js_ws(s);
        floe_slice_t v;
        if (value_span(s, &v) < 0) return SH_ERR;
        if (i < n) vals[i] = v;
        else if (other)
            *other = true;
        int more = js_next_item(s, '}');
        if (more < 0) return SH_ERR;
        if (!more) return SH_OK;
    }
}

static void sub_scanner(sh_t *s, const sh_t *parent, floe_slice_t v)
{
    *s = *parent;
    s->start = s->p = v.ptr;
    s->end = v.ptr + v.len;
    s->depth = 0;
}

/* ---- debezium_unwrap ---------------------------------------------------- */

enum { DZ_OP, DZ_BEFORE, DZ_AFTER, DZ_TS, DZ_SOURCE, DZ_N };
static const char *const dz_names[DZ_N] = {"op", "before", "after", "ts_ms", "source"};

/* ts_ms as an RFC 3339 UTC time with milliseconds, quoted. */
static int put_ts(floe_buf_t *out, floe_slice_t v)
{
    char num[32];
    if (!v.len || is_null(v) || v.len >= sizeof num) return floe_buf_append_str(out, "null");
    memcpy(num, v.ptr, v.len);
    num[v.len] = 0;
    char *end;
    long long ms = strtoll(num, &end, 10);
    if (*end) return floe_buf_append_str(out, "null");
    long long sec = ms / 1000, rem = ms % 1000;
    if (rem < 0) {
        rem += 1000;
        sec--;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) return floe_buf_append_str(out, "null");
    return floe_buf_printf(out, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ\"", tm.tm_year + 1900,
                           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rem);
}

static int unwrap(const floe_xform_t *x, sh_t *s, floe_buf_t *out, floe_xform_op_t *op)
{
    /* the envelope: {"schema": ..., "payload": ...} when the converter
     * embedded the schema, else the payload itself */
    static const char *const env_names[] = {"schema", "payload"};
    floe_slice_t env[2];
    if (members(s, env_names, env, 2, NULL) < 0) return SH_ERR;
    floe_slice_t payload = floe_slice(s->start, (size_t)(s->end - s->start));
    if (env[1].len) {
        if (is_null(env[1])) { /* a tombstone with its schema */
            *op = FLOE_XOP_DELETE;
            return 0;
        }
        payload = env[1];
    }
    sh_t ps;
    sub_scanner(&ps, s, payload);
    floe_slice_t f[DZ_N];
    if (members(&ps, dz_names, f, DZ_N, NULL) < 0) return SH_ERR;
    floe_slice_t opv = f[DZ_OP];
    if (opv.len != 3 || opv.ptr[0] != '"' || opv.ptr[2] != '"')
        return floe_err_set(s->err, FLOE_ECORRUPT,
                            "debezium_unwrap: the value has no Debezium \"op\" (c, r, u or d)");
    floe_slice_t image;
    switch (opv.ptr[1]) {
    case 'c':
    case 'r':
        *op = FLOE_XOP_CREATE;
        image = f[DZ_AFTER];
        break;
    case 'u':
        *op = FLOE_XOP_UPDATE;
        image = f[DZ_AFTER];
        break;
    case 'd':
        *op = FLOE_XOP_DELETE;
        image = f[DZ_BEFORE];
        break;
    default:
        return floe_err_set(s->err, FLOE_ECORRUPT, "debezium_unwrap: unknown op \"%c\"",
                            opv.ptr[1]);
    }
    if (!image.len || is_null(image)) {
        if (*op != FLOE_XOP_DELETE)
            return floe_err_set(s->err, FLOE_ECORRUPT, "debezium_unwrap: op \"%c\" without \"%s\"",
                                opv.ptr[1], "after");
        image = floe_slice("{}", 2); /* a delete without its before image */
    }
    if (image.ptr[0] != '{')
        return floe_err_set(s->err, FLOE_ECORRUPT, "debezium_unwrap: the row image is no object");
    floe_buf_reset(out);
    if (!x->cdc_metadata) {
        if (floe_buf_append(out, image.ptr, image.len) < 0) return js_oom(s);
        return 1;
    }
    /* the image without its '}', then the _cdc member */
    size_t n = image.len - 1;
    while (n && image.ptr[n] != '}') n--;
    bool empty = true;
    for (size_t i = 1; i < n; i++)
        if (!isspace(image.ptr[i])) empty = false;
    if (floe_buf_append(out, image.ptr, n) < 0 ||
        floe_buf_printf(out, "%s\"_cdc\":{\"op\":\"%c\",\"ts\":", empty ? "" : ",", opv.ptr[1]) <
            0 ||
        put_ts(out, f[DZ_TS]) < 0 || floe_buf_append_str(out, ",\"source\":") < 0 ||
        (f[DZ_SOURCE].len ? floe_buf_append(out, f[DZ_SOURCE].ptr, f[DZ_SOURCE].len)
                          : floe_buf_append_str(out, "null")) < 0 ||
        floe_buf_append_str(out, "}}") < 0)
        return js_oom(s);
    return 1;
}

/* ---- flatten ------------------------------------------------------------ */

/* The members of the object at s->p onto out, nested objects' members
 * named prefix + delim + key.  *first: no member written yet. */
static int flat_object(const floe_xform_t *x, sh_t *s, floe_buf_t *name, floe_buf_t *out,
                       bool *first)
{
    if (++s->depth > s->r->opts.max_depth)
        return floe_err_set(s->err, FLOE_ERANGE, "JSON nested deeper than %d",
                            s->r->opts.max_depth);
    js_ws(s);
    if (s->p >= s->end || *s->p != '{') return js_syntax(s, "expected an object");
    s->p++;
    js_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        s->depth--;
        return SH_OK;
    }
    size_t base = name->len;
    for (;;) {
        floe_slice_t k;
        if (js_key(s, &k) < 0) return SH_ERR;
        name->len = base;
        if ((s->depth > 1 && floe_buf_append_str(name, x->delim) < 0) ||
            floe_buf_append(name, k.ptr, k.len) < 0)
            return js_oom(s);
        js_ws(s);
        if (s->p < s->end && *s->p == '{') {
            if (flat_object(x, s, name, out, first) < 0) return SH_ERR;
        } else {
            floe_slice_t v;
            if (value_span(s, &v) < 0) return SH_ERR;
            if ((!*first && floe_buf_append_u8(out, ',') < 0) ||
                floe_json_str(out, name->len ? name->data : (const uint8_t *)"", name->len) < 0 ||
                floe_buf_append_u8(out, ':') < 0 || floe_buf_append(out, v.ptr, v.len) < 0)
                return js_oom(s);
            *first = false;
        }
        int more = js_next_item(s, '}');
        if (more < 0) return SH_ERR;
        if (!more) break;
    }
    name->len = base;
    s->depth--;
    return SH_OK;
}

static int flatten(const floe_xform_t *x, sh_t *s, floe_buf_t *out)
{
    floe_buf_t name = {0};
    bool first = true;
    floe_buf_reset(out);
    int rc = floe_buf_append_u8(out, '{') < 0 ? js_oom(s) : flat_object(x, s, &name, out, &first);
    floe_buf_free(&name);
    if (rc < 0) return rc;
    if (floe_buf_append_u8(out, '}') < 0) return js_oom(s);
    return 1;
}

int floe_xform_apply(const floe_xform_t *x, floe_rows_t *rows, const uint8_t *in, size_t n,
                     bool value_null, floe_buf_t *out, floe_xform_op_t *op, floe_err_t *err)
{
    *op = FLOE_XOP_NONE;
    floe_buf_reset(out);
    floe_buf_t tmp = {0};
    int rc = 1;
    for (int i = 0; i < x->nsteps && rc == 1; i++) {
        if (value_null) {
            if (x->steps[i] == FLOE_XF_DEBEZIUM_UNWRAP) {
                *op = FLOE_XOP_DELETE;
                rc = 0;
            }
            continue; /* flatten: nothing to flatten */
        }
        sh_t s = {.r = rows, .start = in, .p = in, .end = in + n, .err = err};
        rc =
            x->steps[i] == FLOE_XF_DEBEZIUM_UNWRAP ? unwrap(x, &s, &tmp, op) : flatten(x, &s, &tmp);
        if (rc == 1) {
            js_ws(&s);
            if (x->steps[i] == FLOE_XF_FLATTEN && s.p != s.end)
                rc = js_syntax(&s, "trailing bytes after the value");
        }
        floe_buf_free(&s.key);
        if (rc < 0) break;
        /* the result becomes the next step's input */
        floe_buf_t t = *out;
        *out = tmp;
        tmp = t;
        in = out->data;
        n = out->len;
    }
    floe_buf_free(&tmp);
    if (rc < 0) return -1;
    if (rc == 1 && !x->nsteps && floe_buf_append(out, in, n) < 0) return floe_err_oom(err);
    return rc;
}
