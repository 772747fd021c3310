/* The descriptor model (proto.h): building and freeing files, the
 * well-known types, and schemas with their type names resolved. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto_int.h"

floe_proto_file_t *proto_file_new(void)
{
    floe_proto_file_t *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    floe_arena_init(&f->arena, 0, PROTO_ARENA_CAP);
    f->name = f->package = "";
    f->syntax = 2;
    return f;
}

void *proto_push(void **arr, size_t *n, size_t elem)
{
    size_t k = *n;
    if (k == 0 || (k >= 4 && (k & (k - 1)) == 0)) {
        size_t cap = k ? k * 2 : 4;
        if (cap > SIZE_MAX / elem) return NULL;
        void *a = realloc(*arr, cap * elem);
        if (!a) return NULL;
        *arr = a;
    }
    void *e = (char *)*arr + k * elem;
    memset(e, 0, elem);
    *n = k + 1;
    return e;
}

const char *proto_strdup(floe_proto_file_t *f, const char *s, size_t n)
{
    return floe_arena_strndup(&f->arena, s, n);
}

floe_proto_field_t *proto_add_field(floe_proto_msg_t *m)
{
    floe_proto_field_t *fd = proto_push((void **)&m->fields, &m->nfields, sizeof *fd);
    if (fd) {
        fd->oneof = -1;
        fd->packed = -1;
    }
    return fd;
}

const char *proto_map_entry_name(floe_proto_file_t *f, const char *field)
{
    size_t n = strlen(field);
    char *out = floe_arena_alloc(&f->arena, n + 6);
    if (!out) return NULL;
    size_t k = 0;
    bool up = true;
    for (size_t i = 0; i < n; i++) {
        if (field[i] == '_') {
            up = true;
            continue;
        }
        out[k++] = up ? (char)toupper((unsigned char)field[i]) : field[i];
        up = false;
    }
    memcpy(out + k, "Entry", 6);
    return out;
}

static void free_enums(floe_proto_enum_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++) free(e[i].vals);
    free(e);
}

static void free_msgs(floe_proto_msg_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(m[i].fields);
        free_msgs(m[i].msgs, m[i].nmsgs);
        free_enums(m[i].enums, m[i].nenums);
        free(m[i].oneofs);
        free(m[i].reserved);
        free(m[i].reserved_names);
    }
    free(m);
}

void floe_proto_file_free(floe_proto_file_t *f)
{
    if (!f) return;
    free(f->deps);
    free_msgs(f->msgs, f->nmsgs);
    free_enums(f->enums, f->nenums);
    floe_arena_free(&f->arena);
    free(f);
}

bool floe_proto_packable(int t)
{
    return t != FLOE_PT_STRING && t != FLOE_PT_BYTES && t != FLOE_PT_MESSAGE &&
           t != FLOE_PT_GROUP && t >= FLOE_PT_DOUBLE && t <= FLOE_PT_SINT64;
}

static const char *const scalar_names[] = {
    [FLOE_PT_DOUBLE] = "double",     [FLOE_PT_FLOAT] = "float",   [FLOE_PT_INT64] = "int64",
    [FLOE_PT_UINT64] = "uint64",     [FLOE_PT_INT32] = "int32",   [FLOE_PT_FIXED64] = "fixed64",
    [FLOE_PT_FIXED32] = "fixed32",   [FLOE_PT_BOOL] = "bool",     [FLOE_PT_STRING] = "string",
    [FLOE_PT_BYTES] = "bytes",       [FLOE_PT_UINT32] = "uint32", [FLOE_PT_SFIXED32] = "sfixed32",
    [FLOE_PT_SFIXED64] = "sfixed64", [FLOE_PT_SINT32] = "sint32", [FLOE_PT_SINT64] = "sint64",
};

const char *floe_proto_type_name(int t)
{
    return t > 0 && t <= FLOE_PT_SINT64 ? scalar_names[t] : NULL;
}

/* ---- well-known types (field numbers from the google/protobuf files) ---- */

