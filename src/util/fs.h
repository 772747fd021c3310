/* Local file system helpers: the one copy of each durable-write step.
 *
 * Every function returns 0, or -1 with *err naming the path and the OS
 * error; none ignores an fsync failure.  Paths are borrowed. */
#ifndef FLOE_UTIL_FS_H
#define FLOE_UTIL_FS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

/* Create dir and its missing parents (mode 0755).  An existing directory
 * is fine; an existing non-directory is FLOE_EINVAL. */
int floe_fs_mkdirs(const char *dir, floe_err_t *err);

/* fsync the directory itself, so entries created, renamed or removed in
 * it survive a crash.  "" means the current directory. */
int floe_fs_fsync_dir(const char *dir, floe_err_t *err);

/* Replace path with data[0..n) atomically and durably: write
 * "<path>.tmp", fsync it, rename it over path, fsync the directory.  A
 * crash leaves either the old or the new content, never a mix; the temp
 * file is removed on failure. */
int floe_fs_write_atomic(const char *path, const void *data, size_t n, floe_err_t *err);

/* floe_fs_write_atomic without the fsyncs, for state a reader checks and
 * can rebuild (a snapshot with a checksum): readers never see a mix, but
 * after a crash the file may hold the old content, the new, or neither. */
int floe_fs_write_nosync(const char *path, const void *data, size_t n, floe_err_t *err);

/* Give the file `from` the name `to`, then fsync the directory of `to` so
 * that the name survives a crash (make the file's data durable first).
 * noreplace: an existing `to` is FLOE_EEXIST and stays as it was (link,
 * then unlink from), else it is replaced.  A missing `from` is
 * FLOE_ENOENT. */
int floe_fs_rename(const char *from, const char *to, bool noreplace, floe_err_t *err);

/* Hold an exclusive advisory lock (flock) on the file path, created if
 * missing, until *fd is closed (the OS drops it when the process dies,
 * SIGKILL included, so a stale lock never blocks a restart).  The file
 * then holds `who` (e.g. "floe sink pid 123").  When another open file
 * holds the lock: FLOE_EEXIST, with that holder's text in the message and
 * in holder[0..hsize) (may be NULL); *fd is set only on success. */
int floe_fs_lock(const char *path, const char *who, int *fd, char *holder, size_t hsize,
                 floe_err_t *err);

/* The directory part of path ("." when it has none, "/" for a file in the
 * root), into out.  FLOE_ERANGE when it does not fit. */
int floe_fs_dirname(const char *path, char *out, size_t size, floe_err_t *err);

/* out = a "/" b (one slash between them, none added after an a that ends
 * in one; b alone when a is empty).  FLOE_ERANGE, with out set to "",
 * when the result does not fit: a truncated path is never returned. */
int floe_path_join(char *out, size_t size, const char *a, const char *b, floe_err_t *err);

/* printf into out; FLOE_ERANGE, with out set to "", when it does not fit. */
int floe_path_fmt(char *out, size_t size, floe_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
