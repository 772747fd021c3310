#include "table/convert.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "table/avro_conv.h"
#include "table/upsert.h"
#include "util/json.h"
#include "table/avro_shred.h"
#include "table/jschema_shred.h"
#include "table/proto_conv.h"
#include "table/proto_shred.h"
#include "util/clock.h"
#include "util/utf8.h"

#define SCHEMA_CACHE 64
/* How long the id of a subject's `latest` is trusted before it is asked
 * for again (a record that does not decode asks at once). */
#define LATEST_RECHECK_MS 1000

/* Plain Avro binary (no magic byte, no id) decoded with a registry
 * subject's schema: the subject, its version (0: latest), the id it
 * resolved to and when. */
typedef struct subj {
    char *name; /* NULL: the id is in each record */
    int32_t version;
    int32_t id;
    int64_t checked_ms;
} subj_t;

/* Parsed schemas by registry id, for the converter's life: the newest
 * SCHEMA_CACHE, evicted in turn.  One per schema type. */
typedef struct idcache {
    struct {
        int32_t id;
        void *s;
    } e[SCHEMA_CACHE];
    size_t n, next;
    void (*free)(void *s);
} idcache_t;

static void *idcache_get(const idcache_t *k, int32_t id)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->e[i].id == id) return k->e[i].s;
    return NULL;
}

/* Keep s (taken) under id, evicting the oldest when full. */
static void idcache_put(idcache_t *k, int32_t id, void *s)
{
    size_t at;
    if (k->n < SCHEMA_CACHE) {
        at = k->n++;
    } else {
        at = k->next++ % SCHEMA_CACHE;
        k->free(k->e[at].s);
    }
    k->e[at].id = id;
    k->e[at].s = s;
}

static void idcache_clear(idcache_t *k)
{
    for (size_t i = 0; i < k->n; i++) k->free(k->e[i].s);
    k->n = 0;
}

static void avro_free(void *s)
{
    floe_avro_schema_free(s);
}

static void proto_free(void *s)
{
    floe_proto_schema_free(s);
}

static void jschema_free(void *s)
{
    floe_jschema_free(s);
}

struct floe_conv {
    floe_rows_t *rows;
    floe_conv_kind_t value, key;
    floe_rnode_t *partition, *offset, *timestamp, *keyn, *headers, *valuen;
    /* header scratch, reused across records */
    floe_slice_t *hk, *hv;
    bool *hnull;
    size_t hcap;
    /* avro: the schema source, the schemas seen (by id), JSON scratch */
    floe_conv_schemas_t schemas;
    idcache_t cache, pcache, jcache; /* avro, protobuf, json schemas */
    floe_buf_t pscratch;             /* the protobuf decoder's working memory */
    floe_buf_t json;
    floe_avro_shred_t *shred;     /* avro values without transforms: typed columns */
    floe_jschema_shred_t *jshred; /* json_schema values likewise */
    floe_proto_shred_t *pshred;   /* protobuf values likewise */
    bool pjson;                   /* this record takes the protobuf JSON path */
    floe_xform_t xf;              /* value transforms, xout their result */
    floe_buf_t xout;
    floe_xform_op_t last_op;
    /* upsert tables: the id and cdc columns (NULL: append), whether the
     * last record deletes its key, the key's row JSON of a tombstone */
    floe_tupsert_cols_t *up;
    bool last_delete;
    floe_buf_t keyrow;
    subj_t vsub, ksub;
    bool retry; /* the record failed on a stale `latest`: convert it again */
};

static const char *const kind_names[] = {
    [FLOE_CONV_RAW] = "raw",           [FLOE_CONV_STRING] = "string",
    [FLOE_CONV_JSON] = "json",         [FLOE_CONV_AVRO] = "avro",
    [FLOE_CONV_PROTOBUF] = "protobuf", [FLOE_CONV_JSON_SCHEMA] = "json_schema"};

