/* Partition specs (parse, validate, paths) and sort orders. */
#include "iceberg/spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

floe_ice_spec_t *floe_ice_spec_new(int32_t spec_id)
{
    floe_ice_spec_t *s = calloc(1, sizeof *s);
    if (s) s->spec_id = spec_id;
    return s;
}

void floe_ice_spec_free(floe_ice_spec_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nfields; i++) free(s->fields[i].name);
    free(s->fields);
    free(s);
}

int floe_ice_spec_add(floe_ice_spec_t *s, int32_t source_id, int32_t field_id, const char *name,
                      floe_ice_transform_t t)
{
    floe_ice_partition_field_t *nf = realloc(s->fields, (s->nfields + 1) * sizeof *nf);
    if (!nf) return -1;
    s->fields = nf;
    char *n = strdup(name);
    if (!n) return -1;
    nf[s->nfields].source_id = source_id;
    nf[s->nfields].field_id = field_id;
    nf[s->nfields].name = n;
    nf[s->nfields].transform = t;
    s->nfields++;
    return 0;
}

floe_ice_spec_t *floe_ice_spec_dup(const floe_ice_spec_t *s)
{
    floe_ice_spec_t *c = floe_ice_spec_new(s->spec_id);
    if (!c) return NULL;
    for (size_t i = 0; i < s->nfields; i++)
        if (floe_ice_spec_add(c, s->fields[i].source_id, s->fields[i].field_id, s->fields[i].name,
                              s->fields[i].transform) < 0) {
            floe_ice_spec_free(c);
            return NULL;
        }
    return c;
}

bool floe_ice_spec_same(const floe_ice_spec_t *a, const floe_ice_spec_t *b)
{
    if (a->nfields != b->nfields) return false;
    for (size_t i = 0; i < a->nfields; i++) {
        const floe_ice_partition_field_t *x = &a->fields[i], *y = &b->fields[i];
        if (x->source_id != y->source_id || x->field_id != y->field_id ||
            x->transform.kind != y->transform.kind || x->transform.param != y->transform.param ||
            strcmp(x->name, y->name) != 0)
            return false;
    }
    return true;
}

