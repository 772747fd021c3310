/* Internals of the table engine, shared by engine.c (thread, discovery,
 * status), pipeline.c (a partition's read-convert-write step) and
 * commit.c (opening tables, commits, recovery). */
#ifndef FLOE_TABLE_ENGINE_INT_H
#define FLOE_TABLE_ENGINE_INT_H

#include <pthread.h>

#include "format/parquet.h"
#include "iceberg/snapshot.h"
#include "table/convert.h"
#include "table/datafile.h"
#include "table/engine.h"
#include "table/schema_map.h"

typedef struct floe_ttable floe_ttable_t;

/* An open data file of one partition tuple. */
typedef struct floe_tsink_file {
    floe_dfw_t *w;
    floe_buf_t key;           /* serialized tuple ("" unpartitioned) */
    floe_ice_value_t *values; /* one per spec field (owned) */
    size_t nvalues;
    int32_t spec_id;
    uint64_t used; /* LRU clock */
} floe_tsink_file_t;

#define TSINK_MAX_OPEN 32 /* open files per partition buffer */

/* One output table's side of a partition: a buffer and its open files. */
typedef struct floe_tsink {
    floe_rows_t *rows;
    floe_tsink_file_t *files;
    size_t nfiles, capfiles;
    uint64_t clock;
    uint64_t seeded;  /* schema version of the owning tout last seeded */
    uint64_t drained; /* buffer bytes handed to the open files since their
                            * last row group (cut at table.flush.bytes) */
} floe_tsink_t;

/* The buffer goes to the open files' Parquet writers in steps of about
 * this much: encoded while its columns are still in cache, and held
 * encoded and compressed (several times smaller) until the row group is
 * cut.  Row groups still hold table.flush.bytes of buffered rows. */
#define TSINK_DRAIN_BYTES (256u << 10)

/* An output table: the main table or its dead-letter table. */
typedef struct floe_tout {
    char ns[128], name[300];
    floe_ice_table_t *ice;   /* last loaded state; NULL until opened */
    floe_ice_schema_t *work; /* current schema + fields found since */
    int32_t last_column_id;
    uint64_t schema_version;       /* bumped when work grows */
    bool schema_dirty;             /* work differs from the committed schema */
    char *schema_json;             /* of work, for new files */
    int64_t *committed;            /* per partition; -1: nothing yet */
    floe_ice_spec_t *spec;         /* spec of new files (owned) */
    bool spec_dirty;               /* spec not yet in the table */
    char spec_text[512];           /* table.partition.by it was made from */
    bool spec_waiting;             /* its source fields are not there yet */
    floe_ice_data_file_t *pending; /* closed files awaiting commit */
    size_t npending, cappending;
    uint64_t file_seq;
    /* long fields of the working schema replaced by doubles since the last
     * commit, and what the commit's widening prepared: rewrites of live
     * files (owned, uncommitted) replacing the files at removes[] */
    floe_twiden_t *widened;
    size_t nwidened;
    floe_ice_data_file_t *rewrites;
    size_t nrewrites;
    char **removes;
    size_t nremoves;
} floe_tout_t;

typedef struct floe_tpart {
    floe_ttable_t *t;
    int32_t id;
    int64_t next; /* next offset to read */
    int64_t log_start, log_end;
    floe_tsink_t main, dlq;
    floe_conv_t *conv;
    /* counters */
    uint64_t records, bytes, dlq_records, dropped, rows_written;
    /* freshness: timestamp of the first record read since the last commit,
     * and wall time the engine first saw records waiting (-1: none) */
    int64_t pending_ts_ms, behind_since_ms;
} floe_tpart_t;

typedef enum tstate { T_RUNNING = 1, T_PAUSED, T_FAILED } tstate_t;

struct floe_ttable {
    floe_engine_t *e;
    char *topic;
    floe_table_config_t cfg;
    floe_tout_t main, dlq;
    floe_tpart_t **parts;
    int32_t nparts;
    int64_t next_commit_ms;
    tstate_t state;
    char reason[640];
    bool seen;          /* still listed at the last discovery */
    char writer_id[37]; /* names this run's files */
    /* counters */
    uint64_t commits, commit_failures, files_written, bytes_written;
    int64_t last_commit_ms, last_commit_latency_ms;
};

struct floe_engine {
    floe_engine_config_t cfg;
    floe_tsource_t *src;
    floe_ttable_t **tables;
    size_t ntables;
    int64_t next_discover_ms;
    pthread_t thread;
    bool running;
    pthread_mutex_t mu; /* guards stop and the status snapshot */
    pthread_cond_t cv;
    bool stop;
    floe_buf_t status, metrics;
    struct redrive_req *redrive; /* asked by floe_engine_redrive; under mu */
    /* shared by every partition's step (one thread steps them in turn) */
    floe_buf_t readbuf, scratch;
    floe_pq_scratch_t *pq_scratch;
};

/* pipeline.c */
floe_tpart_t *floe_tpart_new(floe_ttable_t *t, int32_t id, floe_err_t *err);
void floe_tpart_free(floe_tpart_t *p);
/* Drop the sink's open files unpublished. */
void floe_tsink_abort(floe_tsink_t *s);
/* Read and convert up to read_bytes; returns records converted (0 when
 * caught up) or -1 with *err (the table pauses). */
int64_t floe_tpart_step(floe_tpart_t *p, floe_err_t *err);
/* Write the buffered rows and close the open files (before a commit). */
int floe_tpart_seal(floe_tpart_t *p, floe_err_t *err);
/* Write a buffer that reached table.flush.bytes as a row group. */
int floe_tpart_flush_due(floe_tpart_t *p, floe_err_t *err);
/* Append a dead-letter row to p's DLQ buffer: the record (borrowed; NULL
 * for an undecodable batch, whose bytes are raw) at partition/offset, the
 * stage that failed and why.  0, or -1 when out of memory (row undone). */
