/* .proto text -> floe_proto_file_t (proto.h): the proto2 and proto3
 * language guides' grammar for messages, enums, fields, maps, oneofs,
 * reserved ranges, options (kept: packed, default, allow_alias; the rest
 * read and dropped), imports and packages; services and extensions are
 * read and dropped. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto_int.h"

typedef enum { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STR, T_SYM } tok_kind_t;

typedef struct parser {
    const char *p, *end, *line_start;
    int line;
    /* the current token */
    tok_kind_t kind;
    const char *tok;
    size_t len;
    char sym;
    floe_buf_t str; /* a string token's unescaped bytes */
    floe_proto_file_t *f;
    floe_err_t *err;
    int depth;
} parser_t;

static int fail(parser_t *ps, const char *what)
{
    return floe_err_set(ps->err, FLOE_EINVAL, "proto: %s at line %d column %d", what, ps->line,
                        (int)(ps->tok - ps->line_start) + 1);
}

static void skip_space(parser_t *ps)
{
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n') {
            ps->line++;
            ps->line_start = ++ps->p;
        } else if (isspace((unsigned char)c)) {
            ps->p++;
        } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '/') {
            while (ps->p < ps->end && *ps->p != '\n') ps->p++;
        } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '*') {
            ps->p += 2;
            while (ps->p < ps->end && !(*ps->p == '*' && ps->p + 1 < ps->end && ps->p[1] == '/')) {
                if (*ps->p == '\n') {
                    ps->line++;
                    ps->line_start = ps->p + 1;
                }
                ps->p++;
            }
            ps->p = ps->p + 2 <= ps->end ? ps->p + 2 : ps->end;
        } else {
            break;
        }
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* One quoted string (the opening quote at ps->p) appended to ps->str. */
static int lex_string(parser_t *ps)
{
    char q = *ps->p++;
    while (ps->p < ps->end && *ps->p != q) {
        char c = *ps->p++;
        if (c == '\n') return fail(ps, "newline in a string");
        if (c != '\\') {
            if (floe_buf_append_u8(&ps->str, (uint8_t)c)) return floe_err_oom(ps->err);
            continue;
        }
        if (ps->p >= ps->end) break;
        c = *ps->p++;
        unsigned v;
        switch (c) {
        case 'n': v = '\n'; break;
        case 't': v = '\t'; break;
        case 'r': v = '\r'; break;
        case 'a': v = '\a'; break;
        case 'b': v = '\b'; break;
        case 'f': v = '\f'; break;
        case 'v': v = '\v'; break;
        case 'x':
        case 'X': {
            v = 0;
            int k = 0;
            while (k < 2 && ps->p < ps->end && hexval(*ps->p) >= 0)
                v = v * 16 + (unsigned)hexval(*ps->p++), k++;
            if (!k) return fail(ps, "bad \\x escape");
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                v = (unsigned)(c - '0');
                for (int k = 0; k < 2 && ps->p < ps->end && *ps->p >= '0' && *ps->p <= '7'; k++)
                    v = v * 8 + (unsigned)(*ps->p++ - '0');
                if (v > 255) return fail(ps, "octal escape above 255");
            } else {
                v = (unsigned char)c; /* \\ \' \" \? */
            }
        }
        if (floe_buf_append_u8(&ps->str, (uint8_t)v)) return floe_err_oom(ps->err);
    }
    if (ps->p >= ps->end) return fail(ps, "unterminated string");
    ps->p++;
    return 0;
}

