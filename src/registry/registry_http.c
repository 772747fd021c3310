/* The Confluent Schema Registry REST API over the registry's state
 * (registry.h).  Answers are application/vnd.schemaregistry.v1+json;
 * errors are {"error_code": N, "message": "..."} with Confluent's codes. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/registry_int.h"

#define CTYPE "application/vnd.schemaregistry.v1+json"

/* A parsed request: the path's segments and the query flags we use. */
typedef struct req {
    const floe_http_req_t *rq;
    char *seg[16];
    int nseg;
    bool deleted, permanent, verbose, default_global;
} req_t;

static int answer(floe_http_resp_t *rs, int status, json_t *j)
{
    rs->status = status;
    rs->content_type = CTYPE;
    floe_buf_reset(&rs->body);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (!s) return -1;
    int rc = floe_buf_append_str(&rs->body, s);
    free(s);
    return rc;
}

static int answer_err(floe_http_resp_t *rs, const reg_status_t *st)
{
    return answer(rs, st->http, json_pack("{s:i,s:s}", "error_code", st->code, "message", st->msg));
}

static int err(floe_http_resp_t *rs, int http, int code, const char *msg, const char *arg)
{
    reg_status_t st;
    reg_fail(&st, http, code, msg, arg ? arg : "");
    return answer_err(rs, &st);
}

static bool flag(const floe_http_req_t *rq, const char *key)
{
    const char *v = floe_http_query(rq, key, NULL);
    return v && !strcmp(v, "true");
}

/* The body's JSON object, or NULL (an error is answered). */
static json_t *body(const req_t *q, floe_http_resp_t *rs)
{
    json_t *j =
        q->rq->body_len ? json_loadb((const char *)q->rq->body, q->rq->body_len, 0, NULL) : NULL;
    if (!json_is_object(j)) {
        json_decref(j);
        err(rs, 422, 42201, "Invalid request: the body must be a JSON object%s", NULL);
        return NULL;
    }
    return j;
}

/* The schema of a register/lookup/compatibility body, parsed into c: 0,
 * or -1 with the error answered. */
static int body_schema(floe_registry_t *r, const req_t *q, floe_http_resp_t *rs, reg_cand_t *c)
{
    memset(c, 0, sizeof *c);
    json_t *j = body(q, rs);
    if (!j) return -1;
    json_t *sch = json_object_get(j, "schema"), *type = json_object_get(j, "schemaType");
    const reg_type_t *t = !type || json_is_null(type) ? &reg_type_avro
                          : json_is_string(type)      ? reg_type_named(json_string_value(type))
                                                      : NULL;
    reg_ref_t *refs = NULL;
    size_t nrefs = 0;
    reg_status_t st;
    int rc = -1, rr;
    if (!t)
        reg_fail(&st, 422, 42201, "schemaType %s is not supported yet by floe's registry",
                 json_is_string(type) ? json_string_value(type) : "?");
    else if ((rr = reg_refs_from_json(json_object_get(j, "references"), &refs, &nrefs)))
        reg_fail(&st, rr < 0 ? 500 : 422, rr < 0 ? 50001 : 42201,
                 rr < 0 ? "out of memory" : "Invalid schema: malformed references");
    else if (!json_is_string(sch))
        reg_fail(&st, 422, 42201, "Invalid schema: the body has no \"schema\" string");
    else
        rc = reg_cand_parse(r, t, json_string_value(sch), json_string_length(sch), refs, nrefs, c,
                            &st),
        refs = NULL, nrefs = 0;
    if (refs) {
        reg_cand_t tmp = {.s = {.type = t, .refs = refs, .nrefs = nrefs}};
        reg_cand_free(&tmp);
    }
    json_decref(j);
    if (rc) {
        reg_cand_free(c);
        answer_err(rs, &st);
    }
    return rc;
}

