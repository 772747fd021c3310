/* Length-prefixed frame server over non-blocking TCP sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/tcp.h"
#include "util/buf.h"
#include "util/diag.h"

#define POOL_MAX 32
#define POOL_MIN_FRAME (256u << 10)
#define POOL_BYTES_MAX (32u << 20)

struct floe_conn {
    floe_tcp_srv_t *srv;
    int fd;
    uint64_t id;
    char peer[64];
    floe_buf_t in;  /* bytes read, not yet a complete frame */
    floe_buf_t out; /* bytes to write */
    size_t out_off; /* written prefix of out */
    bool paused, closing, dead, delivering;
    uint32_t events;
    void *data;
    floe_conn_t *prev, *next;
};

struct floe_tcp_srv {
    floe_loop_t *loop;
    int lfd;
    int port;
    floe_tcp_opts_t opts;
    floe_tcp_cbs_t cbs;
    void *arg;
    floe_conn_t *conns;
    int nconns;
    uint64_t next_id;
    /* Memory of large frames given back (floe_tcp_frame_free) for the next
     * large frames: their pages are already mapped, so receiving into them
     * costs no page faults (a fresh 1 MiB buffer costs 256).  Bounded, and
     * emptied when the last connection closes. */
    pthread_mutex_t pool_mu;
    uint8_t *pool[POOL_MAX];
    size_t pool_cap[POOL_MAX];
    int npool;
    size_t pool_bytes;
    uint64_t pool_reuses;
};

static void conn_io(int fd, uint32_t ev, void *arg);

/* ---- the pool of large frame buffers ---- */

static void pool_clear(floe_tcp_srv_t *s)
{
    pthread_mutex_lock(&s->pool_mu);
    for (int i = 0; i < s->npool; i++) free(s->pool[i]);
    s->npool = 0;
    s->pool_bytes = 0;
    pthread_mutex_unlock(&s->pool_mu);
}

/* A pooled buffer of at least `need` bytes (its capacity in *cap), or NULL. */
static uint8_t *pool_take(floe_tcp_srv_t *s, size_t need, size_t *cap)
{
    uint8_t *p = NULL;
    pthread_mutex_lock(&s->pool_mu);
    for (int i = 0; i < s->npool; i++) {
        if (s->pool_cap[i] < need) continue;
        p = s->pool[i];
        *cap = s->pool_cap[i];
        s->pool_bytes -= s->pool_cap[i];
        s->npool--;
        s->pool[i] = s->pool[s->npool];
        s->pool_cap[i] = s->pool_cap[s->npool];
        s->pool_reuses++;
        break;
    }
    pthread_mutex_unlock(&s->pool_mu);
    return p;
}

void floe_tcp_frame_free(floe_tcp_srv_t *s, uint8_t *mem)
{
    if (!mem) return;
    size_t cap = s ? malloc_usable_size(mem) : 0;
    if (cap >= POOL_MIN_FRAME) {
        pthread_mutex_lock(&s->pool_mu);
        bool kept = s->npool < POOL_MAX && s->pool_bytes + cap <= POOL_BYTES_MAX;
        if (kept) {
            s->pool[s->npool] = mem;
            s->pool_cap[s->npool++] = cap;
            s->pool_bytes += cap;
        }
        pthread_mutex_unlock(&s->pool_mu);
        if (kept) return;
    }
    free(mem);
}

/* Before reading the rest of a large frame into c->in: move what is there
 * into a pooled buffer that holds the whole frame, if one is free. */
static void in_from_pool(floe_conn_t *c, size_t frame_end)
{
    if (frame_end < POOL_MIN_FRAME || c->in.cap >= frame_end) return;
    size_t cap;
    uint8_t *p = pool_take(c->srv, frame_end, &cap);
    if (!p) return;
    if (c->in.len) memcpy(p, c->in.data, c->in.len);
    free(c->in.data);
    c->in.data = p;
    c->in.cap = cap;
}

static void conn_update(floe_conn_t *c)
{
    uint32_t ev = 0;
    if (!c->paused && !c->closing) ev |= EPOLLIN;
    /* a closing connection waits for EPOLLOUT to finish its output and go */
    if (c->out.len > c->out_off || c->closing) ev |= EPOLLOUT;
    if (ev != c->events) {
        c->events = ev;
        floe_loop_mod(c->srv->loop, c->fd, ev, conn_io, c);
    }
}

