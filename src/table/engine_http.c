/* The table engine's HTTP routes (engine_http.h): the engine comes as the
 * route's argument. */
#include "table/engine_http.h"

#include <jansson.h>
#include <string.h>

#include "util/json.h"

#define PREFIX "/admin/tables"

/* {"error": msg} with status. */
static int fail(floe_http_resp_t *rs, int status, const char *msg)
{
    floe_buf_reset(&rs->body);
    rs->status = status;
    return floe_buf_append_str(&rs->body, "{\"error\":") || floe_json_cstr(&rs->body, msg) ||
                   floe_buf_append_u8(&rs->body, '}')
               ? -1
               : 0;
}

static int fail_err(floe_http_resp_t *rs, const floe_err_t *err)
{
    int status = err->code == FLOE_ENOENT    ? 404
                 : err->code == FLOE_EINVAL  ? 409
                 : err->code == FLOE_ECLOSED ? 503
                                             : 500;
    return fail(rs, status, err->msg);
}

/* The operator's maintenance request from the body: {"older_than_ms": N,
 * "keep": N, "dry_run": bool}, every member optional.  -1 with *why. */
static int parse_req(const floe_http_req_t *rq, floe_tmaint_req_t *req, const char **why)
{
    req->older_than_ms = -1;
    if (!rq->body_len) return 0;
    json_error_t je;
    json_t *j = json_loadb((const char *)rq->body, rq->body_len, 0, &je);
    int rc = 0;
    json_t *a = j ? json_object_get(j, "older_than_ms") : NULL,
           *k = j ? json_object_get(j, "keep") : NULL,
           *d = j ? json_object_get(j, "dry_run") : NULL;
    if (!json_is_object(j)) {
        *why = "the body is not a JSON object";
        rc = -1;
    } else if ((a && (!json_is_integer(a) || json_integer_value(a) < 0)) ||
               (k && (!json_is_integer(k) || json_integer_value(k) < 1 ||
                      json_integer_value(k) > 1000000)) ||
               (d && !json_is_boolean(d))) {
        *why = "older_than_ms: a non-negative integer; keep: 1..1000000; dry_run: a boolean";
        rc = -1;
    } else {
        if (a) req->older_than_ms = json_integer_value(a);
        if (k) req->keep = (int)json_integer_value(k);
        if (d) req->dry_run = json_is_true(d);
    }
    json_decref(j);
    return rc;
}

/* The actions that take no body and answer the engine's JSON. */
static const struct {
    const char *verb;
    int (*fn)(floe_engine_t *e, const char *table, floe_buf_t *out, floe_err_t *err);
} actions[] = {
    {"redrive", floe_engine_redrive},
    {"pause", floe_engine_pause},
    {"resume", floe_engine_resume},
};

static const struct {
    const char *verb;
    floe_tmaint_op_t op;
} ops[] = {{"compact", FLOE_TMAINT_COMPACT},
           {"expire", FLOE_TMAINT_EXPIRE},
           {"remove-orphans", FLOE_TMAINT_ORPHANS}};

/* POST /admin/tables/NAME/{redrive,pause,resume,compact,expire,remove-orphans}, GET
 * /admin/tables/NAME/maintenance */
static int h_table(floe_engine_t *e, const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    const char *name = rq->path + strlen(PREFIX "/");
    const char *slash = strrchr(name, '/');
    char buf[512];
    if (!slash || slash == name || (size_t)(slash - name) >= sizeof buf)
        return fail(rs, 404,
                    "not found: POST " PREFIX
                    "/NAME/redrive|pause|resume|compact|expire|remove-orphans, "
                    "GET " PREFIX "/NAME/maintenance");
    memcpy(buf, name, (size_t)(slash - name));
    buf[slash - name] = '\0';
    const char *verb = slash + 1;
    bool get = !strcmp(verb, "maintenance");
    int found = get;
    for (size_t i = 0; !found && i < sizeof actions / sizeof actions[0]; i++)
        found = !strcmp(verb, actions[i].verb);
    for (size_t i = 0; !found && i < sizeof ops / sizeof ops[0]; i++)
        found = !strcmp(verb, ops[i].verb);
    if (!found)
        return fail(rs, 404,
                    "not found: POST " PREFIX
                    "/NAME/redrive|pause|resume|compact|expire|remove-orphans, "
                    "GET " PREFIX "/NAME/maintenance");
    if (strcmp(rq->method, get ? "GET" : "POST"))
        return fail(rs, 405, get ? "use GET" : "use POST");
    floe_err_t err;
    if (get)
        return floe_engine_maintenance_json(e, buf, &rs->body, &err) == 0 ? 0 : fail_err(rs, &err);
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(verb, actions[i].verb))
            return actions[i].fn(e, buf, &rs->body, &err) == 0 ? 0 : fail_err(rs, &err);
    floe_tmaint_req_t req = {0};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(verb, ops[i].verb)) req.op = ops[i].op;
    const char *why;
    if (parse_req(rq, &req, &why) < 0) return fail(rs, 400, why);
    return floe_engine_maintain(e, buf, &req, &rs->body, &err) == 0 ? 0 : fail_err(rs, &err);
}

static int h_tables(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    floe_engine_t *e = arg;
    rs->content_type = "application/json";
    if (!strncmp(rq->path, PREFIX "/", strlen(PREFIX "/"))) return h_table(e, rq, rs);
    return floe_engine_status_json(e, &rs->body);
}

static int metrics(void *arg, floe_buf_t *out)
{
    return floe_engine_metrics(arg, out);
}

int floe_engine_http(floe_engine_t *e, floe_http_t *h, floe_err_t *err)
{
    if (floe_http_route(h, PREFIX, h_tables, e) || floe_http_metrics_add(h, metrics, e))
        return floe_err_oom(err);
    return 0;
}