/* "latest" / "-1" / 1..2^31-1: 0 with *v (0 for latest), or -1 answered. */
static int parse_version(const char *s, int32_t *v, floe_http_resp_t *rs)
{
    if (!strcmp(s, "latest") || !strcmp(s, "-1")) {
        *v = 0;
        return 0;
    }
    char *end;
    long long n = strtoll(s, &end, 10);
    if (*s && !*end && n >= 1 && n <= INT32_MAX) {
        *v = (int32_t)n;
        return 0;
    }
    err(rs, 422, 42202,
        "The specified version '%s' is not a valid version id. Allowed values are between [1, "
        "2^31-1] and the string \"latest\"",
        s);
    return -1;
}

/* The subject and version a request names, or -1 answered (40401 / 40402). */
static int find_version(floe_registry_t *r, const req_t *q, const char *name, const char *ver,
                        bool deleted, reg_subject_t **sub, reg_version_t **out,
                        floe_http_resp_t *rs)
{
    int32_t v;
    if (parse_version(ver, &v, rs)) return -1;
    reg_subject_t *s = reg_subject(r, name);
    if (!s || (!deleted && !reg_has_live(s)) || !s->nv) {
        err(rs, 404, 40401, "Subject '%s' not found.", name);
        return -1;
    }
    reg_version_t *x = v ? reg_version(s, v) : (reg_version_t *)reg_latest(s, deleted);
    if (!x || (x->deleted && !deleted)) {
        err(rs, 404, 40402, "Version %s not found.", ver);
        return -1;
    }
    (void)q;
    *sub = s;
    *out = x;
    return 0;
}

/* sc's text in the form the request asks for (?format=). */
static json_t *schema_text(floe_registry_t *r, const req_t *q, const reg_schema_t *sc)
{
    if (!sc) return json_string("");
    char *t =
        sc->type->render ? sc->type->render(r, sc, floe_http_query(q->rq, "format", NULL)) : NULL;
    json_t *j = json_string(t ? t : sc->text);
    free(t);
    return j;
}

/* Add schemaType (when not AVRO) and references (when any) to o. */
static void schema_meta(json_t *o, const reg_schema_t *sc)
{
    if (!sc) return;
    if (sc->type != &reg_type_avro)
        json_object_set_new(o, "schemaType", json_string(sc->type->name));
    if (!sc->nrefs) return;
    json_t *a = json_array();
    for (size_t i = 0; i < sc->nrefs; i++)
        json_array_append_new(a, json_pack("{s:s,s:s,s:i}", "name", sc->refs[i].name, "subject",
                                           sc->refs[i].subject, "version", sc->refs[i].version));
    json_object_set_new(o, "references", a);
}

static json_t *version_json(floe_registry_t *r, const req_t *q, const reg_subject_t *s,
                            const reg_version_t *v)
{
    const reg_schema_t *sc = reg_schema_by_id(r, v->id);
    json_t *o = json_pack("{s:s,s:i,s:i,s:o}", "subject", s->name, "version", v->version, "id",
                          v->id, "schema", schema_text(r, q, sc));
    if (o) schema_meta(o, sc);
    return o;
}

/* The stored schema of v, or an empty Avro one (a version whose schema is
 * gone, which the state never holds). */
static reg_schema_t stored(floe_registry_t *r, const reg_version_t *v)
{
    const reg_schema_t *sc = reg_schema_by_id(r, v->id);
    return sc ? *sc : (reg_schema_t){v->id, &reg_type_avro, "", NULL, 0};
}

/* sc's text alone as the body (.../schema). */
static int raw_text(floe_registry_t *r, const req_t *q, const reg_schema_t *sc,
                    floe_http_resp_t *rs)
{
    json_t *j = schema_text(r, q, sc);
    rs->content_type = CTYPE;
    int rc = floe_buf_append_str(&rs->body, j ? json_string_value(j) : "");
    json_decref(j);
    return rc;
}

/* The ids of the schemas whose references name version v of s (v NULL:
 * any version), or of any version holding schema id (s NULL). */