int floe_ice_spec_validate(const floe_ice_spec_t *s, const floe_ice_schema_t *schema,
                           floe_err_t *err)
{
    for (size_t i = 0; i < s->nfields; i++) {
        const floe_ice_partition_field_t *pf = &s->fields[i];
        const floe_ice_field_t *src = floe_ice_schema_find(schema, pf->source_id);
        if (!src && pf->transform.kind != FLOE_ICE_T_VOID)
            return floe_err_set(err, FLOE_EINVAL,
                                "partition field '%s': source id %d not in schema", pf->name,
                                pf->source_id);
        if (src && !floe_ice_transform_can_apply(pf->transform, src->type)) {
            char a[32], b[48];
            return floe_err_set(err, FLOE_EINVAL, "partition field '%s': %s does not apply to %s",
                                pf->name, floe_ice_transform_name(pf->transform, b, sizeof b),
                                floe_ice_type_name(src->type, a, sizeof a));
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->fields[j].name, pf->name) == 0 || s->fields[j].field_id == pf->field_id)
                return floe_err_set(err, FLOE_EINVAL, "duplicate partition field '%s'", pf->name);
    }
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static bool all_digits(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

/* One item: "col", "fn(col)", "fn(col, N)" or "fn(N, col)". */
static int parse_item(floe_ice_spec_t *spec, const floe_ice_schema_t *schema, char *item,
                      int32_t *last_id, floe_err_t *err)
{
    item = trim(item);
    if (!*item) return floe_err_set(err, FLOE_EINVAL, "empty partition item");
    char *col = item, *fn = NULL, *arg = NULL;
    char *lp = strchr(item, '(');
    if (lp) {
        char *rp = strrchr(item, ')');
        if (!rp || rp < lp || *trim(rp + 1))
            return floe_err_set(err, FLOE_EINVAL, "partition item '%.64s': missing ')'", item);
        *lp = '\0';
        *rp = '\0';
        fn = trim(item);
        col = lp + 1;
        char *comma = strchr(col, ',');
        if (comma) {
            *comma = '\0';
            arg = trim(comma + 1);
            col = trim(col);
            if (all_digits(col) && !all_digits(arg)) {
                char *t = col;
                col = arg;
                arg = t;
            }
        }
        col = trim(col);
    }
    floe_ice_transform_t t = {FLOE_ICE_T_IDENTITY, 0};
    const char *suffix = "";
    char sfx[16];
    if (fn) {
        char tname[64];
        for (char *p = fn; *p; p++) *p = (char)tolower((unsigned char)*p);
        if (strcmp(fn, "bucket") == 0 || strcmp(fn, "truncate") == 0) {
            if (!arg || !all_digits(arg))
                return floe_err_set(err, FLOE_EINVAL, "%s(%.64s): needs a width/count", fn, col);
            snprintf(tname, sizeof tname, "%s[%s]", fn, arg);
        } else {
            if (arg)
                return floe_err_set(err, FLOE_EINVAL, "%s(%.64s): takes no parameter", fn, col);
            if (strcmp(fn, "years") == 0) fn = "year";
            else if (strcmp(fn, "months") == 0)
                fn = "month";
            else if (strcmp(fn, "days") == 0)
                fn = "day";
            else if (strcmp(fn, "hours") == 0)
                fn = "hour";
            snprintf(tname, sizeof tname, "%s", fn);
        }
        if (floe_ice_transform_parse(tname, &t, err) < 0) return -1;
        suffix = t.kind == FLOE_ICE_T_BUCKET     ? "_bucket"
                 : t.kind == FLOE_ICE_T_TRUNCATE ? "_trunc"
                 : t.kind == FLOE_ICE_T_VOID     ? "_null"
                 : t.kind == FLOE_ICE_T_IDENTITY ? ""
                                                 : NULL;
        if (!suffix) {
            snprintf(sfx, sizeof sfx, "_%s", fn);
            suffix = sfx;
        }
    }
    const floe_ice_field_t *f = floe_ice_schema_find_name(schema, col);
    if (!f)
        return floe_err_set(err, FLOE_EINVAL, "partition source column '%.64s' not in schema", col);
    if (!floe_ice_transform_can_apply(t, f->type)) {
        char a[32], b[48];
        return floe_err_set(
            err, FLOE_EINVAL, "transform %s cannot apply to column '%.64s' of type %s",
            floe_ice_transform_name(t, b, sizeof b), col, floe_ice_type_name(f->type, a, sizeof a));
    }
    char name[300];
    snprintf(name, sizeof name, "%s%s", col, suffix);
    for (char *p = name; *p; p++)
        if (*p == '.') *p = '_';
    int32_t id = ++*last_id;
    if (floe_ice_spec_add(spec, f->id, id, name, t) < 0) return floe_err_oom(err);
    return 0;
}

floe_ice_spec_t *floe_ice_spec_parse(const floe_ice_schema_t *schema, const char *text,
                                     int32_t spec_id, int32_t *last_partition_id, floe_err_t *err)
{
    floe_ice_spec_t *spec = floe_ice_spec_new(spec_id);
    char *copy = strdup(text ? text : "");
    if (!spec || !copy) {
        floe_ice_spec_free(spec);
        free(copy);
        floe_err_oom(err);
        return NULL;
    }
    int32_t last = *last_partition_id < 999 ? 999 : *last_partition_id;
    char *p = copy;
    if (*trim(copy)) {
        for (;;) {
            int depth = 0;
            char *q = p;
            while (*q && !(*q == ',' && depth == 0)) {
                if (*q == '(') depth++;
                else if (*q == ')')
                    depth--;
                q++;
            }
            bool end = *q == '\0';
            *q = '\0';
            if (parse_item(spec, schema, p, &last, err) < 0) goto fail;
            if (end) break;
            p = q + 1;
        }
    }
    if (floe_ice_spec_validate(spec, schema, err) < 0) goto fail;
    free(copy);
    *last_partition_id = last;
    return spec;
fail:
    free(copy);
    floe_ice_spec_free(spec);
    return NULL;
}

floe_ice_type_t *floe_ice_spec_partition_type(const floe_ice_spec_t *s,
                                              const floe_ice_schema_t *schema, floe_err_t *err)
{
    floe_ice_type_t *st = floe_ice_type_struct();
    if (!st) {
        floe_err_oom(err);
        return NULL;
    }
    for (size_t i = 0; i < s->nfields; i++) {
        const floe_ice_partition_field_t *pf = &s->fields[i];
        const floe_ice_field_t *src = floe_ice_schema_find(schema, pf->source_id);
        floe_ice_type_t *rt;
        if (!src) {
            if (pf->transform.kind != FLOE_ICE_T_VOID) {
                floe_err_set(err, FLOE_EINVAL, "partition source %d missing", pf->source_id);
                floe_ice_type_free(st);
                return NULL;
            }
            rt = floe_ice_type_prim(FLOE_ICE_INT);
        } else {
            rt = floe_ice_transform_result_type(pf->transform, src->type, err);
        }
        if (!rt || floe_ice_struct_add(st, pf->field_id, pf->name, false, rt, NULL) < 0) {
            if (rt) floe_err_oom(err);
            floe_ice_type_free(st);
            return NULL;
        }
    }
    return st;
}

static int url_escape(floe_buf_t *out, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '*') {
            if (floe_buf_append_u8(out, c) < 0) return -1;
        } else if (c == ' ') {
            if (floe_buf_append_u8(out, '+') < 0) return -1;
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            if (floe_buf_append(out, e, 3) < 0) return -1;
        }
    }
    return 0;
}

