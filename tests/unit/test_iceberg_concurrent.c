/* Two processes commit 200 appends each to one table through the
 * filesystem catalog: the table ends with 400 snapshots in one linear
 * history, every file reachable and present, no commit lost, no stray
 * manifest left, the manifest list merged short. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "iceberg/maintain.h"
#include "iceberg/scan.h"
#include "iceberg/snapshot.h"
#include "util/diag.h"

#define PER_PROC 200

static char root[256];

static int child(int who)
{
    floe_err_t e;
    floe_diag_set_level(FLOE_DIAG_WARN);
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    int conflicts = 0;
    for (int i = 0; i < PER_PROC; i++) {
        char p[400];
        snprintf(p, sizeof p, "%s/db/race/data/p%d-%03d.parquet", root, who, i);
        if (floe_fileio_write(io, p, "PAR1", 4, 0, &e) < 0) return 2;
        floe_ice_data_file_t f;
        floe_ice_data_file_init(&f);
        floe_ice_data_file_set_path(&f, p, "PARQUET");
        f.record_count = 1;
        f.file_size = 4;
        floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", "race", FLOE_ICE_OP_APPEND, &e);
        floe_ice_commit_add(c, &f, &e);
        char off[64];
        snprintf(off, sizeof off, "{\"%d\":%d}", who, i + 1);
        floe_ice_commit_set_summary(c, "floe.offsets", off, &e);
        int rc = floe_ice_commit_run(c, NULL, &e);
        conflicts += floe_ice_commit_attempts(c) - 1;
        floe_ice_commit_free(c);
        floe_ice_data_file_clear(&f);
        if (rc != 0) {
            fprintf(stderr, "child %d commit %d: %s\n", who, i, e.msg);
            return 1;
        }
    }
    fprintf(stderr, "# child %d: %d conflicts retried\n", who, conflicts);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    return 0;
}

static void two_writers_400_snapshots(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    CHECK(floe_ice_catalog_create_table(cat, "db", "race", s, NULL, NULL, NULL, NULL, &e) == 0);
    fflush(stdout);
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        if (pids[w] == 0) _exit(child(w));
    }
    for (int w = 0; w < 2; w++) {
        int st = 0;
        CHECK(waitpid(pids[w], &st, 0) == pids[w]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_load_table(cat, "db", "race", &t, &e) == 0);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    CHECK_EQ(md->nsnapshots, 2 * PER_PROC);
    CHECK_EQ(md->last_sequence_number, 2 * PER_PROC);
    CHECK_EQ(floe_ice_table_version(t), 2 * PER_PROC + 1);
    /* one linear history: walking parents from the head visits them all */
    size_t walked = 0;
    for (const floe_ice_snapshot_t *x = floe_ice_metadata_current_snapshot(md); x;
         x = x->parent_id >= 0 ? floe_ice_metadata_snapshot(md, x->parent_id) : NULL) {
        CHECK_EQ(x->sequence_number, (int64_t)(2 * PER_PROC - walked));
        walked++;
    }
    CHECK_EQ(walked, 2 * PER_PROC);
    const floe_ice_snapshot_t *head = floe_ice_metadata_current_snapshot(md);
    CHECK(head && strcmp(floe_ice_props_get(&head->summary, "total-data-files"), "400") == 0);
    floe_ice_scan_t *sc;
    CHECK(floe_ice_scan_plan(io, md, -1, NULL, 0, &sc, &e) == 0);
    CHECK_EQ(floe_ice_scan_ntasks(sc), 2 * PER_PROC);
    bool seen[2][PER_PROC];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < floe_ice_scan_ntasks(sc); i++) {
        const char *p = floe_ice_scan_task(sc, i)->file->path;
        int who, k;
        const char *b = strrchr(p, '/');
        if (b && sscanf(b, "/p%d-%d.parquet", &who, &k) == 2 && who >= 0 && who < 2 && k >= 0 &&
            k < PER_PROC)
            seen[who][k] = true;
        bool ex = false;
        CHECK(floe_fileio_exists(io, p, &ex, &e) == 0 && ex);
    }
    int missing = 0;
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < PER_PROC; k++) missing += !seen[w][k];
    CHECK_EQ(missing, 0);
    /* no orphans: every manifest file in metadata/ is reachable (the
     * manifests losing attempts wrote, and those merged away, are gone) */
    floe_ice_reach_t *reach = floe_ice_reach_new(false, &e);
    CHECK(floe_ice_reach_add_table(reach, io, t, &e) == 0);
    char **names;
    size_t n;
    char mdir[400];
    snprintf(mdir, sizeof mdir, "%s/db/race/metadata", root);
    CHECK(floe_fileio_list(io, mdir, &names, &n, &e) == 0);
    size_t avro = 0, stray = 0;
    for (size_t i = 0; i < n; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", mdir, names[i]);
        if (!strstr(names[i], ".avro")) continue;
        avro++;
        stray += !floe_ice_reach_has(reach, p);
    }
    CHECK_EQ(stray, 0);
    CHECK(avro >= 2 * PER_PROC + 2 * PER_PROC); /* a list per snapshot, a manifest per append */
    floe_fileio_names_free(names, n);
    floe_ice_reach_free(reach);
    /* manifests merge: the head's list stays under the minimum count */
    floe_ice_manifest_file_t *ml;
    CHECK(floe_ice_manifest_list_read(io, head->manifest_list, &ml, &n, &e) == 0);
    CHECK(n < 100);
    floe_ice_manifest_files_free(ml, n);
    floe_ice_scan_free(sc);
    floe_ice_table_free(t);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

TEST_MAIN({
    snprintf(root, sizeof root, "/tmp/floe-ice-race-%d", (int)getpid());
    RUN(two_writers_400_snapshots);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0) return 1;
})