static int next(parser_t *ps)
{
    skip_space(ps);
    ps->tok = ps->p;
    if (ps->p >= ps->end) {
        ps->kind = T_EOF;
        ps->len = 0;
        return 0;
    }
    char c = *ps->p;
    if (isalpha((unsigned char)c) || c == '_') {
        while (ps->p < ps->end &&
               (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.'))
            ps->p++;
        ps->kind = T_IDENT;
    } else if (isdigit((unsigned char)c) ||
               (c == '.' && ps->p + 1 < ps->end && isdigit((unsigned char)ps->p[1]))) {
        bool flt = false;
        while (ps->p < ps->end &&
               (isalnum((unsigned char)*ps->p) || *ps->p == '.' ||
                ((*ps->p == '+' || *ps->p == '-') && (ps->p[-1] == 'e' || ps->p[-1] == 'E') &&
                 !(ps->tok[0] == '0' && ps->p - ps->tok > 1 &&
                   (ps->tok[1] == 'x' || ps->tok[1] == 'X'))))) {
            if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E') flt = true;
            ps->p++;
        }
        if (ps->tok[0] == '0' && ps->p - ps->tok > 1 && (ps->tok[1] == 'x' || ps->tok[1] == 'X'))
            flt = false;
        ps->kind = flt ? T_FLOAT : T_INT;
    } else if (c == '"' || c == '\'') {
        floe_buf_reset(&ps->str);
        if (lex_string(ps)) return -1;
        /* adjacent strings concatenate */
        for (;;) {
            const char *save = ps->p, *ls = ps->line_start;
            int line = ps->line;
            skip_space(ps);
            if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\'')) {
                if (lex_string(ps)) return -1;
                continue;
            }
            ps->p = save;
            ps->line_start = ls;
            ps->line = line;
            break;
        }
        ps->kind = T_STR;
    } else {
        ps->p++;
        ps->kind = T_SYM;
        ps->sym = c;
    }
    ps->len = (size_t)(ps->p - ps->tok);
    return 0;
}

static bool is_sym(const parser_t *ps, char c)
{
    return ps->kind == T_SYM && ps->sym == c;
}

static bool is_word(const parser_t *ps, const char *w)
{
    return ps->kind == T_IDENT && ps->len == strlen(w) && !memcmp(ps->tok, w, ps->len);
}

static int expect_sym(parser_t *ps, char c)
{
    if (!is_sym(ps, c)) {
        char m[32] = "expected 'X'";
        m[10] = c;
        return fail(ps, m);
    }
    return next(ps);
}

static const char *take_ident(parser_t *ps, bool dotted_ok)
{
    if (ps->kind != T_IDENT && !(dotted_ok && is_sym(ps, '.'))) {
        fail(ps, "expected a name");
        return NULL;
    }
    floe_buf_t b = FLOE_BUF_INIT;
    if (is_sym(ps, '.')) { /* a fully qualified ".pkg.T" */
        if (next(ps) || ps->kind != T_IDENT) {
            fail(ps, "expected a name after '.'");
            return NULL;
        }
        floe_buf_append_u8(&b, '.');
    }
    if (!dotted_ok && memchr(ps->tok, '.', ps->len)) {
        fail(ps, "a dotted name where a simple one belongs");
        floe_buf_free(&b);
        return NULL;
    }
    bool bad = ps->tok[ps->len - 1] == '.';
    for (size_t i = 0; i + 1 < ps->len; i++)
        if (ps->tok[i] == '.' && (ps->tok[i + 1] == '.' || isdigit((unsigned char)ps->tok[i + 1])))
            bad = true;
    if (bad) {
        fail(ps, "malformed dotted name");
        floe_buf_free(&b);
        return NULL;
    }
    floe_buf_append(&b, ps->tok, ps->len);
    const char *out = b.data ? proto_strdup(ps->f, (const char *)b.data, b.len) : NULL;
    floe_buf_free(&b);
    if (!out) {
        floe_err_oom(ps->err);
        return NULL;
    }
    if (next(ps)) return NULL;
    return out;
}

/* An integer token (with an optional leading '-' already seen as neg). */
static int take_int(parser_t *ps, bool neg, int64_t lo, int64_t hi, int64_t *out)
{
    if (ps->kind != T_INT) return fail(ps, "expected an integer");
    char buf[64];
    if (ps->len >= sizeof buf) return fail(ps, "integer too long");
    memcpy(buf, ps->tok, ps->len);
    buf[ps->len] = 0;
    char *e;
    unsigned long long v = strtoull(buf, &e, 0);
    if (*e || v > (unsigned long long)INT64_MAX) return fail(ps, "bad integer");
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < lo || x > hi) return fail(ps, "integer out of range");
    *out = x;
    return next(ps);
}

