/* Internals of the data file rewriter (rewrite.h) shared by its files:
 * rewrite.c (lifecycle, outputs, row groups) and rewrite_map.c (the table
 * schema as Parquet, and how each input's columns map onto it). */
#ifndef FLOE_ICEBERG_REWRITE_INT_H
#define FLOE_ICEBERG_REWRITE_INT_H

#include "iceberg/colstats.h"
#include "iceberg/rewrite.h"

/* Deepest nesting of a column handled (the Parquet reader's own cap). */
#define RW_MAX_DEPTH 64

/* An output leaf column: its path of Parquet nodes from the top. */
typedef struct rw_leaf {
    int node;                       /* output Parquet node */
    const floe_ice_type_t *type;    /* Iceberg type of the leaf */
    int depth;                      /* nodes on the path (root excluded) */
    int path[RW_MAX_DEPTH];         /* output nodes, top first */
    uint8_t cnt[RW_MAX_DEPTH + 1];  /* optional or repeated nodes among path[0..i) */
    uint8_t reps[RW_MAX_DEPTH + 1]; /* repeated nodes among path[0..i) */
} rw_leaf_t;

/* Value conversions from an input column's stored type to the table's. */
enum {
    RW_CV_NONE,
    RW_CV_I32_I64, /* int -> long */
    RW_CV_F32_F64, /* float -> double */
    RW_CV_I64_F64, /* floe's long -> double widening */
    RW_CV_I32_F64,
    RW_CV_MS_US,   /* timestamps or times stored in milliseconds */
    RW_CV_DECIMAL, /* decimal precision widening (another physical type) */
};

/* How output column j gets its entries from one input file. */
typedef struct rw_plan {
    int src;                          /* input column read, or -1: a null per row */
    bool same;                        /* src is this very field: its values come along */
    bool identity;                    /* the levels need no mapping */
    uint8_t rep_keep;                 /* entries with a repetition level above it are dropped */
    int in_maxdef;                    /* src's max definition level */
    uint8_t defmap[RW_MAX_DEPTH + 1]; /* input definition level -> output */
    int conv;                         /* RW_CV_* (same only) */
    floe_pq_phys_t in_phys;
    int32_t in_len; /* FIXED input length */
} rw_plan_t;

/* The table schema as the Parquet schema of the outputs: Iceberg's
 * mapping (list/element, map/key_value), field ids on every field node.
 * Fills *leaves (malloc'd, one per column; caller frees).  NULL with *err
 * for types Parquet cannot hold or nesting past RW_MAX_DEPTH. */
floe_pq_schema_t *rw_parquet_schema(const floe_ice_schema_t *schema, rw_leaf_t **leaves,
                                    floe_err_t *err);

/* Plan how every output column comes out of an input file with Parquet
 * schema `in` (path names the file in errors).  remap as in the options.
 * Returns 0, or -1 with *err (EUNSUPPORTED naming the column and why). */
int rw_plan_input(const floe_pq_schema_t *out, const rw_leaf_t *leaves, int ncols,
                  const floe_pq_schema_t *in, const floe_ice_field_remap_t *remap, size_t nremap,
                  const char *path, rw_plan_t *plans, floe_err_t *err);

#endif
