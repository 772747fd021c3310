/* Table maintenance in the iceberg library: the reachable-file walk,
 * orphan removal (temp files, unreferenced manifests, a dead run's data
 * files, in-doubt files, the safety age, paths too long to build),
 * snapshot expiry (table properties, refs, the protected offsets
 * snapshot, batched deletes, concurrent appends). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "iceberg/maintain.h"
#include "iceberg/scan.h"
#include "iceberg/snapshot.h"
#include "util/clock.h"
#include "util/diag.h"

static char root[256];
static floe_fileio_t *io;
static floe_ice_catalog_t *cat;
static int nfile;

/* Create db.name (id long, region string), partitioned by `by` (NULL:
 * not), with props as "k=v" strings; returns the table location (static). */
static const char *create(const char *name, const char *by, const char *const *props, size_t np)
{
    static char loc[512];
    floe_err_t e;
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "region", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    int32_t last = 999;
    floe_ice_spec_t *sp = by ? floe_ice_spec_parse(s, by, 0, &last, &e) : NULL;
    floe_ice_props_t p = {0};
    for (size_t i = 0; i < np; i++) {
        char k[128];
        const char *eq = strchr(props[i], '=');
        snprintf(k, sizeof k, "%.*s", (int)(eq - props[i]), props[i]);
        floe_ice_props_set(&p, k, eq + 1);
    }
    floe_ice_table_t *t = NULL;
    CHECK(floe_ice_catalog_create_table(cat, "db", name, s, sp, NULL, &p, &t, &e) == 0);
    snprintf(loc, sizeof loc, "%s", t ? floe_ice_table_metadata(t)->location : "");
    floe_ice_table_free(t);
    floe_ice_props_clear(&p);
    floe_ice_spec_free(sp);
    floe_ice_schema_free(s);
    return loc;
}

/* A data file of `bytes` bytes (not Parquet: nothing here reads rows)
 * under loc/data (in region's folder when partitioned). */
static void data_file(floe_ice_data_file_t *f, const char *loc, const char *region, int64_t rows,
                      size_t bytes)
{
    char p[600];
    if (region) snprintf(p, sizeof p, "%s/data/region=%s/f%05d.parquet", loc, region, nfile++);
    else
        snprintf(p, sizeof p, "%s/data/f%05d.parquet", loc, nfile++);
    char *body = calloc(1, bytes ? bytes : 1);
    floe_err_t e;
    CHECK(floe_fileio_write(io, p, body, bytes, 0, &e) == 0);
    free(body);
    floe_ice_data_file_init(f);
    floe_ice_data_file_set_path(f, p, "PARQUET");
    f->record_count = rows;
    f->file_size = (int64_t)bytes;
    if (region) {
        f->partition = calloc(1, sizeof *f->partition);
        floe_ice_value_set_bytes(&f->partition[0], FLOE_ICE_STRING, region, strlen(region));
        f->npartition = 1;
    }
}

/* Commit op with adds (cleared after) and removes; summary key=value when
 * key is set.  Returns what floe_ice_commit_run returned. */
static int commit(const char *name, floe_ice_op_t op, floe_ice_data_file_t *adds, size_t nadds,
                  const char *const *removes, size_t nremoves, const char *key, const char *value)
{
    floe_err_t e;
    floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", name, op, &e);
    for (size_t i = 0; i < nadds; i++) floe_ice_commit_add(c, &adds[i], &e);
    for (size_t i = 0; i < nremoves; i++) floe_ice_commit_remove(c, removes[i], &e);
    if (key) floe_ice_commit_set_summary(c, key, value, &e);
    int rc = floe_ice_commit_run(c, NULL, &e);
    if (rc < 0) fprintf(stderr, "commit %s: %s\n", name, e.msg);
    floe_ice_commit_free(c);
    for (size_t i = 0; i < nadds; i++) floe_ice_data_file_clear(&adds[i]);
    return rc;
}

/* Append one new file of `rows` rows; its path into path_out (may be NULL). */
static int append1(const char *name, const char *loc, int64_t rows, char *path_out, size_t n)
{
    floe_ice_data_file_t f;
    data_file(&f, loc, NULL, rows, 16);
    if (path_out) snprintf(path_out, n, "%s", f.path);
    return commit(name, FLOE_ICE_OP_APPEND, &f, 1, NULL, 0, NULL, NULL);
}

static floe_ice_table_t *load(const char *name)
{
    floe_ice_table_t *t = NULL;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "db", name, &t, &e) < 0)
        fprintf(stderr, "load %s: %s\n", name, e.msg);
    return t;
}

static bool exists(const char *p)
{
    bool ex = false;
    floe_err_t e;
    return floe_fileio_exists(io, p, &ex, &e) == 0 && ex;
}

/* Age every file under dir (recursively). */
static void age_all(const char *dir, int secs)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -execdir touch -d '-%d seconds' {} +", dir, secs);
    CHECK(system(cmd) == 0);
}

/* Every file every snapshot reaches is present, and the current scan
 * plans `want` data files (-1: any number). */
static bool table_whole(const char *name, long want)
{
    floe_ice_table_t *t = load(name);
    if (!t) return false;
    floe_err_t e;
    floe_ice_reach_t *r = floe_ice_reach_new(true, &e);
    bool ok = floe_ice_reach_add_table(r, io, t, &e) == 0;
    if (!ok) fprintf(stderr, "walk %s: %s\n", name, e.msg);
    for (size_t i = 0; ok && i < floe_ice_reach_count(r); i++)
        if (!exists(floe_ice_reach_file(r, i).path)) {
            fprintf(stderr, "%s: missing %s\n", name, floe_ice_reach_file(r, i).path);
            ok = false;
        }
    floe_ice_scan_t *sc = NULL;
    if (ok && floe_ice_scan_plan(io, floe_ice_table_metadata(t), -1, NULL, 0, &sc, &e) < 0)
        ok = false;
    if (ok && want >= 0 && (long)floe_ice_scan_ntasks(sc) != want) {
        fprintf(stderr, "%s: %zu live files, want %ld\n", name, floe_ice_scan_ntasks(sc), want);
        ok = false;
    }
    floe_ice_scan_free(sc);
    floe_ice_reach_free(r);
    floe_ice_table_free(t);
    return ok;
}

/* ---- the walk ---- */