/* Skip a balanced { ... } (the '{' is the current token). */
static int skip_block(parser_t *ps)
{
    int level = 0;
    do {
        if (ps->kind == T_EOF) return fail(ps, "unbalanced braces");
        if (is_sym(ps, '{')) level++;
        if (is_sym(ps, '}')) level--;
        if (next(ps)) return -1;
    } while (level > 0);
    return 0;
}

/* An option's value, kept as text in *text (strings unescaped), or a
 * skipped aggregate {...} (*text NULL). */
static int take_constant(parser_t *ps, const char **text, bool *is_str)
{
    *text = NULL;
    *is_str = false;
    if (is_sym(ps, '{')) return skip_block(ps);
    bool neg = false;
    if (is_sym(ps, '-') || is_sym(ps, '+')) {
        neg = ps->sym == '-';
        if (next(ps)) return -1;
    }
    if (ps->kind == T_STR) {
        *is_str = true;
        *text = proto_strdup(ps->f, ps->str.data ? (const char *)ps->str.data : "", ps->str.len);
    } else if (ps->kind == T_INT || ps->kind == T_FLOAT || ps->kind == T_IDENT) {
        floe_buf_t b = FLOE_BUF_INIT;
        if (neg) floe_buf_append_u8(&b, '-');
        floe_buf_append(&b, ps->tok, ps->len);
        *text = b.data ? proto_strdup(ps->f, (const char *)b.data, b.len) : NULL;
        floe_buf_free(&b);
    } else {
        return fail(ps, "expected a constant");
    }
    if (!*text) return floe_err_oom(ps->err);
    return next(ps);
}

/* An option name: ident or (full.ident) with .ident parts; as text. */
static int take_option_name(parser_t *ps, char *out, size_t outsz)
{
    size_t k = 0;
    for (;;) {
        if (is_sym(ps, '(')) {
            if (next(ps)) return -1;
            if (is_sym(ps, '.') && next(ps)) return -1;
            if (ps->kind != T_IDENT) return fail(ps, "expected an option name");
            if (next(ps) || expect_sym(ps, ')')) return -1;
            if (k < outsz - 1) out[k++] = '(';
        } else if (ps->kind == T_IDENT) {
            size_t n = ps->len < outsz - 1 - k ? ps->len : outsz - 1 - k;
            memcpy(out + k, ps->tok, n);
            k += n;
            if (next(ps)) return -1;
        } else {
            return fail(ps, "expected an option name");
        }
        if (!is_sym(ps, '.')) break;
        if (next(ps)) return -1;
    }
    out[k] = 0;
    return 0;
}

/* `option name = constant ;` after the keyword. */
static int take_option(parser_t *ps, char *name, size_t namesz, const char **val, bool *is_str)
{
    if (take_option_name(ps, name, namesz) || expect_sym(ps, '=') || take_constant(ps, val, is_str))
        return -1;
    return expect_sym(ps, ';');
}

static int scalar_type(const char *s, size_t n)
{
    for (int t = FLOE_PT_DOUBLE; t <= FLOE_PT_SINT64; t++) {
        const char *k = floe_proto_type_name(t);
        if (k && strlen(k) == n && !memcmp(k, s, n)) return t;
    }
    return 0;
}

