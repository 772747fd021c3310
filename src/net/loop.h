/* A single-threaded epoll event loop with timers and a thread-safe post
 * queue.  Everything registered runs on the thread that calls
 * floe_loop_run; only floe_loop_post and floe_loop_stop may be called from
 * other threads (floe_loop_stop also from a signal handler). */
#ifndef FLOE_NET_LOOP_H
#define FLOE_NET_LOOP_H

#include <stdint.h>

#include "util/err.h"

typedef struct floe_loop floe_loop_t;
typedef struct floe_timer floe_timer_t;

/* events: EPOLLIN/EPOLLOUT/EPOLLERR/EPOLLHUP bits as delivered by epoll. */
typedef void (*floe_loop_fd_fn)(int fd, uint32_t events, void *arg);

/* Caller frees with floe_loop_free. */
int floe_loop_new(floe_loop_t **out, floe_err_t *err);
/* Frees pending timers and posts without running them. */
void floe_loop_free(floe_loop_t *l);

/* Watch fd for events (EPOLLIN / EPOLLOUT); fn and arg are borrowed until
 * floe_loop_del.  The fd stays the caller's. */
int floe_loop_add(floe_loop_t *l, int fd, uint32_t events, floe_loop_fd_fn fn, void *arg,
                  floe_err_t *err);
int floe_loop_mod(floe_loop_t *l, int fd, uint32_t events, floe_loop_fd_fn fn, void *arg);
void floe_loop_del(floe_loop_t *l, int fd);

/* Run fn(arg) once after delay_ms.  The handle is owned by the loop and
 * valid until fn starts or floe_timer_cancel. NULL on allocation failure. */
floe_timer_t *floe_loop_timer(floe_loop_t *l, int64_t delay_ms, void (*fn)(void *arg), void *arg);
void floe_timer_cancel(floe_loop_t *l, floe_timer_t *t);

/* Run fn(arg) on the loop thread soon.  Any thread.  -1 on allocation
 * failure. */
int floe_loop_post(floe_loop_t *l, void (*fn)(void *arg), void *arg);

/* Run until floe_loop_stop.  Returns 0, or -1 if epoll fails. */
int floe_loop_run(floe_loop_t *l, floe_err_t *err);
/* Make floe_loop_run return after the current iteration.  Async-signal-safe. */
void floe_loop_stop(floe_loop_t *l);
/* Run the loop for at most max_ms more (used for a bounded drain). */
int floe_loop_run_for(floe_loop_t *l, int64_t max_ms, floe_err_t *err);

#endif
