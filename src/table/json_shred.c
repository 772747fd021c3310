/* JSON -> columns in one pass, no DOM.
 *
 * The scanner walks a record value and writes each scalar straight into its
 * leaf column with Dremel levels.  The shape guides it: a key it knows is a
 * pointer away (the next expected key is tried first, since records of one
 * topic mostly repeat their key order).  When the value needs a shape
 * change (a key never seen, a fraction in a long field), the attempt stops,
 * the row's writes are undone, the shape changes at the row boundary, and
 * the value is shredded again: shape changes are rare, rows are many. */
#include <stdlib.h>
#include <string.h>

#include "table/json_int.h"
#include "table/tstamp.h"
#include "util/mem.h"

static int misfit(sh_t *s, const floe_rnode_t *n, const char *got)
{
    return floe_err_set(s->err, FLOE_EINVAL, "field '%s' is %s, value at byte %zu is %s", n->name,
                        floe_tkind_name(n->kind), (size_t)(s->p - s->start), got);
}

/* ---- shredding --------------------------------------------------------- */

static int value(sh_t *s, floe_rnode_t *n, int rep);

static inline int push_fixed(sh_t *s, floe_rnode_t *n, int rep, const void *v, size_t w)
{
    floe_rcol_t *c = n->col;
    if (floe_rcol_push_level(c, n->def, rep) < 0 || floe_rbuf_put(&c->vals, v, w) < 0)
        return js_oom(s);
    c->nvals++;
    return SH_OK;
}

static int null_at(sh_t *s, floe_rnode_t *n, int rep)
{
    if (n->required) return misfit(s, n, "null");
    n->schema_nullable = true; /* a column an Avro schema made stays optional */
    if (floe_rows_write_nulls(n, n->def - 1, rep) < 0) return js_oom(s);
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
    js_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        s->depth--;
        if (floe_rows_write_nulls(e, l->def, rep) < 0) return js_oom(s); /* empty */
        return SH_OK;
    }
    for (int i = 0;; i++) {
        int r = i ? e->rep : rep;
        if (s->p < s->end && *s->p == 'n') {
            if (js_lit(s, "null", 4) < 0) return SH_ERR;
            if (floe_rows_write_nulls(e, l->def + 1, r) < 0) return js_oom(s);
        } else {
            int rc = value(s, e, r);
            if (rc < 0) return rc;
        }
        int k = js_next_item(s, ']');
        if (k > 0) continue;
        if (k < 0) return SH_ERR;
        s->depth--;
        return SH_OK;
    }
}

static const char *json_kind(uint8_t c);

/* The value at s->p does not fit n: report it, unless the value is not even
 * valid JSON, which is the better reason. */
static int misfit_value(sh_t *s, const floe_rnode_t *n)
{
    const uint8_t *at = s->p;
    int depth = s->depth;
    if (js_skip_value(s) < 0) return SH_ERR;
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
    return js_string_into(s, &s->key);
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
        if (c == '"' || js_skip_value(s) < 0) goto misfit;
        floe_rcol_t *col = n->col;
        if (floe_buf_append(&col->bytes, at, (size_t)(s->p - at)) < 0) return js_oom(s);
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
        if (js_number(&sub, &is_int, &iv, &dv) < 0 || sub.p != sub.end) goto misfit;
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
    if (s->p >= s->end) return js_syntax(s, "expected a value");
    uint8_t c = *s->p;
    if (c == 'n') {
        if (js_lit(s, "null", 4) < 0) return SH_ERR;
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
        if (js_string_into(s, &col->bytes) < 0) return SH_ERR;
        if (col->bytes.len > UINT32_MAX)
            return floe_err_set(s->err, FLOE_ERANGE, "string column over 4 GiB");
        uint32_t end = (uint32_t)col->bytes.len;
        return push_fixed(s, n, rep, &end, 4);
    }
    case FLOE_TK_BOOL:
        if (c == 't') {
            if (js_lit(s, "true", 4) < 0) return SH_ERR;
            uint8_t b = 1;
            return push_fixed(s, n, rep, &b, 1);
        }
        if (c == 'f') {
            if (js_lit(s, "false", 5) < 0) return SH_ERR;
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
        if (js_number(s, &is_int, &iv, &dv) < 0) return SH_ERR;
        if (n->kind == FLOE_TK_DOUBLE) {
            if (is_int) dv = (double)iv;
            return push_fixed(s, n, rep, &dv, 8);
        }
        if (is_int) return push_fixed(s, n, rep, &iv, 8);
        if (!s->r->opts.widen_long_to_double || n->pinned || n->required) {
            s->p = at;
            if (n->pinned) s->r->widen_refused++;
            return misfit(s, n, n->pinned && n->pin_why ? n->pin_why : "a fraction");
        }
        if (n->hold) { /* the table's column widens first (table/widen.c) */
            s->p = at;
            s->r->held = n->field_id;
            return misfit(s, n, "a fraction (the column must widen to double first)");
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
    js_ws(s);
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
                    js_ws(s);
                    if (s->p >= s->end || *s->p != ':') return js_syntax(s, "expected ':'");
                    s->p++;
                    js_ws(s);
                    kid = g;
                    st->hint = h + 1;
                }
            }
            if (!kid) {
                if (js_key(s, &k) < 0) return SH_ERR;
                kid = find_kid(st, k);
            }
            if (!kid) {
                floe_rnode_t *sub;
                /* an escaped key sits in s->key, which skipping reuses */
                char kb[256], *kname = kb;
                if (k.len >= sizeof kb && !(kname = malloc(k.len + 1))) return js_oom(s);
                memcpy(kname, k.ptr, k.len);
                int irc = js_infer(s, (const uint8_t *)kname, k.len, &sub);
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
            int more = js_next_item(s, '}');
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
            kid->schema_nullable = true;
            if (floe_rows_write_nulls(kid, st->def, rep) < 0) return js_oom(s);
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
                js_oom(&s);
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
        js_ws(&s);
        if (s.p >= s.end || *s.p != '{') {
            /* not an object: say so only when it is valid JSON at all */
            const uint8_t *v = s.p;
            if (s.p >= s.end) {
                rc = js_syntax(&s, "empty value");
            } else if (js_skip_value(&s) == 0) {
                js_ws(&s);
                rc = s.p != s.end ? js_syntax(&s, "trailing bytes after the value")
                                  : floe_err_set(err, FLOE_EINVAL,
                                                 "JSON value is %s, not an object", json_kind(*v));
            }
            rc = -1;
            break;
        }
        bool is_root = parent == &r->root;
        rc = object(&s, parent, parent->rep, ++r->stamp_seq, !is_root);
        if (rc == SH_OK) {
            js_ws(&s);
            if (s.p != s.end) rc = js_syntax(&s, "trailing bytes after the value");
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
