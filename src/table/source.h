/* Where a table topic's records come from: the narrow interface between
 * the table engine and a record store (design.md, invariant 6).  In
 * `floe serve` it reads the broker's own partition logs (source_logs.h);
 * in `floe sink` a Kafka consumer.  The engine sees topics, their table
 * configs and, per partition, a sequence of messages; nothing else.
 *
 * Messages, not bytes: a log holds whole RecordBatch v2 bytes and decodes
 * them into messages as the engine takes them (source_batches.h); a
 * librdkafka consumer already holds messages (rd_kafka_message_t: offset,
 * timestamp, key, payload, and rd_kafka_headers_t, whose name/value
 * pairs fill a floe_theaders_t list in place).  Either way a message
 * borrows the source's memory, so neither source re-encodes anything.
 *
 * A consumer source maps the calls so: fetch seeks the partition to the
 * offset when it is elsewhere and polls up to max_bytes of messages,
 * start/end being its low and high watermarks; next hands them out one by
 * one (transaction markers and, with isolation.level=read_committed,
 * aborted records never reach it: the offsets they leave out are simply
 * skipped); the messages are destroyed at the next fetch; committed
 * commits the group's offset.
 *
 * News, so that an idle engine does no work: a source may tell the
 * engine that partitions got messages (watch, changed) and whether its
 * topics changed (topics_version); the engine then reads only partitions
 * with news or left unfinished and sleeps otherwise.  The logs hear of
 * appends from their owner (the broker's produce path); a consumer source
 * would call wake from its poll loop or a queue event
 * (rd_kafka_queue_cb_event_enable) and list the partitions that
 * delivered messages, and bump its topics version on a metadata change or
 * a rebalance.  A source without them is polled: every partition at each
 * step of the engine, its topics listed every discovery period.
 *
 * Threads: topics, committed, watch, changed and topics_version may come
 * from the engine's thread while the store keeps working in others;
 * implementations do their own locking.  fetch and next come from one
 * thread at a time (the engine's), always as a fetch followed by nexts. */
#ifndef FLOE_TABLE_SOURCE_H
#define FLOE_TABLE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/batch.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct floe_tsource floe_tsource_t;

/* A topic as the engine sees it.  Strings are owned by the snapshot
 * (floe_tsource_topics_free). */
typedef struct floe_tsource_topic {
    char *name;
    int32_t partitions;
    size_t nconfigs;
    char **keys, **values; /* the topic's table.* configs that are set */
} floe_tsource_topic_t;

/* A message's headers, in whichever form the source holds them: a list of
 * key/value slices, or the RecordBatch v2 encoding of count headers
 * (validated by the decoder).  Read either with floe_theaders_iter_*. */
typedef struct floe_theaders {
    size_t count;
    const floe_record_header_t *list; /* count entries; NULL: raw */
    floe_slice_t raw;
} floe_theaders_t;

typedef enum floe_tmsg_kind {
    FLOE_TMSG_RECORD = 1, /* a record at offset: convert it */
    FLOE_TMSG_SKIP,       /* offsets [offset, last] hold no record for the
                           * table (transaction markers, aborted records) */
    FLOE_TMSG_BAD,        /* offsets [offset, last] are stored as bytes that
                           * do not decode: value holds them, why says what is
                           * wrong (the dead-letter table keeps them) */
} floe_tmsg_kind_t;

/* One message of a partition.  Slices and why borrow from the source until
 * its next fetch or next call. */
typedef struct floe_tmsg {
    floe_tmsg_kind_t kind;
    int64_t offset;
    int64_t last;      /* last offset covered (== offset for a record) */
    int64_t timestamp; /* ms since the epoch; BAD: of the batch, if known */
    floe_slice_t key, value;
    bool key_null, value_null;
    floe_theaders_t headers;
    const char *why; /* BAD only */
} floe_tmsg_t;

/* The source has news for the engine (watch).  Any thread; it must be
 * quick and must not call into the source. */
typedef void (*floe_tsource_wake_fn)(void *arg);
/* A partition with news (changed): topic borrowed for the call. */
typedef void (*floe_tsource_news_fn)(void *arg, const char *topic, int32_t partition);

