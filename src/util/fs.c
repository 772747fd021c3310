/* Local file system helpers (fs.h). */
#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int floe_fs_mkdirs(const char *dir, floe_err_t *err)
{
    size_t n = strlen(dir);
    if (n == 0) return floe_err_set(err, FLOE_EINVAL, "empty directory name");
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0; /* the usual case: one call */
    char *p = malloc(n + 1);
    if (!p) return floe_err_oom(err);
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            floe_err_errno(err, e, p);
            free(p);
            return -1;
        }
        p[i] = c;
    }
    free(p);
    if (stat(dir, &st) < 0) return floe_err_errno(err, errno, dir);
    if (!S_ISDIR(st.st_mode)) return floe_err_set(err, FLOE_EINVAL, "%s is not a directory", dir);
    return 0;
}

int floe_fs_lock(const char *path, const char *who, int *fd, char *holder, size_t hsize,
                 floe_err_t *err)
{
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) return floe_err_errno(err, errno, path);
    if (flock(f, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        char text[128] = "";
        ssize_t n = e == EWOULDBLOCK ? pread(f, text, sizeof text - 1, 0) : -1;
        close(f);
        if (e != EWOULDBLOCK) return floe_err_errno(err, e, path);
        text[n > 0 ? n : 0] = 0;
        text[strcspn(text, "\n")] = 0;
        if (holder && hsize) snprintf(holder, hsize, "%s", text[0] ? text : "another process");
        return floe_err_set(err, FLOE_EEXIST, "%s is locked by %s", path,
                            text[0] ? text : "another process");
    }
    size_t len = strlen(who);
    if (ftruncate(f, 0) < 0 || pwrite(f, who, len, 0) != (ssize_t)len) {
        int e = errno;
        close(f);
        return floe_err_errno(err, e, path);
    }
    *fd = f;
    return 0;
}

int floe_fs_fsync_dir(const char *dir, floe_err_t *err)
{
    const char *d = dir && dir[0] ? dir : ".";
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return floe_err_errno(err, errno, d);
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc < 0) return floe_err_errno(err, e, d);
    return 0;
}

int floe_fs_dirname(const char *path, char *out, size_t size, floe_err_t *err)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return floe_path_fmt(out, size, err, ".");
    if (slash == path) return floe_path_fmt(out, size, err, "/");
    return floe_path_fmt(out, size, err, "%.*s", (int)(slash - path), path);
}

int floe_fs_rename(const char *from, const char *to, bool noreplace, floe_err_t *err)
{
    if (noreplace) {
        if (link(from, to) < 0) {
            int e = errno;
            if (e == EEXIST) return floe_err_set(err, FLOE_EEXIST, "%s already exists", to);
            return floe_err_errno(err, e, e == ENOENT ? from : to);
        }
        unlink(from);
    } else if (rename(from, to) < 0) {
        int e = errno;
        return floe_err_errno(err, e, e == ENOENT ? from : to);
    }
    size_t tlen = strlen(to);
    char *dir = malloc(tlen + 2);
    if (!dir) return floe_err_oom(err);
    int rc = floe_fs_dirname(to, dir, tlen + 2, err);
    if (rc == 0) rc = floe_fs_fsync_dir(dir, err);
    free(dir);
    return rc;
}

/* Write path's content to "<path>.tmp" (fsynced when durable), then rename
 * it over path (floe_fs_rename when durable). */
static int write_replace(const char *path, const void *data, size_t n, bool durable,
                         floe_err_t *err)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (!tmp) return floe_err_oom(err);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        floe_err_errno(err, errno, tmp);
        goto out;
    }
    const char *p = data;
    size_t left = n;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            floe_err_errno(err, w < 0 ? errno : EIO, tmp);
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (durable && fsync(fd) < 0) {
        floe_err_errno(err, errno, tmp);
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        floe_err_errno(err, errno, tmp);
        goto fail;
    }
    fd = -1;
    if (durable) {
        if (floe_fs_rename(tmp, path, false, err) < 0) goto fail;
    } else if (rename(tmp, path) < 0) {
        floe_err_errno(err, errno, path);
        goto fail;
    }
    rc = 0;
    goto out;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
out:
    free(tmp);
    return rc;
}

int floe_fs_write_atomic(const char *path, const void *data, size_t n, floe_err_t *err)
{
    return write_replace(path, data, n, true, err);
}

int floe_fs_write_nosync(const char *path, const void *data, size_t n, floe_err_t *err)
{
    return write_replace(path, data, n, false, err);
}

static int vfmt(char *out, size_t size, floe_err_t *err, const char *fmt, va_list ap)
{
    if (!size) return floe_err_set(err, FLOE_ERANGE, "path buffer of 0 bytes");
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(out, size, fmt, ap);
    if (n >= 0 && (size_t)n < size) {
        va_end(cp);
        return 0;
    }
    /* say which path was too long, shortened for the message */
    char head[96];
    vsnprintf(head, sizeof head, fmt, cp);
    va_end(cp);
    out[0] = '\0';
    return floe_err_set(err, FLOE_ERANGE, "path too long (%d bytes, at most %zu): %s...", n,
                        size - 1, head);
}

int floe_path_fmt(char *out, size_t size, floe_err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfmt(out, size, err, fmt, ap);
    va_end(ap);
    return rc;
}

int floe_path_join(char *out, size_t size, const char *a, const char *b, floe_err_t *err)
{
    size_t na = strlen(a);
    if (!na) return floe_path_fmt(out, size, err, "%s", b);
    const char *sep = a[na - 1] == '/' ? "" : "/";
    return floe_path_fmt(out, size, err, "%s%s%s", a, sep, b);
}
