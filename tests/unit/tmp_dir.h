/* Temporary folders for unit tests: made under /tmp, removed with all
 * they hold.  (Linked into every test binary, like floe_proc.c.) */
#ifndef FLOE_TESTS_TMP_DIR_H
#define FLOE_TESTS_TMP_DIR_H

/* A new empty folder "/tmp/floe-test-<what>-XXXXXX"; caller frees the
 * returned path with free().  Aborts when it cannot be made. */
char *floe_test_tmpdir(const char *what);
/* Remove dir and everything below it (errors ignored). */
void floe_test_rm_rf(const char *dir);

#endif
