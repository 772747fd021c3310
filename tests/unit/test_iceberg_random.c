/* Model-based test: random sequences of appends, position deletes,
 * equality deletes, rewrites, schema and spec evolutions, expirations and
 * orphan removals, with manifest merging at a random small minimum count
 * and target size (so merges happen every few commits, across specs and
 * with deleted entries).  After every step the rows a reader gets from floe's scan plan (data
 * files minus the delete files the plan says apply) must equal an
 * in-memory model of the live rows.  The test knows what each file holds
 * (row ids by position); data files on disk are placeholders because
 * planning never opens them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "iceberg/maintain.h"
#include "iceberg/scan.h"
#include "iceberg/snapshot.h"
#include "util/diag.h"

typedef struct content {
    char *path;
    floe_ice_content_t kind;
    int64_t *ids;
    size_t n;     /* data: row ids by position; eq: deleted ids; pos: positions */
    char *target; /* pos deletes: data file */
} content_t;

static content_t *files;
static size_t nfiles;
/* the model: live rows, each the row at (content index, position) */
typedef struct row {
    int64_t id;
    size_t file, pos;
} row_t;
static row_t *live;
static size_t nlive;
static uint64_t rng;
static char root[256];
static int fileno_;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const content_t *find(const char *path)
{
    for (size_t i = 0; i < nfiles; i++)
        if (strcmp(files[i].path, path) == 0) return &files[i];
    return NULL;
}

