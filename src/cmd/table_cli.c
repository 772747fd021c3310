/* `floe table list|describe|scan|history`: the Iceberg tables under a data
 * dir, read straight from the filesystem catalog (DATA/warehouse, or the
 * `warehouse` of --config FILE, e.g. on S3), or from the REST catalog its
 * catalog.* keys name, so they work whether or not floe serve runs.  When the server's HTTP listener
 * answers, describe adds the live engine state and per-partition lag from
 * GET /admin/tables.  `floe table compact|expire|remove-orphans` run on the
 * server's maintenance thread when it answers (progress polled from GET
 * /admin/tables/NAME/maintenance), else on the data dir directly; either
 * way progress goes to stderr and the outcome to stdout.  `floe table
 * redrive|pause|resume` ask the running server (POST
 * /admin/tables/NAME/ACTION). */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/store.h"
#include "http/client.h"
#include "iceberg/catalog.h"
#include "iceberg/read.h"
#include "iceberg/scan.h"
#include "table/maint.h"
#include "util/clock.h"
#include "util/parse.h"

typedef struct table_opts {
    const char *sub, *name, *data_dir, *http, *config;
    int64_t limit;      /* -1: all */
    int64_t older_than; /* -1: the table's setting */
    int64_t keep;       /* 0: the table property */
    bool dry_run;
    floe_store_cfg_t store;   /* warehouse, s3.* and catalog.* of --config */
    char conf_data_dir[4096]; /* data.dir of --config */
} table_opts_t;

typedef struct ctx {
    floe_fileio_t *io;
    floe_ice_catalog_t *cat;
} ctx_t;

/* The catalog of --config (filesystem by default, or catalog.type =
 * rest), for need (FLOE_ICE_REST_NEED_*). */
static int open_catalog(ctx_t *c, const table_opts_t *o, unsigned need, floe_err_t *err)
{
    char wh[4200];
    if (o->store.catalog != FLOE_STORE_REST) {
        if (floe_store_open(&o->store, o->data_dir, &c->io, wh, sizeof wh, err) < 0) return -1;
        struct stat st;
        if (!strstr(wh, "://") && (stat(wh, &st) || !S_ISDIR(st.st_mode)))
            return floe_err_set(err, FLOE_ENOENT,
                                "no tables under '%s': %s is %s (wrong --data-dir?)", o->data_dir,
                                wh, errno == ENOENT ? "missing" : "not a directory");
        floe_fileio_free(c->io);
        c->io = NULL;
    }
    return floe_store_open_catalog(&o->store, o->data_dir, need, &c->io, &c->cat, wh, sizeof wh,
                                   err);
}

/* A server config file's line: where tables live (warehouse, s3.*) and
 * data.dir are taken; the server's other keys are not the CLI's. */
static int conf_line(void *arg, const char *k, const char *v, floe_err_t *err)
{
    table_opts_t *o = arg;
    int st = floe_store_config_set(&o->store, k, v, err);
    if (st <= 0) return st;
    if (!strcmp(k, "data.dir")) {
        if (strlen(v) >= sizeof o->conf_data_dir)
            return floe_err_set(err, FLOE_EINVAL, "data.dir: too long");
        snprintf(o->conf_data_dir, sizeof o->conf_data_dir, "%s", v);
    }
    return 0;
}

static void close_catalog(ctx_t *c)
{
    if (c->cat) floe_ice_catalog_free(c->cat);
    if (c->io) floe_fileio_free(c->io);
}

/* "NS.T", or "T" in namespace default. */
static int load(ctx_t *c, const char *name, floe_ice_table_t **t, floe_err_t *err)
{
    char ns[256], tn[256];
    const char *dot = strchr(name, '.');
    if (dot) {
        if ((size_t)(dot - name) >= sizeof ns || strlen(dot + 1) >= sizeof tn || dot == name ||
            !dot[1])
            return floe_err_set(err, FLOE_EINVAL,
                                "bad table name '%s' (want NAMESPACE.TABLE or TABLE)", name);
        memcpy(ns, name, (size_t)(dot - name));
        ns[dot - name] = 0;
        snprintf(tn, sizeof tn, "%s", dot + 1);
    } else {
        if (strlen(name) >= sizeof tn) return floe_err_set(err, FLOE_EINVAL, "table name too long");
        snprintf(ns, sizeof ns, "default");
        snprintf(tn, sizeof tn, "%s", name);
    }
    if (floe_ice_catalog_load_table(c->cat, ns, tn, t, err)) {
        if (err->code == FLOE_ENOENT)
            return floe_err_set(err, FLOE_ENOENT,
                                "no table %s.%s in the catalog (see 'floe table list')", ns, tn);
        floe_err_wrap(err, "table %s.%s", ns, tn);
        return -1;
    }
    return 0;
}

static int64_t summary_i64(const floe_ice_snapshot_t *s, const char *key)
{
    const char *v = s ? floe_ice_props_get(&s->summary, key) : NULL;
    int64_t n;
    if (!v || floe_parse_int64(v, 0, INT64_MAX, &n, NULL)) return -1;
    return n;
}

