/* Type inference for the JSON shredder: the shape of a value under a key
 * the shape does not know yet, merged across the elements of arrays. */
#include <stdlib.h>
#include <string.h>

#include "table/json_int.h"
#include "table/tstamp.h"

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
            js_oom(s);
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
        js_oom(s);
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
int js_infer(sh_t *s, const uint8_t *name, size_t name_len, floe_rnode_t **out)
{
    *out = NULL;
    if (s->p >= s->end) return js_syntax(s, "expected a value");
    floe_tkind_t k;
    switch (*s->p) {
    case '"': {
        k = FLOE_TK_STRING;
        if (js_skip_value(s) < 0) return SH_ERR; /* leaves the text in s->key */
        int64_t us;
        if (s->r->opts.infer_timestamps && floe_tstamp_parse(s->key.data, s->key.len, &us))
            k = FLOE_TK_TIMESTAMPTZ;
        break;
    }
    case 't':
    case 'f':
        k = FLOE_TK_BOOL;
        if (js_skip_value(s) < 0) return SH_ERR;
        break;
    case 'n': return js_lit(s, "null", 4);
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
        js_ws(s);
        if (s->p < s->end && *s->p == close) {
            s->p++;
            s->depth--;
            return SH_OK;
        }
        for (;;) {
            floe_rnode_t *kid;
            if (obj) {
                floe_slice_t kn;
                if (js_key(s, &kn) < 0) goto fail;
                /* the key may live in s->key, which infer reuses: copy */
                char kb[256];
                char *kname = kb;
                if (kn.len >= sizeof kb && !(kname = malloc(kn.len + 1))) {
                    js_oom(s);
                    goto fail;
                }
                memcpy(kname, kn.ptr, kn.len);
                int rc = js_infer(s, (const uint8_t *)kname, kn.len, &kid);
                if (rc == 0 && kid) {
                    floe_rnode_t *st = floe_rnode_new((const char *)name, name_len, FLOE_TK_STRUCT);
                    if (!st || floe_rnode_add_kid(st, kid) < 0) {
                        floe_rnode_free(st);
                        floe_rnode_free(kid);
                        if (kname != kb) free(kname);
                        js_oom(s);
                        goto fail;
                    }
                    kid = st;
                }
                if (kname != kb) free(kname);
                if (rc < 0) goto fail;
            } else {
                if (js_infer(s, (const uint8_t *)"element", 7, &kid) < 0) goto fail;
                if (kid) {
                    floe_rnode_t *l = floe_rnode_new((const char *)name, name_len, FLOE_TK_LIST);
                    if (!l || floe_rnode_add_kid(l, kid) < 0) {
                        floe_rnode_free(l);
                        floe_rnode_free(kid);
                        js_oom(s);
                        goto fail;
                    }
                    kid = l;
                }
            }
            acc = merge(s, acc, kid, &failed);
            if (failed) return SH_ERR;
            int k = js_next_item(s, close);
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
        if (js_number(s, &is_int, &iv, &dv) < 0) return SH_ERR;
        k = is_int ? FLOE_TK_LONG : FLOE_TK_DOUBLE;
        break;
    }
    }
    if (!(*out = floe_rnode_new((const char *)name, name_len, k))) return js_oom(s);
    return SH_OK;
}
