/* Widening a long column to double without stalling the table: the
 * engine's side (widen.c has the whole story; the rewrite itself runs on
 * the maintenance thread, maint.h).  Engine thread only. */
#ifndef FLOE_TABLE_WIDEN_H
#define FLOE_TABLE_WIDEN_H

#include "table/maint.h"
#include "table/ttable.h"

/* The one entry point: partition p holds at a record whose value needs
 * its committed long field p->hold_field widened.  Returns 1 when the
 * widening is asked for (or was already: p waits, the table goes on),
 * 0 when it is refused with the reason in *err (the caller sends such
 * records to the dead-letter table), -1 with *err on failure (out of
 * memory). */
int floe_ttable_widen(floe_ttable_t *t, floe_tpart_t *p, floe_err_t *err);

/* Once per round while a widening is asked for: acknowledge the
 * maintenance thread's fence (t->fenced: the engine holds its commits of
 * the table), take the widened schema once committed (held partitions
 * read on), drop the fence when the job failed.  Returns the widening's
 * state (FLOE_TMW_NONE when none is asked for). */
floe_tmaint_widen_state_t floe_ttable_widen_poll(floe_ttable_t *t);

/* Before a commit of o: rewrite its pending files that hold a field of
 * o->widened (through io, borrowed; new files named for run writer_id;
 * scratch may be NULL), in place: they were never committed.  Then the
 * widenings are done.  0 (also when nothing is widened), or -1 with *err. */
int floe_twiden_prepare(floe_tout_t *o, floe_fileio_t *io, const char *writer_id,
                        floe_pq_scratch_t *scratch, floe_err_t *err);

#endif
