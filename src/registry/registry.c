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
#include "util/mem.h"

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

static void refs_free(reg_ref_t *refs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(refs[i].name);
        free(refs[i].subject);
    }
    free(refs);
}

/* A deep copy of refs[0..n), or NULL (n == 0 or out of memory: *ok). */
static reg_ref_t *refs_dup(const reg_ref_t *refs, size_t n, bool *ok)
{
    *ok = true;
    if (!n) return NULL;
    reg_ref_t *c = calloc(n, sizeof *c);
    for (size_t i = 0; c && i < n; i++) {
        c[i].version = refs[i].version;
        if (!(c[i].name = strdup(refs[i].name)) || !(c[i].subject = strdup(refs[i].subject))) {
            refs_free(c, i + 1);
            c = NULL;
        }
    }
    *ok = c != NULL;
    return c;
}

void reg_cand_free(reg_cand_t *c)
{
    if (c->parsed) c->s.type->free_parsed(c->parsed);
    free(c->s.text);
    refs_free(c->s.refs, c->s.nrefs);
    memset(c, 0, sizeof *c);
}

bool reg_same(const reg_schema_t *sc, const reg_schema_t *c)
{
    if (sc->type != c->type || sc->nrefs != c->nrefs) return false;
    if (strcmp(sc->text, c->text) && (!sc->type->same || !sc->type->same(sc->text, c->text)))
        return false;
    for (size_t i = 0; i < sc->nrefs; i++)
        if (strcmp(sc->refs[i].name, c->refs[i].name) ||
            strcmp(sc->refs[i].subject, c->refs[i].subject) ||
            sc->refs[i].version != c->refs[i].version)
            return false;
    return true;
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
    for (size_t i = 0; i < r->nschemas; i++) {
        free(r->schemas[i].text);
        refs_free(r->schemas[i].refs, r->schemas[i].nrefs);
    }
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

const reg_schema_t *reg_schema_same(floe_registry_t *r, const reg_schema_t *c)
{
    for (size_t i = 0; i < r->nschemas; i++)
        if (reg_same(&r->schemas[i], c)) return &r->schemas[i];
    return NULL;
}

const reg_schema_t *reg_ref_schema(floe_registry_t *r, const reg_ref_t *ref)
{
    reg_subject_t *s = reg_subject(r, ref->subject);
    const reg_version_t *v = !s                   ? NULL
                             : ref->version == -1 ? reg_latest(s, false)
                                                  : reg_version(s, ref->version);
    return v && !v->deleted ? reg_schema_by_id(r, v->id) : NULL;
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

/* ---- references ---- */

#define MAX_REF_DEPTH 16

/* A walk of references: what it took, and by which reference. */
typedef struct walk {
    floe_registry_t *r;
    const reg_type_t *type;
    void *arg;
    struct taken {
        const reg_ref_t *ref;
        const reg_schema_t *sc;
    } * t;
    size_t n;
} walk_t;

/* Whether the walk took sc (sc NULL: a schema by ref's name). */
static bool walk_has(const walk_t *w, const reg_ref_t *ref, const reg_schema_t *sc)
{
    for (size_t k = 0; k < w->n; k++)
        if (sc ? w->t[k].sc == sc : !strcmp(w->t[k].ref->name, ref->name)) return true;
    return false;
}

static int walk_take(walk_t *w, const reg_ref_t *ref, const reg_schema_t *sc, reg_status_t *st)
{
    struct taken *t = realloc(w->t, (w->n + 1) * sizeof *t);
    if (!t) return reg_fail(st, 500, 50001, "out of memory");
    w->t = t;
    if (w->type->take_ref(w->arg, ref, sc, st)) return -1;
    w->t[w->n++] = (struct taken){ref, sc};
    return 0;
}

/* refs[0..nrefs) at depth into the walk: each schema resolved and checked,
 * then taken before or after its own references (t->refs_by_name). */
static int walk(walk_t *w, const reg_ref_t *refs, size_t nrefs, int depth, reg_status_t *st)
{
    const reg_type_t *t = w->type;
    if (depth > MAX_REF_DEPTH)
        return reg_fail(st, 422, 42201, "Invalid schema: references nested deeper than %d",
                        MAX_REF_DEPTH);
    for (size_t i = 0; i < nrefs; i++) {
        if (t->refs_by_name && walk_has(w, &refs[i], NULL)) continue;
        const reg_schema_t *sc = reg_ref_schema(w->r, &refs[i]);
        if (!sc || sc->type != t)
            return reg_fail(st, 422, 42201,
                            "Invalid schema: reference %s (subject %s version %d) is not a "
                            "registered %s schema",
                            refs[i].name, refs[i].subject, (int)refs[i].version, t->what);
        if (t->refs_by_name) {
            if (walk_take(w, &refs[i], sc, st) || walk(w, sc->refs, sc->nrefs, depth + 1, st))
                return -1;
        } else if (!walk_has(w, &refs[i], sc)) {
            if (walk(w, sc->refs, sc->nrefs, depth + 1, st) || walk_take(w, &refs[i], sc, st))
                return -1;
        }
    }
    return 0;
}

int reg_refs_walk(floe_registry_t *r, const reg_type_t *t, void *arg, const reg_ref_t *refs,
                  size_t nrefs, reg_status_t *st)
{
    walk_t w = {r, t, arg, NULL, 0};
    int rc = walk(&w, refs, nrefs, 0, st);
    free(w.t);
    return rc;
}

/* ---- schema types ---- */

typedef struct avro_refs {
    floe_avro_text_t *t; /* each referenced schema once, dependencies first */
    size_t n;
} avro_refs_t;

static int avro_take(void *arg, const reg_ref_t *ref, const reg_schema_t *sc, reg_status_t *st)
{
    (void)ref;
    avro_refs_t *ar = arg;
    floe_avro_text_t *t = realloc(ar->t, (ar->n + 1) * sizeof *t);
    if (!t) return reg_fail(st, 500, 50001, "out of memory");
    ar->t = t;
    ar->t[ar->n++] = (floe_avro_text_t){sc->text, strlen(sc->text)};
    return 0;
}

/* text with the named types of its references known; r->mu held. */
static void *avro_load(floe_registry_t *r, const char *text, size_t len, const reg_ref_t *refs,
                       size_t nrefs, reg_status_t *st)
{
    avro_refs_t ar = {0};
    floe_avro_schema_t *s = NULL;
    floe_err_t err = {0};
    if (!reg_refs_walk(r, &reg_type_avro, &ar, refs, nrefs, st) &&
        floe_avro_schema_parse_refs(text, len, ar.t, ar.n, &s, &err)) {
        s = NULL;
        reg_fail(st, err.code == FLOE_ENOMEM ? 500 : 422, err.code == FLOE_ENOMEM ? 50001 : 42201,
                 "Invalid schema: %s", err.msg);
    }
    free(ar.t);
    return s;
}

static char *avro_canonical(const void *parsed, reg_status_t *st)
{
    floe_err_t err = {0};
    char *canon = floe_avro_schema_to_json_own(parsed, &err);
    if (!canon) reg_fail(st, 500, 50001, "Error while parsing the schema: %s", err.msg);
    return canon;
}

static bool avro_compatible(const void *reader, const void *writer, floe_buf_t *msgs)
{
    return floe_registry_avro_compatible(reader, writer, msgs);
}

static void avro_free(void *p)
{
    floe_avro_schema_free(p);
}

/* Avro defines a named type before its use: each referenced schema once,
 * after the ones it references. */
const reg_type_t reg_type_avro = {"AVRO", "Avro",    avro_load, avro_canonical, avro_compatible,
                                  NULL,   avro_free, NULL,      false,          avro_take};

static const reg_type_t *const types[] = {&reg_type_avro, &reg_type_protobuf, &reg_type_json};

const reg_type_t *reg_type_named(const char *name)
{
    if (!name || !name[0]) return &reg_type_avro;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (!strcmp(types[i]->name, name)) return types[i];
    return NULL;
}

int reg_cand_parse(floe_registry_t *r, const reg_type_t *t, const char *text, size_t len,
                   reg_ref_t *refs, size_t nrefs, reg_cand_t *c, reg_status_t *st)
{
    memset(c, 0, sizeof *c);
    c->s.type = t;
    c->s.refs = refs;
    c->s.nrefs = nrefs;
    for (size_t i = 0; i < nrefs; i++)
        if (!reg_ref_schema(r, &refs[i]))
            return reg_fail(st, 422, 42201,
                            "Invalid schema: reference %s (subject %s version %d) "
                            "is not a registered schema",
                            refs[i].name, refs[i].subject, (int)refs[i].version);
    return reg_parse(r, t, text, len, refs, nrefs, &c->s.text, &c->parsed, st);
}

int reg_parse(floe_registry_t *r, const reg_type_t *t, const char *text, size_t len,
              const reg_ref_t *refs, size_t nrefs, char **canon, void **parsed, reg_status_t *st)
{
    *canon = NULL;
    void *p = t->load(r, text, len, refs, nrefs, st);
    if (!p) return -1;
    if (!(*canon = t->canonical(p, st))) {
        t->free_parsed(p);
        return -1;
    }
    if (parsed) *parsed = p;
    else
        t->free_parsed(p);
    return 0;
}

/* One check of candidate against the stored version v per level. */
static bool compatible_with(floe_registry_t *r, const reg_version_t *v, const reg_cand_t *cand,
                            const char *level, floe_buf_t *msgs)
{
    const reg_schema_t *sc = reg_schema_by_id(r, v->id);
    if (sc && sc->type != cand->s.type) {
        floe_buf_printf(msgs,
                        "{errorType:'TYPE_MISMATCH', description:'version %d is of type %s, "
                        "not %s'}\n",
                        (int)v->version, sc->type->name, cand->s.type->name);
        return false;
    }
    reg_status_t st;
    void *old = sc ? sc->type->load(r, sc->text, strlen(sc->text), sc->refs, sc->nrefs, &st) : NULL;
    if (!old) {
        floe_buf_printf(msgs, "the stored schema of version %d cannot be read\n", (int)v->version);
        return false;
    }
    bool backward = !strncmp(level, "BACKWARD", 8) || !strncmp(level, "FULL", 4);
    bool forward = !strncmp(level, "FORWARD", 7) || !strncmp(level, "FULL", 4);
    bool ok = true;
    const reg_type_t *t = sc->type;
    if (backward && !t->compatible(cand->parsed, old, msgs)) ok = false;
    if (forward && !t->compatible(old, cand->parsed, msgs)) ok = false;
    if (!ok) floe_buf_printf(msgs, "{oldSchemaVersion: %d}\n", (int)v->version);
    t->free_parsed(old);
    return ok;
}

bool reg_compatible(floe_registry_t *r, const reg_subject_t *s, const reg_version_t *only,
                    const reg_cand_t *candidate, const char *level, floe_buf_t *msgs)
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
    if (floe_grow(&r->subs, &r->subs_cap, r->nsubs + 1, sizeof *r->subs)) return NULL;
    s = &r->subs[r->nsubs];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name))) return NULL;
    r->nsubs++;
    return s;
}

