/* Protocol Buffers schemas: .proto files (proto2 and proto3) and their
 * binary form, a serialized google.protobuf.FileDescriptorProto, read into
 * one descriptor model and written back in either form.
 *
 * Why our own: a schema registry holds .proto text (or, from some clients,
 * a base64 FileDescriptorProto) and floe decodes records from it without a
 * code generator.  Facts come from the Protocol Buffers language guides
 * (proto2, proto3), the encoding guide and descriptor.proto.
 *
 * The pieces:
 *   file    floe_proto_file_t: one .proto file (package, imports,
 *           messages, enums; services and extensions are read and
 *           dropped).  Parsed from text (floe_proto_parse) or from a
 *           FileDescriptorProto (floe_proto_fdp_decode); written as text
 *           (floe_proto_to_text, the registry's canonical form) or as a
 *           FileDescriptorProto (floe_proto_fdp_encode).  A map field is
 *           kept as descriptor.proto does: a repeated field of a nested
 *           map-entry message; proto3 `optional` as a field with
 *           proto3_optional and a synthetic oneof after the real ones.
 *   schema  floe_proto_schema_t: a file with the files it imports, type
 *           names resolved to fully qualified ones (".pkg.Msg") and linked
 *           to their message or enum.  The well-known types
 *           (google/protobuf/timestamp.proto, duration, wrappers, struct,
 *           empty, any, field_mask) are built in: an import of one that
 *           no reference supplies takes floe's own copy.
 *
 * Every input is untrusted: lengths and nesting are checked, sizes capped,
 * errors name what is wrong and where. */
#ifndef FLOE_FORMAT_PROTO_H
#define FLOE_FORMAT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* FieldDescriptorProto.Type numbers. */
typedef enum floe_proto_type {
    FLOE_PT_DOUBLE = 1,
    FLOE_PT_FLOAT,
    FLOE_PT_INT64,
    FLOE_PT_UINT64,
    FLOE_PT_INT32,
    FLOE_PT_FIXED64,
    FLOE_PT_FIXED32,
    FLOE_PT_BOOL,
    FLOE_PT_STRING,
    FLOE_PT_GROUP,
    FLOE_PT_MESSAGE,
    FLOE_PT_BYTES,
    FLOE_PT_UINT32,
    FLOE_PT_ENUM,
    FLOE_PT_SFIXED32,
    FLOE_PT_SFIXED64,
    FLOE_PT_SINT32,
    FLOE_PT_SINT64,
} floe_proto_type_t;

/* FieldDescriptorProto.Label numbers. */
enum { FLOE_PL_OPTIONAL = 1, FLOE_PL_REQUIRED = 2, FLOE_PL_REPEATED = 3 };

struct floe_proto_msg;
struct floe_proto_enum;

typedef struct floe_proto_field {
    const char *name;
    int32_t number;
    int label; /* FLOE_PL_* */
    int type;  /* floe_proto_type_t; 0 until resolved for a named type in text */
    /* message or enum type: as written until the schema resolves it, then
     * fully qualified with a leading '.' */
    const char *type_name;
    const char *default_value; /* proto2 [default = ...] as descriptor.proto writes it, or NULL */
    int32_t oneof;             /* index into the message's oneofs, or -1 */
    bool proto3_optional;
    int8_t packed; /* [packed = ...]: -1 not given, 0 false, 1 true */
    bool plain;    /* set by resolution: the name is [A-Za-z0-9_]+ (needs no escaping) */
    /* set by schema resolution */
    const struct floe_proto_msg *msg;
    const struct floe_proto_enum *en;
} floe_proto_field_t;

typedef struct floe_proto_enum_value {
    const char *name;
    int32_t number;
} floe_proto_enum_value_t;

typedef struct floe_proto_enum {
    const char *name;
    const char *full; /* ".pkg.Outer.E" */
    floe_proto_enum_value_t *vals;
    size_t nvals;
    bool allow_alias;
} floe_proto_enum_t;

typedef struct floe_proto_range {
    int32_t start, end; /* reserved numbers: [start, end) as descriptor.proto keeps them */
} floe_proto_range_t;

typedef struct floe_proto_msg {
    const char *name;
    const char *full; /* ".pkg.Outer.Msg" */
    floe_proto_field_t *fields;
    size_t nfields;
    struct floe_proto_msg *msgs; /* nested messages */
    size_t nmsgs;
    floe_proto_enum_t *enums;
    size_t nenums;
    const char **oneofs; /* names; synthetic ones (proto3 optional) after the real ones */
    size_t noneofs;
    bool map_entry;
    int syntax; /* its file's (2 or 3), set by schema resolution */
    floe_proto_range_t *reserved;
    size_t nreserved;
    const char **reserved_names;
    size_t nreserved_names;
} floe_proto_msg_t;

typedef struct floe_proto_file {
    floe_arena_t arena; /* owns everything below */
    const char *name;   /* "shop/payment.proto"; may be "" */
    const char *package;
    int syntax; /* 2 or 3 */
    const char **deps;
    size_t ndeps;
    floe_proto_msg_t *msgs;
    size_t nmsgs;
    floe_proto_enum_t *enums;
    size_t nenums;
} floe_proto_file_t;