int floe_tpart_dlq_row(floe_tpart_t *p, int32_t partition, const floe_record_t *rec, int64_t offset,
                       int64_t ts_ms, floe_slice_t raw, const char *stage, const char *why);
/* Bytes the partition holds for its table: the buffer's rows plus what
 * its open files hold of unwritten row groups. */
uint64_t floe_tpart_buffered(const floe_tpart_t *p);

/* commit.c */
/* Load or create the table and its DLQ table, resume offsets from their
 * summaries, delete files no snapshot references. */
int floe_ttable_open(floe_ttable_t *t, floe_err_t *err);
/* Commit the main table's new partition spec (and, first, the schema it
 * needs) when files are about to be written under it.  0 or -1. */
int floe_ttable_commit_spec(floe_ttable_t *t, floe_err_t *err);
/* Seal every partition and commit both tables. */
int floe_ttable_commit(floe_ttable_t *t, floe_err_t *err);
/* Commit the pending files of o with offsets next[] (one per partition)
 * in one snapshot, with one more summary property when extra_key is set
 * (strings borrowed).  A widened column's rewrites (floe_tout_widen) and
 * the removal of the files they replace go into the same snapshot.  1 when a snapshot was made (or found made by an
 * earlier attempt), 0 when there was nothing to commit, -1 on failure
 * (the caller resets the table). */
int floe_tout_commit(floe_ttable_t *t, floe_tout_t *o, const int64_t *next, bool always,
                     const char *extra_key, const char *extra_value, floe_err_t *err);
/* After a failed write or commit: drop open files and buffers, delete the
 * pending files (kept when keep_files: an unknown outcome), reload both
 * tables and read again from the committed offsets. */
void floe_ttable_reset(floe_ttable_t *t, bool keep_files);
/* Forget o's pending files; delete them through io unless keep (their
 * commit may have landed: only a reload can tell). */
void floe_tout_drop_pending(floe_tout_t *o, bool keep, floe_fileio_t *io);
/* Add a closed file to the output's pending list (takes ownership of *f). */
int floe_tout_add_pending(floe_tout_t *o, floe_ice_data_file_t *f, floe_err_t *err);
/* Fields of the partition's buffer new to the output's working schema
 * get ids there (the schema grows); then the buffer gets the fields other
 * partitions added.  Called after every batch. */
int floe_tout_merge_schema(floe_tout_t *o, floe_tsink_t *s, floe_err_t *err);
void floe_tout_clear(floe_tout_t *o);
/* Make o->spec follow table.partition.by (text) once its source fields
 * exist in the working schema; a new spec is committed before data. */
void floe_tout_resolve_spec(floe_tout_t *o, const char *text);
/* widen.c */
/* Record the widenings from `before` to `after` (working schemas; borrowed)
 * in o->widened. */
int floe_tout_note_widened(floe_tout_t *o, const floe_ice_schema_t *before,
                           const floe_ice_schema_t *after, floe_err_t *err);
/* Before a commit of o with widenings: rewrite the pending files and the
 * table's live data files that hold a widened field (pending ones are
 * replaced in place; live ones go to o->rewrites, their paths to
 * o->removes), then forget the widenings.  0, or -1 with *err (what was
 * rewritten stays listed for the caller's cleanup).  floe_tout_commit
 * calls it. */
int floe_tout_widen(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err);
/* Forget o->rewrites and o->removes; delete the rewritten files unless keep
 * (their commit may have landed). */
void floe_tout_drop_rewrites(floe_tout_t *o, bool keep, floe_fileio_t *io);
void floe_tout_clear_widened(floe_tout_t *o);
/* Rewrite data file `in` (borrowed) at out_path with the fields
 * w[].from turned into doubles w[].to: 1 with *out filled (caller clears;
 * same partition, spec and metrics, the widened columns' metrics
 * recomputed), 0 when the file holds none of them (nothing written), -1
 * with *err (nothing left at out_path).  The file keeps its own
 * `iceberg.schema` entry with the fields replaced (fallback_schema when it
 * has none). */
int floe_twiden_file(floe_fileio_t *io, const floe_ice_data_file_t *in, const char *out_path,
                     const floe_twiden_t *w, size_t nw, const char *fallback_schema,
                     floe_ice_data_file_t *out, floe_err_t *err);

/* Location of the table's data folder ("<location>/data"), into buf. */
int floe_tout_data_dir(const floe_tout_t *o, char *buf, size_t size);

/* redrive.c */
typedef struct floe_redrive_result {
    char table[450];
    char redrive_id[37];
    uint64_t examined;         /* DLQ rows looked at */
    uint64_t moved;            /* now in the main table */
    uint64_t still_invalid;    /* convert no better: stay, with today's reason */
    uint64_t undecodable;      /* whole batches that did not decode: stay */
    uint64_t files_rewritten;  /* DLQ files replaced without the moved rows */
    uint64_t finished_earlier; /* rows of an interrupted re-drive taken out now */
} floe_redrive_result_t;

/* Move the DLQ rows of t that convert under today's configuration into
 * the main table, then take them out of the DLQ (module comment of
 * redrive.c).  Commits what t buffers first.  0 with *res filled, or -1
 * with *err (the table resets to its committed state). */
int floe_ttable_redrive(floe_ttable_t *t, floe_redrive_result_t *res, floe_err_t *err);
/* Finish re-drives that put rows in the main table but did not take them
 * out of the DLQ (a crash between the two commits).  *finished: rows. */
int floe_ttable_redrive_finish(floe_ttable_t *t, size_t *finished, floe_err_t *err);

#endif
