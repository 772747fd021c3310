/* floe serve's schema registry (serve_registry.h): its state in the
 * compacted topic `_schemas` (one partition), written through the topic's
 * log and fsynced before a change is answered, replayed at start. */
#include "cmd/serve_registry.h"

#include <stdlib.h>

#include "kafka/topics.h"
#include "log/batch.h"
#include "log/log.h"
#include "util/clock.h"
#include "util/diag.h"

struct serve_registry {
    floe_registry_t *reg;
    floe_log_t *log;
    floe_batch_builder_t *builder;
    floe_buf_t out;
};

/* floe_registry_persist_fn: one record, appended and fsynced (called
 * under the registry's lock, so records keep their order). */
static int persist(void *arg, const uint8_t *key, size_t klen, const uint8_t *value, size_t vlen,
                   floe_err_t *err)
{
    serve_registry_t *s = arg;
    floe_slice_t k = {key, klen}, v = {value, vlen};
    floe_batch_builder_reset(s->builder, NULL);
    floe_buf_reset(&s->out);
    if (floe_batch_builder_add(s->builder, floe_wall_ms(), &k, value ? &v : NULL, NULL, 0, err) ||
        floe_batch_builder_finish(s->builder, &s->out, err) ||
        floe_log_append(s->log, s->out.data, s->out.len, -1, NULL, err) ||
        floe_log_flush(s->log, err)) {
        floe_err_wrap(err, "%s", FLOE_SCHEMAS_TOPIC);
        return -1;
    }
    return 0;
}

/* Apply every record of the log, oldest first. */
static int replay(serve_registry_t *s, floe_err_t *err)
{
    floe_buf_t buf = FLOE_BUF_INIT, scratch = FLOE_BUF_INIT;
    int64_t off = floe_log_start_offset(s->log), end = floe_log_end_offset(s->log), n = 0;
    int rc = 0;
    while (off < end && !rc) {
        floe_buf_reset(&buf);
        if (floe_log_read(s->log, off, 1 << 20, &buf, NULL, err)) {
            rc = -1;
            break;
        }
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, buf.data, buf.len);
        const uint8_t *b;
        size_t blen;
        floe_batch_hdr_t h;
        int64_t next = off;
        int r;
        while (!rc && (r = floe_batch_iter_next(&it, &b, &blen, &h, err)) == 1) {
            next = floe_batch_last_offset(&h) + 1;
            floe_slice_t recs;
            if (floe_batch_is_control(&h) ||
                floe_batch_records(b, blen, &h, &scratch, 0, &recs, err))
                continue;
            floe_record_iter_t ri;
            floe_record_iter_init(&ri, &h, recs);
            floe_record_t rec;
            while (floe_record_iter_next(&ri, &rec, err) == 1) {
                if (rec.offset < off || rec.key_null) continue;
                n++;
                if (floe_registry_apply(s->reg, rec.key.ptr, rec.key.len,
                                        rec.value_null ? NULL : rec.value.ptr, rec.value.len) < 0)
                    rc = floe_err_oom(err);
            }
        }
        if (r < 0) rc = -1;
        if (next <= off) break;
        off = next;
    }
    floe_buf_free(&buf);
    floe_buf_free(&scratch);
    if (!rc) FLOE_INFO("registry: replayed %lld records of %s", (long long)n, FLOE_SCHEMAS_TOPIC);
    return rc;
}

int serve_registry_start(floe_broker_t *b, serve_registry_t **out, floe_err_t *err)
{
    *out = NULL;
    serve_registry_t *s = calloc(1, sizeof *s);
    if (!s || !(s->builder = floe_batch_builder_new(NULL))) {
        free(s);
        return floe_err_oom(err);
    }
    floe_topic_t *t = floe_broker_topic(b, FLOE_SCHEMAS_TOPIC, sizeof FLOE_SCHEMAS_TOPIC - 1);
    int16_t kerr = 0;
    const floe_kv_t cfg[] = {{"cleanup.policy", "compact"}, {"table.enable", "false"}};
    if (!t && floe_broker_create_topic(b, FLOE_SCHEMAS_TOPIC, 1, cfg, 2, false, &t, &kerr, err))
        goto fail;
    if (!(s->log = floe_topic_log(t, 0))) {
        floe_err_set(err, FLOE_EINVAL, "%s has no partition 0", FLOE_SCHEMAS_TOPIC);
        goto fail;
    }
    if (floe_registry_new(persist, s, &s->reg, err) || replay(s, err)) goto fail;
    *out = s;
    return 0;
fail:
    floe_err_wrap(err, "registry");
    serve_registry_stop(s);
    return -1;
}

floe_registry_t *serve_registry(serve_registry_t *s)
{
    return s ? s->reg : NULL;
}

static int schema_by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    return floe_registry_avro_schema(arg, id, out, err);
}

static int proto_by_id(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    return floe_registry_proto_schema(arg, id, out, err);
}

static int id_of(void *arg, const char *subject, int32_t version, int32_t *id, floe_err_t *err)
{
    return floe_registry_subject_id(arg, subject, version, id, err);
}

static int json_by_id(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    return floe_registry_json_schema(arg, id, out, err);
}

floe_conv_schemas_t serve_registry_schemas(serve_registry_t *s)
{
    return (floe_conv_schemas_t){schema_by_id, s->reg, proto_by_id, json_by_id, .id_of = id_of};
}

void serve_registry_stop(serve_registry_t *s)
{
    if (!s) return;
    floe_registry_free(s->reg);
    floe_batch_builder_free(s->builder);
    floe_buf_free(&s->out);
    free(s);
}
