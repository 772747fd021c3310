/* Declarative configuration: each scope (the server, the consumer-group
 * coordinator, table topics) declares its keys once, in a table of
 * floe_conf_key_t: name, type, range, default, doc, whether a change
 * applies live, and where the value goes in the scope's struct.  From that
 * one table come parsing and validation (floe_conf_set), defaults
 * (floe_conf_defaults), the live/identity split (floe_conf_copy_live,
 * floe_conf_changed), a suggestion for a misspelt key (floe_conf_unknown)
 * and the README's configuration reference (floe_conf_markdown).
 *
 * Values are text as a user writes them; sizes and durations take the
 * units of util/parse.h.  Every error message starts with the key. */
#ifndef FLOE_UTIL_CONF_H
#define FLOE_UTIL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum floe_conf_type {
    FLOE_CONF_BOOL = 1, /* bool: true/false (also 1/0, yes/no, on/off) */
    FLOE_CONF_INT,      /* decimal integer in [min, max]; int32_t or int64_t */
    FLOE_CONF_SIZE,     /* bytes, units allowed, in [min, max]; 4 or 8 bytes */
    FLOE_CONF_DURATION, /* milliseconds, units allowed, in [min, max]; 4 or 8 bytes */
    FLOE_CONF_ENUM,     /* one of values[] (any case), stored as its int value */
    FLOE_CONF_STRING,   /* text, stored NUL-padded in a char array of `size` */
} floe_conf_type_t;

typedef struct floe_conf_enum {
    const char *name;
    int value;
} floe_conf_enum_t;

typedef struct floe_conf_key {
    const char *name;
    floe_conf_type_t type;
    int64_t min, max; /* INT, SIZE, DURATION: the inclusive range */
    /* The default, written as a user would write the value (it goes
     * through the same parser); NULL: none, def_doc says what happens. */
    const char *def;
    /* The default in words for the reference: what happens without def,
     * or what a def such as Kafka's Long.MAX "never" means. */
    const char *def_doc;
    const floe_conf_enum_t *values; /* ENUM: ended by {NULL, 0} */
    /* A change applies to what runs (what "runs" is the scope's to say:
     * a running table for table.*); else it needs a restart or rebuild. */
    bool live;
    size_t off, size; /* the field in the scope's struct: FLOE_CONF_FIELD */
    /* STRING: more checks than "fits" (NULL: any text); 0, or -1 with *err
     * saying why, without the key (floe_conf_set adds it). */
    int (*check)(const char *value, floe_err_t *err);
    const char *doc; /* one or two sentences, Markdown */
    /* Its name in a YAML file when the scope's rule does not give it
     * (table.*: floe_table_config_yaml_name); NULL: the rule's. */
    const char *yaml;
} floe_conf_key_t;

/* Where field f of struct T is, for a key's off and size. */
#define FLOE_CONF_FIELD(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)

/* The key named name in keys[0..n), or NULL. */
const floe_conf_key_t *floe_conf_find(const floe_conf_key_t *keys, size_t n, const char *name);

/* Parse value (borrowed) as key k wants and store it in obj's field;
 * obj is unchanged on error.  Returns 0, or -1 with *err starting with
 * the key name and saying why ("table.enable: invalid boolean 'ture':
 * expected true or false"). */
int floe_conf_set(const floe_conf_key_t *k, void *obj, const char *value, floe_err_t *err);

/* Set every key of keys[0..n) that has a default to it.  -1 with *err
 * only when a declared default does not parse (a bug in the table). */
int floe_conf_defaults(const floe_conf_key_t *keys, size_t n, void *obj, floe_err_t *err);

/* Whether a non-live key differs between two structs of the scope. */
bool floe_conf_changed(const floe_conf_key_t *keys, size_t n, const void *a, const void *b);

/* Copy the live keys' fields from src to dst. */
void floe_conf_copy_live(const floe_conf_key_t *keys, size_t n, void *dst, const void *src);

/* The error for a key of no scope's table: "NAME: unknown WHAT config",
 * plus " (did you mean KEY?)" when one key is a typo away.  Returns -1. */
int floe_conf_unknown(const floe_conf_key_t *keys, size_t n, const char *name, const char *what,
                      floe_err_t *err);

/* Read a config file of `key = value` lines (blanks around both trimmed;
 * empty lines and lines starting with '#' skipped) and call set(arg,
 * key, value) for each (both borrowed for the call).  Stops at the first
 * line set refuses, with *err prefixed "PATH:LINE: "; a line without '='
 * is FLOE_EINVAL; an unreadable file is its errno. */
int floe_conf_read_file(const char *path,
                        int (*set)(void *arg, const char *key, const char *value, floe_err_t *err),
                        void *arg, floe_err_t *err);

/* The keys as a Markdown table: key, value (type and range, or the
 * choices), default, live (when live_column) and description.  0, or -1
 * when out of memory. */
int floe_conf_markdown(const floe_conf_key_t *keys, size_t n, bool live_column, floe_buf_t *out);

#endif