static json_t *referrers(floe_registry_t *r, const reg_subject_t *s, const reg_version_t *v,
                         int32_t id)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->nschemas; i++) {
        const reg_schema_t *sc = &r->schemas[i];
        bool hit = s && reg_refers_to(r, sc, s, v);
        for (size_t k = 0; !s && !hit && k < r->nsubs; k++)
            for (size_t j = 0; !hit && j < r->subs[k].nv; j++)
                hit =
                    r->subs[k].v[j].id == id && reg_refers_to(r, sc, &r->subs[k], &r->subs[k].v[j]);
        if (hit) json_array_append_new(a, json_integer(sc->id));
    }
    return a;
}

/* Refuse to delete what a schema references (Confluent's 42206); 0 when
 * nothing does, else -1 answered. */
static int refuse_referenced(floe_registry_t *r, const reg_subject_t *s, const reg_version_t *v,
                             floe_http_resp_t *rs)
{
    json_t *a = referrers(r, s, v, 0);
    size_t n = json_array_size(a);
    json_decref(a);
    if (!n) return 0;
    reg_status_t st;
    reg_fail(&st, 422, 42206,
             "One or more references exist to the schema "
             "{magic=1,keytype=SCHEMA,subject=%s,version=%d}.",
             s->name, v ? (int)v->version : 0);
    answer_err(rs, &st);
    return -1;
}

/* ---- /subjects ---- */

static int subjects_list(floe_registry_t *r, const req_t *q, floe_http_resp_t *rs)
{
    const char *prefix = floe_http_query(q->rq, "subjectPrefix", NULL);
    if (!prefix) prefix = "";
    json_t *a = json_array();
    for (size_t i = 0; i < r->nsubs; i++) {
        const reg_subject_t *s = &r->subs[i];
        if ((q->deleted ? s->nv > 0 : reg_has_live(s)) && !strncmp(s->name, prefix, strlen(prefix)))
            json_array_append_new(a, json_string(s->name));
    }
    return answer(rs, 200, a);
}

static int subject_register(floe_registry_t *r, const req_t *q, const char *name,
                            floe_http_resp_t *rs)
{
    reg_cand_t c;
    if (body_schema(r, q, rs, &c)) return 0;
    reg_subject_t *s = reg_subject(r, name);
    const char *mode = s && s->mode[0] ? s->mode : r->mode;
    reg_status_t st;
    int rc;
    floe_buf_t msgs = FLOE_BUF_INIT;
    if (!strncmp(mode, "READONLY", 8)) {
        rc = err(rs, 422, 42205, "Subject %s is in read-only mode", name);
        goto out;
    }
    for (size_t i = 0; s && i < s->nv; i++) {
        const reg_schema_t *sc = reg_schema_by_id(r, s->v[i].id);
        if (!s->v[i].deleted && sc && reg_same(sc, &c.s)) {
            rc = answer(rs, 200, json_pack("{s:i}", "id", sc->id));
            goto out;
        }
    }
    if (!reg_compatible(r, s, NULL, &c, reg_level(r, s), &msgs)) {
        json_t *m = json_array();
        for (char *p = (char *)msgs.data, *e; p && p < (char *)msgs.data + msgs.len; p = e + 1) {
            e = memchr(p, '\n', (size_t)((char *)msgs.data + msgs.len - p));
            if (!e) break;
            json_array_append_new(m, json_stringn(p, (size_t)(e - p)));
        }
        char *details = json_dumps(m, JSON_COMPACT);
        reg_fail(&st, 409, 409,
                 "Schema being registered is incompatible with an earlier schema for subject "
                 "\"%s\", details: %s",
                 name, details ? details : "[]");
        free(details);
        json_decref(m);
        rc = answer_err(rs, &st);
        goto out;
    }
    const reg_schema_t *same = reg_schema_same(r, &c.s);
    c.s.id = same ? same->id : r->max_id + 1;
    const reg_version_t *last = s ? reg_latest(s, true) : NULL;
    int32_t version = last ? last->version + 1 : 1;
    if (reg_put_version(r, name, version, &c.s, false, &st)) rc = answer_err(rs, &st);
    else
        rc = answer(rs, 200, json_pack("{s:i}", "id", c.s.id));
out:
    floe_buf_free(&msgs);
    reg_cand_free(&c);
    return rc;
}

