/* The frame server over a real socket: large and small frames sent back to
 * back arrive whole and in order; memory of large frames given back with
 * floe_tcp_frame_free is used again for later large frames, every frame
 * received into reused memory carries its own bytes, and the pool empties
 * on request while the connection stays open. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/loop.h"
#include "net/tcp.h"
#include "test.h"
#include "util/buf.h"

#define NFRAMES 24
#define BIG (700u << 10)

typedef struct ctx {
    floe_loop_t *loop;
    floe_tcp_srv_t *srv;
    int port;
    int got, bad, reused, closed;
    size_t held_before_release, held_after_release;
    const uint8_t *seen[NFRAMES]; /* the memory each large frame came in */
} ctx_t;

static ctx_t C;

/* Frame i: its size (every third is small) and byte j of it. */
static size_t frame_len(int i)
{
    return i % 3 == 2 ? 100 + (size_t)i : BIG + (size_t)i * 1000;
}
static uint8_t frame_byte(int i, size_t j)
{
    return (uint8_t)(i * 31 + j * 7 + (j >> 9));
}

static void on_frame(floe_conn_t *c, uint8_t *mem, const uint8_t *frame, size_t len, void *arg)
{
    (void)c;
    (void)arg;
    int i = C.got++;
    if (i >= NFRAMES || len != frame_len(i)) {
        C.bad++;
    } else {
        for (size_t j = 0; j < len; j++)
            if (frame[j] != frame_byte(i, j)) {
                C.bad++;
                break;
            }
        if (len >= BIG) {
            for (int k = 0; k < i; k++)
                if (C.seen[k] == mem) C.reused++;
            C.seen[i] = mem;
        }
    }
    /* give it back at once, as a handler done with the bytes does */
    floe_tcp_frame_free(C.srv, mem);
    if (C.got == NFRAMES) {
        /* the connection is still open: a quiet server gives the pool back
         * on request (floe serve does on a quiet tick) */
        uint64_t r;
        floe_tcp_pool_stats(C.srv, &r, &C.held_before_release);
        floe_tcp_pool_release(C.srv);
        floe_tcp_pool_stats(C.srv, &r, &C.held_after_release);
    }
}

static void on_close(floe_conn_t *c, void *arg)
{
    (void)c;
    (void)arg;
    C.closed++;
    floe_loop_stop(C.loop);
}

static void *client(void *arg)
{
    (void)arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)C.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    floe_buf_t b = FLOE_BUF_INIT;
    for (int i = 0; i < NFRAMES; i++) {
        size_t n = frame_len(i);
        floe_buf_reset(&b);
        floe_buf_append_be32(&b, (uint32_t)n);
        floe_buf_reserve(&b, n);
        for (size_t j = 0; j < n; j++) b.data[b.len++] = frame_byte(i, j);
        for (size_t off = 0; off < b.len;) {
            ssize_t w = send(fd, b.data + off, b.len - off, 0);
            if (w <= 0) break;
            off += (size_t)w;
        }
    }
    floe_buf_free(&b);
    usleep(100 * 1000);
    close(fd);
    return NULL;
}

static void large_frames_reuse_memory(void)
{
    floe_err_t err;
    CHECK_EQ(floe_loop_new(&C.loop, &err), 0);
    static const floe_tcp_cbs_t cbs = {NULL, on_frame, on_close};
    CHECK_EQ(floe_tcp_listen(C.loop, "127.0.0.1", 0, NULL, &cbs, NULL, &C.srv, &err), 0);
    C.port = floe_tcp_port(C.srv);
    pthread_t th;
    pthread_create(&th, NULL, client, NULL);
    floe_loop_run(C.loop, &err);
    pthread_join(th, NULL);
    CHECK_EQ(C.got, NFRAMES);
    CHECK_EQ(C.bad, 0);
    CHECK_EQ(C.closed, 1);
    CHECK(C.reused > 0);
    uint64_t reuses = 0;
    size_t held = 1;
    floe_tcp_pool_stats(C.srv, &reuses, &held);
    CHECK(reuses > 0);
    CHECK(C.held_before_release >= BIG);
    CHECK_EQ(C.held_after_release, 0);
    CHECK_EQ(held, 0); /* the last connection closed: nothing kept */
    /* memory given back after the server is gone is simply freed */
    floe_tcp_free(C.srv);
    floe_tcp_frame_free(NULL, malloc(BIG));
    floe_loop_run_for(C.loop, 1, NULL);
    floe_loop_free(C.loop);
}

TEST_MAIN(RUN(large_frames_reuse_memory);)
