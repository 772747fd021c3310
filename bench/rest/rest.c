/* floe's Iceberg REST catalog under load: loadTable and commit
 * (set-properties) requests per second and their p99 latency, one client
 * making one request after another over HTTP (libcurl, a new connection
 * each: what a simple engine does), against a table whose metadata holds
 * 10,000 snapshots (as before any expiry) and one that holds 100 (the same
 * table after an expiry keeping 100).  The snapshots are metadata only:
 * loadTable and commit read and write the metadata JSON, never the
 * manifests.  The 10,000-snapshot table is measured twice: with the
 * catalog's metadata cache (rest.metadata.cache.bytes, the default) and
 * without it (every request reads and parses the metadata file), the
 * ratio of the two the cache's gain.  Figures, not thresholds.
 * FLOE_BENCH_DIR picks the directory (default /dev/shm).  Last line:
 *   rest load_rps_10k=.. load_p99_ms_10k=.. commit_rps_10k=..
 *       commit_p99_ms_10k=.. load_rps_100=.. load_p99_ms_100=..
 *       commit_rps_100=.. commit_p99_ms_100=.. metadata_kb_10k=..
 *       load_rps_10k_uncached=.. commit_rps_10k_uncached=..
 *       load_cache_ratio=.. commit_cache_ratio=.. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/client.h"
#include "http/rest.h"
#include "util/clock.h"
#include "util/diag.h"

typedef struct figures {
    double load_rps, load_p99, commit_rps, commit_p99;
} figures_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double p99(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[(n * 99) / 100];
}

/* Table db.NAME whose metadata holds nsnap snapshots on main (metadata
 * only: the manifest lists they name do not exist). */
static int make_table(floe_ice_catalog_t *cat, const char *name, int nsnap, size_t *json_bytes,
                      floe_err_t *e)
{
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "name", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    char *loc = NULL;
    int rc = floe_ice_catalog_table_location(cat, "db", name, &loc, e);
    floe_ice_metadata_t *md =
        rc == 0 ? floe_ice_metadata_new_table(s, NULL, NULL, loc, NULL, e) : NULL;
    if (!md) rc = -1;
    int64_t parent = -1;
    for (int k = 0; rc == 0 && k < nsnap; k++) {
        floe_ice_snapshot_t sn = {.snapshot_id = floe_ice_new_snapshot_id(),
                                  .parent_id = parent,
                                  .sequence_number = k + 1,
                                  .timestamp_ms = 1700000000000 + k,
                                  .schema_id = 0};
        char ml[700], offs[64];
        snprintf(ml, sizeof ml, "%s/metadata/snap-%d.avro", loc, k);
        snprintf(offs, sizeof offs, "{\"0\":%d}", (k + 1) * 1000);
        sn.manifest_list = ml;
        sn.operation = "append";
        floe_ice_props_set(&sn.summary, "added-records", "1000");
        floe_ice_props_set(&sn.summary, "floe.offsets", offs);
        floe_ice_update_t add = {.kind = FLOE_ICE_UP_ADD_SNAPSHOT, .snapshot = &sn};
        floe_ice_update_t ref = {.kind = FLOE_ICE_UP_SET_SNAPSHOT_REF,
                                 .ref = {.name = "main",
                                         .snapshot_id = sn.snapshot_id,
                                         .max_ref_age_ms = -1,
                                         .max_snapshot_age_ms = -1,
                                         .min_snapshots_to_keep = -1}};
        rc = floe_ice_update_apply(md, &add, e) || floe_ice_update_apply(md, &ref, e) ? -1 : 0;
        floe_ice_props_clear(&sn.summary);
        parent = sn.snapshot_id;
    }
    if (rc == 0) {
        char *j = floe_ice_metadata_to_json(md, e);
        *json_bytes = j ? strlen(j) : 0;
        free(j);
        rc = floe_ice_catalog_create_from(cat, "db", name, md, NULL, e);
    }
    floe_ice_metadata_free(md);
    floe_ice_schema_free(s);
    free(loc);
    return rc;
}