static void reach_live_and_all(void)
{
    const char *loc = create("walk", NULL, NULL, 0);
    char a[600], b[600];
    CHECK(append1("walk", loc, 3, a, sizeof a) == 0);
    CHECK(append1("walk", loc, 4, b, sizeof b) == 0);
    floe_ice_data_file_t big;
    data_file(&big, loc, NULL, 7, 64);
    char bigp[600];
    snprintf(bigp, sizeof bigp, "%s", big.path);
    const char *rm[2] = {a, b};
    CHECK(commit("walk", FLOE_ICE_OP_REWRITE, &big, 1, rm, 2, NULL, NULL) == 0);
    floe_ice_table_t *t = load("walk");
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t *head = floe_ice_metadata_current_snapshot(md);
    floe_err_t e;
    /* the head alone: a and b are DELETED entries there, not live */
    floe_ice_reach_t *live = floe_ice_reach_new(true, &e), *all = floe_ice_reach_new(false, &e);
    CHECK(floe_ice_reach_add_snapshot(live, io, head, &e) == 0);
    CHECK(floe_ice_reach_add_snapshot(all, io, head, &e) == 0);
    CHECK(floe_ice_reach_has(live, bigp) && !floe_ice_reach_has(live, a));
    CHECK(floe_ice_reach_has(all, a) && floe_ice_reach_has(all, b));
    CHECK(floe_ice_reach_has(live, head->manifest_list));
    /* other spellings of the same file match */
    char u[700];
    snprintf(u, sizeof u, "file://%s", bigp);
    CHECK(floe_ice_reach_has(live, u));
    snprintf(u, sizeof u, "file:%s", bigp);
    CHECK(floe_ice_reach_has(live, u));
    const char *slash = strrchr(bigp, '/');
    snprintf(u, sizeof u, "%.*s/%s", (int)(slash - bigp), bigp, slash); /* ".../data//fN" */
    CHECK(strstr(u, "//") != NULL);
    CHECK(floe_ice_reach_has(live, u));
    size_t kinds[6] = {0};
    for (size_t i = 0; i < floe_ice_reach_count(all); i++) {
        floe_ice_reach_file_t f = floe_ice_reach_file(all, i);
        kinds[f.kind]++;
        if (f.kind == FLOE_ICE_FILE_DATA && !strcmp(f.path, bigp)) CHECK_EQ(f.size, 64);
        if (f.kind == FLOE_ICE_FILE_MANIFEST) CHECK(f.size > 0);
    }
    CHECK_EQ(kinds[FLOE_ICE_FILE_DATA], 3);
    CHECK_EQ(kinds[FLOE_ICE_FILE_MANIFEST_LIST], 1);
    /* the whole table: every snapshot and the metadata files */
    floe_ice_reach_t *whole = floe_ice_reach_new(true, &e);
    CHECK(floe_ice_reach_add_table(whole, io, t, &e) == 0);
    CHECK(floe_ice_reach_has(whole, a) && floe_ice_reach_has(whole, bigp));
    CHECK(floe_ice_reach_has(whole, floe_ice_table_metadata_location(t)));
    CHECK(md->nmetadata_log == 3 && floe_ice_reach_has(whole, md->metadata_log[0].file));
    floe_ice_reach_free(live);
    floe_ice_reach_free(all);
    floe_ice_reach_free(whole);
    floe_ice_table_free(t);
}

/* Snapshots share manifests: the walk reads each once. */
static void reach_reads_each_manifest_once(void)
{
    const char *loc = create("shared", NULL, NULL, 0);
    for (int i = 0; i < 10; i++) CHECK(append1("shared", loc, 1, NULL, 0) == 0);
    floe_ice_table_t *t = load("shared");
    floe_err_t e;
    floe_fileio_t *fio = floe_fileio_fault_new(io, &e);
    floe_fileio_fault_disarm(fio);
    floe_ice_reach_t *r = floe_ice_reach_new(true, &e);
    CHECK(floe_ice_reach_add_table(r, fio, t, &e) == 0);
    /* 10 manifest lists + 10 distinct manifests (snapshot k carries k) */
    CHECK_EQ(floe_fileio_fault_ops(fio), 20);
    floe_ice_reach_free(r);
    floe_fileio_free(fio);
    floe_ice_table_free(t);
}

/* ---- orphans ---- */

static floe_ice_orphan_opts_t orphan_opts(int64_t min_age_ms)
{
    floe_ice_orphan_opts_t o;
    memset(&o, 0, sizeof o);
    o.min_age_ms = min_age_ms;
    return o;
}

/* What the table-side sweep at open deletes, this API deletes too: temp
 * files of interrupted writes, manifests of a failed commit, data files
 * of a run that died before committing; nothing referenced. */
static void orphans_of_a_dead_run(void)
{
    const char *props[] = {"write.metadata.previous-versions-max=2"};
    const char *loc = create("orph", "region", props, 1);
    floe_ice_data_file_t f[2];
    data_file(&f[0], loc, "us", 5, 10);
    data_file(&f[1], loc, "eu", 5, 10);
    CHECK(commit("orph", FLOE_ICE_OP_APPEND, f, 2, NULL, 0, NULL, NULL) == 0);
    for (int i = 0; i < 4; i++) {
        floe_ice_data_file_t g;
        data_file(&g, loc, "us", 1, 10);
        CHECK(commit("orph", FLOE_ICE_OP_APPEND, &g, 1, NULL, 0, NULL, NULL) == 0);
    }
    /* the dead run's leftovers */
    floe_err_t e;
    char p[12][700];
    snprintf(p[0], sizeof p[0], "%s/data/region=us/dead-1.parquet", loc);
    snprintf(p[1], sizeof p[1], "%s/data/region=zz/dead-2.parquet", loc); /* a folder of its own */
    snprintf(p[2], sizeof p[2], "%s/data/region=us/.dead-3.parquet.77.1.2.tmp", loc);
    snprintf(p[3], sizeof p[3], "%s/metadata/.v9.metadata.json.77.3.4.tmp", loc);
    snprintf(p[4], sizeof p[4], "%s/metadata/0badc0de-m0.avro", loc);       /* failed commit */
    snprintf(p[5], sizeof p[5], "%s/metadata/snap-1-1-0badc0de.avro", loc); /* its list */
    snprintf(p[6], sizeof p[6], "%s/data/in-doubt.parquet", loc);
    snprintf(p[7], sizeof p[7], "%s/metadata/stats-of-another-engine.puffin", loc);
    snprintf(p[8], sizeof p[8], "%s/metadata/v99.metadata.json", loc); /* "published since" */
    snprintf(p[9], sizeof p[9], "%s/metadata/v1.metadata.json", loc);  /* out of the log */
    snprintf(p[10], sizeof p[10], "%s/metadata/version-hint.text", loc);
    snprintf(p[11], sizeof p[11], "%s/metadata/v4.metadata.json", loc); /* in the log */
    for (int i = 0; i < 9; i++) CHECK(floe_fileio_write(io, p[i], "junk", 4, 0, &e) == 0);
    CHECK(exists(p[9]) && exists(p[10]) && exists(p[11]));
    /* v1..v3 fell out of the 2-entry metadata-log: orphans too */
    int64_t old_meta_bytes = 0;
    for (int v = 1; v <= 3; v++) {
        char q[700];
        struct stat st;
        snprintf(q, sizeof q, "%s/metadata/v%d.metadata.json", loc, v);
        if (stat(q, &st) == 0) old_meta_bytes += st.st_size;
    }
    floe_ice_orphan_result_t res;
    floe_ice_orphan_opts_t o = orphan_opts(3600 * 1000);
    const char *doubt[1] = {p[6]};
    o.in_doubt = doubt;
    o.nin_doubt = 1;
    /* all young: nothing goes */
    CHECK(floe_ice_remove_orphans(cat, "db", "orph", &o, &res, &e) == 0);
    CHECK_EQ(res.orphans, 0);
    CHECK_EQ(res.files_deleted, 0);
    CHECK_EQ(res.too_young, 10); /* p0-p5, v1-v3, and v99 whatever its age */
    CHECK_EQ(res.in_doubt_kept, 1);
    CHECK_EQ(res.files_reachable, 6 + 5 + 5 + 3); /* data, manifests, lists, v4-v6 */
    CHECK_EQ(res.files_listed, 10 + 22);
    floe_ice_orphan_result_clear(&res);
    char all[600];
    snprintf(all, sizeof all, "%s", loc);
    age_all(all, 7200);
    /* dry run: listed, not deleted */
    o.dry_run = true;
    CHECK(floe_ice_remove_orphans(cat, "db", "orph", &o, &res, &e) == 0);
    CHECK_EQ(res.orphans, 9); /* p0-p5 and v1-v3 */
    CHECK_EQ(res.npaths, 9);
    CHECK_EQ(res.files_deleted, 0);
    for (int i = 0; i < 11; i++) CHECK(exists(p[i]));
    bool listed_v1 = false;
    for (size_t i = 0; i < res.npaths; i++) listed_v1 |= !strcmp(res.paths[i], p[9]);
    CHECK(listed_v1);
    floe_ice_orphan_result_clear(&res);
    o.dry_run = false;
    CHECK(floe_ice_remove_orphans(cat, "db", "orph", &o, &res, &e) == 0);
    CHECK_EQ(res.files_deleted, 9);
    CHECK_EQ(res.bytes_deleted, 6 * 4 + old_meta_bytes);
    CHECK_EQ(res.failed, 0);
    CHECK_EQ(res.in_doubt_kept, 1);
    CHECK(res.files_reachable >= 6 + 5 + 5);
    floe_ice_orphan_result_clear(&res);
    for (int i = 0; i < 6; i++) CHECK(!exists(p[i]));
    CHECK(!exists(p[9]));
    CHECK(exists(p[6]) && exists(p[7]) && exists(p[8]) && exists(p[10]) && exists(p[11]));
    CHECK(table_whole("orph", 6));
    /* nothing left to do */
    CHECK(floe_ice_remove_orphans(cat, "db", "orph", &o, &res, &e) == 0);
    CHECK_EQ(res.orphans, 0);
    floe_ice_orphan_result_clear(&res);
}

