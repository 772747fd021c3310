/* The table engine end to end, below the broker: records appended to real
 * partition logs become rows of an Iceberg table on local files (read back
 * by icebird and DuckDB, readers nobody here wrote), bad records land in
 * the dead-letter table, restarts resume from the snapshot summary without
 * duplicates, files left by a crash are deleted, and a commit broken at any
 * storage operation neither loses nor doubles a record; a long column that
 * meets fractions widens to double (a new field, its files rewritten by
 * the maintenance thread in the same snapshot as the schema, while the
 * table keeps committing), also when that breaks anywhere; compaction
 * keeps every row for every reader, also when broken anywhere, and the
 * maintenance thread keeps a busy table small on its own. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iceberg/catalog.h"
#include "iceberg/metadata.h"
#include "iceberg/scan.h"
#include "log/batch.h"
#include "table/engine.h"
#include "table/offsets.h"
#include "table/source_logs.h"
#include "util/clock.h"
#include "util/murmur3.h"
#include "test.h"

static char dir[256];
static floe_log_t *logs[2], *rdlog;
static floe_tsource_logs_t *src;
static floe_fileio_t *local, *io; /* io: fault-injecting wrapper of local */
static floe_ice_catalog_t *cat;

static void produce_to(floe_log_t *l, int64_t ts, const char *const *values, size_t n);

static void produce(int part, const char *const *values, size_t n)
{
    produce_to(logs[part], 1700000000000LL, values, n);
}

/* The partitions add_topic_with opened, so that produce_to tells the
 * source of its appends as the broker's append observer does in floe
 * serve (a running engine thread steps only partitions with news). */
static struct {
    floe_log_t *log;
    char topic[64];
    int part;
} opened[4096];
static size_t nopened;

static void produce_to(floe_log_t *l, int64_t ts, const char *const *values, size_t n)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = floe_compression_parse("zstd");
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_err_t e;
    for (size_t i = 0; i < n; i++) {
        floe_slice_t v = floe_slice_str(values[i]), k = floe_slice_str("key");
        floe_batch_builder_add(b, ts, &k, &v, NULL, 0, &e);
    }
    floe_buf_t buf = FLOE_BUF_INIT;
    if (floe_batch_builder_finish(b, &buf, &e) < 0 ||
        floe_log_append(l, buf.data, buf.len, -1, NULL, &e) < 0)
        printf("# produce failed: %s\n", e.msg);
    for (size_t i = nopened; i-- > 0;) /* the newest: a log's address may be reused */
        if (opened[i].log == l) {
            floe_tsource_logs_appended(src, opened[i].topic, opened[i].part);
            break;
        }
    floe_buf_free(&buf);
    floe_batch_builder_free(b);
}

/* The output of shell command cmd (caller frees). */
static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    floe_buf_t b = FLOE_BUF_INIT;
    char tmp[4096];
    size_t n;
    while (p && (n = fread(tmp, 1, sizeof tmp, p)) > 0) floe_buf_append(&b, tmp, n);
    if (!p || pclose(p) != 0) printf("# command failed: %s\n", cmd);
    return floe_buf_cstr(&b);
}

static char *sh(const char *fmt, const char *arg, const char *arg2)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".", arg, arg2);
    return run(cmd);
}

/* icebird's rows of default.NAME, _kafka.key left out (see icebird_rows.mjs) */
static char *icebird(const char *name)
{
    char loc[512];
    snprintf(loc, sizeof loc, "%s/warehouse/default/%s", dir, name);
    return sh("cd %s/tests/interop && node icebird_rows.mjs %s %s 2>&1", loc, "--omit=_kafka.key");
}

static size_t snapshots(const char *name)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return 0;
    size_t n = floe_ice_table_metadata(t)->nsnapshots;
    floe_ice_table_free(t);
    return n;
}

static int64_t run_engine(void)
{
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    int64_t n = floe_engine_run_once(eng, true, &e);
    floe_engine_free(eng);
    return n;
}

#define ROW(p, o, id, name, tags, u)                                                 \
    "{\"_kafka\":{\"headers\":{},\"offset\":\"" #o "\",\"partition\":" #p            \
    ",\"timestamp\":\"2023-11-14T22:13:20.000Z\"},\"id\":\"" #id "\",\"name\":" name \
    ",\"tags\":" tags ",\"u\":" u "}\n"

static void first_run_rows_and_dead_letters(void)
{
    const char *p0[] = {"{\"id\":1,\"name\":\"a\"}", "{\"id\":2}", "{oops", "{\"id\":\"x\"}",
                        "{\"id\":3,\"u\":{\"k\":true}}"};
    const char *p1[] = {"{\"id\":10,\"tags\":[\"x\",\"y\"]}"};
    produce(0, p0, 5);
    produce(1, p1, 1);
    CHECK_EQ(run_engine(), 4);
    char *rows = icebird("web_events");
    CHECK_STR(rows,
              ROW(0, 0, 1, "\"a\"", "null", "null") ROW(1, 0, 10, "null", "[\"x\",\"y\"]", "null")
                  ROW(0, 1, 2, "null", "null", "null")
                      ROW(0, 4, 3, "null", "null", "{\"k\":true}"));
    free(rows);
    rows = icebird("web_events_dlq");
    CHECK_STR(rows, "{\"headers\":null,\"key\":\"key\",\"offset\":\"2\",\"partition\":0,\"reason\":"
                    "\"invalid JSON "
                    "at byte 1: expected a "
                    "key\",\"stage\":\"convert\",\"timestamp\":\"2023-11-14T22:13:20.000Z\","
                    "\"value\":\"{oops\"}\n"
                    "{\"headers\":null,\"key\":\"key\",\"offset\":\"3\",\"partition\":0,\"reason\":"
                    "\"field 'id' "
                    "is long, value at byte 6 is a string\",\"stage\":\"schema\",\"timestamp\":"
                    "\"2023-11-14T22:13:20.000Z\",\"value\":\"{\\\"id\\\":\\\"x\\\"}\"}\n");
    free(rows);
    /* the key column, through DuckDB over every data file */
    char glob[512];
    snprintf(glob, sizeof glob, "%s/warehouse/default/web_events/data/*.parquet", dir);
    rows = sh("cd %s/tests/interop && node duck_query.mjs \"SELECT count(*), "
              "count(DISTINCT _kafka.key), min(_kafka.key) FROM read_parquet('%s')\"%s",
              glob, "");
    CHECK_STR(rows, "[[\"4\",\"1\",\"key\"]]\n");
    free(rows);
}

static void restart_resumes_without_duplicates(void)
{
    size_t before = snapshots("web_events");
    CHECK_EQ(run_engine(), 0); /* nothing new: no snapshot either */
    CHECK_EQ(snapshots("web_events"), before);
    const char *p1[] = {"{\"id\":11,\"name\":\"b\",\"extra\":1.5}"};
    produce(1, p1, 1);
    CHECK_EQ(run_engine(), 1);
    char *rows = icebird("web_events");
    /* 5 rows; old ones read null in the new column */
    CHECK(strstr(rows, "\"extra\":1.5") != NULL);
    size_t lines = 0, nulls = 0;
    for (char *p = rows; (p = strchr(p, '\n')); p++) lines++;
    for (char *p = rows; (p = strstr(p, "\"extra\":null")); p++) nulls++;
    CHECK_EQ(lines, 5);
    CHECK_EQ(nulls, 4);
    free(rows);
}

static void orphans_are_deleted(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/warehouse/default/web_events/data/00000-dead-00001.parquet",
             dir);
    FILE *f = fopen(path, "w");
    fputs("PAR1 not really", f);
    fclose(f);
    char man[512];
    snprintf(man, sizeof man, "%s/warehouse/default/web_events/metadata/dead-m0.avro", dir);
    f = fopen(man, "w");
    fputs("Obj", f);
    fclose(f);
    CHECK_EQ(run_engine(), 0);
    CHECK(access(path, F_OK) != 0);
    CHECK(access(man, F_OK) != 0);
    char *rows = icebird("web_events");
    size_t lines = 0;
    for (char *p = rows; (p = strchr(p, '\n')); p++) lines++;
    CHECK_EQ(lines, 5);
    free(rows);
}

/* Break the commit at its n-th storage operation (the process "dies"
 * there: every later operation fails too), then run again: each record
 * is in the table exactly once, whatever n was.  The engine opens the
 * table before the fault is armed, so every n falls inside the commit
 * (sealing the files included). */
static void commits_broken_anywhere_lose_and_double_nothing(void)
{
    int id = 100;
    uint64_t total = 0;
    for (uint64_t nth = 1; nth < 1000; nth++) {
        char doc[64];
        snprintf(doc, sizeof doc, "{\"id\":%d}", id++);
        const char *v[] = {doc};
        produce(0, v, 1);
        floe_err_t e;
        floe_engine_config_t cfg = {.catalog = cat};
        floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
        floe_engine_run_once(eng, false, &e); /* open and read; the interval has not passed */
        floe_fileio_fault_arm(io, nth, FLOE_FAULT_CRASH);
        floe_engine_run_once(eng, true, &e);
        bool fired = floe_fileio_fault_fired(io);
        floe_fileio_fault_disarm(io);
        floe_engine_free(eng);
        run_engine();
        if (!fired) { /* the commit took fewer operations: all were broken */
            total = nth - 1;
            break;
        }
    }
    printf("# a commit takes %llu storage operations; broken at each of them\n",
           (unsigned long long)total);
    CHECK(total >= 10);
    char *rows = icebird("web_events");
    size_t lines = 0;
    for (char *p = rows; (p = strchr(p, '\n')); p++) lines++;
    CHECK_EQ(lines, 5 + (size_t)(id - 100));
    for (int i = 100; i < id; i++) {
        char want[64];
        snprintf(want, sizeof want, "\"id\":\"%d\"", i);
        char *a = strstr(rows, want);
        CHECK(a != NULL);
        CHECK(a && strstr(a + 1, want) == NULL); /* once */
    }
    free(rows);
    /* and nothing is left over: every file in the table folder is referenced */
    CHECK_EQ(run_engine(), 0);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (const char *p = s; (p = strchr(p, '\n')); p++) n++;
    return n;
}

/* Partition specs over every transform kind: files sit in partition
 * folders, manifests carry the tuples (read by avsc), icebird reads every
 * row, and a spec change mid-stream keeps old files under the old spec. */