int floe_conv_kind_parse(const char *s, floe_conv_kind_t *out, floe_err_t *err)
{
    for (int k = FLOE_CONV_RAW; k <= FLOE_CONV_JSON_SCHEMA; k++)
        if (s && strcasecmp(s, kind_names[k]) == 0) {
            *out = (floe_conv_kind_t)k;
            return 0;
        }
    return floe_err_set(err, FLOE_EINVAL,
                        "unknown converter '%s': expected raw, string, json, avro, protobuf or "
                        "json_schema",
                        s ? s : "(null)");
}

const char *floe_conv_kind_name(floe_conv_kind_t k)
{
    return k >= FLOE_CONV_RAW && k <= FLOE_CONV_JSON_SCHEMA ? kind_names[k] : "?";
}

const char *floe_conv_stage_name(floe_conv_stage_t s)
{
    switch (s) {
    case FLOE_STAGE_DECODE: return "decode";
    case FLOE_STAGE_CONVERT: return "convert";
    case FLOE_STAGE_SCHEMA: return "schema";
    case FLOE_STAGE_RETENTION: return "retention";
    }
    return "?";
}

floe_conv_stage_t floe_conv_stage_parse(floe_slice_t s)
{
    for (int k = FLOE_STAGE_DECODE; k <= FLOE_STAGE_RETENTION; k++) {
        const char *name = floe_conv_stage_name((floe_conv_stage_t)k);
        if (s.len == strlen(name) && !memcmp(s.ptr, name, s.len)) return (floe_conv_stage_t)k;
    }
    return 0;
}

floe_conv_t *floe_conv_new(floe_rows_t *rows, floe_conv_kind_t value, floe_conv_kind_t key,
                           floe_err_t *err)
{
    if (floe_rows_count(rows)) {
        floe_err_set(err, FLOE_EINVAL, "converter needs an empty buffer");
        return NULL;
    }
    floe_conv_t *c = calloc(1, sizeof *c);
    if (!c) {
        floe_err_oom(err);
        return NULL;
    }
    c->rows = rows;
    c->value = value;
    c->key = key;
    c->cache.free = avro_free;
    c->pcache.free = proto_free;
    c->jcache.free = jschema_free;
    floe_rnode_t *root = floe_rows_root(rows);
    floe_rnode_t *k = floe_rows_add_field(rows, root, "_kafka", FLOE_TK_STRUCT, true, err);
    if (!k) goto fail;
    floe_rows_mark_sys(k);
    floe_tkind_t key_kind = key == FLOE_CONV_RAW ? FLOE_TK_BINARY : FLOE_TK_STRING;
    if (!(c->partition = floe_rows_add_field(rows, k, "partition", FLOE_TK_INT, true, err)) ||
        !(c->offset = floe_rows_add_field(rows, k, "offset", FLOE_TK_LONG, true, err)) ||
        !(c->timestamp =
              floe_rows_add_field(rows, k, "timestamp", FLOE_TK_TIMESTAMPTZ, true, err)) ||
        !(c->keyn = floe_rows_add_field(rows, k, "key", key_kind, false, err)) ||
        !(c->headers =
              floe_rows_add_map(rows, k, "headers", FLOE_TK_STRING, FLOE_TK_BINARY, false, err)))
        goto fail;
    if (value != FLOE_CONV_JSON && value != FLOE_CONV_AVRO && value != FLOE_CONV_PROTOBUF &&
        value != FLOE_CONV_JSON_SCHEMA) {
        floe_tkind_t vk = value == FLOE_CONV_RAW ? FLOE_TK_BINARY : FLOE_TK_STRING;
        if (!(c->valuen = floe_rows_add_field(rows, root, "value", vk, false, err))) goto fail;
        floe_rows_mark_sys(c->valuen);
    }
    if ((value == FLOE_CONV_AVRO && !(c->shred = floe_avro_shred_new(rows))) ||
        (value == FLOE_CONV_JSON_SCHEMA && !(c->jshred = floe_jschema_shred_new(rows))) ||
        (value == FLOE_CONV_PROTOBUF && !(c->pshred = floe_proto_shred_new(rows)))) {
        floe_err_oom(err);
        goto fail;
    }
    return c;
fail:
    free(c);
    return NULL;
}

