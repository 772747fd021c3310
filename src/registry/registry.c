/* The schema registry's state and its records (registry.h): every change
 * is written as the record Confluent's registry would write to `_schemas`,
 * and applied through the same code that replays those records at start,
 * so the state after a restart is the state before it. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/registry_int.h"
#include "util/json.h"

int reg_fail(reg_status_t *st, int http, int code, const char *fmt, ...)
{
    st->http = http;
    st->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int floe_registry_new(floe_registry_persist_fn persist, void *arg, floe_registry_t **out,
                      floe_err_t *err)
{
    *out = NULL;
    floe_registry_t *r = calloc(1, sizeof *r);
    if (!r) return floe_err_oom(err);
    pthread_mutex_init(&r->mu, NULL);
    r->persist = persist;
    r->persist_arg = arg;
    strcpy(r->compat, "BACKWARD");
    strcpy(r->mode, "READWRITE");
    *out = r;
    return 0;
}

void floe_registry_free(floe_registry_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nsubs; i++) {
        free(r->subs[i].name);
        free(r->subs[i].v);
    }
    free(r->subs);
    for (size_t i = 0; i < r->nschemas; i++) free(r->schemas[i].text);
    free(r->schemas);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* ---- lookups ---- */

reg_subject_t *reg_subject(floe_registry_t *r, const char *name)
{
    for (size_t i = 0; i < r->nsubs; i++)
        if (!strcmp(r->subs[i].name, name)) return &r->subs[i];
    return NULL;
}

const reg_schema_t *reg_schema_by_id(floe_registry_t *r, int32_t id)
{
    for (size_t i = 0; i < r->nschemas; i++)
        if (r->schemas[i].id == id) return &r->schemas[i];
    return NULL;
}

const reg_schema_t *reg_schema_by_text(floe_registry_t *r, const char *text)
{
    for (size_t i = 0; i < r->nschemas; i++)
        if (!strcmp(r->schemas[i].text, text)) return &r->schemas[i];
    return NULL;
}

const reg_version_t *reg_latest(const reg_subject_t *s, bool deleted)
{
    for (size_t i = s->nv; i-- > 0;)
        if (deleted || !s->v[i].deleted) return &s->v[i];
    return NULL;
}

reg_version_t *reg_version(reg_subject_t *s, int32_t v)
{
    for (size_t i = 0; i < s->nv; i++)
        if (s->v[i].version == v) return &s->v[i];
    return NULL;
}

bool reg_has_live(const reg_subject_t *s)
{
    return reg_latest(s, false) != NULL;
}

static const char *const levels[] = {
    "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
    "FULL",     "FULL_TRANSITIVE",     "NONE"};

const char *reg_level_name(const char *level)
{
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        if (level && !strcmp(levels[i], level)) return levels[i];
    return NULL;
}

const char *reg_level(floe_registry_t *r, const reg_subject_t *s)
{
    return s && s->compat[0] ? s->compat : r->compat;
}

int reg_parse(const char *text, size_t len, char **canon, floe_avro_schema_t **root,
              reg_status_t *st)
{
    floe_avro_schema_t *s = NULL;
    floe_err_t err = {0};
    *canon = NULL;
    if (floe_avro_schema_parse(text, len, &s, &err))
        return reg_fail(st, 422, 42201, "Invalid schema: %s", err.msg);
    *canon = floe_avro_schema_to_json(s, &err);
    if (!*canon) {
        floe_avro_schema_free(s);
        return reg_fail(st, 500, 50001, "Error while parsing the schema: %s", err.msg);
    }
    if (root) *root = s;
    else
        floe_avro_schema_free(s);
    return 0;
}

