/* Producer ids (broker.h): handed out from blocks of PID_BLOCK, each block
 * reserved in DATA/meta/producer-ids (the next unreserved id, written
 * durably) before its first id goes out, so no id is handed out twice,
 * even across crashes; a restart skips what is left of a block. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "kafka/broker_int.h"
#include "util/fs.h"

#define PID_BLOCK 1000

static int pid_path(const floe_broker_t *b, char *out, size_t size, floe_err_t *err)
{
    return floe_path_join(out, size, b->data_dir, "meta/producer-ids", err);
}

int floe_broker_pids_load(floe_broker_t *b, floe_err_t *err)
{
    char path[4200];
    if (pid_path(b, path, sizeof path, err)) return -1;
    b->next_pid = b->pid_block_end = 0;
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? 0 : floe_err_errno(err, errno, path);
    long long v = 0;
    int rc = 0;
    if (fscanf(f, "%lld", &v) != 1 || v < 0)
        rc = floe_err_set(err, FLOE_ECORRUPT, "%s: not a producer id", path);
    fclose(f);
    if (!rc) b->next_pid = b->pid_block_end = v;
    return rc;
}

int64_t floe_broker_next_producer_id(floe_broker_t *b, floe_err_t *err)
{
    pthread_mutex_lock(&b->mu);
    if (b->next_pid >= b->pid_block_end) {
        int64_t end = b->next_pid + PID_BLOCK;
        char path[4200], s[32];
        int n = snprintf(s, sizeof s, "%" PRId64 "\n", end);
        if (pid_path(b, path, sizeof path, err) || floe_fs_write_atomic(path, s, (size_t)n, err)) {
            pthread_mutex_unlock(&b->mu);
            return -1;
        }
        b->pid_block_end = end;
    }
    int64_t id = b->next_pid++;
    pthread_mutex_unlock(&b->mu);
    return id;
}
