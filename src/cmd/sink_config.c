/* `floe sink`'s YAML configuration (sink_config.h). */
#include "cmd/sink_config.h"

#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cmd/cli.h"
#include "table/config.h"
#include "util/conf.h"
#include "util/mem.h"

typedef struct ctx {
    const char *path;
    yaml_document_t *doc;
    floe_err_t *err;
    yaml_node_t *index_entry; /* the first tables: entry keeping a key index */
} ctx_t;

/* "PATH:LINE: ..." for node n (lines from 1). */
static int fail(ctx_t *x, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(ctx_t *x, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[FLOE_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return floe_err_set(x->err, FLOE_EINVAL, "%s:%lu: %s", x->path,
                        (unsigned long)(n ? n->start_mark.line + 1 : 1), msg);
}

static yaml_node_t *node(ctx_t *x, int i)
{
    return yaml_document_get_node(x->doc, i);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The pairs of mapping m, each key a scalar, none twice: fn(x, key,
 * keynode, value, arg) for each. */
typedef int (*pair_fn)(ctx_t *x, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg);

static int each_pair(ctx_t *x, yaml_node_t *m, const char *what, pair_fn fn, void *arg)
{
    if (!m || m->type != YAML_MAPPING_NODE) return fail(x, m, "%s: expected a mapping", what);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
        const char *key = scalar(k);
        if (!key) return fail(x, k, "%s: a key must be a plain name", what);
        for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++)
            if (!strcmp(scalar(node(x, q->key)) ? scalar(node(x, q->key)) : "", key))
                return fail(x, k, "%s: key '%s' appears twice", what, key);
        if (fn(x, key, k, v, arg) < 0) return -1;
    }
    return 0;
}

static int add_kv(size_t *n, char ***keys, char ***values, const char *k, const char *v,
                  floe_err_t *err)
{
    char **nk = realloc(*keys, (*n + 1) * sizeof *nk);
    if (!nk) return floe_err_oom(err);
    *keys = nk;
    char **nv = realloc(*values, (*n + 1) * sizeof *nv);
    if (!nv) return floe_err_oom(err);
    *values = nv;
    if (!(nk[*n] = strdup(k))) return floe_err_oom(err);
    if (!(nv[*n] = strdup(v))) {
        free(nk[*n]);
        return floe_err_oom(err);
    }
    (*n)++;
    return 0;
}

/* ---- kafka: ------------------------------------------------------------- */

static int kafka_pair(ctx_t *x, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    sink_config_t *c = arg;
    const char *val = scalar(v);
    if (!val) return fail(x, v, "kafka: %s: expected a value", key);
    rd_kafka_conf_t *rc = rd_kafka_conf_new(); /* librdkafka checks name and value */
    char es[256];
    rd_kafka_conf_res_t r = rd_kafka_conf_set(rc, key, val, es, sizeof es);
    rd_kafka_conf_destroy(rc);
    if (r != RD_KAFKA_CONF_OK) return fail(x, k, "kafka: %s: %s", key, es);
    return add_kv(&c->nprops, &c->prop_keys, &c->prop_values, key, val, x->err);
}

/* ---- catalog: ------------------------------------------------------------ */

static int catalog_pair(ctx_t *x, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    sink_config_t *c = arg;
    const char *val = scalar(v);
    if (!val) return fail(x, v, "catalog: %s: expected a value", key);
    if (!strcmp(key, "warehouse")) {
        /* a folder or a REST warehouse name: which, once type is known */
        if (!*val || strlen(val) >= sizeof c->store.cat_warehouse)
            return fail(x, v, "catalog: warehouse: expected a directory or a warehouse name");
        snprintf(c->store.cat_warehouse, sizeof c->store.cat_warehouse, "%s", val);
        return 0;
    }
    char name[128];
    snprintf(name, sizeof name, "catalog.%s", key);
    floe_err_t e;
    int rc = strncmp(key, "s3.", 3) ? floe_store_config_set(&c->store, name, val, &e)
                                    : floe_store_config_set(&c->store, key, val, &e);
    if (rc < 0) return fail(x, v, "catalog: %s", e.msg);
    if (rc > 0)
        return fail(x, k,
                    "catalog: unknown key '%s' (type, warehouse, uri, credential, token, "
                    "oauth2-server-uri, scope, rest.sigv4-enabled, rest.signing-region, "
                    "rest.signing-name, s3.*)",
                    key);
    return 0;
}

/* ---- tables: ------------------------------------------------------------ */

typedef struct entry {
    sink_table_t *t;
    floe_table_config_t scratch; /* values are parsed into it to check them */
    bool named;                  /* table: given */
} entry_t;

static int set_table_key(ctx_t *x, entry_t *e, const floe_conf_key_t *k, const char *yname,
                         yaml_node_t *v, const char *val)
{
    floe_err_t ce;
    if (floe_conf_set(k, &e->scratch, val, &ce) < 0)
        return fail(x, v, "%s: %s", yname, strchr(ce.msg, ':') ? strchr(ce.msg, ':') + 2 : ce.msg);
    for (size_t i = 0; i < e->t->n; i++)
        if (!strcmp(e->t->keys[i], k->name)) return fail(x, v, "%s is set twice", yname);
    return add_kv(&e->t->n, &e->t->keys, &e->t->values, k->name, val, x->err);
}

/* transforms: a list of step names ([debezium_unwrap, flatten]) or the
 * topic config's comma list; either way table.transforms, checked there. */
static int transforms(ctx_t *x, entry_t *e, yaml_node_t *v)
{
    size_t n;
    const floe_conf_key_t *keys = floe_table_config_keys(&n);
    const floe_conf_key_t *k = floe_conf_find(keys, n, "table.transforms");
    const char *val = scalar(v);
    if (val) return set_table_key(x, e, k, "transforms", v, val);
    if (v->type != YAML_SEQUENCE_NODE)
        return fail(x, v, "transforms: expected a list of steps (debezium_unwrap, flatten)");
    floe_buf_t list = FLOE_BUF_INIT;
    int rc = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start;
         rc == 0 && it < v->data.sequence.items.top; it++) {
        yaml_node_t *step = node(x, *it);
        const char *name = step ? scalar(step) : NULL;
        if (!name || !*name || strchr(name, ','))
            rc = fail(x, step ? step : v,
                      "transforms: each step is a name (debezium_unwrap, "
                      "flatten)");
        else
            floe_buf_printf(&list, "%s%s", list.len ? "," : "", name);
    }
    if (rc == 0) rc = set_table_key(x, e, k, "transforms", v, floe_buf_cstr(&list));
    floe_buf_free(&list);
    return rc;
}

