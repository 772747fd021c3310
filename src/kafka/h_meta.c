/* Metadata and admin APIs: Metadata, DescribeCluster, CreateTopics,
 * DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs,
 * IncrementalAlterConfigs, InitProducerId. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/h_int.h"
#include "util/diag.h"

floe_kstr_t floe_broker_mod_str(floe_arena_t *a, const char *s)
{
    if (!s) return floe_kstr_null();
    char *c = floe_arena_strndup(a, s, strlen(s));
    return c ? floe_kstr(c) : floe_kstr("");
}

floe_topic_t *floe_broker_mod_topic(floe_broker_mod_t *bm, floe_kstr_t name, bool create)
{
    if (name.len < 0) return NULL;
    floe_topic_t *t = floe_broker_topic(bm->b, name.ptr, (size_t)name.len);
    if (t || !create || !floe_broker_config(bm->b)->auto_create_topics) return t;
    if (!floe_topic_name_valid(name.ptr, (size_t)name.len) || !strncmp(name.ptr, "__", 2))
        return NULL;
    int16_t kerr;
    floe_err_t err;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)name.len, name.ptr);
    if (floe_broker_create_topic(bm->b, buf, -1, NULL, 0, false, &t, &kerr, &err)) {
        if (kerr == FLOE_KERR_TOPIC_ALREADY_EXISTS)
            return floe_broker_topic(bm->b, name.ptr, (size_t)name.len);
        FLOE_WARN("kafka: auto-create of topic %s failed: %s", buf, err.msg);
        return NULL;
    }
    return t;
}

static void set_uuid(floe_kuuid_t *u, const uint8_t *id)
{
    memcpy(u->b, id, 16);
}

/* ---- Metadata ---- */

static int fill_topic(floe_arena_t *a, floe_kafka_srv_t *srv, floe_topic_t *t,
                      floe_k_metadata_resp_metadata_response_topic_t *rt)
{
    int32_t node = floe_kafka_srv_node_id(srv);
    rt->name = floe_kstr(floe_topic_name(t));
    set_uuid(&rt->topic_id, floe_topic_id(t));
    rt->is_internal = floe_topic_internal(t);
    int32_t np = floe_topic_partitions(t);
    rt->partitions.v = floe_k_metadata_resp_metadata_response_partition_new_array(a, np);
    int32_t *nodes = floe_arena_alloc(a, sizeof(int32_t));
    if (!rt->partitions.v || !nodes) return -1;
    nodes[0] = node;
    rt->partitions.n = np;
    for (int32_t p = 0; p < np; p++) {
        floe_k_metadata_resp_metadata_response_partition_t *rp = &rt->partitions.v[p];
        rp->partition_index = p;
        rp->leader_id = node;
        rp->leader_epoch = 0;
        rp->replica_nodes = (floe_karr_i32_t){nodes, 1};
        rp->isr_nodes = (floe_karr_i32_t){nodes, 1};
    }
    return 0;
}

