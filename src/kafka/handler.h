/* The Kafka request handler framework: how a module answers an API.
 *
 * The server (kafka/server.h) reads frames, decodes each request with the
 * declared codec (kafka/proto_gen.h) and calls the handler registered for
 * its api_key.  Everything below runs on the server's single event-loop
 * thread unless a function says otherwise.
 *
 * ## Registering a module
 *
 *   static void h_heartbeat(floe_kafka_req_t *req, void *ctx)
 *   {
 *       my_state_t *st = ctx;
 *       const floe_k_heartbeat_req_t *rq = floe_kafka_req_body(req);
 *       floe_k_heartbeat_resp_t *rs =
 *           floe_k_heartbeat_resp_new(floe_kafka_req_arena(req));
 *       if (!rs) { floe_kafka_fail(req, "out of memory"); return; }
 *       rs->error_code = ...;
 *       floe_kafka_respond(req, rs);
 *   }
 *
 *   static int my_init(floe_kafka_srv_t *srv, void **state, floe_err_t *err)
 *   {
 *       my_state_t *st = calloc(1, sizeof *st);      // module's own state
 *       ...
 *       if (floe_kafka_register(srv, FLOE_KAPI_HEARTBEAT, 0, 4, h_heartbeat,
 *                               st, err)) return -1;
 *       *state = st;
 *       return 0;
 *   }
 *   static void my_stop(void *state) { ...answer every deferred request... }
 *   static void my_free(void *state) { free(state); }
 *   const floe_kafka_module_t floe_groups_module = {
 *       "groups", my_init, my_stop, my_free };
 *
 * then add `&floe_groups_module` to the list in src/kafka/modules.c.  Init
 * runs at startup after the broker (topics, logs) is open; stop runs on
 * SIGTERM after the listener closed and before connections are torn down;
 * free runs last.  ApiVersions advertises exactly the registered APIs with
 * the registered version range (clamped to messages.def).
 *
 * ## Answering
 * A handler must eventually call exactly one of floe_kafka_respond,
 * floe_kafka_respond_none or floe_kafka_fail for every request, either
 * before returning or later (a deferred response: long-poll Fetch, JoinGroup
 * waiting for the rebalance, acks=all waiting for fsync), always from the
 * loop thread: from a timer (floe_kafka_timer_add) or from a callback posted
 * with floe_kafka_post.  Responses go out in request order per connection
 * even when answered out of order.  The request (its decoded body, arena and
 * the frame it borrows from) stays valid until that call.  If the client
 * disconnects first, the request stays valid; floe_kafka_req_closed() turns
 * true, the optional on-close callback runs, and answering merely frees it.
 */
#ifndef FLOE_KAFKA_HANDLER_H
#define FLOE_KAFKA_HANDLER_H

#include <stdbool.h>
#include <stdint.h>

#include "kafka/proto.h"
#include "kafka/proto_gen.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct floe_kafka_srv floe_kafka_srv_t;
typedef struct floe_kafka_req floe_kafka_req_t;
typedef struct floe_broker floe_broker_t;

/* A handler.  req is valid until answered (see above); ctx is the pointer
 * given to floe_kafka_register. */
typedef void (*floe_kafka_handler_fn)(floe_kafka_req_t *req, void *ctx);

/* Register fn for api_key over versions [min_ver, max_ver] (clamped to the
 * declaration).  A later registration for the same key replaces the earlier
 * one.  ctx is borrowed: it must outlive the server.  Returns -1 for an API
 * not declared in messages.def or an empty range. */
int floe_kafka_register(floe_kafka_srv_t *srv, int16_t api_key, int16_t min_ver, int16_t max_ver,
                        floe_kafka_handler_fn fn, void *ctx, floe_err_t *err);

/* The registered range of api_key; returns false when it is not registered. */
bool floe_kafka_registered(const floe_kafka_srv_t *srv, int16_t api_key, int16_t *min_ver,
                           int16_t *max_ver);

