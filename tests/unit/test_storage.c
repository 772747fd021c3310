/* FileIO: local atomic writes, create-if-absent, list/rename/remove,
 * listings with kinds, sizes and times, batch deletes, and the
 * fault-injecting wrapper's three modes. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "storage/fileio.h"

static char root[256];

static void mkroot(void)
{
    snprintf(root, sizeof root, "/tmp/floe-storage-%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
}

static void local_basics(void)
{
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_local_new(&e);
    char p[300], q[300];
    snprintf(p, sizeof p, "file://%s/a/b/c.txt", root);
    CHECK(floe_fileio_write(io, p, "hello", 5, 0, &e) == 0);
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == 0);
    CHECK(b.len == 5 && memcmp(b.data, "hello", 5) == 0);
    /* ranges: inside, cut at the end, past the end */
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, 1, 3, &b, &e) == 0);
    CHECK(b.len == 3 && memcmp(b.data, "ell", 3) == 0);
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, 3, 10, &b, &e) == 0);
    CHECK(b.len == 2 && memcmp(b.data, "lo", 2) == 0);
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, 9, 1, &b, &e) == 0 && b.len == 0);
    /* replace */
    CHECK(floe_fileio_write(io, p, "world!", 6, 0, &e) == 0);
    b.len = 0;
    CHECK(floe_fileio_read(io, p + 7, 0, &b, &e) == 0);
    CHECK(b.len == 6);
    /* create-if-absent refuses to replace */
    CHECK(floe_fileio_write(io, p, "x", 1, FLOE_IO_EXCL, &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    b.len = 0;
    CHECK(floe_fileio_read(io, p, 3, &b, &e) == -1);
    CHECK_EQ(e.code, FLOE_ERANGE);
    /* an unfinished file is invisible */
    floe_outfile_t *f;
    snprintf(q, sizeof q, "%s/a/b/d.txt", root);
    CHECK(floe_fileio_create(io, q, FLOE_IO_EXCL, &f, &e) == 0);
    CHECK(floe_outfile_write(f, "abc", 3, &e) == 0);
    bool ex = true;
    CHECK(floe_fileio_exists(io, q, &ex, &e) == 0);
    CHECK(!ex);
    floe_outfile_abort(f);
    char **names;
    size_t n;
    snprintf(q, sizeof q, "%s/a/b", root);
    CHECK(floe_fileio_list(io, q, &names, &n, &e) == 0);
    CHECK_EQ(n, 1); /* no temp files left */
    if (n == 1) CHECK_STR(names[0], "c.txt");
    floe_fileio_names_free(names, n);
    char r[300];
    snprintf(r, sizeof r, "%s/a/b/e.txt", root);
    CHECK(floe_fileio_rename(io, p, r, true, &e) == 0);
    CHECK(floe_fileio_exists(io, p, &ex, &e) == 0 && !ex);
    CHECK(floe_fileio_write(io, p, "1", 1, 0, &e) == 0);
    CHECK(floe_fileio_rename(io, p, r, true, &e) == -1);
    CHECK_EQ(e.code, FLOE_EEXIST);
    CHECK(floe_fileio_remove(io, r, &e) == 0);
    CHECK(floe_fileio_remove(io, r, &e) == 0);
    b.len = 0;
    CHECK(floe_fileio_read(io, r, 0, &b, &e) == -1);
    CHECK_EQ(e.code, FLOE_ENOENT);
    snprintf(q, sizeof q, "%s/nope", root);
    CHECK(floe_fileio_list(io, q, &names, &n, &e) == 0 && n == 0);
    floe_buf_free(&b);
    floe_fileio_free(io);
}

static void fault_modes(void)
{
    floe_err_t e;
    floe_fileio_t *local = floe_fileio_local_new(&e);
    floe_fileio_t *io = floe_fileio_fault_new(local, &e);
    char p[300];
    snprintf(p, sizeof p, "%s/f/x", root);
    bool ex;
    /* create, write, close = 3 operations; fail the close */
    floe_fileio_fault_arm(io, 3, FLOE_FAULT_FAIL);
    CHECK(floe_fileio_write(io, p, "abc", 3, 0, &e) == -1);
    CHECK(floe_fileio_fault_fired(io));
    CHECK(floe_fileio_exists(local, p, &ex, &e) == 0 && !ex);
    CHECK(floe_fileio_write(io, p, "abc", 3, 0, &e) == 0); /* later ones work */
    /* crash: everything after fails too */
    floe_fileio_fault_arm(io, 2, FLOE_FAULT_CRASH);
    CHECK(floe_fileio_exists(io, p, &ex, &e) == 0);
    CHECK(floe_fileio_remove(io, p, &e) == -1);
    CHECK(floe_fileio_exists(io, p, &ex, &e) == -1);
    CHECK(floe_fileio_exists(local, p, &ex, &e) == 0 && ex);
    /* lost answer: done but reported failed */
    floe_fileio_fault_arm(io, 1, FLOE_FAULT_LOST_ACK);
    CHECK(floe_fileio_remove(io, p, &e) == -1);
    CHECK_EQ(e.code, FLOE_ETIMEOUT);
    CHECK(floe_fileio_exists(local, p, &ex, &e) == 0 && !ex);
    floe_fileio_fault_disarm(io);
    CHECK(floe_fileio_write(io, p, "abc", 3, FLOE_IO_EXCL, &e) == 0);
    CHECK_EQ(floe_fileio_fault_ops(io), 3);
    floe_fileio_free(io);
    floe_fileio_free(local);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
}

/* Listing entries tells folders from files and gives sizes and the
 * modification times orphan removal compares with its safety age. */
static void list_entries_and_batch_remove(void)
{
    floe_err_t e;
    floe_fileio_t *local = floe_fileio_local_new(&e);
    floe_fileio_t *io = floe_fileio_fault_new(local, &e);
    char d[300], p[400], q[400], sub[400];
    snprintf(d, sizeof d, "file://%s/le", root);
    snprintf(p, sizeof p, "%s/old.bin", d);
    snprintf(q, sizeof q, "%s/new.bin", d);
    snprintf(sub, sizeof sub, "%s/part=a/x.bin", d);
    CHECK(floe_fileio_write(local, p, "12345", 5, 0, &e) == 0);
    CHECK(floe_fileio_write(local, q, "1", 1, 0, &e) == 0);
    CHECK(floe_fileio_write(local, sub, "xy", 2, 0, &e) == 0);
    /* make old.bin an hour old */
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= 3600;
    ts[1] = ts[0];
    CHECK(utimensat(AT_FDCWD, floe_fileio_local_path(p), ts, 0) == 0);
    int64_t old_ms = (int64_t)ts[0].tv_sec * 1000 + ts[0].tv_nsec / 1000000;
    floe_fileio_entry_t *en;
    size_t n;
    CHECK(floe_fileio_list_entries(io, d, &en, &n, &e) == 0);
    CHECK_EQ(n, 3);
    if (n == 3) {
        CHECK_STR(en[0].name, "new.bin");
        CHECK(!en[0].is_dir && en[0].size == 1);
        CHECK_STR(en[1].name, "old.bin");
        CHECK(!en[1].is_dir && en[1].size == 5);
        CHECK(en[1].mtime_ms >= old_ms - 1 && en[1].mtime_ms <= old_ms + 1);
        CHECK(en[0].mtime_ms > en[1].mtime_ms + 3000 * 1000);
        CHECK_STR(en[2].name, "part=a");
        CHECK(en[2].is_dir);
    }
    floe_fileio_entries_free(en, n);
    snprintf(q, sizeof q, "%s/absent", d);
    CHECK(floe_fileio_list_entries(io, q, &en, &n, &e) == 0 && n == 0 && !en);

    /* batch delete: all gone, an absent path counts as gone */
    snprintf(q, sizeof q, "%s/new.bin", d);
    const char *paths[3] = {p, q, "/nonexistent-floe-dir/y"};
    bool done[3] = {false, false, false};
    floe_fileio_fault_arm(io, 1, FLOE_FAULT_FAIL);
    CHECK(floe_fileio_remove_batch(io, paths, 3, done, &e) == -1);
    CHECK(!done[0] && !done[1] && !done[2]);
    bool ex = false;
    CHECK(floe_fileio_exists(local, p, &ex, &e) == 0 && ex);
    floe_fileio_fault_arm(io, 1, FLOE_FAULT_LOST_ACK); /* done, answer lost: one request */
    CHECK(floe_fileio_remove_batch(io, paths, 3, done, &e) == -1);
    CHECK_EQ(e.code, FLOE_ETIMEOUT);
    CHECK_EQ(floe_fileio_fault_ops(io), 1);
    CHECK(floe_fileio_exists(local, p, &ex, &e) == 0 && !ex);
    CHECK(floe_fileio_exists(local, q, &ex, &e) == 0 && !ex);
    floe_fileio_fault_disarm(io);
    CHECK(floe_fileio_remove_batch(io, paths, 3, done, &e) == 0);
    CHECK(done[0] && done[1] && done[2]);
    /* a path that cannot go (a folder with files) fails alone */
    CHECK(floe_fileio_write(local, p, "1", 1, 0, &e) == 0);
    snprintf(q, sizeof q, "%s/part=a", d);
    const char *two[2] = {q, p};
    CHECK(floe_fileio_remove_batch(io, two, 2, done, &e) == -1);
    CHECK(!done[0] && done[1]);
    CHECK(floe_fileio_exists(local, p, &ex, &e) == 0 && !ex);
    floe_fileio_free(io);
    floe_fileio_free(local);
}

TEST_MAIN(mkroot(); RUN(local_basics); RUN(list_entries_and_batch_remove); RUN(fault_modes))
