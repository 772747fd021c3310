/* One partition's durable log: a directory of segments.
 *
 * Files (Kafka-like names, 20-digit zero-padded base offset):
 *   00000000000000000000.log        RecordBatch v2 bytes, as received
 *   00000000000000000000.index      sparse offset index (u32 rel, u32 pos)
 *   00000000000000000000.timeindex  time index (i64 ts, u32 rel offset)
 *   log-start-offset                the DeleteRecords low mark (text)
 *   cleaner-offset-checkpoint       compaction: clean below this offset, and
 *                                   the earliest tombstone delete horizon
 *   <base>.log.cleaned, <base>.log.<end>.swap
 *                                   compaction's swap in progress (open
 *                                   removes the first, finishes the second)
 * Recovery at open scans the active segment with CRC checks, truncates a
 * torn tail, rebuilds missing or inconsistent indexes and rebuilds the
 * idempotent-producer state from the batch headers.
 *
 * Thread safety: every function may be called from any thread.  A
 * floe_log_t has an internal mutex; appends are serialized, reads run in
 * parallel with appends (file I/O outside the lock), fsync in
 * floe_log_flush runs outside the lock too.  Waiting for new data (long-poll
 * fetch) is the caller's business: floe_log_end_offset changes after every
 * successful append.
 *
 * Against LOG_CONTRACT.md: floe_log_offset_for_time takes one more
 * argument (ts_out, may be NULL: the found record's timestamp, which
 * ListOffsets returns).  Added: floe_log_config_set (topic-config names),
 * leader_epoch and producer_id_expiration_ms in the config,
 * floe_log_set_config / get_config, floe_log_drop, floe_log_maybe_flush,
 * floe_log_size_bytes, floe_log_producer_state, floe_log_segment_count,
 * end_offset and error_code in floe_log_read_info_t, and compaction
 * (cleanup.policy and its configs, floe_log_clean, floe_log_dirty_ratio,
 * floe_log_clean_checkpoint; cleaner.c). */
#ifndef FLOE_LOG_LOG_H
#define FLOE_LOG_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/batch.h"
#include "util/buf.h"
#include "util/err.h"

/* Kafka protocol error codes that log operations report (numbers are
 * Kafka's; src/kafka owns the full list). */
#define FLOE_LOG_KERR_NONE 0
#define FLOE_LOG_KERR_OFFSET_OUT_OF_RANGE 1
#define FLOE_LOG_KERR_CORRUPT_MESSAGE 2
#define FLOE_LOG_KERR_MESSAGE_TOO_LARGE 10
#define FLOE_LOG_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT 43
#define FLOE_LOG_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER 45
#define FLOE_LOG_KERR_INVALID_PRODUCER_EPOCH 47
#define FLOE_LOG_KERR_KAFKA_STORAGE_ERROR 56
#define FLOE_LOG_KERR_INVALID_RECORD 87

typedef struct floe_log_config {
    uint64_t segment_bytes;            /* roll past this size; default 1 GiB */
    int64_t segment_ms;                /* roll after this age; default 7 days;
                                      -1 = never */
    int64_t retention_ms;              /* -1 = forever; default 7 days */
    int64_t retention_bytes;           /* -1 = unlimited (default) */
    uint32_t index_interval_bytes;     /* default 4096 */
    int64_t flush_messages;            /* fsync every N messages; -1 = never
                                      (default: leave it to the OS) */
    int64_t flush_ms;                  /* fsync when the last one is this old
                                      (checked on append and in
                                      floe_log_maybe_flush); -1 = never */
    uint32_t max_message_bytes;        /* largest batch incl. its 12-byte log
                                      overhead; default 1048588 */
    int32_t leader_epoch;              /* stored into appended batches; 0 */
    int64_t producer_id_expiration_ms; /* forget idle producers' state in
                                      floe_log_enforce_retention; 1 day */
    /* cleanup.policy: FLOE_LOG_CLEANUP_DELETE (default) and/or
     * FLOE_LOG_CLEANUP_COMPACT; without DELETE, retention.ms and
     * retention.bytes delete nothing (Kafka) */
    unsigned cleanup_policy;
    int64_t delete_retention_ms;      /* tombstones stay this long after their
                                         first cleaning; default 1 day */
    double min_cleanable_dirty_ratio; /* clean when dirty / total >= it; 0.5 */
    int64_t min_compaction_lag_ms;    /* records younger than this stay
                                         uncompacted; default 0 */
} floe_log_config_t;

#define FLOE_LOG_CLEANUP_DELETE 1u
#define FLOE_LOG_CLEANUP_COMPACT 2u

void floe_log_config_default(floe_log_config_t *cfg);