static const struct {
    const char *name, *text;
} wkt[] = {
    {"google/protobuf/timestamp.proto",
     "syntax = \"proto3\"; package google.protobuf;\n"
     "message Timestamp { int64 seconds = 1; int32 nanos = 2; }\n"},
    {"google/protobuf/duration.proto",
     "syntax = \"proto3\"; package google.protobuf;\n"
     "message Duration { int64 seconds = 1; int32 nanos = 2; }\n"},
    {"google/protobuf/wrappers.proto", "syntax = \"proto3\"; package google.protobuf;\n"
                                       "message DoubleValue { double value = 1; }\n"
                                       "message FloatValue { float value = 1; }\n"
                                       "message Int64Value { int64 value = 1; }\n"
                                       "message UInt64Value { uint64 value = 1; }\n"
                                       "message Int32Value { int32 value = 1; }\n"
                                       "message UInt32Value { uint32 value = 1; }\n"
                                       "message BoolValue { bool value = 1; }\n"
                                       "message StringValue { string value = 1; }\n"
                                       "message BytesValue { bytes value = 1; }\n"},
    {"google/protobuf/struct.proto",
     "syntax = \"proto3\"; package google.protobuf;\n"
     "message Struct { map<string, Value> fields = 1; }\n"
     "message Value { oneof kind { NullValue null_value = 1; double number_value = 2;\n"
     "  string string_value = 3; bool bool_value = 4; Struct struct_value = 5;\n"
     "  ListValue list_value = 6; } }\n"
     "enum NullValue { NULL_VALUE = 0; }\n"
     "message ListValue { repeated Value values = 1; }\n"},
    {"google/protobuf/empty.proto",
     "syntax = \"proto3\"; package google.protobuf;\nmessage Empty {}\n"},
    {"google/protobuf/any.proto", "syntax = \"proto3\"; package google.protobuf;\n"
                                  "message Any { string type_url = 1; bytes value = 2; }\n"},
    {"google/protobuf/field_mask.proto", "syntax = \"proto3\"; package google.protobuf;\n"
                                         "message FieldMask { repeated string paths = 1; }\n"},
};

const char *floe_proto_wkt_text(const char *name)
{
    for (size_t i = 0; i < sizeof wkt / sizeof *wkt; i++)
        if (name && !strcmp(wkt[i].name, name)) return wkt[i].text;
    return NULL;
}

/* ---- schemas ---- */

typedef struct named {
    const char *full;
    floe_proto_msg_t *msg;
    floe_proto_enum_t *en;
} named_t;

struct floe_proto_schema {
    floe_proto_file_t **files; /* files[0] is the schema's own */
    size_t nfiles;
    named_t *names; /* sorted by full */
    size_t nnames;
};

void floe_proto_schema_free(floe_proto_schema_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nfiles; i++) floe_proto_file_free(s->files[i]);
    free(s->files);
    free(s->names);
    free(s);
}

const floe_proto_file_t *floe_proto_schema_file(const floe_proto_schema_t *s)
{
    return s->files[0];
}

static floe_proto_file_t *schema_file(floe_proto_schema_t *s, const char *name)
{
    for (size_t i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i]->name, name)) return s->files[i];
    return NULL;
}

static const char *join(floe_proto_file_t *f, const char *scope, const char *name)
{
    size_t a = strlen(scope), b = strlen(name);
    char *out = floe_arena_alloc(&f->arena, a + b + 2);
    if (!out) return NULL;
    memcpy(out, scope, a);
    out[a] = '.';
    memcpy(out + a + 1, name, b + 1);
    return out;
}

static int add_names_enums(floe_proto_schema_t *s, floe_proto_file_t *f, const char *scope,
                           floe_proto_enum_t *e, size_t n, floe_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!(e[i].full = join(f, scope, e[i].name))) return floe_err_oom(err);
        named_t *x = proto_push((void **)&s->names, &s->nnames, sizeof *x);
        if (!x) return floe_err_oom(err);
        *x = (named_t){e[i].full, NULL, &e[i]};
    }
    return 0;
}

static int add_names(floe_proto_schema_t *s, floe_proto_file_t *f, const char *scope,
                     floe_proto_msg_t *m, size_t n, int depth, floe_err_t *err)
{
    if (depth > PROTO_MAX_DEPTH)
        return floe_err_set(err, FLOE_EINVAL, "messages nested deeper than %d", PROTO_MAX_DEPTH);
    for (size_t i = 0; i < n; i++) {
        if (!(m[i].full = join(f, scope, m[i].name))) return floe_err_oom(err);
        m[i].syntax = f->syntax;
        named_t *x = proto_push((void **)&s->names, &s->nnames, sizeof *x);
        if (!x) return floe_err_oom(err);
        *x = (named_t){m[i].full, &m[i], NULL};
        if (add_names(s, f, m[i].full, m[i].msgs, m[i].nmsgs, depth + 1, err) ||
            add_names_enums(s, f, m[i].full, m[i].enums, m[i].nenums, err))
            return -1;
    }
    return 0;
}

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named_t *)a)->full, ((const named_t *)b)->full);
}

