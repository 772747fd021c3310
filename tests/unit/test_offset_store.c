/* Committed offsets survive close and reopen of __consumer_offsets. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kafka/group.h"
#include "kafka/offset_store.h"
#include "test.h"

static char tmpdir[256];

static void mktmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/floe-offsets-XXXXXX");
    if (!mkdtemp(tmpdir)) abort();
}

static void rmtmp(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

typedef struct env {
    floe_group_coord_t *c;
    floe_offset_store_t *s;
} env_t;

static void env_open(env_t *e)
{
    floe_group_config_t cfg;
    floe_group_config_default(&cfg);
    cfg.initial_rebalance_delay_ms = 0;
    cfg.min_session_timeout_ms = 10;
    floe_err_t err;
    if (floe_group_coord_new(&cfg, &e->c, &err)) abort();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/log/__consumer_offsets-0", tmpdir);
    if (floe_offset_store_open(dir, NULL, e->c, 0, &e->s, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        abort();
    }
}

static void env_close(env_t *e)
{
    floe_offset_store_close(e->s);
    floe_group_coord_free(e->c);
}

static void on_join(void *o, const floe_group_join_res_t *r)
{
    snprintf(o, 128, "%s", r->member_id);
}

static void on_sync(void *o, const floe_group_sync_res_t *r)
{
    *(int16_t *)o = r->error;
}

static int64_t get(env_t *e, const char *g, const char *t, int32_t p)
{
    floe_group_offset_t o;
    if (floe_group_offset_get(e->c, g, t, p, &o)) return -1;
    return o.offset;
}

static void commit_close_reopen(void)
{
    mktmp();
    env_t e;
    env_open(&e);
    CHECK_EQ(floe_offset_store_replayed(e.s), 0);
    /* a group member commits in its generation */
    char mid[128] = "";
    floe_group_protocol_t p[] = {{"range", (const uint8_t *)"m", 1}};
    floe_group_join_req_t jr = {.group_id = "g",
                                .member_id = "",
                                .client_id = "c",
                                .client_host = "h",
                                .protocol_type = "consumer",
                                .session_timeout_ms = 1000,
                                .rebalance_timeout_ms = 1000,
                                .api_version = 2,
                                .protocol_count = 1,
                                .protocols = p};
    floe_group_join(e.c, &jr, 0, on_join, mid);
    CHECK(mid[0] != 0);
    int16_t serr = -2;
    floe_group_sync_req_t sr = {.group_id = "g", .member_id = mid, .generation_id = 1};
    floe_group_sync(e.c, &sr, 0, on_sync, &serr);
    CHECK_EQ(serr, 0);
    floe_offset_commit_part_t parts[] = {
        {.topic = "t", .partition = 0, .offset = 100, .leader_epoch = 3, .metadata = "meta"},
        {.topic = "t", .partition = 1, .offset = 200, .leader_epoch = -1},
    };
    floe_err_t err;
    CHECK_EQ(floe_offset_store_commit(e.s, "g", mid, NULL, 1, parts, 2, 1, 5000, &err), 0);
    CHECK_EQ(parts[0].error, 0);
    CHECK_EQ(parts[1].error, 0);
    /* wrong generation: refused, nothing stored */
    floe_offset_commit_part_t bad[] = {{.topic = "t", .partition = 0, .offset = 1}};
    CHECK_EQ(floe_offset_store_commit(e.s, "g", mid, NULL, 7, bad, 1, 2, 5001, &err), 0);
    CHECK_EQ(bad[0].error, FLOE_GERR_ILLEGAL_GENERATION);
    CHECK_EQ(get(&e, "g", "t", 0), 100);
    /* standalone commits; a second one overrides the first */
    floe_offset_commit_part_t solo[] = {{.topic = "x", .partition = 4, .offset = 1}};
    CHECK_EQ(floe_offset_store_commit(e.s, "solo", "", NULL, -1, solo, 1, 3, 6000, &err), 0);
    solo[0].offset = 2;
    CHECK_EQ(floe_offset_store_commit(e.s, "solo", "", NULL, -1, solo, 1, 3, 6001, &err), 0);
    CHECK_EQ(get(&e, "solo", "x", 4), 2);
    /* a group to delete */
    floe_offset_commit_part_t gone[] = {{.topic = "x", .partition = 0, .offset = 9}};
    CHECK_EQ(floe_offset_store_commit(e.s, "gone", "", NULL, -1, gone, 1, 3, 6002, &err), 0);
    CHECK_EQ(floe_offset_store_delete_group(e.s, "g", &err), FLOE_GERR_NON_EMPTY_GROUP);
    CHECK_EQ(floe_offset_store_delete_group(e.s, "gone", &err), 0);
    CHECK_EQ(floe_offset_store_delete_group(e.s, "gone", &err), FLOE_GERR_GROUP_ID_NOT_FOUND);
    env_close(&e);

    env_open(&e);
    CHECK_EQ(floe_offset_store_replayed(e.s), 2 + 1 + 1 + 1 + 1);
    floe_group_offset_t o;
    CHECK_EQ(floe_group_offset_get(e.c, "g", "t", 0, &o), 0);
    CHECK_EQ(o.offset, 100);
    CHECK_EQ(o.leader_epoch, 3);
    CHECK_STR(o.metadata, "meta");
    CHECK_EQ(o.commit_timestamp, 5000);
    CHECK_EQ(get(&e, "g", "t", 1), 200);
    CHECK_EQ(get(&e, "solo", "x", 4), 2);
    CHECK_EQ(get(&e, "gone", "x", 0), -1);
    CHECK_EQ(floe_group_state(e.c, "g"), FLOE_GROUP_EMPTY);
    CHECK_EQ(floe_group_state(e.c, "gone"), FLOE_GROUP_DEAD);
    /* the old member is gone after restart; a standalone commit works
     * again since the group is Empty */
    floe_offset_commit_part_t again[] = {{.topic = "t", .partition = 0, .offset = 101}};
    CHECK_EQ(floe_offset_store_commit(e.s, "g", mid, NULL, 1, again, 1, 0, 7000, &err), 0);
    CHECK_EQ(again[0].error, FLOE_GERR_UNKNOWN_MEMBER_ID);
    again[0].error = 0; /* an error set on input is kept */
    CHECK_EQ(floe_offset_store_commit(e.s, "g", "", NULL, -1, again, 1, 0, 7000, &err), 0);
    CHECK_EQ(again[0].error, 0);
    env_close(&e);
    env_open(&e);
    CHECK_EQ(get(&e, "g", "t", 0), 101);
    env_close(&e);
    rmtmp();
}