/* [name = value, ...] after a field. */
static int field_options(parser_t *ps, floe_proto_field_t *fd)
{
    if (!is_sym(ps, '[')) return 0;
    if (next(ps)) return -1;
    for (;;) {
        char name[128];
        const char *val;
        bool is_str;
        if (take_option_name(ps, name, sizeof name) || expect_sym(ps, '=') ||
            take_constant(ps, &val, &is_str))
            return -1;
        if (!strcmp(name, "packed") && val) fd->packed = !strcmp(val, "true");
        if (!strcmp(name, "default")) {
            /* protoc's rule: a quoted default only for string and bytes
             * (a number, bool or enum default is a bare token) */
            bool named = fd->type || fd->type_name;
            if (is_str && named && fd->type != FLOE_PT_STRING && fd->type != FLOE_PT_BYTES)
                return fail(ps, "a quoted default is only for string and bytes fields");
            fd->default_value = val;
        }
        if (is_sym(ps, ']')) break;
        if (expect_sym(ps, ',')) return -1;
    }
    return next(ps);
}

static int parse_enum(parser_t *ps, floe_proto_enum_t *e)
{
    if (!(e->name = take_ident(ps, false)) || expect_sym(ps, '{')) return -1;
    while (!is_sym(ps, '}')) {
        if (ps->kind == T_EOF) return fail(ps, "unterminated enum");
        if (is_sym(ps, ';')) {
            if (next(ps)) return -1;
        } else if (is_word(ps, "option")) {
            char name[128];
            const char *val;
            bool is_str;
            if (next(ps) || take_option(ps, name, sizeof name, &val, &is_str)) return -1;
            if (!strcmp(name, "allow_alias") && val) e->allow_alias = !strcmp(val, "true");
        } else if (is_word(ps, "reserved")) {
            while (!is_sym(ps, ';')) {
                if (ps->kind == T_EOF) return fail(ps, "unterminated reserved");
                if (next(ps)) return -1;
            }
            if (next(ps)) return -1;
        } else {
            floe_proto_enum_value_t *v = proto_push((void **)&e->vals, &e->nvals, sizeof *v);
            if (!v) return floe_err_oom(ps->err);
            if (!(v->name = take_ident(ps, false)) || expect_sym(ps, '=')) return -1;
            bool neg = is_sym(ps, '-');
            int64_t n;
            if ((neg && next(ps)) || take_int(ps, neg, INT32_MIN, INT32_MAX, &n)) return -1;
            v->number = (int32_t)n;
            floe_proto_field_t scratch = {0};
            if (field_options(ps, &scratch) || expect_sym(ps, ';')) return -1;
        }
    }
    if (!e->nvals) return fail(ps, "an enum needs at least one value");
    return next(ps);
}

static int parse_message(parser_t *ps, floe_proto_msg_t *m);

static int parse_reserved(parser_t *ps, floe_proto_msg_t *m)
{
    for (;;) {
        if (ps->kind == T_STR) {
            const char **n =
                proto_push((void **)&m->reserved_names, &m->nreserved_names, sizeof *n);
            if (!n) return floe_err_oom(ps->err);
            *n = proto_strdup(ps->f, ps->str.data ? (const char *)ps->str.data : "", ps->str.len);
            if (!*n) return floe_err_oom(ps->err);
            if (next(ps)) return -1;
        } else if (ps->kind == T_IDENT && !is_word(ps, "max")) { /* editions spell names bare */
            const char **n =
                proto_push((void **)&m->reserved_names, &m->nreserved_names, sizeof *n);
            if (!n || !(*n = take_ident(ps, false))) return n ? -1 : floe_err_oom(ps->err);
        } else {
            int64_t lo, hi;
            if (take_int(ps, false, 1, 536870911, &lo)) return -1;
            hi = lo;
            if (is_word(ps, "to")) {
                if (next(ps)) return -1;
                if (is_word(ps, "max")) {
                    hi = 536870911;
                    if (next(ps)) return -1;
                } else if (take_int(ps, false, lo, 536870911, &hi)) {
                    return -1;
                }
            }
            floe_proto_range_t *r = proto_push((void **)&m->reserved, &m->nreserved, sizeof *r);
            if (!r) return floe_err_oom(ps->err);
            r->start = (int32_t)lo;
            r->end = (int32_t)hi + 1;
        }
        if (is_sym(ps, ';')) return next(ps);
        if (expect_sym(ps, ',')) return -1;
    }
}

