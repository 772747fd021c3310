/* The broker's topic registry (broker.h): topics, their partitions' logs
 * and configs, persisted as one JSON file per topic under
 * DATA/meta/topics/; opening the data dir and closing the broker.
 * Producer-id blocks are in producer_ids.c, the flusher and the acks=all
 * waits in durability.c. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kafka/broker_int.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/rand.h"

/* Known Kafka topic configs and their defaults (Kafka's documented
 * values), in the order DescribeConfigs lists them. */
static const struct {
    const char *key, *def;
} known_cfg[] = {
    {"cleanup.policy", "delete"},
    {"compression.type", "producer"},
    {"delete.retention.ms", "86400000"},
    {"file.delete.delay.ms", "60000"},
    {"flush.messages", "9223372036854775807"},
    {"flush.ms", "9223372036854775807"},
    {"index.interval.bytes", "4096"},
    {"max.compaction.lag.ms", "9223372036854775807"},
    {"max.message.bytes", "1048588"},
    {"message.downconversion.enable", "true"},
    {"message.timestamp.difference.max.ms", "9223372036854775807"},
    {"message.timestamp.type", "CreateTime"},
    {"min.cleanable.dirty.ratio", "0.5"},
    {"min.compaction.lag.ms", "0"},
    {"min.insync.replicas", "1"},
    {"preallocate", "false"},
    {"retention.bytes", "-1"},
    {"retention.ms", "604800000"},
    {"segment.bytes", "1073741824"},
    {"segment.index.bytes", "10485760"},
    {"segment.jitter.ms", "0"},
    {"segment.ms", "604800000"},
    {"unclean.leader.election.enable", "false"},
};
#define NKNOWN (sizeof known_cfg / sizeof known_cfg[0])

static int known_index(const char *key)
{
    for (size_t i = 0; i < NKNOWN; i++)
        if (!strcmp(known_cfg[i].key, key)) return (int)i;
    return -1;
}

static bool is_table_key(const char *key)
{
    return !strncmp(key, "table.", 6) && key[6];
}

/* ---- files ---- */

static int meta_dir(const floe_broker_t *b, char *out, size_t n, floe_err_t *err)
{
    return floe_path_join(out, n, b->data_dir, "meta/topics", err);
}

int floe_broker_partition_dir(const char *data_dir, const char *topic, int32_t partition, char *out,
                              size_t size, floe_err_t *err)
{
    return floe_path_fmt(out, size, err, "%s/log/%s-%d", data_dir, topic, (int)partition);
}

/* Persist t's description (durably: a crash leaves the old file or the
 * new one).  A failure is logged here, once, and returned. */
static int save_topic(floe_broker_t *b, const floe_topic_t *t, int32_t nparts, floe_err_t *err)
{
    char hex[33];
    for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", t->id[i]);
    json_t *o = json_pack("{s:s, s:s, s:i, s:O}", "name", t->name, "id", hex, "partitions",
                          (json_int_t)nparts, "configs", t->configs);
    if (!o) return floe_err_oom(err);
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(o);
    if (!s) return floe_err_oom(err);
    char path[4096];
    int rc = floe_path_fmt(path, sizeof path, err, "%s/meta/topics/%s.json", b->data_dir, t->name);
    if (!rc) rc = floe_fs_write_atomic(path, s, strlen(s), err);
    if (rc) FLOE_ERROR("kafka: cannot save topic %s: %s", t->name, err->msg);
    free(s);
    return rc;
}

/* ---- configs ---- */

/* Kafka's Long.MAX "never" for flush.* means -1 to the log. */
static const char *log_value(const char *v)
{
    return !strcmp(v, "9223372036854775807") ? "-1" : v;
}

