/* Re-drive: dead-letter rows that convert under a table's configuration
 * now move into the main table, exactly once (redrive.c tells how two
 * commits stay exactly-once across a crash). */
#ifndef FLOE_TABLE_REDRIVE_H
#define FLOE_TABLE_REDRIVE_H

#include "table/commit.h"

typedef struct floe_redrive_result {
    char table[450];
    char redrive_id[37];
    uint64_t examined;         /* DLQ rows looked at */
    uint64_t moved;            /* now in the main table */
    uint64_t still_invalid;    /* convert no better: stay, with today's reason */
    uint64_t undecodable;      /* rows without a record (whole batches that did not
                                  decode, ranges retention deleted): stay */
    uint64_t files_rewritten;  /* DLQ files replaced without the moved rows */
    uint64_t finished_earlier; /* rows of an interrupted re-drive taken out now */
} floe_redrive_result_t;

/* Move the DLQ rows of t that convert under today's configuration into
 * the main table, then take them out of the DLQ.  Commits what t buffers
 * first.  0 with *res filled, or -1 with *err (the table resets to its
 * committed state); FLOE_EINVAL while t is paused or widens a column
 * (widen.h: its commits wait).  A row whose fraction needs a committed
 * long widened stays, saying so. */
int floe_ttable_redrive(floe_ttable_t *t, floe_redrive_result_t *res, floe_err_t *err);

/* Finish re-drives that put rows in the main table but did not take them
 * out of the DLQ (a crash between the two commits): the engine calls it
 * after opening a table, and every re-drive first.  *finished: rows.  0,
 * or -1 with *err (nothing lost: the next call tries again). */
int floe_ttable_redrive_finish(floe_ttable_t *t, size_t *finished, floe_err_t *err);

#endif