/* One field, after its label (label 0: none written). */
static int parse_field(parser_t *ps, floe_proto_msg_t *m, int label, int32_t oneof)
{
    floe_proto_field_t *fd;
    if (is_word(ps, "group")) return fail(ps, "groups are not supported");
    if (is_word(ps, "map")) {
        if (label) return fail(ps, "a map field takes no label");
        if (oneof >= 0) return fail(ps, "a map field cannot be in a oneof");
        if (next(ps) || expect_sym(ps, '<')) return -1;
        int kt = ps->kind == T_IDENT ? scalar_type(ps->tok, ps->len) : 0;
        if (!kt || kt == FLOE_PT_DOUBLE || kt == FLOE_PT_FLOAT || kt == FLOE_PT_BYTES)
            return fail(ps, "a map key must be an integral or string type");
        if (next(ps) || expect_sym(ps, ',')) return -1;
        int vt = ps->kind == T_IDENT ? scalar_type(ps->tok, ps->len) : 0;
        const char *vname = NULL;
        if (vt) {
            if (next(ps)) return -1;
        } else if (!(vname = take_ident(ps, true))) {
            return -1;
        }
        if (expect_sym(ps, '>')) return -1;
        const char *name = take_ident(ps, false);
        if (!name) return -1;
        floe_proto_msg_t *e = proto_push((void **)&m->msgs, &m->nmsgs, sizeof *e);
        if (!e) return floe_err_oom(ps->err);
        e->map_entry = true;
        if (!(e->name = proto_map_entry_name(ps->f, name))) return floe_err_oom(ps->err);
        floe_proto_field_t *k = proto_add_field(e);
        if (!k) return floe_err_oom(ps->err);
        *k = (floe_proto_field_t){.name = "key",
                                  .number = 1,
                                  .label = FLOE_PL_OPTIONAL,
                                  .type = kt,
                                  .oneof = -1,
                                  .packed = -1};
        floe_proto_field_t *v = proto_add_field(e);
        if (!v) return floe_err_oom(ps->err);
        *v = (floe_proto_field_t){.name = "value",
                                  .number = 2,
                                  .label = FLOE_PL_OPTIONAL,
                                  .type = vt,
                                  .type_name = vname,
                                  .oneof = -1,
                                  .packed = -1};
        if (!(fd = proto_add_field(m))) return floe_err_oom(ps->err);
        fd->name = name;
        fd->label = FLOE_PL_REPEATED;
        fd->type = FLOE_PT_MESSAGE;
        fd->type_name = e->name;
    } else {
        if (!(fd = proto_add_field(m))) return floe_err_oom(ps->err);
        int t = ps->kind == T_IDENT ? scalar_type(ps->tok, ps->len) : 0;
        if (t) {
            fd->type = t;
            if (next(ps)) return -1;
        } else if (!(fd->type_name = take_ident(ps, true))) {
            return -1;
        }
        if (!(fd->name = take_ident(ps, false))) return -1;
        fd->label =
            label == FLOE_PL_REQUIRED || label == FLOE_PL_REPEATED ? label : FLOE_PL_OPTIONAL;
        fd->oneof = oneof;
        fd->proto3_optional = ps->f->syntax == 3 && label == FLOE_PL_OPTIONAL;
    }
    int64_t num;
    if (expect_sym(ps, '=') || take_int(ps, false, 1, 536870911, &num)) return -1;
    if (num >= 19000 && num <= 19999) return fail(ps, "field numbers 19000-19999 are reserved");
    fd->number = (int32_t)num;
    if (field_options(ps, fd)) return -1;
    return expect_sym(ps, ';');
}

