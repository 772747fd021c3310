/* The registry's state, shared by registry.c (state, records, operations)
 * and registry_http.c (the REST API). */
#ifndef FLOE_REGISTRY_REGISTRY_INT_H
#define FLOE_REGISTRY_REGISTRY_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "registry/registry.h"

/* A reference of a schema to another: the import `name` is the schema
 * registered as `subject` version `version` (-1: the latest). */
typedef struct reg_ref {
    char *name, *subject;
    int32_t version;
} reg_ref_t;

typedef struct reg_type reg_type_t;

/* One registered schema under its global id: its type, its text in the
 * type's canonical form (the parsed schema written back) and its
 * references.  Two schemas are the same when all three are. */
typedef struct reg_schema {
    int32_t id;
    const reg_type_t *type;
    char *text;
    reg_ref_t *refs;
    size_t nrefs;
} reg_schema_t;

/* An answer of an operation: HTTP status and, for errors, the Confluent
 * error code and message. */
typedef struct reg_status {
    int http;
    int code; /* error_code; 0 on success */
    char msg[512];
} reg_status_t;

/* A schema type: what the registry does differently per schemaType.
 * Adding a type is one more of these (registry.c lists them). */
struct reg_type {
    const char *name; /* "AVRO", "PROTOBUF", "JSON" */
    const char *what; /* the type in messages: "Avro", "Protobuf", "JSON" */
    /* Parse text[0..len) with its references (resolved in r; r->mu held):
     * the parsed schema (freed with free_parsed), or NULL with st filled
     * (422/42201 when invalid). */
    void *(*load)(floe_registry_t *r, const char *text, size_t len, const reg_ref_t *refs,
                  size_t nrefs, reg_status_t *st);
    /* The parsed schema written back in the type's canonical form (the
     * stored text): malloc'd, or NULL with st filled. */
    char *(*canonical)(const void *parsed, reg_status_t *st);
    /* Whether data written with writer reads with reader (both loaded);
     * one line per problem appended to msgs (may be NULL). */
    bool (*compatible)(const void *reader, const void *writer, floe_buf_t *msgs);
    /* sc's text in the form a client asks for with ?format= (NULL or ""
     * for the default): a malloc'd text, or NULL for the stored text.
     * NULL: the stored text always. */
    char *(*render)(floe_registry_t *r, const reg_schema_t *sc, const char *format);
    void (*free_parsed)(void *parsed);
    /* Whether two canonical texts are one schema; NULL: when they are
     * equal (JSON keeps its members' order in its text, not in its
     * meaning). */
    bool (*same)(const char *a, const char *b);
    /* How load walks references (reg_refs_walk).  refs_by_name: each
     * reference name once, taken before the schemas it references (a name
     * is a document or a file the schema imports: JSON, Protobuf); false:
     * each schema once, taken after the schemas it references (Avro
     * defines a named type before its use). */
    bool refs_by_name;
    /* Take sc, which ref names, into arg (all borrowed for the walk; r->mu
     * held): 0, or -1 with st filled. */
    int (*take_ref)(void *arg, const reg_ref_t *ref, const reg_schema_t *sc, reg_status_t *st);
};

/* The type named `name` (NULL or "": AVRO), or NULL when unknown. */
const reg_type_t *reg_type_named(const char *name);
extern const reg_type_t reg_type_avro, reg_type_protobuf, reg_type_json;

/* A schema offered by a request: type, canonical text, references (all
 * owned) and the parsed form. */
typedef struct reg_cand {
    reg_schema_t s; /* id 0 */
    void *parsed;
} reg_cand_t;
void reg_cand_free(reg_cand_t *c);
/* Whether stored schema sc is the candidate's schema. */
bool reg_same(const reg_schema_t *sc, const reg_schema_t *c);

/* References from a record's or request's JSON array a (NULL or null:
 * none): 0 with *out (caller frees each name and subject and the array;
 * NULL when none), 1 when malformed, -1 out of memory. */
int reg_refs_from_json(json_t *a, reg_ref_t **out, size_t *n);
/* refs[0..n) as a JSON array appended to b; 0 or -1. */
int reg_refs_json(floe_buf_t *b, const reg_ref_t *refs, size_t n);

/* The stored schema a reference names, or NULL; r->mu held. */
const reg_schema_t *reg_ref_schema(floe_registry_t *r, const reg_ref_t *ref);

/* Walk refs[0..nrefs) and, recursively, the references of the schemas
 * they name (at most 16 deep), handing each to t->take_ref with arg once,
 * in the order t says; r->mu held.  0, or -1 with st filled: 422/42201
 * when a reference does not name a registered schema of type t or nests
 * too deep, 500 when out of memory, or what take_ref failed with. */