/* Check one key/value: 0 ok, -1 with err (naming the key). */
static int check_config(const char *key, const char *value, floe_err_t *err)
{
    if (is_table_key(key)) return 0;
    if (known_index(key) < 0)
        return floe_err_set(err, FLOE_EINVAL, "unknown topic config '%s'", key);
    if (!value) return 0;
    if (!strcmp(key, "message.timestamp.type")) {
        if (strcmp(value, "CreateTime") && strcmp(value, "LogAppendTime"))
            return floe_err_set(
                err, FLOE_EINVAL,
                "message.timestamp.type must be CreateTime or LogAppendTime, not '%s'", value);
        return 0;
    }
    if (!strcmp(key, "compression.type")) {
        if (strcmp(value, "producer") && floe_compression_parse(value) < 0)
            return floe_err_set(err, FLOE_EINVAL,
                                "compression.type '%s' is not one of "
                                "producer, none, gzip, snappy, lz4, zstd",
                                value);
        return 0;
    }
    floe_log_config_t lc;
    floe_log_config_default(&lc);
    if (floe_log_config_set(&lc, key, log_value(value), err) < 0) {
        floe_err_wrap(err, "topic config '%s'", key);
        return -1;
    }
    return 0;
}

/* The whole set of a topic's configs (a JSON object of strings) through
 * the configured check: 0, or -1 with *err (FLOE_EINVAL naming the key). */
static int check_set(const floe_broker_t *b, const char *topic, json_t *cfgs, floe_err_t *err)
{
    if (!b->cfg.check_configs) return 0;
    size_t n = json_object_size(cfgs), i = 0;
    const char **keys = calloc(n + 1, sizeof *keys), **values = calloc(n + 1, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return floe_err_oom(err);
    }
    const char *k;
    json_t *v;
    json_object_foreach(cfgs, k, v)
    {
        keys[i] = k;
        values[i++] = json_string_value(v);
    }
    int rc = b->cfg.check_configs(b->cfg.check_arg, topic, keys, values, n, err);
    free(keys);
    free(values);
    return rc;
}

static const char *lookup(const floe_broker_t *b, const floe_topic_t *t, const char *key,
                          bool *is_default)
{
    json_t *v = t ? json_object_get(t->configs, key) : NULL;
    if (v && json_is_string(v)) {
        if (is_default) *is_default = false;
        return json_string_value(v);
    }
    if (is_default) *is_default = true;
    v = json_object_get(b->defaults, key);
    if (v && json_is_string(v)) return json_string_value(v);
    int i = known_index(key);
    return i >= 0 ? known_cfg[i].def : NULL;
}

/* Derive the log config and flags from the topic's effective configs. */
static void derive(floe_broker_t *b, floe_topic_t *t)
{
    floe_log_config_default(&t->logcfg);
    for (size_t i = 0; i < NKNOWN; i++) {
        const char *v = lookup(b, t, known_cfg[i].key, NULL);
        /* only override the log's own defaults with explicitly set values */
        bool dflt;
        lookup(b, t, known_cfg[i].key, &dflt);
        if (dflt && !json_object_get(b->defaults, known_cfg[i].key)) continue;
        floe_err_t e;
        if (floe_log_config_set(&t->logcfg, known_cfg[i].key, log_value(v), &e) < 0)
            FLOE_WARN("kafka: topic %s: ignoring %s=%s: %s", t->name, known_cfg[i].key, v, e.msg);
    }
    t->log_append_time = !strcmp(lookup(b, t, "message.timestamp.type", NULL), "LogAppendTime");
}

/* ---- topics ---- */

bool floe_topic_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > 249) return false;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

