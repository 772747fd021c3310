/* The handler framework end to end over a real socket: deferred answers
 * leave in request order, ApiVersions lists exactly what is registered,
 * a client that goes away while a request is deferred triggers the
 * on-close callback and answering afterwards only frees the request. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kafka/handler.h"
#include "kafka/server.h"
#include "test.h"

typedef struct ctx {
    floe_kafka_srv_t *srv;
    int port;
    int answered, closed_cb;
    floe_kafka_req_t *held; /* deferred until the client disconnects */
    /* what the client thread waits for: the held request taken, its close seen */
    atomic_bool held_seen, closed_seen;
    /* client results */
    int32_t order[16];
    int norder;
    int16_t api_keys[16];
    int napi;
    bool client_done;
} ctx_t;

static ctx_t C;

static void answer(void *arg)
{
    floe_kafka_req_t *req = arg;
    floe_k_heartbeat_resp_t *rs = floe_k_heartbeat_resp_new(floe_kafka_req_arena(req));
    rs->error_code = 0;
    floe_kafka_respond(req, rs);
    C.answered++;
}

static void on_closed(floe_kafka_req_t *req, void *arg)
{
    (void)arg;
    C.closed_cb++;
    atomic_store(&C.closed_seen, true);
    CHECK(floe_kafka_req_closed(req));
    answer(req); /* answering a closed request frees it */
    C.held = NULL;
}

/* Heartbeat with generation g: answered after (10 - g) * 5 ms, so later
 * requests finish first; generation 99 is held until the client leaves. */
static void h_heartbeat(floe_kafka_req_t *req, void *ctx)
{
    (void)ctx;
    const floe_k_heartbeat_req_t *rq = floe_kafka_req_body(req);
    if (rq->generation_id == 99) {
        C.held = req;
        floe_kafka_req_on_close(req, on_closed, NULL);
        atomic_store(&C.held_seen, true);
        return;
    }
    if (rq->generation_id == 0) {
        answer(req);
        return;
    }
    floe_kafka_timer_add(C.srv, (10 - rq->generation_id) * 5, answer, req);
}

static int recv_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void send_req(int fd, int16_t key, int16_t ver, int32_t corr, const void *body, size_t blen)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_buf_append_be32(&b, 0);
    floe_kreq_hdr_t h = {key, ver, corr, floe_kstr("test"), 1};
    floe_kreq_hdr_encode(&h, &b);
    floe_buf_append(&b, body, blen);
    floe_wr_be32(b.data, (uint32_t)(b.len - 4));
    CHECK(send(fd, b.data, b.len, 0) == (ssize_t)b.len);
    floe_buf_free(&b);
}

static void stop_loop(void *arg)
{
    floe_loop_stop(arg);
}

/* Wait (60 s at most: a hang guard) until *flag holds. */
static bool wait_flag(atomic_bool *flag)
{
    for (int i = 0; i < 60000 && !atomic_load(flag); i++) usleep(1000);
    return atomic_load(flag);
}

static void *client(void *arg)
{
    floe_loop_t *loop = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)C.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    /* ApiVersions v0 */
    send_req(fd, 18, 0, 1, NULL, 0);
    uint8_t buf[4096];
    CHECK(recv_all(fd, buf, 4) == 0);
    uint32_t n = floe_rd_be32(buf);
    CHECK(n < sizeof buf && recv_all(fd, buf, n) == 0);
    int32_t cnt = (int32_t)floe_rd_be32(buf + 6);
    for (int32_t i = 0; i < cnt && i < 16; i++)
        C.api_keys[C.napi++] = (int16_t)floe_rd_be16(buf + 10 + 6 * i);
    /* ten pipelined heartbeats, generations 1..10, corr 100.. */
    for (int g = 1; g <= 10; g++) {
        uint8_t body[64];
        size_t bl = 0;
        body[bl++] = 0;
        body[bl++] = 1;
        body[bl++] = 'g'; /* group "g" */
        floe_wr_be32(body + bl, (uint32_t)g);
        bl += 4; /* generation */
        body[bl++] = 0;
        body[bl++] = 1;
        body[bl++] = 'm'; /* member "m" */
        send_req(fd, 12, 0, 100 + g, body, bl);
    }
    for (int g = 1; g <= 10; g++) {
        if (recv_all(fd, buf, 4)) break;
        n = floe_rd_be32(buf);
        if (n > sizeof buf || recv_all(fd, buf, n)) break;
        C.order[C.norder++] = (int32_t)floe_rd_be32(buf);
    }
    /* one held forever, then hang up */
    uint8_t body[] = {0, 1, 'g', 0, 0, 0, 99, 0, 1, 'm'};
    send_req(fd, 12, 0, 500, body, sizeof body);
    /* hang up once the server holds it, stop the loop once it saw the
     * hang-up (a loaded machine may take any time for either) */
    CHECK(wait_flag(&C.held_seen));
    close(fd);
    CHECK(wait_flag(&C.closed_seen));
    C.client_done = true;
    floe_loop_post(loop, stop_loop, loop);
    return NULL;
}

static void deferred_in_order(void)
{
    floe_loop_t *loop;
    floe_err_t err;
    CHECK_EQ(floe_loop_new(&loop, &err), 0);
    floe_kafka_srv_config_t cfg = {.host = "127.0.0.1", .port = 0};
    CHECK_EQ(floe_kafka_srv_new(loop, &cfg, NULL, &C.srv, &err), 0);
    CHECK_EQ(floe_kafka_register(C.srv, FLOE_KAPI_HEARTBEAT, 0, 3, h_heartbeat, NULL, &err), 0);
    CHECK_EQ(floe_kafka_register(C.srv, 999, 0, 3, h_heartbeat, NULL, &err), -1);
    C.port = floe_kafka_srv_port(C.srv);
    pthread_t th;
    pthread_create(&th, NULL, client, loop);
    floe_loop_run(loop, &err);
    pthread_join(th, NULL);
    CHECK(C.client_done);
    CHECK_EQ(C.napi, 2);
    CHECK((C.api_keys[0] == 12 && C.api_keys[1] == 18) ||
          (C.api_keys[0] == 18 && C.api_keys[1] == 12));
    CHECK_EQ(C.norder, 10);
    for (int i = 0; i < C.norder; i++) CHECK_EQ(C.order[i], 101 + i);
    CHECK_EQ(C.closed_cb, 1);
    CHECK(C.held == NULL);
    CHECK_EQ(C.answered, 11);
    floe_kafka_srv_shutdown(C.srv, 100);
    floe_kafka_srv_free(C.srv);
    floe_loop_free(loop);
}

TEST_MAIN(RUN(deferred_in_order);)