/* A path longer than a path buffer is skipped, never cut short: a cut
 * path names another file (here the folder's own prefix) and deleting it
 * would delete what nobody asked for. */
static void orphans_never_truncate(void)
{
    const char *loc = create("deep", NULL, NULL, 0);
    CHECK(append1("deep", loc, 1, NULL, 0) == 0);
    char data[600], name[201];
    snprintf(data, sizeof data, "%s/data", loc);
    memset(name, 'd', 200);
    name[200] = '\0';
    int cwd = open(".", O_RDONLY | O_DIRECTORY);
    CHECK(chdir(data) == 0);
    size_t len = strlen(data);
    int levels = 0;
    while (len < 4300) {
        CHECK(mkdir(name, 0755) == 0 && chdir(name) == 0);
        len += 201;
        levels++;
    }
    FILE *fp = fopen("deep.parquet", "w");
    CHECK(fp != NULL);
    if (fp) fclose(fp);
    CHECK(fchdir(cwd) == 0);
    close(cwd);
    age_all(data, 7200);
    floe_ice_orphan_result_t res;
    floe_ice_orphan_opts_t o = orphan_opts(1000);
    floe_err_t e;
    floe_diag_set_level(FLOE_DIAG_ERROR);
    CHECK(floe_ice_remove_orphans(cat, "db", "deep", &o, &res, &e) == 0);
    floe_diag_set_level(FLOE_DIAG_INFO);
    CHECK(res.failed >= 1);
    CHECK_EQ(res.files_deleted, 0);
    floe_ice_orphan_result_clear(&res);
    CHECK(table_whole("deep", 1));
    /* the deep file is still there */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test \"$(find '%s' -name deep.parquet | wc -l)\" = 1", data);
    CHECK(system(cmd) == 0);
    CHECK(levels > 10);
}

/* ---- expiry ---- */

static size_t nsnapshots(const char *name)
{
    floe_ice_table_t *t = load(name);
    size_t n = t ? floe_ice_table_metadata(t)->nsnapshots : 0;
    floe_ice_table_free(t);
    return n;
}

static void expire_from_table_properties(void)
{
    /* no properties: Iceberg's defaults (5 days, keep 1) keep these young snapshots */
    const char *loc = create("exp0", NULL, NULL, 0);
    for (int i = 0; i < 5; i++) CHECK(append1("exp0", loc, 1, NULL, 0) == 0);
    floe_ice_expire_opts_t o = {.delete_files = true};
    floe_ice_expire_result_t r;
    floe_err_t e;
    CHECK(floe_ice_expire_snapshots(cat, "db", "exp0", &o, &r, &e) == 0);
    CHECK_EQ(r.snapshots_removed, 0);
    CHECK_EQ(nsnapshots("exp0"), 5);
    /* the table's properties: any age is old, keep 3 */
    const char *props[] = {"history.expire.max-snapshot-age-ms=1",
                           "history.expire.min-snapshots-to-keep=3"};
    loc = create("exp1", NULL, props, 2);
    char first[600];
    CHECK(append1("exp1", loc, 1, first, sizeof first) == 0);
    for (int i = 0; i < 5; i++) CHECK(append1("exp1", loc, 1, NULL, 0) == 0);
    floe_sleep_ms(3);
    CHECK(floe_ice_expire_snapshots(cat, "db", "exp1", &o, &r, &e) == 0);
    CHECK_EQ(r.snapshots_removed, 3);
    CHECK_EQ(nsnapshots("exp1"), 3);
    /* appends only: every data file is still live; the lists and manifests
     * of the 3 removed snapshots went */
    CHECK_EQ(r.data_files_deleted, 0);
    CHECK_EQ(r.manifest_lists_deleted, 3);
    CHECK_EQ(r.manifests_deleted, 0); /* carried into the kept snapshots */
    CHECK_EQ(r.files_deleted, 3);
    CHECK(exists(first));
    CHECK(table_whole("exp1", 6));
    /* explicit limits win over the properties */
    floe_ice_expire_opts_t o2 = {.older_than_ms = -1, .keep_last = 1, .delete_files = true};
    CHECK(floe_ice_expire_snapshots(cat, "db", "exp1", &o2, &r, &e) == 0);
    CHECK_EQ(r.snapshots_removed, 2);
    CHECK(table_whole("exp1", 6));
}

/* A rewrite's removed files go when the last snapshot reading them goes,
 * with their bytes counted; a compaction's snapshot without floe.offsets
 * does not cost the newest one with it. */
static void expire_protects_offsets_and_deletes_rewritten(void)
{
    const char *loc = create("prot", NULL, NULL, 0);
    char paths[4][600];
    for (int i = 0; i < 4; i++) {
        floe_ice_data_file_t f;
        data_file(&f, loc, NULL, 10, 100);
        snprintf(paths[i], sizeof paths[i], "%s", f.path);
        char off[32];
        snprintf(off, sizeof off, "{\"0\":%d}", (i + 1) * 10);
        CHECK(commit("prot", FLOE_ICE_OP_APPEND, &f, 1, NULL, 0, "floe.offsets", off) == 0);
    }
    /* another writer compacts: two replace snapshots without floe.offsets */
    floe_ice_data_file_t big;
    data_file(&big, loc, NULL, 20, 150);
    const char *rm1[2] = {paths[0], paths[1]};
    CHECK(commit("prot", FLOE_ICE_OP_REWRITE, &big, 1, rm1, 2, NULL, NULL) == 0);
    data_file(&big, loc, NULL, 20, 150);
    const char *rm2[2] = {paths[2], paths[3]};
    CHECK(commit("prot", FLOE_ICE_OP_REWRITE, &big, 1, rm2, 2, NULL, NULL) == 0);
    floe_ice_table_t *t = load("prot");
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t *p = floe_ice_ancestor_with_summary(md, -1, "floe.offsets");
    CHECK(p && !strcmp(floe_ice_props_get(&p->summary, "floe.offsets"), "{\"0\":40}"));
    int64_t protected_id = p ? p->snapshot_id : -1;
    CHECK(floe_ice_ancestor_with_summary(md, -1, "no.such.key") == NULL);
    const floe_ice_snapshot_t *first = md->snapshots[0];
    CHECK(floe_ice_ancestor_with_summary(md, first->snapshot_id, "floe.offsets") == first);
    floe_ice_table_free(t);

    floe_ice_expire_opts_t o = {.older_than_ms = -1,
                                .keep_last = 1,
                                .delete_files = true,
                                .protect_summary_key = "floe.offsets"};
    floe_ice_expire_result_t r;
    floe_err_t e;
    CHECK(floe_ice_expire_snapshots(cat, "db", "prot", &o, &r, &e) == 0);
    CHECK_EQ(r.snapshots_removed, 3); /* S1-S3: S4 protected, S5 the way to it from S6 */
    t = load("prot");
    md = floe_ice_table_metadata(t);
    CHECK_EQ(md->nsnapshots, 3);
    CHECK(floe_ice_metadata_snapshot(md, protected_id) != NULL);
    CHECK(floe_ice_ancestor_with_summary(md, -1, "floe.offsets") != NULL);
    floe_ice_table_free(t);
    /* the protected snapshot still reads paths[0..3]: all kept */
    for (int i = 0; i < 4; i++) CHECK(exists(paths[i]));
    CHECK_EQ(r.data_files_deleted, 0);
    CHECK(table_whole("prot", 2));
    /* without protection the offsets snapshot goes, and with it the four
     * files only it still read */
    o.protect_summary_key = NULL;
    CHECK(floe_ice_expire_snapshots(cat, "db", "prot", &o, &r, &e) == 0);
    CHECK_EQ(r.snapshots_removed, 2);
    CHECK_EQ(r.data_files_deleted, 4);
    CHECK_EQ(r.manifest_lists_deleted, 2);
    CHECK(r.bytes_deleted > 4 * 100); /* the data files and the manifests' lengths */
    for (int i = 0; i < 4; i++) CHECK(!exists(paths[i]));
    CHECK(table_whole("prot", 2));
}