static void topic_free(floe_topic_t *t)
{
    if (!t) return;
    for (int32_t i = 0; i < t->nparts; i++) floe_log_close(t->logs[i]);
    free(t->logs);
    free(t->held_warned_ms);
    free(t->clean_floor);
    json_decref(t->configs);
    free(t->name);
    free(t);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Remove a partition directory left behind by a deletion that crashed
 * half way (its description was removed first), so that a new topic of the
 * same name starts empty. */
static void remove_orphan(const floe_broker_t *b, const char *topic, int32_t p)
{
    char dir[4096];
    floe_err_t e;
    struct stat st;
    if (!floe_broker_partition_dir(b->data_dir, topic, p, dir, sizeof dir, &e) &&
        stat(dir, &st) == 0) {
        FLOE_WARN("kafka: removing leftover partition directory %s", dir);
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

/* Open partitions [from, to) of t. */
static int open_parts(floe_broker_t *b, floe_topic_t *t, int32_t to, floe_err_t *err)
{
    floe_log_t **logs = realloc(t->logs, (size_t)to * sizeof *logs);
    if (!logs) return floe_err_oom(err);
    t->logs = logs;
    int64_t *warned = realloc(t->held_warned_ms, (size_t)to * sizeof *warned);
    if (!warned) return floe_err_oom(err);
    t->held_warned_ms = warned;
    for (int32_t p = t->nparts; p < to; p++) warned[p] = 0;
    int64_t *floors = realloc(t->clean_floor, (size_t)to * sizeof *floors);
    if (!floors) return floe_err_oom(err);
    t->clean_floor = floors;
    for (int32_t p = t->nparts; p < to; p++) floors[p] = 0; /* until the tick knows */
    for (int32_t p = t->nparts; p < to; p++) {
        char dir[4096];
        if (floe_broker_partition_dir(b->data_dir, t->name, p, dir, sizeof dir, err) ||
            floe_log_open(dir, &t->logcfg, &t->logs[p], err)) {
            floe_err_wrap(err, "topic %s partition %d", t->name, p);
            return -1;
        }
        t->nparts = p + 1;
    }
    return 0;
}

static int add_topic(floe_broker_t *b, floe_topic_t *t)
{
    if (b->ntopics == b->captopics) {
        int nc = b->captopics ? b->captopics * 2 : 16;
        floe_topic_t **v = realloc(b->topics, (size_t)nc * sizeof *v);
        if (!v) return -1;
        b->topics = v;
        b->captopics = nc;
    }
    b->topics[b->ntopics++] = t;
    return 0;
}

static floe_topic_t *find_locked(floe_broker_t *b, const char *name, size_t len)
{
    for (int i = 0; i < b->ntopics; i++) {
        floe_topic_t *t = b->topics[i];
        if (strlen(t->name) == len && !memcmp(t->name, name, len)) return t;
    }
    return NULL;
}

floe_topic_t *floe_broker_topic(floe_broker_t *b, const char *name, size_t len)
{
    pthread_mutex_lock(&b->mu);
    floe_topic_t *t = find_locked(b, name, len);
    pthread_mutex_unlock(&b->mu);
    return t;
}

floe_topic_t *floe_broker_topic_by_id(floe_broker_t *b, const uint8_t id[16])
{
    floe_topic_t *r = NULL;
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->ntopics && !r; i++)
        if (!memcmp(b->topics[i]->id, id, 16)) r = b->topics[i];
    pthread_mutex_unlock(&b->mu);
    return r;
}

int floe_broker_topics(floe_broker_t *b, floe_topic_t ***out)
{
    pthread_mutex_lock(&b->mu);
    int n = b->ntopics;
    floe_topic_t **v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (v && n) memcpy(v, b->topics, (size_t)n * sizeof *v);
    pthread_mutex_unlock(&b->mu);
    if (!v) return -1;
    *out = v;
    return n;
}

static int load_topic(floe_broker_t *b, const char *path, floe_err_t *err)
{
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o) return floe_err_set(err, FLOE_ECORRUPT, "%s: %s (line %d)", path, je.text, je.line);
    const char *name = NULL, *hex = NULL;
    json_int_t np = 0;
    json_t *cfgs = NULL;
    if (json_unpack_ex(o, &je, 0, "{s:s, s:s, s:I, s:o}", "name", &name, "id", &hex, "partitions",
                       &np, "configs", &cfgs) ||
        strlen(hex) != 32 || np < 1 || np > 100000 || !json_is_object(cfgs) ||
        !floe_topic_name_valid(name, strlen(name))) {
        json_decref(o);
        return floe_err_set(err, FLOE_ECORRUPT, "%s: not a topic description", path);
    }
    floe_topic_t *t = calloc(1, sizeof *t);
    if (t) t->b = b;
    if (!t || !(t->name = strdup(name))) {
        free(t);
        json_decref(o);
        return floe_err_oom(err);
    }
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        t->id[i] = (uint8_t)v;
    }
    t->configs = json_incref(cfgs);
    json_decref(o);
    derive(b, t);
    if (open_parts(b, t, (int32_t)np, err) || add_topic(b, t)) {
        topic_free(t);
        return -1;
    }
    return 0;
}