static void conn_destroy_later(void *arg);

/* Tear down: unregister, tell the owner, free on the next loop turn so no
 * caller up the stack touches freed memory. */
static void conn_kill(floe_conn_t *c)
{
    if (c->dead) return;
    c->dead = true;
    c->closing = true;
    floe_tcp_srv_t *s = c->srv;
    floe_loop_del(s->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    if (c->prev) c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    s->nconns--;
    if (s->cbs.on_close) s->cbs.on_close(c, s->arg);
    if (s->nconns == 0) pool_clear(s); /* idle: give the memory back */
    if (floe_loop_post(s->loop, conn_destroy_later, c)) conn_destroy_later(c);
}

static void conn_destroy_later(void *arg)
{
    floe_conn_t *c = arg;
    floe_buf_free(&c->in);
    floe_buf_free(&c->out);
    free(c);
}

static int flush_out(floe_conn_t *c)
{
    while (c->out.len > c->out_off) {
        ssize_t w = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            FLOE_DEBUG("net: %s: send: %s", c->peer, strerror(errno));
            return -1;
        }
        c->out_off += (size_t)w;
    }
    if (c->out_off == c->out.len) {
        c->out.len = c->out_off = 0;
        if (c->out.cap > (1u << 20)) floe_buf_free(&c->out); /* give big buffers back */
    } else if (c->out_off > (1u << 20) && c->out_off * 2 > c->out.len) {
        memmove(c->out.data, c->out.data + c->out_off, c->out.len - c->out_off);
        c->out.len -= c->out_off;
        c->out_off = 0;
    }
    return 0;
}

/* Hand every complete frame in c->in to the owner. */
static void deliver(floe_conn_t *c)
{
    floe_tcp_srv_t *s = c->srv;
    size_t pos = 0;
    if (c->delivering) return; /* re-entered from on_frame: the outer call goes on */
    c->delivering = true;
    while (!c->dead && !c->paused && !c->closing && c->in.len - pos >= 4) {
        uint32_t len = floe_rd_be32(c->in.data + pos);
        if ((int32_t)len < 0 || len > s->opts.max_frame) {
            FLOE_WARN("net: %s: frame of %u bytes exceeds the %zu-byte cap, closing", c->peer, len,
                      s->opts.max_frame);
            c->delivering = false;
            conn_kill(c);
            return;
        }
        if (c->in.len - pos - 4 < len) break;
        uint8_t *mem;
        const uint8_t *frame;
        if (pos == 0 && c->in.len == 4 + (size_t)len) {
            /* the buffer holds exactly this frame: hand it over */
            size_t l;
            mem = floe_buf_detach(&c->in, &l);
            frame = mem + 4;
        } else {
            mem = malloc(len ? len : 1);
            if (!mem) {
                FLOE_ERROR("net: %s: out of memory, closing", c->peer);
                c->delivering = false;
                conn_kill(c);
                return;
            }
            memcpy(mem, c->in.data + pos + 4, len);
            frame = mem;
        }
        pos += 4 + (size_t)len;
        s->cbs.on_frame(c, mem, frame, len, s->arg);
        if (!c->in.data) {
            pos = 0;
            break;
        }
    }
    c->delivering = false;
    if (c->dead || !c->in.data) return;
    if (pos) {
        memmove(c->in.data, c->in.data + pos, c->in.len - pos);
        c->in.len -= pos;
    }
}

