/* Does a commit get slower as a table gets older?  One append of one file
 * per commit through the filesystem catalog, with Iceberg's manifest
 * merging (min count 100) and old metadata files deleted (20 kept):
 *   expire:  2,000 commits with a snapshot expiry every 10 commits keeping
 *            100 snapshots (the engine's schedule in miniature);
 *   keep:    1,000 commits, no expiry: every snapshot stays in the
 *            metadata JSON that each commit reads and writes whole.
 * For each it prints the median commit time of the 20 commits up to
 * commit 100 and up to the last, the manifests in the list and the size of
 * the current metadata JSON.  Figures, not thresholds.  FLOE_BENCH_DIR
 * picks the directory (default /dev/shm, so the disk's fsync time does not
 * hide the work that grows).  Last line:
 *   commit_growth expire_ms_100=.. expire_ms_2000=.. keep_ms_100=..
 *       keep_ms_1000=.. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iceberg/snapshot.h"
#include "util/clock.h"
#include "util/diag.h"

#define WINDOW 20

#define MAX_COMMITS 2000

typedef struct figures {
    double ms_100, ms_last;
    size_t manifests_100, manifests_last;
    long json_100, json_last;
} figures_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

static long json_size(const char *root, const char *name)
{
    char p[700];
    struct stat st;
    long best = 0;
    for (int v = 3 * MAX_COMMITS; v > 0; v--) {
        snprintf(p, sizeof p, "%s/db/%s/metadata/v%d.metadata.json", root, name, v);
        if (stat(p, &st) == 0) {
            best = (long)st.st_size;
            break;
        }
    }
    return best;
}

static int run(const char *root, const char *name, int commits, bool expire, figures_t *fig)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    floe_ice_props_t props = {0};
    floe_ice_props_set(&props, "write.metadata.delete-after-commit.enabled", "true");
    floe_ice_props_set(&props, "write.metadata.previous-versions-max", "20");
    int rc = floe_ice_catalog_create_table(cat, "db", name, s, NULL, NULL, &props, NULL, &e);
    floe_ice_props_clear(&props);
    floe_ice_schema_free(s);
    static double ms[MAX_COMMITS];
    static size_t manifests[MAX_COMMITS];
    for (int k = 0; rc == 0 && k < commits; k++) {
        char p[700];
        snprintf(p, sizeof p, "%s/db/%s/data/f%05d.parquet", root, name, k);
        if ((rc = floe_fileio_write(io, p, "PAR1", 4, 0, &e)) < 0) break;
        floe_ice_data_file_t f;
        floe_ice_data_file_init(&f);
        floe_ice_data_file_set_path(&f, p, "PARQUET");
        f.record_count = 1;
        f.file_size = 4;
        int64_t t0 = floe_mono_ns();
        floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", name, FLOE_ICE_OP_APPEND, &e);
        floe_ice_commit_add(c, &f, &e);
        floe_ice_commit_set_summary(c, "floe.offsets", "{\"0\":1}", &e);
        rc = floe_ice_commit_run(c, NULL, &e);
        ms[k] = (double)(floe_mono_ns() - t0) / 1e6;
        floe_ice_commit_stats_t st;
        floe_ice_commit_stats(c, &st);
        manifests[k] = st.manifests;
        floe_ice_commit_free(c);
        floe_ice_data_file_clear(&f);
        if (k == 99) fig->json_100 = json_size(root, name);
        if (rc == 0 && expire && k % 10 == 9) {
            floe_ice_expire_opts_t eo = {.older_than_ms = -1,
                                         .keep_last = 100,
                                         .delete_files = true,
                                         .protect_summary_key = "floe.offsets"};
            rc = floe_ice_expire_snapshots(cat, "db", name, &eo, NULL, &e);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "commit_growth %s: %s\n", name, e.msg);
    } else {
        fig->ms_100 = median(ms + 100 - WINDOW, WINDOW);
        fig->ms_last = median(ms + commits - WINDOW, WINDOW);
        fig->manifests_100 = manifests[99];
        fig->manifests_last = manifests[commits - 1];
        fig->json_last = json_size(root, name);
        printf("%-6s commit %7.2f ms at 100, %7.2f ms at %d (x%.1f); manifests in the list %zu / "
               "%zu; metadata JSON %ld / %ld bytes\n",
               name, fig->ms_100, fig->ms_last, commits, fig->ms_last / fig->ms_100,
               fig->manifests_100, fig->manifests_last, fig->json_100, fig->json_last);
        fflush(stdout);
    }
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    return rc;
}

int main(void)
{
    const char *base = getenv("FLOE_BENCH_DIR");
    if (!base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/var/tmp";
    char root[512], cmd[600];
    snprintf(root, sizeof root, "%s/floe-bench-commits-%d", base, (int)getpid());
    floe_diag_set_level(FLOE_DIAG_WARN);
    figures_t expire = {0}, keep = {0};
    int rc = run(root, "expire", 2000, true, &expire);
    if (rc == 0) rc = run(root, "keep", 1000, false, &keep);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", root);
    if (rc < 0) return 1;
    printf("commit_growth expire_ms_100=%.2f expire_ms_2000=%.2f keep_ms_100=%.2f "
           "keep_ms_1000=%.2f\n",
           expire.ms_100, expire.ms_last, keep.ms_100, keep.ms_last);
    return 0;
}
