/* The table engine's HTTP routes (engine_http.h): the engine comes as the
 * route's argument. */
#include "table/engine_http.h"

#include <string.h>

#include "util/json.h"

#define PREFIX "/admin/tables"

/* What POST /admin/tables/NAME/ACTION runs. */
static const struct action {
    const char *name;
    int (*fn)(floe_engine_t *e, const char *table, floe_buf_t *out, floe_err_t *err);
} actions[] = {
    {"redrive", floe_engine_redrive},
    {"pause", floe_engine_pause},
    {"resume", floe_engine_resume},
};

/* POST /admin/tables/NAME/ACTION */
static int h_action(floe_engine_t *e, const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    const char *name = rq->path + strlen(PREFIX "/");
    const char *end = strrchr(name, '/');
    const struct action *a = NULL;
    for (size_t i = 0; end && i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(end + 1, actions[i].name)) a = &actions[i];
    char buf[512];
    if (!a || end == name || (size_t)(end - name) >= sizeof buf) {
        rs->status = 404;
        return floe_buf_append_str(&rs->body, "{\"error\":\"not found: POST " PREFIX
                                              "/NAME/redrive, /NAME/pause or /NAME/resume\"}");
    }
    if (strcmp(rq->method, "POST")) {
        rs->status = 405;
        return floe_buf_append_str(&rs->body, "{\"error\":\"use POST\"}");
    }
    memcpy(buf, name, (size_t)(end - name));
    buf[end - name] = '\0';
    floe_err_t err;
    if (a->fn(e, buf, &rs->body, &err) == 0) return 0;
    floe_buf_reset(&rs->body);
    rs->status = err.code == FLOE_ENOENT ? 404 : err.code == FLOE_EINVAL ? 409 : 500;
    return floe_buf_append_str(&rs->body, "{\"error\":") || floe_json_cstr(&rs->body, err.msg) ||
                   floe_buf_append_u8(&rs->body, '}')
               ? -1
               : 0;
}

static int h_tables(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    floe_engine_t *e = arg;
    rs->content_type = "application/json";
    if (!strncmp(rq->path, PREFIX "/", strlen(PREFIX "/"))) return h_action(e, rq, rs);
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