static int subject_lookup(floe_registry_t *r, const req_t *q, const char *name,
                          floe_http_resp_t *rs)
{
    reg_cand_t c;
    if (body_schema(r, q, rs, &c)) return 0;
    reg_subject_t *s = reg_subject(r, name);
    int rc;
    if (!s || !s->nv || (!q->deleted && !reg_has_live(s))) {
        rc = err(rs, 404, 40401, "Subject '%s' not found.", name);
        goto out;
    }
    for (size_t i = s->nv; i-- > 0;) {
        const reg_schema_t *sc = reg_schema_by_id(r, s->v[i].id);
        if ((q->deleted || !s->v[i].deleted) && sc && reg_same(sc, &c.s)) {
            rc = answer(rs, 200, version_json(r, q, s, &s->v[i]));
            goto out;
        }
    }
    rc = err(rs, 404, 40403, "Schema not found%s", NULL);
out:
    reg_cand_free(&c);
    return rc;
}

static int subject_delete(floe_registry_t *r, const req_t *q, const char *name,
                          floe_http_resp_t *rs)
{
    reg_subject_t *s = reg_subject(r, name);
    if (!s || !s->nv) return err(rs, 404, 40401, "Subject '%s' not found.", name);
    bool live = reg_has_live(s);
    if (!q->permanent && !live)
        return err(rs, 404, 40404,
                   "Subject '%s' was soft deleted.Set permanent=true to delete "
                   "permanently",
                   name);
    if (q->permanent && live)
        return err(rs, 404, 40405,
                   "Subject '%s' was not deleted first before being permanently deleted", name);
    if (refuse_referenced(r, s, NULL, rs)) return 0;
    json_t *a = json_array();
    reg_status_t st;
    /* copy: permanent deletes remove entries from s->v as they go */
    size_t n = s->nv;
    reg_version_t *vs = malloc(n * sizeof *vs);
    if (!vs) {
        json_decref(a);
        return -1;
    }
    memcpy(vs, s->v, n * sizeof *vs);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!q->permanent && vs[i].deleted) continue;
        reg_schema_t sc = stored(r, &vs[i]);
        rc = q->permanent ? reg_drop_version(r, name, vs[i].version, &st)
                          : reg_put_version(r, name, vs[i].version, &sc, true, &st);
        if (!rc) json_array_append_new(a, json_integer(vs[i].version));
    }
    if (!rc && q->permanent && (s = reg_subject(r, name)) && s->compat[0])
        rc = reg_put_config(r, name, NULL, &st);
    free(vs);
    if (rc) {
        json_decref(a);
        return answer_err(rs, &st);
    }
    return answer(rs, 200, a);
}

static int version_delete(floe_registry_t *r, const req_t *q, const char *name, const char *ver,
                          floe_http_resp_t *rs)
{
    reg_subject_t *s;
    reg_version_t *v;
    if (find_version(r, q, name, ver, true, &s, &v, rs)) return 0;
    if (!q->permanent && v->deleted)
        return err(rs, 404, 40406,
                   "Subject '%s' Version was soft deleted.Set permanent=true to delete permanently",
                   name);
    if (q->permanent && !v->deleted)
        return err(rs, 404, 40407,
                   "Subject '%s' Version was not deleted first before being permanently deleted",
                   name);
    if (refuse_referenced(r, s, v, rs)) return 0;
    reg_status_t st;
    int32_t number = v->version;
    reg_schema_t sc = stored(r, v);
    int rc = q->permanent ? reg_drop_version(r, name, number, &st)
                          : reg_put_version(r, name, number, &sc, true, &st);
    return rc ? answer_err(rs, &st) : answer(rs, 200, json_integer(number));
}

