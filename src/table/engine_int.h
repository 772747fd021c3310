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

typedef struct ttable ttable_t;

/* An open data file of one partition tuple. */
typedef struct tfile {
    floe_dfw_t *w;
    floe_buf_t key;               /* serialized tuple ("" unpartitioned) */
    floe_ice_value_t *values;     /* one per spec field (owned) */
    size_t nvalues;
    int32_t spec_id;
    uint64_t used;                /* LRU clock */
} tfile_t;

#define TSINK_MAX_OPEN 32         /* open files per partition buffer */

/* One output table's side of a partition: a buffer and its open files. */
typedef struct tsink {
    floe_rows_t *rows;
    tfile_t *files;
    size_t nfiles, capfiles;
    uint64_t clock;
    uint64_t seeded;       /* schema version of the owning tout last seeded */
    uint64_t drained;      /* buffer bytes handed to the open files since their
                            * last row group (cut at table.flush.bytes) */
} tsink_t;

/* The buffer goes to the open files' Parquet writers in steps of about
 * this much: encoded while its columns are still in cache, and held
 * encoded and compressed (several times smaller) until the row group is
 * cut.  Row groups still hold table.flush.bytes of buffered rows. */
#define TSINK_DRAIN_BYTES (256u << 10)

/* An output table: the main table or its dead-letter table. */
typedef struct tout {
    char ns[128], name[300];
    floe_ice_table_t *ice;          /* last loaded state; NULL until opened */
    floe_ice_schema_t *work;        /* current schema + fields found since */
    int32_t last_column_id;
    uint64_t schema_version;        /* bumped when work grows */
    bool schema_dirty;              /* work differs from the committed schema */
    char *schema_json;              /* of work, for new files */
    int64_t *committed;             /* per partition; -1: nothing yet */
    floe_ice_spec_t *spec;          /* spec of new files (owned) */
    bool spec_dirty;                /* spec not yet in the table */
    char spec_text[512];            /* table.partition.by it was made from */
    bool spec_waiting;              /* its source fields are not there yet */
    floe_ice_data_file_t *pending;  /* closed files awaiting commit */
    size_t npending, cappending;
    uint64_t file_seq;
} tout_t;

typedef struct tpart {
    ttable_t *t;
    int32_t id;
    int64_t next;           /* next offset to read */
    int64_t log_start, log_end;
    tsink_t main, dlq;
    floe_conv_t *conv;
    /* counters */
    uint64_t records, bytes, dlq_records, dropped, rows_written;
} tpart_t;

typedef enum tstate { T_RUNNING = 1, T_PAUSED, T_FAILED } tstate_t;

struct ttable {
    floe_engine_t *e;
    char *topic;
    floe_table_config_t cfg;
    tout_t main, dlq;
    tpart_t **parts;
    int32_t nparts;
    int64_t next_commit_ms;
    tstate_t state;
    char reason[640];
    bool seen;              /* still listed at the last discovery */
    char writer_id[37];     /* names this run's files */
    /* counters */
    uint64_t commits, commit_failures, files_written, bytes_written;
    int64_t last_commit_ms, last_commit_latency_ms;
};

struct floe_engine {
    floe_engine_config_t cfg;
    floe_tsource_t *src;
    ttable_t **tables;
    size_t ntables;
    int64_t next_discover_ms;
    pthread_t thread;
    bool running;
    pthread_mutex_t mu;     /* guards stop and the status snapshot */
    pthread_cond_t cv;
    bool stop;
    floe_buf_t status, metrics;
    /* shared by every partition's step (one thread steps them in turn) */
    floe_buf_t readbuf, scratch;
    floe_pq_scratch_t *pq_scratch;
};

/* pipeline.c */
tpart_t *floe_tpart_new(ttable_t *t, int32_t id, floe_err_t *err);
void floe_tpart_free(tpart_t *p);
/* Drop the sink's open files unpublished. */
void floe_tsink_abort(tsink_t *s);
/* Read and convert up to read_bytes; returns records converted (0 when
 * caught up) or -1 with *err (the table pauses). */
int64_t floe_tpart_step(tpart_t *p, floe_err_t *err);
/* Write the buffered rows and close the open files (before a commit). */
int floe_tpart_seal(tpart_t *p, floe_err_t *err);
/* Bytes the partition holds for its table: the buffer's rows plus what
 * its open files hold of unwritten row groups. */
uint64_t floe_tpart_buffered(const tpart_t *p);

/* commit.c */
/* Load or create the table and its DLQ table, resume offsets from their
 * summaries, delete files no snapshot references. */
int floe_ttable_open(ttable_t *t, floe_err_t *err);
/* Seal every partition and commit both tables. */
int floe_ttable_commit(ttable_t *t, floe_err_t *err);
/* Add a closed file to the output's pending list (takes ownership of *f). */
int floe_tout_add_pending(tout_t *o, floe_ice_data_file_t *f, floe_err_t *err);
/* Fields of the partition's buffer new to the output's working schema
 * get ids there (the schema grows); then the buffer gets the fields other
 * partitions added.  Called after every batch. */
int floe_tout_sync(tout_t *o, tsink_t *s, floe_err_t *err);
void floe_tout_clear(tout_t *o);
/* Make o->spec follow table.partition.by (text) once its source fields
 * exist in the working schema; a new spec is committed before data. */
void floe_tout_resolve_spec(tout_t *o, const char *text);
/* Location of the table's data folder ("<location>/data"), into buf. */
int floe_tout_data_dir(const tout_t *o, char *buf, size_t size);

#endif