void floe_conv_free(floe_conv_t *c)
{
    if (!c) return;
    free(c->hk);
    free(c->hv);
    free(c->hnull);
    idcache_clear(&c->cache);
    idcache_clear(&c->pcache);
    idcache_clear(&c->jcache);
    floe_buf_free(&c->json);
    floe_buf_free(&c->pscratch);
    floe_buf_free(&c->xout);
    floe_buf_free(&c->keyrow);
    free(c->up);
    free(c->vsub.name);
    free(c->ksub.name);
    floe_avro_shred_free(c->shred);
    floe_jschema_shred_free(c->jshred);
    floe_proto_shred_free(c->pshred);
    free(c);
}

int floe_conv_set_subjects(floe_conv_t *c, const char *value_subject, int32_t value_version,
                           const char *key_subject, floe_err_t *err)
{
    char *v = value_subject && *value_subject ? strdup(value_subject) : NULL;
    char *k = key_subject && *key_subject ? strdup(key_subject) : NULL;
    if ((value_subject && *value_subject && !v) || (key_subject && *key_subject && !k)) {
        free(v);
        free(k);
        return floe_err_oom(err);
    }
    free(c->vsub.name);
    free(c->ksub.name);
    c->vsub = (subj_t){.name = v, .version = value_version};
    c->ksub = (subj_t){.name = k};
    return 0;
}

/* The id sub names now: asked again when `latest` was last asked for
 * long ago, or `force`.  0 with *id, or -1 with err. */
static int subject_id(floe_conv_t *c, subj_t *sub, bool force, int32_t *id, floe_err_t *err)
{
    int64_t now = floe_mono_ms();
    if (sub->id && !(sub->version == 0 && (force || now - sub->checked_ms >= LATEST_RECHECK_MS))) {
        *id = sub->id;
        return 0;
    }
    if (!c->schemas.id_of)
        return floe_err_set(err, FLOE_ENOENT, "subject %s: no schema registry", sub->name);
    if (c->schemas.id_of(c->schemas.arg, sub->name, sub->version, id, err)) {
        floe_err_wrap(err, "schema subject");
        return -1;
    }
    sub->id = *id;
    sub->checked_ms = now;
    return 0;
}

/* The writer schema id of in and the datum's bytes: the wire format's
 * header, or sub's id for plain binary.  0, or -1 with err. */
static int datum_of(floe_conv_t *c, subj_t *sub, floe_slice_t in, int32_t *id, floe_slice_t *datum,
                    floe_err_t *err)
{
    if (sub->name) {
        *datum = in;
        return subject_id(c, sub, false, id, err);
    }
    if (floe_confluent_header(in.ptr, in.len, id, err)) return -1;
    *datum = (floe_slice_t){in.ptr + FLOE_CONFLUENT_HEADER, in.len - FLOE_CONFLUENT_HEADER};
    return 0;
}

/* A datum of sub's `latest` that did not decode: if the subject has a
 * newer version now, the record is converted again with it. */
static void maybe_stale(floe_conv_t *c, subj_t *sub, int32_t id)
{
    floe_err_t e = {0};
    int32_t now;
    if (sub->name && sub->version == 0 && !subject_id(c, sub, true, &now, &e) && now != id)
        c->retry = true;
}

int floe_conv_set_upsert(floe_conv_t *c, const char *ids, const char *cdc, floe_err_t *err)
{
    floe_tupsert_cols_t *u = floe_tupsert_cols_new(ids, cdc, err);
    if (!u) return -1;
    free(c->up);
    c->up = u;
    return 0;
}

bool floe_conv_last_deletes(const floe_conv_t *c)
{
    return c->last_delete;
}

/* The row a tombstone of an upsert table stands for: its id columns, from
 * the record key (borrowed), as JSON in c->keyrow.  A JSON object key
 * gives the row (Debezium's {"schema":..,"payload":{..}} envelope
 * unwrapped); any other key is the value of the one id column (a JSON
 * scalar as it is, other text as a string).  0, or -1 with *err. */
