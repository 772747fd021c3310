/* The protobuf converter's decoding (convert.h,
 * table.value.converter=protobuf): the Confluent wire format's message
 * indexes, and a message as the JSON text the JSON shredder takes, written
 * in one pass over the bytes with no intermediate values (as the avro
 * converter does), so columns are inferred and evolved as for JSON: a new
 * field of a new schema version adds a column.
 *
 * The mapping: message -> object with its fields by their .proto names,
 * in declaration order; unknown field numbers are skipped; a field given
 * twice takes the last (messages too: no merge).  Absent fields: proto3
 * scalars and enums without presence take their default (0, "", false,
 * the enum's zero value), as proto3 readers see them; message fields,
 * oneof members, proto3 `optional` and proto2 fields without a default
 * are null; proto2 defaults are written.  int32/int64/uint32/sint*,
 * fixed*, sfixed* -> integers (longs; uint64 and fixed64 above 2^63-1 wrap
 * to negative, as in Java); float and double -> doubles (a float widened
 * exactly; NaN and infinities null); bool; string; bytes -> base64
 * string; enum -> its value's name (an unknown number as its decimal
 * text); repeated -> array (packed or not); map -> array of {"key",
 * "value"}; google.protobuf.Timestamp -> RFC 3339 UTC text (a timestamptz
 * column, through table.json.infer.timestamps); the wrapper types
 * (Int64Value ...) -> their value or null; Struct, Value and ListValue ->
 * their JSON text as a string; any other message, Duration included, an
 * object of its fields. */
#ifndef FLOE_TABLE_PROTO_CONV_H
#define FLOE_TABLE_PROTO_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "format/proto.h"
#include "util/buf.h"
#include "util/err.h"

/* Message indexes nest at most this deep. */
#define FLOE_PROTO_MAX_INDEXES 32

/* The message indexes at p[0..n) (after the 5-byte header): zigzag
 * varints, a count then that many indexes; a count of 0 means [0] (the
 * first message).  A first varint that is odd (a negative count, never
 * valid) is read as a count written plain, and the indexes after it as
 * plain varints: python3-confluent-kafka 1.7 writes them so.  That
 * reading is unambiguous for odd counts only (a top-level message at any
 * index: count 1); an even plain count reads as a valid zigzag one, so
 * such serializers' messages nested in others cannot be told apart.  0
 * with idx[0..*nidx) and *used bytes, or -1 with err (FLOE_ECORRUPT). */
int floe_proto_conv_indexes(const uint8_t *p, size_t n, int32_t *idx, size_t *nidx, size_t *used,
                            floe_err_t *err);

/* Decode message m (resolved, borrowed) from p[0..n), which it must fill
 * exactly, appending its JSON object to out (caller-owned).  scratch (may
 * be NULL; caller-owned, freed with floe_buf_free) keeps the decoder's
 * working memory from one call to the next.  0, or -1
 * with err: FLOE_ECORRUPT for bytes that are not such a message (with the
 * byte offset and field), FLOE_ENOMEM.  out may hold a partial text after
 * a failure. */
int floe_proto_conv_json(const floe_proto_msg_t *m, const uint8_t *p, size_t n, floe_buf_t *out,
                         floe_buf_t *scratch, floe_err_t *err);

/* The wire type a value of field type t is written with (0, 1, 2 or 5). */
int floe_proto_conv_wire_type(int t);

/* What the mapping above makes of message m: the well-known types it
 * treats apart (matched by full name), or NONE for an object of fields. */
typedef enum floe_proto_wkt {
    FLOE_PWKT_NONE = 0,
    FLOE_PWKT_TIMESTAMP, /* google.protobuf.Timestamp */
    FLOE_PWKT_WRAPPER,   /* Int64Value ... BytesValue: their field 1 */
    FLOE_PWKT_JSON,      /* Struct, Value, ListValue: JSON text */
} floe_proto_wkt_t;
floe_proto_wkt_t floe_proto_conv_wkt(const floe_proto_msg_t *m);

/* A google.protobuf.Timestamp's bytes p[0..n): 1 with *us (microseconds
 * since the epoch), 0 for one outside years 0001..9999 or with bad nanos
 * (null), -1 with err (FLOE_ECORRUPT). */
int floe_proto_conv_timestamp(const uint8_t *p, size_t n, int64_t *us, floe_err_t *err);

/* A Struct, Value or ListValue m (FLOE_PWKT_JSON) from p[0..n) as its JSON
 * text, appended to out (caller-owned).  0, or -1 with err. */
int floe_proto_conv_struct_text(const floe_proto_msg_t *m, const uint8_t *p, size_t n,
                                floe_buf_t *out, floe_err_t *err);

#endif