static int subjects(floe_registry_t *r, const req_t *q, floe_http_resp_t *rs)
{
    const char *m = q->rq->method;
    bool get = !strcmp(m, "GET"), post = !strcmp(m, "POST"), del = !strcmp(m, "DELETE");
    if (q->nseg == 1) return get ? subjects_list(r, q, rs) : -2;
    const char *name = q->seg[1];
    if (q->nseg == 2)
        return post ? subject_lookup(r, q, name, rs) : del ? subject_delete(r, q, name, rs) : -2;
    if (strcmp(q->seg[2], "versions")) return -3;
    if (q->nseg == 3) {
        if (post) return subject_register(r, q, name, rs);
        if (!get) return -2;
        reg_subject_t *s = reg_subject(r, name);
        if (!s || !s->nv || (!q->deleted && !reg_has_live(s)))
            return err(rs, 404, 40401, "Subject '%s' not found.", name);
        json_t *a = json_array();
        for (size_t i = 0; i < s->nv; i++)
            if (q->deleted || !s->v[i].deleted)
                json_array_append_new(a, json_integer(s->v[i].version));
        return answer(rs, 200, a);
    }
    if (q->nseg == 4 && del) return version_delete(r, q, name, q->seg[3], rs);
    if (!get || q->nseg > 5) return q->nseg > 5 ? -3 : -2;
    reg_subject_t *s;
    reg_version_t *v;
    if (find_version(r, q, name, q->seg[3], q->deleted, &s, &v, rs)) return 0;
    if (q->nseg == 4) return answer(rs, 200, version_json(r, q, s, v));
    if (!strcmp(q->seg[4], "referencedby")) return answer(rs, 200, referrers(r, s, v, 0));
    if (strcmp(q->seg[4], "schema")) return -3;
    return raw_text(r, q, reg_schema_by_id(r, v->id), rs);
}

/* ---- /schemas ---- */

static int schemas(floe_registry_t *r, const req_t *q, floe_http_resp_t *rs)
{
    if (strcmp(q->rq->method, "GET")) return -2;
    if (q->nseg == 2 && !strcmp(q->seg[1], "types")) {
        json_t *a = json_array();
        static const char *const names[] = {"AVRO", "PROTOBUF", "JSON"};
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (reg_type_named(names[i])) json_array_append_new(a, json_string(names[i]));
        return answer(rs, 200, a);
    }
    if (q->nseg == 1) {
        json_t *a = json_array();
        for (size_t i = 0; i < r->nsubs; i++)
            for (size_t k = 0; k < r->subs[i].nv; k++)
                if (q->deleted || !r->subs[i].v[k].deleted)
                    json_array_append_new(a, version_json(r, q, &r->subs[i], &r->subs[i].v[k]));
        return answer(rs, 200, a);
    }
    if (q->nseg < 3 || q->nseg > 4 || strcmp(q->seg[1], "ids")) return -3;
    char *end;
    long long id = strtoll(q->seg[2], &end, 10);
    const reg_schema_t *sc =
        !*end && id > 0 && id <= INT32_MAX ? reg_schema_by_id(r, (int32_t)id) : NULL;
    if (!sc) return err(rs, 404, 40403, "Schema %s not found", q->seg[2]);
    if (q->nseg == 3) {
        json_t *o = json_pack("{s:o}", "schema", schema_text(r, q, sc));
        if (o) schema_meta(o, sc);
        return answer(rs, 200, o);
    }
    if (!strcmp(q->seg[3], "schema")) return raw_text(r, q, sc, rs);
    if (!strcmp(q->seg[3], "referencedby"))
        return answer(rs, 200, referrers(r, NULL, NULL, sc->id));
    bool versions = !strcmp(q->seg[3], "versions");
    if (!versions && strcmp(q->seg[3], "subjects")) return -3;
    json_t *a = json_array();
    for (size_t i = 0; i < r->nsubs; i++) {
        bool named = false;
        for (size_t k = 0; k < r->subs[i].nv; k++) {
            const reg_version_t *v = &r->subs[i].v[k];
            if (v->id != sc->id || (v->deleted && !q->deleted)) continue;
            if (versions)
                json_array_append_new(
                    a, json_pack("{s:s,s:i}", "subject", r->subs[i].name, "version", v->version));
            else if (!named)
                json_array_append_new(a, json_string(r->subs[i].name));
            named = true;
        }
    }
    return answer(rs, 200, a);
}

