/* A TCP server for length-prefixed frames (4-byte big-endian size, then the
 * payload), on a floe_loop_t.  Knows nothing of what frames mean.
 *
 * Non-blocking sockets; a cap on the frame size (a larger declared size
 * closes the connection) and on the number of connections (extra ones are
 * accepted and closed at once). */
#ifndef FLOE_NET_TCP_H
#define FLOE_NET_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/loop.h"
#include "util/err.h"

typedef struct floe_tcp_srv floe_tcp_srv_t;
typedef struct floe_conn floe_conn_t;

typedef struct floe_tcp_opts {
    size_t max_frame; /* default 100 MiB */
    int max_conns;    /* default 10000 */
} floe_tcp_opts_t;

typedef struct floe_tcp_cbs {
    /* A connection opened; return -1 to refuse it. */
    int (*on_open)(floe_conn_t *c, void *arg);
    /* One complete frame: frame[0..len) lives in mem, which the callee now
     * owns and releases with floe_tcp_frame_free (or free()). */
    void (*on_frame)(floe_conn_t *c, uint8_t *mem, const uint8_t *frame, size_t len, void *arg);
    /* The connection is closing (peer closed, error, floe_conn_close);
     * c stays valid until this returns. */
    void (*on_close)(floe_conn_t *c, void *arg);
} floe_tcp_cbs_t;

/* Listen on host:port (port 0 picks a free one).  cbs and arg are borrowed
 * for the server's lifetime.  Caller frees with floe_tcp_free. */
int floe_tcp_listen(floe_loop_t *loop, const char *host, int port, const floe_tcp_opts_t *opts,
                    const floe_tcp_cbs_t *cbs, void *arg, floe_tcp_srv_t **out, floe_err_t *err);
/* The bound port (useful with port 0). */
int floe_tcp_port(const floe_tcp_srv_t *s);
/* Stop accepting new connections (existing ones continue). */
void floe_tcp_stop_accepting(floe_tcp_srv_t *s);
int floe_tcp_conn_count(const floe_tcp_srv_t *s);
/* Close every connection (on_close runs for each) and free the server. */
void floe_tcp_free(floe_tcp_srv_t *s);
/* True when every connection's output buffer is empty. */
bool floe_tcp_flushed(const floe_tcp_srv_t *s);

/* Release the memory of a frame (the `mem` given to on_frame): large
 * buffers are kept, within a bound, to receive later large frames without
 * fresh pages; anything else is freed.  Any thread; s may be NULL (then it
 * is free()).  Takes ownership of mem. */
void floe_tcp_frame_free(floe_tcp_srv_t *s, uint8_t *mem);

/* Free the buffers the pool holds now (a server that has gone quiet gives
 * the memory back; the next large frames fill the pool again).  Any thread. */
void floe_tcp_pool_release(floe_tcp_srv_t *s);

/* Frames received into memory given back earlier, and the bytes held for
 * reuse now (tests, metrics). */
void floe_tcp_pool_stats(floe_tcp_srv_t *s, uint64_t *reuses, size_t *bytes);

/* Queue bytes for the peer (copied).  Returns -1 if the connection is
 * closing or out of memory (then it is closed). */
int floe_conn_send(floe_conn_t *c, const void *p, size_t n);
/* Close once the output queued so far is written (or at once if `now`).
 * on_close runs from the loop, never inside this call. */
void floe_conn_close(floe_conn_t *c, bool now);
/* Stop/resume reading frames (back-pressure). */
void floe_conn_pause(floe_conn_t *c, bool paused);
size_t floe_conn_out_pending(const floe_conn_t *c);
/* "host:port" of the peer.  Borrowed for the connection's lifetime. */
const char *floe_conn_peer(const floe_conn_t *c);
void floe_conn_set_data(floe_conn_t *c, void *data);
void *floe_conn_data(const floe_conn_t *c);
uint64_t floe_conn_id(const floe_conn_t *c);

#endif
