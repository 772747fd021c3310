/* floe_proto_file_t -> .proto text (proto.h): the registry's canonical
 * form and its default answer.  One spelling per descriptor: two-space
 * indents, fields in declaration order with each real oneof where its
 * first field is, maps as map<K, V>, proto3 optional as `optional`,
 * nested messages and enums after the fields. */
#include <stdio.h>
#include <string.h>

#include "format/proto_int.h"

typedef struct w {
    floe_buf_t *b;
    int rc;
} w_t;

static void put(w_t *w, const char *s)
{
    if (!w->rc && floe_buf_append_str(w->b, s)) w->rc = -1;
}

static void indent(w_t *w, int depth)
{
    for (int i = 0; i < depth; i++) put(w, "  ");
}

static void put_quoted(w_t *w, const char *s)
{
    put(w, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char t[8];
        if (*p == '"' || *p == '\\') snprintf(t, sizeof t, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            snprintf(t, sizeof t, "\\%03o", *p);
        else
            snprintf(t, sizeof t, "%c", *p);
        put(w, t);
    }
    put(w, "\"");
}

static void put_int(w_t *w, long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%lld", v);
    put(w, t);
}

/* The map entry message a repeated field names, when it is one of m's. */
static const floe_proto_msg_t *map_entry_of(const floe_proto_msg_t *m, const floe_proto_field_t *fd)
{
    if (fd->label != FLOE_PL_REPEATED || fd->type != FLOE_PT_MESSAGE || !fd->type_name) return NULL;
    const char *last = strrchr(fd->type_name, '.');
    last = last ? last + 1 : fd->type_name;
    for (size_t i = 0; i < m->nmsgs; i++)
        if (m->msgs[i].map_entry && !strcmp(m->msgs[i].name, last)) return &m->msgs[i];
    return NULL;
}

static void put_type(w_t *w, const floe_proto_field_t *fd)
{
    const char *k = fd->type == FLOE_PT_MESSAGE || fd->type == FLOE_PT_ENUM || !fd->type
                        ? NULL
                        : floe_proto_type_name(fd->type);
    put(w, k ? k : fd->type_name ? fd->type_name : "?");
}

static void put_field(w_t *w, const floe_proto_file_t *f, const floe_proto_msg_t *m,
                      const floe_proto_field_t *fd, int depth, bool in_oneof)
{
    indent(w, depth);
    const floe_proto_msg_t *entry = map_entry_of(m, fd);
    if (entry && entry->nfields == 2) {
        const floe_proto_field_t *k = floe_proto_msg_field(entry, 1),
                                 *v = floe_proto_msg_field(entry, 2);
        if (k && v) {
            put(w, "map<");
            put_type(w, k);
            put(w, ", ");
            put_type(w, v);
            put(w, "> ");
            goto name;
        }
    }
    if (!in_oneof) {
        if (fd->label == FLOE_PL_REPEATED) put(w, "repeated ");
        else if (fd->label == FLOE_PL_REQUIRED)
            put(w, "required ");
        else if (f->syntax == 2 || fd->proto3_optional)
            put(w, "optional ");
    }
    put_type(w, fd);
    put(w, " ");
name:
    put(w, fd->name);
    put(w, " = ");
    put_int(w, fd->number);
    bool opts = fd->packed >= 0 || fd->default_value;
    if (opts) {
        put(w, " [");
        if (fd->packed >= 0) put(w, fd->packed ? "packed = true" : "packed = false");
        if (fd->packed >= 0 && fd->default_value) put(w, ", ");
        if (fd->default_value) {
            put(w, "default = ");
            if (fd->type == FLOE_PT_STRING || fd->type == FLOE_PT_BYTES)
                put_quoted(w, fd->default_value);
            else
                put(w, fd->default_value);
        }
        put(w, "]");
    }
    put(w, ";\n");
}

static void put_enum(w_t *w, const floe_proto_enum_t *e, int depth)
{
    indent(w, depth);
    put(w, "enum ");
    put(w, e->name);
    put(w, " {\n");
    if (e->allow_alias) {
        indent(w, depth + 1);
        put(w, "option allow_alias = true;\n");
    }
    for (size_t i = 0; i < e->nvals; i++) {
        indent(w, depth + 1);
        put(w, e->vals[i].name);
        put(w, " = ");
        put_int(w, e->vals[i].number);
        put(w, ";\n");
    }
    indent(w, depth);
    put(w, "}\n");
}

static bool real_oneof(const floe_proto_msg_t *m, int32_t o)
{
    if (o < 0 || (size_t)o >= m->noneofs) return false;
    for (size_t i = 0; i < m->nfields; i++)
        if (m->fields[i].oneof == o && m->fields[i].proto3_optional) return false;
    return true;
}

static void put_msg(w_t *w, const floe_proto_file_t *f, const floe_proto_msg_t *m, int depth)
{
    if (depth > PROTO_MAX_DEPTH + 1) {
        w->rc = -1;
        return;
    }
    indent(w, depth);
    put(w, "message ");
    put(w, m->name);
    put(w, " {\n");
    for (size_t i = 0; i < m->nfields; i++) {
        const floe_proto_field_t *fd = &m->fields[i];
        if (!real_oneof(m, fd->oneof)) {
            put_field(w, f, m, fd, depth + 1, false);
            continue;
        }
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            if (m->fields[j].oneof == fd->oneof) first = false;
        if (!first) continue;
        indent(w, depth + 1);
        put(w, "oneof ");
        put(w, m->oneofs[fd->oneof]);
        put(w, " {\n");
        for (size_t j = i; j < m->nfields; j++)
            if (m->fields[j].oneof == fd->oneof) put_field(w, f, m, &m->fields[j], depth + 2, true);
        indent(w, depth + 1);
        put(w, "}\n");
    }
    if (m->nreserved) {
        indent(w, depth + 1);
        put(w, "reserved ");
        for (size_t i = 0; i < m->nreserved; i++) {
            if (i) put(w, ", ");
            put_int(w, m->reserved[i].start);
            if (m->reserved[i].end - 1 > m->reserved[i].start) {
                put(w, " to ");
                if (m->reserved[i].end - 1 >= 536870911) put(w, "max");
                else
                    put_int(w, (long long)m->reserved[i].end - 1);
            }
        }
        put(w, ";\n");
    }
    if (m->nreserved_names) {
        indent(w, depth + 1);
        put(w, "reserved ");
        for (size_t i = 0; i < m->nreserved_names; i++) {
            if (i) put(w, ", ");
            put_quoted(w, m->reserved_names[i]);
        }
        put(w, ";\n");
    }
    for (size_t i = 0; i < m->nmsgs; i++)
        if (!m->msgs[i].map_entry) put_msg(w, f, &m->msgs[i], depth + 1);
    for (size_t i = 0; i < m->nenums; i++) put_enum(w, &m->enums[i], depth + 1);
    indent(w, depth);
    put(w, "}\n");
}

int floe_proto_to_text(const floe_proto_file_t *f, floe_buf_t *out)
{
    w_t w = {out, 0};
    put(&w, f->syntax == 3 ? "syntax = \"proto3\";\n" : "syntax = \"proto2\";\n");
    if (f->package[0]) {
        put(&w, "package ");
        put(&w, f->package);
        put(&w, ";\n");
    }
    if (f->ndeps) put(&w, "\n");
    for (size_t i = 0; i < f->ndeps; i++) {
        put(&w, "import ");
        put_quoted(&w, f->deps[i]);
        put(&w, ";\n");
    }
    for (size_t i = 0; i < f->nmsgs; i++) {
        put(&w, "\n");
        put_msg(&w, f, &f->msgs[i], 0);
    }
    for (size_t i = 0; i < f->nenums; i++) {
        put(&w, "\n");
        put_enum(&w, &f->enums[i], 0);
    }
    return w.rc;
}