/* Set one field from its Kafka topic-config name and text value:
 * segment.bytes, segment.ms, retention.ms, retention.bytes,
 * index.interval.bytes, flush.messages, flush.ms, max.message.bytes,
 * producer.id.expiration.ms, cleanup.policy (a list of delete and
 * compact), delete.retention.ms, min.cleanable.dirty.ratio (0..1),
 * min.compaction.lag.ms.
 * Returns 0 when set, 1 when the key is not a log config (cfg untouched),
 * -1 when the value is invalid (err says why). */
int floe_log_config_set(floe_log_config_t *cfg, const char *key, const char *value,
                        floe_err_t *err);

typedef struct floe_log floe_log_t;

/* Open (creating dir and parents if missing) and recover the log in dir.
 * cfg copied (NULL = defaults).  On success *out is the caller's; close it
 * with floe_log_close.  Errors: FLOE_EIO and friends. */
int floe_log_open(const char *dir, const floe_log_config_t *cfg, floe_log_t **out, floe_err_t *err);

/* Flush indexes, close files, free.  Does not fsync the data (call
 * floe_log_flush first for that).  NULL is fine. */
void floe_log_close(floe_log_t *l);

/* Close the log and delete its directory and every file in it (topic
 * deletion).  l is freed even on error. */
int floe_log_drop(floe_log_t *l, floe_err_t *err);

/* Replace the config of an open log (AlterConfigs); copied. */
void floe_log_set_config(floe_log_t *l, const floe_log_config_t *cfg);
void floe_log_get_config(floe_log_t *l, floe_log_config_t *out);

typedef struct floe_log_append_result {
    int64_t base_offset;        /* offset of the first record appended */
    int64_t last_offset;        /* offset of the last record appended */
    int64_t log_append_time_ms; /* -1 unless LogAppendTime was set */
    int64_t log_start_offset;
    bool duplicate;     /* retried idempotent batch: nothing
                                   appended, offsets are the originals */
    int16_t error_code; /* FLOE_LOG_KERR_*; 0 on success */
} floe_log_append_result_t;

/* Append the concatenated RecordBatch v2 batches in batches[0..len).
 * Borrowed; modified in place (base offsets, leader epoch, LogAppendTime
 * and CRC), so after success the bytes are exactly what was stored.
 * log_append_time_ms >= 0 stamps every batch with LogAppendTime; -1 keeps
 * CreateTime.
 * Validation: every batch whole, magic 2, CRC, records decodable (count,
 * lengths, offset deltas), size <= max_message_bytes.  Idempotent batches
 * (producer_id >= 0) must come one per call; per producer id the epoch is
 * fenced (older -> 47), a duplicate of one of the last 5 batches succeeds
 * with the original offsets and res->duplicate, a sequence gap -> 45.
 * Appends with write() (no fsync unless flush_messages / flush_ms say so),
 * rolls by size and time, updates the sparse indexes.
 * Returns 0 on success; -1 with err filled and res->error_code set
 * (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, INVALID_RECORD,
 * OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH,
 * KAFKA_STORAGE_ERROR).  Nothing is appended when it fails.  res may be
 * NULL. */
int floe_log_append(floe_log_t *l, uint8_t *batches, size_t len, int64_t log_append_time_ms,
                    floe_log_append_result_t *res, floe_err_t *err);

/* floe_log_append in two steps, so that the byte checks (CRC, records)
 * can run on another thread than the append, e.g. where the bytes are
 * still in the CPU cache.  floe_log_check does every check of the bytes
 * that floe_log_append does and fills *chk; floe_log_append_checked then
 * appends those same, unchanged bytes (idempotence checks, offsets,
 * write).  Results and errors are those of floe_log_append. */
typedef struct floe_log_checked {
    size_t nbatches;
    int64_t nrecords;
    bool idempotent;
    floe_batch_hdr_t first; /* header of the first batch */
} floe_log_checked_t;
int floe_log_check(floe_log_t *l, const uint8_t *batches, size_t len, floe_log_checked_t *chk,
                   floe_log_append_result_t *res, floe_err_t *err);
int floe_log_append_checked(floe_log_t *l, uint8_t *batches, size_t len,
                            const floe_log_checked_t *chk, int64_t log_append_time_ms,
                            floe_log_append_result_t *res, floe_err_t *err);

/* fsync every segment written since the last flush (data; index files
 * of segments sealed since; the directory when files came or went), then
 * advance the durable offset to the end offset seen at the start.  The
 * fsync runs outside the log lock: appends and reads go on meanwhile.
 * Flushes of one log run one at a time; a caller arriving during one waits
 * and then syncs what was appended meanwhile (group commit). */
