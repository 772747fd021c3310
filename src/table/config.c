#include "table/config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/parse.h"

static const char *const known[] = {
    "table.enable",
    "table.namespace",
    "table.name",
    "table.commit.interval.ms",
    "table.value.converter",
    "table.key.converter",
    "table.flush.bytes",
    "table.target.file.size",
    "table.invalid.record.action",
    "table.partition.by",
    "table.json.infer.timestamps",
    "table.json.coerce",
};

bool floe_table_config_known(const char *key)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(key, known[i]) == 0) return true;
    return false;
}

const char *floe_invalid_action_name(floe_invalid_action_t a)
{
    switch (a) {
    case FLOE_INVALID_DLQ: return "dlq";
    case FLOE_INVALID_DROP: return "drop";
    case FLOE_INVALID_PAUSE: return "pause";
    }
    return "?";
}

/* Iceberg names: letters, digits, '_' and '-'; no dots (they separate
 * levels), no slashes (they become paths). */
static int check_ident(const char *key, const char *v, floe_err_t *err)
{
    if (!*v) return floe_err_set(err, FLOE_EINVAL, "%s: empty name", key);
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return floe_err_set(err, FLOE_EINVAL,
                                "%s: '%s' may hold only letters, digits, '_' and '-'", key, v);
    return 0;
}

static int apply(floe_table_config_t *c, const char *key, const char *v, floe_err_t *err)
{
    int rc = 0;
    if (!strcmp(key, "table.enable")) {
        rc = floe_parse_bool(v, &c->enable, err);
    } else if (!strcmp(key, "table.namespace")) {
        if (check_ident(key, v, err) < 0) return -1;
        if (strlen(v) >= sizeof c->namespace_)
            return floe_err_set(err, FLOE_EINVAL, "%s: name too long", key);
        strcpy(c->namespace_, v);
    } else if (!strcmp(key, "table.name")) {
        if (check_ident(key, v, err) < 0) return -1;
        if (strlen(v) >= sizeof c->name)
            return floe_err_set(err, FLOE_EINVAL, "%s: name too long", key);
        strcpy(c->name, v);
    } else if (!strcmp(key, "table.commit.interval.ms")) {
        rc = floe_parse_duration_ms(v, &c->commit_interval_ms, err);
        if (rc == 0 && (c->commit_interval_ms < 100 || c->commit_interval_ms > 86400000))
            return floe_err_set(err, FLOE_ERANGE, "%s: %s is outside 100ms..1d", key, v);
    } else if (!strcmp(key, "table.value.converter")) {
        rc = floe_conv_kind_parse(v, &c->value_conv, err);
    } else if (!strcmp(key, "table.key.converter")) {
        rc = floe_conv_kind_parse(v, &c->key_conv, err);
    } else if (!strcmp(key, "table.flush.bytes")) {
        rc = floe_parse_size(v, &c->flush_bytes, err);
        if (rc == 0 && (c->flush_bytes < 1024 || c->flush_bytes > (1ull << 32)))
            return floe_err_set(err, FLOE_ERANGE, "%s: %s is outside 1KiB..4GiB", key, v);
    } else if (!strcmp(key, "table.target.file.size")) {
        rc = floe_parse_size(v, &c->target_file_bytes, err);
        if (rc == 0 && (c->target_file_bytes < 1024 || c->target_file_bytes > (1ull << 40)))
            return floe_err_set(err, FLOE_ERANGE, "%s: %s is outside 1KiB..1TiB", key, v);
    } else if (!strcmp(key, "table.invalid.record.action")) {
        if (!strcasecmp(v, "dlq")) c->invalid_action = FLOE_INVALID_DLQ;
        else if (!strcasecmp(v, "drop"))
            c->invalid_action = FLOE_INVALID_DROP;
        else if (!strcasecmp(v, "pause"))
            c->invalid_action = FLOE_INVALID_PAUSE;
        else
            return floe_err_set(err, FLOE_EINVAL, "%s: '%s' is not dlq, drop or pause", key, v);
    } else if (!strcmp(key, "table.json.infer.timestamps")) {
        rc = floe_parse_bool(v, &c->json_infer_timestamps, err);
    } else if (!strcmp(key, "table.json.coerce")) {
        rc = floe_parse_bool(v, &c->json_coerce, err);
    } else if (!strcmp(key, "table.partition.by")) {
        if (strlen(v) >= sizeof c->partition_by)
            return floe_err_set(err, FLOE_EINVAL, "%s: too long", key);
        strcpy(c->partition_by, v);
    }
    if (rc < 0) floe_err_wrap(err, "%s", key);
    return rc;
}

int floe_table_config_load(floe_table_config_t *c, const char *topic, floe_config_get_fn get,
                           void *ctx, floe_config_get_fn get_default, void *default_ctx,
                           floe_err_t *err)
{
    memset(c, 0, sizeof *c);
    c->commit_interval_ms = 10000;
    c->value_conv = FLOE_CONV_JSON;
    c->key_conv = FLOE_CONV_STRING;
    c->flush_bytes = 32ull << 20;
    c->target_file_bytes = 64ull << 20;
    c->invalid_action = FLOE_INVALID_DLQ;
    c->json_infer_timestamps = true;
    strcpy(c->namespace_, "default");
    size_t n = strlen(topic);
    if (n >= sizeof c->name) return floe_err_set(err, FLOE_EINVAL, "topic name too long");
    for (size_t i = 0; i <= n; i++) c->name[i] = topic[i] == '.' ? '_' : topic[i];
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *v = get_default ? get_default(default_ctx, known[i]) : NULL;
        if (v && apply(c, known[i], v, err) < 0) {
            floe_err_wrap(err, "server default");
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *v = get ? get(ctx, known[i]) : NULL;
        if (v && apply(c, known[i], v, err) < 0) {
            floe_err_wrap(err, "topic '%s'", topic);
            return -1;
        }
    }
    if (c->flush_bytes > c->target_file_bytes) c->flush_bytes = c->target_file_bytes;
    return 0;
}