static void partitioned_by_every_transform(void)
{
    floe_err_t e;
    char path[512];
    floe_log_t *pl;
    snprintf(path, sizeof path, "%s/log/parts-0", dir);
    CHECK_EQ(floe_log_open(path, NULL, &pl, &e), 0);
    const char *keys[] = {"table.enable", "table.partition.by"};
    const char *vals[] = {"true",
                          "region, bucket(user, 4), truncate(name, 2), day(_kafka.timestamp)"};
    floe_tsource_logs_set(src, "parts", 1, &pl, keys, vals, 2, &e);
    const char *recs[] = {"{\"region\":\"eu\",\"user\":1,\"name\":\"alice\"}",
                          "{\"region\":\"us\",\"user\":2,\"name\":\"bob\"}",
                          "{\"region\":\"eu\",\"user\":1,\"name\":\"alan\"}",
                          "{\"user\":3,\"name\":\"x\"}"};
    produce_to(pl, 1700000000000LL, recs, 4);              /* 2023-11-14 */
    produce_to(pl, 1700000000000LL + 86400000LL, recs, 2); /* 2023-11-15 */
    CHECK_EQ(run_engine(), 6);
    snprintf(path, sizeof path, "%s/warehouse/default/parts", dir);
    char *m = sh("cd %s/tests/interop && node manifest_partitions.mjs %s%s", path, "");
    /* identity, truncate and day exactly; bucket(user, 4) from the spec's
     * murmur3: bucket(1)=... checked against the library's hash below */
    CHECK(strstr(m, "\"region\":\"eu\"") && strstr(m, "\"name_trunc\":\"al\""));
    CHECK(strstr(m, "\"_kafka_timestamp_day\":19675") != NULL); /* 2023-11-14 */
    CHECK(strstr(m, "\"_kafka_timestamp_day\":19676") != NULL);
    CHECK(strstr(m, "\"region\":null") != NULL);
    CHECK(strstr(m, "\"dir\":\"region=eu/user_bucket=") != NULL);
    CHECK(strstr(m, "/name_trunc=al/_kafka_timestamp_day=2023-11-14\"") != NULL);
    CHECK(strstr(m, "{\"specs\":2,\"default\":1}") !=
          NULL); /* unpartitioned at create, then ours */
    /* bucket(user, 4) of user 3: the spec's murmur3 of the 8-byte little-endian long */
    uint8_t le3[8] = {3, 0, 0, 0, 0, 0, 0, 0};
    char want_b[96];
    snprintf(want_b, sizeof want_b, "\"user_bucket\":%u,\"name_trunc\":\"x\"",
             (floe_murmur3_32(le3, 8, 0) & 0x7fffffffu) % 4);
    CHECK(strstr(m, want_b) != NULL);
    free(m);
    char *rows = icebird("parts");
    CHECK_EQ(count_lines(rows), 6);
    free(rows);

    /* spec change: hour() from now on; old files keep their spec */
    vals[1] = "hour(_kafka.timestamp)";
    floe_tsource_logs_set(src, "parts", 1, &pl, keys, vals, 2, &e);
    produce_to(pl, 1700000000000LL + 3600000LL, recs, 3);
    CHECK_EQ(run_engine(), 3);
    m = sh("cd %s/tests/interop && node manifest_partitions.mjs %s%s", path, "");
    CHECK(strstr(m, "\"dir\":\"_kafka_timestamp_hour=2023-11-14-23\"") != NULL);
    CHECK(strstr(m, "\"dir\":\"region=us/") != NULL); /* an old file, old spec */
    CHECK(strstr(m, "{\"specs\":3,\"default\":2}") != NULL);
    free(m);
    rows = icebird("parts");
    CHECK_EQ(count_lines(rows), 9);
    free(rows);

    /* year and month (one table each: a spec takes one time transform per source) */
    const char *tf[] = {"year(_kafka.timestamp)", "month(_kafka.timestamp)"};
    const char *want[] = {"_kafka_timestamp_year=2023", "_kafka_timestamp_month=2023-11"};
    for (int i = 0; i < 2; i++) {
        vals[1] = tf[i];
        floe_tsource_logs_set(src, "parts", 1, &pl, keys, vals, 2, &e);
        produce_to(pl, 1700000000000LL, recs, 1);
        CHECK_EQ(run_engine(), 1);
        m = sh("cd %s/tests/interop && node manifest_partitions.mjs %s%s", path, "");
        CHECK(strstr(m, want[i]) != NULL);
        free(m);
    }
    rows = icebird("parts");
    CHECK_EQ(count_lines(rows), 11);
    free(rows);
    floe_tsource_logs_remove(src, "parts");
    floe_log_close(pl);
}

/* ---- widening a committed long column to double ---------------------- */

/* A topic of n partitions (logs named after it) with table.enable=true and
 * the configs keys[i]=vals[i]. */
static void add_topic_with(const char *name, int n, floe_log_t **pl, const char *const *keys,
                           const char *const *vals, size_t nkv)
{
    floe_err_t e;
    char path[512];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/log/%s-%d", dir, name, i);
        CHECK_EQ(floe_log_open(path, NULL, &pl[i], &e), 0);
        if (nopened < sizeof opened / sizeof opened[0]) {
            opened[nopened].log = pl[i];
            snprintf(opened[nopened].topic, sizeof opened[nopened].topic, "%s", name);
            opened[nopened++].part = i;
        }
    }
    const char *k[8] = {"table.enable"}, *v[8] = {"true"};
    for (size_t i = 0; i < nkv && i < 7; i++) {
        k[i + 1] = keys[i];
        v[i + 1] = vals[i];
    }
    CHECK_EQ(floe_tsource_logs_set(src, name, n, pl, k, v, 1 + (nkv < 7 ? nkv : 7), &e), 0);
}

/* The same with table.partition.by (NULL: unpartitioned). */
static void add_topic(const char *name, int n, floe_log_t **pl, const char *partition_by)
{
    const char *k[] = {"table.partition.by"}, *v[] = {partition_by};
    add_topic_with(name, n, pl, k, v, partition_by ? 1 : 0);
}

static void drop_topic(const char *name, int n, floe_log_t **pl)
{
    floe_tsource_logs_remove(src, name);
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < nopened; j++)
            if (opened[j].log == pl[i]) opened[j].log = NULL;
        floe_log_close(pl[i]);
    }
}

/* The live data files of default.NAME (copies), its current schema. */
typedef struct live {
    floe_ice_data_file_t *f;
    size_t n;
    floe_ice_schema_t *schema;
    int64_t records;
} live_t;

static void live_free(live_t *l)
{
    for (size_t i = 0; i < l->n; i++) floe_ice_data_file_clear(&l->f[i]);
    free(l->f);
    floe_ice_schema_free(l->schema);
    memset(l, 0, sizeof *l);
}

static int live_files(const char *name, live_t *l)
{
    memset(l, 0, sizeof *l);
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return -1;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    l->schema = floe_ice_schema_dup(floe_ice_metadata_current_schema(md));
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
    floe_ice_snapshot_content_t c;
    int rc = 0;
    if (s && (rc = floe_ice_snapshot_content_read(local, s, &c, &e)) == 0) {
        for (size_t m = 0; m < c.nmanifests; m++)
            for (size_t k = 0; k < c.nentries[m]; k++) {
                if (c.entries[m][k].status == FLOE_ICE_DELETED) continue;
                l->f = realloc(l->f, (l->n + 1) * sizeof *l->f);
                floe_ice_data_file_copy(&l->f[l->n++], &c.entries[m][k].file);
                l->records += c.entries[m][k].file.record_count;
            }
        floe_ice_snapshot_content_free(&c);
    }
    floe_ice_table_free(t);
    return rc;
}

static const floe_ice_col_metrics_t *metrics_of(const floe_ice_data_file_t *f, int32_t id)
{
    for (size_t i = 0; i < f->nmetrics; i++)
        if (f->metrics[i].id == id) return &f->metrics[i];
    return NULL;
}

static double bound(const floe_buf_t *b)
{
    double d = 0;
    if (b->len == 8) memcpy(&d, b->data, 8);
    return d;
}

static char *table_loc(const char *name)
{
    static char loc[512];
    snprintf(loc, sizeof loc, "%s/warehouse/default/%s", dir, name);
    return loc;
}

/* Check default.NAME against every record produced (dump lines "p\to\tjson")
 * with verify_table.mjs (icebird), orphan files included. */
static void verify_all(const char *name, const char *dump)
{
    char dpath[512];
    snprintf(dpath, sizeof dpath, "%s/%s.dump", dir, name);
    FILE *f = fopen(dpath, "w");
    fputs(dump, f);
    fclose(f);
    char *out = sh("cd %s/tests/interop && node verify_table.mjs %s %s --orphans 2>&1",
                   table_loc(name), dpath);
    CHECK(strstr(out, "not ok") == NULL && strstr(out, "ok - table rows equal") != NULL);
    if (strstr(out, "not ok")) printf("# %s", out);
    free(out);
}

/* A top-level, a nested and a list-element long committed over several
 * files of two partitions, then fractions arrive: the three become double
 * fields with new ids; every old row reads its old value as a double
 * (icebird), the metrics of the rewritten files are those of the doubles,
 * nothing goes to the dead-letter table, no file is left unreferenced. */
