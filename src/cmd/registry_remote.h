/* An external schema registry speaking the Confluent API (Confluent,
 * Karapace, Apicurio in compatibility mode, another floe): the avro,
 * protobuf and json_schema converters' schema source when the server
 * config (or floe sink's YAML) sets `schema.registry.url`.  Schemas are
 * fetched by id with GET {url}/schemas/ids/{id} (HTTP basic auth from
 * `schema.registry.basic.auth.user.info`, "user:password"), with the
 * schemas their `references` name, and theirs, each fetched with
 * GET {url}/subjects/{subject}/versions/{version}: Avro named types,
 * Protobuf imports, JSON Schema documents a "$ref" names.  Protobuf
 * schemas are asked for with ?format=serialized and read as a base64
 * FileDescriptorProto or as .proto text, whichever the registry answers
 * (floe_proto_load).  Avro and JSON texts are kept per id for the
 * process's life (a registry never changes the schema of an id); Protobuf
 * schemas per id by each converter. */
#ifndef FLOE_CMD_REGISTRY_REMOTE_H
#define FLOE_CMD_REGISTRY_REMOTE_H

#include "table/convert.h"
#include "util/err.h"

typedef struct registry_remote registry_remote_t;

/* url: http(s)://host:port[/prefix] (a trailing '/' is dropped); user_info
 * NULL or "" for none.  Both copied.  Nothing is fetched yet.  Caller frees
 * with registry_remote_free, after every converter using it is gone. */
int registry_remote_new(const char *url, const char *user_info, registry_remote_t **out,
                        floe_err_t *err);
/* The registry as the converters' schema source (thread-safe). */
floe_conv_schemas_t registry_remote_schemas(registry_remote_t *r);
void registry_remote_free(registry_remote_t *r);

#endif