static int tombstone_row(floe_conv_t *c, floe_slice_t key, floe_err_t *err)
{
    floe_buf_reset(&c->keyrow);
    json_t *j = json_loadb((const char *)key.ptr, key.len, JSON_DECODE_ANY, NULL);
    int rc = 0;
    if (c->up->nids == 1 && !strcmp(c->up->ids[0], FLOE_TUPSERT_KEY_COLUMN)) {
        rc = floe_buf_append_str(&c->keyrow, "{}") < 0 ? floe_err_oom(err) : 0; /* key set */
    } else if (j && json_is_object(j)) {
        json_t *pl = json_object_get(j, "payload");
        json_t *row = json_object_get(j, "schema") && json_is_object(pl) ? pl : j;
        char *t = json_dumps(row, JSON_COMPACT);
        rc = t && floe_buf_append_str(&c->keyrow, t) == 0 ? 0 : floe_err_oom(err);
        free(t);
    } else if (c->up->nids != 1 || strchr(c->up->ids[0], '.')) {
        rc = floe_err_set(err, FLOE_EINVAL,
                          "upsert: a tombstone's key must be a JSON object naming the id columns");
    } else if (floe_buf_append_u8(&c->keyrow, '{') < 0 ||
               floe_json_cstr(&c->keyrow, c->up->ids[0]) < 0 ||
               floe_buf_append_u8(&c->keyrow, ':') < 0 ||
               (j && !json_is_array(j) && !json_is_null(j)
                    ? floe_buf_append(&c->keyrow, key.ptr, key.len)
                    : floe_json_str(&c->keyrow, key.ptr, key.len)) < 0 ||
               floe_buf_append_u8(&c->keyrow, '}') < 0) {
        rc = floe_err_oom(err);
    }
    json_decref(j);
    return rc;
}

void floe_conv_set_schemas(floe_conv_t *c, const floe_conv_schemas_t *s)
{
    c->schemas = *s;
}

void floe_conv_set_transforms(floe_conv_t *c, const floe_xform_t *x)
{
    c->xf = *x;
}

floe_xform_op_t floe_conv_last_op(const floe_conv_t *c)
{
    return c->last_op;
}

/* The JSON value v (or a null one) through c's transforms: 1 with the row's
 * JSON in *v (NULL: none), 0 for no row, -1 with err. */
static int transform(floe_conv_t *c, floe_slice_t *v, bool *null, floe_err_t *err)
{
    if (!c->xf.nsteps) return 1;
    int rc = floe_xform_apply(&c->xf, c->rows, v->ptr, v->len, *null, &c->xout, &c->last_op, err);
    if (rc == 1 && !*null) *v = floe_buf_slice(&c->xout);
    return rc;
}

/* The writer schema of id, from the cache or the source. */
static const floe_avro_schema_t *schema_of(floe_conv_t *c, int32_t id, floe_err_t *err)
{
    floe_avro_schema_t *s = idcache_get(&c->cache, id);
    if (s) return s;
    if (!c->schemas.fn) {
        floe_err_set(err, FLOE_ENOENT, "schema id %d: no schema registry", (int)id);
        return NULL;
    }
    if (c->schemas.fn(c->schemas.arg, id, &s, err) || floe_avro_conv_check(s, err)) {
        floe_avro_schema_free(s);
        floe_err_wrap(err, "schema id %d", (int)id);
        return NULL;
    }
    idcache_put(&c->cache, id, s);
    return s;
}

/* An Avro value in the Confluent wire format straight into the row's
 * columns (avro_shred.h): the stage is convert for bad bytes, schema for a
 * schema the table cannot take. */
static int avro_typed(floe_conv_t *c, floe_slice_t in, floe_conv_stage_t *stage, floe_err_t *err)
{
    int32_t id;
    floe_slice_t d;
    *stage = FLOE_STAGE_CONVERT;
    if (datum_of(c, &c->vsub, in, &id, &d, err)) return -1;
    const floe_avro_schema_t *s = schema_of(c, id, err);
    if (!s) return -1;
    if (!floe_avro_shred(c->shred, id, s, d.ptr, d.len, err)) return 0;
    if (err && err->code != FLOE_ECORRUPT) *stage = FLOE_STAGE_SCHEMA;
    else {
        floe_err_wrap(err, "schema id %d", (int)id);
        maybe_stale(c, &c->vsub, id);
    }
    return -1;
}