int floe_broker_create_topic(floe_broker_t *b, const char *name, int32_t nparts,
                             const floe_kv_t *configs, int nconfigs, bool validate_only,
                             floe_topic_t **out, int16_t *kerr, floe_err_t *err)
{
    *kerr = FLOE_KERR_NONE;
    if (!floe_topic_name_valid(name, strlen(name))) {
        *kerr = FLOE_KERR_INVALID_TOPIC_EXCEPTION;
        return floe_err_set(err, FLOE_EINVAL, "invalid topic name '%.64s'", name);
    }
    if (!strcmp(name, FLOE_OFFSETS_TOPIC)) {
        *kerr = FLOE_KERR_INVALID_TOPIC_EXCEPTION;
        return floe_err_set(err, FLOE_EINVAL, "'%s' is reserved for the group offsets", name);
    }
    if (nparts == -1) nparts = b->cfg.default_partitions;
    if (nparts < 1 || nparts > 10000) {
        *kerr = FLOE_KERR_INVALID_PARTITIONS;
        return floe_err_set(err, FLOE_EINVAL, "number of partitions must be in 1..10000, not %d",
                            nparts);
    }
    json_t *cj = json_object();
    if (!cj) return floe_err_oom(err);
    for (int i = 0; i < nconfigs; i++) {
        if (check_config(configs[i].key, configs[i].value, err)) {
            json_decref(cj);
            *kerr = FLOE_KERR_INVALID_CONFIG;
            return -1;
        }
        if (configs[i].value)
            json_object_set_new(cj, configs[i].key, json_string(configs[i].value));
    }
    if (check_set(b, name, cj, err)) {
        json_decref(cj);
        *kerr = err && err->code == FLOE_ENOMEM ? FLOE_KERR_UNKNOWN_SERVER_ERROR
                                                : FLOE_KERR_INVALID_CONFIG;
        return -1;
    }
    pthread_mutex_lock(&b->mu);
    if (find_locked(b, name, strlen(name))) {
        pthread_mutex_unlock(&b->mu);
        json_decref(cj);
        *kerr = FLOE_KERR_TOPIC_ALREADY_EXISTS;
        return floe_err_set(err, FLOE_EEXIST, "topic '%s' already exists", name);
    }
    if (validate_only) {
        pthread_mutex_unlock(&b->mu);
        json_decref(cj);
        if (out) *out = NULL;
        return 0;
    }
    floe_topic_t *t = calloc(1, sizeof *t);
    if (t) t->b = b;
    if (!t || !(t->name = strdup(name))) {
        pthread_mutex_unlock(&b->mu);
        free(t);
        json_decref(cj);
        *kerr = FLOE_KERR_UNKNOWN_SERVER_ERROR;
        return floe_err_oom(err);
    }
    t->configs = cj;
    floe_rand_bytes(t->id, 16);
    t->id[6] = (t->id[6] & 0x0f) | 0x40; /* UUID v4 */
    t->id[8] = (t->id[8] & 0x3f) | 0x80;
    derive(b, t);
    for (int32_t p = 0; p < nparts; p++) remove_orphan(b, name, p);
    /* metadata first: a crash leaves a described topic whose logs open
     * empty, never logs without a description */
    if (save_topic(b, t, nparts, err) || open_parts(b, t, nparts, err) || add_topic(b, t)) {
        pthread_mutex_unlock(&b->mu);
        topic_free(t);
        *kerr = FLOE_KERR_UNKNOWN_SERVER_ERROR;
        return -1;
    }
    pthread_mutex_unlock(&b->mu);
    FLOE_INFO("kafka: topic %s created with %d partition%s", name, nparts, nparts == 1 ? "" : "s");
    if (b->observer) b->observer(b->observer_ctx, t, FLOE_TOPIC_CHANGED);
    if (out) *out = t;
    return 0;
}

void floe_broker_set_observer(floe_broker_t *b, floe_topic_observer_fn fn, void *ctx)
{
    b->observer = fn;
    b->observer_ctx = ctx;
}