static const named_t *lookup(const floe_proto_schema_t *s, const char *full)
{
    named_t key = {full, NULL, NULL};
    return s->nnames ? bsearch(&key, s->names, s->nnames, sizeof key, cmp_named) : NULL;
}

/* Resolve a type name as written inside scope ".pkg.Outer.Msg": the
 * innermost scope that has it wins (the language guide's rule). */
static const named_t *resolve_name(const floe_proto_schema_t *s, const char *scope,
                                   const char *name, char *buf, size_t bufsz)
{
    if (name[0] == '.') return lookup(s, name);
    size_t sl = strlen(scope), nl = strlen(name);
    for (;;) {
        if (sl + nl + 2 > bufsz) return NULL;
        memcpy(buf, scope, sl);
        buf[sl] = '.';
        memcpy(buf + sl + 1, name, nl + 1);
        const named_t *x = lookup(s, buf);
        if (x) return x;
        if (sl == 0) return NULL;
        while (sl > 0 && scope[sl - 1] != '.') sl--;
        if (sl > 0) sl--; /* drop the '.' */
    }
}

static bool map_key_ok(int t)
{
    return t != FLOE_PT_DOUBLE && t != FLOE_PT_FLOAT && t != FLOE_PT_BYTES &&
           t != FLOE_PT_MESSAGE && t != FLOE_PT_ENUM && t != FLOE_PT_GROUP && t != 0;
}

static int resolve_msgs(floe_proto_schema_t *s, floe_proto_file_t *f, floe_proto_msg_t *m, size_t n,
                        floe_err_t *err)
{
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        floe_proto_msg_t *msg = &m[i];
        for (size_t k = 0; k < msg->nfields; k++) {
            floe_proto_field_t *fd = &msg->fields[k];
            if (fd->oneof >= (int32_t)msg->noneofs)
                return floe_err_set(err, FLOE_EINVAL, "field %s.%s names oneof %d of %zu",
                                    msg->full, fd->name, (int)fd->oneof, msg->noneofs);
            for (size_t j = 0; j < k; j++)
                if (msg->fields[j].number == fd->number || !strcmp(msg->fields[j].name, fd->name))
                    return floe_err_set(err, FLOE_EINVAL,
                                        "fields %s and %s of %s share a name or number %d",
                                        msg->fields[j].name, fd->name, msg->full, (int)fd->number);
            if (fd->type == FLOE_PT_GROUP)
                return floe_err_set(err, FLOE_EUNSUPPORTED, "field %s.%s: groups are not supported",
                                    msg->full, fd->name);
            fd->plain = fd->name[0] != 0;
            for (const char *c = fd->name; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_') fd->plain = false;
            if (fd->type && fd->type != FLOE_PT_MESSAGE && fd->type != FLOE_PT_ENUM) continue;
            if (!fd->type_name || !fd->type_name[0])
                return floe_err_set(err, FLOE_EINVAL, "field %s.%s has no type name", msg->full,
                                    fd->name);
            const named_t *x = resolve_name(s, msg->full, fd->type_name, buf, sizeof buf);
            if (!x)
                return floe_err_set(err, FLOE_EINVAL, "field %s.%s: unknown type %s", msg->full,
                                    fd->name, fd->type_name);
            if ((fd->type == FLOE_PT_MESSAGE && !x->msg) || (fd->type == FLOE_PT_ENUM && !x->en))
                return floe_err_set(err, FLOE_EINVAL, "field %s.%s: %s is not a %s", msg->full,
                                    fd->name, x->full,
                                    fd->type == FLOE_PT_ENUM ? "an enum" : "a message");
            fd->type = x->msg ? FLOE_PT_MESSAGE : FLOE_PT_ENUM;
            fd->type_name = x->full;
            fd->msg = x->msg;
            fd->en = x->en;
            if (x->en && !x->en->nvals)
                return floe_err_set(err, FLOE_EINVAL, "enum %s has no values", x->full);
        }
        if (resolve_msgs(s, f, msg->msgs, msg->nmsgs, err)) return -1;
    }
    return 0;
}

static int check_maps(floe_proto_msg_t *m, size_t n, floe_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        if (m[i].map_entry) {
            const floe_proto_field_t *k = floe_proto_msg_field(&m[i], 1),
                                     *v = floe_proto_msg_field(&m[i], 2);
            if (m[i].nfields != 2 || !k || !v || !map_key_ok(k->type))
                return floe_err_set(err, FLOE_EINVAL,
                                    "map entry %s needs a key of an integral "
                                    "or string type and a value",
                                    m[i].full);
        }
        if (check_maps(m[i].msgs, m[i].nmsgs, err)) return -1;
    }
    return 0;
}

