/* A table topic's tables: opening (or creating) the main table and its
 * dead-letter table, resuming from their snapshot summaries, and the
 * commit: schema first, then the dead-letter table, then the main table,
 * each snapshot recording the next offset of every partition it covers.
 * A failed commit resets the table to its committed state. */
#ifndef FLOE_TABLE_COMMIT_H
#define FLOE_TABLE_COMMIT_H

#include "table/pipeline.h"
#include "table/ttable.h"

/* Load or create the table and its DLQ table (t's partitions exist),
 * give them the maintenance properties once, resume every partition from
 * the main table's committed offsets, delete files no snapshot references
 * (but those t's maintenance handles list in doubt).  An interrupted
 * re-drive is the caller's to finish (redrive.h).  0, or -1 with *err. */
int floe_ttable_open(floe_ttable_t *t, floe_err_t *err);

/* Seal every partition and commit both tables; on failure the table is
 * reset (floe_ttable_reset) and counted.  Nothing happens while a
 * widening holds the table's commits (t->fenced).  0, or -1 with *err. */
int floe_ttable_commit(floe_ttable_t *t, floe_err_t *err);

/* Tell the source the main table's committed offsets (the log keeps the
 * records above them: design.md invariant 8): after an open and after
 * each commit. */
void floe_ttable_report_committed(floe_ttable_t *t);

/* Commit the main table's new partition spec (and, first, the schema it
 * needs) when files are about to be written under it.  0 or -1. */
int floe_ttable_commit_spec(floe_ttable_t *t, floe_err_t *err);

typedef enum floe_tcommit_flags {
    /* make a snapshot when only the offsets moved (no files): the main
     * table records how far it read even when every record went to the
     * dead-letter table or was a transaction marker */
    FLOE_TCOMMIT_OFFSETS = 1 << 0,
} floe_tcommit_flags_t;

/* Commit the pending files of o (t->main or t->dlq) with offsets next[]
 * (one per partition, borrowed) in one snapshot, with one more summary
 * property when extra_key is set (strings borrowed).  Pending files that
 * hold a widened field are rewritten first (widen.h).  Snapshots of other
 * writers landing meanwhile (the maintenance thread's, another engine's
 * with other partitions) are no conflict: the snapshot records next[p]
 * for the partitions p read since o's last commit (next[p] past
 * o->committed[p]) and the table's own offset for the others.  A
 * partition read is a conflict (FLOE_ECONFLICT, final) when the table's
 * offset for it is no longer o->committed[p], where this data starts:
 * another writer took the partition (a rebalance) and committed it.  A
 * commit of t->dlq checks the main table's offsets the same way (the
 * dead letters commit first: none of a writer that lost the partition
 * lands once the new owner committed rows of it).
 * flags: floe_tcommit_flags_t.  1 when a snapshot was made (or
 * found made by an earlier attempt), 0 when there was nothing to commit,
 * -1 with *err (the caller resets the table; FLOE_EUNKNOWN: the files must
 * be kept). */
int floe_tout_commit(floe_ttable_t *t, floe_tout_t *o, const int64_t *next, unsigned flags,
                     const char *extra_key, const char *extra_value, floe_err_t *err);

/* After a failed write or commit: drop open files and buffers, the
 * pending files (fate: FLOE_TFILES_KEEP after an unknown outcome), reload
 * both tables and read again from the committed offsets. */
void floe_ttable_reset(floe_ttable_t *t, floe_tfiles_t fate);

#endif
