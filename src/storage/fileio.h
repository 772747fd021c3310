/* FileIO: the storage interface under Iceberg tables.
 *
 * A FileIO reads whole files, writes files that appear atomically and
 * durably (all bytes or nothing, visible only after close), optionally
 * only when absent (the primitive an optimistic commit needs), lists,
 * renames and deletes.  Implementations: local files (this folder), a
 * fault-injecting wrapper for tests, S3 (storage/s3.h; conditional put
 * maps to create-if-absent).  Paths are what the table stores: "/abs/path",
 * "file:/abs" or "file:///abs" for local files.
 *
 * Implementations fill a floe_fileio_ops_t; callers use the floe_fileio_*
 * functions only.  A FileIO may be used from several threads at once. */
#ifndef FLOE_STORAGE_FILEIO_H
#define FLOE_STORAGE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct floe_fileio floe_fileio_t;
typedef struct floe_outfile floe_outfile_t;

/* floe_fileio_create flags */
#define FLOE_IO_EXCL 1u /* close fails with FLOE_EEXIST if the path exists */

/* One entry of a listing (floe_fileio_list_entries). */
typedef struct floe_fileio_entry {
    char *name;       /* owned; a name in the folder, not a path */
    bool is_dir;      /* a folder (local) or a common prefix (object stores) */
    int64_t size;     /* bytes; -1 unknown (folders) */
    int64_t mtime_ms; /* last modification, ms since the Unix epoch; -1 unknown */
} floe_fileio_entry_t;

/* Operations.  Members after destroy are optional (NULL: the dispatch
 * functions fall back on the required ones), so an implementation written
 * before they existed still builds and works; list may be NULL when
 * list_entries is not (the names are taken from the entries). */
typedef struct floe_fileio_ops {
    int (*create)(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                  floe_err_t *err);
    int (*read)(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out, floe_err_t *err);
    int (*exists)(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err);
    int (*remove)(floe_fileio_t *io, const char *path, floe_err_t *err);
    int (*rename)(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                  floe_err_t *err);
    int (*list)(floe_fileio_t *io, const char *dir, char ***names, size_t *n, floe_err_t *err);
    void (*destroy)(floe_fileio_t *io);
    int (*list_entries)(floe_fileio_t *io, const char *dir, floe_fileio_entry_t **out, size_t *n,
                        floe_err_t *err);
    int (*remove_batch)(floe_fileio_t *io, const char *const *paths, size_t n, bool *done,
                        floe_err_t *err);
    int (*read_range)(floe_fileio_t *io, const char *path, uint64_t off, size_t len,
                      floe_buf_t *out, floe_err_t *err);
} floe_fileio_ops_t;

typedef struct floe_outfile_ops {
    int (*write)(floe_outfile_t *f, const void *p, size_t n, floe_err_t *err);
    int (*close)(floe_outfile_t *f, floe_err_t *err);
    void (*abort)(floe_outfile_t *f);
} floe_outfile_ops_t;

/* Implementations embed these as their first member. */
struct floe_fileio {
    const floe_fileio_ops_t *ops;
};
struct floe_outfile {
    const floe_outfile_ops_t *ops;
    uint64_t written;
};

/* Start writing path.  The file becomes visible only at a successful
 * floe_outfile_close; with FLOE_IO_EXCL that close fails with FLOE_EEXIST
 * when the path already exists (nothing is replaced).  *out is the
 * caller's until close or abort (each frees it). */
int floe_fileio_create(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                       floe_err_t *err);
int floe_outfile_write(floe_outfile_t *f, const void *p, size_t n, floe_err_t *err);
/* Publish durably (flush, fsync file and directory).  Frees f, also on
 * failure (then nothing was published, or for remote stores: unknown). */
int floe_outfile_close(floe_outfile_t *f, floe_err_t *err);
/* Drop the file unpublished; frees f. */
void floe_outfile_abort(floe_outfile_t *f);

/* Whole-file write: create + write + close. */
int floe_fileio_write(floe_fileio_t *io, const char *path, const void *p, size_t n, unsigned flags,
                      floe_err_t *err);