static void conn_read(floe_conn_t *c)
{
    floe_tcp_srv_t *s = c->srv;
    for (int rounds = 0; rounds < 16 && !c->dead && !c->paused && !c->closing; rounds++) {
        size_t want = 64 * 1024;
        if (c->in.len >= 4) {
            /* read a large frame straight to its final size */
            uint32_t len = floe_rd_be32(c->in.data);
            /* grow toward a large frame in steps, so that a declared size
             * costs memory only as its bytes actually arrive */
            if ((int32_t)len >= 0 && len <= s->opts.max_frame) in_from_pool(c, 4 + (size_t)len);
            if ((int32_t)len >= 0 && len <= s->opts.max_frame &&
                4 + (size_t)len > c->in.len + want) {
                want = 4 + (size_t)len - c->in.len;
                size_t step = c->in.len < (1u << 20) ? (1u << 20) : c->in.len;
                if (want > step) want = step;
            }
        }
        if (floe_buf_reserve(&c->in, want)) {
            FLOE_ERROR("net: %s: out of memory, closing", c->peer);
            conn_kill(c);
            return;
        }
        size_t room = c->in.cap - c->in.len;
        if (c->in.len >= 4) {
            /* stop a large frame's reads at its end, so the buffer holds
             * exactly that frame and is handed over without a copy */
            uint32_t len = floe_rd_be32(c->in.data);
            size_t end = 4 + (size_t)len;
            if ((int32_t)len >= 0 && end > (64u << 10) && end > c->in.len && end - c->in.len < room)
                room = end - c->in.len;
        }
        ssize_t r = recv(c->fd, c->in.data + c->in.len, room, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            FLOE_INFO("net: %s: recv: %s", c->peer, strerror(errno));
            conn_kill(c);
            return;
        }
        if (r == 0) {
            FLOE_DEBUG("net: %s: closed by peer", c->peer);
            conn_kill(c);
            return;
        }
        c->in.len += (size_t)r;
        deliver(c);
        if ((size_t)r < room) break;
    }
}

static void conn_io(int fd, uint32_t ev, void *arg)
{
    (void)fd;
    floe_conn_t *c = arg;
    if (c->dead) return;
    if (ev & EPOLLOUT) {
        if (flush_out(c)) {
            conn_kill(c);
            return;
        }
        if (c->closing && c->out.len == c->out_off) {
            conn_kill(c);
            return;
        }
    }
    if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        if (!c->paused && !c->closing) conn_read(c);
        else if (ev & (EPOLLHUP | EPOLLERR)) {
            conn_kill(c);
            return;
        }
    }
    if (!c->dead) conn_update(c);
}

static void srv_accept(int fd, uint32_t ev, void *arg)
{
    (void)ev;
    floe_tcp_srv_t *s = arg;
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        int cfd = accept4(fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                FLOE_WARN("net: accept: %s", strerror(errno));
            return;
        }
        char host[INET6_ADDRSTRLEN] = "?", peer[64];
        int port = 0;
        if (sa.ss_family == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)&sa;
            inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
            port = ntohs(in->sin_port);
        } else if (sa.ss_family == AF_INET6) {
            struct sockaddr_in6 *in = (struct sockaddr_in6 *)&sa;
            inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof host);
            port = ntohs(in->sin6_port);
        }
        snprintf(peer, sizeof peer, "%s:%d", host, port);
        if (s->nconns >= s->opts.max_conns) {
            FLOE_WARN("net: refusing %s: %d connections (the cap)", peer, s->nconns);
            close(cfd);
            continue;
        }
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        floe_conn_t *c = calloc(1, sizeof *c);
        if (!c) {
            close(cfd);
            continue;
        }
        c->srv = s;
        c->fd = cfd;
        c->id = ++s->next_id;
        memcpy(c->peer, peer, sizeof peer);
        c->events = EPOLLIN;
        if (floe_loop_add(s->loop, cfd, EPOLLIN, conn_io, c, NULL)) {
            close(cfd);
            free(c);
            continue;
        }
        c->next = s->conns;
        if (s->conns) s->conns->prev = c;
        s->conns = c;
        s->nconns++;
        if (s->cbs.on_open && s->cbs.on_open(c, s->arg)) conn_kill(c);
    }
}