/* One check of candidate against the stored version v per level. */
static bool compatible_with(floe_registry_t *r, const reg_version_t *v,
                            const floe_avro_schema_t *cand, const char *level, floe_buf_t *msgs)
{
    const reg_schema_t *sc = reg_schema_by_id(r, v->id);
    floe_avro_schema_t *old = NULL;
    floe_err_t err = {0};
    if (!sc || floe_avro_schema_parse(sc->text, strlen(sc->text), &old, &err)) {
        floe_buf_printf(msgs, "the stored schema of version %d cannot be read\n", (int)v->version);
        return false;
    }
    bool backward = !strncmp(level, "BACKWARD", 8) || !strncmp(level, "FULL", 4);
    bool forward = !strncmp(level, "FORWARD", 7) || !strncmp(level, "FULL", 4);
    bool ok = true;
    if (backward && !floe_registry_avro_compatible(cand, old, msgs)) ok = false;
    if (forward && !floe_registry_avro_compatible(old, cand, msgs)) ok = false;
    if (!ok) floe_buf_printf(msgs, "{oldSchemaVersion: %d}\n", (int)v->version);
    floe_avro_schema_free(old);
    return ok;
}

bool reg_compatible(floe_registry_t *r, const reg_subject_t *s, const reg_version_t *only,
                    const floe_avro_schema_t *candidate, const char *level, floe_buf_t *msgs)
{
    if (!strcmp(level, "NONE")) return true;
    if (only) return compatible_with(r, only, candidate, level, msgs);
    if (!s) return true;
    if (!strstr(level, "TRANSITIVE")) {
        const reg_version_t *v = reg_latest(s, false);
        return !v || compatible_with(r, v, candidate, level, msgs);
    }
    bool ok = true;
    for (size_t i = s->nv; i-- > 0;)
        if (!s->v[i].deleted && !compatible_with(r, &s->v[i], candidate, level, msgs)) ok = false;
    return ok;
}

/* ---- applying records ---- */

static reg_subject_t *subject_add(floe_registry_t *r, const char *name)
{
    reg_subject_t *s = reg_subject(r, name);
    if (s) return s;
    if (r->nsubs == r->subs_cap) {
        size_t cap = r->subs_cap ? r->subs_cap * 2 : 16;
        reg_subject_t *n = realloc(r->subs, cap * sizeof *n);
        if (!n) return NULL;
        r->subs = n;
        r->subs_cap = cap;
    }
    s = &r->subs[r->nsubs];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name))) return NULL;
    r->nsubs++;
    return s;
}

static int schema_add(floe_registry_t *r, int32_t id, const char *text)
{
    if (id > r->max_id) r->max_id = id;
    if (reg_schema_by_id(r, id)) return 0;
    if (r->nschemas == r->schemas_cap) {
        size_t cap = r->schemas_cap ? r->schemas_cap * 2 : 16;
        reg_schema_t *n = realloc(r->schemas, cap * sizeof *n);
        if (!n) return -1;
        r->schemas = n;
        r->schemas_cap = cap;
    }
    char *t = strdup(text);
    if (!t) return -1;
    r->schemas[r->nschemas++] = (reg_schema_t){id, t};
    return 0;
}

static int apply_schema(floe_registry_t *r, const char *subject, int32_t version, json_t *val)
{
    if (!val) { /* tombstone: the version is gone for good */
        reg_subject_t *s = reg_subject(r, subject);
        if (!s) return 0;
        for (size_t i = 0; i < s->nv; i++)
            if (s->v[i].version == version) {
                memmove(&s->v[i], &s->v[i + 1], (s->nv - i - 1) * sizeof *s->v);
                s->nv--;
                break;
            }
        return 0;
    }
    json_t *jid = json_object_get(val, "id"), *jsch = json_object_get(val, "schema"),
           *jtype = json_object_get(val, "schemaType");
    if (!json_is_integer(jid) || !json_is_string(jsch) || json_integer_value(jid) <= 0 ||
        json_integer_value(jid) > INT32_MAX)
        return 1;
    if (jtype && json_is_string(jtype) && strcmp(json_string_value(jtype), "AVRO")) return 1;
    int32_t id = (int32_t)json_integer_value(jid);
    char *canon = NULL;
    reg_status_t st;
    if (reg_parse(json_string_value(jsch), json_string_length(jsch), &canon, NULL, &st)) return 1;
    int rc = schema_add(r, id, canon);
    free(canon);
    if (rc) return -1;
    reg_subject_t *s = subject_add(r, subject);
    if (!s) return -1;
    reg_version_t *v = reg_version(s, version);
    if (!v) {
        if (s->nv == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 4;
            reg_version_t *n = realloc(s->v, cap * sizeof *n);
            if (!n) return -1;
            s->v = n;
            s->cap = cap;
        }
        size_t at = s->nv;
        while (at > 0 && s->v[at - 1].version > version) at--;
        memmove(&s->v[at + 1], &s->v[at], (s->nv - at) * sizeof *s->v);
        s->nv++;
        v = &s->v[at];
    }
    *v = (reg_version_t){version, id, json_is_true(json_object_get(val, "deleted"))};
    return 0;
}

