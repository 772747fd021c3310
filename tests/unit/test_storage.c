/* FileIO: local atomic writes, create-if-absent, list/rename/remove, and
 * the fault-injecting wrapper's three modes. */
#include <stdlib.h>
#include <string.h>
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

TEST_MAIN(mkroot(); RUN(local_basics); RUN(fault_modes))
