/* Retention and DeleteRecords under a floor (broker.h): a table topic's
 * log keeps what its table has not committed (design.md, invariant 8).
 * The floor comes from the broker config's retention_floor hook, which
 * `floe serve` wires to the table engine; kafka/ knows nothing of tables. */
#include <inttypes.h>

#include "kafka/broker_int.h"
#include "util/diag.h"

#define HELD_WARN_EVERY_MS 60000

static bool floor_of(floe_broker_t *b, floe_topic_t *t, int32_t p, floe_retention_floor_t *fl)
{
    if (!b->cfg.retention_floor) return false;
    *fl = (floe_retention_floor_t){.offset = 0, .max_held_bytes = -1};
    if (b->cfg.retention_floor(b->cfg.floor_arg, t, p, fl) != 1) return false;
    if (fl->offset < 0) fl->offset = 0;
    return true;
}

void floe_broker_retention_run(floe_broker_t *b, floe_topic_t *t, int32_t p, int64_t now)
{
    floe_retention_floor_t fl = {0, -1};
    floe_log_retention_t r = {.floor = FLOE_LOG_NO_FLOOR, .max_held_bytes = -1};
    if (floor_of(b, t, p, &fl)) {
        r.floor = fl.offset;
        r.max_held_bytes = fl.max_held_bytes;
    }
    floe_err_t e;
    if (floe_log_enforce_retention_floor(t->logs[p], now, &r, &e))
        FLOE_ERROR("kafka: %s-%d: retention: %s", t->name, p, e.msg);
    if (r.skipped_to > r.skipped_from)
        FLOE_WARN("kafka: %s-%d: retention deleted offsets [%" PRId64 ", %" PRId64
                  ") that the topic's table had not committed: more than %" PRId64
                  " bytes were held back for it; the table records the gap in its dead-letter "
                  "table",
                  t->name, p, r.skipped_from, r.skipped_to, fl.max_held_bytes);
    if (r.held_bytes > 0 && now - t->held_warned_ms[p] >= HELD_WARN_EVERY_MS) {
        t->held_warned_ms[p] = now;
        FLOE_WARN("kafka: %s-%d: retention is held back: %" PRIu64
                  " bytes past retention.ms or retention.bytes stay in the log because the "
                  "topic's table has committed only up to offset %" PRId64,
                  t->name, p, r.held_bytes, r.floor);
    }
}

void floe_broker_clean_floor_update(floe_broker_t *b, floe_topic_t *t, int32_t p)
{
    floe_retention_floor_t fl;
    int64_t v = floor_of(b, t, p, &fl) ? fl.offset : INT64_MAX;
    __atomic_store_n(&t->clean_floor[p], v, __ATOMIC_RELAXED);
}

void floe_broker_delete_records(floe_broker_t *b, floe_topic_t *t, int32_t partition,
                                int64_t before, int64_t *low, int16_t *kerr)
{
    *kerr = FLOE_KERR_NONE;
    *low = -1;
    floe_log_t *l = floe_topic_log(t, partition);
    if (!l) {
        *kerr = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    int64_t end = floe_log_end_offset(l);
    if (before == -1) before = end;
    if (before < 0 || before > end) {
        *kerr = FLOE_KERR_OFFSET_OUT_OF_RANGE;
        *low = floe_log_start_offset(l);
        return;
    }
    floe_retention_floor_t fl;
    if (floor_of(b, t, partition, &fl) && before > fl.offset) {
        FLOE_WARN("kafka: delete records %s-%d before %" PRId64 ": held at %" PRId64
                  ", the offset the topic's table has committed",
                  t->name, (int)partition, before, fl.offset);
        before = fl.offset;
        *kerr = FLOE_KERR_POLICY_VIOLATION;
    }
    floe_err_t err;
    if (floe_log_delete_records(l, before, &err)) {
        FLOE_WARN("kafka: delete records %s-%d: %s", t->name, (int)partition, err.msg);
        *kerr = err.code == FLOE_ERANGE ? FLOE_KERR_OFFSET_OUT_OF_RANGE
                                        : FLOE_KERR_UNKNOWN_SERVER_ERROR;
    }
    *low = floe_log_start_offset(l);
}