/* 8 appends, then one rewrite of all 8 files into one; paths get the 8. */
static void rewritten_table(const char *name, char paths[8][600])
{
    const char *loc = create(name, NULL, NULL, 0);
    for (int i = 0; i < 8; i++) CHECK(append1(name, loc, 1, paths[i], sizeof paths[i]) == 0);
    floe_ice_data_file_t big;
    data_file(&big, loc, NULL, 8, 100);
    const char *rm[8];
    for (int i = 0; i < 8; i++) rm[i] = paths[i];
    CHECK(commit(name, FLOE_ICE_OP_REWRITE, &big, 1, rm, 8, NULL, NULL) == 0);
}

/* Deletes go out as one batch: failing that one request leaves every file
 * in place (counted as failures, for orphan removal to take later), with
 * the snapshots removed all the same. */
static void expire_deletes_in_one_batch(void)
{
    char pa[8][600], pb[8][600];
    rewritten_table("batcha", pa);
    rewritten_table("batchb", pb);
    floe_err_t e;
    floe_fileio_t *fio = floe_fileio_fault_new(io, &e);
    floe_ice_catalog_t *fcat = floe_ice_catalog_fs_new(fio, root, &e);
    /* the operations of one expiry, on the first table */
    floe_ice_expire_opts_t o = {.older_than_ms = -1, .keep_last = 1, .delete_files = true};
    floe_ice_expire_result_t r;
    floe_fileio_fault_disarm(fio);
    CHECK(floe_ice_expire_snapshots(fcat, "db", "batcha", &o, &r, &e) == 0);
    uint64_t ops = floe_fileio_fault_ops(fio);
    CHECK_EQ(r.files_deleted, 8 + 8 + 8); /* data files, manifests, lists */
    for (int i = 0; i < 8; i++) CHECK(!exists(pa[i]));
    /* the same expiry on the second table, its last operation failing */
    floe_fileio_fault_arm(fio, ops, FLOE_FAULT_FAIL);
    floe_diag_set_level(FLOE_DIAG_ERROR);
    CHECK(floe_ice_expire_snapshots(fcat, "db", "batchb", &o, &r, &e) == 0);
    floe_diag_set_level(FLOE_DIAG_INFO);
    CHECK(floe_fileio_fault_fired(fio));
    CHECK_EQ(r.snapshots_removed, 8);
    CHECK_EQ(r.files_deleted, 0);
    CHECK_EQ(r.delete_failures, 8 + 8 + 8);
    for (int i = 0; i < 8; i++) CHECK(exists(pb[i]));
    floe_fileio_fault_disarm(fio);
    CHECK(table_whole("batchb", 1));
    /* orphan removal finishes the job */
    floe_ice_orphan_result_t orr;
    floe_ice_orphan_opts_t oo = orphan_opts(0);
    CHECK(floe_ice_remove_orphans(cat, "db", "batchb", &oo, &orr, &e) == 0);
    CHECK_EQ(orr.files_deleted, 24);
    floe_ice_orphan_result_clear(&orr);
    for (int i = 0; i < 8; i++) CHECK(!exists(pb[i]));
    CHECK(table_whole("batchb", 1));
    floe_ice_catalog_free(fcat);
    floe_fileio_free(fio);
}

/* Expiry and appends race: every expiry and every append succeeds (the
 * shared retry loop), and no snapshot left loses a file. */
static void expire_races_appends(void)
{
    const char *loc = create("race", NULL, NULL, 0);
    CHECK(append1("race", loc, 1, NULL, 0) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        floe_diag_set_level(FLOE_DIAG_WARN);
        int bad = 0;
        for (int i = 0; i < 60; i++) bad += append1("race", loc, 1, NULL, 0) != 0;
        _exit(bad ? 1 : 0);
    }
    floe_diag_set_level(FLOE_DIAG_WARN);
    int failures = 0, st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        floe_ice_expire_opts_t o = {.older_than_ms = -1, .keep_last = 2, .delete_files = true};
        floe_err_t e;
        if (floe_ice_expire_snapshots(cat, "db", "race", &o, NULL, &e) < 0) {
            fprintf(stderr, "expire: %s\n", e.msg);
            failures++;
        }
    }
    floe_diag_set_level(FLOE_DIAG_INFO);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_EQ(failures, 0);
    CHECK(table_whole("race", 61));
}

/* ---- manifest merging ---- */

static size_t list_len(const char *name, floe_ice_manifest_file_t **out)
{
    floe_ice_table_t *t = load(name);
    const floe_ice_snapshot_t *h =
        t ? floe_ice_metadata_current_snapshot(floe_ice_table_metadata(t)) : NULL;
    floe_ice_manifest_file_t *ml = NULL;
    size_t n = 0;
    floe_err_t e;
    if (h) CHECK(floe_ice_manifest_list_read(io, h->manifest_list, &ml, &n, &e) == 0);
    floe_ice_table_free(t);
    if (out) *out = ml;
    else
        floe_ice_manifest_files_free(ml, n);
    return n;
}

/* Every .avro file in the table's metadata folder is reachable: a commit
 * deletes the manifests it wrote and then merged away. */
static bool no_stray_manifests(const char *name, const char *loc)
{
    floe_ice_table_t *t = load(name);
    floe_err_t e;
    floe_ice_reach_t *r = floe_ice_reach_new(false, &e);
    bool ok = t && floe_ice_reach_add_table(r, io, t, &e) == 0;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/metadata", loc);
    char **names;
    size_t n;
    CHECK(floe_fileio_list(io, dir, &names, &n, &e) == 0);
    for (size_t i = 0; ok && i < n; i++) {
        char p[900];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (strstr(names[i], ".avro") && !floe_ice_reach_has(r, p)) {
            fprintf(stderr, "%s: stray %s\n", name, names[i]);
            ok = false;
        }
    }
    floe_fileio_names_free(names, n);
    floe_ice_reach_free(r);
    floe_ice_table_free(t);
    return ok;
}