/* An Avro record in the Confluent wire format as JSON text in c->json: a
 * record schema as its object, any other as {"value": ...}. */
static int avro_json(floe_conv_t *c, subj_t *sub, floe_slice_t in, floe_err_t *err)
{
    int32_t id;
    floe_slice_t d;
    if (datum_of(c, sub, in, &id, &d, err)) return -1;
    const floe_avro_schema_t *s = schema_of(c, id, err);
    if (!s) return -1;
    floe_buf_reset(&c->json);
    bool wrap = floe_avro_schema_type(s) != FLOE_AVRO_RECORD;
    if (wrap && floe_buf_append_str(&c->json, "{\"value\":")) return floe_err_oom(err);
    if (floe_avro_conv_json(s, d.ptr, d.len, &c->json, err)) {
        floe_err_wrap(err, "schema id %d", (int)id);
        maybe_stale(c, sub, id);
        return -1;
    }
    if (wrap && floe_buf_append_u8(&c->json, '}')) return floe_err_oom(err);
    return 0;
}

/* The protobuf writer schema of id, from the cache or the source. */
static const floe_proto_schema_t *proto_schema_of(floe_conv_t *c, int32_t id, floe_err_t *err)
{
    floe_proto_schema_t *s = idcache_get(&c->pcache, id);
    if (s) return s;
    if (!c->schemas.proto) {
        floe_err_set(err, FLOE_ENOENT, "schema id %d: no registry of Protobuf schemas", (int)id);
        return NULL;
    }
    if (c->schemas.proto(c->schemas.arg, id, &s, err)) {
        floe_err_wrap(err, "schema id %d", (int)id);
        return NULL;
    }
    if (c->pcache.n == SCHEMA_CACHE) /* the oldest goes: its plans first */
        floe_proto_shred_forget(c->pshred, c->pcache.e[c->pcache.next % SCHEMA_CACHE].id);
    idcache_put(&c->pcache, id, s);
    return s;
}

/* The JSON Schema of id, from the cache or the source. */
static const floe_jschema_t *jschema_of(floe_conv_t *c, int32_t id, floe_err_t *err)
{
    floe_jschema_t *s = idcache_get(&c->jcache, id);
    if (s) return s;
    if (!c->schemas.json) {
        floe_err_set(err, FLOE_ENOENT, "schema id %d: no registry of JSON schemas", (int)id);
        return NULL;
    }
    if (c->schemas.json(c->schemas.arg, id, &s, err)) {
        floe_err_wrap(err, "schema id %d", (int)id);
        return NULL;
    }
    idcache_put(&c->jcache, id, s);
    return s;
}

/* JSON text in the Confluent wire format: *out the text after the header
 * (its strings are checked as they are read), *s its schema. */
static int jschema_text(floe_conv_t *c, floe_slice_t in, floe_slice_t *out,
                        const floe_jschema_t **s, int32_t *id, floe_err_t *err)
{
    if (floe_confluent_header(in.ptr, in.len, id, err)) return -1;
    if (!(*s = jschema_of(c, *id, err))) return -1;
    *out = floe_slice(in.ptr + FLOE_CONFLUENT_HEADER, in.len - FLOE_CONFLUENT_HEADER);
    return 0;
}

/* A JSON value in the Confluent wire format straight into the row's
 * columns (jschema_shred.h): the stage is convert for bad text or a value
 * its schema does not take, schema for a schema the table cannot take. */
