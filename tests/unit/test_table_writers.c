/* Several engines writing one table, each the partitions its source is
 * assigned (floe sink workers of one consumer group): each commits only
 * the offsets of the partitions it read, so they do not undo each other,
 * and one that lost a partition (a zombie: the group gave it to another
 * worker, which committed it) has its commit refused and its files
 * dropped.  Every record is in the table once, read back by icebird
 * (verify_table.mjs, no orphan files). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iceberg/catalog.h"
#include "iceberg/metadata.h"
#include "log/batch.h"
#include "table/engine.h"
#include "table/offsets.h"
#include "table/source_logs.h"
#include "table_verify.h"
#include "test.h"

static char dir[256];
static floe_log_t *logs[2];
static floe_tsource_logs_t *logsrc;
static floe_fileio_t *io;
static floe_ice_catalog_t *cat;
static floe_buf_t dump = FLOE_BUF_INIT; /* "p\to\tjson" of every record produced */

/* A source that reads the logs of the partitions it is assigned only, as
 * a consumer in a group does: the others do not exist for it. */
typedef struct owned {
    floe_tsource_t base;
    floe_tsource_t *inner;
    bool own[2];
} owned_t;

static int o_topics(floe_tsource_t *s, floe_tsource_topic_t **out, size_t *n, floe_err_t *err)
{
    floe_tsource_t *in = ((owned_t *)s)->inner;
    return in->ops->topics(in, out, n, err);
}

static int o_fetch(floe_tsource_t *s, const char *topic, int32_t partition, int64_t offset,
                   size_t max_bytes, int64_t *start, int64_t *end, floe_err_t *err)
{
    owned_t *o = (owned_t *)s;
    if (partition < 0 || partition > 1 || !o->own[partition])
        return floe_err_set(err, FLOE_ENOENT, "partition %d is not assigned", (int)partition);
    return o->inner->ops->fetch(o->inner, topic, partition, offset, max_bytes, start, end, err);
}

static int o_next(floe_tsource_t *s, floe_tmsg_t *m, floe_err_t *err)
{
    floe_tsource_t *in = ((owned_t *)s)->inner;
    return in->ops->next(in, m, err);
}

static const floe_tsource_ops_t owned_ops = {.topics = o_topics, .fetch = o_fetch, .next = o_next};

/* An engine of a worker assigned partitions p0 and p1 (flags). */
static floe_engine_t *worker(owned_t *src, bool p0, bool p1)
{
    *src =
        (owned_t){.base = {&owned_ops}, .inner = floe_tsource_logs_source(logsrc), .own = {p0, p1}};
    floe_err_t e;
    floe_engine_config_t cfg = {.catalog = cat, .shared = true};
    floe_engine_t *eng = floe_engine_new(&cfg, &src->base, &e);
    CHECK(eng != NULL);
    return eng;
}

static void produce_to(floe_log_t *l, int part, int from, int n, bool record);

static void produce(int part, int from, int n)
{
    produce_to(logs[part], part, from, n, true);
}

/* n records {"id":from+i,"p":part} appended to l, in the dump if record. */
static void produce_to(floe_log_t *l, int part, int from, int n, bool record)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_err_t e;
    int64_t base = floe_log_end_offset(l);
    for (int i = 0; i < n; i++) {
        char v[64];
        snprintf(v, sizeof v, "{\"id\":%d,\"p\":%d}", from + i, part);
        floe_slice_t sv = floe_slice_str(v);
        floe_batch_builder_add(b, 1700000000000LL, NULL, &sv, NULL, 0, &e);
        if (record) floe_buf_printf(&dump, "%d\t%lld\t%s\n", part, (long long)(base + i), v);
    }
    floe_buf_t buf = FLOE_BUF_INIT;
    if (floe_batch_builder_finish(b, &buf, &e) < 0 ||
        floe_log_append(l, buf.data, buf.len, -1, NULL, &e) < 0)
        printf("# produce failed: %s\n", e.msg);
    floe_buf_free(&buf);
    floe_batch_builder_free(b);
}

/* A value that is no JSON (a dead letter) appended to partition part. */
static void produce_bad(int part)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_err_t e;
    floe_slice_t sv = floe_slice_str("{oops");
    floe_batch_builder_add(b, 1700000000000LL, NULL, &sv, NULL, 0, &e);
    floe_buf_t buf = FLOE_BUF_INIT;
    if (floe_batch_builder_finish(b, &buf, &e) < 0 ||
        floe_log_append(logs[part], buf.data, buf.len, -1, NULL, &e) < 0)
        printf("# produce failed: %s\n", e.msg);
    floe_buf_free(&buf);
    floe_batch_builder_free(b);
}