static int table_pair(ctx_t *x, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    entry_t *e = arg;
    sink_table_t *t = e->t;
    const char *val = scalar(v);
    if (!strcmp(key, "transforms")) return transforms(x, e, v);
    if (!val) return fail(x, v, "%s: expected a value", key);
    if (!strcmp(key, "topic") || !strcmp(key, "topics_regex")) {
        if (t->topic || t->regex)
            return fail(x, k, "%s: an entry takes one topic or topics_regex", key);
        if (!*val) return fail(x, v, "%s: empty", key);
        if (!strcmp(key, "topics_regex")) {
            regex_t re;
            int rc = regcomp(&re, val, REG_EXTENDED | REG_NOSUB);
            if (rc != 0) {
                char why[128];
                regerror(rc, &re, why, sizeof why);
                return fail(x, v, "topics_regex: '%s': %s", val, why);
            }
            regfree(&re);
        }
        char *d = strdup(val);
        if (!d) return floe_err_oom(x->err);
        if (!strcmp(key, "topic")) t->topic = d;
        else
            t->regex = d;
        return 0;
    }
    if (!strcmp(key, "table")) {
        size_t n;
        const floe_conf_key_t *keys = floe_table_config_keys(&n);
        const char *dot = strchr(val, '.');
        char ns[256];
        e->named = true;
        if (dot) {
            if ((size_t)(dot - val) >= sizeof ns) return fail(x, v, "table: name too long");
            memcpy(ns, val, (size_t)(dot - val));
            ns[dot - val] = 0;
            if (set_table_key(x, e, floe_conf_find(keys, n, "table.namespace"), "table", v, ns) < 0)
                return -1;
        }
        return set_table_key(x, e, floe_conf_find(keys, n, "table.name"), "table", v,
                             dot ? dot + 1 : val);
    }
    if (!strcmp(key, "table_format")) {
        if (!strcmp(val, "iceberg-v2") || !strcmp(val, "iceberg")) return 0;
        return fail(x, v, "table_format: '%s' is not supported (iceberg-v2)", val);
    }
    const floe_conf_key_t *ck = floe_table_config_find_yaml(key);
    if (!ck)
        return fail(x, k, "unknown key '%s' in a tables: entry (see floe config --markdown)", key);
    return set_table_key(x, e, ck, key, v, val);
}

