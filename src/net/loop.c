/* epoll loop: fds, a min-heap of timers, an eventfd for posts and stop. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "net/loop.h"
#include "util/clock.h"

typedef struct watch {
    int fd;
    floe_loop_fd_fn fn;
    void *arg;
    struct watch *next;
} watch_t;

struct floe_timer {
    int64_t due_ms;
    uint64_t seq;
    size_t idx; /* position in the heap */
    void (*fn)(void *);
    void *arg;
};

typedef struct post {
    void (*fn)(void *);
    void *arg;
    struct post *next;
} post_t;

#define NBUCKETS 256

struct floe_loop {
    int ep, evfd;
    atomic_int stop;
    watch_t *watches[NBUCKETS];
    floe_timer_t **heap;
    size_t nheap, capheap;
    uint64_t seq;
    pthread_mutex_t mu;
    post_t *posts, *posts_tail;
};

int floe_loop_new(floe_loop_t **out, floe_err_t *err)
{
    floe_loop_t *l = calloc(1, sizeof *l);
    if (!l) return floe_err_oom(err);
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->ep < 0 || l->evfd < 0) {
        int e = errno;
        if (l->ep >= 0) close(l->ep);
        if (l->evfd >= 0) close(l->evfd);
        free(l);
        return floe_err_errno(err, e, "epoll/eventfd");
    }
    pthread_mutex_init(&l->mu, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->evfd, &ev)) {
        int e = errno;
        floe_loop_free(l);
        return floe_err_errno(err, e, "epoll_ctl");
    }
    *out = l;
    return 0;
}

void floe_loop_free(floe_loop_t *l)
{
    if (!l) return;
    for (int i = 0; i < NBUCKETS; i++) {
        watch_t *w = l->watches[i];
        while (w) {
            watch_t *n = w->next;
            free(w);
            w = n;
        }
    }
    for (size_t i = 0; i < l->nheap; i++) free(l->heap[i]);
    free(l->heap);
    post_t *p = l->posts;
    while (p) {
        post_t *n = p->next;
        free(p);
        p = n;
    }
    pthread_mutex_destroy(&l->mu);
    close(l->ep);
    close(l->evfd);
    free(l);
}

static watch_t **find_watch(floe_loop_t *l, int fd)
{
    watch_t **pp = &l->watches[(unsigned)fd % NBUCKETS];
    while (*pp && (*pp)->fd != fd) pp = &(*pp)->next;
    return pp;
}

int floe_loop_add(floe_loop_t *l, int fd, uint32_t events, floe_loop_fd_fn fn, void *arg,
                  floe_err_t *err)
{
    watch_t *w = calloc(1, sizeof *w);
    if (!w) return floe_err_oom(err);
    w->fd = fd;
    w->fn = fn;
    w->arg = arg;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev)) {
        int e = errno;
        free(w);
        return floe_err_errno(err, e, "epoll_ctl add");
    }
    watch_t **pp = &l->watches[(unsigned)fd % NBUCKETS];
    w->next = *pp;
    *pp = w;
    return 0;
}

int floe_loop_mod(floe_loop_t *l, int fd, uint32_t events, floe_loop_fd_fn fn, void *arg)
{
    watch_t *w = *find_watch(l, fd);
    if (!w) return -1;
    w->fn = fn;
    w->arg = arg;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(l->ep, EPOLL_CTL_MOD, fd, &ev) ? -1 : 0;
}

void floe_loop_del(floe_loop_t *l, int fd)
{
    watch_t **pp = find_watch(l, fd);
    watch_t *w = *pp;
    if (!w) return;
    epoll_ctl(l->ep, EPOLL_CTL_DEL, fd, NULL);
    *pp = w->next;
    /* events already fetched for this fd in the current batch must not
     * reach the freed watch: mark it and free after the batch */
    w->fd = -1;
    w->fn = NULL;
    w->next = NULL;
    /* park it in bucket chain of fd -1 (never looked up) for later free */
    watch_t **dead = &l->watches[NBUCKETS - 1];
    w->next = *dead;
    *dead = w;
}

/* ---- timers: binary min-heap on (due, seq) ---- */