static int parse_oneof(parser_t *ps, floe_proto_msg_t *m)
{
    const char *name = take_ident(ps, false);
    if (!name || expect_sym(ps, '{')) return -1;
    const char **o = proto_push((void **)&m->oneofs, &m->noneofs, sizeof *o);
    if (!o) return floe_err_oom(ps->err);
    *o = name;
    int32_t idx = (int32_t)(m->noneofs - 1);
    size_t before = m->nfields;
    while (!is_sym(ps, '}')) {
        if (ps->kind == T_EOF) return fail(ps, "unterminated oneof");
        if (is_sym(ps, ';')) {
            if (next(ps)) return -1;
        } else if (is_word(ps, "option")) {
            char n[128];
            const char *val;
            bool is_str;
            if (next(ps) || take_option(ps, n, sizeof n, &val, &is_str)) return -1;
        } else if (parse_field(ps, m, 0, idx)) {
            return -1;
        }
    }
    if (m->nfields == before) return fail(ps, "an empty oneof");
    return next(ps);
}

static int parse_body_item(parser_t *ps, floe_proto_msg_t *m)
{
    if (is_sym(ps, ';')) return next(ps);
    if (is_word(ps, "message")) {
        floe_proto_msg_t *n = proto_push((void **)&m->msgs, &m->nmsgs, sizeof *n);
        if (!n) return floe_err_oom(ps->err);
        return next(ps) || parse_message(ps, n) ? -1 : 0;
    }
    if (is_word(ps, "enum")) {
        floe_proto_enum_t *e = proto_push((void **)&m->enums, &m->nenums, sizeof *e);
        if (!e) return floe_err_oom(ps->err);
        return next(ps) || parse_enum(ps, e) ? -1 : 0;
    }
    if (is_word(ps, "oneof")) return next(ps) || parse_oneof(ps, m) ? -1 : 0;
    if (is_word(ps, "reserved")) return next(ps) || parse_reserved(ps, m) ? -1 : 0;
    if (is_word(ps, "option")) {
        char n[128];
        const char *val;
        bool is_str;
        return next(ps) || take_option(ps, n, sizeof n, &val, &is_str) ? -1 : 0;
    }
    if (is_word(ps, "extensions")) {
        while (!is_sym(ps, ';')) {
            if (ps->kind == T_EOF) return fail(ps, "unterminated extensions");
            if (next(ps)) return -1;
        }
        return next(ps);
    }
    if (is_word(ps, "extend")) {
        while (!is_sym(ps, '{')) {
            if (ps->kind == T_EOF) return fail(ps, "unterminated extend");
            if (next(ps)) return -1;
        }
        return skip_block(ps);
    }
    int label = is_word(ps, "optional")   ? FLOE_PL_OPTIONAL
                : is_word(ps, "required") ? FLOE_PL_REQUIRED
                : is_word(ps, "repeated") ? FLOE_PL_REPEATED
                                          : 0;
    if (label == FLOE_PL_REQUIRED && ps->f->syntax == 3)
        return fail(ps, "proto3 has no required fields");
    if (label && next(ps)) return -1;
    return parse_field(ps, m, label, -1);
}

static int parse_message(parser_t *ps, floe_proto_msg_t *m)
{
    if (++ps->depth > PROTO_MAX_DEPTH) return fail(ps, "messages nested too deep");
    if (!(m->name = take_ident(ps, false)) || expect_sym(ps, '{')) return -1;
    while (!is_sym(ps, '}')) {
        if (ps->kind == T_EOF) return fail(ps, "unterminated message");
        if (parse_body_item(ps, m)) return -1;
    }
    /* proto3 optional: a synthetic oneof per field, after the real ones */
    for (size_t i = 0; i < m->nfields; i++) {
        floe_proto_field_t *fd = &m->fields[i];
        if (!fd->proto3_optional) continue;
        const char **o = proto_push((void **)&m->oneofs, &m->noneofs, sizeof *o);
        if (!o) return floe_err_oom(ps->err);
        size_t n = strlen(fd->name);
        char *s = floe_arena_alloc(&ps->f->arena, n + 2);
        if (!s) return floe_err_oom(ps->err);
        s[0] = '_';
        memcpy(s + 1, fd->name, n + 1);
        *o = s;
        fd->oneof = (int32_t)(m->noneofs - 1);
    }
    ps->depth--;
    return next(ps);
}

