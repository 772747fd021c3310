/* The consumer-group module of the Kafka server (h_group.c):
 * FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups.
 * Committed offsets live in DATA/log/__consumer_offsets-0 (offset_store.h)
 * when the server has a broker; without one (protocol tests) they are kept
 * in memory only. */
#ifndef FLOE_KAFKA_GROUPS_MODULE_H
#define FLOE_KAFKA_GROUPS_MODULE_H

#include "kafka/handler.h"
#include "util/conf.h"
#include "util/err.h"

extern const floe_kafka_module_t floe_groups_module;

/* The group coordinator's server config keys (their names, ranges,
 * defaults and docs: the configuration reference lists them).  Static;
 * *n gets the count. */
const floe_conf_key_t *floe_groups_config_keys(size_t *n);

/* Set one of those keys before the server starts (process-wide; the
 * module copies them at init).  Returns 0 when set, 1 when key is not one
 * of them (nothing changed), -1 when the value is invalid (err names the
 * key and says why).  key and value borrowed. */
int floe_groups_config_set(const char *key, const char *value, floe_err_t *err);

/* After the last floe_groups_config_set: the rules between keys (the
 * smallest session timeout is at most the largest).  0, or -1 with *err
 * naming both keys. */
int floe_groups_config_check(floe_err_t *err);

#endif
