/* The modules `floe serve` plugs into the Kafka server, in init order.
 * A module adds one line here (see kafka/handler.h for the contract). */
#include <stddef.h>

#include "kafka/server.h"

const floe_kafka_module_t *const floe_kafka_modules[] = {
    NULL,
};