static void h_metadata(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_metadata_req_t *rq = floe_kafka_req_body(req);
    int16_t ver = floe_kafka_req_version(req);
    floe_k_metadata_resp_t *rs = floe_k_metadata_resp_new(a);
    if (!rs) OOM(req);
    rs->brokers.v = floe_k_metadata_resp_metadata_response_broker_new_array(a, 1);
    if (!rs->brokers.v) OOM(req);
    rs->brokers.n = 1;
    rs->brokers.v[0].node_id = floe_kafka_srv_node_id(bm->srv);
    rs->brokers.v[0].host = floe_kstr(floe_kafka_srv_host(bm->srv));
    rs->brokers.v[0].port = floe_kafka_srv_port(bm->srv);
    rs->cluster_id = floe_kstr(floe_kafka_srv_cluster_id(bm->srv));
    rs->controller_id = floe_kafka_srv_node_id(bm->srv);
    bool all = rq->topics.n < 0 || (ver == 0 && rq->topics.n == 0);
    if (all) {
        floe_topic_t **ts;
        int n = floe_broker_topics(bm->b, &ts);
        if (n < 0) OOM(req);
        rs->topics.v = floe_k_metadata_resp_metadata_response_topic_new_array(a, n);
        if (!rs->topics.v) {
            free(ts);
            OOM(req);
        }
        rs->topics.n = n;
        for (int i = 0; i < n; i++)
            if (fill_topic(a, bm->srv, ts[i], &rs->topics.v[i])) {
                free(ts);
                OOM(req);
            }
        free(ts);
    } else {
        int n = rq->topics.n;
        rs->topics.v = floe_k_metadata_resp_metadata_response_topic_new_array(a, n);
        if (!rs->topics.v) OOM(req);
        rs->topics.n = n;
        bool create = ver < 4 || rq->allow_auto_topic_creation;
        for (int i = 0; i < n; i++) {
            const floe_k_metadata_req_metadata_request_topic_t *q = &rq->topics.v[i];
            floe_k_metadata_resp_metadata_response_topic_t *rt = &rs->topics.v[i];
            floe_topic_t *t = NULL;
            if (q->name.len >= 0) t = floe_broker_mod_topic(bm, q->name, create);
            else
                t = floe_broker_topic_by_id(bm->b, q->topic_id.b);
            if (!t) {
                rt->name = q->name;
                rt->topic_id = q->topic_id;
                if (q->name.len >= 0 && !floe_topic_name_valid(q->name.ptr, (size_t)q->name.len))
                    rt->error_code = FLOE_KERR_INVALID_TOPIC_EXCEPTION;
                else
                    rt->error_code = q->name.len >= 0 ? FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                      : FLOE_KERR_UNKNOWN_TOPIC_ID;
                continue;
            }
            if (fill_topic(a, bm->srv, t, rt)) OOM(req);
        }
    }
    floe_kafka_respond(req, rs);
}

static void h_describe_cluster(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_describe_cluster_req_t *rq = floe_kafka_req_body(req);
    floe_k_describe_cluster_resp_t *rs = floe_k_describe_cluster_resp_new(a);
    if (!rs) OOM(req);
    rs->endpoint_type = rq->endpoint_type;
    rs->cluster_id = floe_kstr(floe_kafka_srv_cluster_id(bm->srv));
    rs->controller_id = floe_kafka_srv_node_id(bm->srv);
    rs->brokers.v = floe_k_describe_cluster_resp_describe_cluster_broker_new_array(a, 1);
    if (!rs->brokers.v) OOM(req);
    rs->brokers.n = 1;
    rs->brokers.v[0].broker_id = floe_kafka_srv_node_id(bm->srv);
    rs->brokers.v[0].host = floe_kstr(floe_kafka_srv_host(bm->srv));
    rs->brokers.v[0].port = floe_kafka_srv_port(bm->srv);
    floe_kafka_respond(req, rs);
}

/* ---- topics ---- */

static void h_create_topics(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_create_topics_req_t *rq = floe_kafka_req_body(req);
    floe_k_create_topics_resp_t *rs = floe_k_create_topics_resp_new(a);
    if (!rs) OOM(req);
    int n = rq->topics.n > 0 ? rq->topics.n : 0;
    rs->topics.v = floe_k_create_topics_resp_creatable_topic_result_new_array(a, n);
    if (!rs->topics.v) OOM(req);
    rs->topics.n = n;
    for (int i = 0; i < n; i++) {
        const floe_k_create_topics_req_creatable_topic_t *q = &rq->topics.v[i];
        floe_k_create_topics_resp_creatable_topic_result_t *r = &rs->topics.v[i];
        r->name = q->name;
        if (q->name.len < 0 || strlen(q->name.ptr) != (size_t)q->name.len) {
            r->error_code = FLOE_KERR_INVALID_TOPIC_EXCEPTION;
            r->error_message = floe_kstr("invalid topic name");
            continue;
        }
        bool dup = false;
        for (int j = 0; j < n; j++)
            dup |= j != i && floe_kstr_eq(rq->topics.v[j].name, q->name.ptr);
        if (dup) {
            r->error_code = FLOE_KERR_INVALID_REQUEST;
            r->error_message = floe_kstr("topic named twice in one request");
            continue;
        }
        int32_t nparts = q->num_partitions;
        if (q->assignments.n > 0) nparts = q->assignments.n;
        if (q->replication_factor != -1 && q->replication_factor != 1) {
            r->error_code = FLOE_KERR_INVALID_REPLICATION_FACTOR;
            r->error_message = floe_kstr("floe is a single node: replication factor must be 1");
            continue;
        }
        int nc = q->configs.n > 0 ? q->configs.n : 0;
        floe_kv_t *kv = floe_arena_calloc(a, (size_t)(nc ? nc : 1), sizeof *kv);
        if (!kv) OOM(req);
        for (int k = 0; k < nc; k++) {
            kv[k].key = q->configs.v[k].name.ptr;
            kv[k].value = q->configs.v[k].value.ptr;
        }
        floe_topic_t *t = NULL;
        int16_t kerr;
        floe_err_t err;
        if (floe_broker_create_topic(bm->b, q->name.ptr, nparts, kv, nc, rq->validate_only, &t,
                                     &kerr, &err)) {
            r->error_code = kerr;
            r->error_message = floe_broker_mod_str(a, err.msg);
            continue;
        }
        r->num_partitions =
            t ? floe_topic_partitions(t)
              : (nparts > 0 ? nparts : floe_broker_config(bm->b)->default_partitions);
        r->replication_factor = 1;
        if (t) set_uuid(&r->topic_id, floe_topic_id(t));
    }
    floe_kafka_respond(req, rs);
}

