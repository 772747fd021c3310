/* Protobuf schema compatibility for the registry (registry.h), by the
 * Confluent registry's rules: the writer's messages are matched to the
 * reader's by full name and their fields by number.  Incompatible: a
 * message removed (also a rename), a field number reused with another
 * kind (scalar, message, enum, map) or with a scalar type outside its
 * wire-compatible group, a field's message or enum type changed, a
 * required field added or removed, a field removed from a oneof, several
 * fields moved into a new oneof, a field moved into an existing oneof.
 * Compatible: fields added or removed, renamed, numeric or string label
 * changes, enum constants added or removed, messages added, the package
 * changed. */
#include <stdio.h>
#include <string.h>

#include "registry/registry.h"

typedef struct ctx {
    floe_buf_t *msgs;
    int nproblems;
    const char *wpkg, *rpkg; /* the files' packages, "" or "pkg" */
} ctx_t;

/* A full name ".pkg.M.N" without its file's package: "M.N". */
static const char *local(const char *full, const char *pkg)
{
    if (full[0] == '.') full++;
    size_t n = strlen(pkg);
    if (n && !strncmp(full, pkg, n) && full[n] == '.') return full + n + 1;
    return full;
}

static void problem(ctx_t *c, const char *type, const char *path, const char *desc)
{
    c->nproblems++;
    if (c->msgs)
        floe_buf_printf(c->msgs, "{errorType:'%s', description:'%s', path:'#/%s'}\n", type, desc,
                        path);
}

/* Wire-compatible scalar groups; 0 for types in none. */
static int group_of(int t)
{
    switch (t) {
    case FLOE_PT_INT32:
    case FLOE_PT_UINT32:
    case FLOE_PT_INT64:
    case FLOE_PT_UINT64:
    case FLOE_PT_BOOL: return 1;
    case FLOE_PT_SINT32:
    case FLOE_PT_SINT64: return 2;
    case FLOE_PT_FIXED32:
    case FLOE_PT_SFIXED32: return 3;
    case FLOE_PT_FIXED64:
    case FLOE_PT_SFIXED64: return 4;
    case FLOE_PT_STRING:
    case FLOE_PT_BYTES: return 5;
    default: return 0;
    }
}

typedef enum { K_SCALAR, K_MESSAGE, K_ENUM, K_MAP } kind_t;

static kind_t kind_of(const floe_proto_field_t *f)
{
    if (f->type == FLOE_PT_MESSAGE) return f->msg && f->msg->map_entry ? K_MAP : K_MESSAGE;
    return f->type == FLOE_PT_ENUM ? K_ENUM : K_SCALAR;
}

/* A real oneof (not the synthetic one of a proto3 optional field). */
static bool in_real_oneof(const floe_proto_field_t *f)
{
    return f->oneof >= 0 && !f->proto3_optional;
}

static void same_type(ctx_t *c, const floe_proto_field_t *w, const floe_proto_field_t *r,
                      const char *path)
{
    kind_t kw = kind_of(w), kr = kind_of(r);
    if (kw != kr) {
        problem(c, "FIELD_KIND_CHANGED", path, "The kind of the field changed");
        return;
    }
    if (kw == K_SCALAR) {
        if (w->type != r->type &&
            (group_of(w->type) == 0 || group_of(w->type) != group_of(r->type)))
            problem(c, "FIELD_SCALAR_KIND_CHANGED", path,
                    "The scalar type of the field changed to one its data does not read as");
    } else if (kw == K_MAP) {
        same_type(c, floe_proto_msg_field(w->msg, 1), floe_proto_msg_field(r->msg, 1), path);
        same_type(c, floe_proto_msg_field(w->msg, 2), floe_proto_msg_field(r->msg, 2), path);
    } else if (strcmp(local(w->type_name, c->wpkg), local(r->type_name, c->rpkg))) {
        problem(c, "FIELD_NAMED_TYPE_CHANGED", path,
                "The message or enum type of the field changed");
    }
}