static void committed_long_widens_to_double(void)
{
    floe_log_t *pl[2];
    add_topic("wide", 2, pl, NULL);
    const char *a0[] = {"{\"id\":1,\"n\":{\"v\":10,\"s\":\"x\"},\"l\":[1,2]}",
                        "{\"id\":2,\"n\":{\"v\":-20}}"};
    const char *a1[] = {"{\"id\":3,\"n\":{\"v\":30},\"l\":[3]}"};
    produce_to(pl[0], 1700000000000LL, a0, 2);
    produce_to(pl[1], 1700000000000LL, a1, 1);
    CHECK_EQ(run_engine(), 3);
    const char *b0[] = {"{\"id\":4,\"n\":{\"v\":40}}"};
    const char *b1[] = {"{\"id\":5,\"l\":[5,6]}"};
    produce_to(pl[0], 1700000000000LL, b0, 1);
    produce_to(pl[1], 1700000000000LL, b1, 1);
    CHECK_EQ(run_engine(), 2);
    live_t before;
    CHECK_EQ(live_files("wide", &before), 0);
    CHECK(before.n >= 4);
    const floe_ice_field_t *f = floe_ice_schema_find_name(before.schema, "id");
    int32_t old_id = f ? f->id : -1, old_v = floe_ice_schema_find_name(before.schema, "n.v")->id;
    CHECK(f && f->type->kind == FLOE_ICE_LONG);

    /* fractions: in the top-level and the nested field (partition 0), in
     * the list (partition 1) while partition 1 still sends integers for id */
    const char *c0[] = {"{\"id\":6.5,\"n\":{\"v\":60.25}}", "{\"id\":7}"};
    const char *c1[] = {"{\"id\":8,\"l\":[0.5]}"};
    produce_to(pl[0], 1700000000000LL, c0, 2);
    produce_to(pl[1], 1700000000000LL, c1, 1);
    CHECK_EQ(run_engine(), 3);
    live_t after;
    CHECK_EQ(live_files("wide", &after), 0);
    CHECK_EQ(after.records, 8);
    const floe_ice_field_t *id = floe_ice_schema_find_name(after.schema, "id");
    const floe_ice_field_t *v = floe_ice_schema_find_name(after.schema, "n.v");
    const floe_ice_field_t *le = floe_ice_schema_find_name(after.schema, "l.element");
    CHECK(id && id->type->kind == FLOE_ICE_DOUBLE && id->id != old_id && !id->required);
    CHECK(v && v->type->kind == FLOE_ICE_DOUBLE && v->id != old_v);
    CHECK(le && le->type->kind == FLOE_ICE_DOUBLE);
    CHECK(floe_ice_schema_find(after.schema, old_id) == NULL);
    /* same place: id is still the first column after _kafka */
    CHECK(after.schema->root->fields[1].id == id->id);
    /* every live file speaks the new ids; bounds are doubles */
    double lo = 1e9, hi = -1e9;
    int64_t vals = 0;
    for (size_t i = 0; id && i < after.n; i++) {
        CHECK(metrics_of(&after.f[i], old_id) == NULL);
        const floe_ice_col_metrics_t *m = metrics_of(&after.f[i], id->id);
        CHECK(m != NULL);
        if (!m) continue;
        vals += m->values - m->nulls;
        if (m->has_lower && bound(&m->lower) < lo) lo = bound(&m->lower);
        if (m->has_upper && bound(&m->upper) > hi) hi = bound(&m->upper);
    }
    CHECK_EQ(vals, 8);
    CHECK(lo == 1.0 && hi == 8.0);
    /* every old file left the table (its rewrite took its place) */
    for (size_t i = 0; i < before.n; i++)
        for (size_t k = 0; k < after.n; k++) CHECK(strcmp(before.f[i].path, after.f[k].path) != 0);
    char *rows = icebird("wide");
    CHECK(strstr(rows, "\"id\":1,\"l\":[1,2],\"n\":{\"s\":\"x\",\"v\":10}") != NULL);
    CHECK(strstr(rows, "\"id\":2,\"l\":null,\"n\":{\"s\":null,\"v\":-20}") != NULL);
    CHECK(strstr(rows, "\"id\":5,\"l\":[5,6]") != NULL);
    CHECK(strstr(rows, "\"id\":6.5,\"l\":null,\"n\":{\"s\":null,\"v\":60.25}") != NULL);
    CHECK(strstr(rows, "\"id\":8,\"l\":[0.5]") != NULL);
    CHECK_EQ(count_lines(rows), 8);
    free(rows);
    live_t dlq;
    CHECK_EQ(live_files("wide_dlq", &dlq), 0);
    CHECK_EQ(dlq.records, 0);
    live_free(&dlq);
    /* DuckDB reads a rewritten file: the double column under the new id */
    char q[1024];
    for (size_t i = 0; i < after.n; i++) {
        if (!strstr(after.f[i].path, "/w-")) continue;
        snprintf(q, sizeof q, "SELECT field_id, type FROM parquet_schema('%s') WHERE name = 'id'",
                 after.f[i].path);
        rows = sh("cd %s/tests/interop && node duck_query.mjs \"%s\"%s", q, "");
        char want[64];
        snprintf(want, sizeof want, "[[\"%d\",\"DOUBLE\"]]\n", (int)(id ? id->id : 0));
        CHECK_STR(rows, want);
        free(rows);
        break;
    }
    verify_all("wide", "0\t0\t{\"id\":1,\"n\":{\"v\":10,\"s\":\"x\"},\"l\":[1,2]}\n"
                       "0\t1\t{\"id\":2,\"n\":{\"v\":-20}}\n"
                       "1\t0\t{\"id\":3,\"n\":{\"v\":30},\"l\":[3]}\n"
                       "0\t2\t{\"id\":4,\"n\":{\"v\":40}}\n"
                       "1\t1\t{\"id\":5,\"l\":[5,6]}\n"
                       "0\t3\t{\"id\":6.5,\"n\":{\"v\":60.25}}\n"
                       "0\t4\t{\"id\":7}\n"
                       "1\t2\t{\"id\":8,\"l\":[0.5]}\n");
    /* integers keep coming: they are doubles now, no further rewrite */
    const char *d0[] = {"{\"id\":9}"};
    produce_to(pl[0], 1700000000000LL, d0, 1);
    CHECK_EQ(run_engine(), 1);
    live_t last;
    CHECK_EQ(live_files("wide", &last), 0);
    CHECK_EQ(last.n, after.n + 1);
    CHECK_EQ(floe_ice_schema_find_name(last.schema, "id")->id, id ? id->id : 0);
    live_free(&last);
    live_free(&before);
    live_free(&after);
    drop_topic("wide", 2, pl);
}

/* A partitioned table: each rewritten file stays in its partition folder
 * with its partition tuple and spec.  A partition source stays long. */
static void widening_keeps_partitions(void)
{
    floe_log_t *pl[1];
    add_topic("widep", 1, pl, "region");
    const char *a[] = {"{\"region\":\"eu\",\"x\":1}", "{\"region\":\"us\",\"x\":2}", "{\"x\":3}"};
    produce_to(pl[0], 1700000000000LL, a, 3);
    CHECK_EQ(run_engine(), 3);
    const char *b[] = {"{\"region\":\"eu\",\"x\":2.5}"};
    produce_to(pl[0], 1700000000000LL, b, 1);
    CHECK_EQ(run_engine(), 1);
    live_t l;
    CHECK_EQ(live_files("widep", &l), 0);
    CHECK_EQ(l.records, 4);
    size_t rewritten = 0;
    for (size_t i = 0; i < l.n; i++) {
        const floe_ice_data_file_t *f = &l.f[i];
        CHECK_EQ(f->npartition, 1);
        if (f->npartition != 1) continue;
        const floe_ice_value_t *pv = &f->partition[0];
        char want[64];
        snprintf(want, sizeof want, "/region=%.*s/", pv->is_null ? 4 : (int)pv->len,
                 pv->is_null ? "null" : (const char *)pv->bytes);
        CHECK(strstr(f->path, want) != NULL);
        rewritten += strstr(f->path, "/w-") != NULL;
    }
    CHECK_EQ(rewritten, 3); /* eu, us and null of the first commit */
    live_free(&l);
    char *rows = icebird("widep");
    CHECK(strstr(rows, "\"region\":\"us\",\"x\":2}") != NULL);
    CHECK(strstr(rows, "\"region\":\"eu\",\"x\":2.5}") != NULL);
    CHECK(strstr(rows, "\"region\":null,\"x\":3}") != NULL);
    free(rows);
    verify_all("widep", "0\t0\t{\"region\":\"eu\",\"x\":1}\n0\t1\t{\"region\":\"us\",\"x\":2}\n"
                        "0\t2\t{\"x\":3}\n0\t3\t{\"region\":\"eu\",\"x\":2.5}\n");
    drop_topic("widep", 1, pl);

    /* a partition source cannot change its field id: its fractions are
     * dead letters, the column stays long */
    add_topic("widepin", 1, pl, "bucket(n, 2)");
    const char *c[] = {"{\"n\":1}", "{\"n\":1.5}", "{\"n\":2}"};
    produce_to(pl[0], 1700000000000LL, c, 1);
    CHECK_EQ(run_engine(), 1);
    produce_to(pl[0], 1700000000000LL, c + 1, 2);
    CHECK_EQ(run_engine(), 1);
    CHECK_EQ(live_files("widepin", &l), 0);
    CHECK_EQ(l.records, 2);
    CHECK(floe_ice_schema_find_name(l.schema, "n")->type->kind == FLOE_ICE_LONG);
    live_free(&l);
    CHECK_EQ(live_files("widepin_dlq", &l), 0);
    CHECK_EQ(l.records, 1);
    live_free(&l);
    rows = icebird("widepin_dlq");
    CHECK(strstr(rows, "\"reason\":\"field 'n' is long, value at byte 5 is a fraction\"") != NULL);
    free(rows);
    drop_topic("widepin", 1, pl);
}

/* A widening broken at its n-th storage operation (counted from the end
 * of the table's opening: the maintenance side's rewrite and commit, then
 * the engine's commit of the record that needed it), for every n until
 * one passes whole (a fresh table each time, so the count ends): right
 * after the break the table is the old one (the field long, old files)
 * or the new one (the field double, every live file rewritten; the
 * record that asked for it committed or not yet), never a mix; the next
 * run completes it: every record is in the table once and no file is
 * unreferenced (icebird, every eighth table and the last). */
static void widening_broken_anywhere_reads_whole(void)
{
    /* only this table's operations count (and the others' openings cost) */
    floe_tsource_logs_remove(src, "web.events");
    floe_tsource_logs_remove(src, "rd");
    uint64_t nth, opening = 0;
    size_t switched = 0; /* breaks after which the table was the new one */
    for (nth = 1; nth <= 400; nth++) {
        char topic[32];
        snprintf(topic, sizeof topic, "widec%d", (int)nth);
        floe_log_t *pl[1];
        add_topic(topic, 1, pl, NULL);
        const char *v1[] = {"{\"k\":\"a\",\"f\":{\"x\":7}}", "{\"f\":{\"x\":8}}"};
        const char *v2[] = {"{\"k\":\"b\",\"f\":{\"x\":7.5}}"};
        produce_to(pl[0], 1700000000000LL, v1, 1);
        CHECK_EQ(run_engine(), 1);
        produce_to(pl[0], 1700000000000LL, v1 + 1, 1);
        CHECK_EQ(run_engine(), 1);
        /* the operations of a run with nothing to commit: the opening
         * (the same for every table made the same way) */
        if (nth == 1) {
            floe_fileio_fault_disarm(io);
            CHECK_EQ(run_engine(), 0);
            opening = floe_fileio_fault_ops(io);
        }
        produce_to(pl[0], 1700000000000LL, v2, 1);
        floe_fileio_fault_arm(io, opening + nth, FLOE_FAULT_CRASH);
        run_engine();
        bool fired = floe_fileio_fault_fired(io);
        floe_fileio_fault_disarm(io);
        /* right after the break: old or new, whole */
        live_t l;
        CHECK_EQ(live_files(topic, &l), 0);
        const floe_ice_field_t *f = floe_ice_schema_find_name(l.schema, "f.x");
        CHECK(f != NULL);
        if (f && f->type->kind == FLOE_ICE_LONG) {
            CHECK_EQ(l.records, 2);
        } else if (f) {
            /* the widening's snapshot, then (or not yet) the record's */
            CHECK(l.records == 2 || l.records == 3);
            CHECK(f->type->kind == FLOE_ICE_DOUBLE);
            switched++;
        }
        /* no live file holds a field the schema does not have (the old id) */
        for (size_t i = 0; i < l.n; i++)
            for (size_t k = 0; k < l.f[i].nmetrics; k++)
                CHECK(floe_ice_schema_find(l.schema, l.f[i].metrics[k].id) != NULL);
        live_free(&l);
        run_engine(); /* 1 record again, or 0 when the broken commit had landed */
        CHECK_EQ(live_files(topic, &l), 0);
        CHECK_EQ(l.records, 3);
        f = floe_ice_schema_find_name(l.schema, "f.x");
        CHECK(f && f->type->kind == FLOE_ICE_DOUBLE);
        live_free(&l);
        /* one more commit (a version-hint left behind by the break lags
         * until the next commit: icebird reads the table through it) */
        const char *v3[] = {"{\"f\":{\"x\":9}}"};
        produce_to(pl[0], 1700000000000LL, v3, 1);
        CHECK_EQ(run_engine(), 1);
        if (nth % 8 == 0 || !fired)
            verify_all(topic, "0\t0\t{\"k\":\"a\",\"f\":{\"x\":7}}\n0\t1\t{\"f\":{\"x\":8}}\n"
                              "0\t2\t{\"k\":\"b\",\"f\":{\"x\":7.5}}\n0\t3\t{\"f\":{\"x\":9}}\n");
        drop_topic(topic, 1, pl);
        if (!fired) break; /* the whole commit ran before the n-th operation */
    }
    printf("# widenings broken at each of their %llu storage operations (%zu times after the "
           "widened schema landed)\n",
           (unsigned long long)nth - 1, switched);
    CHECK(nth > 5 && nth < 400);
    CHECK(switched > 0);
}

/* `region, day(ts)` where ts is a JSON string: RFC 3339 date-times infer a
 * timestamptz column, so day() applies; offsets in the text are honoured
 * (23:30-05:00 is the next day in UTC). */