/* Live data files of the current snapshot: count, records, sizes. */
typedef struct file_stats {
    size_t files, delete_files;
    int64_t records, total, min, median, max;
} file_stats_t;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int file_stats(ctx_t *c, const floe_ice_metadata_t *md, file_stats_t *fs, floe_err_t *err)
{
    memset(fs, 0, sizeof *fs);
    if (md->current_snapshot_id < 0) return 0;
    floe_ice_scan_t *sc;
    if (floe_ice_scan_plan(c->io, md, -1, NULL, 0, &sc, err)) return -1;
    size_t n = floe_ice_scan_ntasks(sc);
    int64_t *sizes = calloc(n + 1, sizeof *sizes);
    if (!sizes) {
        floe_ice_scan_free(sc);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < n; i++) {
        const floe_ice_data_file_t *f = floe_ice_scan_task(sc, i)->file;
        sizes[i] = f->file_size;
        fs->total += f->file_size;
        fs->records += f->record_count;
    }
    fs->files = n;
    fs->delete_files = floe_ice_scan_ndelete_files(sc);
    if (n) {
        qsort(sizes, n, sizeof *sizes, cmp_i64);
        fs->min = sizes[0];
        fs->max = sizes[n - 1];
        fs->median = n % 2 ? sizes[n / 2] : (sizes[n / 2 - 1] + sizes[n / 2]) / 2;
    }
    free(sizes);
    floe_ice_scan_free(sc);
    return 0;
}