static void compare_msg(ctx_t *c, const floe_proto_schema_t *reader, const floe_proto_msg_t *w,
                        int depth)
{
    if (depth > 64 || w->map_entry) return;
    const char *name = local(w->full, c->wpkg);
    char full[1024];
    snprintf(full, sizeof full, ".%s%s%s", c->rpkg, c->rpkg[0] ? "." : "", name);
    const floe_proto_msg_t *r = floe_proto_schema_find_msg(reader, full);
    if (!r) {
        problem(c, "MESSAGE_REMOVED", name, "The message is missing in the new schema");
        return;
    }
    char path[512];
    for (size_t i = 0; i < w->nfields; i++) {
        const floe_proto_field_t *wf = &w->fields[i], *rf = floe_proto_msg_field(r, wf->number);
        snprintf(path, sizeof path, "%s/%d", name, (int)wf->number);
        if (!rf) {
            if (wf->label == FLOE_PL_REQUIRED)
                problem(c, "REQUIRED_FIELD_REMOVED", path, "A required field was removed");
            else if (in_real_oneof(wf)) {
                /* removed from a oneof that is still there */
                bool kept = false;
                for (size_t k = 0; k < r->noneofs && !kept; k++)
                    kept = !strcmp(r->oneofs[k], w->oneofs[wf->oneof]);
                if (kept) problem(c, "ONEOF_FIELD_REMOVED", path, "A field of a oneof was removed");
            }
            continue;
        }
        same_type(c, wf, rf, path);
        if ((wf->label == FLOE_PL_REQUIRED) != (rf->label == FLOE_PL_REQUIRED))
            problem(c,
                    rf->label == FLOE_PL_REQUIRED ? "REQUIRED_FIELD_ADDED"
                                                  : "REQUIRED_FIELD_REMOVED",
                    path, "The field became required or stopped being required");
        if (!in_real_oneof(wf) && in_real_oneof(rf)) {
            const char *o = r->oneofs[rf->oneof];
            bool existed = false;
            for (size_t k = 0; k < w->noneofs && !existed; k++) existed = !strcmp(w->oneofs[k], o);
            size_t moved = 0;
            for (size_t k = 0; k < r->nfields; k++) {
                const floe_proto_field_t *x = &r->fields[k], *old;
                if (x->oneof == rf->oneof && (old = floe_proto_msg_field(w, x->number)) &&
                    !in_real_oneof(old))
                    moved++;
            }
            if (existed)
                problem(c, "FIELD_MOVED_TO_EXISTING_ONEOF", path,
                        "The field moved into an existing oneof");
            else if (moved > 1)
                problem(c, "MULTIPLE_FIELDS_MOVED_TO_ONEOF", path,
                        "Several existing fields moved into one new oneof");
        }
    }
    for (size_t i = 0; i < r->nfields; i++) {
        const floe_proto_field_t *rf = &r->fields[i];
        if (rf->label == FLOE_PL_REQUIRED && !floe_proto_msg_field(w, rf->number)) {
            snprintf(path, sizeof path, "%s/%d", name, (int)rf->number);
            problem(c, "REQUIRED_FIELD_ADDED", path, "A required field was added");
        }
    }
    for (size_t i = 0; i < w->nmsgs; i++) compare_msg(c, reader, &w->msgs[i], depth + 1);
}

bool floe_registry_proto_compatible(const floe_proto_schema_t *reader,
                                    const floe_proto_schema_t *writer, floe_buf_t *msgs)
{
    const floe_proto_file_t *w = floe_proto_schema_file(writer);
    ctx_t c = {msgs, 0, w->package, floe_proto_schema_file(reader)->package};
    for (size_t i = 0; i < w->nmsgs; i++) compare_msg(&c, reader, &w->msgs[i], 0);
    return c.nproblems == 0;
}