static void partitioned_by_region_and_day_of_json_timestamps(void)
{
    floe_err_t e;
    char path[512];
    floe_log_t *pl;
    snprintf(path, sizeof path, "%s/log/ev-0", dir);
    CHECK_EQ(floe_log_open(path, NULL, &pl, &e), 0);
    const char *keys[] = {"table.enable", "table.partition.by"};
    const char *vals[] = {"true", "region, day(ts)"};
    floe_tsource_logs_set(src, "ev", 1, &pl, keys, vals, 2, &e);
    const char *recs[] = {"{\"region\":\"eu\",\"ts\":\"2026-12-02T17:16:57Z\",\"v\":1}",
                          "{\"region\":\"us\",\"ts\":\"2026-12-01T23:30:00-05:00\",\"v\":2}",
                          "{\"region\":\"eu\",\"ts\":\"2026-12-01 08:00:00.5+01:00\",\"v\":3}",
                          "{\"region\":\"eu\",\"ts\":\"not a time\",\"v\":4}"};
    produce_to(pl, 1700000000000LL, recs, 4);
    CHECK_EQ(run_engine(), 3);
    snprintf(path, sizeof path, "%s/warehouse/default/ev", dir);
    char *m = sh("cd %s/tests/interop && node manifest_partitions.mjs %s%s", path, "");
    CHECK(strstr(m, "\"partition\":{\"region\":\"eu\",\"ts_day\":20789},\"dir\":\"region=eu/"
                    "ts_day=2026-12-02\"") != NULL);
    CHECK(strstr(m, "\"partition\":{\"region\":\"us\",\"ts_day\":20789},\"dir\":\"region=us/"
                    "ts_day=2026-12-02\"") != NULL);
    CHECK(strstr(m, "\"partition\":{\"region\":\"eu\",\"ts_day\":20788},\"dir\":\"region=eu/"
                    "ts_day=2026-12-01\"") != NULL);
    if (!strstr(m, "ts_day\":20788")) printf("# %s", m);
    free(m);
    char *rows = icebird("ev");
    CHECK_EQ(count_lines(rows), 3);
    CHECK(strstr(rows, "\"ts\":\"2026-12-02T04:30:00.000Z\",\"v\":\"2\"") != NULL);
    CHECK(strstr(rows, "\"ts\":\"2026-12-01T07:00:00.500Z\",\"v\":\"3\"") != NULL);
    free(rows);
    rows = icebird("ev_dlq");
    CHECK(strstr(rows, "'ts' is timestamptz") != NULL);
    CHECK_EQ(count_lines(rows), 1);
    free(rows);
    floe_tsource_logs_remove(src, "ev");
    floe_log_close(pl);
}

/* A topic whose table.* configs were persisted bad (before they were
 * checked where they enter): no table is opened, the status lists it as
 * paused with the reason and the key, and other tables run on; fixed, the
 * table starts and takes the records. */
static void bad_config_pauses_with_reason_until_fixed(void)
{
    floe_log_t *pl;
    floe_err_t e;
    char path[512];
    snprintf(path, sizeof path, "%s/log/badcfg-0", dir);
    CHECK_EQ(floe_log_open(path, NULL, &pl, &e), 0);
    const char *keys[] = {"table.enable", "table.commit.interval.ms"};
    const char *bad[] = {"true", "abc"}, *good[] = {"true", "1s"};
    CHECK_EQ(floe_tsource_logs_set(src, "badcfg", 1, &pl, keys, bad, 2, &e), 0);
    const char *v[] = {"{\"a\":1}", "{\"a\":2}"};
    produce_to(pl, 1700000000000LL, v, 2);
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    for (int round = 0; round < 3; round++) floe_engine_run_once(eng, true, &e);
    floe_buf_t st = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &st);
    const char *js = floe_buf_cstr(&st);
    CHECK(strstr(js, "{\"topic\":\"badcfg\",\"table\":\"default.badcfg\",\"state\":\"paused\","
                     "\"reason\":\"bad configuration: topic 'badcfg': table.commit.interval.ms: "
                     "invalid duration 'abc'") != NULL);
    CHECK(strstr(js, "\"topic\":\"web.events\"") != NULL); /* the others run */
    floe_buf_reset(&st);
    floe_engine_metrics(eng, &st);
    CHECK(strstr(floe_buf_cstr(&st), "floe_table_paused{table=\"default.badcfg\"} 1\n") != NULL);
    CHECK_EQ(snapshots("badcfg"), 0);
    /* the fix */
    CHECK_EQ(floe_tsource_logs_set(src, "badcfg", 1, &pl, keys, good, 2, &e), 0);
    CHECK_EQ(floe_engine_run_once(eng, true, &e), 2);
    floe_buf_reset(&st);
    floe_engine_status_json(eng, &st);
    CHECK(strstr(floe_buf_cstr(&st), "bad configuration") == NULL);
    CHECK_EQ(snapshots("badcfg"), 1);
    floe_buf_free(&st);
    floe_engine_free(eng);
    floe_tsource_logs_remove(src, "badcfg");
    floe_log_close(pl);
}

/* Topic "rd" with table.json.coerce on or off. */
static void rd_config(bool coerce)
{
    const char *keys[] = {"table.enable", "table.commit.interval.ms", "table.json.coerce"};
    const char *vals[] = {"true", "100ms", coerce ? "true" : "false"};
    floe_err_t e;
    floe_tsource_logs_set(src, "rd", 1, &rdlog, keys, vals, 3, &e);
}

static size_t count_of(const char *rows, const char *what)
{
    size_t n = 0;
    for (const char *p = rows; (p = strstr(p, what)); p++) n++;
    return n;
}

/* Re-drive after a fix: quoted numbers in the DLQ move into the table
 * once coercion is on; a re-drive broken at each of its storage operations
 * and run again (or finished by the next open) leaves every record in
 * exactly one of the two tables. */
static void redrive_broken_anywhere_moves_each_record_once(void)
{
    rd_config(false);
    const char *first[] = {"{\"n\":1,\"s\":\"a\"}", "{\"n\":\"x\"}", "{\"n\":\"42\",\"s\":\"q\"}"};
    produce_to(rdlog, 1700000000000LL, first, 3);
    CHECK_EQ(run_engine(), 1);
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat};
    /* still off: nothing converts better, the DLQ stays as it is */
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_engine_redrive(eng, "rd", &out, &e), 0);
    CHECK(strstr(floe_buf_cstr(&out), "\"examined\":2,\"moved\":0,\"still_invalid\":2") != NULL);
    floe_buf_reset(&out);
    CHECK_EQ(floe_engine_redrive(eng, "nosuch", &out, &e), -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    floe_engine_free(eng);
    size_t dlq_snaps = snapshots("rd_dlq");

    /* how many storage operations a re-drive takes, then a crash at a
     * dozen points spread over them, the first and the last included */
    uint64_t total = 0, points[14];
    size_t npoints = 0;
    int n = 100;
    for (size_t k = 0; k <= npoints; k++, n++) {
        uint64_t nth = k == 0 ? UINT64_MAX : points[k - 1];
        /* one more quoted record in the DLQ */
        rd_config(false);
        char doc[64];
        snprintf(doc, sizeof doc, "{\"n\":\"%d\"}", n);
        const char *v[] = {doc};
        produce_to(rdlog, 1700000000000LL, v, 1);
        CHECK_EQ(run_engine(), 0);
        /* the fix, then a re-drive that dies at its nth storage operation */
        rd_config(true);
        eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
        floe_engine_run_once(eng, true, &e);
        floe_fileio_fault_arm(io, nth, FLOE_FAULT_CRASH);
        floe_buf_reset(&out);
        int rc = floe_engine_redrive(eng, "default.rd", &out, &e);
        bool fired = floe_fileio_fault_fired(io);
        if (k == 0) {
            total = floe_fileio_fault_ops(io);
            for (uint64_t i = 0; i < 12; i++) points[npoints++] = 1 + i * (total - 1) / 11;
        }
        floe_fileio_fault_disarm(io);
        floe_engine_free(eng);
        CHECK(fired ? rc == -1 || strstr(floe_buf_cstr(&out), "\"moved\":1") != NULL
                    : rc == 0 && strstr(floe_buf_cstr(&out), "\"moved\":") != NULL);
        /* a new run: its open finishes a half-done re-drive; then again */
        eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
        floe_buf_reset(&out);
        CHECK_EQ(floe_engine_redrive(eng, "rd", &out, &e), 0);
        floe_engine_free(eng);
    }
    printf("# a re-drive takes %llu storage operations; broken at %zu of them\n",
           (unsigned long long)total, npoints);
    CHECK(total > 10);
    CHECK(snapshots("rd_dlq") > dlq_snaps);
    char *rows = icebird("rd");
    CHECK_EQ(count_lines(rows), (size_t)(2 + n - 100));
    CHECK_EQ(count_of(rows, "\"n\":\"42\""), 1);
    for (int i = 100; i < n; i++) {
        char want[64];
        snprintf(want, sizeof want, "\"n\":\"%d\"", i);
        CHECK_EQ(count_of(rows, want), 1);
    }
    free(rows);
    rows = icebird("rd_dlq");
    if (count_lines(rows) != 1) printf("# rd_dlq holds:\n%s", rows);
    CHECK_EQ(count_lines(rows), 1);
    CHECK(strstr(rows, "\"value\":\"{\\\"n\\\":\\\"x\\\"}\"") != NULL);
    CHECK(strstr(rows, "'n' is long") != NULL);
    free(rows);
    floe_buf_free(&out);
    /* nothing left over: a last run deletes no file and changes nothing */
    CHECK_EQ(run_engine(), 0);
}

/* ---- maintenance (table/maint.h) ------------------------------------------ */

/* Run operator request op on table `name` with a fresh engine that opened
 * the tables (the maintenance thread not started: it runs here). */
static int maintain(const char *name, floe_tmaint_op_t op, floe_buf_t *out, floe_err_t *e)
{
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), e);
    floe_engine_run_once(eng, false, e);
    floe_tmaint_req_t req = {.op = op, .older_than_ms = -1};
    floe_buf_reset(out);
    int rc = floe_engine_maintain(eng, name, &req, out, e);
    floe_engine_free(eng);
    return rc;
}

/* DuckDB's rows (cols) of the live data files of default.NAME, ordered by
 * Kafka partition and offset (caller frees). */
static char *duck_live(const char *name, const char *cols)
{
    live_t l;
    live_files(name, &l);
    floe_buf_t q = FLOE_BUF_INIT;
    floe_buf_printf(&q,
                    "cd %s/tests/interop && node duck_query.mjs \"SELECT %s FROM read_parquet([",
                    getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".", cols);
    for (size_t i = 0; i < l.n; i++) floe_buf_printf(&q, "%s'%s'", i ? "," : "", l.f[i].path);
    floe_buf_append_str(&q, "], union_by_name=true) ORDER BY _kafka.partition, _kafka.offset\"");
    char *out = run(floe_buf_cstr(&q));
    floe_buf_free(&q);
    live_free(&l);
    return out;
}

/* The current snapshot of default.NAME and its parent: summary value key
 * of each, into a and b. */
static void head_and_parent(const char *name, const char *key, char *a, char *b, size_t size,
                            char *op, size_t opsize)
{
    floe_ice_table_t *t;
    floe_err_t e;
    a[0] = b[0] = op[0] = '\0';
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(t);
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(md);
    const floe_ice_snapshot_t *p = s ? floe_ice_metadata_snapshot(md, s->parent_id) : NULL;
    const char *va = s ? floe_ice_props_get(&s->summary, key) : NULL;
    const char *vb = p ? floe_ice_props_get(&p->summary, key) : NULL;
    snprintf(a, size, "%s", va ? va : "");
    snprintf(b, size, "%s", vb ? vb : "");
    snprintf(op, opsize, "%s", s && s->operation ? s->operation : "");
    floe_ice_table_free(t);
}