/* Many commits of the same partitions are compacted away at open. */
static void compaction_at_open(void)
{
    mktmp();
    env_t e;
    env_open(&e);
    floe_err_t err;
    for (int i = 0; i < 1200; i++) {
        floe_offset_commit_part_t p[] = {{.topic = "t", .partition = 0, .offset = i},
                                         {.topic = "t", .partition = 1, .offset = 2 * i}};
        CHECK_EQ(floe_offset_store_commit(e.s, "g", "", NULL, -1, p, 2, 0, i, &err), 0);
    }
    env_close(&e);
    env_open(&e); /* replays 2400 records, compacts to 2 */
    CHECK_EQ(floe_offset_store_replayed(e.s), 2400);
    CHECK_EQ(get(&e, "g", "t", 0), 1199);
    CHECK_EQ(get(&e, "g", "t", 1), 2398);
    floe_offset_commit_part_t p[] = {{.topic = "t", .partition = 2, .offset = 5}};
    CHECK_EQ(floe_offset_store_commit(e.s, "g", "", NULL, -1, p, 1, 0, 0, &err), 0);
    env_close(&e);
    env_open(&e);
    CHECK_EQ(floe_offset_store_replayed(e.s), 3);
    CHECK_EQ(get(&e, "g", "t", 0), 1199);
    CHECK_EQ(get(&e, "g", "t", 1), 2398);
    CHECK_EQ(get(&e, "g", "t", 2), 5);
    env_close(&e);
    char old[600];
    snprintf(old, sizeof old, "%s/log/__consumer_offsets-0.old", tmpdir);
    struct stat st;
    CHECK(stat(old, &st) != 0);
    rmtmp();
}

/* Offsets past their retention are tombstoned and stay gone after a
 * restart; a group with members keeps its offsets. */
static void retention_expiry(void)
{
    mktmp();
    env_t e;
    env_open(&e);
    floe_err_t err;
    const int64_t day = 24LL * 3600 * 1000, wall0 = 1700000000000LL;
    floe_offset_commit_part_t p1[] = {{.topic = "t", .partition = 0, .offset = 1}};
    CHECK_EQ(floe_offset_store_commit(e.s, "old", "", NULL, -1, p1, 1, 0, wall0, &err), 0);
    floe_offset_commit_part_t p2[] = {{.topic = "t", .partition = 0, .offset = 2}};
    CHECK_EQ(floe_offset_store_commit(e.s, "new", "", NULL, -1, p2, 1, 0, wall0 + 6 * day, &err),
             0);
    /* a managed group with a live member */
    char mid[128] = "";
    floe_group_protocol_t p[] = {{"range", (const uint8_t *)"m", 1}};
    floe_group_join_req_t jr = {.group_id = "live",
                                .member_id = "",
                                .client_id = "c",
                                .client_host = "h",
                                .protocol_type = "consumer",
                                .session_timeout_ms = 1000000,
                                .rebalance_timeout_ms = 1000,
                                .api_version = 2,
                                .protocol_count = 1,
                                .protocols = p};
    floe_group_join(e.c, &jr, 0, on_join, mid);
    int16_t serr = -2;
    floe_group_sync_req_t sr = {.group_id = "live", .member_id = mid, .generation_id = 1};
    floe_group_sync(e.c, &sr, 0, on_sync, &serr);
    floe_offset_commit_part_t p3[] = {{.topic = "t", .partition = 0, .offset = 3}};
    CHECK_EQ(floe_offset_store_commit(e.s, "live", mid, NULL, 1, p3, 1, 0, wall0, &err), 0);
    CHECK_EQ(p3[0].error, 0);

    CHECK_EQ(floe_offset_store_expire(e.s, 1, wall0 + 6 * day, &err), 0);
    CHECK_EQ(floe_offset_store_expire(e.s, 1, wall0 + 8 * day, &err), 1); /* "old" */
    CHECK_EQ(get(&e, "old", "t", 0), -1);
    CHECK_EQ(get(&e, "new", "t", 0), 2);
    CHECK_EQ(get(&e, "live", "t", 0), 3);
    env_close(&e);
    env_open(&e);
    CHECK_EQ(get(&e, "old", "t", 0), -1);
    CHECK_EQ(get(&e, "new", "t", 0), 2);
    CHECK_EQ(get(&e, "live", "t", 0), 3);
    env_close(&e);
    rmtmp();
}

TEST_MAIN(RUN(retention_expiry); RUN(commit_close_reopen); RUN(compaction_at_open))
