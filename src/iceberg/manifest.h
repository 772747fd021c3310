/* Manifests and manifest lists: Avro object container files with the
 * spec's v2 schemas (field ids on every field) and header metadata.
 *
 * A manifest lists data files (content "data") or delete files (content
 * "deletes") of one partition spec, each in an entry with a status
 * (existing/added/deleted), the snapshot that added it and sequence
 * numbers.  A manifest list (one per snapshot) lists the manifests with
 * counts and per-partition-field summaries.  Entries always carry explicit
 * sequence numbers (no inheritance), which every reader accepts.
 *
 * Plain value types; strings and arrays are owned by the struct that holds
 * them (floe_ice_data_file_clear, floe_ice_manifest_file_clear). */
#ifndef FLOE_ICEBERG_MANIFEST_H
#define FLOE_ICEBERG_MANIFEST_H

#include "iceberg/metadata.h"
#include "storage/fileio.h"

typedef enum floe_ice_content {
    FLOE_ICE_CONTENT_DATA = 0,
    FLOE_ICE_CONTENT_POSITION_DELETES = 1,
    FLOE_ICE_CONTENT_EQUALITY_DELETES = 2,
} floe_ice_content_t;

/* Per-column metrics of a file; -1 (or has_* false) = unknown. */
typedef struct floe_ice_col_metrics {
    int32_t id;
    int64_t size;   /* column_sizes */
    int64_t values; /* value_counts */
    int64_t nulls;  /* null_value_counts */
    int64_t nans;   /* nan_value_counts */
    bool has_lower, has_upper;
    floe_buf_t lower, upper; /* single-value binary form (owned) */
} floe_ice_col_metrics_t;

typedef struct floe_ice_data_file {
    floe_ice_content_t content;
    char *path;   /* owned */
    char *format; /* owned: "PARQUET", "AVRO", "ORC" */
    int32_t spec_id;
    floe_ice_value_t *partition; /* owned: one per field of the spec */
    size_t npartition;
    int64_t record_count;
    int64_t file_size;
    floe_ice_col_metrics_t *metrics;
    size_t nmetrics; /* owned */
    int64_t *split_offsets;
    size_t nsplit_offsets; /* owned */
    int32_t *equality_ids;
    size_t nequality_ids;  /* owned */
    int32_t sort_order_id; /* -1: none */
} floe_ice_data_file_t;

/* Zeroed file with sort_order_id -1; set fields directly or with these
 * helpers (which copy their arguments).  0 or -1 (ENOMEM). */
void floe_ice_data_file_init(floe_ice_data_file_t *f);
int floe_ice_data_file_set_path(floe_ice_data_file_t *f, const char *path, const char *format);
/* Metrics slot for column id (created if absent); NULL on ENOMEM. */
floe_ice_col_metrics_t *floe_ice_data_file_metrics(floe_ice_data_file_t *f, int32_t id);
int floe_ice_data_file_copy(floe_ice_data_file_t *dst, const floe_ice_data_file_t *src);
void floe_ice_data_file_clear(floe_ice_data_file_t *f);

typedef enum floe_ice_entry_status {
    FLOE_ICE_EXISTING = 0,
    FLOE_ICE_ADDED = 1,
    FLOE_ICE_DELETED = 2,
} floe_ice_entry_status_t;

typedef struct floe_ice_manifest_entry {
    floe_ice_entry_status_t status;
    int64_t snapshot_id;
    int64_t sequence_number; /* data sequence number */
    int64_t file_sequence_number;
    floe_ice_data_file_t file;
} floe_ice_manifest_entry_t;

typedef struct floe_ice_field_summary {
    bool contains_null;
    int contains_nan; /* -1 unknown, 0, 1 */
    bool has_lower, has_upper;
    floe_buf_t lower, upper; /* owned */
} floe_ice_field_summary_t;