static void h_delete_topics(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_delete_topics_req_t *rq = floe_kafka_req_body(req);
    int16_t ver = floe_kafka_req_version(req);
    floe_k_delete_topics_resp_t *rs = floe_k_delete_topics_resp_new(a);
    if (!rs) OOM(req);
    int n = ver >= 6 ? rq->topics.n : rq->topic_names.n;
    if (n < 0) n = 0;
    rs->responses.v = floe_k_delete_topics_resp_deletable_topic_result_new_array(a, n);
    if (!rs->responses.v) OOM(req);
    rs->responses.n = n;
    for (int i = 0; i < n; i++) {
        floe_k_delete_topics_resp_deletable_topic_result_t *r = &rs->responses.v[i];
        floe_topic_t *t;
        if (ver >= 6) {
            const floe_k_delete_topics_req_delete_topic_state_t *q = &rq->topics.v[i];
            r->name = q->name;
            r->topic_id = q->topic_id;
            t = q->name.len >= 0 ? floe_broker_mod_topic(bm, q->name, false)
                                 : floe_broker_topic_by_id(bm->b, q->topic_id.b);
        } else {
            r->name = rq->topic_names.v[i];
            t = floe_broker_mod_topic(bm, r->name, false);
        }
        if (!t) {
            r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        r->name = floe_broker_mod_str(a, floe_topic_name(t));
        set_uuid(&r->topic_id, floe_topic_id(t));
        floe_err_t err;
        floe_broker_mod_appender_drain(bm); /* no append may be using its logs */
        if (floe_broker_delete_topic(bm->b, t, &err)) {
            r->error_code = FLOE_KERR_UNKNOWN_SERVER_ERROR;
            r->error_message = floe_broker_mod_str(a, err.msg);
        }
    }
    floe_kafka_respond(req, rs);
}

static void h_create_partitions(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_create_partitions_req_t *rq = floe_kafka_req_body(req);
    floe_k_create_partitions_resp_t *rs = floe_k_create_partitions_resp_new(a);
    if (!rs) OOM(req);
    int n = rq->topics.n > 0 ? rq->topics.n : 0;
    rs->results.v = floe_k_create_partitions_resp_create_partitions_topic_result_new_array(a, n);
    if (!rs->results.v) OOM(req);
    rs->results.n = n;
    for (int i = 0; i < n; i++) {
        const floe_k_create_partitions_req_create_partitions_topic_t *q = &rq->topics.v[i];
        floe_k_create_partitions_resp_create_partitions_topic_result_t *r = &rs->results.v[i];
        r->name = q->name;
        floe_topic_t *t = floe_broker_mod_topic(bm, q->name, false);
        if (!t) {
            r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        int16_t kerr;
        floe_err_t err;
        if (floe_broker_add_partitions(bm->b, t, q->count, rq->validate_only, &kerr, &err)) {
            r->error_code = kerr;
            r->error_message = floe_broker_mod_str(a, err.msg);
        }
    }
    floe_kafka_respond(req, rs);
}

/* ---- configs ---- */

#define RES_TOPIC 2
#define RES_BROKER 4
#define SRC_TOPIC 1
#define SRC_STATIC_BROKER 4
#define SRC_DEFAULT 5

typedef struct cfg_acc {
    floe_arena_t *a;
    const floe_karr_str_t *keys;
    floe_k_describe_configs_resp_describe_configs_resource_result_t *v;
    int n, cap;
    int16_t ver;
    bool synonyms;
    bool oom;
} cfg_acc_t;

static void add_cfg(const char *key, const char *value, bool is_default, bool sensitive, void *arg)
{
    cfg_acc_t *c = arg;
    if (c->oom) return;
    if (c->keys->n > 0) {
        bool want = false;
        for (int i = 0; i < c->keys->n && !want; i++) want = floe_kstr_eq(c->keys->v[i], key);
        if (!want) return;
    }
    if (c->n == c->cap) {
        int nc = c->cap ? c->cap * 2 : 32;
        void *v = floe_k_describe_configs_resp_describe_configs_resource_result_new_array(c->a, nc);
        if (!v) {
            c->oom = true;
            return;
        }
        if (c->n) memcpy(v, c->v, (size_t)c->n * sizeof *c->v);
        c->v = v;
        c->cap = nc;
    }
    floe_k_describe_configs_resp_describe_configs_resource_result_t *r = &c->v[c->n++];
    r->name = floe_kstr(key);
    r->value = floe_broker_mod_str(c->a, value);
    r->is_default = is_default;
    r->is_sensitive = sensitive;
    r->config_source = is_default ? SRC_DEFAULT : SRC_TOPIC;
    r->config_type = 0;
}

static void broker_cfgs(floe_broker_mod_t *bm, cfg_acc_t *c)
{
    const floe_broker_config_t *bc = floe_broker_config(bm->b);
    char np[16];
    snprintf(np, sizeof np, "%d", bc->default_partitions);
    add_cfg("auto.create.topics.enable", bc->auto_create_topics ? "true" : "false", false, false,
            c);
    add_cfg("num.partitions", np, false, false, c);
    add_cfg("log.dirs", floe_broker_data_dir(bm->b), false, false, c);
    add_cfg("default.replication.factor", "1", true, false, c);
    add_cfg("offsets.topic.replication.factor", "1", true, false, c);
    for (int i = 0; i < c->n; i++) {
        c->v[i].read_only = true;
        c->v[i].config_source = c->v[i].is_default ? SRC_DEFAULT : SRC_STATIC_BROKER;
    }
}

static void h_describe_configs(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_describe_configs_req_t *rq = floe_kafka_req_body(req);
    floe_k_describe_configs_resp_t *rs = floe_k_describe_configs_resp_new(a);
    if (!rs) OOM(req);
    int n = rq->resources.n > 0 ? rq->resources.n : 0;
    rs->results.v = floe_k_describe_configs_resp_describe_configs_result_new_array(a, n);
    if (!rs->results.v) OOM(req);
    rs->results.n = n;
    for (int i = 0; i < n; i++) {
        const floe_k_describe_configs_req_describe_configs_resource_t *q = &rq->resources.v[i];
        floe_k_describe_configs_resp_describe_configs_result_t *r = &rs->results.v[i];
        r->resource_type = q->resource_type;
        r->resource_name = q->resource_name;
        cfg_acc_t c = {a,
                       &q->configuration_keys,
                       NULL,
                       0,
                       0,
                       floe_kafka_req_version(req),
                       rq->include_synonyms,
                       false};
        if (q->resource_type == RES_TOPIC) {
            floe_topic_t *t = floe_broker_mod_topic(bm, q->resource_name, false);
            if (!t) {
                r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                r->error_message = floe_kstr("unknown topic");
                continue;
            }
            floe_topic_each_config(t, add_cfg, &c);
        } else if (q->resource_type == RES_BROKER) {
            broker_cfgs(bm, &c);
        } else {
            r->error_code = FLOE_KERR_INVALID_REQUEST;
            r->error_message = floe_kstr("only topic and broker resources are supported");
            continue;
        }
        if (c.oom) OOM(req);
        r->configs.v = c.v;
        r->configs.n = c.n;
    }
    floe_kafka_respond(req, rs);
}

/* Configs whose value is a comma-separated list (APPEND/SUBTRACT apply). */
static bool is_list_config(const char *key)
{
    return !strcmp(key, "cleanup.policy") || !strncmp(key, "table.", 6);
}

static bool list_has(const char *list, const char *item, size_t n)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !memcmp(p, item, n)) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* cur with the items of `items` appended (skipping present ones) or
 * removed.  In the arena; NULL when out of memory. */
static const char *list_edit(floe_arena_t *a, const char *cur, const char *items, bool append)
{
    if (!cur) cur = "";
    size_t cap = strlen(cur) + strlen(items) + 2;
    char *out = floe_arena_alloc(a, cap);
    if (!out) return NULL;
    size_t n = 0;
    out[0] = 0;
    /* keep the current items (minus the subtracted ones) */
    for (const char *p = cur; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l && (append || !list_has(items, p, l))) {
            if (n) out[n++] = ',';
            memcpy(out + n, p, l);
            n += l;
        }
        if (!e) break;
        p = e + 1;
    }
    if (append) {
        for (const char *p = items; *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            out[n] = 0;
            if (l && !list_has(out, p, l)) {
                if (n) out[n++] = ',';
                memcpy(out + n, p, l);
                n += l;
            }
            if (!e) break;
            p = e + 1;
        }
    }
    out[n] = 0;
    return out;
}