/* Appends of one file each: the list grows to the minimum count, then
 * falls back to one merged manifest holding the older files as EXISTING
 * with the snapshot and sequence numbers that added them. */
static void merge_bounds_the_list(void)
{
    const char *props[] = {"commit.manifest.min-count-to-merge=10"};
    const char *loc = create("merge", NULL, props, 1);
    size_t longest = 0, merged = 0;
    for (int i = 0; i < 35; i++) {
        floe_ice_data_file_t f;
        data_file(&f, loc, NULL, i + 1, 16);
        floe_err_t e;
        floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", "merge", FLOE_ICE_OP_APPEND, &e);
        floe_ice_commit_add(c, &f, &e);
        CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
        floe_ice_commit_stats_t st;
        floe_ice_commit_stats(c, &st);
        merged += st.manifests_merged;
        floe_ice_commit_free(c);
        floe_ice_data_file_clear(&f);
        size_t n = list_len("merge", NULL);
        CHECK_EQ(st.manifests, n);
        if (n > longest) longest = n;
        if (i == 9) CHECK_EQ(n, 1); /* the 10th commit merged 10 into 1 */
    }
    CHECK_EQ(longest, 9);
    CHECK_EQ(merged, 10 + 10 + 10); /* commits 10, 19, 28: 10 each (9 + the merged one) */
    floe_ice_manifest_file_t *ml;
    size_t n = list_len("merge", &ml);
    CHECK_EQ(n, 35 - 28 + 1);
    int64_t live = 0, rows = 0;
    for (size_t i = 0; i < n; i++) {
        live += ml[i].added_files + ml[i].existing_files;
        rows += ml[i].added_rows + ml[i].existing_rows;
        CHECK_EQ(ml[i].deleted_files, 0);
    }
    CHECK_EQ(live, 35);
    CHECK_EQ(rows, 35 * 36 / 2);
    CHECK_EQ(ml[0].added_files, 1);         /* the newest first */
    CHECK_EQ(ml[n - 1].existing_files, 27); /* and the 28th, added by the merging commit */
    CHECK_EQ(ml[n - 1].added_files, 1);
    CHECK_EQ(ml[n - 1].min_sequence_number, 1);
    floe_ice_manifest_files_free(ml, n);
    /* each file keeps the snapshot and sequence number that added it */
    floe_ice_table_t *t = load("merge");
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t *h = floe_ice_metadata_current_snapshot(md);
    CHECK_STR(floe_ice_props_get(&h->summary, "total-data-files"), "35");
    CHECK_STR(floe_ice_props_get(&h->summary, "total-records"), "630");
    floe_ice_scan_t *sc;
    floe_err_t e;
    CHECK(floe_ice_scan_plan(io, md, -1, NULL, 0, &sc, &e) == 0);
    CHECK_EQ(floe_ice_scan_ntasks(sc), 35);
    int wrong = 0;
    for (size_t i = 0; i < floe_ice_scan_ntasks(sc); i++) {
        const floe_ice_scan_task_t *tk = floe_ice_scan_task(sc, i);
        const floe_ice_snapshot_t *s = floe_ice_metadata_snapshot(md, tk->snapshot_id);
        /* rows = commit number = sequence number */
        if (!s || s->sequence_number != tk->sequence_number ||
            tk->sequence_number != tk->file->record_count)
            wrong++;
    }
    CHECK_EQ(wrong, 0);
    floe_ice_scan_free(sc);
    /* the merging snapshot says so in Iceberg's summary keys */
    const floe_ice_snapshot_t *m28 = NULL;
    for (size_t i = 0; i < md->nsnapshots; i++)
        if (md->snapshots[i]->sequence_number == 28) m28 = md->snapshots[i];
    CHECK(m28 && !strcmp(floe_ice_props_get(&m28->summary, "manifests-replaced"), "10"));
    CHECK(m28 && !strcmp(floe_ice_props_get(&m28->summary, "manifests-created"), "1"));
    CHECK(m28 && !strcmp(floe_ice_props_get(&m28->summary, "manifests-kept"), "0"));
    floe_ice_table_free(t);
    CHECK(no_stray_manifests("merge", loc));
    CHECK(table_whole("merge", 35));
}

/* Merging drops entries an older snapshot deleted, keeps this snapshot's
 * own deletes, and stops at the target size; off when disabled. */
static void merge_deletes_target_and_off(void)
{
    const char *props[] = {"commit.manifest.min-count-to-merge=3"};
    const char *loc = create("mdel", "region", props, 1);
    char p[2][600];
    for (int i = 0; i < 2; i++) {
        floe_ice_data_file_t f;
        data_file(&f, loc, "us", 5, 16);
        snprintf(p[i], sizeof p[i], "%s", f.path);
        CHECK(commit("mdel", FLOE_ICE_OP_APPEND, &f, 1, NULL, 0, NULL, NULL) == 0);
    }
    /* a rewrite: the entries it deletes stay in its list, even merged (its
     * list had 3 manifests: merged into one) */
    floe_ice_data_file_t big;
    data_file(&big, loc, "us", 10, 32);
    const char *rm[2] = {p[0], p[1]};
    CHECK(commit("mdel", FLOE_ICE_OP_REWRITE, &big, 1, rm, 2, NULL, NULL) == 0);
    floe_ice_manifest_file_t *ml;
    size_t n = list_len("mdel", &ml);
    int64_t deleted = 0;
    for (size_t i = 0; i < n; i++) deleted += ml[i].deleted_files;
    CHECK_EQ(deleted, 2);
    CHECK_EQ(n, 1);
    floe_ice_manifest_files_free(ml, n);
    /* two appends later the list has 3 again: merged, the old DELETED
     * entries go */
    for (int i = 0; i < 2; i++) {
        floe_ice_data_file_t f;
        data_file(&f, loc, "eu", 1, 16);
        CHECK(commit("mdel", FLOE_ICE_OP_APPEND, &f, 1, NULL, 0, NULL, NULL) == 0);
        CHECK_EQ(list_len("mdel", NULL), i ? 1 : 2);
    }
    n = list_len("mdel", &ml);
    deleted = 0;
    int64_t live = 0;
    for (size_t i = 0; i < n; i++) {
        deleted += ml[i].deleted_files;
        live += ml[i].added_files + ml[i].existing_files;
    }
    CHECK_EQ(n, 1);
    CHECK_EQ(deleted, 0);
    CHECK_EQ(live, 3);
    floe_ice_manifest_files_free(ml, n);
    CHECK(table_whole("mdel", 3));
    CHECK(no_stray_manifests("mdel", loc));

    /* target size below one manifest: every bin holds one, nothing merges */
    const char *tiny[] = {"commit.manifest.min-count-to-merge=2",
                          "commit.manifest.target-size-bytes=100"};
    loc = create("mtiny", NULL, tiny, 2);
    for (int i = 0; i < 6; i++) CHECK(append1("mtiny", loc, 1, NULL, 0) == 0);
    CHECK_EQ(list_len("mtiny", NULL), 6);
    /* a target of about three manifests: the oldest fill bins of three */
    n = list_len("mtiny", &ml);
    char target[64];
    snprintf(target, sizeof target, "commit.manifest.target-size-bytes=%lld",
             (long long)(3 * ml[0].length + 10));
    floe_ice_manifest_files_free(ml, n);
    const char *three[] = {"commit.manifest.min-count-to-merge=100", target};
    loc = create("mthree", NULL, three, 2);
    for (int i = 0; i < 7; i++) CHECK(append1("mthree", loc, 1, NULL, 0) == 0);
    /* packed from the oldest end into bins of about three: the bin with the
     * newest manifest has fewer than 100 and stays, an older bin of more
     * than one is merged at once (Iceberg's rule), so the list stays short
     * even with a minimum count of 100 */
    n = list_len("mthree", &ml);
    CHECK(n >= 2 && n <= 3);
    live = 0;
    for (size_t i = 0; i < n; i++) live += ml[i].added_files + ml[i].existing_files;
    CHECK_EQ(live, 7);
    floe_ice_manifest_files_free(ml, n);
    CHECK(table_whole("mthree", 7));
    CHECK(no_stray_manifests("mthree", loc));

    const char *off[] = {"commit.manifest-merge.enabled=false",
                         "commit.manifest.min-count-to-merge=2"};
    loc = create("moff", NULL, off, 2);
    for (int i = 0; i < 6; i++) CHECK(append1("moff", loc, 1, NULL, 0) == 0);
    CHECK_EQ(list_len("moff", NULL), 6);
}