/* Small files of a partitioned table (two Kafka partitions, two regions,
 * four commits) compacted by an operator request: icebird and DuckDB read
 * the same rows before and after; fewer files, each in its partition
 * folder with its tuple and the table's field ids; the replace snapshot
 * carries the engine's offsets and commit id, so the engine resumes from
 * it reading nothing twice. */
static void compaction_keeps_rows_for_every_reader(void)
{
    floe_log_t *pl[2];
    add_topic("cmp", 2, pl, "region");
    floe_buf_t dump = FLOE_BUF_INIT;
    int off[2] = {0, 0};
    for (int r = 0; r < 4; r++) {
        char a[96], b[96], c[96];
        snprintf(a, sizeof a, "{\"region\":\"eu\",\"id\":%d,\"n\":{\"v\":%d}}", 10 * r, r);
        snprintf(b, sizeof b, "{\"region\":\"us\",\"id\":%d,\"s\":\"x%d\"}", 10 * r + 1, r);
        snprintf(c, sizeof c, "{\"region\":\"eu\",\"id\":%d}", 10 * r + 2);
        const char *v0[] = {a, b}, *v1[] = {c};
        produce_to(pl[0], 1700000000000LL, v0, 2);
        produce_to(pl[1], 1700000000000LL, v1, 1);
        floe_buf_printf(&dump, "0\t%d\t%s\n0\t%d\t%s\n1\t%d\t%s\n", off[0], a, off[0] + 1, b,
                        off[1], c);
        off[0] += 2;
        off[1] += 1;
        CHECK_EQ(run_engine(), 3);
    }
    live_t before, after;
    CHECK_EQ(live_files("cmp", &before), 0);
    CHECK_EQ(before.n, 12); /* a file per commit, Kafka partition and region */
    const char *cols = "_kafka.partition, _kafka.offset, _kafka.timestamp, region, id, n, s";
    char *ib = icebird("cmp"), *db = duck_live("cmp", cols);
    floe_buf_t out = FLOE_BUF_INIT;
    floe_err_t e;
    CHECK_EQ(maintain("cmp", FLOE_TMAINT_COMPACT, &out, &e), 0);
    CHECK(strstr(floe_buf_cstr(&out), "\"groups\":2,\"files_in\":12,\"files_out\":2") != NULL);
    CHECK_EQ(live_files("cmp", &after), 0);
    CHECK_EQ(after.n, 2);
    CHECK_EQ(after.records, before.records);
    char *ia = icebird("cmp"), *da = duck_live("cmp", cols);
    CHECK_STR(ia, ib);
    CHECK_STR(da, db);
    CHECK_EQ(count_lines(ia), 12);
    free(ia);
    free(ib);
    free(da);
    free(db);
    for (size_t i = 0; i < after.n; i++) {
        const floe_ice_data_file_t *f = &after.f[i];
        CHECK(strstr(f->path, "/c-") != NULL);
        CHECK_EQ(f->npartition, 1);
        if (f->npartition != 1) continue;
        char want[64];
        snprintf(want, sizeof want, "/region=%.*s/", (int)f->partition[0].len,
                 (const char *)f->partition[0].bytes);
        CHECK(strstr(f->path, want) != NULL);
    }
    /* the same field ids as the engine's own files */
    char q[1024];
    snprintf(q, sizeof q,
             "SELECT name, field_id FROM parquet_schema('%s') WHERE field_id IS NOT NULL "
             "ORDER BY name",
             after.f[0].path);
    char *ida = sh("cd %s/tests/interop && node duck_query.mjs \"%s\"%s", q, "");
    snprintf(q, sizeof q,
             "SELECT name, field_id FROM parquet_schema('%s') WHERE field_id IS NOT NULL "
             "ORDER BY name",
             before.f[before.n - 1].path);
    char *idb = sh("cd %s/tests/interop && node duck_query.mjs \"%s\"%s", q, "");
    CHECK_STR(ida, idb);
    CHECK(strstr(ida, "[\"offset\",\"") != NULL);
    free(ida);
    free(idb);
    /* the engine's progress rides on the replace snapshot */
    char a[128], b[128], op[32];
    head_and_parent("cmp", "floe.offsets", a, b, sizeof a, op, sizeof op);
    CHECK_STR(op, "replace");
    CHECK_STR(a, "{\"0\":8,\"1\":4}");
    CHECK_STR(a, b);
    head_and_parent("cmp", "floe.commit-id", a, b, sizeof a, op, sizeof op);
    CHECK(a[0] && !strcmp(a, b));
    CHECK_EQ(run_engine(), 0);
    const char *more[] = {"{\"region\":\"us\",\"id\":99}"};
    produce_to(pl[1], 1700000000000LL, more, 1);
    floe_buf_printf(&dump, "1\t4\t%s\n", more[0]);
    CHECK_EQ(run_engine(), 1);
    verify_all("cmp", floe_buf_cstr(&dump));
    live_free(&before);
    live_free(&after);
    floe_buf_free(&out);
    floe_buf_free(&dump);
    drop_topic("cmp", 2, pl);
}

/* A compaction broken at its n-th storage operation (a crash: every later
 * one fails too; or, every other n, a lost answer: the operation is done
 * but reported failed), for every n until one passes whole, on a fresh
 * table of three small files each time: right after the break the table
 * holds every row once (the old files or the compacted one, never both,
 * never neither); a compaction after it completes, and nothing is left
 * unreferenced (icebird, every eighth table and the last). */
static void compaction_broken_anywhere_keeps_every_row_once(void)
{
    uint64_t nth;
    size_t compacted = 0;
    floe_buf_t out = FLOE_BUF_INIT;
    floe_err_t e;
    for (nth = 1; nth <= 300; nth++) {
        char topic[32];
        snprintf(topic, sizeof topic, "cmpb%d", (int)nth);
        floe_log_t *pl[1];
        add_topic(topic, 1, pl, NULL);
        floe_buf_t dump = FLOE_BUF_INIT;
        for (int i = 0; i < 3; i++) {
            char v[64];
            snprintf(v, sizeof v, "{\"i\":%d,\"t\":\"r%d\"}", i, i);
            const char *vv[] = {v};
            produce_to(pl[0], 1700000000000LL, vv, 1);
            floe_buf_printf(&dump, "0\t%d\t%s\n", i, v);
            CHECK_EQ(run_engine(), 1);
        }
        floe_engine_config_t cfg = {.catalog = cat};
        floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
        floe_engine_run_once(eng, false, &e); /* opened: only the compaction counts */
        floe_fileio_fault_arm(io, nth, nth % 2 ? FLOE_FAULT_LOST_ACK : FLOE_FAULT_CRASH);
        floe_tmaint_req_t req = {.op = FLOE_TMAINT_COMPACT, .older_than_ms = -1};
        floe_buf_reset(&out);
        floe_engine_maintain(eng, topic, &req, &out, &e);
        bool fired = floe_fileio_fault_fired(io);
        floe_fileio_fault_disarm(io);
        floe_engine_free(eng);
        live_t l;
        CHECK_EQ(live_files(topic, &l), 0);
        CHECK_EQ(l.records, 3);
        CHECK(l.n == 3 || l.n == 1);
        compacted += l.n == 1;
        live_free(&l);
        CHECK_EQ(run_engine(), 0); /* the open deletes what the break left behind */
        CHECK_EQ(maintain(topic, FLOE_TMAINT_COMPACT, &out, &e), 0);
        CHECK_EQ(live_files(topic, &l), 0);
        CHECK_EQ(l.records, 3);
        CHECK_EQ(l.n, 1);
        live_free(&l);
        if (nth % 8 == 0 || !fired) {
            CHECK_EQ(run_engine(), 0);
            verify_all(topic, floe_buf_cstr(&dump));
        }
        floe_buf_free(&dump);
        drop_topic(topic, 1, pl);
        if (!fired) break;
    }
    printf("# compactions broken at each of their %llu storage operations (%zu times the "
           "compaction had landed)\n",
           (unsigned long long)nth - 1, compacted);
    CHECK(nth > 10 && nth < 300);
    CHECK(compacted > 0);
    floe_buf_free(&out);
}

/* A FileIO that holds reads of data files while its gate is closed: the
 * maintenance thread's rewrite waits there, as a large table's would. */
typedef struct gate_io {
    floe_fileio_t base;
    floe_fileio_t *inner;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool closed;
    int waited;
    atomic_int slow_ms; /* each read of a manifest takes this long more */
} gate_io_t;

static int g_create(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                    floe_err_t *err)
{
    return floe_fileio_create(((gate_io_t *)io)->inner, path, flags, out, err);
}

static int g_read(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out, floe_err_t *err)
{
    gate_io_t *g = (gate_io_t *)io;
    size_t n = strlen(path);
    const char *base = strrchr(path, '/');
    if (atomic_load(&g->slow_ms) && base && strstr(base, "-m") && n > 5 &&
        !strcmp(path + n - 5, ".avro") && strncmp(base, "/snap-", 6))
        floe_sleep_ms(atomic_load(&g->slow_ms));
    if (strstr(path, "/data/") && n > 8 && !strcmp(path + n - 8, ".parquet")) {
        pthread_mutex_lock(&g->mu);
        if (g->closed) g->waited++;
        pthread_cond_broadcast(&g->cv);
        while (g->closed) pthread_cond_wait(&g->cv, &g->mu);
        pthread_mutex_unlock(&g->mu);
    }
    return floe_fileio_read(g->inner, path, max, out, err);
}

static int g_exists(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err)
{
    return floe_fileio_exists(((gate_io_t *)io)->inner, path, out, err);
}

static int g_remove(floe_fileio_t *io, const char *path, floe_err_t *err)
{
    return floe_fileio_remove(((gate_io_t *)io)->inner, path, err);
}

static int g_rename(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                    floe_err_t *err)
{
    return floe_fileio_rename(((gate_io_t *)io)->inner, from, to, noreplace, err);
}

static int g_list(floe_fileio_t *io, const char *d, char ***names, size_t *n, floe_err_t *err)
{
    return floe_fileio_list(((gate_io_t *)io)->inner, d, names, n, err);
}

static int g_list_entries(floe_fileio_t *io, const char *d, floe_fileio_entry_t **out, size_t *n,
                          floe_err_t *err)
{
    return floe_fileio_list_entries(((gate_io_t *)io)->inner, d, out, n, err);
}

static void g_destroy(floe_fileio_t *io)
{
    (void)io;
}

static const floe_fileio_ops_t gate_ops = {.create = g_create,
                                           .read = g_read,
                                           .exists = g_exists,
                                           .remove = g_remove,
                                           .rename = g_rename,
                                           .list = g_list,
                                           .destroy = g_destroy,
                                           .list_entries = g_list_entries};

static void gate_set(gate_io_t *g, bool closed)
{
    pthread_mutex_lock(&g->mu);
    g->closed = closed;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* The next offset default.NAME records for partition p (-1: none). */
static int64_t committed_at(const char *name, int p)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return -1;
    int64_t off[8];
    if (floe_offsets_read(floe_ice_table_metadata(t), off, 8, &e) < 0) off[p] = -1;
    floe_ice_table_free(t);
    return off[p];
}

