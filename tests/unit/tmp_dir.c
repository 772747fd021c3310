/* Temporary folders for unit tests (tmp_dir.h). */
#include "tmp_dir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

char *floe_test_tmpdir(const char *what)
{
    char *d = malloc(256);
    if (!d) abort();
    snprintf(d, 256, "/tmp/floe-test-%s-XXXXXX", what);
    if (!mkdtemp(d)) abort();
    return d;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

void floe_test_rm_rf(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}
