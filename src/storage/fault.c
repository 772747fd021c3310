/* Fault-injecting FileIO for tests (see fileio.h): counts every operation
 * and fails, "crashes" at, or loses the answer of the n-th one. */
#include <stdlib.h>
#include <string.h>

#include "storage/fileio.h"

typedef struct fault_io {
    floe_fileio_t base;
    floe_fileio_t *inner;
    uint64_t ops, nth;
    floe_fault_mode_t mode;
    bool fired, crashed;
} fault_io_t;

typedef struct fault_out {
    floe_outfile_t base;
    fault_io_t *io;
    floe_outfile_t *inner;
} fault_out_t;

/* -1: fail now without doing the operation; 0: go on; 1: do it, then
 * report failure (lost answer). */
static int step(fault_io_t *f, floe_err_t *err)
{
    if (f->crashed) return floe_err_set(err, FLOE_EIO, "injected: process crashed earlier");
    f->ops++;
    if (!f->nth || f->ops != f->nth) return 0;
    f->fired = true;
    switch (f->mode) {
    case FLOE_FAULT_CRASH:
        f->crashed = true;
        return floe_err_set(err, FLOE_EIO, "injected crash at operation %llu",
                            (unsigned long long)f->ops);
    case FLOE_FAULT_LOST_ACK: return 1;
    default:
        return floe_err_set(err, FLOE_EIO, "injected failure at operation %llu",
                            (unsigned long long)f->ops);
    }
}

static int lost(floe_err_t *err, int rc)
{
    if (rc < 0) return rc;
    return floe_err_set(err, FLOE_ETIMEOUT, "injected: operation done but its answer was lost");
}

static int fo_write(floe_outfile_t *f, const void *p, size_t n, floe_err_t *err)
{
    fault_out_t *o = (fault_out_t *)f;
    int s = step(o->io, err);
    if (s < 0) return -1;
    int rc = floe_outfile_write(o->inner, p, n, err);
    return s ? lost(err, rc) : rc;
}

static int fo_close(floe_outfile_t *f, floe_err_t *err)
{
    fault_out_t *o = (fault_out_t *)f;
    int s = step(o->io, err);
    int rc;
    if (s < 0) {
        floe_outfile_abort(o->inner);
        rc = -1;
    } else {
        rc = floe_outfile_close(o->inner, err);
        if (s) rc = lost(err, rc);
    }
    free(o);
    return rc;
}

static void fo_abort(floe_outfile_t *f)
{
    fault_out_t *o = (fault_out_t *)f;
    floe_outfile_abort(o->inner);
    free(o);
}

static const floe_outfile_ops_t fault_out_ops = {fo_write, fo_close, fo_abort};

static int f_create(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                    floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    fault_out_t *o = calloc(1, sizeof *o);
    if (!o) return floe_err_oom(err);
    if (floe_fileio_create(f->inner, path, flags, &o->inner, err) < 0) {
        free(o);
        return -1;
    }
    o->base.ops = &fault_out_ops;
    o->io = f;
    if (s) {
        floe_outfile_abort(o->inner);
        free(o);
        return lost(err, 0);
    }
    *out = &o->base;
    return 0;
}

static int f_read(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out, floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = f->inner->ops->read(f->inner, path, max, out, err);
    return s ? lost(err, rc) : rc;
}

static int f_read_range(floe_fileio_t *io, const char *path, uint64_t off, size_t len,
                        floe_buf_t *out, floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = floe_fileio_read_range(f->inner, path, off, len, out, err);
    return s ? lost(err, rc) : rc;
}

static int f_exists(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = floe_fileio_exists(f->inner, path, out, err);
    return s ? lost(err, rc) : rc;
}

static int f_remove(floe_fileio_t *io, const char *path, floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = floe_fileio_remove(f->inner, path, err);
    return s ? lost(err, rc) : rc;
}

static int f_rename(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                    floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = floe_fileio_rename(f->inner, from, to, noreplace, err);
    return s ? lost(err, rc) : rc;
}

static int f_list(floe_fileio_t *io, const char *dir, char ***names, size_t *n, floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = floe_fileio_list(f->inner, dir, names, n, err);
    if (s && rc == 0) {
        floe_fileio_names_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return s ? lost(err, rc) : rc;
}

static int f_list_entries(floe_fileio_t *io, const char *dir, floe_fileio_entry_t **out, size_t *n,
                          floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) return -1;
    int rc = floe_fileio_list_entries(f->inner, dir, out, n, err);
    if (s && rc == 0) {
        floe_fileio_entries_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return s ? lost(err, rc) : rc;
}

/* One operation for the whole batch, as one DeleteObjects request. */
static int f_remove_batch(floe_fileio_t *io, const char *const *paths, size_t n, bool *done,
                          floe_err_t *err)
{
    fault_io_t *f = (fault_io_t *)io;
    int s = step(f, err);
    if (s < 0) {
        if (done) memset(done, 0, n * sizeof *done);
        return -1;
    }
    int rc = floe_fileio_remove_batch(f->inner, paths, n, done, err);
    if (s && done) memset(done, 0, n * sizeof *done); /* the answer is lost */
    return s ? lost(err, rc) : rc;
}

static void f_destroy(floe_fileio_t *io)
{
    free(io);
}

static const floe_fileio_ops_t fault_ops = {f_create,       f_read,      f_exists,  f_remove,
                                            f_rename,       f_list,      f_destroy, f_list_entries,
                                            f_remove_batch, f_read_range};

floe_fileio_t *floe_fileio_fault_new(floe_fileio_t *inner, floe_err_t *err)
{
    fault_io_t *f = calloc(1, sizeof *f);
    if (!f) {
        floe_err_oom(err);
        return NULL;
    }
    f->base.ops = &fault_ops;
    f->inner = inner;
    return &f->base;
}

void floe_fileio_fault_arm(floe_fileio_t *io, uint64_t nth, floe_fault_mode_t mode)
{
    fault_io_t *f = (fault_io_t *)io;
    f->ops = 0;
    f->nth = nth;
    f->mode = mode;
    f->fired = f->crashed = false;
}

void floe_fileio_fault_disarm(floe_fileio_t *io)
{
    floe_fileio_fault_arm(io, 0, FLOE_FAULT_FAIL);
}

uint64_t floe_fileio_fault_ops(floe_fileio_t *io)
{
    return ((fault_io_t *)io)->ops;
}

bool floe_fileio_fault_fired(floe_fileio_t *io)
{
    return ((fault_io_t *)io)->fired;
}