/* Records in default.NAME's current snapshot (its total-records). */
static long long total_records(const char *name)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return -1;
    const floe_ice_snapshot_t *s = floe_ice_metadata_current_snapshot(floe_ice_table_metadata(t));
    const char *v = s ? floe_ice_props_get(&s->summary, "total-records") : NULL;
    long long n = v ? atoll(v) : 0;
    floe_ice_table_free(t);
    return n;
}

/* The floe.offsets of default.NAME's latest snapshot that has them. */
static char *offsets_of(const char *name)
{
    static char out[256];
    floe_ice_table_t *t;
    floe_err_t e;
    out[0] = 0;
    if (floe_ice_catalog_load_table(cat, "default", name, &t, &e) < 0) return out;
    const floe_ice_snapshot_t *s = floe_offsets_snapshot(floe_ice_table_metadata(t));
    if (s) snprintf(out, sizeof out, "%s", floe_ice_props_get(&s->summary, FLOE_OFFSETS_KEY));
    floe_ice_table_free(t);
    return out;
}

static char *offsets(void)
{
    return offsets_of("ev");
}

/* The table holds every record produced once, and no file it does not reference: icebird through
 * verify_table.mjs. */
static void verify(void)
{
    char loc[512], dpath[512];
    snprintf(loc, sizeof loc, "%s/warehouse/default/ev", dir);
    snprintf(dpath, sizeof dpath, "%s/ev.dump", dir);
    CHECK(tverify_table(loc, &dump, dpath, true));
}

/* A zombie's dead letters: a reads a record of partition 0, c takes the
 * partition and commits that record (no dead letter among what it read);
 * a reads on, a dead letter too, and commits: refused, the dead-letter
 * table included (it commits first), so c's later commit of the same dead
 * letter makes it the only one. */
static void zombie_dead_letters_are_refused(void)
{
    long long dlq0 = total_records("ev_dlq");
    produce(0, 30, 1);
    owned_t sa, sc;
    floe_engine_t *a = worker(&sa, true, false);
    floe_err_t e;
    CHECK_EQ(floe_engine_run_once(a, false, &e), 1);
    floe_engine_t *c = worker(&sc, true, false);
    CHECK_EQ(floe_engine_run_once(c, true, &e), 1);
    produce_bad(0);
    produce(0, 31, 1);
    CHECK_EQ(floe_engine_run_once(a, true, &e), 1); /* its commit is refused */
    CHECK_EQ(tverify_commit_failures(a), 1);
    CHECK_EQ(total_records("ev_dlq"), dlq0);
    CHECK_EQ(floe_engine_run_once(c, true, &e), 1);
    CHECK_EQ(total_records("ev_dlq"), dlq0 + 1);
    CHECK_EQ(tverify_commit_failures(c), 0);
    floe_engine_free(a);
    floe_engine_free(c);
    verify();
}

/* A writer's first commit comes before one of its partitions has records
 * (the table records nothing for it); its records, read later, commit
 * (a partition with no offset in the table starts at 0). */
static void partition_without_offset_commits_later(void)
{
    floe_log_t *l2[2];
    floe_err_t e;
    char path[512];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/log/late-%d", dir, i);
        CHECK_EQ(floe_log_open(path, NULL, &l2[i], &e), 0);
    }
    const char *keys[] = {"table.enable", "table.commit.interval.ms"};
    const char *vals[] = {"true", "1h"};
    CHECK_EQ(floe_tsource_logs_set(logsrc, "late", 2, l2, keys, vals, 2, &e), 0);
    owned_t sw;
    floe_engine_t *w = worker(&sw, true, true);
    produce_to(l2[0], 0, 0, 3, false);
    CHECK_EQ(floe_engine_run_once(w, true, &e), 3);
    CHECK_STR(offsets_of("late"), "{\"0\":3}");
    produce_to(l2[1], 1, 0, 2, false);
    CHECK_EQ(floe_engine_run_once(w, true, &e), 2);
    CHECK_STR(offsets_of("late"), "{\"0\":3,\"1\":2}");
    CHECK_EQ(tverify_commit_failures(w), 0);
    floe_engine_free(w);
    floe_tsource_logs_remove(logsrc, "late");
    for (int i = 0; i < 2; i++) floe_log_close(l2[i]);
}

/* Two workers read their partitions before either commits; both commits
 * land, each with its partition's offset, the other's kept. */