/* AlterConfigs and IncrementalAlterConfigs share the response shape. */
static void alter_common(floe_kafka_req_t *req, floe_broker_mod_t *bm, bool incremental)
{
    floe_arena_t *a = floe_kafka_req_arena(req);
    void *body = floe_kafka_req_body(req);
    int n;
    bool validate_only;
    if (incremental) {
        const floe_k_incremental_alter_configs_req_t *rq = body;
        n = rq->resources.n;
        validate_only = rq->validate_only;
    } else {
        const floe_k_alter_configs_req_t *rq = body;
        n = rq->resources.n;
        validate_only = rq->validate_only;
    }
    if (n < 0) n = 0;
    /* both responses have the same layout; build the declared type of each */
    floe_k_alter_configs_resp_t *rs = floe_k_alter_configs_resp_new(a);
    floe_k_incremental_alter_configs_resp_t *irs = floe_k_incremental_alter_configs_resp_new(a);
    if (!rs || !irs) OOM(req);
    rs->responses.v = floe_k_alter_configs_resp_alter_configs_resource_response_new_array(a, n);
    irs->responses.v =
        floe_k_incremental_alter_configs_resp_alter_configs_resource_response_new_array(a, n);
    if (!rs->responses.v || !irs->responses.v) OOM(req);
    rs->responses.n = irs->responses.n = n;
    for (int i = 0; i < n; i++) {
        int8_t type;
        floe_kstr_t name;
        int nc;
        floe_kv_t *kv;
        int16_t code = 0;
        const char *msg = NULL;
        floe_err_t err;
        if (incremental) {
            const floe_k_incremental_alter_configs_req_alter_configs_resource_t *q =
                &((const floe_k_incremental_alter_configs_req_t *)body)->resources.v[i];
            type = q->resource_type;
            name = q->resource_name;
            nc = q->configs.n > 0 ? q->configs.n : 0;
            kv = floe_arena_calloc(a, (size_t)(nc ? nc : 1), sizeof *kv);
            if (!kv) OOM(req);
            floe_topic_t *cur = type == RES_TOPIC ? floe_broker_mod_topic(bm, name, false) : NULL;
            for (int k = 0; k < nc && !code; k++) {
                const char *key = q->configs.v[k].name.ptr;
                const char *val = q->configs.v[k].value.ptr ? q->configs.v[k].value.ptr : "";
                int8_t op = q->configs.v[k].config_operation;
                kv[k].key = key;
                if (op == 0) {
                    kv[k].value = val;
                } else if (op == 1) {
                    kv[k].value = NULL;
                } else if ((op == 2 || op == 3) && cur && is_list_config(key)) {
                    kv[k].value = list_edit(a, floe_topic_config(cur, key, NULL), val, op == 2);
                    if (!kv[k].value) OOM(req);
                } else {
                    code = FLOE_KERR_INVALID_CONFIG;
                    msg = op == 2 || op == 3 ? "APPEND/SUBTRACT apply to list configs only"
                                             : "unknown config operation";
                }
            }
        } else {
            const floe_k_alter_configs_req_alter_configs_resource_t *q =
                &((const floe_k_alter_configs_req_t *)body)->resources.v[i];
            type = q->resource_type;
            name = q->resource_name;
            nc = q->configs.n > 0 ? q->configs.n : 0;
            kv = floe_arena_calloc(a, (size_t)(nc ? nc : 1), sizeof *kv);
            if (!kv) OOM(req);
            for (int k = 0; k < nc; k++) {
                kv[k].key = q->configs.v[k].name.ptr;
                kv[k].value = q->configs.v[k].value.ptr;
            }
        }
        if (!code && type != RES_TOPIC) {
            code = FLOE_KERR_INVALID_REQUEST;
            msg = "only topic configs can be altered";
        }
        floe_topic_t *t = NULL;
        if (!code && !(t = floe_broker_mod_topic(bm, name, false))) {
            code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
            msg = "unknown topic";
        }
        if (!code &&
            floe_broker_alter_configs(bm->b, t, kv, nc, !incremental, validate_only, &code, &err))
            msg = err.msg;
        rs->responses.v[i].resource_type = irs->responses.v[i].resource_type = type;
        rs->responses.v[i].resource_name = irs->responses.v[i].resource_name = name;
        rs->responses.v[i].error_code = irs->responses.v[i].error_code = code;
        rs->responses.v[i].error_message = irs->responses.v[i].error_message =
            floe_broker_mod_str(a, msg);
    }
    floe_kafka_respond(req, incremental ? (void *)irs : (void *)rs);
}

