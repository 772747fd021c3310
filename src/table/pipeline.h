/* One Kafka partition of a table topic ("tpart"; Iceberg partition tuples
 * are ptuple.h): its messages are fetched from the source, converted into
 * the main table's sink, and bad records routed per
 * table.invalid.record.action (the dead-letter sink, dropped, or a
 * paused table).  Both sinks write into the table's outputs (t->main,
 * t->dlq); a commit (commit.h) seals them. */
#ifndef FLOE_TABLE_PIPELINE_H
#define FLOE_TABLE_PIPELINE_H

#include "table/convert.h"
#include "table/sink.h"
#include "table/ttable.h"

struct floe_tpart {
    floe_ttable_t *t;
    int32_t id;   /* the Kafka partition */
    int64_t next; /* next offset to read */
    int64_t log_start, log_end;
    floe_tsink_t main, dlq;
    floe_conv_t *conv; /* into main.rows */
    /* counters */
    uint64_t records, bytes, dlq_records, dropped, widen_refused;
    uint64_t retention_skipped; /* records deleted from the log unread */
    uint64_t retention_blocked; /* the source's retention_held, at the last status */
    /* freshness: timestamp of the first record read since the last commit,
     * and wall time the engine first saw records waiting (-1: none) */
    int64_t pending_ts_ms, behind_since_ms;
    /* a record at offset next has a fraction for the committed long field
     * hold_field (0: none): the partition waits there until the column is
     * widened (table/widen.c), then reads on from it */
    int32_t hold_field;
    /* bytes the sinks' open files hold (floe_tsink_file_bytes), as of the
     * end of the last step */
    uint64_t open_bytes;
    bool ready; /* listed to step (engine.c) */
};

/* Partition id of table t (borrowed; it must outlive the pipeline), with
 * empty sinks; it reads from offset 0 until told otherwise (next).  Caller
 * frees with floe_tpart_free.  NULL with *err. */
floe_tpart_t *floe_tpart_new(floe_ttable_t *t, int32_t id, floe_err_t *err);
void floe_tpart_free(floe_tpart_t *p);

/* Fetch up to the table's read_bytes and convert; returns records
 * converted (0 when caught up, paused or held), or -1 with *err (the
 * caller pauses the table).  A bad record the configuration stops on, or
 * stored bytes that cannot be skipped, pause the table here; a record
 * that needs a committed long widened holds the partition (hold_field).
 * Afterwards p->next < p->log_end tells that more is there to read. */
int64_t floe_tpart_step(floe_tpart_t *p, floe_err_t *err);
/* Hand a sink that holds a drain step to its files (end of a step). */
int floe_tpart_drain_due(floe_tpart_t *p, floe_err_t *err);
/* Write the buffered rows and close the open files (before a commit):
 * their files become pending in the table's outputs. */
int floe_tpart_seal(floe_tpart_t *p, floe_err_t *err);
/* After a failed write or commit: drop the open files and buffered rows
 * and read again from the main table's committed offset (a hold ends:
 * the record asks again when read). */
void floe_tpart_restart(floe_tpart_t *p);
/* Bytes the partition holds for its table: the main sink's buffered rows
 * and unwritten row groups. */
uint64_t floe_tpart_buffered(const floe_tpart_t *p);

#endif
