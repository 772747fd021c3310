/* The modules `floe serve` plugs into the Kafka server, in init order.
 * A module adds one line here (see kafka/handler.h for the contract). */
#include <stddef.h>

#include "kafka/server.h"

extern const floe_kafka_module_t floe_broker_module; /* broker_module.c */
extern const floe_kafka_module_t floe_groups_module; /* h_group.c */

const floe_kafka_module_t *const floe_kafka_modules[] = {
    &floe_broker_module,
    &floe_groups_module,
    NULL,
};