/* ---- rewrites (compaction's commit) against concurrent commits ---- */

typedef struct race {
    const char *name, *loc;
    int calls;
    const char *region; /* of the appended file; NULL: unpartitioned */
} race_t;

/* Validate callback: another writer appends during the first attempt,
 * after the rewrite loaded the table and before it publishes. */
static int append_meanwhile(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    (void)cur;
    race_t *r = ctx;
    if (r->calls++) return 0;
    floe_ice_data_file_t f;
    data_file(&f, r->loc, r->region, 1, 16);
    if (commit(r->name, FLOE_ICE_OP_APPEND, &f, 1, NULL, 0, NULL, NULL) < 0)
        return floe_err_set(err, FLOE_EIO, "concurrent append failed");
    return 0;
}

static int rewrite(const char *name, const char *loc, const char *const *rm, size_t n, int64_t rows,
                   int64_t base, race_t *race, int *attempts, floe_err_t *e)
{
    floe_ice_data_file_t big;
    data_file(&big, loc, NULL, rows, 64);
    floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", name, FLOE_ICE_OP_REWRITE, e);
    for (size_t i = 0; i < n; i++) floe_ice_commit_remove(c, rm[i], e);
    floe_ice_commit_add(c, &big, e);
    if (base >= 0) floe_ice_commit_set_base(c, base);
    if (race) floe_ice_commit_set_validate(c, append_meanwhile, race);
    int rc = floe_ice_commit_run(c, NULL, e);
    *attempts = floe_ice_commit_attempts(c);
    floe_ice_commit_free(c);
    floe_ice_data_file_clear(&big);
    return rc;
}

static int64_t head_id(const char *name)
{
    floe_ice_table_t *t = load(name);
    int64_t id = t ? floe_ice_table_metadata(t)->current_snapshot_id : -1;
    floe_ice_table_free(t);
    return id;
}

/* A position delete file (a stub body) whose file_path bounds both name
 * data file `of`: it names that file only. */
static void pos_delete_of(floe_ice_data_file_t *pd, const char *loc, const char *of)
{
    data_file(pd, loc, NULL, 1, 16);
    pd->content = FLOE_ICE_CONTENT_POSITION_DELETES;
    floe_ice_col_metrics_t *m = floe_ice_data_file_metrics(pd, 2147483546);
    m->has_lower = m->has_upper = true;
    floe_buf_append(&m->lower, of, strlen(of));
    floe_buf_append(&m->upper, of, strlen(of));
}

/* A compaction planned on one snapshot commits over appends that landed
 * since (before its commit and during it), keeping their files; it fails,
 * final and clean, only when a file it removes is gone, or (given its
 * base) when a delete file added since applies to one it removes. */
