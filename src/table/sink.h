/* A sink: rows on their way into one output table.  It holds the L1
 * buffer (a floe_rows_t the caller fills), hands it in steps to the open
 * data files (one per partition tuple, Parquet writers holding the encoded
 * row group), cuts row groups at table.flush.bytes (L2), rolls files at
 * table.target.file.size (L3) and hands each closed file to the output's
 * pending list (tout.h), where a commit finds it.
 *
 * A sink needs no Kafka partition: the partition pipeline (pipeline.h)
 * has one per output table, a re-drive (redrive.c) its own, and the
 * ingest benchmark measures one directly.
 *
 * Not thread-safe: one thread owns a sink and the sinks sharing its env. */
#ifndef FLOE_TABLE_SINK_H
#define FLOE_TABLE_SINK_H

#include "format/parquet.h"
#include "table/config.h"
#include "table/datafile.h"
#include "table/tout.h"

/* What the sinks of one table share: where and how files are written, and
 * the table's file counters.  Pointers borrowed; cfg is read live (flush
 * and target sizes, table.partition.by). */
typedef struct floe_tsink_env {
    floe_fileio_t *io;
    floe_pq_scratch_t *pq_scratch; /* Parquet temporaries of one writer thread */
    const floe_table_config_t *cfg;
    const char *writer_id; /* names this run's files */
    uint64_t files_written, bytes_written;
} floe_tsink_env_t;

/* An open data file of one partition tuple. */
typedef struct floe_tsink_file {
    floe_dfw_t *w;
    floe_buf_t key;           /* serialized tuple ("" unpartitioned) */
    floe_ice_value_t *values; /* one per spec field (owned) */
    size_t nvalues;
    int32_t spec_id;
    uint64_t used; /* LRU clock */
    char *path;    /* owned */
} floe_tsink_file_t;

#define FLOE_TSINK_MAX_OPEN 32 /* open files per sink */

/* The buffer goes to the open files' Parquet writers in steps of about
 * this much: encoded while its columns are still in cache, and held
 * encoded and compressed (several times smaller) until the row group is
 * cut.  Row groups still hold table.flush.bytes of buffered rows. */
#define FLOE_TSINK_DRAIN_BYTES (256u << 10)

typedef enum floe_tsink_flags {
    /* new files follow table.partition.by (the main table; a dead-letter
     * table stays unpartitioned) */
    FLOE_TSINK_PARTITIONED = 1 << 0,
} floe_tsink_flags_t;

typedef struct floe_tsink {
    floe_rows_t *rows; /* the L1 buffer: fill it, then tell floe_tsink_consumed */
    floe_tsink_env_t *env;
    floe_tout_t *out;
    int32_t file_id; /* in file names: the Kafka partition (0 for a re-drive) */
    unsigned flags;  /* floe_tsink_flags_t */
    floe_tsink_file_t *files;
    size_t nfiles, capfiles;
    uint64_t clock;
    uint64_t seeded;     /* out's schema version the buffer last took fields from */
    uint64_t held_shape; /* the buffer's shape version when holds were marked */
    int32_t held_max;    /* out's committed_max_id then */
    uint64_t drained;    /* buffer bytes handed to the open files since their last
                       * row group (cut at table.flush.bytes) */
    size_t since;        /* input bytes since the buffer's size was looked at */
    size_t look_every;   /* a quarter of the drain step (floe_tsink_consumed) */
    uint64_t rows_written;
    /* which long fields of the buffer may widen, as decided
     * (floe_tsink_pin) for this state of the buffer and the output */
    struct floe_tsink_pins {
        bool set;
        uint64_t shape, schema, max_bytes, spec_sum;
        int64_t snapshot;
        int32_t schema_id;
        size_t nspecs;
    } pins;
    char widen_why[320]; /* what a refused fraction's error says */
    /* upsert tables (NULL: append): the id columns; per buffered row, 1
     * when it deletes its key.  The buffer then holds a whole commit's
     * rows: the seal keeps the last change per key (upsert.h). */
    floe_tupsert_cols_t *up;
    floe_buf_t ops;
} floe_tsink_t;

/* A sink of env and out (both borrowed; they must outlive it) with an
 * empty buffer whose JSON options come from env->cfg.  Clear with
 * floe_tsink_clear.  0, or -1 with *err. */
int floe_tsink_init(floe_tsink_t *s, floe_tsink_env_t *env, floe_tout_t *out, int32_t file_id,
                    unsigned flags, floe_err_t *err);
/* Make s an upsert sink (table.id.columns ids, table.cdc.field cdc;
 * borrowed for the call).  0, or -1 with *err. */
int floe_tsink_set_upsert(floe_tsink_t *s, const char *ids, const char *cdc, floe_err_t *err);
/* Upsert: the row just put into the buffer deletes its key (del) or
 * writes it.  0 or -1 (ENOMEM). */
int floe_tsink_note_op(floe_tsink_t *s, bool del, floe_err_t *err);

/* Drop the open files unpublished and free everything. */
void floe_tsink_clear(floe_tsink_t *s);
/* Drop the open files unpublished; the buffer keeps its rows. */
void floe_tsink_abort(floe_tsink_t *s);
/* Drop the open files and the buffered rows (after a failed commit). */
void floe_tsink_discard(floe_tsink_t *s);

/* Give the buffer the fields the output's working schema gained since it
 * last looked (other sinks found them), so inference starts from them;
 * mark the longs the table may hold in its files as held (rows.h): a
 * fraction there is refused with floe_rows_held set, never widened in
 * the buffer (table/widen.c). */
int floe_tsink_seed(floe_tsink_t *s, floe_err_t *err);
/* Fields of the buffer new to the output's working schema get ids there
 * (floe_tout_merge_schema); the buffer then has every field of it. */
int floe_tsink_merge_schema(floe_tsink_t *s, floe_err_t *err);

/* Pin the buffer's long fields that may not widen to double
 * (floe_tout_may_widen decides, max_bytes being the table's
 * table.json.widen.max.bytes): a fraction there is refused (the record
 * goes to the dead-letter table) with the reason.  Before converting;
 * decided again only when the buffer's shape, the output table or
 * max_bytes changed since the last call. */
void floe_tsink_pin(floe_tsink_t *s, uint64_t max_bytes);

/* Hand the buffer to the open files if it holds a drain step
 * (FLOE_TSINK_DRAIN_BYTES, or table.flush.bytes when smaller). */
int floe_tsink_drain_due(floe_tsink_t *s, floe_err_t *err);
/* After each row put into s->rows, with the input bytes it came from:
 * every quarter of a drain step of input, floe_tsink_drain_due, so a large
 * input keeps the buffer about a drain step.  (Inline: once per record.) */
static inline int floe_tsink_consumed(floe_tsink_t *s, size_t in_bytes, floe_err_t *err)
{
    s->since += in_bytes;
    return s->since < s->look_every ? 0 : floe_tsink_drain_due(s, err);
}
/* Hand the buffer to the open files, cut a row group in each, close them
 * all (their files become pending in the output).  Before a commit.  An
 * upsert sink writes only the last change of each key and logs every key
 * it touched in the output (floe_tout_t.uplog). */
int floe_tsink_seal(floe_tsink_t *s, floe_err_t *err);
/* Bytes the sink holds: the buffer's rows plus what its open files hold of
 * unwritten row groups. */
uint64_t floe_tsink_buffered(const floe_tsink_t *s);
/* Bytes of the sink's open files: written, and encoded in row groups not
 * yet cut (what closing them now would about make). */
uint64_t floe_tsink_file_bytes(const floe_tsink_t *s);

#endif