/* Read a whole file into out (appended; caller frees); refuses files over
 * max bytes (0: 1 GiB) with ERANGE.  FLOE_ENOENT when absent. */
int floe_fileio_read(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out,
                     floe_err_t *err);
/* Read bytes [off, off+len) of a file into out (appended; caller
 * frees): fewer when the file ends first, none when off is at or past its
 * end.  What a Parquet reader needs for footers and row groups on an
 * object store.  FLOE_ENOENT when absent.  (An implementation without
 * read_range reads the whole file, up to 1 GiB, and keeps the range.) */
int floe_fileio_read_range(floe_fileio_t *io, const char *path, uint64_t off, size_t len,
                           floe_buf_t *out, floe_err_t *err);
int floe_fileio_exists(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err);
/* Delete; deleting an absent file succeeds. */
int floe_fileio_remove(floe_fileio_t *io, const char *path, floe_err_t *err);
/* Rename; with noreplace fails with FLOE_EEXIST when `to` exists. */
int floe_fileio_rename(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                       floe_err_t *err);
/* Names (not paths) of the entries in dir, sorted; an absent dir or a
 * plain file lists as empty.  Caller frees with floe_fileio_names_free. */
int floe_fileio_list(floe_fileio_t *io, const char *dir, char ***names, size_t *n, floe_err_t *err);
void floe_fileio_names_free(char **names, size_t n);
/* The entries of dir with their kind, size and modification time, sorted
 * by name; an absent dir or a plain file lists as empty.  What a store
 * cannot tell is -1 (an implementation without list_entries gives names
 * only: is_dir false, size and mtime -1).  Maintenance decides from the
 * times which unreferenced files are old enough to delete.  Caller frees
 * *out with floe_fileio_entries_free. */
int floe_fileio_list_entries(floe_fileio_t *io, const char *dir, floe_fileio_entry_t **out,
                             size_t *n, floe_err_t *err);
void floe_fileio_entries_free(floe_fileio_entry_t *e, size_t n);
/* Delete paths[0..n) (borrowed) in as few requests as the store allows
 * (S3 DeleteObjects takes 1,000 keys; locally one unlink each).  Deleting
 * an absent file succeeds.  done (may be NULL) receives, per path, whether
 * it is gone.  0 when every path is gone; otherwise -1 with *err telling
 * the first failure (the other paths were still tried). */
int floe_fileio_remove_batch(floe_fileio_t *io, const char *const *paths, size_t n, bool *done,
                             floe_err_t *err);
void floe_fileio_free(floe_fileio_t *io);

/* Local files.  Caller frees with floe_fileio_free. */
floe_fileio_t *floe_fileio_local_new(floe_err_t *err);
/* The local path of a "file:" URL or plain path; borrowed from `path`. */
const char *floe_fileio_local_path(const char *path);

/* Fault injection for tests: wraps `inner` (borrowed; must outlive the
 * wrapper).  Every call through the wrapper (create, each write, close,
 * read, read_range, exists, remove, rename, list, list_entries, and a whole
 * remove_batch, as one DeleteObjects request would be) is one operation.  Once armed with
 * floe_fileio_fault_arm(io, n, mode), the n-th operation from then on:
 *   FAIL:     fails with FLOE_EIO without doing anything; later ones work;
 *   CRASH:    fails without doing anything, and so does every later one
 *             (the process "died" between two writes);
 *   LOST_ACK: is done, then reported as failed with FLOE_ETIMEOUT (a
 *             remote store that applied a request whose answer was lost). */
typedef enum floe_fault_mode {
    FLOE_FAULT_FAIL = 1,
    FLOE_FAULT_CRASH,
    FLOE_FAULT_LOST_ACK,
} floe_fault_mode_t;

floe_fileio_t *floe_fileio_fault_new(floe_fileio_t *inner, floe_err_t *err);
void floe_fileio_fault_arm(floe_fileio_t *io, uint64_t nth, floe_fault_mode_t mode);
void floe_fileio_fault_disarm(floe_fileio_t *io);
/* Operations seen since the last arm/disarm, and whether the fault fired. */
uint64_t floe_fileio_fault_ops(floe_fileio_t *io);
bool floe_fileio_fault_fired(floe_fileio_t *io);

#endif
