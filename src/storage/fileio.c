/* FileIO dispatch and the local-file implementation.
 *
 * Local writes go to a hidden temp file in the target's directory, are
 * fsynced, then published with rename (replace) or link (create-if-absent:
 * link fails with EEXIST instead of replacing), and the directory is
 * fsynced so the new name survives a crash. */
#include "storage/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fs.h"
#include "util/mem.h"

/* ---- dispatch ---- */

int floe_fileio_create(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                       floe_err_t *err)
{
    *out = NULL;
    return io->ops->create(io, path, flags, out, err);
}

int floe_outfile_write(floe_outfile_t *f, const void *p, size_t n, floe_err_t *err)
{
    if (f->ops->write(f, p, n, err) < 0) return -1;
    f->written += n;
    return 0;
}

int floe_outfile_close(floe_outfile_t *f, floe_err_t *err)
{
    return f->ops->close(f, err);
}

void floe_outfile_abort(floe_outfile_t *f)
{
    if (f) f->ops->abort(f);
}

int floe_fileio_write(floe_fileio_t *io, const char *path, const void *p, size_t n, unsigned flags,
                      floe_err_t *err)
{
    floe_outfile_t *f;
    if (floe_fileio_create(io, path, flags, &f, err) < 0) return -1;
    if (floe_outfile_write(f, p, n, err) < 0) {
        floe_outfile_abort(f);
        return -1;
    }
    return floe_outfile_close(f, err);
}

int floe_fileio_read(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out,
                     floe_err_t *err)
{
    return io->ops->read(io, path, max ? max : ((size_t)1 << 30), out, err);
}

int floe_fileio_read_range(floe_fileio_t *io, const char *path, uint64_t off, size_t len,
                           floe_buf_t *out, floe_err_t *err)
{
    if (io->ops->read_range) return io->ops->read_range(io, path, off, len, out, err);
    floe_buf_t all = FLOE_BUF_INIT;
    if (floe_fileio_read(io, path, 0, &all, err) < 0) {
        floe_buf_free(&all);
        return -1;
    }
    int rc = 0;
    if (off < all.len) {
        size_t n = all.len - (size_t)off < len ? all.len - (size_t)off : len;
        if (floe_buf_append(out, all.data + off, n) < 0) rc = floe_err_oom(err);
    }
    floe_buf_free(&all);
    return rc;
}

int floe_fileio_exists(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err)
{
    return io->ops->exists(io, path, out, err);
}

int floe_fileio_remove(floe_fileio_t *io, const char *path, floe_err_t *err)
{
    return io->ops->remove(io, path, err);
}

int floe_fileio_rename(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                       floe_err_t *err)
{
    return io->ops->rename(io, from, to, noreplace, err);
}

int floe_fileio_list(floe_fileio_t *io, const char *dir, char ***names, size_t *n, floe_err_t *err)
{
    *names = NULL;
    *n = 0;
    if (io->ops->list) return io->ops->list(io, dir, names, n, err);
    floe_fileio_entry_t *e = NULL;
    if (io->ops->list_entries(io, dir, &e, n, err) < 0) return -1;
    if (!*n) return 0;
    if (!(*names = malloc(*n * sizeof **names))) {
        floe_fileio_entries_free(e, *n);
        *n = 0;
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < *n; i++) (*names)[i] = e[i].name; /* moved */
    free(e);
    return 0;
}

void floe_fileio_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

void floe_fileio_entries_free(floe_fileio_entry_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++) free(e[i].name);
    free(e);
}

int floe_fileio_list_entries(floe_fileio_t *io, const char *dir, floe_fileio_entry_t **out,
                             size_t *n, floe_err_t *err)
{
    *out = NULL;
    *n = 0;
    if (io->ops->list_entries) return io->ops->list_entries(io, dir, out, n, err);
    char **names;
    size_t nn;
    if (floe_fileio_list(io, dir, &names, &nn, err) < 0) return -1;
    floe_fileio_entry_t *e = nn ? calloc(nn, sizeof *e) : NULL;
    if (nn && !e) {
        floe_fileio_names_free(names, nn);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < nn; i++) {
        e[i].name = names[i];
        e[i].size = e[i].mtime_ms = -1;
    }
    free(names);
    *out = e;
    *n = nn;
    return 0;
}