static void set_name(char *dst, const char *src)
{
    snprintf(dst, 32, "%s", src ? src : "");
}

int floe_registry_apply(floe_registry_t *r, const uint8_t *key, size_t klen, const uint8_t *value,
                        size_t vlen)
{
    json_t *k = json_loadb((const char *)key, klen, 0, NULL);
    json_t *v = value ? json_loadb((const char *)value, vlen, 0, NULL) : NULL;
    const char *type = json_string_value(json_object_get(k, "keytype"));
    const char *subject = json_string_value(json_object_get(k, "subject"));
    int rc = 1;
    if (!type || (value && !json_is_object(v))) goto out;
    if (!strcmp(type, "SCHEMA")) {
        json_t *ver = json_object_get(k, "version");
        if (subject && json_is_integer(ver) && json_integer_value(ver) > 0 &&
            json_integer_value(ver) <= INT32_MAX)
            rc = apply_schema(r, subject, (int32_t)json_integer_value(ver), v);
    } else if (!strcmp(type, "CONFIG") || !strcmp(type, "MODE")) {
        bool config = type[0] == 'C';
        const char *val =
            json_string_value(json_object_get(v, config ? "compatibilityLevel" : "mode"));
        if (config && val && !reg_level_name(val)) goto out;
        if (value && !val) goto out;
        rc = 0;
        if (!subject) {
            set_name(config ? r->compat : r->mode, val ? val : config ? "BACKWARD" : "READWRITE");
        } else {
            reg_subject_t *s = val ? subject_add(r, subject) : reg_subject(r, subject);
            if (val && !s) rc = -1;
            if (s) set_name(config ? s->compat : s->mode, val);
        }
    } else if (!strcmp(type, "ID")) { /* floe's own: the highest id given */
        json_t *max = json_object_get(v, "max_id");
        if (json_is_integer(max) && json_integer_value(max) > r->max_id &&
            json_integer_value(max) <= INT32_MAX)
            r->max_id = (int32_t)json_integer_value(max);
        rc = 0;
    } else if (!strcmp(type, "DELETE_SUBJECT")) {
        reg_subject_t *s = subject ? reg_subject(r, subject) : NULL;
        json_t *ver = json_object_get(v, "version");
        rc = 0;
        for (size_t i = 0; s && json_is_integer(ver) && i < s->nv; i++)
            if (s->v[i].version <= json_integer_value(ver)) s->v[i].deleted = true;
    }
out:
    json_decref(k);
    json_decref(v);
    return rc;
}

/* ---- writing records ---- */

/* Persist key -> value (value NULL: tombstone) and apply it. */
static int commit(floe_registry_t *r, floe_buf_t *key, floe_buf_t *value, reg_status_t *st)
{
    floe_err_t err = {0};
    int rc = -1;
    if (r->persist && r->persist(r->persist_arg, key->data, key->len, value ? value->data : NULL,
                                 value ? value->len : 0, &err)) {
        reg_fail(st, 500, 50001, "Error while storing the registry's state: %s", err.msg);
        goto out;
    }
    if (floe_registry_apply(r, key->data, key->len, value ? value->data : NULL,
                            value ? value->len : 0) < 0) {
        reg_fail(st, 500, 50001, "out of memory");
        goto out;
    }
    rc = 0;
out:
    floe_buf_free(key);
    if (value) floe_buf_free(value);
    return rc;
}