typedef struct floe_ice_manifest_file {
    char *path; /* owned */
    int64_t length;
    int32_t spec_id;
    int content; /* 0 data, 1 deletes */
    int64_t sequence_number;
    int64_t min_sequence_number;
    int64_t added_snapshot_id;
    int32_t added_files, existing_files, deleted_files;
    int64_t added_rows, existing_rows, deleted_rows;
    floe_ice_field_summary_t *partitions;
    size_t npartitions; /* owned */
} floe_ice_manifest_file_t;

int floe_ice_manifest_file_copy(floe_ice_manifest_file_t *dst, const floe_ice_manifest_file_t *src);
void floe_ice_manifest_file_clear(floe_ice_manifest_file_t *m);

typedef struct floe_ice_manifest_opts {
    int codec; /* floe_avro_codec_t; 0 = null (icebird cannot read small deflate blocks) */
} floe_ice_manifest_opts_t;

/* Write a manifest of entries[0..n) (all of spec `spec`, all data or all
 * deletes as `content` says: 0 data, 1 deletes) to path, create-if-absent.
 * schema is the table schema written into the header.  Fills *out (caller
 * clears): path, length, spec id, content, counts, partition summaries,
 * min_sequence_number; the caller sets sequence_number and
 * added_snapshot_id.  Everything else borrowed. */
int floe_ice_manifest_write(floe_fileio_t *io, const char *path, const floe_ice_schema_t *schema,
                            const floe_ice_spec_t *spec, int content,
                            const floe_ice_manifest_entry_t *entries, size_t n,
                            const floe_ice_manifest_opts_t *opts, floe_ice_manifest_file_t *out,
                            floe_err_t *err);

/* Read a manifest; partition values are typed from the header's schema and
 * partition-spec.  *entries is the caller's: free with
 * floe_ice_manifest_entries_free. */
int floe_ice_manifest_read(floe_fileio_t *io, const char *path, floe_ice_manifest_entry_t **entries,
                           size_t *n, floe_err_t *err);
/* Same from bytes in memory (untrusted; used by the fuzz target too). */
int floe_ice_manifest_parse(const void *data, size_t len, floe_ice_manifest_entry_t **entries,
                            size_t *n, floe_err_t *err);
void floe_ice_manifest_entries_free(floe_ice_manifest_entry_t *entries, size_t n);
/* Fill what entries read from manifest m left to inheritance (v2 manifests
 * we write carry every value; others may not): sequence numbers and the
 * snapshot id from m (added entries take the manifest's), the spec id. */
void floe_ice_manifest_entries_inherit(floe_ice_manifest_entry_t *entries, size_t n,
                                       const floe_ice_manifest_file_t *m);

/* Write a manifest list (create-if-absent) with header snapshot-id,
 * parent-snapshot-id (-1: omitted), sequence-number, format-version. */
int floe_ice_manifest_list_write(floe_fileio_t *io, const char *path, int64_t snapshot_id,
                                 int64_t parent_id, int64_t sequence_number,
                                 const floe_ice_manifest_file_t *files, size_t n,
                                 const floe_ice_manifest_opts_t *opts, floe_err_t *err);
/* Caller frees *files with floe_ice_manifest_files_free. */
int floe_ice_manifest_list_read(floe_fileio_t *io, const char *path,
                                floe_ice_manifest_file_t **files, size_t *n, floe_err_t *err);
int floe_ice_manifest_list_parse(const void *data, size_t len, floe_ice_manifest_file_t **files,
                                 size_t *n, floe_err_t *err);
void floe_ice_manifest_files_free(floe_ice_manifest_file_t *files, size_t n);

/* The Avro schema JSON of manifest entries for a partition type (a struct
 * of the spec's partition fields), and of manifest lists; caller frees. */
char *floe_ice_manifest_avro_schema(const floe_ice_type_t *partition_type, floe_err_t *err);
const char *floe_ice_manifest_list_avro_schema(void);

#endif