void floe_broker_set_append_observer(floe_broker_t *b, floe_append_observer_fn fn, void *ctx)
{
    b->append_observer = fn;
    b->append_ctx = ctx;
}

void floe_broker_appended(floe_broker_t *b, floe_topic_t *t, int32_t partition)
{
    if (b->append_observer) b->append_observer(b->append_ctx, t, partition);
}

int floe_broker_delete_topic(floe_broker_t *b, floe_topic_t *t, floe_err_t *err)
{
    if (b->observer) b->observer(b->observer_ctx, t, FLOE_TOPIC_DELETING);
    /* nobody waits on its logs any more, and no fsync of them runs */
    floe_broker_flush_hold(b, t);
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->ntopics; i++)
        if (b->topics[i] == t) {
            b->topics[i] = b->topics[--b->ntopics];
            break;
        }
    pthread_mutex_unlock(&b->mu);
    char dir[4096], path[4200];
    int rc = meta_dir(b, dir, sizeof dir, err);
    if (!rc) rc = floe_path_fmt(path, sizeof path, err, "%s/%s.json", dir, t->name);
    if (!rc && unlink(path) && errno != ENOENT) rc = floe_err_errno(err, errno, path);
    if (!rc) rc = floe_fs_fsync_dir(dir, err);
    if (rc) FLOE_ERROR("kafka: deleting topic %s: %s", t->name, err->msg);
    pthread_mutex_lock(&b->clean_mu); /* no log of it is being cleaned */
    for (int32_t p = 0; p < t->nparts; p++) {
        floe_err_t e;
        if (floe_log_drop(t->logs[p], &e))
            FLOE_WARN("kafka: topic %s partition %d: %s", t->name, p, e.msg);
        t->logs[p] = NULL;
    }
    pthread_mutex_unlock(&b->clean_mu);
    floe_broker_flush_release(b);
    t->nparts = 0;
    FLOE_INFO("kafka: topic %s deleted", t->name);
    topic_free(t);
    return rc;
}

int floe_broker_add_partitions(floe_broker_t *b, floe_topic_t *t, int32_t nparts,
                               bool validate_only, int16_t *kerr, floe_err_t *err)
{
    *kerr = FLOE_KERR_NONE;
    if (nparts <= t->nparts || nparts > 10000) {
        *kerr = FLOE_KERR_INVALID_PARTITIONS;
        return floe_err_set(err, FLOE_EINVAL,
                            "topic %s has %d partitions; the new count %d must be larger", t->name,
                            t->nparts, nparts);
    }
    if (validate_only) return 0;
    pthread_mutex_lock(&b->mu);
    int32_t old = t->nparts;
    for (int32_t p = old; p < nparts; p++) remove_orphan(b, t->name, p);
    int rc = open_parts(b, t, nparts, err);
    if (!rc) rc = save_topic(b, t, t->nparts, err);
    pthread_mutex_unlock(&b->mu);
    if (rc) {
        *kerr = FLOE_KERR_UNKNOWN_SERVER_ERROR;
        return -1;
    }
    FLOE_INFO("kafka: topic %s grown from %d to %d partitions", t->name, old, nparts);
    if (b->observer) b->observer(b->observer_ctx, t, FLOE_TOPIC_CHANGED);
    return 0;
}