static int field_kind(const char *name, const char *field)
{
    live_t l;
    if (live_files(name, &l) < 0) return -1;
    const floe_ice_field_t *f = l.schema ? floe_ice_schema_find_name(l.schema, field) : NULL;
    int k = f ? (int)f->type->kind : -1;
    live_free(&l);
    return k;
}

/* Wait up to s seconds for cond. */
#define WAIT_FOR(cond, s)                                                 \
    do {                                                                  \
        for (int w_ = 0; w_ < (s)*20 && !(cond); w_++) floe_sleep_ms(50); \
    } while (0)

/* The engine running with its maintenance thread, commits every 100 ms: a
 * fraction for a committed long holds its partition and starts the
 * rewrite; while the rewrite waits on the old files, the other partition
 * (and the first up to the fraction) keeps committing, and readers see
 * every committed value, old ones as longs, none null; once the rewrite
 * lands, the held records follow and every value reads as a double. */
static void widening_lets_the_table_commit_meanwhile(void)
{
    floe_log_t *pl[2];
    floe_err_t e;
    char path[512];
    const char *keys[] = {"table.commit.interval.ms"}, *vals[] = {"100ms"};
    add_topic_with("wth", 2, pl, keys, vals, 1);
    const char *a0[] = {"{\"id\":1,\"v\":10}", "{\"id\":2,\"v\":-20}"};
    const char *a1[] = {"{\"id\":3,\"v\":30}"};
    produce_to(pl[0], 1700000000000LL, a0, 2);
    produce_to(pl[1], 1700000000000LL, a1, 1);
    CHECK_EQ(run_engine(), 3);
    const char *b0[] = {"{\"id\":4,\"v\":40}"};
    produce_to(pl[0], 1700000000000LL, b0, 1);
    CHECK_EQ(run_engine(), 1);
    CHECK_EQ(field_kind("wth", "v"), FLOE_ICE_LONG);

    gate_io_t g = {.base = {.ops = &gate_ops}, .inner = local};
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    snprintf(path, sizeof path, "%s/warehouse", dir);
    floe_ice_catalog_t *gcat = floe_ice_catalog_fs_new(&g.base, path, &e);
    floe_engine_config_t cfg = {.catalog = gcat, .discover_ms = 200};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    gate_set(&g, true);
    CHECK_EQ(floe_engine_start(eng, &e), 0);
    /* a fraction at partition 0 offset 3, integers after it and on 1 */
    const char *c0[] = {"{\"id\":5,\"v\":50}", "{\"id\":6,\"v\":60.5}", "{\"id\":7,\"v\":70}"};
    produce_to(pl[0], 1700000000000LL, c0, 3);
    pthread_mutex_lock(&g.mu);
    for (int w = 0; w < 600 && !g.waited; w++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&g.cv, &g.mu, &ts);
    }
    int waited = g.waited;
    pthread_mutex_unlock(&g.mu);
    CHECK(waited > 0); /* the rewrite reads the old files: it waits */
    const char *c1[] = {"{\"id\":8,\"v\":80}", "{\"id\":9,\"v\":90}"};
    produce_to(pl[1], 1700000000000LL, c1, 2);
    WAIT_FOR(committed_at("wth", 1) == 3 && committed_at("wth", 0) == 4, 60);
    /* committed while the rewrite waits: up to the fraction on 0, all of 1 */
    CHECK_EQ(committed_at("wth", 1), 3);
    CHECK_EQ(committed_at("wth", 0), 4);
    CHECK_EQ(field_kind("wth", "v"), FLOE_ICE_LONG);
    char *rows = icebird("wth");
    CHECK_EQ(count_lines(rows), 7);
    CHECK_EQ(count_of(rows, "\"v\":null"), 0);
    CHECK(strstr(rows, "\"id\":\"8\",\"v\":\"80\"") != NULL);
    CHECK(strstr(rows, "\"id\":\"5\",\"v\":\"50\"") != NULL);
    CHECK(strstr(rows, "\"id\":\"6\"") == NULL);
    free(rows);
    gate_set(&g, false);
    WAIT_FOR(committed_at("wth", 0) == 6, 60);
    CHECK_EQ(committed_at("wth", 0), 6);
    CHECK_EQ(field_kind("wth", "v"), FLOE_ICE_DOUBLE);
    floe_buf_t st = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &st);
    CHECK(strstr(floe_buf_cstr(&st), "\"widenings\":1,\"widened_files\":") != NULL);
    floe_buf_free(&st);
    floe_engine_free(eng);
    floe_ice_catalog_free(gcat);
    pthread_mutex_destroy(&g.mu);
    pthread_cond_destroy(&g.cv);
    rows = icebird("wth");
    CHECK(strstr(rows, "\"id\":\"1\",\"v\":10}") != NULL); /* longs read as doubles now */
    CHECK(strstr(rows, "\"id\":\"6\",\"v\":60.5}") != NULL);
    CHECK_EQ(count_of(rows, "\"v\":null"), 0);
    free(rows);
    verify_all("wth", "0\t0\t{\"id\":1,\"v\":10}\n0\t1\t{\"id\":2,\"v\":-20}\n"
                      "1\t0\t{\"id\":3,\"v\":30}\n0\t2\t{\"id\":4,\"v\":40}\n"
                      "0\t3\t{\"id\":5,\"v\":50}\n0\t4\t{\"id\":6,\"v\":60.5}\n"
                      "0\t5\t{\"id\":7,\"v\":70}\n1\t1\t{\"id\":8,\"v\":80}\n"
                      "1\t2\t{\"id\":9,\"v\":90}\n");
    floe_tsource_logs_remove(src, "wth");
    for (int i = 0; i < 2; i++) floe_log_close(pl[i]);
}

typedef struct maint_counts {
    long long files, snaps, compactions, expired;
} maint_counts_t;

/* The maintenance figures of the engine's status for topic `name`, -1
 * where absent. */
static maint_counts_t maint_counts(floe_engine_t *eng, const char *name)
{
    maint_counts_t c = {-1, -1, -1, -1};
    floe_buf_t st = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &st);
    char want[96];
    snprintf(want, sizeof want, "\"topic\":\"%s\"", name);
    const char *mj = strstr(floe_buf_cstr(&st), want);
    mj = mj ? strstr(mj, "\"maintenance\":{") : NULL;
    const char *p;
    if (mj && (p = strstr(mj, "\"data_files\":"))) c.files = atoll(p + 13);
    if (mj && (p = strstr(mj, "\"snapshots\":"))) c.snaps = atoll(p + 12);
    if (mj && (p = strstr(mj, "\"compactions\":"))) c.compactions = atoll(p + 14);
    if (mj && (p = strstr(mj, "\"expired_snapshots\":"))) c.expired = atoll(p + 20);
    floe_buf_free(&st);
    return c;
}

/* The maintenance thread on its own schedule while records arrive every
 * 100 ms: compaction and expiry run (intervals of 300 ms, snapshots kept
 * 2 s, at least 3), the table ends small (files, snapshots) and holds
 * every record once. */
static void maintenance_thread_keeps_the_table_small(void)
{
    floe_log_t *pl[1];
    floe_err_t e;
    const char *keys[] = {"table.commit.interval.ms", "table.compaction.interval.ms",
                          "table.expire.interval.ms", "table.compaction.min.input.files"};
    const char *vals[] = {"100ms", "300ms", "300ms", "3"};
    add_topic_with("sched", 1, pl, keys, vals, 4);
    const char *first[] = {"{\"n\":0}"};
    produce_to(pl[0], 1700000000000LL, first, 1);
    CHECK_EQ(run_engine(), 1);
    /* snapshots older than 2 s expire (an Iceberg tool would set this) */
    floe_ice_table_t *t;
    CHECK_EQ(floe_ice_catalog_load_table(cat, "default", "sched", &t, &e), 0);
    floe_ice_update_t up = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_ice_props_set(&up.props, "history.expire.max-snapshot-age-ms", "2000");
    floe_ice_props_set(&up.props, "history.expire.min-snapshots-to-keep", "3");
    floe_ice_req_t req = {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID};
    memcpy(req.uuid, floe_ice_table_metadata(t)->table_uuid, sizeof req.uuid);
    CHECK_EQ(floe_ice_catalog_commit(cat, "default", "sched", &req, 1, &up, 1, NULL, &e), 0);
    floe_ice_update_clear(&up);
    floe_ice_table_free(t);
    floe_engine_config_t cfg = {.catalog = cat, .discover_ms = 200};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    CHECK_EQ(floe_engine_start(eng, &e), 0);
    floe_buf_t dump = FLOE_BUF_INIT;
    floe_buf_append_str(&dump, "0\t0\t{\"n\":0}\n");
    for (int i = 1; i <= 40; i++) {
        char v[32];
        snprintf(v, sizeof v, "{\"n\":%d}", i);
        const char *vv[] = {v};
        produce_to(pl[0], 1700000000000LL, vv, 1);
        floe_buf_printf(&dump, "0\t%d\t%s\n", i, v);
        floe_sleep_ms(100);
    }
    WAIT_FOR(committed_at("sched", 0) == 41, 30);
    CHECK_EQ(committed_at("sched", 0), 41);
    /* Left alone, the thread compacts what the last commits wrote and, on
     * an idle table, still expires every tenth interval: within seconds
     * the table is down to a file or two and the snapshots the properties
     * keep (3, none younger than 2 s).  How far it got while records still
     * came depends on the machine's speed, so the test waits for the end
     * state, not a count at a fixed moment. */
    maint_counts_t mc;
    WAIT_FOR((mc = maint_counts(eng, "sched")).compactions > 0 && mc.expired > 0 && mc.files >= 1 &&
                 mc.files <= 3 && mc.snaps >= 3 && mc.snaps <= 4,
             60);
    printf("# 41 commits: %lld live files, %lld snapshots kept, %lld compactions, %lld snapshots "
           "expired\n",
           mc.files, mc.snaps, mc.compactions, mc.expired);
    CHECK(mc.compactions > 0 && mc.expired > 0);
    CHECK(mc.files >= 1 && mc.files <= 3);
    CHECK(mc.snaps >= 3 && mc.snaps <= 4);
    floe_buf_t st = FLOE_BUF_INIT;
    floe_engine_metrics(eng, &st);
    CHECK(strstr(floe_buf_cstr(&st), "floe_table_compactions_total{table=\"default.sched\"} ") !=
          NULL);
    floe_buf_free(&st);
    floe_engine_free(eng);
    verify_all("sched", floe_buf_cstr(&dump));
    floe_buf_free(&dump);
    floe_tsource_logs_remove(src, "sched");
    floe_log_close(pl[0]);
}

typedef struct trickle {
    floe_log_t *log;
    atomic_bool stop;
    int n;
} trickle_t;

/* A record every 20 ms until stopped. */
static void *trickle_main(void *arg)
{
    trickle_t *tr = arg;
    while (!atomic_load(&tr->stop)) {
        char v[32];
        snprintf(v, sizeof v, "{\"n\":%d}", tr->n++);
        const char *vv[] = {v};
        produce_to(tr->log, 1700000000000LL, vv, 1);
        floe_sleep_ms(20);
    }
    return NULL;
}

/* A compaction whose commit attempts are slow (its manifests read slowly)
 * against an engine committing every 100 ms: after two lost races it asks
 * the engine to hold its commits, lands, and the engine commits on; every
 * record is in the table once. */