static void h_alter_configs(floe_kafka_req_t *req, void *ctx)
{
    alter_common(req, ctx, false);
}
static void h_incremental_alter_configs(floe_kafka_req_t *req, void *ctx)
{
    alter_common(req, ctx, true);
}

/* ---- producer ids ---- */

static void h_init_producer_id(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_init_producer_id_req_t *rq = floe_kafka_req_body(req);
    floe_k_init_producer_id_resp_t *rs = floe_k_init_producer_id_resp_new(a);
    if (!rs) OOM(req);
    if (rq->transactional_id.len >= 0) {
        /* transactions are not implemented: say so rather than pretend */
        rs->error_code = FLOE_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        floe_kafka_respond(req, rs);
        return;
    }
    if (rq->producer_id >= 0 && rq->producer_epoch >= 0 && rq->producer_epoch < 32766) {
        /* KIP-360: an idempotent producer bumps its epoch to reset sequences */
        rs->producer_id = rq->producer_id;
        rs->producer_epoch = (int16_t)(rq->producer_epoch + 1);
        floe_kafka_respond(req, rs);
        return;
    }
    floe_err_t err;
    int64_t id = floe_broker_next_producer_id(bm->b, &err);
    if (id < 0) {
        FLOE_ERROR("kafka: cannot allocate a producer id: %s", err.msg);
        rs->error_code = FLOE_KERR_COORDINATOR_NOT_AVAILABLE;
    } else {
        rs->producer_id = id;
        rs->producer_epoch = 0;
    }
    floe_kafka_respond(req, rs);
}

int floe_broker_mod_register_meta(floe_broker_mod_t *bm, floe_err_t *err)
{
    floe_kafka_srv_t *s = bm->srv;
    if (floe_kafka_register(s, FLOE_KAPI_METADATA, 0, 12, h_metadata, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_DESCRIBE_CLUSTER, 0, 1, h_describe_cluster, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_CREATE_TOPICS, 0, 7, h_create_topics, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_DELETE_TOPICS, 0, 6, h_delete_topics, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_CREATE_PARTITIONS, 0, 3, h_create_partitions, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_DESCRIBE_CONFIGS, 0, 4, h_describe_configs, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_ALTER_CONFIGS, 0, 2, h_alter_configs, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_INCREMENTAL_ALTER_CONFIGS, 0, 1,
                            h_incremental_alter_configs, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_INIT_PRODUCER_ID, 0, 4, h_init_producer_id, bm, err))
        return -1;
    return 0;
}
