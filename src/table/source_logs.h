/* A table-engine source over partition logs (log/log.h) that their owner
 * registers: the broker in `floe serve` mirrors its topics here, tests
 * register logs they opened.  Fetches read whole stored batches and hand
 * them out as messages (source_batches.h).
 *
 * Thread-safe: the owner sets and removes topics from its thread while the
 * engine reads from its own.  A fetch reads the disk without the registry
 * lock; replacing or removing the topic it reads waits for it, so a topic
 * replaced by floe_tsource_logs_set or removed by floe_tsource_logs_remove
 * is never read again once the call returns, and its old logs may then be
 * closed.
 *
 * News (source.h): the owner tells of appends (floe_tsource_logs_appended);
 * those to a partition the engine fetched from wake the engine, and so
 * does every change of the topic set. */
#ifndef FLOE_TABLE_SOURCE_LOGS_H
#define FLOE_TABLE_SOURCE_LOGS_H

#include "log/log.h"
#include "table/source.h"

typedef struct floe_tsource_logs floe_tsource_logs_t;

/* Caller frees with floe_tsource_logs_free.  NULL when out of memory. */
floe_tsource_logs_t *floe_tsource_logs_new(void);
void floe_tsource_logs_free(floe_tsource_logs_t *s);
/* The engine-facing interface (borrowed from s). */
floe_tsource_t *floe_tsource_logs_source(floe_tsource_logs_t *s);

/* Add or replace topic `name`: logs[0..nparts) borrowed (they must stay
 * open until the topic is removed or replaced), configs copied (nconfigs
 * key/value pairs; only table.* keys matter). */
int floe_tsource_logs_set(floe_tsource_logs_t *s, const char *name, int32_t nparts,
                          floe_log_t *const *logs, const char *const *keys,
                          const char *const *values, size_t nconfigs, floe_err_t *err);
void floe_tsource_logs_remove(floe_tsource_logs_t *s, const char *name);
/* Records were appended to partition `partition` of topic name (borrowed
 * for the call): news for the engine when it reads that partition.  Any
 * thread; cheap (a lookup under the registry lock, no I/O); unknown
 * topics and partitions are ignored. */
void floe_tsource_logs_appended(floe_tsource_logs_t *s, const char *name, int32_t partition);
/* The committed cursor the engine last reported for name/partition (the
 * committed() call of source.h), or -1 when it reported none since the
 * topic was set: `floe serve`'s retention floor (design.md invariant 8). */
int64_t floe_tsource_logs_cursor(floe_tsource_logs_t *s, const char *name, int32_t partition);

#endif
