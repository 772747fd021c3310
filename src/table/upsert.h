/* Upsert tables (table.write.mode=upsert): the id columns of a row, the
 * key they make, and the change each buffered row carries.
 *
 * A key is the id columns' values in table.id.columns order, each as a
 * class byte ('n' number, 's' string or binary, 'b' boolean), a 4-byte
 * little-endian length and the value's text (numbers in decimal, booleans
 * 0/1): the same bytes whether the value comes from the buffer's columns
 * or from a row the table reader renders as JSON (an int read back as a
 * long keeps its key).
 *
 * Within a commit only the last change of a key survives
 * (floe_tupsert_dedupe): the rows that are written, and the keys whose
 * earlier rows (in committed files) must be deleted. */
#ifndef FLOE_TABLE_UPSERT_H
#define FLOE_TABLE_UPSERT_H

#include <stdbool.h>
#include <stdint.h>

#include "iceberg/types.h"
#include "table/rows.h"
#include "util/buf.h"
#include "util/err.h"

#define FLOE_TUPSERT_MAX_IDS 8

/* The parsed table.id.columns and table.cdc.field. */
typedef struct floe_tupsert_cols {
    char ids[FLOE_TUPSERT_MAX_IDS][128]; /* dot paths */
    size_t nids;
    char cdc[128]; /* "" none */
} floe_tupsert_cols_t;

/* Parse ids (comma list of dot paths) and cdc (a dot path or "") into
 * *out.  0, or -1 with *err (none, too many, too long). */
int floe_tupsert_cols_parse(const char *ids, const char *cdc, floe_tupsert_cols_t *out,
                            floe_err_t *err);

/* floe_tupsert_cols_parse into a new struct: caller frees it with free().
 * NULL with *err. */
floe_tupsert_cols_t *floe_tupsert_cols_new(const char *ids, const char *cdc, floe_err_t *err);

/* The node at dot path `path` under struct node n (borrowed), or NULL. */
floe_rnode_t *floe_tupsert_find(floe_rnode_t *n, const char *path);

/* During a row (before floe_rows_end): every id column holds a value of a
 * key kind (long, int, string, binary, boolean) outside any list or map.
 * 0, or -1 with *err naming the column (the record is refused). */
int floe_tupsert_check_row(floe_rows_t *r, const floe_tupsert_cols_t *c, floe_err_t *err);
/* During a row: whether the cdc column says delete (d, D, delete). */
bool floe_tupsert_row_deletes(floe_rows_t *r, const floe_tupsert_cols_t *c);

/* The column holding a record key that is no JSON object (the key
 * converter's column): the default id column of such keys. */
#define FLOE_TUPSERT_KEY_COLUMN "_kafka.key"

/* The default table.id.columns of an upsert table, from a record key
 * (borrowed): a JSON object key (or the `payload` object of Debezium's
 * schema/payload envelope) gives its top-level field names, in order; any
 * other key gives FLOE_TUPSERT_KEY_COLUMN.  Into out (size).  0, or -1
 * with *err (no field, a name too long, too many). */
int floe_tupsert_ids_from_key(floe_slice_t key, char *out, size_t size, floe_err_t *err);

/* The id nodes of rows' shape in c's order, into ids[] (borrowed from
 * rows).  0, or -1 with *err when one is missing. */
int floe_tupsert_id_nodes(floe_rows_t *r, const floe_tupsert_cols_t *c,
                          floe_rnode_t *ids[FLOE_TUPSERT_MAX_IDS], floe_err_t *err);
/* Append the key of buffered row `row` to out (every row of the buffer
 * passed floe_tupsert_check_row, so value `row` of each column is its).
 * 0 or -1 (out of memory). */
int floe_tupsert_key(floe_rnode_t *const *ids, size_t n, size_t row, floe_buf_t *out);
/* Append one key part: class 'n', 's' or 'b' and the value's text. */
int floe_tupsert_key_part(floe_buf_t *out, char cls, const void *p, size_t len);

/* The outcome of one buffer's dedupe. */
typedef struct floe_tupsert_batch {
    uint32_t *sel; /* rows to write, ascending */
    size_t nsel;
    floe_buf_t keys;   /* every key the buffer touched, back to back */
    size_t *key_end;   /* end offset of key i in keys */
    uint32_t *key_row; /* its surviving row, UINT32_MAX: deleted */
    size_t nkeys;
} floe_tupsert_batch_t;