/* A module plugged into the server; see the top of this file. */
typedef struct floe_kafka_module {
    const char *name;
    int (*init)(floe_kafka_srv_t *srv, void **state, floe_err_t *err);
    void (*stop)(void *state); /* may be NULL */
    void (*free)(void *state); /* may be NULL */
} floe_kafka_module_t;

/* ---- the request (borrowed by the handler until answered) ---- */

int16_t floe_kafka_req_api_key(const floe_kafka_req_t *req);
int16_t floe_kafka_req_version(const floe_kafka_req_t *req);
int32_t floe_kafka_req_correlation_id(const floe_kafka_req_t *req);
/* Decoded body: a floe_k_<api>_req_t.  Borrowed, lives as long as req. */
void *floe_kafka_req_body(const floe_kafka_req_t *req);
/* Client id from the header ("" when null).  Borrowed, lives as long as req. */
const char *floe_kafka_req_client_id(const floe_kafka_req_t *req);
/* Peer address "host:port".  Borrowed, lives as long as req. */
const char *floe_kafka_req_peer(const floe_kafka_req_t *req);
/* The per-request arena: build the response here.  Freed with req. */
floe_arena_t *floe_kafka_req_arena(floe_kafka_req_t *req);
floe_kafka_srv_t *floe_kafka_req_srv(const floe_kafka_req_t *req);
/* True once the client's connection is gone. */
bool floe_kafka_req_closed(const floe_kafka_req_t *req);
/* Monotonic ms at which the request was received. */
int64_t floe_kafka_req_received_ms(const floe_kafka_req_t *req);
/* The handler no longer needs the body's bytes/records fields (they point
 * into the request's frame): give the frame's memory back now, not when req
 * is answered.  Strings, arrays and the arena stay valid.  Loop thread. */
void floe_kafka_req_release_frame(floe_kafka_req_t *req);
/* Called (at most once) when the connection closes while req is deferred;
 * the callback may answer req. */
void floe_kafka_req_on_close(floe_kafka_req_t *req, void (*fn)(floe_kafka_req_t *req, void *arg),
                             void *arg);

/* Send resp (a floe_k_<api>_resp_t of the request's API, typically built in
 * the request's arena) at the request's version, then free req.  resp is
 * only read during the call. */
void floe_kafka_respond(floe_kafka_req_t *req, const void *resp);
/* Answer with nothing (Produce with acks=0); frees req. */
void floe_kafka_respond_none(floe_kafka_req_t *req);
/* Close the client's connection (after responses already queued before this
 * request), logging why; frees req. */
void floe_kafka_fail(floe_kafka_req_t *req, const char *why);

/* ---- timers and cross-thread posting ---- */

typedef struct floe_kafka_timer floe_kafka_timer_t;
/* Run fn(arg) once on the loop thread after delay_ms.  The handle is valid
 * until fn runs or the timer is cancelled.  Returns NULL on allocation
 * failure. */
floe_kafka_timer_t *floe_kafka_timer_add(floe_kafka_srv_t *srv, int64_t delay_ms,
                                         void (*fn)(void *arg), void *arg);
void floe_kafka_timer_cancel(floe_kafka_srv_t *srv, floe_kafka_timer_t *t);
/* Run fn(arg) on the loop thread soon.  Safe from any thread.  Returns -1
 * on allocation failure. */
int floe_kafka_post(floe_kafka_srv_t *srv, void (*fn)(void *arg), void *arg);

/* ---- what a handler may need to know about the server ---- */

/* The broker (topic registry and logs; see kafka/broker.h). Borrowed. */
floe_broker_t *floe_kafka_srv_broker(floe_kafka_srv_t *srv);
/* This node's id and the address clients should connect to. Borrowed. */
int32_t floe_kafka_srv_node_id(const floe_kafka_srv_t *srv);
const char *floe_kafka_srv_host(const floe_kafka_srv_t *srv);
int32_t floe_kafka_srv_port(const floe_kafka_srv_t *srv);
const char *floe_kafka_srv_cluster_id(const floe_kafka_srv_t *srv);