static int jschema_typed(floe_conv_t *c, floe_slice_t in, floe_conv_stage_t *stage, floe_err_t *err)
{
    int32_t id;
    const floe_jschema_t *s;
    floe_slice_t v;
    *stage = FLOE_STAGE_CONVERT;
    if (jschema_text(c, in, &v, &s, &id, err)) return -1;
    if (!floe_jschema_shred(c->jshred, id, s, v.ptr, v.len, err)) return 0;
    if (err && err->code != FLOE_ECORRUPT) *stage = FLOE_STAGE_SCHEMA;
    return -1;
}

/* A protobuf value in the Confluent wire format (header, message indexes,
 * message): its schema id, message and the message's bytes p[0..n). */
static int proto_message(floe_conv_t *c, floe_slice_t in, int32_t *id, const floe_proto_msg_t **m,
                         const uint8_t **p, size_t *n, floe_err_t *err)
{
    int32_t idx[FLOE_PROTO_MAX_INDEXES];
    size_t nidx, used;
    if (floe_confluent_header(in.ptr, in.len, id, err)) return -1;
    *p = in.ptr + FLOE_CONFLUENT_HEADER;
    *n = in.len - FLOE_CONFLUENT_HEADER;
    if (floe_proto_conv_indexes(*p, *n, idx, &nidx, &used, err)) return -1;
    const floe_proto_schema_t *s = proto_schema_of(c, *id, err);
    if (!s) return -1;
    if (!(*m = floe_proto_schema_message(s, idx, nidx)))
        return floe_err_set(err, FLOE_ECORRUPT, "schema id %d has no message at index %d%s",
                            (int)*id, (int)idx[0], nidx > 1 ? " (nested)" : "");
    *p += used;
    *n -= used;
    return 0;
}

/* A protobuf message in the Confluent wire format as JSON text in c->json. */
static int proto_json(floe_conv_t *c, floe_slice_t in, floe_err_t *err)
{
    int32_t id;
    const floe_proto_msg_t *m;
    const uint8_t *p;
    size_t n;
    if (proto_message(c, in, &id, &m, &p, &n, err)) return -1;
    floe_buf_reset(&c->json);
    if (floe_proto_conv_json(m, p, n, &c->json, &c->pscratch, err)) {
        floe_err_wrap(err, "schema id %d", (int)id);
        return -1;
    }
    return 0;
}

/* A protobuf value straight into the row's columns (proto_shred.h): 0,
 * -1 with err (no schema or message for it), or FLOE_PROTO_SHRED_JSON for
 * a row the JSON path must take. */
static int proto_typed(floe_conv_t *c, floe_slice_t in, floe_err_t *err)
{
    int32_t id;
    const floe_proto_msg_t *m;
    const uint8_t *p;
    size_t n;
    if (proto_message(c, in, &id, &m, &p, &n, err)) return -1;
    int rc = floe_proto_shred(c->pshred, id, m, p, n, err);
    return rc < 0 && err && err->code == FLOE_ENOMEM ? -1 : rc ? FLOE_PROTO_SHRED_JSON : 0;
}

/* Key or value bytes of a registry converter as JSON text in c->json. */
static int registry_json(floe_conv_t *c, floe_conv_kind_t k, subj_t *sub, floe_slice_t in,
                         floe_err_t *err)
{
    if (k == FLOE_CONV_JSON_SCHEMA) {
        int32_t id;
        const floe_jschema_t *s;
        floe_slice_t v;
        size_t bad;
        if (jschema_text(c, in, &v, &s, &id, err)) return -1;
        if (!floe_utf8_valid(v.ptr, v.len, &bad))
            return floe_err_set(err, FLOE_ECORRUPT, "schema id %d: JSON is not UTF-8 (byte %zu)",
                                (int)id, bad);
        floe_buf_reset(&c->json);
        return floe_buf_append(&c->json, v.ptr, v.len) ? floe_err_oom(err) : 0;
    }
    return k == FLOE_CONV_PROTOBUF ? proto_json(c, in, err) : avro_json(c, sub, in, err);
}

static int fail(floe_conv_t *c, floe_conv_stage_t st, floe_conv_stage_t *stage)
{
    floe_rows_rollback(c->rows);
    *stage = st;
    return -1;
}