static int schema_add(floe_registry_t *r, int32_t id, const reg_type_t *type, const char *text,
                      const reg_ref_t *refs, size_t nrefs)
{
    if (id > r->max_id) r->max_id = id;
    if (reg_schema_by_id(r, id)) return 0;
    if (floe_grow(&r->schemas, &r->schemas_cap, r->nschemas + 1, sizeof *r->schemas)) return -1;
    char *t = strdup(text);
    bool ok;
    reg_ref_t *rc = refs_dup(refs, nrefs, &ok);
    if (!t || !ok) {
        free(t);
        return -1;
    }
    r->schemas[r->nschemas++] = (reg_schema_t){id, type, t, rc, nrefs};
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
    const reg_type_t *type = reg_type_named(json_string_value(jtype));
    if (!type) return 1;
    int32_t id = (int32_t)json_integer_value(jid);
    reg_ref_t *refs = NULL;
    size_t nrefs = 0;
    int rc = reg_refs_from_json(json_object_get(val, "references"), &refs, &nrefs);
    if (rc) return rc;
    char *canon = NULL;
    reg_status_t st;
    /* Avro is written back in its canonical form (kept as written when its
     * references do not resolve yet); other types were canonicalized when
     * registered (their references resolve through the state, which a
     * replay may not hold yet) */
    bool avro = type == &reg_type_avro;
    bool parsed = avro && !reg_parse(r, type, json_string_value(jsch), json_string_length(jsch),
                                     refs, nrefs, &canon, NULL, &st);
    if (avro && !parsed && !nrefs) {
        refs_free(refs, nrefs);
        return 1;
    }
    if (!parsed && !(canon = strdup(json_string_value(jsch)))) {
        refs_free(refs, nrefs);
        return -1;
    }
    rc = schema_add(r, id, type, canon, refs, nrefs);
    free(canon);
    refs_free(refs, nrefs);
    if (rc) return -1;
    reg_subject_t *s = subject_add(r, subject);
    if (!s) return -1;
    reg_version_t *v = reg_version(s, version);
    if (!v) {
        if (floe_grow(&s->v, &s->cap, s->nv + 1, sizeof *s->v)) return -1;
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

int reg_refs_from_json(json_t *a, reg_ref_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!a || json_is_null(a)) return 0;
    if (!json_is_array(a)) return 1;
    size_t k = json_array_size(a);
    if (!k) return 0;
    reg_ref_t *refs = calloc(k, sizeof *refs);
    if (!refs) return -1;
    for (size_t i = 0; i < k; i++) {
        json_t *e = json_array_get(a, i), *ver = json_object_get(e, "version");
        const char *name = json_string_value(json_object_get(e, "name")),
                   *subject = json_string_value(json_object_get(e, "subject"));
        if (!name || !subject || !json_is_integer(ver) || json_integer_value(ver) < -1 ||
            json_integer_value(ver) == 0 || json_integer_value(ver) > INT32_MAX) {
            refs_free(refs, k);
            return 1;
        }
        refs[i].version = (int32_t)json_integer_value(ver);
        if (!(refs[i].name = strdup(name)) || !(refs[i].subject = strdup(subject))) {
            refs_free(refs, k);
            return -1;
        }
    }
    *out = refs;
    *n = k;
    return 0;
}

int reg_refs_json(floe_buf_t *b, const reg_ref_t *refs, size_t n)
{
    if (floe_buf_append_u8(b, '[')) return -1;
    for (size_t i = 0; i < n; i++)
        if ((i && floe_buf_append_u8(b, ',')) || floe_buf_append_str(b, "{\"name\":") ||
            floe_json_cstr(b, refs[i].name) || floe_buf_append_str(b, ",\"subject\":") ||
            floe_json_cstr(b, refs[i].subject) ||
            floe_buf_printf(b, ",\"version\":%d}", (int)refs[i].version))
            return -1;
    return floe_buf_append_u8(b, ']');
}

int reg_put_version(floe_registry_t *r, const char *subject, int32_t version,
                    const reg_schema_t *sc, bool deleted, reg_status_t *st)
{
    floe_buf_t k = FLOE_BUF_INIT, v = FLOE_BUF_INIT;
    bool fail =
        schema_key(&k, subject, version) || floe_buf_append_str(&v, "{\"subject\":") ||
        floe_json_cstr(&v, subject) ||
        floe_buf_printf(&v, ",\"version\":%d,\"id\":%d,\"schema\":", (int)version, (int)sc->id) ||
        floe_json_cstr(&v, sc->text);
    if (!fail && sc->type != &reg_type_avro)
        fail = floe_buf_printf(&v, ",\"schemaType\":\"%s\"", sc->type->name);
    if (!fail && sc->nrefs)
        fail =
            floe_buf_append_str(&v, ",\"references\":") || reg_refs_json(&v, sc->refs, sc->nrefs);
    if (fail || floe_buf_printf(&v, ",\"deleted\":%s}", deleted ? "true" : "false")) {
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

void *reg_schema_load(floe_registry_t *r, int32_t id, const reg_type_t *t, floe_err_t *err)
{
    void *out = NULL;
    pthread_mutex_lock(&r->mu);
    const reg_schema_t *sc = reg_schema_by_id(r, id);
    reg_status_t st = {0};
    if (!sc) floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry", (int)id);
    else if (sc->type != t)
        floe_err_set(err, FLOE_EINVAL, "schema id %d is not %s %s schema", (int)id,
                     strchr("AEIOU", t->what[0]) ? "an" : "a", t->what);
    else if (!(out = t->load(r, sc->text, strlen(sc->text), sc->refs, sc->nrefs, &st)))
        floe_err_set(err, st.http == 500 ? FLOE_ENOMEM : FLOE_EINVAL, "schema id %d: %s", (int)id,
                     st.msg);
    pthread_mutex_unlock(&r->mu);
    return out;
}

int floe_registry_avro_schema(floe_registry_t *r, int32_t id, floe_avro_schema_t **out,
                              floe_err_t *err)
{
    *out = reg_schema_load(r, id, &reg_type_avro, err);
    return *out ? 0 : -1;
}

int floe_registry_subject_id(floe_registry_t *r, const char *subject, int32_t version, int32_t *id,
                             floe_err_t *err)
{
    pthread_mutex_lock(&r->mu);
    reg_subject_t *s = reg_subject(r, subject);
    const reg_version_t *v = !s ? NULL : version ? reg_version(s, version) : reg_latest(s, false);
    if (v && v->deleted) v = NULL;
    if (v) *id = v->id;
    pthread_mutex_unlock(&r->mu);
    if (v) return 0;
    if (version)
        return floe_err_set(err, FLOE_ENOENT, "subject %s has no version %d", subject,
                            (int)version);
    return floe_err_set(err, FLOE_ENOENT, "subject %s has no live version", subject);
}

bool reg_schema_live(floe_registry_t *r, int32_t id)
{
    for (size_t i = 0; i < r->nsubs; i++)
        for (size_t k = 0; k < r->subs[i].nv; k++)
            if (r->subs[i].v[k].id == id) return true;
    return false;
}

bool reg_refers_to(floe_registry_t *r, const reg_schema_t *sc, const reg_subject_t *s,
                   const reg_version_t *v)
{
    if (!reg_schema_live(r, sc->id)) return false;
    for (size_t k = 0; k < sc->nrefs; k++) {
        const reg_ref_t *ref = &sc->refs[k];
        if (strcmp(ref->subject, s->name)) continue;
        if (!v || ref->version == v->version) return true;
        if (ref->version == -1 && reg_latest(s, false) == v) return true;
    }
    return false;
}