typedef struct floe_tsource_ops {
    /* A snapshot of the topics (internal ones excluded).  Caller frees with
     * floe_tsource_topics_free. */
    int (*topics)(floe_tsource_t *s, floe_tsource_topic_t **out, size_t *n, floe_err_t *err);
    /* Fetch the messages of topic/partition from `offset` on, about
     * max_bytes of them (at least one when there is one), for next() to
     * hand out; a fetch ends the previous one.  *start and *end get the
     * partition's log start and end offsets (also with FLOE_ERANGE).  An
     * offset below the log start is FLOE_ERANGE (the records are gone:
     * retention); FLOE_ENOENT when the topic or partition does not exist. */
    int (*fetch)(floe_tsource_t *s, const char *topic, int32_t partition, int64_t offset,
                 size_t max_bytes, int64_t *start, int64_t *end, floe_err_t *err);
    /* The next message of the fetch, in offset order, none below the
     * fetched offset: 1 with *m filled, 0 when the fetch is used up, -1
     * with *err when the rest of the fetch can be neither read nor skipped
     * (the engine pauses the table; the store needs repair). */
    int (*next)(floe_tsource_t *s, floe_tmsg_t *m, floe_err_t *err);
    /* Told when a table opens and after each commit: records of
     * topic/partition below next_offset are in the table (-1: none yet),
     * the partition's cursor, which the log's retention keeps.  May be
     * NULL. */
    void (*committed)(floe_tsource_t *s, const char *topic, int32_t partition, int64_t next_offset);
    /* Bytes of topic/partition that the store's retention wanted to
     * delete at its last run but kept because the table had not committed
     * them (design.md invariant 8); 0 when none.  May be NULL (a store
     * whose retention is not floe's: floe sink). */
    uint64_t (*retention_held)(floe_tsource_t *s, const char *topic, int32_t partition);
    /* The offset after the last message of topic/partition now, or -1
     * when unknown; what /admin/tables and the lag metrics show for a
     * partition the engine does not read (a paused table, an idle one).
     * May be NULL (the end the last fetch saw is shown). */
    int64_t (*log_end)(floe_tsource_t *s, const char *topic, int32_t partition);

    /* The three below are optional together (all NULL: the engine polls).
     * watch: from now on call wake(arg) when there is news: a partition
     * the engine fetched from before got messages, or the topics changed.
     * A wake may stand for many news; the next one comes once the engine
     * took them (changed) and more arrived.  wake NULL stops the calls
     * (none runs once watch returns). */
    void (*watch)(floe_tsource_t *s, floe_tsource_wake_fn wake, void *arg);
    /* Call fn once for every partition that got messages since the last
     * call (under the source's lock: fn must not call into the source),
     * and forget them. */
    void (*changed)(floe_tsource_t *s, floe_tsource_news_fn fn, void *arg);
    /* A number that changes whenever topics() would answer differently
     * (a topic added or removed, its partitions or configs changed). */
    uint64_t (*topics_version)(floe_tsource_t *s);
} floe_tsource_ops_t;

/* Implementations embed this as their first member. */
struct floe_tsource {
    const floe_tsource_ops_t *ops;
};

/* Free a topics snapshot (t may be NULL). */
void floe_tsource_topics_free(floe_tsource_topic_t *t, size_t n);

/* Reading a message's headers, either form. */
typedef struct floe_theaders_iter {
    const floe_theaders_t *h;
    size_t i;
    floe_header_iter_t raw;
} floe_theaders_iter_t;

/* h is borrowed until the iteration ends.  (Inline: once per record.) */
static inline void floe_theaders_iter_init(floe_theaders_iter_t *it, const floe_theaders_t *h)
{
    it->h = h;
    it->i = 0;
    if (!h->list) {
        floe_record_t r; /* the iterator reads only these two fields */
        r.header_count = (int32_t)h->count;
        r.headers_raw = h->raw;
        floe_header_iter_init(&it->raw, &r);
    }
}

/* 1 with *out (borrowed), 0 after the last, -1 when raw bytes are
 * malformed or hold fewer headers than count. */
static inline int floe_theaders_iter_next(floe_theaders_iter_t *it, floe_record_header_t *out)
{
    if (it->i >= it->h->count) return 0;
    if (it->h->list) *out = it->h->list[it->i];
    else if (floe_header_iter_next(&it->raw, out) != 1)
        return -1;
    it->i++;
    return 1;
}

#endif