static const char *human(int64_t b, char *buf, size_t size)
{
    if (b < 1024) snprintf(buf, size, "%lld B", (long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, size, "%.1f KiB", b / 1024.0);
    else if (b < 1024LL * 1024 * 1024)
        snprintf(buf, size, "%.1f MiB", b / (1024.0 * 1024));
    else
        snprintf(buf, size, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    return buf;
}

/* ---- list ---- */

static int do_list(ctx_t *c, floe_err_t *err)
{
    char **nss;
    size_t nns;
    if (floe_ice_catalog_list_namespaces(c->cat, &nss, &nns, err)) return -1;
    int rc = 0;
    bool header = false;
    for (size_t i = 0; i < nns && !rc; i++) {
        char **ts;
        size_t nt;
        if (floe_ice_catalog_list_tables(c->cat, nss[i], &ts, &nt, err)) {
            rc = -1;
            break;
        }
        for (size_t k = 0; k < nt && !rc; k++) {
            floe_ice_table_t *t;
            if (floe_ice_catalog_load_table(c->cat, nss[i], ts[k], &t, err)) {
                floe_err_wrap(err, "table %s.%s", nss[i], ts[k]);
                rc = -1;
                break;
            }
            const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
            const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
            int64_t recs = summary_i64(s, "total-records"),
                    files = summary_i64(s, "total-data-files");
            if (s && (recs < 0 || files < 0)) {
                file_stats_t st;
                if (file_stats(c, md, &st, err)) {
                    floe_err_wrap(err, "table %s.%s", nss[i], ts[k]);
                    rc = -1;
                } else {
                    recs = st.records;
                    files = (int64_t)st.files;
                }
            }
            if (!rc) {
                if (!header)
                    printf("%-40s %20s %12s %8s\n", "TABLE", "SNAPSHOT", "RECORDS", "FILES");
                header = true;
                char full[600], sid[32];
                snprintf(full, sizeof full, "%s.%s", nss[i], ts[k]);
                if (s) snprintf(sid, sizeof sid, "%lld", (long long)s->snapshot_id);
                else
                    snprintf(sid, sizeof sid, "-");
                printf("%-40s %20s %12lld %8lld\n", full, sid, (long long)(s ? recs : 0),
                       (long long)(s ? files : 0));
            }
            floe_ice_table_free(t);
        }
        floe_fileio_names_free(ts, nt);
    }
    floe_fileio_names_free(nss, nns);
    if (!rc && !header) printf("no tables\n");
    return rc;
}

/* ---- describe ---- */

static void print_type_line(const floe_ice_field_t *f, int depth)
{
    char tb[64];
    const char *tn;
    switch (f->type->kind) {
    case FLOE_ICE_STRUCT: tn = "struct"; break;
    case FLOE_ICE_LIST: tn = "list"; break;
    case FLOE_ICE_MAP: tn = "map"; break;
    default: tn = floe_ice_type_name(f->type, tb, sizeof tb);
    }
    char name[300];
    snprintf(name, sizeof name, "%*s%s", 2 * depth, "", f->name);
    printf("  %5d  %-36s %-16s %s\n", (int)f->id, name, tn, f->required ? "required" : "optional");
    for (size_t i = 0; i < f->type->nfields; i++) print_type_line(&f->type->fields[i], depth + 1);
}

/* Live state from the server's /admin/tables, or NULL with why in *why. */
static json_t *fetch_status(const char *http, char *why, size_t whysize)
{
    char url[600];
    snprintf(url, sizeof url, "http://%s/admin/tables", http);
    floe_http_call_t c = {.url = url, .timeout_ms = 5000};
    floe_buf_t body = FLOE_BUF_INIT;
    long status;
    floe_err_t err;
    json_t *j = NULL;
    if (floe_http_call(&c, &status, &body, &err)) {
        snprintf(why, whysize, "%s", err.msg);
    } else if (status != 200) {
        snprintf(why, whysize, "GET %s answered %ld", url, status);
    } else {
        json_error_t je;
        j = json_loadb((const char *)body.data, body.len, 0, &je);
        if (!j || !json_is_array(json_object_get(j, "tables"))) {
            snprintf(why, whysize, "GET %s: not the floe admin JSON", url);
            json_decref(j);
            j = NULL;
        }
    }
    floe_buf_free(&body);
    return j;
}

static long long jint(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static int do_describe(ctx_t *c, const table_opts_t *o, floe_err_t *err)
{
    floe_ice_table_t *t;
    if (load(c, o->name, &t, err)) return -1;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    file_stats_t fst;
    if (file_stats(c, md, &fst, err)) {
        floe_ice_table_free(t);
        return -1;
    }
    char full[600];
    snprintf(full, sizeof full, "%s.%s", floe_ice_table_namespace(t), floe_ice_table_name(t));
    printf("table       %s\n", full);
    printf("location    %s\n", md->location ? md->location : "-");
    printf("metadata    %s (format v%d, uuid %s)\n", floe_ice_table_metadata_location(t),
           md->format_version, md->table_uuid);
    const char *topic = floe_ice_props_get(&md->properties, "floe.topic");
    if (topic) printf("topic       %s\n", topic);

    const floe_ice_schema_t *sc = floe_ice_metadata_current_schema(md);
    printf("\nschema %d (%zu schema%s in the history):\n", sc ? (int)sc->schema_id : -1,
           md->nschemas, md->nschemas == 1 ? "" : "s");
    printf("  %5s  %-36s %-16s %s\n", "ID", "NAME", "TYPE", "NULLABILITY");
    for (size_t i = 0; sc && i < sc->root->nfields; i++) print_type_line(&sc->root->fields[i], 0);

    const floe_ice_spec_t *sp = floe_ice_metadata_default_spec(md);
    printf("\npartition spec %d: ", sp ? (int)sp->spec_id : -1);
    if (!sp || !sp->nfields) printf("unpartitioned\n");
    else {
        printf("\n");
        for (size_t i = 0; i < sp->nfields; i++) {
            char tb[64], src[300];
            const floe_ice_partition_field_t *pf = &sp->fields[i];
            if (!sc || !floe_ice_schema_field_name(sc, pf->source_id, src, sizeof src))
                snprintf(src, sizeof src, "field %d", (int)pf->source_id);
            printf("  %5d  %-36s %s(%s)\n", (int)pf->field_id, pf->name,
                   floe_ice_transform_name(pf->transform, tb, sizeof tb), src);
        }
    }

    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
    char tbuf[40];
    if (!s) {
        printf("\ncurrent snapshot: none (nothing committed yet)\n");
    } else {
        floe_time_iso(tbuf, sizeof tbuf, s->timestamp_ms, 3, true);
        printf("\ncurrent snapshot %lld at %s (%s, %zu snapshot%s in the history)\n",
               (long long)s->snapshot_id, tbuf, s->operation ? s->operation : "?", md->nsnapshots,
               md->nsnapshots == 1 ? "" : "s");
        for (size_t i = 0; i < s->summary.n; i++)
            printf("  %-32s %s\n", s->summary.kv[i].key, s->summary.kv[i].value);
    }
    char a[32], b[32], m[32], x[32];
    printf("\ndata files  %zu, %lld records, %s in total", fst.files, (long long)fst.records,
           human(fst.total, a, sizeof a));
    if (fst.files)
        printf("; size min %s, median %s, max %s", human(fst.min, b, sizeof b),
               human(fst.median, m, sizeof m), human(fst.max, x, sizeof x));
    printf("\n");
    if (fst.delete_files) printf("delete files %zu\n", fst.delete_files);

    /* committed offsets: the snapshot summary is the truth (invariant 2) */
    json_t *offs = NULL;
    const char *fo = s ? floe_ice_props_get(&s->summary, "floe.offsets") : NULL;
    if (fo) offs = json_loads(fo, 0, NULL);
    char why[1024] = "";
    json_t *live = NULL, *entry = NULL;
    if (o->http) live = fetch_status(o->http, why, sizeof why);
    for (size_t i = 0; live && i < json_array_size(json_object_get(live, "tables")); i++) {
        json_t *e = json_array_get(json_object_get(live, "tables"), i);
        if (json_is_string(json_object_get(e, "table")) &&
            !strcmp(json_string_value(json_object_get(e, "table")), full))
            entry = e;
    }
    printf("\n");
    if (entry) {
        const char *st = json_string_value(json_object_get(entry, "state"));
        const char *rs = json_string_value(json_object_get(entry, "reason"));
        printf("engine      %s at http://%s: %s%s%s, %lld commits, %lld failed\n", "live", o->http,
               st ? st : "?", rs && *rs ? ": " : "", rs && *rs ? rs : "", jint(entry, "commits"),
               jint(entry, "commit_failures"));
        printf("%-10s %14s %14s %14s %10s %10s\n", "PARTITION", "COMMITTED", "READ", "LOG_END",
               "LAG", "DLQ");
        json_t *ps = json_object_get(entry, "partitions");
        for (size_t i = 0; i < json_array_size(ps); i++) {
            json_t *p = json_array_get(ps, i);
            printf("%-10lld %14lld %14lld %14lld %10lld %10lld\n", jint(p, "partition"),
                   jint(p, "committed"), jint(p, "read"), jint(p, "log_end"), jint(p, "lag"),
                   jint(p, "dlq"));
        }
    } else {
        if (!o->http) printf("engine      not asked (--no-http): lag unknown\n");
        else if (live)
            printf("engine      http://%s does not run a table topic for %s: lag unknown\n",
                   o->http, full);
        else
            printf("engine      not reachable at http://%s (%s): lag unknown\n", o->http, why);
        if (json_is_object(offs)) {
            printf("%-10s %14s\n", "PARTITION", "COMMITTED");
            const char *k;
            json_t *v;
            json_object_foreach(offs, k, v)
                printf("%-10s %14lld\n", k, (long long)json_integer_value(v));
        }
    }
    json_decref(live);
    json_decref(offs);
    floe_ice_table_free(t);
    return 0;
}

/* ---- history ---- */

static int cmp_snap(const void *x, const void *y)
{
    const floe_ice_snapshot_t *a = *(const floe_ice_snapshot_t *const *)x,
                              *b = *(const floe_ice_snapshot_t *const *)y;
    if (a->sequence_number != b->sequence_number)
        return a->sequence_number < b->sequence_number ? -1 : 1;
    return a->timestamp_ms < b->timestamp_ms ? -1 : a->timestamp_ms > b->timestamp_ms;
}

static int do_history(ctx_t *c, const table_opts_t *o, floe_err_t *err)
{
    floe_ice_table_t *t;
    if (load(c, o->name, &t, err)) return -1;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t **ss = calloc(md->nsnapshots + 1, sizeof *ss);
    if (!ss) {
        floe_ice_table_free(t);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < md->nsnapshots; i++) ss[i] = md->snapshots[i];
    qsort(ss, md->nsnapshots, sizeof *ss, cmp_snap);
    printf("  %-20s %-20s %-24s %-10s %12s %8s  %s\n", "SNAPSHOT", "PARENT", "TIME", "OPERATION",
           "ADDED_RECORDS", "FILES", "FLOE.OFFSETS");
    for (size_t i = 0; i < md->nsnapshots; i++) {
        const floe_ice_snapshot_t *s = ss[i];
        char tb[40], par[32];
        if (s->parent_id >= 0) snprintf(par, sizeof par, "%lld", (long long)s->parent_id);
        else
            snprintf(par, sizeof par, "-");
        floe_time_iso(tb, sizeof tb, s->timestamp_ms, 3, true);
        const char *fo = floe_ice_props_get(&s->summary, "floe.offsets");
        const char *ar = floe_ice_props_get(&s->summary, "added-records");
        const char *af = floe_ice_props_get(&s->summary, "added-data-files");
        printf("%c %-20lld %-20s %-24s %-10s %12s %8s  %s\n",
               s->snapshot_id == md->current_snapshot_id ? '*' : ' ', (long long)s->snapshot_id,
               par, tb, s->operation ? s->operation : "?", ar ? ar : "0", af ? af : "0",
               fo ? fo : "-");
    }
    if (!md->nsnapshots) printf("(no snapshots: nothing committed yet)\n");
    free(ss);
    floe_ice_table_free(t);
    return 0;
}

/* ---- requests to the server: redrive, pause, resume ---- */

/* POST /admin/tables/NAME/ACTION to the server and take its JSON answer
 * (*out, caller frees with json_decref): 0, or -1 with *err saying why
 * (the server's own "error" when it refused).  Re-drives of large
 * dead-letter tables take a while: no short timeout. */
static int post_action(const table_opts_t *o, const char *action, json_t **out, floe_err_t *err)
{
    if (!o->http)
        return floe_err_set(err, FLOE_EINVAL, "%s needs the server (--http HOST:PORT)", action);
    char url[800];
    snprintf(url, sizeof url, "http://%s/admin/tables/%s/%s", o->http, o->name, action);
    floe_http_call_t c = {.method = "POST", .url = url, .timeout_ms = 3600L * 1000};
    floe_buf_t body = FLOE_BUF_INIT;
    long status;
    floe_err_t e;
    if (floe_http_call(&c, &status, &body, &e)) {
        floe_buf_free(&body);
        return floe_err_set(err, e.code, "no answer from http://%s: %s", o->http, e.msg);
    }
    const char *text = floe_buf_cstr(&body);
    json_error_t je;
    json_t *j = json_loadb(text, body.len, 0, &je);
    int rc = 0;
    if (!j || !json_is_object(j)) {
        rc = floe_err_set(err, FLOE_EIO, "POST %s answered %ld: %.200s", url, status, text);
    } else if (status != 200) {
        const char *msg = json_string_value(json_object_get(j, "error"));
        rc = floe_err_set(err, status == 404 ? FLOE_ENOENT : FLOE_EIO, "%s", msg ? msg : text);
    }
    floe_buf_free(&body);
    if (rc) {
        json_decref(j);
        return -1;
    }
    *out = j;
    return 0;
}

static int do_redrive(const table_opts_t *o, floe_err_t *err)
{
    json_t *j;
    if (post_action(o, "redrive", &j, err)) return -1;
    printf("re-drive %s of %s: %lld of %lld dead-letter rows moved into the table, %lld still "
           "invalid, %lld undecodable batches kept; %lld dead-letter files rewritten",
           json_string_value(json_object_get(j, "redrive_id")),
           json_string_value(json_object_get(j, "table")), jint(j, "moved"), jint(j, "examined"),
           jint(j, "still_invalid"), jint(j, "undecodable"), jint(j, "files_rewritten"));
    if (jint(j, "finished_earlier") > 0)
        printf("; %lld rows of an interrupted re-drive taken out first",
               jint(j, "finished_earlier"));
    printf("\n");
    json_decref(j);
    return 0;
}

/* pause or resume: the table's state afterwards on stdout; a resume that
 * leaves the table paused (its cause persists) fails with the reason. */
static int do_pause_resume(const table_opts_t *o, floe_err_t *err)
{
    json_t *j;
    if (post_action(o, o->sub, &j, err)) return -1;
    const char *table = json_string_value(json_object_get(j, "table"));
    const char *state = json_string_value(json_object_get(j, "state"));
    const char *reason = json_string_value(json_object_get(j, "reason"));
    int rc = 0;
    if (!table || !state) {
        rc = floe_err_set(err, FLOE_EIO, "the server's answer has no table state");
    } else if (!strcmp(o->sub, "resume") && !strcmp(state, "paused")) {
        rc = floe_err_set(err, FLOE_EINVAL, "table %s paused again: %s", table,
                          reason ? reason : "?");
    } else {
        printf("table %s: %s%s%s\n", table, state, reason && *reason ? ": " : "",
               reason ? reason : "");
    }
    json_decref(j);
    return rc;
}

/* ---- compact, expire, remove-orphans ---- */

/* Progress on stderr; in front of the first line, the note ctx (when
 * set: then cleared). */
static void progress_line(void *ctx, const char *line)
{
    const char **note = ctx;
    if (note && *note) {
        fprintf(stderr, "%s\n", *note);
        *note = NULL;
    }
    fprintf(stderr, "%s\n", line);
}

/* Whether a floe server answers at http (GET /health). */
static bool server_answers(const char *http)
{
    char url[600];
    snprintf(url, sizeof url, "http://%s/health", http);
    floe_http_call_t c = {.url = url, .timeout_ms = 3000};
    floe_buf_t body = FLOE_BUF_INIT;
    long status = 0;
    floe_err_t err;
    int rc = floe_http_call(&c, &status, &body, &err);
    floe_buf_free(&body);
    return rc == 0 && status == 200;
}

typedef struct poller {
    const char *http, *name;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    char last[512]; /* the last line printed */
} poller_t;

/* While the POST waits: the operation's progress, as the server tells it
 * (GET .../maintenance), printed when it changes. */
static void *poll_progress(void *arg)
{
    poller_t *p = arg;
    char url[800];
    snprintf(url, sizeof url, "http://%s/admin/tables/%s/maintenance", p->http, p->name);
    pthread_mutex_lock(&p->mu);
    while (!p->done) {
        struct timespec ts = floe_deadline_ms(500);
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        if (p->done) break;
        pthread_mutex_unlock(&p->mu);
        floe_http_call_t c = {.url = url, .timeout_ms = 2000};
        floe_buf_t body = FLOE_BUF_INIT;
        long status = 0;
        floe_err_t err;
        if (floe_http_call(&c, &status, &body, &err) == 0 && status == 200) {
            json_t *j = json_loadb((const char *)body.data, body.len, 0, NULL);
            const char *pr =
                json_string_value(json_object_get(json_object_get(j, "maintenance"), "progress"));
            if (pr && *pr && strcmp(pr, p->last)) {
                fprintf(stderr, "%s\n", pr);
                snprintf(p->last, sizeof p->last, "%s", pr);
            }
            json_decref(j);
        }
        floe_buf_free(&body);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The request on the server: POST with the options as JSON, progress
 * polled meanwhile.  The outcome JSON is appended to out. */
static int maint_remote(const table_opts_t *o, const char *verb, floe_buf_t *out, floe_err_t *err)
{
    char url[800], body[200];
    snprintf(url, sizeof url, "http://%s/admin/tables/%s/%s", o->http, o->name, verb);
    int n = snprintf(body, sizeof body, "{\"dry_run\":%s", o->dry_run ? "true" : "false");
    if (o->older_than >= 0)
        n += snprintf(body + n, sizeof body - (size_t)n, ",\"older_than_ms\":%lld",
                      (long long)o->older_than);
    if (o->keep > 0)
        n += snprintf(body + n, sizeof body - (size_t)n, ",\"keep\":%lld", (long long)o->keep);
    snprintf(body + n, sizeof body - (size_t)n, "}");
    fprintf(stderr, "%s of %s on the server at http://%s\n", verb, o->name, o->http);
    poller_t p = {.http = o->http, .name = o->name};
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t th;
    bool polling = pthread_create(&th, NULL, poll_progress, &p) == 0;
    const char *hdr[] = {"Content-Type: application/json", NULL};
    floe_http_call_t c = {.method = "POST",
                          .url = url,
                          .headers = hdr,
                          .body = body,
                          .body_len = strlen(body),
                          .timeout_ms = 24L * 3600 * 1000};
    long status;
    floe_err_t e;
    int rc = floe_http_call(&c, &status, out, &e);
    if (polling) {
        pthread_mutex_lock(&p.mu);
        p.done = true;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
        pthread_join(th, NULL);
    }
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    if (rc < 0) return floe_err_set(err, e.code, "no answer from http://%s: %s", o->http, e.msg);
    if (status == 200) {
        /* the lines the polls missed (a quick operation): after the last
         * one printed */
        json_t *j = json_loadb((const char *)out->data, out->len, 0, NULL);
        json_t *lines = json_object_get(j, "progress");
        size_t from = 0;
        for (size_t i = 0; p.last[0] && i < json_array_size(lines); i++) {
            const char *l = json_string_value(json_array_get(lines, i));
            if (l && !strcmp(l, p.last)) from = i + 1;
        }
        for (size_t i = from; i < json_array_size(lines); i++) {
            const char *l = json_string_value(json_array_get(lines, i));
            if (l) fprintf(stderr, "%s\n", l);
        }
        json_decref(j);
        return 0;
    }
    json_t *j = json_loadb((const char *)out->data, out->len, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "error"));
    rc = floe_err_set(err, status == 404 ? FLOE_ENOENT : FLOE_EIO, "%s",
                      msg                  ? msg
                      : floe_buf_cstr(out) ? (const char *)out->data
                                           : "?");
    json_decref(j);
    return rc;
}

/* The request on the data dir, in this process. */
static int maint_local(const table_opts_t *o, floe_tmaint_req_t *req, floe_buf_t *out,
                       floe_err_t *err)
{
    ctx_t c = {0};
    if (open_catalog(&c, o, FLOE_ICE_REST_NEED_COMMIT, err)) {
        close_catalog(&c);
        return -1;
    }
    char note[1200];
    snprintf(note, sizeof note, "no floe server answers%s%s; working on %s directly",
             o->http ? " at http://" : "", o->http ? o->http : "", o->data_dir);
    const char *pending = note; /* said with the first progress, or at the end */
    req->progress_ctx = (void *)&pending;
    floe_tmaint_t *m = floe_tmaint_new(c.cat, err);
    int rc = m ? floe_tmaint_run(m, o->name, req, out, err) : -1;
    if (rc == 0 && pending) fprintf(stderr, "%s\n", pending);
    if (rc < 0 && err->code == FLOE_ENOENT)
        floe_err_wrap(err, "no table '%s' under %s (see 'floe table list')", o->name, o->data_dir);
    floe_tmaint_free(m);
    close_catalog(&c);
    return rc;
}

static void print_outcome(const char *verb, json_t *j)
{
    char a[32], b[32];
    const char *t = json_string_value(json_object_get(j, "table"));
    if (!strcmp(verb, "compact")) {
        if (jint(j, "snapshot_id") < 0) {
            printf("%s: nothing to compact (%lld small files; a partition needs at least 2)\n", t,
                   jint(j, "small_files"));
            return;
        }
        printf("%s: %lld files (%s) compacted into %lld (%s) in %lld groups, %lld records, "
               "snapshot %lld, %.1f s\n",
               t, jint(j, "files_in"), human(jint(j, "bytes_in"), a, sizeof a),
               jint(j, "files_out"), human(jint(j, "bytes_out"), b, sizeof b), jint(j, "groups"),
               jint(j, "records"), jint(j, "snapshot_id"), jint(j, "duration_ms") / 1000.0);
    } else if (!strcmp(verb, "expire")) {
        if (json_is_true(json_object_get(j, "waited_for_redrive")))
            printf("%s: not expired: a re-drive of the table is unfinished (it needs its "
                   "snapshots; it finishes at the next re-drive or start)\n",
                   t);
        else
            printf("%s: %lld snapshots expired, %lld files deleted (%s)%s\n", t,
                   jint(j, "snapshots_removed"), jint(j, "files_deleted"),
                   human(jint(j, "bytes_deleted"), a, sizeof a),
                   jint(j, "delete_failures") > 0 ? "; some could not be deleted (orphans now)"
                                                  : "");
    } else {
        bool dry = json_is_true(json_object_get(j, "dry_run"));
        json_t *paths = json_object_get(j, "paths");
        for (size_t i = 0; dry && i < json_array_size(paths); i++)
            printf("%s\n", json_string_value(json_array_get(paths, i)));
        printf("%s: %lld orphan files%s (%s)%s; %lld unreferenced but younger than %.0f s, %lld "
               "in doubt kept; %lld files looked at\n",
               t, jint(j, "orphans"), dry ? " found (dry run: none deleted)" : " deleted",
               human(jint(j, dry ? "bytes_deleted" : "bytes_deleted"), a, sizeof a),
               jint(j, "failed") > 0 ? "; some could not be deleted" : "", jint(j, "too_young"),
               jint(j, "older_than_ms") / 1000.0, jint(j, "in_doubt_kept"),
               jint(j, "files_listed"));
    }
}

static int do_maint(const table_opts_t *o, floe_err_t *err)
{
    floe_tmaint_req_t req = {.older_than_ms = o->older_than,
                             .keep = (int)o->keep,
                             .dry_run = o->dry_run,
                             .progress = progress_line};
    req.op = !strcmp(o->sub, "compact")  ? FLOE_TMAINT_COMPACT
             : !strcmp(o->sub, "expire") ? FLOE_TMAINT_EXPIRE
                                         : FLOE_TMAINT_ORPHANS;
    floe_buf_t out = FLOE_BUF_INIT;
    int rc = o->http && server_answers(o->http) ? maint_remote(o, o->sub, &out, err)
                                                : maint_local(o, &req, &out, err);
    if (rc == 0) {
        json_t *j = json_loadb((const char *)out.data, out.len, 0, NULL);
        if (!json_is_object(j))
            rc = floe_err_set(err, FLOE_EIO, "not an outcome: %.200s", floe_buf_cstr(&out));
        else
            print_outcome(o->sub, j);
        json_decref(j);
    }
    floe_buf_free(&out);
    return rc;
}

/* ---- scan ---- */

static int print_row(void *arg, const char *json, size_t len, floe_err_t *err)
{
    (void)arg;
    if (fwrite(json, 1, len, stdout) != len || putchar('\n') == EOF)
        return floe_err_errno(err, errno, "writing the rows");
    return 0;
}

/* ---- arguments ---- */

static const char usage_text[] =
    "usage: floe table list\n"
    "       floe table describe [NAMESPACE.]TABLE\n"
    "       floe table scan [NAMESPACE.]TABLE [--limit N]\n"
    "       floe table history [NAMESPACE.]TABLE\n"
    "       floe table redrive [NAMESPACE.]TABLE|TOPIC   (dead letters that convert now\n"
    "                                             move into the table, exactly once)\n"
    "       floe table compact [NAMESPACE.]TABLE   (small data files rewritten into large ones)\n"
    "       floe table expire [NAMESPACE.]TABLE [--older-than D] [--keep N]\n"
    "       floe table remove-orphans [NAMESPACE.]TABLE [--older-than D] [--dry-run]\n"
    "       floe table pause [NAMESPACE.]TABLE|TOPIC     (stop reading until resumed)\n"
    "       floe table resume [NAMESPACE.]TABLE|TOPIC    (run again, whatever paused it)\n"
    "options: --data-dir DIR (default ./floe-data), --config FILE (the server's config\n"
    "         file: its data.dir, warehouse, s3.* and catalog.* keys, for tables on S3\n"
    "         or in a REST catalog),\n"
    "         --http HOST:PORT (the server's\n"
    "         HTTP listener for live lag, default 127.0.0.1:8181), --no-http\n"
    "scan prints one JSON object per row.  compact, expire and remove-orphans run in the\n"
    "server when it answers (--http), else on --data-dir; progress goes to stderr.\n"
    "expire: snapshots older than D (default: the table property\n"
    "history.expire.max-snapshot-age-ms) beyond the newest N (default: its\n"
    "history.expire.min-snapshots-to-keep).  remove-orphans: unreferenced files older\n"
    "than D (default: table.orphan.min.age, 1h; a running server keeps at least two\n"
    "commit intervals plus a minute).  D: a duration, e.g. 30s, 10min, 2h, 3d.\n";

static int parse_args(int argc, char **argv, table_opts_t *o, floe_err_t *err)
{
    o->data_dir = "./floe-data";
    o->http = "127.0.0.1:8181";
    o->limit = -1;
    o->older_than = -1;
    if (argc < 3)
        return floe_err_set(err, FLOE_EINVAL,
                            "missing subcommand (list, describe, scan, history, redrive, pause, "
                            "resume, compact, expire, remove-orphans)");
    o->sub = argv[2];
    if (!strcmp(o->sub, "--help") || !strcmp(o->sub, "-h")) o->sub = "help";
    for (int i = 3; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || !arg[1]) {
            if (o->name) return floe_err_set(err, FLOE_EINVAL, "unexpected argument '%s'", arg);
            o->name = arg;
            continue;
        }
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            o->sub = "help";
            continue;
        }
        if (!strcmp(arg, "--no-http")) {
            o->http = NULL;
            continue;
        }
        if (!strcmp(arg, "--dry-run")) {
            o->dry_run = true;
            continue;
        }
        if (i + 1 >= argc) return floe_err_set(err, FLOE_EINVAL, "%s needs a value", arg);
        const char *v = argv[++i];
        if (!strcmp(arg, "--data-dir") || !strcmp(arg, "-d")) o->data_dir = v;
        else if (!strcmp(arg, "--config") || !strcmp(arg, "-c"))
            o->config = v;
        else if (!strcmp(arg, "--http"))
            o->http = v;
        else if (!strcmp(arg, "--limit") || !strcmp(arg, "-n")) {
            if (floe_parse_int64(v, 0, INT64_MAX, &o->limit, err)) {
                floe_err_wrap(err, "--limit");
                return -1;
            }
        } else if (!strcmp(arg, "--older-than")) {
            if (floe_parse_duration_ms(v, &o->older_than, err)) {
                floe_err_wrap(err, "--older-than");
                return -1;
            }
        } else if (!strcmp(arg, "--keep")) {
            if (floe_parse_int64(v, 1, 1000000, &o->keep, err)) {
                floe_err_wrap(err, "--keep");
                return -1;
            }
        } else {
            return floe_err_set(err, FLOE_EINVAL, "unknown option '%s' (see 'floe table help')",
                                arg);
        }
    }
    bool maint = !strcmp(o->sub, "compact") || !strcmp(o->sub, "expire") ||
                 !strcmp(o->sub, "remove-orphans");
    bool named = maint || !strcmp(o->sub, "describe") || !strcmp(o->sub, "scan") ||
                 !strcmp(o->sub, "history") || !strcmp(o->sub, "redrive") ||
                 !strcmp(o->sub, "pause") || !strcmp(o->sub, "resume");
    if (!named && strcmp(o->sub, "list") && strcmp(o->sub, "help"))
        return floe_err_set(err, FLOE_EINVAL,
                            "unknown subcommand '%s' (list, describe, scan, history, redrive, "
                            "pause, resume, compact, expire, remove-orphans)",
                            o->sub);
    if (named && !o->name)
        return floe_err_set(err, FLOE_EINVAL, "missing the table name ([NAMESPACE.]TABLE)");
    if (!named && o->name)
        return floe_err_set(err, FLOE_EINVAL, "unexpected argument '%s'", o->name);
    if (o->limit >= 0 && strcmp(o->sub, "scan"))
        return floe_err_set(err, FLOE_EINVAL, "--limit applies to scan only");
    if (o->older_than >= 0 && strcmp(o->sub, "expire") && strcmp(o->sub, "remove-orphans"))
        return floe_err_set(err, FLOE_EINVAL, "--older-than applies to expire and remove-orphans");
    if (o->keep > 0 && strcmp(o->sub, "expire"))
        return floe_err_set(err, FLOE_EINVAL, "--keep applies to expire only");
    if (o->dry_run && strcmp(o->sub, "remove-orphans"))
        return floe_err_set(err, FLOE_EINVAL, "--dry-run applies to remove-orphans only");
    if (floe_store_config_defaults(&o->store, err) < 0) return -1;
    if (o->config) {
        bool dd = false; /* --data-dir given: it wins over the file's data.dir */
        for (int i = 3; i < argc; i++)
            dd |= !strcmp(argv[i], "--data-dir") || !strcmp(argv[i], "-d");
        if (floe_conf_read_file(o->config, conf_line, o, err) < 0) return -1;
        if (!dd && o->conf_data_dir[0]) o->data_dir = o->conf_data_dir;
    }
    return 0;
}

int floe_cmd_table(int argc, char **argv)
{
    table_opts_t o = {0};
    floe_err_t err;
    floe_err_clear(&err);
    floe_cli_quiet_logs();
    int rc = parse_args(argc, argv, &o, &err);
    ctx_t c = {0};
    if (!rc && !strcmp(o.sub, "help")) {
        fputs(usage_text, stdout);
    } else if (!rc && !strcmp(o.sub, "redrive")) {
        rc = do_redrive(&o, &err);
    } else if (!rc && (!strcmp(o.sub, "compact") || !strcmp(o.sub, "expire") ||
                       !strcmp(o.sub, "remove-orphans"))) {
        rc = do_maint(&o, &err);
    } else if (!rc && (!strcmp(o.sub, "pause") || !strcmp(o.sub, "resume"))) {
        rc = do_pause_resume(&o, &err);
    } else if (!rc && !(rc = open_catalog(&c, &o, FLOE_ICE_REST_NEED_READ, &err))) {
        if (!strcmp(o.sub, "list")) rc = do_list(&c, &err);
        else if (!strcmp(o.sub, "describe"))
            rc = do_describe(&c, &o, &err);
        else if (!strcmp(o.sub, "history"))
            rc = do_history(&c, &o, &err);
        else {
            floe_ice_table_t *t;
            if (!(rc = load(&c, o.name, &t, &err))) {
                rc = floe_ice_read_table(c.io, floe_ice_table_metadata(t), o.limit, print_row, NULL,
                                         &err);
                floe_ice_table_free(t);
            }
        }
    }
    close_catalog(&c);
    if (fflush(stdout) && !rc) rc = floe_err_errno(&err, errno, "writing the output");
    if (rc) {
        floe_cli_fail("table", o.sub && strcmp(o.sub, "help") ? o.sub : NULL, &err);
        return 1;
    }
    return 0;
}