/* An upsert table in position mode keeps a key index, which spills to
 * disk past its memory bound: such an entry needs state_dir. */
static bool keeps_index(const floe_table_config_t *tc)
{
    return tc->write_mode == FLOE_WRITE_UPSERT && tc->delete_mode == FLOE_DELETE_POSITION;
}

static int tables_seq(ctx_t *x, sink_config_t *c, yaml_node_t *seq)
{
    if (seq->type != YAML_SEQUENCE_NODE) return fail(x, seq, "tables: expected a list of entries");
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *m = node(x, *it);
        sink_table_t *v = realloc(c->tables, (c->ntables + 1) * sizeof *v);
        if (!v) return floe_err_oom(x->err);
        c->tables = v;
        entry_t e = {.t = &c->tables[c->ntables++]};
        memset(e.t, 0, sizeof *e.t);
        size_t n;
        const floe_conf_key_t *keys = floe_table_config_keys(&n);
        floe_conf_defaults(keys, n, &e.scratch, x->err);
        if (each_pair(x, m, "tables: entry", table_pair, &e) < 0) return -1;
        if (!e.t->topic && !e.t->regex)
            return fail(x, m, "tables: entry: topic or topics_regex is required");
        if (e.t->regex && e.named)
            return fail(x, m,
                        "tables: entry: table cannot go with topics_regex (each topic's "
                        "table is named after it; namespace sets its namespace)");
        floe_err_t ce;
        if (floe_table_config_check(e.t->topic ? e.t->topic : e.t->regex,
                                    (const char *const *)e.t->keys,
                                    (const char *const *)e.t->values, e.t->n, NULL, NULL, &ce) < 0)
            return fail(x, m, "tables: entry: %s", ce.msg);
        if (keeps_index(&e.scratch) && !x->index_entry) x->index_entry = m;
    }
    return 0;
}

/* ---- the file ------------------------------------------------------------ */

static int root_pair(ctx_t *x, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    sink_config_t *c = arg;
    if (!strcmp(key, "kafka")) return each_pair(x, v, "kafka", kafka_pair, c);
    if (!strcmp(key, "catalog")) return each_pair(x, v, "catalog", catalog_pair, c);
    if (!strcmp(key, "tables")) return tables_seq(x, c, v);
    const char *val = scalar(v);
    if (!strcmp(key, "http")) {
        char host[256];
        int port;
        floe_err_t he;
        if (!val || strlen(val) >= sizeof c->http ||
            floe_cli_split_hostport(val, host, sizeof host, &port, &he) < 0)
            return fail(x, v, "http: expected HOST:PORT%s%s", val ? ": " : "", val ? he.msg : "");
        snprintf(c->http, sizeof c->http, "%s", val);
        return 0;
    }
    if (!strcmp(key, "status_interval")) {
        static const floe_conf_key_t k_status = {.name = "status_interval",
                                                 .type = FLOE_CONF_DURATION,
                                                 .min = 0,
                                                 .max = 86400000,
                                                 FLOE_CONF_FIELD(sink_config_t, status_ms)};
        floe_err_t ce;
        if (!val || floe_conf_set(&k_status, c, val, &ce) < 0)
            return fail(x, v, "%s", val ? ce.msg : "status_interval: expected a duration");
        return 0;
    }
    if (!strcmp(key, "state_dir")) {
        if (!val || !*val || strlen(val) >= sizeof c->state_dir)
            return fail(x, v, "state_dir: expected a directory");
        snprintf(c->state_dir, sizeof c->state_dir, "%s", val);
        return 0;
    }
    if (!strcmp(key, "schema.registry.url") ||
        !strcmp(key, "schema.registry.basic.auth.user.info")) {
        bool url = key[16] == 'u';
        char *dst = url ? c->registry_url : c->registry_user_info;
        size_t size = url ? sizeof c->registry_url : sizeof c->registry_user_info;
        if (!val || strlen(val) >= size) return fail(x, v, "%s: expected a string", key);
        if (url && strncmp(val, "http://", 7) && strncmp(val, "https://", 8))
            return fail(x, v, "%s: '%s' is not an http:// or https:// URL", key, val);
        snprintf(dst, size, "%s", val);
        return 0;
    }
    return fail(x, k,
                "unknown key '%s' (kafka, catalog, http, status_interval, state_dir, "
                "schema.registry.url, schema.registry.basic.auth.user.info, tables)",
                key);
}