int floe_fileio_remove_batch(floe_fileio_t *io, const char *const *paths, size_t n, bool *done,
                             floe_err_t *err)
{
    if (io->ops->remove_batch) return io->ops->remove_batch(io, paths, n, done, err);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        floe_err_t e;
        bool ok = floe_fileio_remove(io, paths[i], &e) == 0;
        if (done) done[i] = ok;
        if (!ok && rc == 0) {
            if (err) *err = e;
            rc = -1;
        }
    }
    return rc;
}

void floe_fileio_free(floe_fileio_t *io)
{
    if (io) io->ops->destroy(io);
}

/* ---- local ---- */

const char *floe_fileio_local_path(const char *path)
{
    if (strncmp(path, "file://", 7) == 0) return path + 7;
    if (strncmp(path, "file:", 5) == 0) return path + 5;
    return path;
}

/* The directory part of path, malloc'd (floe_fs_dirname). */
static char *dir_of(const char *path, floe_err_t *err)
{
    size_t n = strlen(path) + 2;
    char *d = malloc(n);
    if (!d) {
        floe_err_oom(err);
        return NULL;
    }
    if (floe_fs_dirname(path, d, n, err) < 0) {
        free(d);
        return NULL;
    }
    return d;
}

typedef struct local_out {
    floe_outfile_t base;
    int fd;
    unsigned flags;
    char *tmp, *final;
} local_out_t;

static void local_out_free(local_out_t *o)
{
    if (o->fd >= 0) close(o->fd);
    free(o->tmp);
    free(o->final);
    free(o);
}

static int local_out_write(floe_outfile_t *f, const void *p, size_t n, floe_err_t *err)
{
    local_out_t *o = (local_out_t *)f;
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(o->fd, b, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return floe_err_errno(err, errno, o->tmp);
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int local_out_close(floe_outfile_t *f, floe_err_t *err)
{
    local_out_t *o = (local_out_t *)f;
    int rc = 0;
    if (fsync(o->fd) < 0) {
        rc = floe_err_errno(err, errno, o->tmp);
    } else if (close(o->fd) < 0) {
        o->fd = -1;
        rc = floe_err_errno(err, errno, o->tmp);
    } else {
        o->fd = -1;
        rc = floe_fs_rename(o->tmp, o->final, (o->flags & FLOE_IO_EXCL) != 0, err);
    }
    if (rc < 0) unlink(o->tmp);
    local_out_free(o);
    return rc;
}

static void local_out_abort(floe_outfile_t *f)
{
    local_out_t *o = (local_out_t *)f;
    unlink(o->tmp);
    local_out_free(o);
}

static const floe_outfile_ops_t local_out_ops = {local_out_write, local_out_close, local_out_abort};

static int local_create(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                        floe_err_t *err)
{
    (void)io;
    const char *lp = floe_fileio_local_path(path);
    local_out_t *o = calloc(1, sizeof *o);
    if (!o) return floe_err_oom(err);
    o->base.ops = &local_out_ops;
    o->fd = -1;
    o->flags = flags;
    if (!(o->final = strdup(lp))) {
        local_out_free(o);
        return floe_err_oom(err);
    }
    char *dir = dir_of(lp, err);
    if (!dir) {
        local_out_free(o);
        return -1;
    }
    static unsigned long counter;
    unsigned long c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    const char *base = strrchr(lp, '/');
    base = base ? base + 1 : lp;
    size_t tl = strlen(dir) + strlen(base) + 64;
    int rc = -1;
    if (!(o->tmp = malloc(tl))) floe_err_oom(err);
    else if (floe_path_fmt(o->tmp, tl, err, "%s/.%s.%ld.%lu.%" PRId64 ".tmp", dir, base,
                           (long)getpid(), c, floe_mono_ns()) == 0)
        rc = floe_fs_mkdirs(dir, err);
    free(dir);
    if (rc < 0) {
        local_out_free(o);
        return -1;
    }
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        int e = errno;
        floe_err_errno(err, e, o->tmp);
        local_out_free(o);
        return -1;
    }
    *out = &o->base;
    return 0;
}

/* Open a local file to read: the fd, or -1 with FLOE_ENOENT when absent. */
static int open_read(const char *lp, floe_err_t *err)
{
    int fd = open(lp, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return floe_err_set(err, FLOE_ENOENT, "%s: no such file", lp);
        return floe_err_errno(err, errno, lp);
    }
    return fd;
}

static int local_read(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out,
                      floe_err_t *err)
{
    (void)io;
    const char *lp = floe_fileio_local_path(path);
    int fd = open_read(lp, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return floe_err_errno(err, e, lp);
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return floe_err_set(err, FLOE_ERANGE, "%s: %lld bytes is over the %zu byte limit", lp,
                            (long long)st.st_size, max);
    }
    if (floe_buf_reserve(out, (size_t)st.st_size + 1) < 0) {
        close(fd);
        return floe_err_oom(err);
    }
    for (;;) {
        if (out->cap - out->len < 4096 && floe_buf_reserve(out, 65536) < 0) {
            close(fd);
            return floe_err_oom(err);
        }
        ssize_t r = read(fd, out->data + out->len, out->cap - out->len);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            return floe_err_errno(err, e, lp);
        }
        if (r == 0) break;
        out->len += (size_t)r;
        if (out->len > max) {
            close(fd);
            return floe_err_set(err, FLOE_ERANGE, "%s grew over the %zu byte limit", lp, max);
        }
    }
    close(fd);
    return 0;
}