int floe_broker_alter_configs(floe_broker_t *b, floe_topic_t *t, const floe_kv_t *changes, int n,
                              bool replace_all, bool validate_only, int16_t *kerr, floe_err_t *err)
{
    *kerr = FLOE_KERR_NONE;
    for (int i = 0; i < n; i++)
        if (check_config(changes[i].key, changes[i].value, err)) {
            *kerr = FLOE_KERR_INVALID_CONFIG;
            return -1;
        }
    pthread_mutex_lock(&b->mu);
    json_t *old = t->configs;
    json_t *nc = replace_all ? json_object() : json_deep_copy(old);
    if (!nc) {
        pthread_mutex_unlock(&b->mu);
        *kerr = FLOE_KERR_UNKNOWN_SERVER_ERROR;
        return floe_err_oom(err);
    }
    for (int i = 0; i < n; i++) {
        if (changes[i].value)
            json_object_set_new(nc, changes[i].key, json_string(changes[i].value));
        else
            json_object_del(nc, changes[i].key);
    }
    /* the set as it will be, not each change alone */
    int rc = check_set(b, t->name, nc, err);
    if (rc || validate_only) {
        pthread_mutex_unlock(&b->mu);
        json_decref(nc);
        if (rc)
            *kerr = err && err->code == FLOE_ENOMEM ? FLOE_KERR_UNKNOWN_SERVER_ERROR
                                                    : FLOE_KERR_INVALID_CONFIG;
        return rc;
    }
    t->configs = nc;
    if (save_topic(b, t, t->nparts, err)) {
        t->configs = old;
        json_decref(nc);
        pthread_mutex_unlock(&b->mu);
        *kerr = FLOE_KERR_UNKNOWN_SERVER_ERROR;
        return -1;
    }
    json_decref(old);
    derive(b, t);
    for (int32_t p = 0; p < t->nparts; p++) floe_log_set_config(t->logs[p], &t->logcfg);
    pthread_mutex_unlock(&b->mu);
    FLOE_INFO("kafka: topic %s configs altered (%d change%s)", t->name, n, n == 1 ? "" : "s");
    if (b->observer) b->observer(b->observer_ctx, t, FLOE_TOPIC_CHANGED);
    return 0;
}

const char *floe_topic_name(const floe_topic_t *t)
{
    return t->name;
}
const uint8_t *floe_topic_id(const floe_topic_t *t)
{
    return t->id;
}
/* Partition count and logs are read under the registry lock: other threads
 * (the table engine) look them up while CreatePartitions grows the array. */
int32_t floe_topic_partitions(const floe_topic_t *t)
{
    pthread_mutex_lock(&t->b->mu);
    int32_t n = t->nparts;
    pthread_mutex_unlock(&t->b->mu);
    return n;
}
bool floe_topic_internal(const floe_topic_t *t)
{
    return !strncmp(t->name, "__", 2);
}
bool floe_topic_log_append_time(floe_topic_t *t)
{
    return t->log_append_time;
}

floe_log_t *floe_topic_log(floe_topic_t *t, int32_t p)
{
    pthread_mutex_lock(&t->b->mu);
    floe_log_t *l = p >= 0 && p < t->nparts ? t->logs[p] : NULL;
    pthread_mutex_unlock(&t->b->mu);
    return l;
}

const char *floe_topic_config(floe_topic_t *t, const char *key, bool *is_default)
{
    return lookup(t->b, t, key, is_default);
}

void floe_topic_each_config(floe_topic_t *t,
                            void (*fn)(const char *, const char *, bool, bool, void *), void *arg)
{
    for (size_t i = 0; i < NKNOWN; i++) {
        bool d;
        const char *v = lookup(t->b, t, known_cfg[i].key, &d);
        fn(known_cfg[i].key, v, d, false, arg);
    }
    const char *k;
    json_t *v;
    json_object_foreach(t->b->defaults, k, v)
    {
        if (is_table_key(k) && !json_object_get(t->configs, k))
            fn(k, json_string_value(v), true, false, arg);
    }
    json_object_foreach(t->configs, k, v)
    {
        if (is_table_key(k)) fn(k, json_string_value(v), false, false, arg);
    }
}

void floe_broker_tick(floe_broker_t *b)
{
    int64_t now = floe_wall_ms();
    /* retention on Kafka's interval, not every flush tick */
    int64_t every = b->cfg.retention_check_ms > 0 ? b->cfg.retention_check_ms : 300000;
    if (!b->next_retention_ms) b->next_retention_ms = now + every; /* first: one interval in */
    bool retention = now >= b->next_retention_ms;
    if (retention) b->next_retention_ms = now + every;
    floe_topic_t **v;
    int n = floe_broker_topics(b, &v);
    for (int i = 0; i < n; i++)
        for (int32_t p = 0; p < v[i]->nparts; p++) {
            floe_err_t e;
            if (floe_log_maybe_flush(v[i]->logs[p], now, &e))
                FLOE_ERROR("kafka: %s-%d: flush: %s", v[i]->name, p, e.msg);
            if (retention) floe_broker_retention_run(b, v[i], p, now);
            if (v[i]->logcfg.cleanup_policy & FLOE_LOG_CLEANUP_COMPACT)
                floe_broker_clean_floor_update(b, v[i], p);
        }
    if (n >= 0) free(v);
}