int floe_log_flush(floe_log_t *l, floe_err_t *err);
/* Flush when flush_ms has passed since the last flush and data is
 * pending (for a periodic timer).  now_ms: wall clock. */
int floe_log_maybe_flush(floe_log_t *l, int64_t now_ms, floe_err_t *err);
/* Next offset known to be on disk: offsets below it were fsynced by a
 * flush, or were already in the files when the log was opened. */
int64_t floe_log_durable_offset(floe_log_t *l);

typedef struct floe_log_read_info {
    int64_t high_watermark; /* = end offset (single node) */
    int64_t log_start_offset;
    int64_t end_offset;
    size_t bytes;       /* bytes appended to out by this read */
    int16_t error_code; /* FLOE_LOG_KERR_* */
} floe_log_read_info_t;

/* Append to out (caller-owned) whole stored batches, as stored, starting
 * with the batch that contains offset, then following batches while the
 * total stays <= max_bytes; the first batch is always whole even when it
 * alone exceeds max_bytes (KIP-74).  offset == end offset reads nothing
 * (success, info->bytes 0).  offset outside [log_start, end]: returns -1,
 * FLOE_ERANGE, info->error_code OFFSET_OUT_OF_RANGE.  info may be NULL. */
int floe_log_read(floe_log_t *l, int64_t offset, size_t max_bytes, floe_buf_t *out,
                  floe_log_read_info_t *info, floe_err_t *err);

int64_t floe_log_start_offset(floe_log_t *l);
int64_t floe_log_end_offset(floe_log_t *l); /* next offset to assign */
/* Bytes in all segments. */
uint64_t floe_log_size_bytes(floe_log_t *l);

/* First offset whose record timestamp is >= ts_ms, or -1 when there is
 * none (ListOffsets; the caller maps -2 earliest / -1 latest to the start
 * and end offsets itself).  When ts_out is non-NULL it receives that
 * record's timestamp (-1 when none).  Read errors are logged and answered
 * with -1. */
int64_t floe_log_offset_for_time(floe_log_t *l, int64_t ts_ms, int64_t *ts_out);

/* DeleteRecords: raise the log start offset to before (<= end offset;
 * lower than the current start is a no-op), persist it (fsync), and delete
 * whole segments that lie entirely below it.  Errors: FLOE_ERANGE past the
 * end, I/O errors. */
int floe_log_delete_records(floe_log_t *l, int64_t before, floe_err_t *err);

/* Delete old segments per retention_ms (segment's newest timestamp older
 * than now_ms - retention_ms) and retention_bytes (oldest first while the
 * log stays above the limit).  The active segment is rolled away first when
 * it is expired itself.  Raises the log start offset accordingly.  Also
 * forgets producers idle longer than producer_id_expiration_ms. */
int floe_log_enforce_retention(floe_log_t *l, int64_t now_ms, floe_err_t *err);

#define FLOE_LOG_NO_FLOOR INT64_MAX

/* Retention under a floor: what a reader that has not taken the records
 * yet (a table topic's table, design.md invariant 8) needs kept. */
typedef struct floe_log_retention {
    /* in: segments holding an offset at or above floor stay, whatever
     * retention says (FLOE_LOG_NO_FLOOR: none; 0 keeps everything) */
    int64_t floor;
    /* in: when what the floor keeps of what retention wanted gone exceeds
     * this many bytes, the oldest of it goes anyway, down to this; -1 no
     * limit */
    int64_t max_held_bytes;
    /* out: bytes retention wanted gone but kept for the floor */
    uint64_t held_bytes;
    /* out: offsets at or above the floor deleted anyway (max_held_bytes),
     * [skipped_from, skipped_to); equal when none */
    int64_t skipped_from, skipped_to;
    size_t deleted_segments;
} floe_log_retention_t;

/* floe_log_enforce_retention, keeping every segment that holds an offset
 * at or above r->floor, unless more than r->max_held_bytes would be kept
 * that way; fills r's outputs.  Returns 0, or -1 with *err when rolling
 * an expired active segment failed (the rest still ran). */
int floe_log_enforce_retention_floor(floe_log_t *l, int64_t now_ms, floe_log_retention_t *r,
                                     floe_err_t *err);

/* held_bytes of the last retention run (0 before the first). */
uint64_t floe_log_retention_held(floe_log_t *l);

/* Idempotence state of one producer id in this log: returns 0 and fills
 * epoch / last sequence (either may be NULL), -1 when unknown. */
int floe_log_producer_state(floe_log_t *l, int64_t producer_id, int16_t *epoch,
                            int32_t *last_sequence);

