/* Test support for Parquet: random schemas and rows as value trees that
 * mirror the schema, shredding into levels, assembly back from read
 * columns, and a canonical JSON rendering shared with the node checker
 * (tests/interop/parquet_check.mjs). */
#ifndef FLOE_TESTS_PQ_GEN_H
#define FLOE_TESTS_PQ_GEN_H

#include "format/parquet.h"
#include "util/arena.h"
#include "util/buf.h"

typedef struct pqg_val {
    bool null;
    uint32_t n; /* groups: children; repeated nodes: occurrences */
    struct pqg_val *kids;
    int64_t i;        /* BOOLEAN, INT32, INT64 */
    double d;         /* FLOAT (as float), DOUBLE */
    const uint8_t *b; /* BYTE_ARRAY, FIXED */
    uint32_t blen;
} pqg_val_t;

typedef struct pqg {
    floe_pq_schema_t *s;
    floe_arena_t arena;
    uint64_t rng;
    int next_id;
    double null_rate;
    bool narrow; /* pqg_write feeds byte levels (floe_pq_write_column8) */
} pqg_t;

void pqg_init(pqg_t *g, uint64_t seed);
void pqg_free(pqg_t *g);
uint64_t pqg_rand(pqg_t *g);
/* A schema with every supported type, nested struct, list and map. */
void pqg_all_types_schema(pqg_t *g);
/* A random schema of nested, optional fields of random types. */
void pqg_random_schema(pqg_t *g, int max_fields, int max_depth);
/* One random row (value of the implicit root group). */
pqg_val_t *pqg_row(pqg_t *g);
/* Shred rows[0..n) and feed them to the writer, then floe_pq_writer_rows. */
int pqg_write(pqg_t *g, floe_pq_writer_t *w, pqg_val_t **rows, size_t n, floe_err_t *err);
/* Render a row as one canonical JSON object. */
void pqg_json(const floe_pq_schema_t *s, const pqg_val_t *row, floe_buf_t *out);
/* Assemble the rows of row group rg of reader r into JSON lines appended
 * to out ('\n' after each).  Returns 0 or -1 with err. */
int pqg_read_json(floe_pq_reader_t *r, int rg, floe_buf_t *out, floe_err_t *err);

#endif