static int schema_key(floe_buf_t *k, const char *subject, int32_t version)
{
    return floe_buf_append_str(k, "{\"keytype\":\"SCHEMA\",\"subject\":") ||
           floe_json_cstr(k, subject) ||
           floe_buf_printf(k, ",\"version\":%d,\"magic\":1}", (int)version);
}

int reg_put_version(floe_registry_t *r, const char *subject, int32_t version, int32_t id,
                    const char *text, bool deleted, reg_status_t *st)
{
    floe_buf_t k = FLOE_BUF_INIT, v = FLOE_BUF_INIT;
    if (schema_key(&k, subject, version) || floe_buf_append_str(&v, "{\"subject\":") ||
        floe_json_cstr(&v, subject) ||
        floe_buf_printf(&v, ",\"version\":%d,\"id\":%d,\"schema\":", (int)version, (int)id) ||
        floe_json_cstr(&v, text) ||
        floe_buf_printf(&v, ",\"deleted\":%s}", deleted ? "true" : "false")) {
        floe_buf_free(&k);
        floe_buf_free(&v);
        return reg_fail(st, 500, 50001, "out of memory");
    }
    return commit(r, &k, &v, st);
}

int reg_drop_version(floe_registry_t *r, const char *subject, int32_t version, reg_status_t *st)
{
    /* compaction drops the version's record with its tombstone: keep the
     * highest id given in a record of its own, so no id is given twice */
    floe_buf_t k = FLOE_BUF_INIT, v = FLOE_BUF_INIT;
    if (floe_buf_append_str(&k, "{\"keytype\":\"ID\",\"magic\":0}") ||
        floe_buf_printf(&v, "{\"max_id\":%d}", (int)r->max_id)) {
        floe_buf_free(&k);
        floe_buf_free(&v);
        return reg_fail(st, 500, 50001, "out of memory");
    }
    if (commit(r, &k, &v, st)) return -1;
    if (schema_key(&k, subject, version)) {
        floe_buf_free(&k);
        return reg_fail(st, 500, 50001, "out of memory");
    }
    return commit(r, &k, NULL, st);
}

/* CONFIG and MODE records: value NULL deletes a subject's own setting. */
static int put_setting(floe_registry_t *r, const char *type, const char *member,
                       const char *subject, const char *value, reg_status_t *st)
{
    floe_buf_t k = FLOE_BUF_INIT, v = FLOE_BUF_INIT;
    bool fail = floe_buf_printf(&k, "{\"keytype\":\"%s\",\"subject\":", type) ||
                floe_json_cstr(&k, subject) || floe_buf_append_str(&k, ",\"magic\":0}");
    if (value)
        fail = fail || floe_buf_printf(&v, "{\"%s\":", member) || floe_json_cstr(&v, value) ||
               floe_buf_append_u8(&v, '}');
    if (fail) {
        floe_buf_free(&k);
        floe_buf_free(&v);
        return reg_fail(st, 500, 50001, "out of memory");
    }
    return commit(r, &k, value ? &v : NULL, st);
}

int reg_put_config(floe_registry_t *r, const char *subject, const char *level, reg_status_t *st)
{
    return put_setting(r, "CONFIG", "compatibilityLevel", subject, level, st);
}

int reg_put_mode(floe_registry_t *r, const char *subject, const char *mode, reg_status_t *st)
{
    return put_setting(r, "MODE", "mode", subject, mode, st);
}

int floe_registry_avro_schema(floe_registry_t *r, int32_t id, floe_avro_schema_t **out,
                              floe_err_t *err)
{
    *out = NULL;
    pthread_mutex_lock(&r->mu);
    const reg_schema_t *s = reg_schema_by_id(r, id);
    char *text = s ? strdup(s->text) : NULL;
    pthread_mutex_unlock(&r->mu);
    if (!s) return floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry", (int)id);
    if (!text) return floe_err_oom(err);
    int rc = floe_avro_schema_parse(text, strlen(text), out, err);
    free(text);
    return rc;
}