/* Parse .proto text p[0..n) as a file called `name` (borrowed; NULL for
 * "").  Type names stay as written until a schema resolves them.  0 and
 * *out (caller frees with floe_proto_file_free), or -1 with err
 * (FLOE_EINVAL, with line and column). */
int floe_proto_parse(const char *p, size_t n, const char *name, floe_proto_file_t **out,
                     floe_err_t *err);

/* Decode a serialized FileDescriptorProto p[0..n).  0 and *out (caller
 * frees), or -1 with err (FLOE_ECORRUPT for bytes that are not one,
 * FLOE_EINVAL for a descriptor floe does not take: editions, groups). */
int floe_proto_fdp_decode(const uint8_t *p, size_t n, floe_proto_file_t **out, floe_err_t *err);

/* One file as a schema registry holds or answers it: .proto text, or a
 * base64 serialized FileDescriptorProto (what Confluent's JavaScript and
 * Python serializers register, and what `?format=serialized` answers).
 * Text that parses as .proto is text; only otherwise is it read as base64
 * (surrounding whitespace ignored, none inside), and taken only when the
 * bytes decode to a FileDescriptorProto: a text is never guessed to be
 * base64 from its alphabet alone.  name (borrowed; NULL: the descriptor's
 * own, "" for text) names the file.  0 and *out (caller frees), or -1 with
 * err: the descriptor's error when p is base64, else the text's. */
int floe_proto_load(const char *p, size_t n, const char *name, floe_proto_file_t **out,
                    floe_err_t *err);

/* Append f's FileDescriptorProto to out (caller-owned).  Type names are
 * written as f holds them (resolved ones fully qualified).  0 or -1 (out
 * of memory). */
int floe_proto_fdp_encode(const floe_proto_file_t *f, floe_buf_t *out);

/* Append f as .proto text to out: one form for one descriptor (fields in
 * declaration order, map and optional fields in their source spelling),
 * so equal descriptors give equal texts.  0 or -1 (out of memory). */
int floe_proto_to_text(const floe_proto_file_t *f, floe_buf_t *out);

void floe_proto_file_free(floe_proto_file_t *f);

/* The text of the built-in well-known type file `name`
 * ("google/protobuf/timestamp.proto" ...), or NULL. */
const char *floe_proto_wkt_text(const char *name);

typedef struct floe_proto_schema floe_proto_schema_t;

/* A schema of main and the files it imports (deps[0..ndeps), found by
 * their names).  Takes ownership of main and of every deps[i], also on
 * failure.  Imports not among deps are taken from the well-known types;
 * any other missing import, an unknown type name, a duplicate name or a
 * map key that is not an integral or string type fails with err
 * (FLOE_EINVAL).  Caller frees with floe_proto_schema_free. */
int floe_proto_schema_new(floe_proto_file_t *main, floe_proto_file_t **deps, size_t ndeps,
                          floe_proto_schema_t **out, floe_err_t *err);
void floe_proto_schema_free(floe_proto_schema_t *s);

/* The schema's own file (resolved; borrowed until the schema is freed). */
const floe_proto_file_t *floe_proto_schema_file(const floe_proto_schema_t *s);

/* The message the Confluent message indexes idx[0..n) name in s's own
 * file (top-level index, then nested ones; n == 0 is the first message),
 * or NULL. */
const floe_proto_msg_t *floe_proto_schema_message(const floe_proto_schema_t *s, const int32_t *idx,
                                                  size_t n);

/* The message or enum of a fully qualified name (".pkg.M") among the
 * schema's files, or NULL. */
const floe_proto_msg_t *floe_proto_schema_find_msg(const floe_proto_schema_t *s, const char *full);

/* The field of m numbered `number`, or NULL. */
const floe_proto_field_t *floe_proto_msg_field(const floe_proto_msg_t *m, int32_t number);

/* One field of the binary wire format: its number and wire type (0
 * varint, 1 fixed64, 2 length-delimited, 5 fixed32; groups, 3, are
 * skipped whole and returned with wt 3) and its value: v for 0, 1 and 5,
 * p[0..len) for 2 (and the group's bytes for 3). */
typedef struct floe_proto_wire {
    uint32_t number;
    int wt;
    uint64_t v;
    const uint8_t *p;
    size_t len;
} floe_proto_wire_t;

/* The field at p[*off..n): 1 with *w and *off past it, 0 at n, -1 with
 * err (FLOE_ECORRUPT naming the byte offset) for bytes that are not one. */
int floe_proto_wire_next(const uint8_t *p, size_t n, size_t *off, floe_proto_wire_t *w,
                         floe_err_t *err);

/* Whether a field of type t may be packed (numeric scalars and enums). */
bool floe_proto_packable(int t);

/* The keyword of a scalar type ("int64"), or NULL for message/enum/group. */
const char *floe_proto_type_name(int t);

#endif
