/* Iceberg tables end to end in C: filesystem catalog, manifests and
 * manifest lists, fast append, row delta, rewrite, conflicts and retry,
 * expiry, scan planning with deletes and pruning, and fault injection at
 * every operation of a commit. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "http/rest.h"
#include "iceberg/catalog_rest_int.h"
#include "iceberg/scan.h"
#include "iceberg/snapshot.h"
#include "util/diag.h"

static char root[256];
static int file_counter;

static void rm_rf(const char *p)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0) fprintf(stderr, "rm failed\n");
}

/* schema: 1 id long (required), 2 region string, 3 ts timestamptz */
static floe_ice_schema_t *schema3(void)
{
    floe_ice_type_t *r = floe_ice_type_struct();
    floe_ice_struct_add(r, 1, "id", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(r, 2, "region", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(r, 3, "ts", false, floe_ice_type_prim(FLOE_ICE_TIMESTAMPTZ), NULL);
    return floe_ice_schema_new(0, r);
}

/* A data file (its bytes are not Parquet: planning never opens data files). */
static void make_file(floe_fileio_t *io, floe_ice_data_file_t *f, const char *table_dir,
                      floe_ice_content_t content, int64_t rows, const char *region)
{
    floe_ice_data_file_init(f);
    char p[512];
    snprintf(p, sizeof p, "%s/data/f%d.parquet", table_dir, file_counter++);
    floe_ice_data_file_set_path(f, p, "PARQUET");
    floe_err_t e;
    CHECK(floe_fileio_write(io, p, "PAR1", 4, 0, &e) == 0);
    f->content = content;
    f->record_count = rows;
    f->file_size = 4;
    if (content == FLOE_ICE_CONTENT_EQUALITY_DELETES) {
        f->equality_ids = malloc(sizeof(int32_t));
        f->equality_ids[0] = 1;
        f->nequality_ids = 1;
    }
    if (region) {
        f->partition = calloc(1, sizeof *f->partition);
        floe_ice_value_set_bytes(&f->partition[0], FLOE_ICE_STRING, region, strlen(region));
        f->npartition = 1;
    }
    floe_ice_col_metrics_t *m = floe_ice_data_file_metrics(f, 1);
    m->values = rows;
    m->nulls = 0;
    m->size = 10;
    floe_ice_value_t lo = {.kind = FLOE_ICE_LONG, .v.l = 0},
                     hi = {.kind = FLOE_ICE_LONG, .v.l = rows - 1};
    floe_ice_value_serialize(&lo, &m->lower, &e);
    floe_ice_value_serialize(&hi, &m->upper, &e);
    m->has_lower = m->has_upper = true;
    f->split_offsets = malloc(sizeof(int64_t));
    f->split_offsets[0] = 4;
    f->nsplit_offsets = 1;
}

static floe_ice_scan_t *scan_of(floe_ice_catalog_t *cat, const char *name)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "db", name, &t, &e) < 0) return NULL;
    floe_ice_scan_t *s = NULL;
    if (floe_ice_scan_plan(floe_ice_catalog_io(cat), floe_ice_table_metadata(t), -1, NULL, 0, &s,
                           &e) < 0)
        fprintf(stderr, "scan: %s\n", e.msg);
    floe_ice_table_free(t);
    return s;
}

static int append_files(floe_ice_catalog_t *cat, const char *name, floe_ice_data_file_t *files,
                        size_t n, floe_err_t *e)
{
    floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", name, FLOE_ICE_OP_APPEND, e);
    for (size_t i = 0; i < n; i++) floe_ice_commit_add(c, &files[i], e);
    floe_ice_commit_set_summary(c, "floe.offsets", "{\"0\":10}", e);
    int rc = floe_ice_commit_run(c, NULL, e);
    floe_ice_commit_free(c);
    return rc;
}