/* ---- /config and /mode ---- */

static int settings(floe_registry_t *r, const req_t *q, bool config, floe_http_resp_t *rs)
{
    const char *m = q->rq->method;
    const char *subject = q->nseg == 2 ? q->seg[1] : NULL;
    if (q->nseg > 2) return -3;
    reg_subject_t *s = subject ? reg_subject(r, subject) : NULL;
    const char *member = config ? "compatibilityLevel" : "mode";
    const char *own = s ? (config ? s->compat : s->mode) : "";
    const char *global = config ? r->compat : r->mode;
    reg_status_t st;
    if (!strcmp(m, "GET")) {
        if (subject && !own[0] && !q->default_global && config)
            return err(rs, 404, 40408,
                       "Subject '%s' does not have subject-level compatibility configured",
                       subject);
        return answer(rs, 200, json_pack("{s:s}", member, own[0] ? own : global));
    }
    if (!strcmp(m, "PUT")) {
        json_t *j = body(q, rs);
        if (!j) return 0;
        const char *v = json_string_value(json_object_get(j, config ? "compatibility" : "mode"));
        char val[32];
        snprintf(val, sizeof val, "%s", v ? v : "");
        json_decref(j);
        if (config && !reg_level_name(val))
            return err(rs, 422, 42203, "Invalid compatibility level: '%s'", val);
        if (!config && strcmp(val, "READWRITE") && strcmp(val, "READONLY") &&
            strcmp(val, "READONLY_OVERRIDE") && strcmp(val, "IMPORT"))
            return err(rs, 422, 42204, "Invalid mode: '%s'", val);
        int rc = config ? reg_put_config(r, subject, val, &st) : reg_put_mode(r, subject, val, &st);
        return rc ? answer_err(rs, &st)
                  : answer(rs, 200, json_pack("{s:s}", config ? "compatibility" : "mode", val));
    }
    if (!strcmp(m, "DELETE")) {
        char prev[32];
        snprintf(prev, sizeof prev, "%s", subject ? own : global);
        if (subject && !own[0])
            return err(rs, 404, config ? 40408 : 40409,
                       "Subject '%s' does not have a subject-level setting", subject);
        int rc =
            config ? reg_put_config(r, subject, NULL, &st) : reg_put_mode(r, subject, NULL, &st);
        return rc ? answer_err(rs, &st) : answer(rs, 200, json_pack("{s:s}", member, prev));
    }
    return -2;
}

/* ---- /compatibility ---- */

static int compatibility(floe_registry_t *r, const req_t *q, floe_http_resp_t *rs)
{
    if (strcmp(q->rq->method, "POST")) return -2;
    if ((q->nseg != 4 && q->nseg != 5) || strcmp(q->seg[1], "subjects") ||
        strcmp(q->seg[3], "versions"))
        return -3;
    const char *name = q->seg[2];
    reg_subject_t *s = NULL;
    reg_version_t *v = NULL;
    if (q->nseg == 5 && find_version(r, q, name, q->seg[4], false, &s, &v, rs)) return 0;
    reg_cand_t c;
    if (body_schema(r, q, rs, &c)) return 0;
    if (!s) s = reg_subject(r, name);
    floe_buf_t msgs = FLOE_BUF_INIT;
    bool ok = reg_compatible(r, s, v, &c, reg_level(r, s), &msgs);
    json_t *out = json_pack("{s:b}", "is_compatible", ok);
    if (q->verbose) {
        json_t *m = json_array();
        for (char *p = (char *)msgs.data, *e; p && p < (char *)msgs.data + msgs.len; p = e + 1) {
            if (!(e = memchr(p, '\n', (size_t)((char *)msgs.data + msgs.len - p)))) break;
            json_array_append_new(m, json_stringn(p, (size_t)(e - p)));
        }
        json_object_set_new(out, "messages", m);
    }
    floe_buf_free(&msgs);
    reg_cand_free(&c);
    return answer(rs, 200, out);
}