/* Kafka error codes floe uses. */
enum floe_kerr {
    FLOE_KERR_NONE = 0,
    FLOE_KERR_UNKNOWN_SERVER_ERROR = -1,
    FLOE_KERR_OFFSET_OUT_OF_RANGE = 1,
    FLOE_KERR_CORRUPT_MESSAGE = 2,
    FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
    FLOE_KERR_INVALID_FETCH_SIZE = 4,
    FLOE_KERR_LEADER_NOT_AVAILABLE = 5,
    FLOE_KERR_NOT_LEADER_OR_FOLLOWER = 6,
    FLOE_KERR_REQUEST_TIMED_OUT = 7,
    FLOE_KERR_MESSAGE_TOO_LARGE = 10,
    FLOE_KERR_COORDINATOR_LOAD_IN_PROGRESS = 14,
    FLOE_KERR_COORDINATOR_NOT_AVAILABLE = 15,
    FLOE_KERR_NOT_COORDINATOR = 16,
    FLOE_KERR_INVALID_TOPIC_EXCEPTION = 17,
    FLOE_KERR_RECORD_LIST_TOO_LARGE = 18,
    FLOE_KERR_INVALID_REQUIRED_ACKS = 21,
    FLOE_KERR_ILLEGAL_GENERATION = 22,
    FLOE_KERR_INCONSISTENT_GROUP_PROTOCOL = 23,
    FLOE_KERR_INVALID_GROUP_ID = 24,
    FLOE_KERR_UNKNOWN_MEMBER_ID = 25,
    FLOE_KERR_INVALID_SESSION_TIMEOUT = 26,
    FLOE_KERR_REBALANCE_IN_PROGRESS = 27,
    FLOE_KERR_INVALID_COMMIT_OFFSET_SIZE = 28,
    FLOE_KERR_TOPIC_AUTHORIZATION_FAILED = 29,
    FLOE_KERR_GROUP_AUTHORIZATION_FAILED = 30,
    FLOE_KERR_CLUSTER_AUTHORIZATION_FAILED = 31,
    FLOE_KERR_INVALID_TIMESTAMP = 32,
    FLOE_KERR_UNSUPPORTED_SASL_MECHANISM = 33,
    FLOE_KERR_UNSUPPORTED_VERSION = 35,
    FLOE_KERR_TOPIC_ALREADY_EXISTS = 36,
    FLOE_KERR_INVALID_PARTITIONS = 37,
    FLOE_KERR_INVALID_REPLICATION_FACTOR = 38,
    FLOE_KERR_INVALID_REPLICA_ASSIGNMENT = 39,
    FLOE_KERR_INVALID_CONFIG = 40,
    FLOE_KERR_INVALID_REQUEST = 42,
    FLOE_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT = 43,
    FLOE_KERR_POLICY_VIOLATION = 44,
    FLOE_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
    FLOE_KERR_DUPLICATE_SEQUENCE_NUMBER = 46,
    FLOE_KERR_INVALID_PRODUCER_EPOCH = 47,
    FLOE_KERR_INVALID_TXN_STATE = 48,
    FLOE_KERR_INVALID_PRODUCER_ID_MAPPING = 49,
    FLOE_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53,
    FLOE_KERR_NON_EMPTY_GROUP = 68,
    FLOE_KERR_GROUP_ID_NOT_FOUND = 69,
    FLOE_KERR_UNKNOWN_LEADER_EPOCH = 75,
    FLOE_KERR_UNSUPPORTED_COMPRESSION_TYPE = 76,
    FLOE_KERR_MEMBER_ID_REQUIRED = 79,
    FLOE_KERR_GROUP_MAX_SIZE_REACHED = 81,
    FLOE_KERR_FENCED_INSTANCE_ID = 82,
    FLOE_KERR_UNKNOWN_PRODUCER_ID = 59,
    FLOE_KERR_INVALID_RECORD = 87,
    FLOE_KERR_UNKNOWN_TOPIC_ID = 100,
};

#endif