/* ---- open / close ---- */

const floe_broker_config_t *floe_broker_config(const floe_broker_t *b)
{
    return &b->cfg;
}
const char *floe_broker_data_dir(const floe_broker_t *b)
{
    return b->data_dir;
}

void floe_broker_attach_loop(floe_broker_t *b, floe_loop_t *loop)
{
    b->loop = loop;
}

int floe_broker_open(const floe_broker_config_t *cfg, floe_broker_t **out, floe_err_t *err)
{
    floe_broker_t *b = calloc(1, sizeof *b);
    if (!b) return floe_err_oom(err);
    b->cfg = *cfg;
    b->cfg.topic_defaults = NULL;
    b->cfg.ntopic_defaults = 0;
    if (b->cfg.default_partitions < 1) b->cfg.default_partitions = 1;
    b->data_dir = strdup(cfg->data_dir);
    b->cfg.data_dir = b->data_dir;
    b->defaults = json_object();
    pthread_mutex_init(&b->mu, NULL);
    pthread_mutex_init(&b->fmu, NULL);
    pthread_mutex_init(&b->flush_mu, NULL);
    pthread_cond_init(&b->fcv, NULL);
    pthread_mutex_init(&b->cmu, NULL);
    pthread_cond_init(&b->ccv, NULL);
    pthread_mutex_init(&b->clean_mu, NULL);
    if (!b->data_dir || !b->defaults) {
        floe_broker_close(b);
        return floe_err_oom(err);
    }
    for (int i = 0; i < cfg->ntopic_defaults; i++) {
        if (check_config(cfg->topic_defaults[i].key, cfg->topic_defaults[i].value, err)) {
            floe_err_wrap(err, "server config");
            floe_broker_close(b);
            return -1;
        }
        json_object_set_new(b->defaults, cfg->topic_defaults[i].key,
                            json_string(cfg->topic_defaults[i].value));
    }
    char dir[4096], logdir[4200];
    if (meta_dir(b, dir, sizeof dir, err) ||
        floe_path_join(logdir, sizeof logdir, b->data_dir, "log", err) ||
        floe_fs_mkdirs(dir, err) || floe_fs_mkdirs(logdir, err) || floe_broker_pids_load(b, err)) {
        floe_broker_close(b);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        floe_broker_close(b);
        return floe_err_errno(err, e, dir);
    }
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".json")) continue;
        char path[4400];
        rc = floe_path_join(path, sizeof path, dir, de->d_name, err);
        if (!rc) rc = load_topic(b, path, err);
    }
    closedir(d);
    if (rc || floe_broker_flusher_start(b, err) || floe_broker_cleaner_start(b, err)) {
        floe_broker_close(b);
        return -1;
    }
    FLOE_INFO("kafka: data dir %s: %d topic%s loaded", b->data_dir, b->ntopics,
              b->ntopics == 1 ? "" : "s");
    *out = b;
    return 0;
}

void floe_broker_close(floe_broker_t *b)
{
    if (!b) return;
    floe_broker_cleaner_stop(b);
    floe_broker_flusher_stop(b);
    free(b->w);
    for (int i = 0; i < b->ntopics; i++) topic_free(b->topics[i]);
    free(b->topics);
    free(b->fq);
    json_decref(b->defaults);
    pthread_mutex_destroy(&b->mu);
    pthread_mutex_destroy(&b->fmu);
    pthread_mutex_destroy(&b->flush_mu);
    pthread_cond_destroy(&b->fcv);
    pthread_mutex_destroy(&b->cmu);
    pthread_cond_destroy(&b->ccv);
    pthread_mutex_destroy(&b->clean_mu);
    free(b->data_dir);
    free(b);
}
