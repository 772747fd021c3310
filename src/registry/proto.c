/* The PROTOBUF schema type of the registry (registry_int.h): schemas
 * arrive as .proto text or as a base64 serialized FileDescriptorProto (the
 * Confluent serializers of JavaScript and Python send that), imports
 * resolve through references (well-known types without any), the stored
 * form is the resolved file written as .proto text, and `?format=
 * serialized` answers the descriptor again.  Compatibility follows the
 * Confluent registry's Protobuf rules (proto_compat.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"
#include "registry/registry_int.h"
#include "util/base64.h"

#define MAX_REF_DEPTH 16

/* One file from stored or offered text; name (NULL: its own) given. */
static int load_file(const char *text, size_t len, const char *name, floe_proto_file_t **out,
                     reg_status_t *st)
{
    floe_err_t err = {0};
    if (!floe_proto_load(text, len, name, out, &err)) return 0;
    return reg_fail(st, 422, 42201, "Invalid schema: %s", err.msg);
}

typedef struct files {
    floe_proto_file_t **f;
    size_t n;
} files_t;

static void files_free(files_t *fs)
{
    for (size_t i = 0; i < fs->n; i++) floe_proto_file_free(fs->f[i]);
    free(fs->f);
    fs->f = NULL;
    fs->n = 0;
}

/* The files refs name, and theirs, into fs (each once). */
static int collect(floe_registry_t *r, const reg_ref_t *refs, size_t nrefs, files_t *fs, int depth,
                   reg_status_t *st)
{
    if (depth > MAX_REF_DEPTH)
        return reg_fail(st, 422, 42201, "Invalid schema: references nested deeper than %d",
                        MAX_REF_DEPTH);
    for (size_t i = 0; i < nrefs; i++) {
        bool have = false;
        for (size_t k = 0; k < fs->n && !have; k++) have = !strcmp(fs->f[k]->name, refs[i].name);
        if (have) continue;
        const reg_schema_t *sc = reg_ref_schema(r, &refs[i]);
        if (!sc || sc->type != &reg_type_protobuf)
            return reg_fail(st, 422, 42201,
                            "Invalid schema: reference %s is not a registered Protobuf schema",
                            refs[i].name);
        floe_proto_file_t *f;
        if (load_file(sc->text, strlen(sc->text), refs[i].name, &f, st)) return -1;
        floe_proto_file_t **slot = realloc(fs->f, (fs->n + 1) * sizeof *slot);
        if (!slot) {
            floe_proto_file_free(f);
            return reg_fail(st, 500, 50001, "out of memory");
        }
        fs->f = slot;
        fs->f[fs->n++] = f;
        if (collect(r, sc->refs, sc->nrefs, fs, depth + 1, st)) return -1;
    }
    return 0;
}

/* text with refs as a resolved schema; name (NULL: the file's own). */
static int load_schema(floe_registry_t *r, const char *text, size_t len, const char *name,
                       const reg_ref_t *refs, size_t nrefs, floe_proto_schema_t **out,
                       reg_status_t *st)
{
    floe_proto_file_t *main = NULL;
    files_t fs = {0};
    if (load_file(text, len, name, &main, st)) return -1;
    if (collect(r, refs, nrefs, &fs, 0, st)) {
        floe_proto_file_free(main);
        files_free(&fs);
        return -1;
    }
    floe_err_t err = {0};
    int rc = floe_proto_schema_new(main, fs.f, fs.n, out, &err);
    free(fs.f);
    if (rc) return reg_fail(st, 422, 42201, "Invalid schema: %s", err.msg);
    return 0;
}

static int pb_parse(floe_registry_t *r, const char *text, size_t len, const reg_ref_t *refs,
                    size_t nrefs, char **canon, void **parsed, reg_status_t *st)
{
    floe_proto_schema_t *s = NULL;
    *canon = NULL;
    if (load_schema(r, text, len, NULL, refs, nrefs, &s, st)) return -1;
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_proto_to_text(floe_proto_schema_file(s), &b) || !(*canon = floe_buf_cstr(&b))) {
        floe_buf_free(&b);
        floe_proto_schema_free(s);
        return reg_fail(st, 500, 50001, "out of memory");
    }
    if (parsed) *parsed = s;
    else
        floe_proto_schema_free(s);
    return 0;
}

static void pb_free(void *p)
{
    floe_proto_schema_free(p);
}

/* ?format=serialized: the descriptor, base64; the default: the text. */
static char *pb_render(floe_registry_t *r, const reg_schema_t *sc, const char *format)
{
    if (!format || strcmp(format, "serialized")) return NULL;
    char name[64];
    snprintf(name, sizeof name, "floe-schema-%d.proto", (int)sc->id);
    floe_proto_schema_t *s = NULL;
    reg_status_t st;
    if (load_schema(r, sc->text, strlen(sc->text), name, sc->refs, sc->nrefs, &s, &st)) return NULL;
    floe_buf_t fdp = FLOE_BUF_INIT, out = FLOE_BUF_INIT;
    char *t = NULL;
    if (!floe_proto_fdp_encode(floe_proto_schema_file(s), &fdp) &&
        !floe_base64_encode(&out, fdp.data, fdp.len))
        t = floe_buf_cstr(&out);
    if (!t) floe_buf_free(&out);
    floe_buf_free(&fdp);
    floe_proto_schema_free(s);
    return t;
}

static bool pb_compatible(const void *reader, const void *writer, floe_buf_t *msgs)
{
    return floe_registry_proto_compatible(reader, writer, msgs);
}

const reg_type_t reg_type_protobuf = {"PROTOBUF", pb_parse, pb_compatible,
                                      pb_render,  pb_free,  NULL};

int floe_registry_proto_schema(floe_registry_t *r, int32_t id, floe_proto_schema_t **out,
                               floe_err_t *err)
{
    *out = NULL;
    pthread_mutex_lock(&r->mu);
    const reg_schema_t *sc = reg_schema_by_id(r, id);
    reg_status_t st = {0};
    int rc = -1;
    if (!sc) floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry", (int)id);
    else if (sc->type != &reg_type_protobuf)
        floe_err_set(err, FLOE_EINVAL, "schema id %d is not a Protobuf schema", (int)id);
    else if (load_schema(r, sc->text, strlen(sc->text), NULL, sc->refs, sc->nrefs, out, &st))
        floe_err_set(err, FLOE_EINVAL, "schema id %d: %s", (int)id, st.msg);
    else
        rc = 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}
