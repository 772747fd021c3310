/* Where a table topic's records come from: the narrow interface between
 * the table engine and a record store (design.md, invariant 6).  In
 * `floe serve` it reads the broker's own partition logs; in `floe sink` a
 * Kafka consumer.  The engine sees topics, their table configs and whole
 * RecordBatch v2 bytes, nothing else.
 *
 * Every call may come from the engine's thread while the store keeps
 * working in others: implementations do their own locking. */
#ifndef FLOE_TABLE_SOURCE_H
#define FLOE_TABLE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

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

typedef struct floe_tsource_ops {
    /* A snapshot of the topics (internal ones excluded).  Caller frees with
     * floe_tsource_topics_free. */
    int (*topics)(floe_tsource_t *s, floe_tsource_topic_t **out, size_t *n, floe_err_t *err);
    /* Append to out the stored batches of topic/partition from the one
     * holding `offset` on, up to about max_bytes (at least one whole batch
     * when there is one).  *start and *end get the partition's log start
     * and end offsets.  An offset below the log start is FLOE_ERANGE (the
     * records are gone: retention); FLOE_ENOENT when the topic or
     * partition does not exist. */
    int (*read)(floe_tsource_t *s, const char *topic, int32_t partition, int64_t offset,
                size_t max_bytes, floe_buf_t *out, int64_t *start, int64_t *end, floe_err_t *err);
    /* Told after a commit: records of topic/partition below next_offset
     * are in the table (the partition's cursor, for lag and retention).
     * May be NULL. */
    void (*committed)(floe_tsource_t *s, const char *topic, int32_t partition, int64_t next_offset);
} floe_tsource_ops_t;

/* Implementations embed this as their first member. */
struct floe_tsource {
    const floe_tsource_ops_t *ops;
};

void floe_tsource_topics_free(floe_tsource_topic_t *t, size_t n);

#endif
