/* Iceberg column metrics of a Parquet data file while it is written.
 *
 * A manifest entry carries, per leaf column, value, null and NaN counts and
 * lower/upper bounds (spec "Manifests": value_counts, null_value_counts,
 * nan_value_counts, lower_bounds, upper_bounds).  Every writer of table
 * data files (the table engine's appends, the compaction rewriter) keeps
 * one floe_ice_colstats_t per leaf, feeds it each batch of levels and
 * values it hands the Parquet writer, and at close turns the counts plus
 * the writer's own statistics into the file's metrics: one collector, so
 * every data file floe writes is described the same way.
 *
 * Bounds follow Iceberg's default metrics mode, truncate(16): strings are
 * cut to 16 code points and binaries to 16 bytes (an upper bound then has
 * its last unit incremented, and is left out when none can be).  Columns
 * inside lists and maps get counts but no bounds, as Iceberg's writers do. */
#ifndef FLOE_ICEBERG_COLSTATS_H
#define FLOE_ICEBERG_COLSTATS_H

#include "format/parquet.h"
#include "iceberg/manifest.h"

/* Iceberg's default truncation length of string and binary bounds. */
#define FLOE_ICE_BOUND_TRUNCATE 16

typedef struct floe_ice_colstats {
    int32_t id;           /* the leaf's field id */
    floe_ice_kind_t kind; /* its Iceberg type (NaNs: float, double; truncation: string, binary) */
    int32_t scale;        /* decimal */
    bool bounds;          /* false inside lists and maps: counts only */
    int64_t values, nulls, nans;
} floe_ice_colstats_t;

/* A zeroed collector for leaf `id` of type `kind`. */
void floe_ice_colstats_init(floe_ice_colstats_t *st, int32_t id, floe_ice_kind_t kind, bool bounds);

/* Count one batch of a leaf: nl entries with definition levels def (NULL
 * when every entry is defined, i.e. the leaf's max level is 0) against the
 * leaf's maxdef, and its nv non-null values (layout of the Parquet writer:
 * float and double values are checked for NaN).  Everything borrowed. */
void floe_ice_colstats_add(floe_ice_colstats_t *st, const uint8_t *def, size_t nl, int maxdef,
                           const void *vals, size_t nv);
/* The same with 16-bit levels, as the Parquet reader returns them. */
void floe_ice_colstats_add16(floe_ice_colstats_t *st, const int16_t *def, size_t nl, int maxdef,
                             const void *vals, size_t nv);

/* Set f's metrics from st[0..n), whose i-th entry describes Parquet column
 * i of pq (closed or not: its bounds are those of the row groups flushed,
 * so call after the last flush).  Bounds are the writer's, put in Iceberg's
 * single-value form (decimals as minimal big-endian unscaled bytes) and
 * truncated as above.  pq and st are borrowed; f's metric slots are
 * created or overwritten.  Returns 0 or -1 (ENOMEM). */
int floe_ice_colstats_fill(const floe_ice_colstats_t *st, size_t n, const floe_pq_writer_t *pq,
                           floe_ice_data_file_t *f, floe_err_t *err);

/* Truncate a bound held in b to FLOE_ICE_BOUND_TRUNCATE code points (utf8)
 * or bytes.  An upper bound then gets its last unit incremented so it stays
 * above every value it stands for; false when no such bound exists (b is
 * then unusable). */
bool floe_ice_bound_truncate(floe_buf_t *b, bool upper, bool utf8);

#endif