/* n calls of method on url with body: requests per second and p99 ms. */
static int measure(const char *method, const char *url, const char *body, int n, double *rps,
                   double *p99_ms)
{
    double *ms = calloc((size_t)n, sizeof *ms);
    if (!ms) return -1;
    int64_t t0 = floe_mono_ns();
    for (int i = 0; i < n; i++) {
        floe_http_call_t c = {.method = method,
                              .url = url,
                              .body = body,
                              .body_len = body ? strlen(body) : 0,
                              .timeout_ms = 60000};
        floe_buf_t b = FLOE_BUF_INIT;
        long st;
        floe_err_t e;
        int64_t a = floe_mono_ns();
        int rc = floe_http_call(&c, &st, &b, &e);
        ms[i] = (double)(floe_mono_ns() - a) / 1e6;
        floe_buf_free(&b);
        if (rc < 0 || st != 200) {
            fprintf(stderr, "rest bench: %s %s: %s\n", method, url,
                    rc < 0 ? e.msg : "not a 200 answer");
            free(ms);
            return -1;
        }
    }
    *rps = n / ((double)(floe_mono_ns() - t0) / 1e9);
    *p99_ms = p99(ms, (size_t)n);
    free(ms);
    return 0;
}

static int run(int port, const char *name, int loads, int commits, figures_t *f)
{
    char url[200];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/namespaces/db/tables/%s", port, name);
    const char *body = "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\","
                       "\"updates\":{\"bench\":\"x\"}}]}";
    return measure("GET", url, NULL, loads, &f->load_rps, &f->load_p99) ||
                   measure("POST", url, body, commits, &f->commit_rps, &f->commit_p99)
               ? -1
               : 0;
}

int main(void)
{
    floe_diag_set_level(FLOE_DIAG_WARN);
    const char *base = getenv("FLOE_BENCH_DIR");
    char root[512];
    snprintf(root, sizeof root, "%s/floe-rest-bench-%d", base ? base : "/dev/shm", (int)getpid());
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = io ? floe_ice_catalog_fs_new(io, root, &e) : NULL;
    floe_http_t *h = NULL;
    floe_rest_t *r = NULL;
    size_t big = 0, small = 0;
    figures_t f10k = {0}, f100 = {0}, fcold = {0};
    int rc = !cat || floe_http_new(&h, &e) || floe_rest_http(h, cat, &r, &e) ||
             floe_http_start(h, "127.0.0.1", 0, &e) ||
             floe_ice_catalog_create_namespace(cat, "db", &e) ||
             make_table(cat, "big", 10000, &big, &e) || make_table(cat, "small", 100, &small, &e);
    if (rc) fprintf(stderr, "rest bench: %s\n", e.msg);
    if (!rc) rc = run(floe_http_port(h), "big", 100, 20, &f10k);
    if (!rc) rc = run(floe_http_port(h), "small", 1000, 200, &f100);
    if (!rc) {
        /* the same table without the cache: what every request cost before */
        floe_ice_catalog_cache_metadata(cat, 0);
        rc = run(floe_http_port(h), "big", 20, 10, &fcold);
    }
    if (!rc) {
        printf("10,000 snapshots (%zu KB of metadata): loadTable %.0f/s p99 %.1f ms, "
               "commit %.1f/s p99 %.1f ms\n",
               big / 1024, f10k.load_rps, f10k.load_p99, f10k.commit_rps, f10k.commit_p99);
        printf("100 snapshots (%zu KB): loadTable %.0f/s p99 %.1f ms, commit %.1f/s p99 %.1f ms\n",
               small / 1024, f100.load_rps, f100.load_p99, f100.commit_rps, f100.commit_p99);
        printf("10,000 snapshots without the metadata cache: loadTable %.1f/s, commit %.1f/s "
               "(the cache: %.1fx loads, %.1fx commits)\n",
               fcold.load_rps, fcold.commit_rps, f10k.load_rps / fcold.load_rps,
               f10k.commit_rps / fcold.commit_rps);
        printf("rest load_rps_10k=%.0f load_p99_ms_10k=%.2f commit_rps_10k=%.1f "
               "commit_p99_ms_10k=%.2f load_rps_100=%.0f load_p99_ms_100=%.2f "
               "commit_rps_100=%.1f commit_p99_ms_100=%.2f metadata_kb_10k=%zu "
               "load_rps_10k_uncached=%.1f commit_rps_10k_uncached=%.1f load_cache_ratio=%.1f "
               "commit_cache_ratio=%.1f\n",
               f10k.load_rps, f10k.load_p99, f10k.commit_rps, f10k.commit_p99, f100.load_rps,
               f100.load_p99, f100.commit_rps, f100.commit_p99, big / 1024, fcold.load_rps,
               fcold.commit_rps, f10k.load_rps / fcold.load_rps,
               f10k.commit_rps / fcold.commit_rps);
    }
    floe_http_free(h);
    floe_rest_free(r);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "rest bench: cannot remove %s\n", root);
    return rc ? 1 : 0;
}
