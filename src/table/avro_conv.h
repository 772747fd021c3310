/* The avro converter's decoding (convert.h, table.value.converter=avro):
 * the Confluent wire format around an Avro datum, and, for keys and for
 * values that go through table.transforms (values without transforms go
 * to typed columns, avro_shred.h), the datum as the JSON text the JSON
 * shredder (floe_rows_json) takes, written in one pass
 * over the bytes with no intermediate values, so the table's schema is
 * inferred and evolved exactly as for JSON topics (a new optional field
 * adds a column; int and long are longs, float and double doubles).
 *
 * The mapping: record -> object (struct); union with null -> the value or
 * null (optional); other unions -> {"<branch type name>": value} (a struct
 * of branches); enum and uuid -> string; bytes and fixed -> base64 string;
 * map -> list of {"key", "value"} (its keys are data, not columns);
 * array -> array; decimal -> its exact decimal text;
 * date -> "YYYY-MM-DD"; time-millis/micros -> "HH:MM:SS.ffffff";
 * timestamp-millis/micros -> RFC 3339 UTC text (a timestamptz column,
 * in microseconds, through table.json.infer.timestamps); local-timestamp
 * -> the same text without a zone (a string).  A recursive schema is
 * refused. */
#ifndef FLOE_TABLE_AVRO_CONV_H
#define FLOE_TABLE_AVRO_CONV_H

#include <stdint.h>

#include "format/avro.h"
#include "util/buf.h"
#include "util/err.h"

/* The Confluent wire format: magic byte 0, then the schema id (4 bytes,
 * big-endian), then the datum at p + FLOE_CONFLUENT_HEADER.  0 and *id, or
 * -1 with err (FLOE_ECORRUPT) naming what is wrong. */
#define FLOE_CONFLUENT_HEADER 5
int floe_confluent_header(const uint8_t *p, size_t n, int32_t *id, floe_err_t *err);

/* A cursor over one datum's bytes, shared by the two decoders (this one
 * and avro_shred.c): p[0..n), read up to off; out is the JSON text this
 * one writes (unused by avro_shred).  The readers below advance off and
 * return 0, or -1 with err FLOE_ECORRUPT "avro: WHAT at byte OFF". */
typedef struct floe_avro_in {
    const uint8_t *p;
    size_t n, off;
    floe_buf_t *out;
    floe_err_t *err;
} floe_avro_in_t;
int floe_avro_in_corrupt(floe_avro_in_t *d, const char *what);
/* A zigzag varint (int and long). */
int floe_avro_in_long(floe_avro_in_t *d, int64_t *v);
/* A length-prefixed byte string (bytes, string), borrowed from p. */
int floe_avro_in_bytes(floe_avro_in_t *d, const uint8_t **p, size_t *len);
/* The item count of the next array or map block (0: the end), its byte
 * size skipped; a count larger than the bytes left is corrupt. */
int floe_avro_in_block(floe_avro_in_t *d, int64_t *count);
/* len bytes (fixed, float, double), borrowed from p. */
int floe_avro_in_fixed(floe_avro_in_t *d, size_t len, const uint8_t **p);

/* Whether the converter can take schema s: 0, or -1 with err (FLOE_EINVAL)
 * naming the reason (a record that contains itself).  s borrowed. */
int floe_avro_conv_check(const floe_avro_schema_t *s, floe_err_t *err);

/* Decode one datum written with s (checked by floe_avro_conv_check) from
 * p[0..n), which it must fill exactly, appending its JSON text to out
 * (caller-owned).  0, or -1 with err: FLOE_ECORRUPT for bytes that are not
 * such a datum (with the byte offset), FLOE_EINVAL for a value the mapping
 * cannot write (a decimal wider than 16 bytes), FLOE_ENOMEM.  out may hold
 * a partial text after a failure. */
int floe_avro_conv_json(const floe_avro_schema_t *s, const uint8_t *p, size_t n, floe_buf_t *out,
                        floe_err_t *err);

#endif