static void catalog_basics(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_schema_t *s = schema3();
    CHECK(floe_ice_catalog_create_namespace(cat, "db", &e) == 0);
    CHECK(floe_ice_catalog_create_namespace(cat, "db", &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    floe_ice_table_t *t = NULL;
    CHECK(floe_ice_catalog_create_table(cat, "db", "t1", s, NULL, NULL, NULL, &t, &e) == 0);
    CHECK(t && floe_ice_table_version(t) == 1);
    floe_ice_table_free(t);
    CHECK(floe_ice_catalog_create_table(cat, "db", "t1", s, NULL, NULL, NULL, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    CHECK(floe_ice_catalog_create_table(cat, "db", "bad.name", s, NULL, NULL, NULL, NULL, &e) ==
          -1);
    CHECK(floe_ice_catalog_create_table(cat, "db", "t2", s, NULL, NULL, NULL, NULL, &e) == 0);
    char **names;
    size_t n;
    CHECK(floe_ice_catalog_list_tables(cat, "db", &names, &n, &e) == 0);
    CHECK(n == 2 && strcmp(names[0], "t1") == 0 && strcmp(names[1], "t2") == 0);
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_list_namespaces(cat, &names, &n, &e) == 0);
    CHECK(n == 1 && strcmp(names[0], "db") == 0);
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_drop_namespace(cat, "db", &e) == -1);
    /* a commit through the catalog: set a property, with requirements */
    CHECK(floe_ice_catalog_load_table(cat, "db", "t2", &t, &e) == 0);
    floe_ice_req_t rq = {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID};
    memcpy(rq.uuid, floe_ice_table_metadata(t)->table_uuid, 37);
    floe_ice_update_t up = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_ice_props_set(&up.props, "write.metadata.previous-versions-max", "2");
    floe_ice_table_t *t2 = NULL;
    CHECK(floe_ice_catalog_commit(cat, "db", "t2", &rq, 1, &up, 1, &t2, &e) == 0);
    CHECK(t2 && floe_ice_table_version(t2) == 2 && floe_ice_table_metadata(t2)->nmetadata_log == 1);
    floe_ice_table_free(t2);
    for (int i = 0; i < 3; i++)
        CHECK(floe_ice_catalog_commit(cat, "db", "t2", &rq, 1, &up, 1, NULL, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "db", "t2", &t2, &e) == 0);
    CHECK(t2 && floe_ice_table_version(t2) == 5 && floe_ice_table_metadata(t2)->nmetadata_log == 2);
    floe_ice_table_free(t2);
    floe_ice_props_clear(&up.props);
    rq.uuid[0] = rq.uuid[0] == 'a' ? 'b' : 'a';
    floe_ice_update_t up2 = {.kind = FLOE_ICE_UP_SET_LOCATION, .str = "/elsewhere"};
    CHECK(floe_ice_catalog_commit(cat, "db", "t2", &rq, 1, &up2, 1, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    floe_ice_table_free(t);
    /* the hint may lag: loading probes past it */
    char hint[512];
    snprintf(hint, sizeof hint, "%s/db/t2/metadata/version-hint.text", root);
    CHECK(floe_fileio_write(io, hint, "3", 1, 0, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "db", "t2", &t2, &e) == 0);
    CHECK(t2 && floe_ice_table_version(t2) == 5);
    floe_ice_table_free(t2);
    CHECK(floe_ice_catalog_drop_table(cat, "db", "t2", true, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "db", "t2", &t2, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

/* Namespace properties, rename, register and create-from-metadata: what
 * the REST catalog server asks of the filesystem catalog. */
static void catalog_names(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_schema_t *s = schema3();
    CHECK(floe_ice_catalog_create_namespace(cat, "na", &e) == 0);
    CHECK(floe_ice_catalog_create_namespace(cat, "nb", &e) == 0);
    floe_ice_props_t p = {0}, up = {0}, rm = {0};
    CHECK(floe_ice_catalog_load_namespace(cat, "na", &p, &e) == 0);
    CHECK_EQ(p.n, 0);
    floe_ice_props_set(&up, "owner", "x");
    floe_ice_props_set(&up, "tier", "1");
    CHECK(floe_ice_catalog_update_namespace(cat, "na", &up, NULL, &e) == 0);
    floe_ice_props_clear(&up);
    floe_ice_props_set(&up, "tier", "2");
    floe_ice_props_set(&rm, "owner", "");
    floe_ice_props_set(&rm, "never", "");
    CHECK(floe_ice_catalog_update_namespace(cat, "na", &up, &rm, &e) == 0);
    CHECK(floe_ice_catalog_load_namespace(cat, "na", &p, &e) == 0);
    CHECK(p.n == 1 && !strcmp(floe_ice_props_get(&p, "tier"), "2"));
    CHECK(floe_ice_catalog_load_namespace(cat, "nope", &p, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(floe_ice_catalog_update_namespace(cat, "nope", &up, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    /* a namespace with properties is still listed, and its tables too */
    floe_ice_table_t *t = NULL, *t2 = NULL;
    CHECK(floe_ice_catalog_create_table(cat, "na", "t", s, NULL, NULL, NULL, &t, &e) == 0);
    floe_ice_update_t su = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_ice_props_set(&su.props, "k", "v");
    CHECK(floe_ice_catalog_commit(cat, "na", "t", NULL, 0, &su, 1, NULL, &e) == 0);
    floe_ice_props_clear(&su.props);
    /* rename: the new name holds the current metadata as version 1 */
    CHECK(floe_ice_catalog_rename_table(cat, "na", "t", "nb", "u", &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "na", "t", &t2, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(floe_ice_catalog_load_table(cat, "nb", "u", &t2, &e) == 0);
    CHECK(t2 && floe_ice_table_version(t2) == 1);
    CHECK(t2 &&
          !strcmp(floe_ice_table_metadata(t2)->table_uuid, floe_ice_table_metadata(t)->table_uuid));
    CHECK(t2 && !strcmp(floe_ice_props_get(&floe_ice_table_metadata(t2)->properties, "k"), "v"));
    CHECK(t2 && floe_ice_table_metadata(t2)->nmetadata_log == 0);
    CHECK(floe_ice_catalog_rename_table(cat, "nb", "u", "none", "u", &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(floe_ice_catalog_create_table(cat, "na", "w", s, NULL, NULL, NULL, NULL, &e) == 0);
    CHECK(floe_ice_catalog_rename_table(cat, "na", "w", "nb", "u", &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    CHECK(floe_ice_catalog_rename_table(cat, "na", "gone", "nb", "x", &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    /* register: another name for the file a table was loaded from */
    floe_ice_table_t *r = NULL;
    CHECK(floe_ice_catalog_register_table(cat, "na", "reg", floe_ice_table_metadata_location(t2),
                                          &r, &e) == 0);
    CHECK(r && floe_ice_table_version(r) == 1 &&
          !strcmp(floe_ice_table_metadata(r)->table_uuid, floe_ice_table_metadata(t)->table_uuid));
    floe_ice_table_free(r);
    CHECK(floe_ice_catalog_register_table(cat, "na", "reg", floe_ice_table_metadata_location(t2),
                                          NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    char missing[512];
    snprintf(missing, sizeof missing, "%s/no/such/v1.metadata.json", root);
    CHECK(floe_ice_catalog_register_table(cat, "na", "reg2", missing, NULL, &e) == -1);
    /* create from metadata built by the caller; a missing namespace is
     * ENOENT, not made on the fly */
    CHECK(floe_ice_catalog_create_from(cat, "nb", "copy", floe_ice_table_metadata(t), &r, &e) == 0);
    CHECK(r && floe_ice_table_version(r) == 1);
    floe_ice_table_free(r);
    CHECK(floe_ice_catalog_create_from(cat, "none", "copy", floe_ice_table_metadata(t), NULL, &e) ==
          -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    char *loc = NULL;
    CHECK(floe_ice_catalog_table_location(cat, "nb", "copy", &loc, &e) == 0);
    char want[512];
    snprintf(want, sizeof want, "%s/nb/copy", root);
    CHECK(loc && !strcmp(loc, want));
    free(loc);
    floe_ice_table_free(t);
    floe_ice_table_free(t2);
    floe_ice_props_clear(&p);
    floe_ice_props_clear(&up);
    floe_ice_props_clear(&rm);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

static char *file_text(floe_fileio_t *io, const char *path)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t e;
    char *t = floe_fileio_read(io, path, 1 << 24, &b, &e) == 0 ? floe_buf_cstr(&b) : NULL;
    t = t ? strdup(t) : NULL;
    floe_buf_free(&b);
    return t;
}

/* The metadata cache: a load of an unchanged table shares the parsed
 * metadata and the file's own text; a commit's result and the next load
 * come from it; a dropped and re-created name is never served stale; a
 * budget too small keeps nothing; 0 turns it off. */
static void catalog_metadata_cache(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_schema_t *s = schema3();
    floe_ice_catalog_cache_metadata(cat, 64 << 20);
    CHECK(floe_ice_catalog_create_table(cat, "cc", "t", s, NULL, NULL, NULL, NULL, &e) == 0);
    floe_ice_table_t *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0;
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &a, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &b, &e) == 0);
    const char *ta = a ? floe_ice_table_metadata_text(a, &la) : NULL;
    CHECK(ta && b && ta == floe_ice_table_metadata_text(b, &lb) && la == lb);
    CHECK(a && b && floe_ice_table_metadata(a) == floe_ice_table_metadata(b));
    char *ft = a ? file_text(io, floe_ice_table_metadata_location(a)) : NULL;
    CHECK(ft && ta && !strcmp(ft, ta) && strlen(ft) == la);
    free(ft);
    /* a commit on the shared metadata copies it; its result is cached */
    floe_ice_update_t up = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_ice_props_set(&up.props, "k", "v");
    CHECK(floe_ice_catalog_commit_on(cat, a, NULL, 0, &up, 1, &c, &e) == 0);
    CHECK(a && !floe_ice_props_get(&floe_ice_table_metadata(a)->properties, "k"));
    floe_ice_table_free(b);
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &b, &e) == 0);
    CHECK(b && c && floe_ice_table_version(b) == 2 &&
          floe_ice_table_metadata(b) == floe_ice_table_metadata(c));
    ft = b ? file_text(io, floe_ice_table_metadata_location(b)) : NULL;
    CHECK(ft && b && floe_ice_table_metadata_text(b, &lb) &&
          !strcmp(ft, floe_ice_table_metadata_text(b, &lb)));
    free(ft);
    /* drop and create again: v1.metadata.json anew, never the old one */
    char uuid[37];
    memcpy(uuid, a ? floe_ice_table_metadata(a)->table_uuid : "", a ? 37 : 1);
    floe_ice_table_free(a);
    floe_ice_table_free(b);
    floe_ice_table_free(c);
    CHECK(floe_ice_catalog_drop_table(cat, "cc", "t", false, &e) == 0);
    CHECK(floe_ice_catalog_create_table(cat, "cc", "t", s, NULL, NULL, NULL, NULL, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &a, &e) == 0);
    CHECK(a && strcmp(floe_ice_table_metadata(a)->table_uuid, uuid) != 0);
    floe_ice_table_free(a);
    /* a budget smaller than one file keeps nothing; 0 is off */
    floe_ice_catalog_cache_metadata(cat, 16);
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &a, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &b, &e) == 0);
    CHECK(a && b && floe_ice_table_metadata(a) != floe_ice_table_metadata(b));
    floe_ice_table_free(a);
    floe_ice_table_free(b);
    floe_ice_catalog_cache_metadata(cat, 0);
    CHECK(floe_ice_catalog_load_table(cat, "cc", "t", &a, &e) == 0);
    CHECK(a && !floe_ice_table_metadata_text(a, &la));
    floe_ice_table_free(a);
    floe_ice_props_clear(&up.props);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

/* Namespaces of several levels: folders nested in the warehouse, made
 * under an existing parent, listed level by level; one with children is
 * not empty. */
static void catalog_levels(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_schema_t *s = schema3();
    CHECK(floe_ice_catalog_create_namespace(cat,
                                            "lv\x1f"
                                            "b",
                                            &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(floe_ice_catalog_create_namespace(cat, "lv", &e) == 0);
    CHECK(floe_ice_catalog_create_namespace(cat,
                                            "lv\x1f"
                                            "b",
                                            &e) == 0);
    CHECK(floe_ice_catalog_create_namespace(cat,
                                            "lv\x1f"
                                            "a",
                                            &e) == 0);
    const char *bad[] = {"lv\x1f", "\x1flv",
                         "lv\x1f\x1f"
                         "b",
                         "lv\x1f"
                         "b.c"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(floe_ice_catalog_create_namespace(cat, bad[i], &e) == -1);
        CHECK_EQ(e.code, FLOE_EINVAL);
    }
    CHECK(floe_ice_catalog_create_table(cat,
                                        "lv\x1f"
                                        "b",
                                        "t", s, NULL, NULL, NULL, NULL, &e) == 0);
    char p[600];
    snprintf(p, sizeof p, "%s/lv/b/t/metadata/v1.metadata.json", root);
    CHECK(access(p, F_OK) == 0);
    /* a create makes the missing levels of its namespace */
    CHECK(floe_ice_catalog_create_table(cat,
                                        "x1\x1f"
                                        "y1",
                                        "t", s, NULL, NULL, NULL, NULL, &e) == 0);
    char **names;
    size_t n;
    CHECK(floe_ice_catalog_list_namespaces_in(cat, "lv", &names, &n, &e) == 0);
    CHECK(n == 2 && !strcmp(names[0], "a") && !strcmp(names[1], "b"));
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_list_namespaces_in(cat, "x1", &names, &n, &e) == 0);
    CHECK(n == 1 && !strcmp(names[0], "y1"));
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_list_namespaces_in(cat, NULL, &names, &n, &e) == 0);
    bool lv = false, nested = false;
    for (size_t i = 0; i < n; i++) {
        lv |= !strcmp(names[i], "lv");
        nested |= !strcmp(names[i], "b") || !strcmp(names[i], "y1");
    }
    CHECK(lv && !nested);
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_list_namespaces_in(cat, "nope", &names, &n, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(floe_ice_catalog_list_tables(cat,
                                       "lv\x1f"
                                       "b",
                                       &names, &n, &e) == 0);
    CHECK(n == 1 && !strcmp(names[0], "t"));
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_drop_namespace(cat, "lv", &e) == -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(floe_ice_catalog_drop_table(cat,
                                      "lv\x1f"
                                      "b",
                                      "t", true, &e) == 0);
    CHECK(floe_ice_catalog_drop_namespace(cat,
                                          "lv\x1f"
                                          "b",
                                          &e) == 0);
    CHECK(floe_ice_catalog_drop_namespace(cat,
                                          "lv\x1f"
                                          "a",
                                          &e) == 0);
    CHECK(floe_ice_catalog_drop_namespace(cat, "lv", &e) == 0);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

/* The REST catalog client against floe's own REST catalog server (over a
 * filesystem catalog, in this process): namespaces, tables, floe's
 * snapshot producer committing through it, a failed requirement, rename,
 * drop; a server that is gone makes a commit's outcome unknown. */
static void rest_client(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    char wh[300];
    snprintf(wh, sizeof wh, "%s/rest", root);
    floe_ice_catalog_t *fs = floe_ice_catalog_fs_new(io, wh, &e);
    floe_http_t *h = NULL;
    floe_rest_t *r = NULL;
    CHECK(floe_http_new(&h, &e) == 0);
    CHECK(floe_rest_http(h, fs, &r, &e) == 0);
    CHECK(floe_http_start(h, "127.0.0.1", 0, &e) == 0);
    char uri[64];
    snprintf(uri, sizeof uri, "http://127.0.0.1:%d/", floe_http_port(h));
    floe_ice_catalog_t *cat = floe_ice_catalog_rest_new(io, uri, "wh", NULL, &e);
    CHECK(cat != NULL);
    if (!cat) return;
    CHECK(floe_ice_catalog_create_namespace(cat, "db", &e) == 0);
    CHECK(floe_ice_catalog_create_namespace(cat, "db", &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    char **names;
    size_t n;
    CHECK(floe_ice_catalog_list_namespaces(cat, &names, &n, &e) == 0);
    CHECK(n == 1 && !strcmp(names[0], "db"));
    floe_fileio_names_free(names, n);
    floe_ice_props_t p = {0}, up = {0};
    floe_ice_props_set(&up, "owner", "x");
    CHECK(floe_ice_catalog_update_namespace(cat, "db", &up, NULL, &e) == 0);
    CHECK(floe_ice_catalog_load_namespace(cat, "db", &p, &e) == 0);
    CHECK(p.n == 1 && !strcmp(floe_ice_props_get(&p, "owner"), "x"));
    CHECK(floe_ice_catalog_load_namespace(cat, "nope", &p, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);

    floe_ice_schema_t *s = schema3();
    floe_ice_table_t *t = NULL, *ft = NULL;
    CHECK(floe_ice_catalog_create_table(cat, "db", "t", s, NULL, NULL, NULL, &t, &e) == 0);
    CHECK(t && floe_ice_table_version(t) == 1);
    CHECK(floe_ice_catalog_create_table(cat, "db", "t", s, NULL, NULL, NULL, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    CHECK(floe_ice_catalog_load_table(fs, "db", "t", &ft, &e) == 0);
    CHECK(t && ft &&
          !strcmp(floe_ice_table_metadata(t)->table_uuid, floe_ice_table_metadata(ft)->table_uuid));
    floe_ice_table_free(ft);

    /* floe's snapshot producer, committing through the REST catalog */
    floe_ice_data_file_t f;
    make_file(io, &f, floe_ice_table_metadata(t)->location, FLOE_ICE_CONTENT_DATA, 5, NULL);
    CHECK(append_files(cat, "t", &f, 1, &e) == 0);
    floe_ice_data_file_clear(&f);
    CHECK(floe_ice_catalog_load_table(fs, "db", "t", &ft, &e) == 0);
    const floe_ice_snapshot_t *cur =
        ft ? floe_ice_metadata_current_snapshot(floe_ice_table_metadata(ft)) : NULL;
    CHECK(cur && floe_ice_props_get(&cur->summary, "floe.offsets") != NULL);
    CHECK(ft && floe_ice_table_version(ft) == 2);
    /* a requirement that fails: a conflict, nothing changed */
    floe_ice_req_t rq = {.kind = FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID, .ref = "main", .value = 1};
    floe_ice_update_t su = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_ice_props_set(&su.props, "k", "v");
    CHECK(floe_ice_catalog_commit(cat, "db", "t", &rq, 1, &su, 1, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    floe_ice_table_t *t2 = NULL;
    CHECK(floe_ice_catalog_load_table(cat, "db", "t", &t2, &e) == 0);
    CHECK(t2 && floe_ice_table_version(t2) == 2);
    floe_ice_table_free(t2);
    rq.value = cur ? cur->snapshot_id : 0;
    CHECK(floe_ice_catalog_commit(cat, "db", "t", &rq, 1, &su, 1, &t2, &e) == 0);
    CHECK(t2 && floe_ice_table_version(t2) == 3 &&
          !strcmp(floe_ice_props_get(&floe_ice_table_metadata(t2)->properties, "k"), "v"));
    floe_ice_table_free(t2);
    floe_ice_table_free(ft);

    /* rename, a namespace that is not empty, drop */
    CHECK(floe_ice_catalog_rename_table(cat, "db", "t", "db", "u", &e) == 0);
    CHECK(floe_ice_catalog_list_tables(cat, "db", &names, &n, &e) == 0);
    CHECK(n == 1 && !strcmp(names[0], "u"));
    floe_fileio_names_free(names, n);
    CHECK(floe_ice_catalog_drop_namespace(cat, "db", &e) == -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(floe_ice_catalog_drop_table(cat, "db", "u", true, &e) == 0);
    CHECK(floe_ice_catalog_load_table(cat, "db", "u", &t2, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK(floe_ice_catalog_create_table(cat, "db", "v", s, NULL, NULL, NULL, NULL, &e) == 0);

    /* the server goes: a commit's outcome is unknown, a load fails */
    floe_http_free(h);
    floe_rest_free(r);
    CHECK(floe_ice_catalog_commit(cat, "db", "v", NULL, 0, &su, 1, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_EUNKNOWN);
    CHECK(floe_ice_catalog_load_table(cat, "db", "v", &t2, &e) == -1);
    CHECK_EQ(e.code, FLOE_EIO);
    /* a client started without its server: made, and its calls fail
     * until the server answers */
    floe_ice_catalog_t *late = floe_ice_catalog_rest_new(io, uri, NULL, NULL, &e);
    CHECK(late != NULL);
    if (late) {
        CHECK(floe_ice_catalog_load_table(late, "db", "v", &t2, &e) == -1);
        CHECK_EQ(e.code, FLOE_EIO);
        floe_ice_catalog_free(late);
    }
    floe_ice_props_clear(&su.props);
    floe_ice_props_clear(&p);
    floe_ice_props_clear(&up);
    floe_ice_table_free(t);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_ice_catalog_free(fs);
    floe_fileio_free(io);
}

static void manifest_roundtrip(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_schema_t *s = schema3();
    int32_t last = 999;
    floe_ice_spec_t *sp = floe_ice_spec_parse(s, "region, day(ts), bucket(id, 4)", 0, &last, &e);
    floe_ice_manifest_entry_t ent[2];
    memset(ent, 0, sizeof ent);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/mf", root);
    for (int i = 0; i < 2; i++) {
        make_file(io, &ent[i].file, dir, FLOE_ICE_CONTENT_DATA, 10 + i, i ? "eu" : "us");
        floe_ice_value_t *pv = realloc(ent[i].file.partition, 3 * sizeof *pv);
        ent[i].file.partition = pv;
        memset(&pv[1], 0, 2 * sizeof *pv);
        pv[1].kind = FLOE_ICE_DATE;
        pv[1].v.i = 17486 + i;
        pv[2].kind = FLOE_ICE_INT;
        pv[2].is_null = i == 1;
        pv[2].v.i = 3;
        ent[i].file.npartition = 3;
        ent[i].status = FLOE_ICE_ADDED;
        ent[i].snapshot_id = 77;
        ent[i].sequence_number = ent[i].file_sequence_number = 5;
    }
    char mp[400], lp[400];
    snprintf(mp, sizeof mp, "%s/m.avro", dir);
    snprintf(lp, sizeof lp, "%s/l.avro", dir);
    floe_ice_manifest_file_t mf;
    CHECK(floe_ice_manifest_write(io, mp, s, sp, 0, ent, 2, NULL, &mf, &e) == 0);
    CHECK_EQ(mf.added_files, 2);
    CHECK_EQ(mf.added_rows, 21);
    CHECK_EQ(mf.npartitions, 3);
    if (mf.npartitions == 3) {
        CHECK(mf.partitions[0].has_lower && mf.partitions[0].lower.len == 2 &&
              memcmp(mf.partitions[0].lower.data, "eu", 2) == 0);
        CHECK(mf.partitions[0].upper.len == 2 && memcmp(mf.partitions[0].upper.data, "us", 2) == 0);
        CHECK(mf.partitions[2].contains_null);
        CHECK(!mf.partitions[0].contains_null);
    }
    /* create-if-absent: a manifest is never overwritten */
    floe_ice_manifest_file_t mf2;
    CHECK(floe_ice_manifest_write(io, mp, s, sp, 0, ent, 2, NULL, &mf2, &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    floe_ice_manifest_entry_t *back;
    size_t n;
    CHECK(floe_ice_manifest_read(io, mp, &back, &n, &e) == 0);
    CHECK_EQ(n, 2);
    if (n == 2) {
        CHECK_STR(back[1].file.path, ent[1].file.path);
        CHECK_EQ(back[1].file.record_count, 11);
        CHECK_EQ(back[1].sequence_number, 5);
        CHECK_EQ(back[1].snapshot_id, 77);
        CHECK(back[1].file.npartition == 3 &&
              floe_ice_value_eq(&back[1].file.partition[0], &ent[1].file.partition[0]));
        CHECK(back[1].file.partition[1].v.i == 17487 && back[1].file.partition[2].is_null);
        CHECK(back[0].file.partition[2].v.i == 3);
        CHECK(back[0].file.nmetrics == 1 && back[0].file.metrics[0].values == 10 &&
              back[0].file.metrics[0].has_upper);
        CHECK(back[0].file.nsplit_offsets == 1 && back[0].file.split_offsets[0] == 4);
    }
    floe_ice_manifest_entries_free(back, n);
    mf.sequence_number = 5;
    mf.added_snapshot_id = 77;
    CHECK(floe_ice_manifest_list_write(io, lp, 77, -1, 5, &mf, 1, NULL, &e) == 0);
    floe_ice_manifest_file_t *lf;
    CHECK(floe_ice_manifest_list_read(io, lp, &lf, &n, &e) == 0);
    CHECK(n == 1 && lf[0].added_files == 2 && lf[0].sequence_number == 5 &&
          strcmp(lf[0].path, mp) == 0);
    CHECK(n == 1 && lf[0].npartitions == 3 && lf[0].partitions[2].contains_null);
    floe_ice_manifest_files_free(lf, n);
    /* garbage is an error, not a crash */
    CHECK(floe_ice_manifest_parse("Obj\x01garbage", 11, &back, &n, &e) == -1);
    CHECK(floe_ice_manifest_list_parse("nope", 4, &lf, &n, &e) == -1);
    floe_ice_manifest_file_clear(&mf);
    for (int i = 0; i < 2; i++) floe_ice_data_file_clear(&ent[i].file);
    floe_ice_spec_free(sp);
    floe_ice_schema_free(s);
    floe_fileio_free(io);
}

typedef struct bump_ctx {
    floe_ice_catalog_t *cat;
    floe_ice_data_file_t *file;
    int calls;
} bump_ctx_t;

/* Commits another append the first time it is asked, so the producer that
 * called it loses the race once. */
static int bump(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    (void)cur;
    bump_ctx_t *b = ctx;
    if (b->calls++ == 0) return append_files(b->cat, "ops", b->file, 1, err) < 0 ? -1 : 0;
    return 0;
}

static int already(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    (void)ctx;
    (void)err;
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(floe_ice_table_metadata(cur));
    return s && floe_ice_props_get(&s->summary, "total-records") ? 1 : 0;
}

static void producers(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    floe_ice_schema_t *s = schema3();
    int32_t last = 999;
    floe_ice_spec_t *sp = floe_ice_spec_parse(s, "region", 0, &last, &e);
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_create_table(cat, "db", "ops", s, sp, NULL, NULL, &t, &e) == 0);
    char tdir[300];
    snprintf(tdir, sizeof tdir, "%s", floe_ice_table_metadata(t)->location);
    floe_ice_table_free(t);
    floe_ice_data_file_t d[6];
    make_file(io, &d[0], tdir, FLOE_ICE_CONTENT_DATA, 100, "us");
    make_file(io, &d[1], tdir, FLOE_ICE_CONTENT_DATA, 50, "eu");
    CHECK(append_files(cat, "ops", d, 2, &e) == 0);
    make_file(io, &d[2], tdir, FLOE_ICE_CONTENT_DATA, 25, "us");
    CHECK(append_files(cat, "ops", &d[2], 1, &e) == 0);
    floe_ice_scan_t *sc = scan_of(cat, "ops");
    CHECK(sc && floe_ice_scan_ntasks(sc) == 3);
    floe_ice_scan_free(sc);
    CHECK(floe_ice_catalog_load_table(cat, "db", "ops", &t, &e) == 0);
    const floe_ice_snapshot_t *cur = floe_ice_metadata_current_snapshot(floe_ice_table_metadata(t));
    CHECK(cur && strcmp(cur->operation, "append") == 0);
    CHECK_STR(floe_ice_props_get(&cur->summary, "total-records"), "175");
    CHECK_STR(floe_ice_props_get(&cur->summary, "total-data-files"), "3");
    CHECK_STR(floe_ice_props_get(&cur->summary, "added-records"), "25");
    CHECK_STR(floe_ice_props_get(&cur->summary, "floe.offsets"), "{\"0\":10}");
    CHECK_EQ(cur->sequence_number, 2);
    floe_ice_table_free(t);

    /* row delta: a position delete in "us" (seq 3) and an equality delete in "eu" */
    make_file(io, &d[3], tdir, FLOE_ICE_CONTENT_POSITION_DELETES, 2, "us");
    make_file(io, &d[4], tdir, FLOE_ICE_CONTENT_EQUALITY_DELETES, 1, "eu");
    floe_ice_commit_t *c = floe_ice_commit_new(cat, "db", "ops", FLOE_ICE_OP_ROW_DELTA, &e);
    CHECK(floe_ice_commit_add(c, &d[3], &e) == 0);
    CHECK(floe_ice_commit_add(c, &d[4], &e) == 0);
    CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
    floe_ice_commit_free(c);
    /* a later data file in "eu" is not hit by the older equality delete */
    make_file(io, &d[5], tdir, FLOE_ICE_CONTENT_DATA, 7, "eu");
    CHECK(append_files(cat, "ops", &d[5], 1, &e) == 0);
    sc = scan_of(cat, "ops");
    CHECK(sc && floe_ice_scan_ntasks(sc) == 4);
    for (size_t i = 0; sc && i < floe_ice_scan_ntasks(sc); i++) {
        const floe_ice_scan_task_t *tk = floe_ice_scan_task(sc, i);
        const char *p = tk->file->path;
        if (strcmp(p, d[0].path) == 0 || strcmp(p, d[2].path) == 0)
            CHECK(tk->ndeletes == 1 && strcmp(tk->deletes[0]->path, d[3].path) == 0);
        else if (strcmp(p, d[1].path) == 0)
            CHECK(tk->ndeletes == 1 && strcmp(tk->deletes[0]->path, d[4].path) == 0);
        else
            CHECK(tk->ndeletes == 0);
    }
    floe_ice_scan_free(sc);
    /* partition pruning: region = 'eu' */
    CHECK(floe_ice_catalog_load_table(cat, "db", "ops", &t, &e) == 0);
    floe_ice_scan_pred_t pr = {.source_id = 2};
    floe_ice_value_set_bytes(&pr.value, FLOE_ICE_STRING, "eu", 2);
    CHECK(floe_ice_scan_plan(io, floe_ice_table_metadata(t), -1, &pr, 1, &sc, &e) == 0);
    CHECK_EQ(floe_ice_scan_ntasks(sc), 2);
    CHECK_EQ(floe_ice_scan_manifests_skipped(sc), 1); /* the us-only manifest, by its summary */
    floe_ice_scan_free(sc);
    floe_ice_value_clear(&pr.value);
    floe_ice_value_set_bytes(&pr.value, FLOE_ICE_STRING, "zz", 2);
    CHECK(floe_ice_scan_plan(io, floe_ice_table_metadata(t), -1, &pr, 1, &sc, &e) == 0);
    CHECK_EQ(floe_ice_scan_ntasks(sc), 0);
    CHECK_EQ(floe_ice_scan_manifests_skipped(sc), 3);
    floe_ice_scan_free(sc);
    floe_ice_value_clear(&pr.value);
    floe_ice_table_free(t);

    /* rewrite d[0] and d[2] into one file */
    floe_ice_data_file_t r;
    make_file(io, &r, tdir, FLOE_ICE_CONTENT_DATA, 123, "us");
    c = floe_ice_commit_new(cat, "db", "ops", FLOE_ICE_OP_REWRITE, &e);
    floe_ice_commit_remove(c, d[0].path, &e);
    floe_ice_commit_remove(c, d[2].path, &e);
    floe_ice_commit_add(c, &r, &e);
    CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
    floe_ice_commit_free(c);
    sc = scan_of(cat, "ops");
    CHECK(sc && floe_ice_scan_ntasks(sc) == 3);
    floe_ice_scan_free(sc);
    /* rewriting a file that is gone is refused */
    c = floe_ice_commit_new(cat, "db", "ops", FLOE_ICE_OP_REWRITE, &e);
    floe_ice_commit_remove(c, d[0].path, &e);
    CHECK(floe_ice_commit_run(c, NULL, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    CHECK(strstr(e.msg, "no longer live") != NULL);
    CHECK(!e.retriable);
    CHECK_EQ(floe_ice_commit_attempts(c), 1); /* final: retrying cannot bring the file back */
    floe_ice_commit_free(c);

    /* optimistic retry: the first attempt loses to a concurrent append */
    floe_ice_data_file_t x, y;
    make_file(io, &x, tdir, FLOE_ICE_CONTENT_DATA, 1, "us");
    make_file(io, &y, tdir, FLOE_ICE_CONTENT_DATA, 1, "eu");
    bump_ctx_t bc = {cat, &y, 0};
    c = floe_ice_commit_new(cat, "db", "ops", FLOE_ICE_OP_APPEND, &e);
    floe_ice_commit_add(c, &x, &e);
    floe_ice_commit_set_validate(c, bump, &bc);
    CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
    CHECK_EQ(floe_ice_commit_attempts(c), 2);
    floe_ice_commit_free(c);
    sc = scan_of(cat, "ops");
    CHECK(sc && floe_ice_scan_ntasks(sc) == 5);
    floe_ice_scan_free(sc);
    /* the validate callback can say "already committed" */
    c = floe_ice_commit_new(cat, "db", "ops", FLOE_ICE_OP_APPEND, &e);
    floe_ice_commit_add(c, &x, &e);
    floe_ice_commit_set_validate(c, already, NULL);
    CHECK(floe_ice_commit_run(c, NULL, &e) == 1);
    floe_ice_commit_free(c);

    /* schema evolution in the same commit as the data that needs it */
    floe_ice_schema_t *s2 = floe_ice_schema_dup(s);
    int32_t lc = 3;
    CHECK(floe_ice_schema_add_column(s2, &lc, NULL, "extra", floe_ice_type_prim(FLOE_ICE_INT), NULL,
                                     &e) == 0);
    floe_ice_data_file_t z;
    make_file(io, &z, tdir, FLOE_ICE_CONTENT_DATA, 3, "eu");
    c = floe_ice_commit_new(cat, "db", "ops", FLOE_ICE_OP_APPEND, &e);
    floe_ice_commit_add(c, &z, &e);
    CHECK(floe_ice_commit_set_schema(c, s2, &e) == 0);
    CHECK(floe_ice_commit_run(c, NULL, &e) == 0);
    floe_ice_commit_free(c);
    floe_ice_data_file_clear(&z);
    floe_ice_schema_free(s2);
    CHECK(floe_ice_catalog_load_table(cat, "db", "ops", &t, &e) == 0);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    CHECK_EQ(md->current_schema_id, 1);
    CHECK_EQ(md->last_column_id, 4);
    CHECK_EQ(floe_ice_metadata_current_snapshot(md)->schema_id, 1);
    size_t nsnap = md->nsnapshots;
    CHECK_EQ(nsnap, 8);
    floe_ice_table_free(t);

    /* expire all but the last 2 snapshots, deleting unreachable files */
    floe_ice_expire_opts_t eo = {.older_than_ms = -1, .keep_last = 2, .delete_files = true};
    floe_ice_expire_result_t er;
    CHECK(floe_ice_expire_snapshots(cat, "db", "ops", &eo, &er, &e) == 0);
    CHECK_EQ(er.snapshots_removed, 6);
    CHECK(er.files_deleted > 0);
    bool ex = true;
    CHECK(floe_fileio_exists(io, d[0].path, &ex, &e) == 0 && !ex); /* rewritten away */
    CHECK(floe_fileio_exists(io, d[1].path, &ex, &e) == 0 && ex);
    sc = scan_of(cat, "ops");
    CHECK(sc && floe_ice_scan_ntasks(sc) == 6);
    floe_ice_scan_free(sc);

    for (int i = 0; i < 6; i++) floe_ice_data_file_clear(&d[i]);
    floe_ice_data_file_clear(&r);
    floe_ice_data_file_clear(&x);
    floe_ice_data_file_clear(&y);
    floe_ice_spec_free(sp);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

/* A v1 table written by another engine: floe reads it and upgrades it to
 * v2 with its first commit. */
static void v1_table_upgrade(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(io, root, &e);
    char p[512], loc[400], js[1024];
    snprintf(loc, sizeof loc, "%s/db/old", root);
    snprintf(p, sizeof p, "%s/metadata/v1.metadata.json", loc);
    int n = snprintf(
        js, sizeof js,
        "{\"format-version\":1,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
        "\"location\":\"%s\","
        "\"last-updated-ms\":1,\"last-column-id\":2,\"schema\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"region\",\"required\":false,\"type\":\"string\"}]},"
        "\"partition-spec\":[{\"name\":\"region\",\"transform\":\"identity\",\"source-id\":2,"
        "\"field-id\":1000}],"
        "\"properties\":{},\"current-snapshot-id\":-1,\"snapshots\":[]}",
        loc);
    CHECK(floe_fileio_write(io, p, js, (size_t)n, FLOE_IO_EXCL, &e) == 0);
    floe_ice_data_file_t f;
    make_file(io, &f, loc, FLOE_ICE_CONTENT_DATA, 4, "us");
    CHECK(append_files(cat, "old", &f, 1, &e) == 0);
    floe_ice_data_file_clear(&f);
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_load_table(cat, "db", "old", &t, &e) == 0);
    CHECK(t && floe_ice_table_metadata(t)->format_version == 2 && floe_ice_table_version(t) == 2);
    CHECK(t &&
          floe_ice_metadata_current_snapshot(floe_ice_table_metadata(t))->sequence_number == 1);
    CHECK_STR(floe_ice_table_metadata(t)->table_uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
    floe_ice_table_free(t);
    floe_ice_scan_t *sc = scan_of(cat, "old");
    CHECK(sc && floe_ice_scan_ntasks(sc) == 1);
    floe_ice_scan_free(sc);
    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
}

/* Count the data files of the current snapshot, -1 if the table is broken. */
static long live_files(floe_ice_catalog_t *cat, const char *name, int64_t *snap)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "db", name, &t, &e) < 0) return -1;
    *snap = floe_ice_table_metadata(t)->current_snapshot_id;
    floe_ice_scan_t *s;
    long n = -1;
    if (floe_ice_scan_plan(floe_ice_catalog_io(cat), floe_ice_table_metadata(t), -1, NULL, 0, &s,
                           &e) == 0) {
        n = (long)floe_ice_scan_ntasks(s);
        for (size_t i = 0; i < floe_ice_scan_ntasks(s); i++) {
            bool ex = false;
            if (floe_fileio_exists(floe_ice_catalog_io(cat), floe_ice_scan_task(s, i)->file->path,
                                   &ex, &e) < 0 ||
                !ex)
                n = -1;
        }
        floe_ice_scan_free(s);
    }
    floe_ice_table_free(t);
    return n;
}

/* Fault at every operation of a commit, in each mode: the table is then at
 * the old snapshot or the new one, never broken, and a success is real. */
static void fault_every_step(void)
{
    floe_err_t e;
    floe_fileio_t *local = floe_fileio_local_new(&e);
    floe_fileio_t *fio = floe_fileio_fault_new(local, &e);
    floe_ice_catalog_t *clean = floe_ice_catalog_fs_new(local, root, &e);
    floe_ice_catalog_t *faulty = floe_ice_catalog_fs_new(fio, root, &e);
    floe_ice_schema_t *s = schema3();
    floe_ice_table_t *t;
    CHECK(floe_ice_catalog_create_table(clean, "db", "faults", s, NULL, NULL, NULL, &t, &e) == 0);
    char tdir[300];
    snprintf(tdir, sizeof tdir, "%s", floe_ice_table_metadata(t)->location);
    floe_ice_table_free(t);
    floe_ice_data_file_t f;
    make_file(local, &f, tdir, FLOE_ICE_CONTENT_DATA, 5, NULL);
    CHECK(append_files(clean, "faults", &f, 1, &e) == 0);
    floe_ice_data_file_clear(&f);
    /* how many operations does one clean commit take? */
    make_file(local, &f, tdir, FLOE_ICE_CONTENT_DATA, 5, NULL);
    floe_fileio_fault_disarm(fio);
    CHECK(append_files(faulty, "faults", &f, 1, &e) == 0);
    floe_ice_data_file_clear(&f);
    uint64_t ops = floe_fileio_fault_ops(fio);
    CHECK(ops >= 8);
    long expect = 2;
    int broken = 0, lies = 0, unknown = 0;
    floe_diag_set_level(FLOE_DIAG_ERROR);
    for (int mode = FLOE_FAULT_FAIL; mode <= FLOE_FAULT_LOST_ACK; mode++) {
        for (uint64_t k = 1; k <= ops + 2; k++) {
            int64_t before_snap, after_snap;
            long before = live_files(clean, "faults", &before_snap);
            make_file(local, &f, tdir, FLOE_ICE_CONTENT_DATA, 5, NULL);
            floe_fileio_fault_arm(fio, k, (floe_fault_mode_t)mode);
            int rc = append_files(faulty, "faults", &f, 1, &e);
            floe_fileio_fault_disarm(fio);
            if (rc < 0 && e.code == FLOE_EUNKNOWN) unknown++;
            long after = live_files(clean, "faults", &after_snap);
            if (after < 0) broken++;
            if (rc == 0 && after != before + 1) lies++; /* success must be real */
            if (rc < 0 && e.code != FLOE_EUNKNOWN && after != before)
                lies++; /* failure must be clean */
            if (after != before && after != before + 1) broken++;
            expect = after;
            floe_ice_data_file_clear(&f);
        }
    }
    floe_diag_set_level(FLOE_DIAG_INFO);
    CHECK_EQ(broken, 0);
    CHECK_EQ(lies, 0);
    CHECK(expect > 2);
    floe_ice_schema_free(s);
    floe_ice_catalog_free(clean);
    floe_ice_catalog_free(faulty);
    floe_fileio_free(fio);
    floe_fileio_free(local);
    (void)unknown;
}

/* Property "txn" of db.NAME as the catalog serves it (-1: unreadable). */
static int64_t txn_mark(floe_ice_catalog_t *cat, const char *name)
{
    floe_ice_table_t *t = NULL;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "db", name, &t, &e) < 0) return -1;
    int64_t v =
        floe_ice_props_get_i64(&floe_ice_table_metadata(t)->properties, "txn", 0, INT64_MAX, 0);
    floe_ice_table_free(t);
    return v;
}

/* A transaction setting txn=mark on db.ta and db.tb; with a requirement
 * on db.tb that fails when bad. */
static int txn_run(floe_ice_catalog_t *cat, int64_t mark, bool bad, size_t *failed, floe_err_t *e)
{
    char js[128];
    snprintf(js, sizeof js, "{\"action\":\"set-properties\",\"updates\":{\"txn\":\"%lld\"}}",
             (long long)mark);
    floe_ice_update_t up[2];
    floe_ice_req_t rq;
    memset(up, 0, sizeof up);
    memset(&rq, 0, sizeof rq);
    CHECK(floe_ice_update_from_json(js, strlen(js), &up[0], e) == 0);
    CHECK(floe_ice_update_from_json(js, strlen(js), &up[1], e) == 0);
    const char *rj = "{\"type\":\"assert-table-uuid\",\"uuid\":\"00000000-0000-4000-8000-"
                     "000000000000\"}";
    CHECK(floe_ice_req_from_json(rj, strlen(rj), &rq, e) == 0);
    floe_ice_table_change_t ch[2] = {{"db", "ta", NULL, 0, &up[0], 1},
                                     {"db", "tb", &rq, bad ? 1 : 0, &up[1], 1}};
    int rc = floe_ice_catalog_commit_tx(cat, ch, 2, failed, e);
    floe_ice_update_clear(&up[0]);
    floe_ice_update_clear(&up[1]);
    return rc;
}

/* A two-table transaction crashed at every storage operation in turn
 * (the process state dropped, the catalog opened again), and failed at
 * every one once (the same catalog carries on): both tables show it or
 * neither, never one; a success is real; no journal stays behind. */
static void transaction_every_step(void)
{
    floe_err_t e;
    floe_fileio_t *local = floe_fileio_local_new(&e);
    floe_fileio_t *fio = floe_fileio_fault_new(local, &e);
    floe_ice_catalog_t *cat = floe_ice_catalog_fs_new(local, root, &e);
    floe_ice_schema_t *s = schema3();
    CHECK(floe_ice_catalog_create_table(cat, "db", "ta", s, NULL, NULL, NULL, NULL, &e) == 0);
    CHECK(floe_ice_catalog_create_table(cat, "db", "tb", s, NULL, NULL, NULL, NULL, &e) == 0);
    size_t failed = 9;
    /* a failed requirement on the second table changes neither */
    CHECK(txn_run(cat, 5, true, &failed, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    CHECK_EQ(failed, 1);
    CHECK_EQ(txn_mark(cat, "ta"), 0);
    CHECK_EQ(txn_mark(cat, "tb"), 0);
    floe_ice_catalog_free(cat);
    /* how many operations does a clean one take? */
    cat = floe_ice_catalog_fs_new(fio, root, &e);
    floe_fileio_fault_disarm(fio);
    CHECK(txn_run(cat, 1, false, &failed, &e) == 0);
    uint64_t ops = floe_fileio_fault_ops(fio);
    floe_ice_catalog_free(cat);
    CHECK(ops >= 8);
    CHECK_EQ(txn_mark(cat = floe_ice_catalog_fs_new(local, root, &e), "ta"), 1);
    CHECK_EQ(txn_mark(cat, "tb"), 1);
    floe_ice_catalog_free(cat);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/_floe_txn", root);
    int64_t mark = 1, partial = 0, lies = 0, journals = 0, landed = 0, rolled = 0;
    floe_diag_set_level(FLOE_DIAG_OFF);
    for (int mode = FLOE_FAULT_FAIL; mode <= FLOE_FAULT_CRASH; mode++)
        for (uint64_t k = 1; k <= ops + 1; k++) {
            int64_t next = mark + 1;
            cat = floe_ice_catalog_fs_new(fio, root, &e);
            floe_fileio_fault_arm(fio, k, (floe_fault_mode_t)mode);
            int rc = txn_run(cat, next, false, &failed, &e);
            floe_fileio_fault_disarm(fio);
            if (mode == FLOE_FAULT_FAIL) { /* the same catalog goes on */
                int64_t a = txn_mark(cat, "ta"), b = txn_mark(cat, "tb");
                if (a != b) partial++;
                if (rc < 0 && e.code == FLOE_EUNKNOWN && a == next) rolled++;
            }
            floe_ice_catalog_free(cat); /* the "process" ends */
            cat = floe_ice_catalog_fs_new(local, root, &e);
            int64_t a = txn_mark(cat, "ta"), b = txn_mark(cat, "tb");
            floe_ice_catalog_free(cat);
            if (a != b || (a != mark && a != next)) partial++;
            if (rc == 0 && a != next) lies++;
            if (rc < 0 && e.code != FLOE_EUNKNOWN && a != mark) lies++;
            if (a == next) landed++;
            mark = a;
            char **names;
            size_t n;
            CHECK(floe_fileio_list(local, dir, &names, &n, &e) == 0);
            journals += (int64_t)n;
            floe_fileio_names_free(names, n);
        }
    floe_diag_set_level(FLOE_DIAG_INFO);
    CHECK_EQ(partial, 0);
    CHECK_EQ(lies, 0);
    CHECK_EQ(journals, 0);
    CHECK(landed > 0 && landed < (int64_t)(2 * (ops + 1)));
    CHECK(rolled > 0); /* a publish failed after the journal: finished before the next load */
    floe_ice_schema_free(s);
    floe_fileio_free(fio);
    floe_fileio_free(local);
}

/* What the REST client takes from a server's answers: a token fit for a
 * header line and its lifetime; /v1/config's prefix and endpoints. */
static void rest_answers(void)
{
    floe_err_t e;
    char *h = NULL;
    int64_t life = 0;
    json_t *a = json_loads("{\"access_token\":\"t-1\",\"expires_in\":60}", 0, NULL);
    CHECK(floe_ice_rest_token_answer(a, &h, &life, &e) == 0);
    CHECK(h && !strcmp(h, "Authorization: Bearer t-1") && life == 60000);
    free(h);
    json_decref(a);
    a = json_loads("{\"access_token\":\"t\",\"expires_in\":\"30\"}", 0, NULL);
    CHECK(floe_ice_rest_token_answer(a, &h, &life, &e) == 0 && life == 30000);
    free(h);
    json_decref(a);
    a = json_loads("{\"access_token\":\"t\",\"expires_in\":9223372036854775807}", 0, NULL);
    CHECK(floe_ice_rest_token_answer(a, &h, &life, &e) == 0 && life == -1); /* no overflow */
    free(h);
    json_decref(a);
    a = json_loads("{\"access_token\":\"t\\r\\nX-Evil: 1\"}", 0, NULL);
    CHECK(floe_ice_rest_token_answer(a, &h, &life, &e) == -1 &&
          h == NULL); /* no header injection */
    CHECK_EQ(e.code, FLOE_EIO);
    json_decref(a);
    CHECK(floe_ice_rest_token_answer(NULL, &h, &life, &e) == -1);

    char *prefix, **eps;
    size_t n;
    a = json_loads("{\"defaults\":{\"prefix\":\"d\"},\"overrides\":{\"prefix\":\"wh/1\"},"
                   "\"endpoints\":[\"GET /v1/{prefix}/namespaces\",7]}",
                   0, NULL);
    CHECK(floe_ice_rest_config_answer(a, &prefix, &eps, &n, &e) == 0);
    CHECK(!strcmp(prefix, "wh/1") && n == 1 && !strcmp(eps[0], "GET /v1/{prefix}/namespaces"));
    free(prefix);
    floe_fileio_names_free(eps, n);
    json_decref(a);
    a = json_loads("{\"defaults\":{}}", 0, NULL); /* no endpoints: the spec's default set */
    CHECK(floe_ice_rest_config_answer(a, &prefix, &eps, &n, &e) == 0);
    CHECK(!strcmp(prefix, "") && eps == NULL && n == 0);
    free(prefix);
    json_decref(a);
    a = json_loads("{\"overrides\":{\"prefix\":\"a?b\"}}", 0, NULL);
    CHECK(floe_ice_rest_config_answer(a, &prefix, &eps, &n, &e) == -1);
    CHECK_EQ(e.code, FLOE_EUNSUPPORTED);
    json_decref(a);
}

TEST_MAIN({
    snprintf(root, sizeof root, "/tmp/floe-ice-table-%d", (int)getpid());
    rm_rf(root);
    RUN(catalog_basics);
    RUN(catalog_names);
    RUN(catalog_metadata_cache);
    RUN(catalog_levels);
    RUN(rest_client);
    RUN(rest_answers);
    RUN(manifest_roundtrip);
    RUN(producers);
    RUN(v1_table_upgrade);
    RUN(fault_every_step);
    RUN(transaction_every_step);
    rm_rf(root);
})