int floe_ice_spec_partition_path(const floe_ice_spec_t *s, const floe_ice_value_t *values,
                                 floe_buf_t *out, floe_err_t *err)
{
    floe_buf_t h = FLOE_BUF_INIT;
    for (size_t i = 0; i < s->nfields; i++) {
        h.len = 0;
        if ((i && floe_buf_append_u8(out, '/') < 0) ||
            url_escape(out, (const uint8_t *)s->fields[i].name, strlen(s->fields[i].name)) < 0 ||
            floe_buf_append_u8(out, '=') < 0 ||
            floe_ice_transform_human(s->fields[i].transform, &values[i], &h) < 0 ||
            url_escape(out, h.data, h.len) < 0) {
            floe_buf_free(&h);
            return floe_err_oom(err);
        }
    }
    floe_buf_free(&h);
    return 0;
}

floe_ice_sort_order_t *floe_ice_sort_order_new(int32_t order_id)
{
    floe_ice_sort_order_t *o = calloc(1, sizeof *o);
    if (o) o->order_id = order_id;
    return o;
}

void floe_ice_sort_order_free(floe_ice_sort_order_t *o)
{
    if (!o) return;
    free(o->fields);
    free(o);
}

int floe_ice_sort_order_add(floe_ice_sort_order_t *o, floe_ice_sort_field_t f)
{
    floe_ice_sort_field_t *nf = realloc(o->fields, (o->nfields + 1) * sizeof *nf);
    if (!nf) return -1;
    o->fields = nf;
    nf[o->nfields++] = f;
    return 0;
}

floe_ice_sort_order_t *floe_ice_sort_order_dup(const floe_ice_sort_order_t *o)
{
    floe_ice_sort_order_t *c = floe_ice_sort_order_new(o->order_id);
    if (!c) return NULL;
    for (size_t i = 0; i < o->nfields; i++)
        if (floe_ice_sort_order_add(c, o->fields[i]) < 0) {
            floe_ice_sort_order_free(c);
            return NULL;
        }
    return c;
}