static void rewrite_over_concurrent_commits(void)
{
    const char *loc = create("rw", NULL, NULL, 0);
    char a[4][600];
    for (int i = 0; i < 4; i++) CHECK(append1("rw", loc, 10, a[i], sizeof a[i]) == 0);
    int64_t base = head_id("rw");
    CHECK(append1("rw", loc, 5, NULL, 0) == 0); /* between plan and commit */
    race_t race = {"rw", loc, 0, NULL};
    const char *rm01[2] = {a[0], a[1]};
    int attempts;
    floe_err_t e;
    CHECK(rewrite("rw", loc, rm01, 2, 20, base, &race, &attempts, &e) == 0);
    CHECK_EQ(attempts, 2); /* lost to the append made during attempt 1, then re-applied */
    CHECK(table_whole("rw", 2 + 2 + 1)); /* a2, a3, both appends, the new file */
    floe_ice_table_t *t = load("rw");
    const floe_ice_snapshot_t *h = floe_ice_metadata_current_snapshot(floe_ice_table_metadata(t));
    CHECK(h && !strcmp(h->operation, "replace"));
    CHECK_STR(floe_ice_props_get(&h->summary, "total-records"), "46");
    CHECK_STR(floe_ice_props_get(&h->summary, "total-data-files"), "5");
    CHECK_STR(floe_ice_props_get(&h->summary, "deleted-data-files"), "2");
    floe_ice_table_free(t);

    /* another compaction took a2 first: final conflict, nothing published */
    const char *rm2[1] = {a[2]};
    CHECK(rewrite("rw", loc, rm2, 1, 10, -1, NULL, &attempts, &e) == 0);
    base = head_id("rw");
    const char *rm23[2] = {a[2], a[3]};
    CHECK(rewrite("rw", loc, rm23, 2, 20, -1, NULL, &attempts, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    CHECK(!e.retriable);
    CHECK_EQ(attempts, 1);
    CHECK_EQ(head_id("rw"), base);
    CHECK(no_stray_manifests("rw", loc));

    /* a position delete against a3 since the plan (its file_path bounds
     * name a3): with its base given the rewrite refuses (the delete would
     * be lost with a3) */
    floe_ice_data_file_t pd;
    pos_delete_of(&pd, loc, a[3]);
    CHECK(commit("rw", FLOE_ICE_OP_ROW_DELTA, &pd, 1, NULL, 0, NULL, NULL) == 0);
    const char *rm3[1] = {a[3]};
    CHECK(rewrite("rw", loc, rm3, 1, 10, base, NULL, &attempts, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    CHECK(strstr(e.msg, "applies to") != NULL);
    CHECK_EQ(attempts, 1);
    /* planned after it, with a position delete of another file since: it
     * goes through (that delete loses nothing) */
    base = head_id("rw");
    pos_delete_of(&pd, loc, "elsewhere.parquet");
    CHECK(commit("rw", FLOE_ICE_OP_ROW_DELTA, &pd, 1, NULL, 0, NULL, NULL) == 0);
    CHECK(rewrite("rw", loc, rm3, 1, 9, base, NULL, &attempts, &e) == 0);
    /* a base no longer in the history: refused */
    floe_ice_expire_opts_t eo = {.older_than_ms = -1, .keep_last = 1, .delete_files = true};
    CHECK(floe_ice_expire_snapshots(cat, "db", "rw", &eo, NULL, &e) == 0);
    CHECK(append1("rw", loc, 1, NULL, 0) == 0);
    t = load("rw");
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    char live[600];
    floe_ice_scan_t *sc;
    CHECK(floe_ice_scan_plan(io, md, -1, NULL, 0, &sc, &e) == 0);
    snprintf(live, sizeof live, "%s", floe_ice_scan_task(sc, 0)->file->path);
    floe_ice_scan_free(sc);
    floe_ice_table_free(t);
    const char *rml[1] = {live};
    CHECK(rewrite("rw", loc, rml, 1, 1, base, NULL, &attempts, &e) == -1);
    CHECK(strstr(e.msg, "no longer in the history") != NULL);
    CHECK(no_stray_manifests("rw", loc));
}

/* ---- compaction planning ---- */

static void add_sized(const char *name, const char *loc, const char *region, int n, size_t bytes)
{
    for (int i = 0; i < n; i++) {
        floe_ice_data_file_t f;
        data_file(&f, loc, region, 2, bytes);
        CHECK(commit(name, FLOE_ICE_OP_APPEND, &f, 1, NULL, 0, NULL, NULL) == 0);
    }
}

/* Small files per partition, cut in time order into runs near the
 * target; big files, short runs and (unless asked for) files with deletes
 * stay; the budget
 * takes the groups with the most files first; a group commits as a
 * rewrite over a concurrent append. */
static void compaction_plan_groups(void)
{
    const char *loc = create("cp", "region", NULL, 0);
    add_sized("cp", loc, "us", 12, 10);
    add_sized("cp", loc, "eu", 3, 10);
    add_sized("cp", loc, "ap", 8, 10);
    add_sized("cp", loc, "ap", 2, 40); /* at or over 3/4 of the target: not small */
    add_sized("cp", loc, "us", 1, 10);
    floe_ice_table_t *t = load("cp");
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    floe_ice_compaction_opts_t o = {.target_file_bytes = 50, .min_input_files = 4};
    floe_ice_compaction_plan_t *p;
    floe_err_t e;
    CHECK(floe_ice_compaction_plan(io, md, -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_snapshot(p), md->current_snapshot_id);
    CHECK_EQ(floe_ice_compaction_plan_small_files(p), 13 + 3 + 8);
    /* us: 13 files -> runs of 5, 5, 3 (too few); eu: 3 (too few); ap: 5, 3 */
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 3);
    int us = 0, ap = 0;
    for (size_t g = 0; g < floe_ice_compaction_plan_ngroups(p); g++) {
        const floe_ice_compaction_group_t *gr = floe_ice_compaction_plan_group(p, g);
        CHECK_EQ(gr->ntasks, 5);
        CHECK_EQ(gr->bytes, 50);
        CHECK_EQ(gr->records, 10);
        CHECK(gr->npartition == 1 && gr->partition[0].len == 2);
        const char *r = gr->npartition ? (const char *)gr->partition[0].bytes : "";
        us += !strncmp(r, "us", 2);
        ap += !strncmp(r, "ap", 2);
        for (size_t k = 0; k < gr->ntasks; k++) {
            CHECK(floe_ice_value_eq(&gr->tasks[k]->file->partition[0], &gr->partition[0]));
            if (k) CHECK(gr->tasks[k]->sequence_number > gr->tasks[k - 1]->sequence_number);
        }
    }
    CHECK_EQ(us, 2);
    CHECK_EQ(ap, 1);
    /* us's first run holds its oldest files */
    bool oldest = false;
    for (size_t g = 0; g < floe_ice_compaction_plan_ngroups(p); g++)
        oldest |= floe_ice_compaction_plan_group(p, g)->tasks[0]->sequence_number == 1;
    CHECK(oldest);
    floe_ice_compaction_plan_free(p);
    /* a budget of 120 bytes: two groups */
    o.max_bytes = 120;
    CHECK(floe_ice_compaction_plan(io, md, -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 2);
    floe_ice_compaction_plan_free(p);
    floe_ice_table_free(t);

    /* a position delete in eu (its files have deletes now): left out, or
     * planned with with_deletes */
    add_sized("cp", loc, "eu", 2, 10);
    floe_ice_data_file_t pd;
    data_file(&pd, loc, "eu", 1, 4);
    pd.content = FLOE_ICE_CONTENT_POSITION_DELETES;
    floe_ice_col_metrics_t *pm = floe_ice_data_file_metrics(&pd, 2147483546);
    pm->has_lower = pm->has_upper = true; /* it names a file gone since */
    floe_buf_append_str(&pm->lower, "gone.parquet");
    floe_buf_append_str(&pm->upper, "gone.parquet");
    CHECK(commit("cp", FLOE_ICE_OP_ROW_DELTA, &pd, 1, NULL, 0, NULL, NULL) == 0);
    t = load("cp");
    md = floe_ice_table_metadata(t);
    o.max_bytes = 0;
    CHECK(floe_ice_compaction_plan(io, md, -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 3);
    floe_ice_compaction_plan_free(p);
    o.with_deletes = true;
    CHECK(floe_ice_compaction_plan(io, md, -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 4);
    size_t with_del = 0;
    for (size_t g = 0; g < floe_ice_compaction_plan_ngroups(p); g++)
        with_del += floe_ice_compaction_plan_group(p, g)->ndeletes;
    CHECK_EQ(with_del, 5);
    /* it names no file left outside the groups: the commit may drop it */
    CHECK_EQ(floe_ice_compaction_plan_ndrops(p), 1);
    floe_ice_compaction_plan_free(p);
    o.with_deletes = false;

    /* commit the first group as compaction would, with an append landing
     * during the commit */
    CHECK(floe_ice_compaction_plan(io, md, -1, &o, &p, &e) == 0);
    const floe_ice_compaction_group_t *g0 = floe_ice_compaction_plan_group(p, 0);
    floe_ice_data_file_t big;
    char region[8];
    snprintf(region, sizeof region, "%.*s", (int)g0->partition[0].len,
             (const char *)g0->partition[0].bytes);
    data_file(&big, loc, region, g0->records, (size_t)g0->bytes);
    floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", "cp", FLOE_ICE_OP_REWRITE, &e);
    for (size_t k = 0; k < g0->ntasks; k++) floe_ice_commit_remove(c, g0->tasks[k]->file->path, &e);
    floe_ice_commit_add(c, &big, &e);
    floe_ice_commit_set_base(c, floe_ice_compaction_plan_snapshot(p));
    race_t race = {"cp", loc, 0, "us"};
    floe_ice_commit_set_validate(c, append_meanwhile, &race);
    CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
    CHECK_EQ(floe_ice_commit_attempts(c), 2);
    floe_ice_commit_free(c);
    floe_ice_data_file_clear(&big);
    floe_ice_compaction_plan_free(p);
    floe_ice_table_free(t);
    /* 13 + 3 + 8 + 2 + 2 files (and the append), less 5, plus 1 */
    CHECK(table_whole("cp", 28 + 1 - 5 + 1));
    t = load("cp");
    CHECK(floe_ice_compaction_plan(io, floe_ice_table_metadata(t), -1, &o, &p, &e) == 0);
    /* ap's run is one file of 50 now (not small); us's 13 files and the
     * concurrent append make runs of 5, 5 and 4 */
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 3);
    floe_ice_compaction_plan_free(p);
    floe_ice_table_free(t);
}

/* Size tiers: a compacted file waits while the newer small files of its
 * partition are less than 1/ratio of it (they compact among themselves),
 * and joins once they reach that. */
static void compaction_plan_tiers(void)
{
    const char *loc = create("ct", "region", NULL, 0);
    add_sized("ct", loc, "us", 1, 300); /* an earlier compaction's output */
    add_sized("ct", loc, "us", 4, 10);
    floe_ice_table_t *t = load("ct");
    floe_ice_compaction_opts_t o = {.target_file_bytes = 1000, .min_input_files = 4};
    floe_ice_compaction_plan_t *p;
    floe_err_t e;
    /* without tiers: the big file is rewritten with the 4 small ones */
    CHECK(floe_ice_compaction_plan(io, floe_ice_table_metadata(t), -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 1);
    CHECK_EQ(floe_ice_compaction_plan_group(p, 0)->ntasks, 5);
    floe_ice_compaction_plan_free(p);
    /* ratio 4: 40 bytes after a file of 300: it waits, the 4 go alone */
    o.tier_ratio = 4;
    CHECK(floe_ice_compaction_plan(io, floe_ice_table_metadata(t), -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 1);
    CHECK_EQ(floe_ice_compaction_plan_group(p, 0)->ntasks, 4);
    CHECK_EQ(floe_ice_compaction_plan_group(p, 0)->bytes, 40);
    floe_ice_compaction_plan_free(p);
    floe_ice_table_free(t);
    /* 8 more: 120 bytes after it, more than a quarter: it joins */
    add_sized("ct", loc, "us", 8, 10);
    t = load("ct");
    CHECK(floe_ice_compaction_plan(io, floe_ice_table_metadata(t), -1, &o, &p, &e) == 0);
    CHECK_EQ(floe_ice_compaction_plan_ngroups(p), 1);
    CHECK_EQ(floe_ice_compaction_plan_group(p, 0)->ntasks, 13);
    CHECK_EQ(floe_ice_compaction_plan_group(p, 0)->bytes, 420);
    floe_ice_compaction_plan_free(p);
    floe_ice_table_free(t);
}

/* ---- old metadata files ---- */

/* The vN.metadata.json files in a table's metadata folder, as a bit set. */
static uint64_t versions_on_disk(const char *loc)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/metadata", loc);
    char **names;
    size_t n;
    floe_err_t e;
    uint64_t bits = 0;
    CHECK(floe_fileio_list(io, dir, &names, &n, &e) == 0);
    for (size_t i = 0; i < n; i++) {
        int v;
        char tail[32];
        if (sscanf(names[i], "v%d.%31s", &v, tail) == 2 && !strcmp(tail, "metadata.json") && v < 64)
            bits |= 1ULL << v;
    }
    floe_fileio_names_free(names, n);
    return bits;
}

static uint64_t range(int from, int to)
{
    uint64_t b = 0;
    for (int v = from; v <= to; v++) b |= 1ULL << v;
    return b;
}

static int append_with(floe_ice_catalog_t *c_, const char *name, const char *loc,
                       floe_ice_commit_stats_t *st)
{
    floe_ice_data_file_t f;
    data_file(&f, loc, NULL, 1, 16);
    floe_err_t e;
    floe_ice_commit_t *c = floe_ice_commit_new(c_, "db", name, FLOE_ICE_OP_APPEND, &e);
    floe_ice_commit_add(c, &f, &e);
    int rc = floe_ice_commit_run(c, NULL, &e);
    floe_ice_commit_stats(c, st);
    floe_ice_commit_free(c);
    floe_ice_data_file_clear(&f);
    return rc;
}

/* write.metadata.delete-after-commit.enabled with previous-versions-max N:
 * the newest N+1 versions stay, the log names the N before the current
 * one; off by default.  A commit whose version hint could not be written
 * deletes nothing (a reader trusting the hint must find its version). */
static void old_metadata_versions_go(void)
{
    const char *props[] = {"write.metadata.delete-after-commit.enabled=true",
                           "write.metadata.previous-versions-max=3"};
    const char *loc = create("mdv", NULL, props, 2);
    size_t deleted = 0;
    for (int i = 0; i < 20; i++) {
        floe_ice_commit_stats_t st;
        CHECK(append_with(cat, "mdv", loc, &st) == 0);
        deleted += st.metadata_files_deleted;
        /* at most 4 versions at any time */
        CHECK_EQ(__builtin_popcountll(versions_on_disk(loc)), i + 2 < 4 ? i + 2 : 4);
    }
    CHECK_EQ(deleted, 17);
    CHECK_EQ(versions_on_disk(loc), range(18, 21));
    floe_ice_table_t *t = load("mdv");
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    CHECK_EQ(floe_ice_table_version(t), 21);
    CHECK_EQ(md->nmetadata_log, 3);
    for (size_t i = 0; i < md->nmetadata_log; i++) CHECK(exists(md->metadata_log[i].file));
    CHECK(strstr(md->metadata_log[0].file, "/v18.metadata.json") != NULL);
    floe_ice_table_free(t);
    CHECK(table_whole("mdv", 20));

    /* the ops of one commit; then the same commit with its hint write failing */
    floe_err_t e;
    floe_fileio_t *fio = floe_fileio_fault_new(io, &e);
    floe_ice_catalog_t *fcat = floe_ice_catalog_fs_new(fio, root, &e);
    floe_ice_commit_stats_t st;
    floe_fileio_fault_disarm(fio);
    CHECK(append_with(fcat, "mdv", loc, &st) == 0); /* v22: v18 goes */
    CHECK_EQ(st.metadata_files_deleted, 1);
    uint64_t ops = floe_fileio_fault_ops(fio);
    floe_fileio_fault_arm(fio, ops - 1, FLOE_FAULT_FAIL); /* the hint's close */
    floe_diag_set_level(FLOE_DIAG_ERROR);
    CHECK(append_with(fcat, "mdv", loc, &st) == 0); /* v23 */
    floe_diag_set_level(FLOE_DIAG_INFO);
    CHECK(floe_fileio_fault_fired(fio));
    CHECK_EQ(st.metadata_files_deleted, 0);
    CHECK_EQ(versions_on_disk(loc), range(19, 23));
    floe_fileio_fault_disarm(fio);
    CHECK(append_with(fcat, "mdv", loc, &st) == 0); /* v24: v20 goes, v19 stays behind */
    CHECK_EQ(versions_on_disk(loc), range(19, 19) | range(21, 24));
    floe_ice_catalog_free(fcat);
    floe_fileio_free(fio);
    /* orphan removal takes what fell behind */
    floe_ice_orphan_result_t orr;
    floe_ice_orphan_opts_t oo = orphan_opts(0);
    CHECK(floe_ice_remove_orphans(cat, "db", "mdv", &oo, &orr, &e) == 0);
    floe_ice_orphan_result_clear(&orr);
    CHECK_EQ(versions_on_disk(loc), range(21, 24));
    CHECK(table_whole("mdv", 23));

    /* default: every version stays (Iceberg's default), the log bounded at 100 */
    loc = create("mdkeep", NULL, NULL, 0);
    for (int i = 0; i < 5; i++) CHECK(append_with(cat, "mdkeep", loc, &st) == 0);
    CHECK_EQ(versions_on_disk(loc), range(1, 6));
}

TEST_MAIN({
    snprintf(root, sizeof root, "/tmp/floe-ice-maint-%d", (int)getpid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0) return 1;
    floe_err_t e;
    io = floe_fileio_local_new(&e);
    cat = floe_ice_catalog_fs_new(io, root, &e);
    RUN(reach_live_and_all);
    RUN(reach_reads_each_manifest_once);
    RUN(orphans_of_a_dead_run);
    RUN(orphans_never_truncate);
    RUN(expire_from_table_properties);
    RUN(expire_protects_offsets_and_deletes_rewritten);
    RUN(expire_deletes_in_one_batch);
    RUN(expire_races_appends);
    RUN(merge_bounds_the_list);
    RUN(merge_deletes_target_and_off);
    RUN(old_metadata_versions_go);
    RUN(rewrite_over_concurrent_commits);
    RUN(compaction_plan_groups);
    RUN(compaction_plan_tiers);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    if (!t_tests_failed && system(cmd) != 0) return 1;
})
