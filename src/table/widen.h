/* A widening's rewrites: before a commit of an output whose working
 * schema replaced long fields by doubles, every file holding one is
 * rewritten (widen.c has the whole story). */
#ifndef FLOE_TABLE_WIDEN_H
#define FLOE_TABLE_WIDEN_H

#include "table/tout.h"

/* Rewrite o's pending files and its table's live data files that hold a
 * field of o->widened (through io, borrowed; new files named for run
 * writer_id): pending ones are replaced in place, live ones listed as
 * o's rewrites replacing them; then the widenings are done.  0 (also when
 * nothing is widened), or -1 with *err (what was rewritten stays listed
 * for the caller's cleanup). */
int floe_twiden_prepare(floe_tout_t *o, floe_fileio_t *io, const char *writer_id, floe_err_t *err);

#endif