static void slow_compaction_commit_gets_the_fence(void)
{
    floe_log_t *pl[1];
    floe_err_t e;
    char path[512];
    const char *keys[] = {"table.commit.interval.ms", "table.compaction.enable"};
    const char *vals[] = {"100ms", "false"};
    add_topic_with("race", 1, pl, keys, vals, 2);
    gate_io_t g = {.base = {.ops = &gate_ops}, .inner = local};
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    atomic_init(&g.slow_ms, 0);
    snprintf(path, sizeof path, "%s/warehouse", dir);
    floe_ice_catalog_t *gcat = floe_ice_catalog_fs_new(&g.base, path, &e);
    floe_engine_config_t cfg = {.catalog = gcat, .discover_ms = 200};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    CHECK_EQ(floe_engine_start(eng, &e), 0);
    trickle_t tr = {.log = pl[0]};
    atomic_init(&tr.stop, false);
    pthread_t th;
    pthread_create(&th, NULL, trickle_main, &tr);
    WAIT_FOR(committed_at("race", 0) >= 40, 60); /* a few dozen small files */
    atomic_store(&g.slow_ms, 30);
    floe_tmaint_req_t req = {.op = FLOE_TMAINT_COMPACT, .older_than_ms = -1};
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_engine_maintain(eng, "race", &req, &out, &e), 0);
    atomic_store(&g.slow_ms, 0);
    CHECK(strstr(floe_buf_cstr(&out), "\"snapshot_id\":-1") == NULL);
    int64_t at = committed_at("race", 0);
    WAIT_FOR(committed_at("race", 0) > at, 30); /* the engine commits again */
    atomic_store(&tr.stop, true);
    pthread_join(th, NULL);
    WAIT_FOR(committed_at("race", 0) == tr.n, 30);
    CHECK_EQ(committed_at("race", 0), tr.n);
    floe_buf_t st = FLOE_BUF_INIT;
    CHECK_EQ(floe_engine_maintenance_json(eng, "race", &st, &e), 0);
    const char *f = strstr(floe_buf_cstr(&st), "\"fences\":");
    printf("# %d records; the compaction: %s\n", tr.n, floe_buf_cstr(&out));
    CHECK(f && atoi(f + 9) >= 1);
    if (!f || atoi(f + 9) < 1) printf("# %s\n", floe_buf_cstr(&st));
    floe_buf_free(&st);
    floe_buf_free(&out);
    floe_engine_free(eng);
    floe_ice_catalog_free(gcat);
    pthread_mutex_destroy(&g.mu);
    pthread_cond_destroy(&g.cv);
    floe_buf_t dump = FLOE_BUF_INIT;
    for (int i = 0; i < tr.n; i++) floe_buf_printf(&dump, "0\t%d\t{\"n\":%d}\n", i, i);
    verify_all("race", floe_buf_cstr(&dump));
    floe_buf_free(&dump);
    floe_tsource_logs_remove(src, "race");
    floe_log_close(pl[0]);
}

/* ---- a bad configuration ------------------------------------------------ */

static bool status_has(floe_engine_t *eng, const char *want)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &b);
    bool has = strstr(floe_buf_cstr(&b), want) != NULL;
    if (!has) printf("# status: %s\n", floe_buf_cstr(&b));
    floe_buf_free(&b);
    return has;
}

/* A topic whose table.* configs go bad pauses its table with the reason
 * and runs again once they are fixed, losing nothing. */
static void bad_configuration_pauses_until_fixed(void)
{
    floe_log_t *pl;
    floe_err_t e;
    char path[512];
    snprintf(path, sizeof path, "%s/log/cfg-0", dir);
    CHECK_EQ(floe_log_open(path, NULL, &pl, &e), 0);
    const char *keys[] = {"table.enable", "table.flush.bytes"};
    const char *good[] = {"true", "1MiB"}, *bad[] = {"true", "lots"};
    CHECK_EQ(floe_tsource_logs_set(src, "cfg", 1, &pl, keys, good, 2, &e), 0);
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    const char *v[] = {"{\"n\":1}", "{\"n\":2}"};
    produce_to(pl, 1700000000000LL, v, 1);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"topic\":\"cfg\",\"table\":\"default.cfg\",\"dlq_table\":"
                          "\"default.cfg_dlq\",\"state\":\"running\",\"reason\":\"\""));
    CHECK_EQ(floe_tsource_logs_set(src, "cfg", 1, &pl, keys, bad, 2, &e), 0);
    produce_to(pl, 1700000000000LL, v + 1, 1);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"state\":\"paused\",\"reason\":\"bad configuration: topic 'cfg': "
                          "table.flush.bytes"));
    live_t l;
    CHECK_EQ(live_files("cfg", &l), 0);
    CHECK_EQ(l.records, 1); /* the second record waits */
    live_free(&l);
    CHECK_EQ(floe_tsource_logs_set(src, "cfg", 1, &pl, keys, good, 2, &e), 0);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"dlq_table\":\"default.cfg_dlq\",\"state\":\"running\""));
    CHECK_EQ(live_files("cfg", &l), 0);
    CHECK_EQ(l.records, 2);
    live_free(&l);
    floe_engine_free(eng);
    floe_tsource_logs_remove(src, "cfg");
    floe_log_close(pl);
}

/* ---- pause and resume ----------------------------------------------------- */

/* Topic NAME (one partition) with the table configs keys[i] = vals[i]
 * (table.enable=true first). */
static void set_topic(const char *name, floe_log_t **pl, const char *const *keys,
                      const char *const *vals, size_t n)
{
    floe_err_t e;
    CHECK_EQ(floe_tsource_logs_set(src, name, 1, pl, keys, vals, n, &e), 0);
}

static floe_log_t *open_log(const char *name)
{
    floe_log_t *l = NULL;
    floe_err_t e;
    char path[512];
    snprintf(path, sizeof path, "%s/log/%s-0", dir, name);
    CHECK_EQ(floe_log_open(path, NULL, &l, &e), 0);
    return l;
}

/* A record the configuration says to stop on pauses the table; a change of
 * an unrelated live config retries and pauses again on the same record (one
 * pause counted, its first time kept), and the change that fixes it
 * (table.invalid.record.action=dlq) runs the table on: the bad record goes
 * to the dead-letter table, the others to the table, nothing lost. */
static void invalid_pause_resumes_on_config_change(void)
{
    floe_log_t *pl = open_log("pz");
    const char *keys[] = {"table.enable", "table.invalid.record.action",
                          "table.commit.interval.ms"};
    const char *pause[] = {"true", "pause", "1h"}, *other[] = {"true", "pause", "2h"},
               *dlq[] = {"true", "dlq", "2h"};
    set_topic("pz", &pl, keys, pause, 3);
    const char *v[] = {"{\"n\":1}", "{oops", "{\"n\":2}"};
    produce_to(pl, 1700000000000LL, v, 3);
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"topic\":\"pz\",\"table\":\"default.pz\",\"dlq_table\":"
                          "\"default.pz_dlq\",\"state\":\"paused\",\"reason\":\"partition 0 "
                          "offset 1: convert: invalid JSON"));
    CHECK(status_has(eng, "\"pause_kind\":\"invalid_record\",\"paused_since_ms\":"));
    floe_buf_t b = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &b);
    const char *since = strstr(floe_buf_cstr(&b), "\"paused_since_ms\":");
    long long t0 = since ? atoll(since + 18) : 0;
    CHECK(t0 > 0);
    live_t l;
    CHECK_EQ(live_files("pz", &l), 0);
    CHECK_EQ(l.records, 1);
    live_free(&l);
    /* another live config changes: a retry, paused again on the same
     * record, not counted (nor logged) as a new pause */
    set_topic("pz", &pl, keys, other, 3);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"state\":\"paused\",\"reason\":\"partition 0 offset 1: convert"));
    CHECK(status_has(eng, "\"pauses\":1,"));
    floe_buf_reset(&b);
    floe_engine_status_json(eng, &b);
    since = strstr(floe_buf_cstr(&b), "\"paused_since_ms\":");
    CHECK_EQ(since ? atoll(since + 18) : 0, t0);
    floe_buf_reset(&b);
    floe_engine_metrics(eng, &b);
    CHECK(strstr(floe_buf_cstr(&b),
                 "floe_table_pause_reason{table=\"default.pz\",reason=\"partition "
                 "0 offset 1: convert: ") != NULL);
    CHECK(strstr(floe_buf_cstr(&b), ",kind=\"invalid_record\"} 1\n") != NULL);
    CHECK(strstr(floe_buf_cstr(&b), "floe_table_paused_since_seconds{table=\"default.pz\"} ") !=
          NULL);
    /* the fix */
    set_topic("pz", &pl, keys, dlq, 3);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"state\":\"running\",\"reason\":\"\",\"pause_kind\":\"\""));
    CHECK_EQ(live_files("pz", &l), 0);
    CHECK_EQ(l.records, 2);
    live_free(&l);
    char *rows = icebird("pz_dlq");
    CHECK_EQ(count_lines(rows), 1);
    CHECK(strstr(rows, "\"offset\":\"1\"") != NULL);
    free(rows);
    floe_buf_free(&b);
    floe_engine_free(eng);
    floe_tsource_logs_remove(src, "pz");
    floe_log_close(pl);
}

/* An operator's pause: the table reads nothing more, a configuration change
 * does not lift it (whatever it is), a resume does; unknown names are
 * refused with FLOE_ENOENT; a resume of a running table changes nothing. */
static void operator_pause_holds_until_resume(void)
{
    floe_log_t *pl = open_log("op");
    const char *keys[] = {"table.enable", "table.commit.interval.ms"};
    const char *a[] = {"true", "1h"}, *b2[] = {"true", "2h"};
    set_topic("op", &pl, keys, a, 2);
    const char *v[] = {"{\"n\":1}", "{\"n\":2}"};
    produce_to(pl, 1700000000000LL, v, 1);
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    floe_engine_run_once(eng, true, &e);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_engine_pause(eng, "op", &out, &e), 0);
    CHECK(strstr(floe_buf_cstr(&out),
                 "{\"table\":\"default.op\",\"state\":\"paused\",\"reason\":"
                 "\"paused by an operator\",\"pause_kind\":\"operator\"") != NULL);
    produce_to(pl, 1700000000000LL, v + 1, 1);
    set_topic("op", &pl, keys, b2, 2);
    floe_engine_run_once(eng, true, &e);
    CHECK(status_has(eng, "\"state\":\"paused\",\"reason\":\"paused by an operator\""));
    /* it reads nothing, yet its lag shows the record that waits */
    CHECK(status_has(eng, "\"committed\":1,\"read\":1,\"log_start\":0,\"log_end\":2,\"lag\":1,"));
    live_t l;
    CHECK_EQ(live_files("op", &l), 0);
    CHECK_EQ(l.records, 1);
    live_free(&l);
    floe_buf_reset(&out);
    CHECK_EQ(floe_engine_pause(eng, "nosuch", &out, &e), -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    CHECK_EQ(floe_engine_resume(eng, "default.op", &out, &e), 0);
    CHECK(strstr(floe_buf_cstr(&out), "{\"table\":\"default.op\",\"state\":\"running\"") != NULL);
    floe_engine_run_once(eng, true, &e);
    CHECK_EQ(live_files("op", &l), 0);
    CHECK_EQ(l.records, 2);
    live_free(&l);
    floe_buf_reset(&out);
    CHECK_EQ(floe_engine_resume(eng, "op", &out, &e), 0);
    CHECK(strstr(floe_buf_cstr(&out), "\"state\":\"running\"") != NULL);
    floe_buf_free(&out);
    floe_engine_free(eng);
    floe_tsource_logs_remove(src, "op");
    floe_log_close(pl);
}

