/* The C side of tests/integration/s3_server.sh: a real S3 server (one-node
 * Ceph + radosgw) for the tests that need one.
 *
 * Whether a test may skip: when the Ceph and radosgw programs are not
 * installed and FLOE_TEST_S3 is unset (or "0"), s3_server_start says so
 * and the test prints "ok - NAME # SKIP why".  With FLOE_TEST_S3=1 (.ci/run
 * sets it; scripts/setup installs the packages) a missing server is a
 * failure, and so is one that is installed but does not start. */
#ifndef FLOE_TESTS_S3_SERVER_H
#define FLOE_TESTS_S3_SERVER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct s3_server {
    char dir[256];
    char endpoint[128];       /* http://127.0.0.1:PORT */
    char https_endpoint[128]; /* https://localhost:PORT2, the same store */
    char ca_file[320];        /* PEM of the CA that signed its certificate */
    char bucket[64];
    char region[32];
    char access_key_id[64];
    char secret_access_key[96];
} s3_server_t;

/* Start one (bounded by the script's S3_START_TIMEOUT).  0 started; 1
 * not installed and allowed to skip (why says so); -1 failed (why says
 * why).  Stop with s3_server_stop; should this process die first, the
 * script's watchdog stops it. */
int s3_server_start(s3_server_t *s, char *why, size_t why_size);
void s3_server_stop(s3_server_t *s);

#endif