/* Join segments [from, to) back into one (they are adjacent in the path
 * buffer): a subject name may hold '/' (Python's serializer names the
 * subjects of imports "google/protobuf/timestamp.proto"; the server hands
 * us the path with %2F decoded). */
static void join_segs(req_t *q, int from, int to)
{
    if (to - from < 2) return;
    for (int i = from; i < to - 1; i++) q->seg[i][strlen(q->seg[i])] = '/';
    memmove(&q->seg[from + 1], &q->seg[to], (size_t)(q->nseg - to) * sizeof *q->seg);
    q->nseg -= to - from - 1;
}

/* The subject of a path spans from segment `at` up to its last "versions"
 * (or to the end when there is none). */
static void subject_segs(req_t *q, int at)
{
    int end = q->nseg;
    for (int i = q->nseg - 1; i > at; i--)
        if (!strcmp(q->seg[i], "versions") && q->nseg - i <= 3) {
            end = i;
            break;
        }
    if (end == q->nseg && q->nseg - at >= 2 && !strcmp(q->seg[q->nseg - 1], "versions"))
        end = q->nseg - 1;
    join_segs(q, at, end);
}

int floe_registry_handle(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    floe_registry_t *r = arg;
    req_t q = {.rq = rq};
    char *path = strdup(rq->path);
    if (!path) return -1;
    for (char *save = NULL, *t = strtok_r(path, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (q.nseg == 16) break;
        q.seg[q.nseg++] = t;
    }
    if (q.nseg > 2 && !strcmp(q.seg[0], "subjects")) subject_segs(&q, 1);
    else if (q.nseg > 2 && (!strcmp(q.seg[0], "config") || !strcmp(q.seg[0], "mode")))
        join_segs(&q, 1, q.nseg);
    else if (q.nseg > 3 && !strcmp(q.seg[0], "compatibility") && !strcmp(q.seg[1], "subjects"))
        subject_segs(&q, 2);
    q.deleted = flag(rq, "deleted");
    q.permanent = flag(rq, "permanent");
    q.verbose = flag(rq, "verbose");
    q.default_global = flag(rq, "defaultToGlobal");
    const char *top = q.nseg ? q.seg[0] : "";
    pthread_mutex_lock(&r->mu);
    int rc = -3;
    if (!strcmp(top, "subjects")) rc = subjects(r, &q, rs);
    else if (!strcmp(top, "schemas"))
        rc = schemas(r, &q, rs);
    else if (!strcmp(top, "config"))
        rc = settings(r, &q, true, rs);
    else if (!strcmp(top, "mode"))
        rc = settings(r, &q, false, rs);
    else if (!strcmp(top, "compatibility"))
        rc = compatibility(r, &q, rs);
    pthread_mutex_unlock(&r->mu);
    free(path);
    /* -2: a method the path does not take; -3: no such path (also every
     * /associations lookup: floe keeps no associations, and the Confluent
     * JavaScript client falls back to TopicNameStrategy on a 404) */
    if (rc == -2) return err(rs, 405, 405, "HTTP 405 Method Not Allowed%s", NULL);
    if (rc == -3) return err(rs, 404, 404, "HTTP 404 Not Found%s", NULL);
    return rc;
}

int floe_registry_http(floe_registry_t *r, floe_http_t *h, floe_err_t *e)
{
    static const char *const prefixes[] = {"/subjects", "/schemas",       "/config",
                                           "/mode",     "/compatibility", "/associations"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (floe_http_route(h, prefixes[i], floe_registry_handle, r)) return floe_err_oom(e);
    return 0;
}