/* ---- commits by size ----------------------------------------------------------- */

/* With an interval of an hour and table.commit.max.bytes of 1 MiB, a few
 * MiB of records commit several times, each commit once about 1 MiB of
 * data files is written; every record is in the table once. */
static void commits_by_size(void)
{
    floe_log_t *pl = open_log("sz");
    const char *keys[] = {"table.enable", "table.commit.interval.ms", "table.commit.max.bytes"};
    const char *vals[] = {"true", "1h", "1MiB"};
    set_topic("sz", &pl, keys, vals, 3);
    enum { N = 4000 };
    char *docs[100];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < N / 100; k++) {
        for (int i = 0; i < 100; i++) {
            char hex[1025];
            for (int j = 0; j < 1024; j++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                hex[j] = "0123456789abcdef"[x & 15];
            }
            hex[1024] = 0;
            docs[i] = malloc(1100);
            snprintf(docs[i], 1100, "{\"i\":%d,\"s\":\"%s\"}", k * 100 + i, hex);
        }
        produce_to(pl, 1700000000000LL, (const char *const *)docs, 100);
        for (int i = 0; i < 100; i++) free(docs[i]);
    }
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    CHECK_EQ(floe_engine_run_once(eng, false, &e), N); /* no interval passed */
    size_t n = snapshots("sz");
    printf("# %d records of 1 KiB of hex: %zu commits by size\n", N, n);
    CHECK(n >= 2);
    CHECK(status_has(eng, "\"commit_max_bytes\":1048576"));
    floe_buf_t b = FLOE_BUF_INIT;
    floe_engine_metrics(eng, &b);
    char want[128];
    snprintf(want, sizeof want, "floe_table_size_commits_total{table=\"default.sz\"} %zu\n", n);
    CHECK(strstr(floe_buf_cstr(&b), want) != NULL);
    floe_buf_free(&b);
    floe_engine_run_once(eng, true, &e);
    live_t l;
    CHECK_EQ(live_files("sz", &l), 0);
    CHECK_EQ(l.records, N);
    for (size_t i = 0; i < l.n; i++) CHECK(l.f[i].file_size < (2 << 20));
    live_free(&l);
    floe_engine_free(eng);
    floe_tsource_logs_remove(src, "sz");
    floe_log_close(pl);
}

/* ---- widening bound -------------------------------------------------------------- */

/* table.json.widen.max.bytes=0: a fraction for the committed long column
 * goes to the dead-letter table with the reason and is counted, the column
 * stays long; raised, the next fraction widens it as before. */
static void widening_beyond_the_bound_goes_to_dlq(void)
{
    floe_log_t *pl = open_log("wb");
    const char *keys[] = {"table.enable", "table.json.widen.max.bytes"};
    const char *tiny[] = {"true", "0"}, *big[] = {"true", "1GiB"};
    set_topic("wb", &pl, keys, tiny, 2);
    const char *a[] = {"{\"n\":1}", "{\"n\":2}"}, *f1[] = {"{\"n\":2.5}"}, *f2[] = {"{\"n\":3.5}"};
    produce_to(pl, 1700000000000LL, a, 2);
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    CHECK_EQ(floe_engine_run_once(eng, true, &e), 2);
    produce_to(pl, 1700000000000LL, f1, 1);
    CHECK_EQ(floe_engine_run_once(eng, true, &e), 0);
    live_t l;
    CHECK_EQ(live_files("wb", &l), 0);
    CHECK_EQ(l.records, 2);
    const floe_ice_field_t *n = floe_ice_schema_find_name(l.schema, "n");
    CHECK(n && n->type->kind == FLOE_ICE_LONG);
    live_free(&l);
    char *rows = icebird("wb_dlq");
    CHECK_EQ(count_lines(rows), 1);
    CHECK(strstr(rows, "\"reason\":\"field 'n' is long, value at byte 5 is a fraction (widening "
                       "the column to double would rewrite the table's ") != NULL);
    CHECK(strstr(rows, "bytes of data files, above table.json.widen.max.bytes 0)\"") != NULL);
    free(rows);
    CHECK(status_has(eng, "\"widen_refused\":1,"));
    floe_buf_t b = FLOE_BUF_INIT;
    floe_engine_metrics(eng, &b);
    CHECK(strstr(floe_buf_cstr(&b),
                 "floe_table_widen_refused_total{table=\"default.wb\",partition=\"0\"} 1\n") !=
          NULL);
    floe_buf_free(&b);
    /* within the bound: widened as before */
    set_topic("wb", &pl, keys, big, 2);
    produce_to(pl, 1700000000000LL, f2, 1);
    CHECK_EQ(floe_engine_run_once(eng, true, &e), 1);
    CHECK_EQ(live_files("wb", &l), 0);
    CHECK_EQ(l.records, 3);
    n = floe_ice_schema_find_name(l.schema, "n");
    CHECK(n && n->type->kind == FLOE_ICE_DOUBLE);
    live_free(&l);
    floe_engine_free(eng);
    floe_tsource_logs_remove(src, "wb");
    floe_log_close(pl);
}

/* ---- an idle engine ----------------------------------------------------------------- */

static uint64_t engine_steps(floe_engine_t *eng)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &b);
    const char *p = strstr(floe_buf_cstr(&b), "\"engine\":{\"steps\":");
    uint64_t n = p ? strtoull(p + 18, NULL, 10) : 0;
    floe_buf_free(&b);
    return n;
}

/* Status lines with "committed":2 (both records of a partition in). */
static size_t committed_partitions(floe_engine_t *eng, const char *what)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_engine_status_json(eng, &b);
    size_t n = count_of(floe_buf_cstr(&b), what);
    floe_buf_free(&b);
    return n;
}

/* The engine thread over 20 topics of 2 partitions: once their records
 * are in, it takes no partition step while nothing arrives (the status,
 * built by the thread when asked, says how many it took); an append the
 * source hears of is read and committed with a step or two, not one per
 * partition. */
static void idle_engine_steps_nothing(void)
{
    enum { T = 20, P = 2 };
    floe_log_t *pl[T][P];
    char name[T][32];
    const char *keys[] = {"table.enable", "table.commit.interval.ms"};
    const char *vals[] = {"true", "100ms"};
    const char *v[] = {"{\"n\":1}", "{\"n\":2}"};
    floe_err_t e;
    for (int i = 0; i < T; i++) {
        snprintf(name[i], sizeof name[i], "idle%02d", i);
        for (int k = 0; k < P; k++) {
            char path[512];
            snprintf(path, sizeof path, "%s/log/%s-%d", dir, name[i], k);
            CHECK_EQ(floe_log_open(path, NULL, &pl[i][k], &e), 0);
            produce_to(pl[i][k], 1700000000000LL, v, 2);
        }
        CHECK_EQ(floe_tsource_logs_set(src, name[i], P, pl[i], keys, vals, 2, &e), 0);
    }
    floe_engine_config_t cfg = {.catalog = cat};
    floe_engine_t *eng = floe_engine_new(&cfg, floe_tsource_logs_source(src), &e);
    CHECK_EQ(floe_engine_start(eng, &e), 0);
    int64_t deadline = floe_mono_ms() + 120000;
    while (committed_partitions(eng, "\"committed\":2,") < T * P && floe_mono_ms() < deadline)
        usleep(50000);
    CHECK_EQ(committed_partitions(eng, "\"committed\":2,"), (size_t)(T * P));
    /* the last commits' rounds: until no step for half a second */
    uint64_t s0 = engine_steps(eng);
    for (int quiet = 0; quiet < 10 && floe_mono_ms() < deadline; usleep(50000)) {
        uint64_t s = engine_steps(eng);
        quiet = s == s0 ? quiet + 1 : 0;
        s0 = s;
    }
    usleep(1500000);
    uint64_t s1 = engine_steps(eng);
    printf("# %d partitions: %llu steps to take their records, %llu while idle for 1.5 s\n", T * P,
           (unsigned long long)s0, (unsigned long long)(s1 - s0));
    CHECK_EQ(s1, s0);
    /* news of one partition */
    const char *w[] = {"{\"n\":3}"};
    produce_to(pl[7][1], 1700000000000LL, w, 1);
    floe_tsource_logs_appended(src, name[7], 1);
    while (committed_partitions(eng, "\"committed\":3,") < 1 && floe_mono_ms() < deadline)
        usleep(20000);
    CHECK_EQ(committed_partitions(eng, "\"committed\":3,"), 1);
    uint64_t s2 = engine_steps(eng);
    printf("# one record: %llu steps\n", (unsigned long long)(s2 - s1));
    CHECK(s2 > s1 && s2 - s1 <= 3);
    floe_engine_free(eng);
    for (int i = 0; i < T; i++) {
        floe_tsource_logs_remove(src, name[i]);
        for (int k = 0; k < P; k++) floe_log_close(pl[i][k]);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/floe-test-engine-%d", (int)getpid());
    mkdir(dir, 0755);
    floe_err_t e;
    char path[512];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/log/web.events-%d", dir, i);
        if (floe_log_open(path, NULL, &logs[i], &e) < 0) return 1;
    }
    snprintf(path, sizeof path, "%s/log/rd-0", dir);
    if (floe_log_open(path, NULL, &rdlog, &e) < 0) return 1;
    src = floe_tsource_logs_new();
    const char *keys[] = {"table.enable", "table.commit.interval.ms"};
    const char *vals[] = {"true", "1h"}; /* run_engine forces its commits */
    floe_tsource_logs_set(src, "web.events", 2, logs, keys, vals, 2, &e);
    local = floe_fileio_local_new(&e);
    io = floe_fileio_fault_new(local, &e);
    snprintf(path, sizeof path, "%s/warehouse", dir);
    cat = floe_ice_catalog_fs_new(io, path, &e);

    RUN(first_run_rows_and_dead_letters);
    RUN(restart_resumes_without_duplicates);
    RUN(orphans_are_deleted);
    RUN(commits_broken_anywhere_lose_and_double_nothing);
    RUN(partitioned_by_every_transform);
    RUN(partitioned_by_region_and_day_of_json_timestamps);
    RUN(redrive_broken_anywhere_moves_each_record_once);
    RUN(bad_config_pauses_with_reason_until_fixed);
    RUN(committed_long_widens_to_double);
    RUN(widening_keeps_partitions);
    RUN(widening_broken_anywhere_reads_whole);
    RUN(bad_configuration_pauses_until_fixed);
    RUN(compaction_keeps_rows_for_every_reader);
    RUN(compaction_broken_anywhere_keeps_every_row_once);
    RUN(widening_lets_the_table_commit_meanwhile);
    RUN(maintenance_thread_keeps_the_table_small);
    RUN(slow_compaction_commit_gets_the_fence);
    RUN(invalid_pause_resumes_on_config_change);
    RUN(operator_pause_holds_until_resume);
    RUN(commits_by_size);
    RUN(widening_beyond_the_bound_goes_to_dlq);
    RUN(idle_engine_steps_nothing);

    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    floe_fileio_free(local);
    floe_tsource_logs_free(src);
    for (int i = 0; i < 2; i++) floe_log_close(logs[i]);
    floe_log_close(rdlog);
    if (!getenv("KEEP")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) return 1;
    }
    return t_tests_failed ? 1 : 0;
}