int sink_config_load(sink_config_t *c, const char *path, floe_err_t *err)
{
    memset(c, 0, sizeof *c);
    if (floe_store_config_defaults(&c->store, err) < 0) return -1;
    snprintf(c->http, sizeof c->http, "127.0.0.1:8182");
    c->status_ms = 10000;
    FILE *f = fopen(path, "rb");
    if (!f) return floe_err_errno(err, errno, path);
    yaml_parser_t p;
    yaml_document_t doc;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    int rc;
    if (!yaml_parser_load(&p, &doc)) {
        rc = floe_err_set(err, FLOE_EINVAL, "%s:%lu: YAML: %s", path,
                          (unsigned long)p.problem_mark.line + 1,
                          p.problem ? p.problem : "cannot parse");
        yaml_parser_delete(&p);
        fclose(f);
        return rc;
    }
    ctx_t x = {.path = path, .doc = &doc, .err = err};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) rc = floe_err_set(err, FLOE_EINVAL, "%s: empty", path);
    else
        rc = each_pair(&x, root, "the file", root_pair, c);
    if (rc == 0 && !c->nprops)
        rc = floe_err_set(err, FLOE_EINVAL, "%s: kafka: is required (bootstrap.servers, group.id)",
                          path);
    bool group = false;
    for (size_t i = 0; rc == 0 && i < c->nprops; i++) group |= !strcmp(c->prop_keys[i], "group.id");
    if (rc == 0 && !group)
        rc = floe_err_set(err, FLOE_EINVAL,
                          "%s: kafka: group.id is required (workers with the same id share the "
                          "work)",
                          path);
    bool rest = c->store.catalog == FLOE_STORE_REST;
    if (rc == 0 && !rest && !c->store.cat_warehouse[0])
        rc = floe_err_set(err, FLOE_EINVAL, "%s: catalog: warehouse is required", path);
    if (rc == 0 && !rest) {
        /* a filesystem catalog's warehouse is where its files go */
        memcpy(c->store.warehouse, c->store.cat_warehouse, sizeof c->store.cat_warehouse);
        c->store.cat_warehouse[0] = 0;
    }
    if (rc == 0 && rest && !c->store.cat_uri[0])
        rc = floe_err_set(err, FLOE_EINVAL, "%s: catalog: uri is required with type rest", path);
    if (rc == 0 && !rest && c->store.cat_uri[0])
        rc = floe_err_set(err, FLOE_EINVAL, "%s: catalog: uri needs type rest", path);
    if (rc == 0 && !c->ntables)
        rc = floe_err_set(err, FLOE_EINVAL, "%s: tables: at least one entry is required", path);
    if (rc == 0 && x.index_entry && !c->state_dir[0])
        rc = fail(&x, x.index_entry,
                  "tables: entry: an upsert table in position mode needs state_dir (this "
                  "sink's own directory, where its key index spills past "
                  "upsert_index_memory_bytes), or upsert_delete_mode: equality");
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    fclose(f);
    return rc;
}

void sink_config_clear(sink_config_t *c)
{
    for (size_t i = 0; i < c->nprops; i++) {
        free(c->prop_keys[i]);
        free(c->prop_values[i]);
    }
    free(c->prop_keys);
    free(c->prop_values);
    for (size_t i = 0; i < c->ntables; i++) {
        sink_table_t *t = &c->tables[i];
        free(t->topic);
        free(t->regex);
        for (size_t k = 0; k < t->n; k++) {
            free(t->keys[k]);
            free(t->values[k]);
        }
        free(t->keys);
        free(t->values);
    }
    free(c->tables);
    memset(c, 0, sizeof *c);
}