/* Number of segment files (for tests and metrics). */
size_t floe_log_segment_count(floe_log_t *l);

/* ---- compaction (cleanup.policy=compact; cleaner.c) ---- */

/* Steps of one group's swap, for tests that kill the process at each. */
enum {
    FLOE_CLEAN_STEP_WRITING = 1, /* part of "<base>.log.cleaned" written */
    FLOE_CLEAN_STEP_CLEANED,     /* .cleaned complete and fsynced */
    FLOE_CLEAN_STEP_SWAP_NAMED,  /* renamed to "<base>.log.<end>.swap" */
    FLOE_CLEAN_STEP_OLD_DELETED, /* the old segments' files unlinked */
    FLOE_CLEAN_STEP_RENAMED,     /* the swap file is "<base>.log" */
    FLOE_CLEAN_STEP_SWAPPED,     /* every group swapped, checkpoint not yet */
};

typedef struct floe_log_clean_opts {
    /* distinct keys one run maps (bounds memory: 24 bytes a slot, half
     * full; and work); 0: 1 Mi.  A run that fills it cleans up to there. */
    size_t max_keys;
    /* dirty bytes one run maps; 0: 256 MiB */
    uint64_t max_dirty_bytes;
    /* clean even when the dirty ratio is below min.cleanable.dirty.ratio */
    bool force;
    /* only segments wholly below this offset are cleaned (a reader that
     * has not taken the rest yet: a table topic's committed offset); 0
     * means no floor (INT64_MAX too) */
    int64_t floor;
    /* tests: called after each FLOE_CLEAN_STEP_* (a test kills the
     * process there and reopens the log); NULL in production */
    void (*step)(void *arg, int step);
    void *step_arg;
} floe_log_clean_opts_t;

typedef struct floe_log_clean_stats {
    uint64_t bytes_before, bytes_after; /* of the segments rewritten */
    int64_t records_before, records_removed, tombstones_removed;
    size_t segments_before;  /* segments read */
    size_t segments_cleaned; /* of them, replaced by a cleaned one */
    size_t segments_after;   /* segments in the log after the run */
    int64_t clean_upto;      /* the new checkpoint */
    bool changed;            /* anything rewritten */
} floe_log_clean_stats_t;

/* Compact the log when its policy says compact and it is due: dirty bytes
 * (sealed segments from the checkpoint on) / all bytes of the cleanable
 * sealed segments >= min.cleanable.dirty.ratio, or a kept tombstone's
 * delete horizon has passed (or opts->force).  Never touches the active
 * segment nor segments holding a record younger than
 * min.compaction.lag.ms.  Keeps the latest record of each key; offsets
 * never change (fetches skip the gaps); tombstones go once their delete
 * horizon (first cleaning + delete.retention.ms) has passed; records
 * without a key go.  Crash safe at every instant (see cleaner.c).  Runs
 * on the caller's thread, which should be a background one: the log lock
 * is taken only to pick segments and to swap them in.  opts and st may be
 * NULL.  Returns 1 when it ran, 0 when there was nothing to do, -1 with
 * *err (the log stays usable; a swap interrupted by an I/O error is
 * finished at the next open).  The caller must not close or drop l
 * meanwhile. */
int floe_log_clean(floe_log_t *l, int64_t now_ms, const floe_log_clean_opts_t *opts,
                   floe_log_clean_stats_t *st, floe_err_t *err);

/* Dirty bytes / cleanable bytes (0 when none), as floe_log_clean
 * judges it; *dirty_bytes (may be NULL) gets the dirty bytes. */
double floe_log_dirty_ratio(floe_log_t *l, int64_t now_ms, uint64_t *dirty_bytes);
/* The cleaner checkpoint: offsets below it have been compacted. */
int64_t floe_log_clean_checkpoint(floe_log_t *l);

/* ---- open descriptors ----
 * A broker keeps thousands of partitions: a segment's .log is open only
 * while it sits in one process-wide cache of descriptors (the most
 * recently used, up to a limit; the active segment of a busy partition in
 * practice), its index files only while they are read or written (a
 * sealed segment's are mapped, which holds no descriptor), the log's
 * directory only to fsync it.  A log opened at start therefore holds no
 * descriptor once the cache has moved on. */

/* Limit of open .log descriptors, for every log of the process (the
 * server key log.max.open.files); beyond it the least recently used one
 * nobody is reading or writing is closed.  0: half the process's
 * RLIMIT_NOFILE as it is now (the default).  Any thread, any time. */
void floe_log_set_max_open_files(size_t n);
size_t floe_log_max_open_files(void);
/* .log descriptors open now, all logs together (tests, metrics). */
size_t floe_log_open_files(void);

#endif
