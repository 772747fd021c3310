/* The process-wide cache of open segment descriptors (log_int.h): a
 * broker keeps thousands of partitions, each with segments, so a segment's
 * .log is open only while it is cached.  The most recently used stay open
 * up to the limit; beyond it the least recently used that nobody is using
 * is closed, and opened again on its next use.
 *
 * One mutex guards every entry's fd, pins and list links; it is a leaf
 * lock (nothing is called while holding it but list surgery), and open()
 * and close() run outside it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log/log_int.h"

#define MIN_OPEN 16

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static floe_fdc_t *g_head, *g_tail; /* most / least recently used */
static size_t g_open, g_max;

/* Half the open-file limit: the other half is for sockets, the table
 * engine's data files and everything else. */
static size_t default_max(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1 << 16;
    size_t half = (size_t)rl.rlim_cur / 2;
    return half > MIN_OPEN ? half : MIN_OPEN;
}

void floe_log_set_max_open_files(size_t n)
{
    size_t v = n ? (n > MIN_OPEN ? n : MIN_OPEN) : default_max();
    pthread_mutex_lock(&g_mu);
    g_max = v;
    pthread_mutex_unlock(&g_mu);
}

size_t floe_log_max_open_files(void)
{
    pthread_mutex_lock(&g_mu);
    if (!g_max) g_max = default_max();
    size_t v = g_max;
    pthread_mutex_unlock(&g_mu);
    return v;
}

size_t floe_log_open_files(void)
{
    pthread_mutex_lock(&g_mu);
    size_t v = g_open;
    pthread_mutex_unlock(&g_mu);
    return v;
}

static void unlink_node(floe_fdc_t *c)
{
    if (c->prev) c->prev->next = c->next;
    else
        g_head = c->next;
    if (c->next) c->next->prev = c->prev;
    else
        g_tail = c->prev;
    c->prev = c->next = NULL;
}

static void push_head(floe_fdc_t *c)
{
    c->prev = NULL;
    c->next = g_head;
    if (g_head) g_head->prev = c;
    g_head = c;
    if (!g_tail) g_tail = c;
}

/* c was used: most recently now.  Caller holds g_mu; c is open. */
static void touch(floe_fdc_t *c)
{
    if (g_head == c) return;
    unlink_node(c);
    push_head(c);
}

/* c (closed) is open now on fd; then the least recently used beyond the
 * limit close: their fds go to victims[] (up to 8) for the caller to close
 * after the lock.  Returns how many.  Caller holds g_mu. */
static size_t opened_locked(floe_fdc_t *c, int fd, int *victims);

/* Take the least recently used unpinned entries out while more than the
 * limit are open; their fds go to victims[] (at most cap) to be closed
 * after the lock.  Caller holds g_mu. */
static size_t evict_locked(int *victims, size_t cap)
{
    if (!g_max) g_max = default_max();
    size_t n = 0;
    floe_fdc_t *c = g_tail;
    while (g_open > g_max && c && n < cap) {
        floe_fdc_t *prev = c->prev;
        if (c->pins == 0) {
            victims[n++] = c->fd;
            c->fd = -1;
            unlink_node(c);
            g_open--;
        }
        c = prev;
    }
    return n;
}

static void close_all(const int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) close(fds[i]);
}

int floe_fdc_init(floe_fdc_t *c, const char *path, floe_err_t *err)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (!(c->path = strdup(path))) return floe_err_oom(err);
    return 0;
}

static size_t opened_locked(floe_fdc_t *c, int fd, int *victims)
{
    c->fd = fd;
    push_head(c);
    g_open++;
    return evict_locked(victims, 8);
}

void floe_fdc_adopt(floe_fdc_t *c, int fd)
{
    int victims[8];
    pthread_mutex_lock(&g_mu);
    size_t n = opened_locked(c, fd, victims);
    pthread_mutex_unlock(&g_mu);
    close_all(victims, n);
}

int floe_fdc_get(floe_fdc_t *c, floe_err_t *err)
{
    pthread_mutex_lock(&g_mu);
    c->pins++;
    if (c->fd >= 0) {
        touch(c);
        int fd = c->fd;
        pthread_mutex_unlock(&g_mu);
        return fd;
    }
    pthread_mutex_unlock(&g_mu);
    /* the pin keeps the entry from being closed (floe_fdc_close needs no
     * pins) while it is opened here, outside the lock */
    int fd = open(c->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        pthread_mutex_lock(&g_mu);
        c->pins--;
        pthread_mutex_unlock(&g_mu);
        return floe_err_errno(err, e, c->path);
    }
    int victims[8], extra = -1;
    size_t n = 0;
    pthread_mutex_lock(&g_mu);
    if (c->fd >= 0) { /* another user opened it meanwhile: take theirs */
        extra = fd;
        fd = c->fd;
        touch(c);
    } else {
        n = opened_locked(c, fd, victims);
    }
    pthread_mutex_unlock(&g_mu);
    close_all(victims, n);
    if (extra >= 0) close(extra);
    return fd;
}

void floe_fdc_put(floe_fdc_t *c)
{
    pthread_mutex_lock(&g_mu);
    c->pins--;
    pthread_mutex_unlock(&g_mu);
}

void floe_fdc_close(floe_fdc_t *c)
{
    int fd;
    pthread_mutex_lock(&g_mu);
    fd = c->fd;
    if (fd >= 0) {
        unlink_node(c);
        g_open--;
        c->fd = -1;
    }
    pthread_mutex_unlock(&g_mu);
    if (fd >= 0) close(fd);
    free(c->path);
    c->path = NULL;
}