/* Keep only the last change of each key among rows' nrows rows; ops[i]
 * (nops of them; rows past nops write) says row i deletes.  *b is
 * reset first; free with floe_tupsert_batch_free.  0, or -1 with *err. */
int floe_tupsert_dedupe(floe_rows_t *rows, const floe_tupsert_cols_t *c, const uint8_t *ops,
                        size_t nops, floe_tupsert_batch_t *b, floe_err_t *err);
void floe_tupsert_batch_free(floe_tupsert_batch_t *b);

static inline floe_slice_t floe_tupsert_batch_key(const floe_tupsert_batch_t *b, size_t i)
{
    size_t start = i ? b->key_end[i - 1] : 0;
    return floe_slice(b->keys.data + start, b->key_end[i] - start);
}

/* The changes the pending files of an output table bring, in the order
 * they were sealed: per key, the file and row position of its new row, or
 * a delete.  The commit turns them into delete files (and updates the
 * key index). */
typedef struct floe_tupsert_log {
    floe_buf_t keys;
    size_t *key_end;
    uint32_t *file; /* index into files; UINT32_MAX: the key is deleted */
    int64_t *pos;
    size_t n, cap;
    char **files; /* owned */
    size_t nfiles, capfiles;
} floe_tupsert_log_t;

/* Append key's change: its row at (path, pos), or (path NULL) a delete.
 * Copied.  0 or -1 (ENOMEM). */
int floe_tupsert_log_add(floe_tupsert_log_t *l, floe_slice_t key, const char *path, int64_t pos);
void floe_tupsert_log_clear(floe_tupsert_log_t *l);
static inline floe_slice_t floe_tupsert_log_key(const floe_tupsert_log_t *l, size_t i)
{
    size_t start = i ? l->key_end[i - 1] : 0;
    return floe_slice(l->keys.data + start, l->key_end[i] - start);
}

/* ---- partitions of data files (position deletes of partitioned tables) -- */

/* Where a data file lives: its spec and partition tuple.  A position
 * delete file must carry the partition of the data files it names (spec
 * "Scan Planning": it applies only to data files of its partition), so a
 * commit groups its position deletes by the partition of each old row's
 * file, which may be another partition than the new row's. */
typedef struct floe_tupsert_part {
    int32_t spec_id;
    floe_ice_value_t *values; /* one per spec field (owned) */
    size_t nvalues;
    floe_buf_t key; /* spec id and values serialized: equal iff same partition */
} floe_tupsert_part_t;

/* Data file path -> its partition, for the files of one snapshot of the
 * table (plus the files of the commit being prepared). */
typedef struct floe_tupsert_parts floe_tupsert_parts_t;

/* An empty map; NULL on ENOMEM.  Free with floe_tupsert_parts_free. */
floe_tupsert_parts_t *floe_tupsert_parts_new(void);
void floe_tupsert_parts_free(floe_tupsert_parts_t *p);
/* Data file path (copied) lives in partition (spec_id, values[0..n))
 * (copied); a path known already keeps its first partition (a file's
 * partition never changes).  0, or -1 with *err. */
int floe_tupsert_parts_put(floe_tupsert_parts_t *p, const char *path, int32_t spec_id,
                           const floe_ice_value_t *values, size_t n, floe_err_t *err);
/* The partition of path (borrowed from p), NULL when unknown. */
const floe_tupsert_part_t *floe_tupsert_parts_get(const floe_tupsert_parts_t *p, const char *path);
/* Files known. */
size_t floe_tupsert_parts_count(const floe_tupsert_parts_t *p);
/* The snapshot of the table (uuid, copied) the map reflects; -1: none. */
void floe_tupsert_parts_set_state(floe_tupsert_parts_t *p, const char *uuid, int64_t snapshot);
bool floe_tupsert_parts_reflects(const floe_tupsert_parts_t *p, const char *uuid, int64_t snapshot);

/* One row a position delete removes. */
typedef struct floe_tupsert_posdel {
    const char *path; /* data file (borrowed) */
    int64_t pos;
    const floe_tupsert_part_t *part; /* its partition (set by the grouping) */
} floe_tupsert_posdel_t;

/* Sort d[0..n) by partition of their data file (looked up in parts), then
 * path and position; ends[0..*ngroups) get the end index of each
 * partition's run (ends has room for n).  0, or -1 with *err
 * (FLOE_ECORRUPT: a path parts does not know). */
int floe_tupsert_posdel_group(const floe_tupsert_parts_t *parts, floe_tupsert_posdel_t *d, size_t n,
                              size_t *ends, size_t *ngroups, floe_err_t *err);

#endif