/* Add f's imports that are not among s's files: well-known types only. */
static int add_imports(floe_proto_schema_t *s, floe_proto_file_t *f, floe_err_t *err)
{
    for (size_t i = 0; i < f->ndeps; i++) {
        if (schema_file(s, f->deps[i])) continue;
        const char *t = floe_proto_wkt_text(f->deps[i]);
        if (!t)
            return floe_err_set(err, FLOE_EINVAL, "%s imports %s, which no reference supplies",
                                f->name[0] ? f->name : "the schema", f->deps[i]);
        floe_proto_file_t *w = NULL;
        if (floe_proto_parse(t, strlen(t), f->deps[i], &w, err)) return -1;
        floe_proto_file_t **slot = proto_push((void **)&s->files, &s->nfiles, sizeof *slot);
        if (!slot) {
            floe_proto_file_free(w);
            return floe_err_oom(err);
        }
        *slot = w;
    }
    return 0;
}

int floe_proto_schema_new(floe_proto_file_t *main, floe_proto_file_t **deps, size_t ndeps,
                          floe_proto_schema_t **out, floe_err_t *err)
{
    *out = NULL;
    floe_proto_schema_t *s = calloc(1, sizeof *s);
    floe_proto_file_t **slot = s ? proto_push((void **)&s->files, &s->nfiles, sizeof *slot) : NULL;
    if (!slot) {
        floe_proto_file_free(main);
        for (size_t i = 0; i < ndeps; i++) floe_proto_file_free(deps[i]);
        if (s) free(s);
        return floe_err_oom(err);
    }
    *slot = main;
    size_t taken = 0;
    for (; taken < ndeps; taken++) {
        if (!(slot = proto_push((void **)&s->files, &s->nfiles, sizeof *slot))) break;
        *slot = deps[taken];
    }
    if (taken < ndeps) {
        for (size_t i = taken; i < ndeps; i++) floe_proto_file_free(deps[i]);
        floe_proto_schema_free(s);
        return floe_err_oom(err);
    }
    /* imports (the list grows as well-known files join) */
    for (size_t i = 0; i < s->nfiles; i++)
        if (add_imports(s, s->files[i], err)) goto fail;
    for (size_t i = 0; i < s->nfiles; i++) {
        floe_proto_file_t *f = s->files[i];
        const char *scope = "";
        if (f->package[0] && !(scope = join(f, "", f->package))) goto oom;
        if (add_names(s, f, scope, f->msgs, f->nmsgs, 0, err) ||
            add_names_enums(s, f, scope, f->enums, f->nenums, err))
            goto fail;
    }
    if (s->nnames) qsort(s->names, s->nnames, sizeof *s->names, cmp_named);
    for (size_t i = 1; i < s->nnames; i++)
        if (!strcmp(s->names[i - 1].full, s->names[i].full)) {
            floe_err_set(err, FLOE_EINVAL, "%s is defined twice", s->names[i].full);
            goto fail;
        }
    for (size_t i = 0; i < s->nfiles; i++)
        if (resolve_msgs(s, s->files[i], s->files[i]->msgs, s->files[i]->nmsgs, err) ||
            check_maps(s->files[i]->msgs, s->files[i]->nmsgs, err))
            goto fail;
    *out = s;
    return 0;
oom:
    floe_err_oom(err);
fail:
    floe_proto_schema_free(s);
    return -1;
}

const floe_proto_msg_t *floe_proto_schema_message(const floe_proto_schema_t *s, const int32_t *idx,
                                                  size_t n)
{
    const floe_proto_file_t *f = s->files[0];
    if (n == 0) return f->nmsgs ? &f->msgs[0] : NULL;
    if (idx[0] < 0 || (size_t)idx[0] >= f->nmsgs) return NULL;
    const floe_proto_msg_t *m = &f->msgs[idx[0]];
    for (size_t i = 1; i < n; i++) {
        if (idx[i] < 0 || (size_t)idx[i] >= m->nmsgs) return NULL;
        m = &m->msgs[idx[i]];
    }
    return m;
}

const floe_proto_msg_t *floe_proto_schema_find_msg(const floe_proto_schema_t *s, const char *full)
{
    const named_t *x = lookup(s, full);
    return x ? x->msg : NULL;
}

const floe_proto_field_t *floe_proto_msg_field(const floe_proto_msg_t *m, int32_t number)
{
    if (number > 0 && (size_t)number <= m->nfields && m->fields[number - 1].number == number)
        return &m->fields[number - 1];
    for (size_t i = 0; i < m->nfields; i++)
        if (m->fields[i].number == number) return &m->fields[i];
    return NULL;
}