int reg_refs_walk(floe_registry_t *r, const reg_type_t *t, void *arg, const reg_ref_t *refs,
                  size_t nrefs, reg_status_t *st);

/* Parse text of type t with its references (r->mu held) into its
 * canonical text (*canon, caller frees with free()) and, when parsed is
 * not NULL, the parsed schema (freed with t->free_parsed).  -1 with st
 * filled (422/42201 for an invalid schema). */
int reg_parse(floe_registry_t *r, const reg_type_t *t, const char *text, size_t len,
              const reg_ref_t *refs, size_t nrefs, char **canon, void **parsed, reg_status_t *st);

/* The schema of type t registered under id, loaded with its references,
 * for the converters (takes r->mu): the parsed schema (caller frees with
 * t->free_parsed), or NULL with err (FLOE_ENOENT: no such id;
 * FLOE_EINVAL: not of type t, or not loadable; FLOE_ENOMEM). */
void *reg_schema_load(floe_registry_t *r, int32_t id, const reg_type_t *t, floe_err_t *err);

typedef struct reg_version {
    int32_t version;
    int32_t id;
    bool deleted; /* soft-deleted */
} reg_version_t;

typedef struct reg_subject {
    char *name;
    reg_version_t *v; /* ascending by version */
    size_t nv, cap;
    char compat[32]; /* "" when the global level applies */
    char mode[32];   /* "" when the global mode applies */
} reg_subject_t;

struct floe_registry {
    pthread_mutex_t mu;
    floe_registry_persist_fn persist;
    void *persist_arg;
    reg_subject_t *subs;
    size_t nsubs, subs_cap;
    reg_schema_t *schemas;
    size_t nschemas, schemas_cap;
    int32_t max_id;
    char compat[32];
    char mode[32];
};

/* Lookups; r->mu held.  NULL when absent. */
reg_subject_t *reg_subject(floe_registry_t *r, const char *name);
const reg_schema_t *reg_schema_by_id(floe_registry_t *r, int32_t id);
const reg_schema_t *reg_schema_same(floe_registry_t *r, const reg_schema_t *c);
/* The newest version of s (soft-deleted ones too when deleted), or NULL. */
const reg_version_t *reg_latest(const reg_subject_t *s, bool deleted);
/* Version v of s, or NULL. */
reg_version_t *reg_version(reg_subject_t *s, int32_t v);
bool reg_has_live(const reg_subject_t *s);

/* Whether some subject version (soft-deleted ones too) has schema id. */
bool reg_schema_live(floe_registry_t *r, int32_t id);
/* Whether schema sc, still used by a version, references version v of s
 * (v NULL: any version of s); r->mu held. */
bool reg_refers_to(floe_registry_t *r, const reg_schema_t *sc, const reg_subject_t *s,
                   const reg_version_t *v);

/* Compatibility level names; NULL when unknown. */
const char *reg_level_name(const char *level);
/* The level in force for subject s (s may be NULL). */
const char *reg_level(floe_registry_t *r, const reg_subject_t *s);

/* Parse a candidate of type t with references refs (taken: moved into
 * c, also on failure) into c.  -1 with st filled (422 when invalid). */
int reg_cand_parse(floe_registry_t *r, const reg_type_t *t, const char *text, size_t len,
                   reg_ref_t *refs, size_t nrefs, reg_cand_t *c, reg_status_t *st);

/* Check candidate c against subject s's versions per level: all live
 * versions when transitive, else the newest live one; or only version
 * `only` when it is not NULL.  true when compatible; messages appended
 * to msgs. */
bool reg_compatible(floe_registry_t *r, const reg_subject_t *s, const reg_version_t *only,
                    const reg_cand_t *c, const char *level, floe_buf_t *msgs);

/* State changes: each persists its record(s) and applies them; r->mu
 * held.  -1 with st filled (500 when the store failed). */
int reg_put_version(floe_registry_t *r, const char *subject, int32_t version,
                    const reg_schema_t *sc, bool deleted, reg_status_t *st);
int reg_drop_version(floe_registry_t *r, const char *subject, int32_t version, reg_status_t *st);
int reg_put_config(floe_registry_t *r, const char *subject, const char *level, reg_status_t *st);
int reg_put_mode(floe_registry_t *r, const char *subject, const char *mode, reg_status_t *st);

/* Fill st with an error. Returns -1. */
int reg_fail(reg_status_t *st, int http, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