static int utf8_or_fail(floe_slice_t s, const char *what, floe_err_t *err)
{
    size_t bad;
    if (floe_utf8_valid(s.ptr, s.len, &bad)) return 0;
    return floe_err_set(err, FLOE_ECORRUPT, "%s is not valid UTF-8 (byte %zu)", what, bad);
}

static int conv_one(floe_conv_t *c, int32_t partition, const floe_tmsg_t *m,
                    floe_conv_stage_t *stage, floe_err_t *err);

int floe_conv_record(floe_conv_t *c, int32_t partition, const floe_tmsg_t *m,
                     floe_conv_stage_t *stage, floe_err_t *err)
{
    c->retry = false;
    int rc = conv_one(c, partition, m, stage, err);
    if (rc && c->retry) { /* once: the subject's newer schema */
        c->retry = false;
        rc = conv_one(c, partition, m, stage, err);
    }
    return rc;
}

static int conv_one(floe_conv_t *c, int32_t partition, const floe_tmsg_t *m,
                    floe_conv_stage_t *stage, floe_err_t *err)
{
    floe_rows_t *r = c->rows;
    c->last_op = FLOE_XOP_NONE;
    c->last_delete = false;
    floe_rows_begin(r);
    if (floe_rows_put_int(r, c->partition, partition) < 0 ||
        floe_rows_put_long(r, c->offset, m->offset) < 0 ||
        floe_rows_put_long(r, c->timestamp, m->timestamp * 1000) < 0)
        goto oom;

    if (m->key_null) {
        if (floe_rows_put_null(r, c->keyn) < 0) goto oom;
    } else {
        floe_slice_t key = m->key;
        if (c->key == FLOE_CONV_AVRO || c->key == FLOE_CONV_PROTOBUF ||
            c->key == FLOE_CONV_JSON_SCHEMA) { /* kept as JSON text */
            if (registry_json(c, c->key, &c->ksub, m->key, err)) {
                floe_err_wrap(err, "key");
                return fail(c, FLOE_STAGE_CONVERT, stage);
            }
            key = floe_buf_slice(&c->json);
        } else if (c->key != FLOE_CONV_RAW && utf8_or_fail(m->key, "key", err) < 0)
            return fail(c, FLOE_STAGE_CONVERT, stage);
        if (floe_rows_put_bytes(r, c->keyn, key.ptr, key.len) < 0) goto oom;
    }

    /* headers: a map of string -> binary */
    size_t nh = m->headers.count;
    if (!m->headers.list && nh > m->headers.raw.len) {
        floe_err_set(err, FLOE_ECORRUPT, "header count %zu does not fit the record", nh);
        return fail(c, FLOE_STAGE_DECODE, stage);
    }
    if (nh > c->hcap) {
        size_t cap = nh < 16 ? 16 : nh;
        floe_slice_t *hk = realloc(c->hk, cap * sizeof *hk);
        if (!hk) goto oom;
        c->hk = hk;
        floe_slice_t *hv = realloc(c->hv, cap * sizeof *hv);
        if (!hv) goto oom;
        c->hv = hv;
        bool *hn = realloc(c->hnull, cap * sizeof *hn);
        if (!hn) goto oom;
        c->hnull = hn;
        c->hcap = cap;
    }
    floe_theaders_iter_t hi;
    if (nh) floe_theaders_iter_init(&hi, &m->headers);
    for (size_t i = 0; i < nh; i++) {
        floe_record_header_t h;
        if (floe_theaders_iter_next(&hi, &h) != 1) {
            floe_err_set(err, FLOE_ECORRUPT, "header %zu of %zu is malformed", i, nh);
            return fail(c, FLOE_STAGE_DECODE, stage);
        }
        if (utf8_or_fail(h.key, "header key", err) < 0) return fail(c, FLOE_STAGE_CONVERT, stage);
        c->hk[i] = h.key;
        c->hv[i] = h.value;
        c->hnull[i] = h.value_null;
    }
    if (floe_rows_put_map(r, c->headers, c->hk, c->hv, c->hnull, nh) < 0) goto oom;

    /* the value */
    switch (c->value) {
    case FLOE_CONV_STRING:
        if (!m->value_null && utf8_or_fail(m->value, "value", err) < 0)
            return fail(c, FLOE_STAGE_CONVERT, stage);
        /* fall through */
    case FLOE_CONV_RAW:
        if (m->value_null ? floe_rows_put_null(r, c->valuen) < 0
                          : floe_rows_put_bytes(r, c->valuen, m->value.ptr, m->value.len) < 0)
            goto oom;
        break;
    case FLOE_CONV_AVRO:
        /* transforms take JSON, and an upsert table's tombstone is its key's
         * row: both the JSON route below */
        if (!c->xf.nsteps && !(c->up && m->value_null)) {
            floe_conv_stage_t st;
            if (!m->value_null && avro_typed(c, m->value, &st, err)) return fail(c, st, stage);
            break;
        }
        /* fall through */
    case FLOE_CONV_JSON_SCHEMA:
        if (c->value == FLOE_CONV_JSON_SCHEMA && !c->xf.nsteps && !(c->up && m->value_null)) {
            floe_conv_stage_t st;
            if (!m->value_null && jschema_typed(c, m->value, &st, err)) return fail(c, st, stage);
            break;
        }
        /* fall through */
    case FLOE_CONV_PROTOBUF:
        if (c->value == FLOE_CONV_PROTOBUF && !c->xf.nsteps && !(c->up && m->value_null) &&
            !c->pjson) {
            int rc = m->value_null ? 0 : proto_typed(c, m->value, err);
            if (rc < 0) return fail(c, FLOE_STAGE_CONVERT, stage);
            if (rc == 0) break;
            /* a new column, a value of another type, bad bytes: this record
             * again through JSON text, which evolves the shape or says why */
            floe_rows_rollback(r);
            c->pjson = true;
            rc = floe_conv_record(c, partition, m, stage, err);
            c->pjson = false;
            return rc;
        }
        /* fall through */
    case FLOE_CONV_JSON: {
        floe_slice_t v = m->value;
        bool null = m->value_null;
        if (!null && c->value != FLOE_CONV_JSON) {
            if (registry_json(c, c->value, &c->vsub, m->value, err))
                return fail(c, FLOE_STAGE_CONVERT, stage);
            v = floe_buf_slice(&c->json);
        }
        int xr = transform(c, &v, &null, err);
        if (xr < 0) return fail(c, FLOE_STAGE_CONVERT, stage);
        if (c->up && (xr == 0 || null)) { /* a tombstone deletes its key */
            if (m->key_null) {
                floe_err_set(err, FLOE_EINVAL, "upsert: a tombstone without a key");
                return fail(c, FLOE_STAGE_CONVERT, stage);
            }
            if (tombstone_row(c, m->key, err) < 0) return fail(c, FLOE_STAGE_CONVERT, stage);
            v = floe_buf_slice(&c->keyrow);
            null = false;
            c->last_delete = true;
        } else if (xr == 0) { /* no row: leave the buffer as it was */
            floe_rows_rollback(r);
            return 0;
        }
        if (!null && floe_rows_json(r, floe_rows_root(r), v.ptr, v.len, err) < 0)
            return fail(c,
                        err && err->code == FLOE_ECORRUPT && c->value == FLOE_CONV_JSON
                            ? FLOE_STAGE_CONVERT
                            : FLOE_STAGE_SCHEMA,
                        stage);
        break;
    }
    }
    if (c->up) {
        if (floe_tupsert_check_row(r, c->up, err) < 0) return fail(c, FLOE_STAGE_SCHEMA, stage);
        c->last_delete =
            c->last_delete || c->last_op == FLOE_XOP_DELETE || floe_tupsert_row_deletes(r, c->up);
    }
    if (floe_rows_end(r, err) < 0) return fail(c, FLOE_STAGE_SCHEMA, stage);
    return 0;
oom:
    floe_err_set(err, FLOE_ENOMEM, "out of memory converting record at offset %lld",
                 (long long)m->offset);
    return fail(c, FLOE_STAGE_CONVERT, stage);
}