static int local_read_range(floe_fileio_t *io, const char *path, uint64_t off, size_t len,
                            floe_buf_t *out, floe_err_t *err)
{
    (void)io;
    const char *lp = floe_fileio_local_path(path);
    int fd = open_read(lp, err);
    if (fd < 0) return -1;
    if (floe_buf_reserve(out, len) < 0) {
        close(fd);
        return floe_err_oom(err);
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, out->data + out->len + got, len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return floe_err_errno(err, e, lp);
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    out->len += got;
    return 0;
}

static int local_exists(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err)
{
    (void)io;
    struct stat st;
    const char *lp = floe_fileio_local_path(path);
    if (stat(lp, &st) == 0) {
        *out = true;
        return 0;
    }
    if (errno == ENOENT || errno == ENOTDIR) {
        *out = false;
        return 0;
    }
    return floe_err_errno(err, errno, lp);
}

static int local_remove(floe_fileio_t *io, const char *path, floe_err_t *err)
{
    (void)io;
    const char *lp = floe_fileio_local_path(path);
    if (unlink(lp) < 0 && errno != ENOENT) {
        if (errno == EISDIR || errno == EPERM) {
            if (rmdir(lp) == 0 || errno == ENOENT) return 0;
        }
        return floe_err_errno(err, errno, lp);
    }
    return 0;
}

static int local_rename(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                        floe_err_t *err)
{
    (void)io;
    const char *lf = floe_fileio_local_path(from), *lt = floe_fileio_local_path(to);
    char *d = dir_of(lt, err);
    if (!d) return -1;
    int rc = floe_fs_mkdirs(d, err);
    free(d);
    if (rc == 0) rc = floe_fs_rename(lf, lt, noreplace, err);
    return rc;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const floe_fileio_entry_t *)a)->name, ((const floe_fileio_entry_t *)b)->name);
}

static int local_list_entries(floe_fileio_t *io, const char *dir, floe_fileio_entry_t **out,
                              size_t *n, floe_err_t *err)
{
    (void)io;
    const char *lp = floe_fileio_local_path(dir);
    DIR *d = opendir(lp);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return floe_err_errno(err, errno, lp);
    }
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT) continue; /* deleted meanwhile */
            int e = errno;
            closedir(d);
            floe_fileio_entries_free(*out, *n);
            *out = NULL;
            *n = 0;
            return floe_err_errno(err, e, de->d_name);
        }
        if (floe_grow(out, &cap, *n + 1, sizeof **out) != 0) goto oom;
        floe_fileio_entry_t *e = &(*out)[*n];
        if (!(e->name = strdup(de->d_name))) goto oom;
        e->is_dir = S_ISDIR(st.st_mode);
        e->size = e->is_dir ? -1 : (int64_t)st.st_size;
        e->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        (*n)++;
    }
    closedir(d);
    if (*n > 1) qsort(*out, *n, sizeof **out, cmp_entry);
    return 0;
oom:
    closedir(d);
    floe_fileio_entries_free(*out, *n);
    *out = NULL;
    *n = 0;
    return floe_err_oom(err);
}

static void local_destroy(floe_fileio_t *io)
{
    free(io);
}

/* remove_batch: the dispatch's loop of unlinks is what a local batch is */
static const floe_fileio_ops_t local_ops = {
    local_create, local_read,    local_exists,       local_remove, local_rename,
    NULL,         local_destroy, local_list_entries, NULL,         local_read_range};

floe_fileio_t *floe_fileio_local_new(floe_err_t *err)
{
    floe_fileio_t *io = calloc(1, sizeof *io);
    if (!io) {
        floe_err_oom(err);
        return NULL;
    }
    io->ops = &local_ops;
    return io;
}