static bool has_(const int64_t *v, size_t n, int64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

static void live_add(int64_t id, size_t file, size_t pos)
{
    live = realloc(live, (nlive + 1) * sizeof *live);
    live[nlive++] = (row_t){id, file, pos};
}

/* remove rows matching (file, pos) when file != SIZE_MAX, else every row with id */
static void live_remove(size_t file, size_t pos, int64_t id)
{
    for (size_t i = 0; i < nlive;) {
        bool hit =
            file != SIZE_MAX ? (live[i].file == file && live[i].pos == pos) : live[i].id == id;
        if (hit) live[i] = live[--nlive];
        else
            i++;
    }
}

static size_t index_of(const content_t *c)
{
    return (size_t)(c - files);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static content_t *new_content(floe_ice_content_t kind, size_t n)
{
    files = realloc(files, (nfiles + 1) * sizeof *files);
    content_t *c = &files[nfiles++];
    memset(c, 0, sizeof *c);
    char p[400];
    snprintf(p, sizeof p, "%s/db/rand/data/%05d.parquet", root, fileno_++);
    c->path = strdup(p);
    c->kind = kind;
    c->ids = calloc(n ? n : 1, sizeof *c->ids);
    c->n = n;
    return c;
}

static void describe(floe_fileio_t *io, floe_ice_data_file_t *f, const content_t *c,
                     const floe_ice_spec_t *spec, const char *region)
{
    floe_err_t e;
    CHECK(floe_fileio_write(io, c->path, "PAR1", 4, 0, &e) == 0);
    floe_ice_data_file_init(f);
    floe_ice_data_file_set_path(f, c->path, "PARQUET");
    f->content = c->kind;
    f->record_count = (int64_t)c->n;
    f->file_size = 4;
    f->spec_id = spec->spec_id;
    if (spec->nfields) {
        f->partition = calloc(1, sizeof *f->partition);
        f->npartition = 1;
        floe_ice_value_set_bytes(&f->partition[0], FLOE_ICE_STRING, region, strlen(region));
    }
    if (c->kind == FLOE_ICE_CONTENT_EQUALITY_DELETES) {
        f->equality_ids = malloc(sizeof(int32_t));
        f->equality_ids[0] = 1;
        f->nequality_ids = 1;
    }
}

static const char *region_of(const char *path, const floe_ice_scan_t *s)
{
    for (size_t i = 0; i < floe_ice_scan_ntasks(s); i++) {
        const floe_ice_scan_task_t *t = floe_ice_scan_task(s, i);
        if (strcmp(t->file->path, path) == 0) {
            static char r[8];
            if (t->file->npartition && !t->file->partition[0].is_null) {
                snprintf(r, sizeof r, "%.*s", (int)t->file->partition[0].len,
                         (const char *)t->file->partition[0].bytes);
                return r;
            }
            return NULL;
        }
    }
    return NULL;
}

/* Rows a reader gets from the plan; compared with the model. */
static bool check_scan(floe_ice_catalog_t *cat, floe_ice_scan_t **out, int step)
{
    floe_err_t e;
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(cat, "db", "rand", &t, &e) < 0) return false;
    floe_ice_scan_t *s;
    bool ok = floe_ice_scan_plan(floe_ice_catalog_io(cat), floe_ice_table_metadata(t), -1, NULL, 0,
                                 &s, &e) == 0;
    floe_ice_table_free(t);
    if (!ok) {
        fprintf(stderr, "plan: %s\n", e.msg);
        return false;
    }
    int64_t *rows = NULL;
    size_t nrows = 0;
    for (size_t i = 0; i < floe_ice_scan_ntasks(s); i++) {
        const floe_ice_scan_task_t *tk = floe_ice_scan_task(s, i);
        const content_t *dc = find(tk->file->path);
        bool ex = false;
        floe_fileio_exists(floe_ice_catalog_io(cat), tk->file->path, &ex, &e);
        if (!dc || !ex) {
            ok = false;
            continue;
        }
        for (size_t p = 0; p < dc->n; p++) {
            bool deleted = false;
            for (size_t d = 0; d < tk->ndeletes; d++) {
                const content_t *x = find(tk->deletes[d]->path);
                if (!x) {
                    ok = false;
                    continue;
                }
                if (x->kind == FLOE_ICE_CONTENT_POSITION_DELETES &&
                    strcmp(x->target, dc->path) == 0 && has_(x->ids, x->n, (int64_t)p))
                    deleted = true;
                if (x->kind == FLOE_ICE_CONTENT_EQUALITY_DELETES && has_(x->ids, x->n, dc->ids[p]))
                    deleted = true;
            }
            if (!deleted) {
                rows = realloc(rows, (nrows + 1) * sizeof *rows);
                rows[nrows++] = dc->ids[p];
            }
        }
    }
    int64_t *want = malloc((nlive ? nlive : 1) * sizeof *want);
    for (size_t i = 0; i < nlive; i++) want[i] = live[i].id;
    if (nrows > 1) qsort(rows, nrows, sizeof *rows, cmp64);
    if (nlive > 1) qsort(want, nlive, sizeof *want, cmp64);
    if (nrows != nlive || (nrows && memcmp(rows, want, nrows * sizeof *rows) != 0)) {
        fprintf(stderr, "step %d: scan has %zu rows, model %zu\n", step, nrows, nlive);
        ok = false;
    }
    free(rows);
    free(want);
    *out = s;
    return ok;
}

static size_t manifests_merged(const floe_ice_commit_t *c)
{
    floe_ice_commit_stats_t st;
    floe_ice_commit_stats(c, &st);
    return st.manifests_merged;
}

/* Every file a snapshot of the table reads is on disk (live entries: a
 * DELETED one may name a file expiry removed with its last reader). */
static bool all_present(floe_ice_catalog_t *cat)
{
    floe_err_t e;
    floe_ice_table_t *t;
    if (floe_ice_catalog_load_table(cat, "db", "rand", &t, &e) < 0) return false;
    floe_ice_reach_t *r = floe_ice_reach_new(true, &e);
    bool ok = r && floe_ice_reach_add_table(r, floe_ice_catalog_io(cat), t, &e) == 0;
    for (size_t i = 0; ok && i < floe_ice_reach_count(r); i++) {
        bool ex = false;
        const char *p = floe_ice_reach_file(r, i).path;
        if (floe_fileio_exists(floe_ice_catalog_io(cat), p, &ex, &e) < 0 || !ex) {
            fprintf(stderr, "missing %s\n", p);
            ok = false;
        }
    }
    floe_ice_reach_free(r);
    floe_ice_table_free(t);
    return ok;
}

static void run_seed(uint64_t seed)
{
    rng = seed;
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "region", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, r);
    floe_ice_props_t props = {0};
    char v[32];
    snprintf(v, sizeof v, "%d", 2 + (int)(rnd() % 4));
    floe_ice_props_set(&props, "commit.manifest.min-count-to-merge", v);
    snprintf(v, sizeof v, "%d", rnd() % 2 ? 8 << 20 : 12000 + (int)(rnd() % 30000));
    floe_ice_props_set(&props, "commit.manifest.target-size-bytes", v);
    CHECK(floe_ice_catalog_create_table(cat, "db", "rand", s, NULL, NULL, &props, NULL, &e) == 0);
    floe_ice_props_clear(&props);
    int64_t next_id = 0;
    size_t merged = 0;
    int bad_steps = 0;
    static const char *regions[] = {"a", "b"};
    floe_ice_scan_t *sc = NULL;
    for (int step = 0; step < 60; step++) {
        floe_ice_table_t *t;
        CHECK(floe_ice_catalog_load_table(cat, "db", "rand", &t, &e) == 0);
        const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
        const floe_ice_spec_t *spec = floe_ice_metadata_default_spec(md);
        const floe_ice_spec_t *spec0 = floe_ice_metadata_spec(md, 0);
        int op = (int)(rnd() % 100);
        size_t ntasks = sc ? floe_ice_scan_ntasks(sc) : 0;
        if (op < 35 || ntasks == 0) {
            /* append 1-2 files; sometimes re-append an id deleted earlier */
            floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", "rand", FLOE_ICE_OP_APPEND, &e);
            int nf = 1 + (int)(rnd() % 2);
            for (int k = 0; k < nf; k++) {
                size_t n = 1 + rnd() % 5;
                content_t *ct = new_content(FLOE_ICE_CONTENT_DATA, n);
                for (size_t i = 0; i < n; i++) {
                    /* sometimes reuse an old id: equality deletes must not hit newer rows */
                    ct->ids[i] = (i == 0 && next_id > 3 && rnd() % 4 == 0)
                                     ? (int64_t)(rnd() % (uint64_t)next_id)
                                     : next_id++;
                    live_add(ct->ids[i], index_of(ct), i);
                }
                floe_ice_data_file_t f;
                describe(io, &f, ct, spec, regions[rnd() % 2]);
                floe_ice_commit_add(c, &f, &e);
                floe_ice_data_file_clear(&f);
            }
            CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
            merged += manifests_merged(c);
            floe_ice_commit_free(c);
        } else if (op < 50) {
            /* position deletes against one live data file */
            const floe_ice_scan_task_t *tk = floe_ice_scan_task(sc, rnd() % ntasks);
            size_t di = index_of(find(tk->file->path));
            content_t *pd = new_content(FLOE_ICE_CONTENT_POSITION_DELETES, 0);
            const content_t *dc = &files[di]; /* files may have moved */
            pd->target = strdup(dc->path);
            for (size_t p = 0; p < dc->n; p++)
                if (rnd() % 2) {
                    pd->ids[pd->n] = (int64_t)p;
                    pd->ids = realloc(pd->ids, (pd->n + 2) * sizeof *pd->ids);
                    pd->n++;
                    live_remove(di, p, 0); /* no-op if already deleted */
                }
            const floe_ice_spec_t *ts = floe_ice_metadata_spec(md, tk->file->spec_id);
            floe_ice_data_file_t f;
            describe(io, &f, pd, ts, ts->nfields ? region_of(dc->path, sc) : "");
            floe_ice_commit_t *c =
                floe_ice_commit_new(cat, "db", "rand", FLOE_ICE_OP_ROW_DELTA, &e);
            floe_ice_commit_add(c, &f, &e);
            CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
            merged += manifests_merged(c);
            floe_ice_commit_free(c);
            floe_ice_data_file_clear(&f);
        } else if (op < 62) {
            /* global equality delete of some ids (live or not), in spec 0 */
            size_t n = 1 + rnd() % 3;
            content_t *ed = new_content(FLOE_ICE_CONTENT_EQUALITY_DELETES, n);
            for (size_t i = 0; i < n; i++) {
                ed->ids[i] = nlive && rnd() % 3 ? live[rnd() % nlive].id
                                                : (int64_t)(rnd() % (uint64_t)(next_id + 1));
                live_remove(SIZE_MAX, 0, ed->ids[i]);
            }
            floe_ice_data_file_t f;
            describe(io, &f, ed, spec0, "");
            floe_ice_commit_t *c =
                floe_ice_commit_new(cat, "db", "rand", FLOE_ICE_OP_ROW_DELTA, &e);
            floe_ice_commit_add(c, &f, &e);
            floe_ice_data_file_clear(&f);
            if (rnd() % 2) {
                /* same commit: a data file holding a deleted id (same sequence
                 * number: the equality delete must not apply) and a position
                 * delete of its second row (same sequence number: applies) */
                int64_t first = ed->ids[0];
                content_t *nd = new_content(FLOE_ICE_CONTENT_DATA, 2);
                size_t ind = index_of(nd);
                nd->ids[0] = first;
                nd->ids[1] = next_id++;
                live_add(first, ind, 0);
                content_t *pd = new_content(FLOE_ICE_CONTENT_POSITION_DELETES, 1);
                pd->ids[0] = 1;
                pd->target = strdup(files[ind].path);
                const char *rg = regions[rnd() % 2];
                describe(io, &f, &files[ind], spec, rg);
                floe_ice_commit_add(c, &f, &e);
                floe_ice_data_file_clear(&f);
                describe(io, &f, pd, spec, rg);
                floe_ice_commit_add(c, &f, &e);
            }
            CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
            merged += manifests_merged(c);
            floe_ice_commit_free(c);
            floe_ice_data_file_clear(&f);
        } else if (op < 75 && ntasks >= 2) {
            /* rewrite: two live data files of one partition into one holding their live rows */
            size_t a = rnd() % ntasks, b = rnd() % ntasks;
            const floe_ice_scan_task_t *ta = floe_ice_scan_task(sc, a),
                                       *tb = floe_ice_scan_task(sc, b);
            bool same = a != b && ta->file->spec_id == tb->file->spec_id &&
                        (ta->file->npartition == 0 ||
                         floe_ice_value_eq(&ta->file->partition[0], &tb->file->partition[0]));
            if (same) {
                size_t ia = index_of(find(ta->file->path)), ib = index_of(find(tb->file->path));
                content_t *nw = new_content(FLOE_ICE_CONTENT_DATA, 0);
                size_t inw = index_of(nw);
                const content_t *ca = &files[ia], *cb = &files[ib];
                /* the live rows of both files move to the new one */
                for (size_t i = 0; i < nlive; i++)
                    if (live[i].file == ia || live[i].file == ib) {
                        nw->ids = realloc(nw->ids, (nw->n + 1) * sizeof *nw->ids);
                        nw->ids[nw->n] = live[i].id;
                        live[i].file = inw;
                        live[i].pos = nw->n++;
                    }
                const floe_ice_spec_t *ts = floe_ice_metadata_spec(md, ta->file->spec_id);
                floe_ice_data_file_t f;
                describe(io, &f, nw, ts, ts->nfields ? region_of(ca->path, sc) : "");
                floe_ice_commit_t *c =
                    floe_ice_commit_new(cat, "db", "rand", FLOE_ICE_OP_REWRITE, &e);
                floe_ice_commit_remove(c, ca->path, &e);
                floe_ice_commit_remove(c, cb->path, &e);
                if (nw->n) floe_ice_commit_add(c, &f, &e);
                CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
                merged += manifests_merged(c);
                floe_ice_commit_free(c);
                floe_ice_data_file_clear(&f);
            }
        } else if (op < 82) {
            /* schema evolution: add a column */
            floe_ice_schema_t *ns = floe_ice_schema_dup(floe_ice_metadata_current_schema(md));
            int32_t last = md->last_column_id;
            char nm[32];
            snprintf(nm, sizeof nm, "c%d", step);
            CHECK(floe_ice_schema_add_column(ns, &last, NULL, nm, floe_ice_type_prim(FLOE_ICE_INT),
                                             NULL, &e) == 0);
            floe_ice_req_t rq = {.kind = FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID,
                                 .value = md->current_schema_id};
            floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SCHEMA, .schema = ns},
                                        {.kind = FLOE_ICE_UP_SET_CURRENT_SCHEMA, .id = -1}};
            CHECK(floe_ice_catalog_commit(cat, "db", "rand", &rq, 1, ups, 2, NULL, &e) == 0);
            floe_ice_schema_free(ns);
        } else if (op < 88) {
            /* spec evolution: toggle identity(region) */
            int32_t lp = md->last_partition_id;
            floe_ice_spec_t *sp = floe_ice_spec_parse(floe_ice_metadata_current_schema(md),
                                                      spec->nfields ? "" : "region", 0, &lp, &e);
            floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SPEC, .spec = sp},
                                        {.kind = FLOE_ICE_UP_SET_DEFAULT_SPEC, .id = -1}};
            CHECK(floe_ice_catalog_commit(cat, "db", "rand", NULL, 0, ups, 2, NULL, &e) == 0);
            floe_ice_spec_free(sp);
        } else if (op < 94) {
            /* nothing reachable may go (what expiry removed is not listed) */
            floe_ice_orphan_opts_t oo = {.min_age_ms = 0};
            floe_ice_orphan_result_t orr;
            CHECK(floe_ice_remove_orphans(cat, "db", "rand", &oo, &orr, &e) == 0);
            CHECK_EQ(orr.failed, 0);
            floe_ice_orphan_result_clear(&orr);
            CHECK(all_present(cat));
        } else {
            floe_ice_expire_opts_t eo = {
                .older_than_ms = -1, .keep_last = 1 + (int)(rnd() % 3), .delete_files = true};
            CHECK(floe_ice_expire_snapshots(cat, "db", "rand", &eo, NULL, &e) == 0);
        }
        floe_ice_table_free(t);
        floe_ice_scan_free(sc);
        sc = NULL;
        if (!check_scan(cat, &sc, step)) bad_steps++;
    }
    floe_ice_scan_free(sc);
    CHECK_EQ(bad_steps, 0);
    CHECK(merged > 0);
    fprintf(stderr, "# %zu manifests merged\n", merged);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    for (size_t i = 0; i < nfiles; i++) {
        free(files[i].path);
        free(files[i].ids);
        free(files[i].target);
    }
    free(files);
    files = NULL;
    nfiles = 0;
    free(live);
    live = NULL;
    nlive = 0;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s/db", root);
    CHECK(system(cmd) == 0);
}

static void random_seed_1(void)
{
    run_seed(0x9e3779b97f4a7c15ULL);
}
static void random_seed_2(void)
{
    run_seed(12345);
}
static void random_seed_3(void)
{
    run_seed(0xdeadbeefULL);
}

TEST_MAIN({
    snprintf(root, sizeof root, "/tmp/floe-ice-random-%d", (int)getpid());
    floe_diag_set_level(FLOE_DIAG_WARN);
    RUN(random_seed_1);
    RUN(random_seed_2);
    RUN(random_seed_3);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0) return 1;
})
