/* The consumer-group module of the Kafka server (h_group.c):
 * FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups.
 * Committed offsets live in DATA/log/__consumer_offsets-0 (offset_store.h)
 * when the server has a broker; without one (protocol tests) they are kept
 * in memory only. */
#ifndef FLOE_KAFKA_GROUPS_MODULE_H
#define FLOE_KAFKA_GROUPS_MODULE_H

#include "kafka/handler.h"
#include "util/err.h"

extern const floe_kafka_module_t floe_groups_module;

/* Set one server config of the group coordinator before the server starts
 * (process-wide; the module copies it at init): group.initial.rebalance.delay.ms,
 * group.min.session.timeout.ms, group.max.session.timeout.ms, group.max.size,
 * offset.metadata.max.bytes, offsets.retention.minutes (10080; -1 keeps
 * offsets forever), offsets.retention.check.interval.ms (600000).  Returns 0 when set, 1 when key is not one of
 * these (nothing changed), -1 when the value is invalid (err says why).
 * key and value borrowed. */
int floe_groups_config_set(const char *key, const char *value, floe_err_t *err);

#endif
