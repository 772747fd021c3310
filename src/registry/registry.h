/* floe's schema registry: the Confluent Schema Registry REST API (subjects,
 * versions, global schema ids, compatibility levels, mode), so that
 * existing Avro serializers point at floe with no change.
 *
 * State lives in Kafka, as Confluent lays it out in its `_schemas` topic:
 * every change is one record keyed {"keytype":"SCHEMA","subject":...,
 * "version":...,"magic":1} (CONFIG, MODE, DELETE_SUBJECT likewise) whose
 * value is the new state (null: a tombstone, for permanent deletes).  The
 * registry does not know where the records go: its owner passes a persist
 * function that makes a record durable (floe serve appends to the
 * compacted topic `_schemas` and fsyncs), and replays the stored records
 * with floe_registry_apply before serving.  Ids are never reused: the next
 * id is above every id replayed.
 *
 * Schema types: AVRO (the default), PROTOBUF (.proto text or a base64
 * FileDescriptorProto; imports through references) and JSON (JSON Schema;
 * "$ref" to other subjects through references); each is one entry of a
 * table of operations (registry_int.h).
 *
 * Thread safety: every function may be called from any thread (one mutex;
 * the persist function runs under it, so records are written in the order
 * the state changes). */
#ifndef FLOE_REGISTRY_REGISTRY_H
#define FLOE_REGISTRY_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "format/avro.h"
#include "format/jschema.h"
#include "format/proto.h"
#include "http/http.h"
#include "util/err.h"

typedef struct floe_registry floe_registry_t;

/* Make one record durable before the change it describes is answered:
 * key[0..klen) and value[0..vlen) (value NULL: a tombstone) are borrowed
 * for the call.  0, or -1 with err (the request then fails with 500 and
 * the state does not change). */
typedef int (*floe_registry_persist_fn)(void *arg, const uint8_t *key, size_t klen,
                                        const uint8_t *value, size_t vlen, floe_err_t *err);

/* A registry with no subjects, compatibility BACKWARD, mode READWRITE.
 * persist (NULL: nothing is persisted) is called with arg (borrowed; must
 * outlive the registry).  Caller frees with floe_registry_free. */
int floe_registry_new(floe_registry_persist_fn persist, void *arg, floe_registry_t **out,
                      floe_err_t *err);
void floe_registry_free(floe_registry_t *r);

/* Apply one stored record (replay at start): key and value borrowed
 * (value NULL: tombstone).  Records that are not the registry's (unknown
 * key types, unparsable JSON) are skipped and return 1; 0 when applied;
 * -1 only when out of memory. */
int floe_registry_apply(floe_registry_t *r, const uint8_t *key, size_t klen, const uint8_t *value,
                        size_t vlen);

/* Route the REST API on h: /subjects, /schemas, /config, /compatibility,
 * /mode, and /associations (always 404, which the Confluent JavaScript
 * client expects from a registry without associations).  r is borrowed and
 * must outlive h. */
int floe_registry_http(floe_registry_t *r, floe_http_t *h, floe_err_t *err);

/* The HTTP handler behind every route (floe_http_fn with r as arg), for
 * tests that drive the API without a socket. */
int floe_registry_handle(const floe_http_req_t *rq, floe_http_resp_t *rs, void *r);

/* The Avro schema registered under global id `id`, parsed: 0 and *out (a
 * root the caller frees with floe_avro_schema_free), or -1 with err
 * (FLOE_ENOENT: no such id; FLOE_EINVAL: not an Avro schema).  For the
 * Avro converter, which caches by id. */
int floe_registry_avro_schema(floe_registry_t *r, int32_t id, floe_avro_schema_t **out,
                              floe_err_t *err);

/* The global id of subject's version `version` (0: the newest live one):
 * 0 with *id, or -1 with err (FLOE_ENOENT: no such subject or version). */
int floe_registry_subject_id(floe_registry_t *r, const char *subject, int32_t version, int32_t *id,
                             floe_err_t *err);

/* ---- Avro compatibility (compat.c) ---- */

/* Whether data written with `writer` can be read with `reader`, by the
 * Avro specification's schema resolution rules as the Confluent registry
 * applies them (every writer union branch must resolve; enum symbols the
 * reader lacks need a reader enum default; fields the writer lacks need a
 * reader default; int->long->float->double and string<->bytes promote).
 * Returns true when compatible; otherwise false, and one message per
 * problem is appended to msgs (caller-owned; each message ends with '\n')
 * when msgs is not NULL.  Schemas borrowed. */
bool floe_registry_avro_compatible(const floe_avro_schema_t *reader,
                                   const floe_avro_schema_t *writer, floe_buf_t *msgs);

/* ---- Protobuf (proto.c, proto_compat.c) ---- */

/* The Protobuf schema registered under global id `id`, resolved with its
 * references: 0 and *out (caller frees with floe_proto_schema_free), or
 * -1 with err (FLOE_ENOENT: no such id; FLOE_EINVAL: not Protobuf). */
int floe_registry_proto_schema(floe_registry_t *r, int32_t id, floe_proto_schema_t **out,
                               floe_err_t *err);

/* Whether data written with `writer` reads with `reader` by the Confluent
 * registry's Protobuf rules; one message per problem appended to msgs
 * (may be NULL).  Schemas borrowed. */
bool floe_registry_proto_compatible(const floe_proto_schema_t *reader,
                                    const floe_proto_schema_t *writer, floe_buf_t *msgs);

/* ---- JSON Schema (json.c, json_compat.c) ---- */

/* The JSON schema registered under global id `id`, with the schemas its
 * references name: 0 and *out (caller frees with floe_jschema_free), or
 * -1 with err (FLOE_ENOENT: no such id; FLOE_EINVAL: not a JSON schema). */
int floe_registry_json_schema(floe_registry_t *r, int32_t id, floe_jschema_t **out,
                              floe_err_t *err);

/* Whether every instance `writer` accepts is read by `reader`, by the
 * Confluent registry's JSON Schema rules (json_compat.c); one message per
 * problem appended to msgs (may be NULL).  Schemas borrowed. */
bool floe_registry_json_compatible(const floe_jschema_t *reader, const floe_jschema_t *writer,
                                   floe_buf_t *msgs);

#endif