int floe_proto_parse(const char *p, size_t n, const char *name, floe_proto_file_t **out,
                     floe_err_t *err)
{
    *out = NULL;
    parser_t ps = {.p = p, .end = p + n, .line_start = p, .line = 1, .err = err};
    floe_proto_msg_t top = {0}; /* top-level messages and enums gather here */
    if (!(ps.f = proto_file_new())) return floe_err_oom(err);
    if (name && !(ps.f->name = proto_strdup(ps.f, name, strlen(name)))) {
        floe_err_oom(err);
        goto fail_top;
    }
    if (next(&ps)) goto fail_top;
    if (is_word(&ps, "edition")) {
        floe_err_set(err, FLOE_EUNSUPPORTED, "proto: editions are not supported");
        goto fail_top;
    }
    if (is_word(&ps, "syntax")) {
        if (next(&ps) || expect_sym(&ps, '=')) goto fail_top;
        if (ps.kind != T_STR) {
            fail(&ps, "expected \"proto2\" or \"proto3\"");
            goto fail_top;
        }
        if (ps.str.len == 6 && !memcmp(ps.str.data, "proto3", 6)) ps.f->syntax = 3;
        else if (!(ps.str.len == 6 && !memcmp(ps.str.data, "proto2", 6))) {
            fail(&ps, "unknown syntax");
            goto fail_top;
        }
        if (next(&ps) || expect_sym(&ps, ';')) goto fail_top;
    }
    while (ps.kind != T_EOF) {
        if (is_sym(&ps, ';')) {
            if (next(&ps)) goto fail_top;
        } else if (is_word(&ps, "package")) {
            if (next(&ps) || !(ps.f->package = take_ident(&ps, true)) || expect_sym(&ps, ';'))
                goto fail_top;
            if (ps.f->package[0] == '.') {
                fail(&ps, "a package name starts with a letter");
                goto fail_top;
            }
        } else if (is_word(&ps, "import")) {
            if (next(&ps)) goto fail_top;
            if ((is_word(&ps, "public") || is_word(&ps, "weak")) && next(&ps)) goto fail_top;
            if (ps.kind != T_STR) {
                fail(&ps, "expected a file name");
                goto fail_top;
            }
            const char **d = proto_push((void **)&ps.f->deps, &ps.f->ndeps, sizeof *d);
            if (!d || !(*d = proto_strdup(ps.f, ps.str.data ? (const char *)ps.str.data : "",
                                          ps.str.len))) {
                floe_err_oom(err);
                goto fail_top;
            }
            if (next(&ps) || expect_sym(&ps, ';')) goto fail_top;
        } else if (is_word(&ps, "option")) {
            char on[128];
            const char *val;
            bool is_str;
            if (next(&ps) || take_option(&ps, on, sizeof on, &val, &is_str)) goto fail_top;
        } else if (is_word(&ps, "service") || is_word(&ps, "extend")) {
            while (!is_sym(&ps, '{')) {
                if (ps.kind == T_EOF) {
                    fail(&ps, "unterminated block");
                    goto fail_top;
                }
                if (next(&ps)) goto fail_top;
            }
            if (skip_block(&ps)) goto fail_top;
        } else if (is_word(&ps, "message") || is_word(&ps, "enum")) {
            if (parse_body_item(&ps, &top)) goto fail_top;
        } else {
            fail(&ps, "expected message, enum, service, import, package or option");
            goto fail_top;
        }
    }
    ps.f->msgs = top.msgs;
    ps.f->nmsgs = top.nmsgs;
    ps.f->enums = top.enums;
    ps.f->nenums = top.nenums;
    floe_buf_free(&ps.str);
    *out = ps.f;
    return 0;
fail_top:
    ps.f->msgs = top.msgs;
    ps.f->nmsgs = top.nmsgs;
    ps.f->enums = top.enums;
    ps.f->nenums = top.nenums;
    floe_buf_free(&ps.str);
    floe_proto_file_free(ps.f);
    return -1;
}