int floe_tcp_listen(floe_loop_t *loop, const char *host, int port, const floe_tcp_opts_t *opts,
                    const floe_tcp_cbs_t *cbs, void *arg, floe_tcp_srv_t **out, floe_err_t *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host && *host ? host : NULL, ps, &hints, &ai);
    if (rc)
        return floe_err_set(err, FLOE_EINVAL, "cannot resolve '%s': %s", host, gai_strerror(rc));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return floe_err_errno(err, errno, "socket");
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 512)) {
        int e = errno;
        freeaddrinfo(ai);
        close(fd);
        floe_err_errno(err, e, "bind/listen");
        floe_err_wrap(err, "%s:%d", host, port);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    floe_tcp_srv_t *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return floe_err_oom(err);
    }
    s->port = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&sa)->sin_port);
    s->loop = loop;
    s->lfd = fd;
    s->opts.max_frame = opts && opts->max_frame ? opts->max_frame : 100u << 20;
    s->opts.max_conns = opts && opts->max_conns ? opts->max_conns : 10000;
    s->cbs = *cbs;
    s->arg = arg;
    pthread_mutex_init(&s->pool_mu, NULL);
    if (floe_loop_add(loop, fd, EPOLLIN, srv_accept, s, err)) {
        close(fd);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int floe_tcp_port(const floe_tcp_srv_t *s)
{
    return s->port;
}

void floe_tcp_pool_release(floe_tcp_srv_t *s)
{
    pool_clear(s);
}

void floe_tcp_pool_stats(floe_tcp_srv_t *s, uint64_t *reuses, size_t *bytes)
{
    pthread_mutex_lock(&s->pool_mu);
    if (reuses) *reuses = s->pool_reuses;
    if (bytes) *bytes = s->pool_bytes;
    pthread_mutex_unlock(&s->pool_mu);
}
int floe_tcp_conn_count(const floe_tcp_srv_t *s)
{
    return s->nconns;
}

void floe_tcp_stop_accepting(floe_tcp_srv_t *s)
{
    if (s->lfd < 0) return;
    floe_loop_del(s->loop, s->lfd);
    close(s->lfd);
    s->lfd = -1;
}

bool floe_tcp_flushed(const floe_tcp_srv_t *s)
{
    for (floe_conn_t *c = s->conns; c; c = c->next)
        if (c->out.len > c->out_off) return false;
    return true;
}

void floe_tcp_free(floe_tcp_srv_t *s)
{
    if (!s) return;
    floe_tcp_stop_accepting(s);
    while (s->conns) {
        floe_conn_t *c = s->conns;
        conn_kill(c);
    }
    pool_clear(s);
    pthread_mutex_destroy(&s->pool_mu);
    free(s);
}

int floe_conn_send(floe_conn_t *c, const void *p, size_t n)
{
    if (c->dead) return -1;
    if (c->out.len == c->out_off && !c->closing) {
        /* nothing queued: write straight from the caller's bytes and keep
         * only what the socket did not take (saves a copy of large
         * responses) */
        while (n > 0) {
            ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
            if (w < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                FLOE_DEBUG("net: %s: send: %s", c->peer, strerror(errno));
                conn_kill(c);
                return -1;
            }
            p = (const uint8_t *)p + w;
            n -= (size_t)w;
        }
        if (n == 0) return 0;
    }
    if (floe_buf_append(&c->out, p, n)) {
        FLOE_ERROR("net: %s: out of memory queueing %zu bytes, closing", c->peer, n);
        conn_kill(c);
        return -1;
    }
    if (flush_out(c)) {
        conn_kill(c);
        return -1;
    }
    conn_update(c);
    return 0;
}

void floe_conn_close(floe_conn_t *c, bool now)
{
    if (c->dead) return;
    c->closing = true;
    if (now || c->out.len == c->out_off) {
        /* defer: the caller may be inside on_frame */
        shutdown(c->fd, SHUT_RD);
        c->out.len = c->out_off = 0;
        c->events = EPOLLOUT;
        floe_loop_mod(c->srv->loop, c->fd, EPOLLOUT, conn_io, c);
        return;
    }
    conn_update(c);
}

void floe_conn_pause(floe_conn_t *c, bool paused)
{
    if (c->dead || c->paused == paused) return;
    c->paused = paused;
    conn_update(c);
    if (!paused && c->in.len >= 4) deliver(c);
}

size_t floe_conn_out_pending(const floe_conn_t *c)
{
    return c->out.len - c->out_off;
}
const char *floe_conn_peer(const floe_conn_t *c)
{
    return c->peer;
}
void floe_conn_set_data(floe_conn_t *c, void *data)
{
    c->data = data;
}
void *floe_conn_data(const floe_conn_t *c)
{
    return c->data;
}
uint64_t floe_conn_id(const floe_conn_t *c)
{
    return c->id;
}