static bool t_less(const floe_timer_t *a, const floe_timer_t *b)
{
    return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

static void h_swap(floe_loop_t *l, size_t i, size_t j)
{
    floe_timer_t *t = l->heap[i];
    l->heap[i] = l->heap[j];
    l->heap[j] = t;
    l->heap[i]->idx = i;
    l->heap[j]->idx = j;
}

static void h_up(floe_loop_t *l, size_t i)
{
    while (i > 0 && t_less(l->heap[i], l->heap[(i - 1) / 2])) {
        h_swap(l, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void h_down(floe_loop_t *l, size_t i)
{
    for (;;) {
        size_t m = i, a = 2 * i + 1, b = 2 * i + 2;
        if (a < l->nheap && t_less(l->heap[a], l->heap[m])) m = a;
        if (b < l->nheap && t_less(l->heap[b], l->heap[m])) m = b;
        if (m == i) return;
        h_swap(l, i, m);
        i = m;
    }
}

static void h_remove(floe_loop_t *l, size_t i)
{
    l->nheap--;
    if (i != l->nheap) {
        l->heap[i] = l->heap[l->nheap];
        l->heap[i]->idx = i;
        h_down(l, i);
        h_up(l, i);
    }
}

floe_timer_t *floe_loop_timer(floe_loop_t *l, int64_t delay_ms, void (*fn)(void *), void *arg)
{
    if (l->nheap == l->capheap) {
        size_t nc = l->capheap ? l->capheap * 2 : 64;
        floe_timer_t **h = realloc(l->heap, nc * sizeof *h);
        if (!h) return NULL;
        l->heap = h;
        l->capheap = nc;
    }
    floe_timer_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->due_ms = floe_mono_ms() + (delay_ms > 0 ? delay_ms : 0);
    t->seq = l->seq++;
    t->fn = fn;
    t->arg = arg;
    t->idx = l->nheap;
    l->heap[l->nheap++] = t;
    h_up(l, t->idx);
    return t;
}

void floe_timer_cancel(floe_loop_t *l, floe_timer_t *t)
{
    if (!t) return;
    h_remove(l, t->idx);
    free(t);
}

int floe_loop_post(floe_loop_t *l, void (*fn)(void *), void *arg)
{
    post_t *p = malloc(sizeof *p);
    if (!p) return -1;
    p->fn = fn;
    p->arg = arg;
    p->next = NULL;
    pthread_mutex_lock(&l->mu);
    if (l->posts_tail) l->posts_tail->next = p;
    else
        l->posts = p;
    l->posts_tail = p;
    pthread_mutex_unlock(&l->mu);
    uint64_t one = 1;
    ssize_t r = write(l->evfd, &one, sizeof one);
    (void)r;
    return 0;
}

void floe_loop_stop(floe_loop_t *l)
{
    atomic_store(&l->stop, 1);
    uint64_t one = 1;
    ssize_t r = write(l->evfd, &one, sizeof one);
    (void)r;
}

static void run_posts(floe_loop_t *l)
{
    uint64_t v;
    ssize_t r = read(l->evfd, &v, sizeof v);
    (void)r;
    pthread_mutex_lock(&l->mu);
    post_t *p = l->posts;
    l->posts = l->posts_tail = NULL;
    pthread_mutex_unlock(&l->mu);
    while (p) {
        post_t *n = p->next;
        p->fn(p->arg);
        free(p);
        p = n;
    }
}

static void free_dead(floe_loop_t *l)
{
    watch_t **pp = &l->watches[NBUCKETS - 1];
    while (*pp) {
        if ((*pp)->fd == -1) {
            watch_t *w = *pp;
            *pp = w->next;
            free(w);
        } else {
            pp = &(*pp)->next;
        }
    }
}

static int run_once(floe_loop_t *l, int64_t max_wait_ms, floe_err_t *err)
{
    int64_t now = floe_mono_ms();
    int timeout = (int)(max_wait_ms < 0 ? 1000 : max_wait_ms);
    if (l->nheap) {
        int64_t d = l->heap[0]->due_ms - now;
        if (d < 0) d = 0;
        if (d < timeout) timeout = (int)d;
    }
    struct epoll_event evs[64];
    int n = epoll_wait(l->ep, evs, 64, timeout);
    if (n < 0) {
        if (errno == EINTR) return 0;
        return floe_err_errno(err, errno, "epoll_wait");
    }
    for (int i = 0; i < n; i++) {
        watch_t *w = evs[i].data.ptr;
        if (!w) {
            run_posts(l);
            continue;
        }
        if (w->fn) w->fn(w->fd, evs[i].events, w->arg);
    }
    free_dead(l);
    now = floe_mono_ms();
    while (l->nheap && l->heap[0]->due_ms <= now) {
        floe_timer_t *t = l->heap[0];
        h_remove(l, 0);
        void (*fn)(void *) = t->fn;
        void *arg = t->arg;
        free(t);
        fn(arg);
    }
    return 0;
}

int floe_loop_run(floe_loop_t *l, floe_err_t *err)
{
    atomic_store(&l->stop, 0);
    while (!atomic_load(&l->stop))
        if (run_once(l, -1, err)) return -1;
    return 0;
}

int floe_loop_run_for(floe_loop_t *l, int64_t max_ms, floe_err_t *err)
{
    int64_t end = floe_mono_ms() + max_ms;
    atomic_store(&l->stop, 0);
    while (!atomic_load(&l->stop)) {
        int64_t left = end - floe_mono_ms();
        if (left <= 0) break;
        if (run_once(l, left, err)) return -1;
    }
    return 0;
}
