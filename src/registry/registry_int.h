/* The registry's state, shared by registry.c (state, records, operations)
 * and registry_http.c (the REST API). */
#ifndef FLOE_REGISTRY_REGISTRY_INT_H
#define FLOE_REGISTRY_REGISTRY_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "registry/registry.h"

/* One registered schema text under its global id. */
typedef struct reg_schema {
    int32_t id;
    char *text; /* the parsed schema written back (floe_avro_schema_to_json) */
} reg_schema_t;

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

/* An answer of an operation: HTTP status and, for errors, the Confluent
 * error code and message. */
typedef struct reg_status {
    int http;
    int code; /* error_code; 0 on success */
    char msg[512];
} reg_status_t;

/* Lookups; r->mu held.  NULL when absent. */
reg_subject_t *reg_subject(floe_registry_t *r, const char *name);
const reg_schema_t *reg_schema_by_id(floe_registry_t *r, int32_t id);
const reg_schema_t *reg_schema_by_text(floe_registry_t *r, const char *text);
/* The newest version of s (soft-deleted ones too when deleted), or NULL. */
const reg_version_t *reg_latest(const reg_subject_t *s, bool deleted);
/* Version v of s, or NULL. */
reg_version_t *reg_version(reg_subject_t *s, int32_t v);
bool reg_has_live(const reg_subject_t *s);

/* Compatibility level names; NULL when unknown. */
const char *reg_level_name(const char *level);
/* The level in force for subject s (s may be NULL). */
const char *reg_level(floe_registry_t *r, const reg_subject_t *s);

/* Parse an Avro schema text into its stored form (caller frees with
 * free()) and optionally the parsed root (caller frees).  -1 with st
 * filled (42201) when invalid. */
int reg_parse(const char *text, size_t len, char **canon, floe_avro_schema_t **root,
              reg_status_t *st);

/* Check candidate (parsed) against subject s's versions per level: all
 * live versions when transitive, else the newest live one; or only
 * version `only` when it is not NULL.  true when compatible; messages
 * appended to msgs. */
bool reg_compatible(floe_registry_t *r, const reg_subject_t *s, const reg_version_t *only,
                    const floe_avro_schema_t *candidate, const char *level, floe_buf_t *msgs);

/* State changes: each persists its record(s) and applies them; r->mu
 * held.  -1 with st filled (500 when the store failed). */
int reg_put_version(floe_registry_t *r, const char *subject, int32_t version, int32_t id,
                    const char *text, bool deleted, reg_status_t *st);
int reg_drop_version(floe_registry_t *r, const char *subject, int32_t version, reg_status_t *st);
int reg_put_config(floe_registry_t *r, const char *subject, const char *level, reg_status_t *st);
int reg_put_mode(floe_registry_t *r, const char *subject, const char *mode, reg_status_t *st);

/* Fill st with an error. Returns -1. */
int reg_fail(reg_status_t *st, int http, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