static void two_writers_keep_each_others_offsets(void)
{
    produce(0, 0, 5);
    produce(1, 100, 3);
    owned_t sa, sb;
    floe_engine_t *a = worker(&sa, true, false), *b = worker(&sb, false, true);
    floe_err_t e;
    CHECK_EQ(floe_engine_run_once(a, false, &e), 5);
    CHECK_EQ(floe_engine_run_once(b, false, &e), 3);
    CHECK_EQ(floe_engine_run_once(a, true, &e), 0);
    CHECK_STR(offsets(), "{\"0\":5}");
    CHECK_EQ(floe_engine_run_once(b, true, &e), 0);
    CHECK_STR(offsets(), "{\"0\":5,\"1\":3}");
    CHECK_EQ(tverify_commit_failures(a) + tverify_commit_failures(b), 0);
    /* and on: each commits its own again */
    produce(1, 103, 2);
    produce(0, 5, 1);
    CHECK_EQ(floe_engine_run_once(b, true, &e), 2);
    CHECK_EQ(floe_engine_run_once(a, true, &e), 1);
    CHECK_STR(offsets(), "{\"0\":6,\"1\":5}");
    CHECK_EQ(tverify_commit_failures(a) + tverify_commit_failures(b), 0);
    floe_engine_free(a);
    floe_engine_free(b);
    verify();
}

/* Worker a reads partition 0, then loses it in a rebalance before it
 * commits; c, its new owner, reads the same records from the table's
 * offset and commits them.  a's commit is refused, its files dropped, and
 * it reads nothing twice afterwards. */
static void zombie_commit_is_refused(void)
{
    produce(0, 6, 4); /* offsets 6..9 */
    owned_t sa, sc;
    floe_engine_t *a = worker(&sa, true, false);
    floe_err_t e;
    CHECK_EQ(floe_engine_run_once(a, false, &e), 4);
    floe_engine_t *c = worker(&sc, true, true);
    CHECK_EQ(floe_engine_run_once(c, true, &e), 4);
    CHECK_STR(offsets(), "{\"0\":10,\"1\":5}");
    sa.own[0] = false; /* a learns of the rebalance only now */
    CHECK_EQ(floe_engine_run_once(a, true, &e), 0);
    CHECK_EQ(tverify_commit_failures(a), 1);
    CHECK_STR(offsets(), "{\"0\":10,\"1\":5}");
    /* a gets partition 0 back later: it reads from the table's offset */
    produce(0, 10, 2);
    sa.own[0] = true;
    floe_engine_free(c);
    CHECK_EQ(floe_engine_run_once(a, true, &e), 2);
    CHECK_STR(offsets(), "{\"0\":12,\"1\":5}");
    floe_engine_free(a);
    verify();
}

/* A rebalance as floe sink's consumer reports it: the worker giving
 * partition 0 up commits what it read of it, the one taking it (which
 * had opened the table before and holds an older offset) reads on from
 * the table's offset: no commit fails, nothing is read twice. */
static void resync_hands_partitions_over(void)
{
    produce(0, 12, 3); /* offsets 12..14 */
    owned_t sa, sc;
    floe_engine_t *a = worker(&sa, true, false), *c = worker(&sc, false, true);
    floe_err_t e;
    CHECK_EQ(floe_engine_run_once(c, false, &e), 0);
    CHECK_EQ(floe_engine_run_once(a, false, &e), 3);
    CHECK_STR(offsets(), "{\"0\":12,\"1\":5}");
    sa.own[0] = false;
    CHECK_EQ(floe_engine_resync(a, &e), 0);
    CHECK_STR(offsets(), "{\"0\":15,\"1\":5}");
    sc.own[0] = true;
    CHECK_EQ(floe_engine_resync(c, &e), 0);
    produce(0, 15, 2);
    CHECK_EQ(floe_engine_run_once(c, true, &e), 2);
    CHECK_STR(offsets(), "{\"0\":17,\"1\":5}");
    CHECK_EQ(tverify_commit_failures(a) + tverify_commit_failures(c), 0);
    floe_engine_free(a);
    floe_engine_free(c);
    verify();
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/floe-test-writers-%d", (int)getpid());
    mkdir(dir, 0755);
    floe_err_t e;
    char path[512];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/log/ev-%d", dir, i);
        if (floe_log_open(path, NULL, &logs[i], &e) < 0) return 1;
    }
    logsrc = floe_tsource_logs_new();
    const char *keys[] = {"table.enable", "table.commit.interval.ms"};
    const char *vals[] = {"true", "1h"}; /* commits only when forced */
    floe_tsource_logs_set(logsrc, "ev", 2, logs, keys, vals, 2, &e);
    io = floe_fileio_local_new(&e);
    snprintf(path, sizeof path, "%s/warehouse", dir);
    cat = floe_ice_catalog_fs_new(io, path, &e);

    RUN(two_writers_keep_each_others_offsets);
    RUN(zombie_commit_is_refused);
    RUN(resync_hands_partitions_over);
    RUN(partition_without_offset_commits_later);
    RUN(zombie_dead_letters_are_refused);

    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    floe_tsource_logs_free(logsrc);
    for (int i = 0; i < 2; i++) floe_log_close(logs[i]);
    floe_buf_free(&dump);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return t_tests_failed ? 1 : 0;
}
