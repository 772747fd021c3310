/* libFuzzer target: opening a log directory whose first segment, offset
 * index and time index hold fuzzed bytes, either as the active segment or
 * (first byte & 2) as a sealed one followed by an empty active segment, so
 * that index loading and validation are fuzzed too.  Recovery must keep a
 * valid prefix, never crash, and opening must succeed whatever the bytes;
 * then every read, offset-for-time and an append work on what is left.
 * Input: mode byte, offset-index length / 8, time-index length / 12, the
 * index bytes, the time-index bytes, the segment bytes.  Batches with a
 * correct CRC are hard to reach by mutation, so when the mode byte is odd
 * the CRC of each batch is fixed up first. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "util/diag.h"

static char dir[64];

static void put(const char *name, const uint8_t *p, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) abort();
    if (n && write(fd, p, n) != (ssize_t)n) abort();
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        /* tmpfs when there is one: this target is file-system bound */
        snprintf(dir, sizeof dir, "%s/floe-fuzz-log-%d",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
        floe_diag_set_level(FLOE_DIAG_OFF);
    }
    if (size < 3) return 0;
    bool fix = data[0] & 1, sealed = data[0] & 2;
    size_t ilen = (size_t)data[1] * 8, tlen = (size_t)data[2] * 12;
    data += 3;
    size -= 3;
    if (ilen > size) ilen = size;
    if (tlen > size - ilen) tlen = size - ilen;
    const uint8_t *idx = data, *tidx = data + ilen, *seg = data + ilen + tlen;
    size_t slen = size - ilen - tlen;
    uint8_t *s = malloc(slen ? slen : 1);
    memcpy(s, seg, slen);
    if (fix) {
        size_t off = 0;
        while (off + FLOE_BATCH_HDR_SIZE <= slen) {
            uint32_t bl = floe_rd_be32(s + off + 8);
            size_t sz = (size_t)bl + FLOE_BATCH_LOG_OVERHEAD;
            if (bl < FLOE_BATCH_HDR_SIZE - FLOE_BATCH_LOG_OVERHEAD || sz > slen - off) break;
            floe_batch_update_crc(s + off, sz);
            off += sz;
        }
    }
    floe_log_t *l;
    floe_err_t err;
    /* a fresh directory each run, dropped at the end */
    if (floe_log_open(dir, NULL, &l, &err) != 0) abort();
    floe_log_close(l);
    put("00000000000000000000.log", s, slen);
    put("00000000000000000000.index", idx, ilen);
    put("00000000000000000000.timeindex", tidx, tlen);
    if (sealed) put("00000000000000100000.log", NULL, 0);
    free(s);
    /* recovery copes with any bytes: opening never fails on them */
    if (floe_log_open(dir, NULL, &l, &err) != 0) abort();
    int64_t start = floe_log_start_offset(l), end = floe_log_end_offset(l);
    if (start > end) abort();
    floe_buf_t out = FLOE_BUF_INIT;
    for (int64_t o = start; o < end && o < start + 64; o++) {
        floe_buf_reset(&out);
        int r = floe_log_read(l, o, 1 << 16, &out, NULL, &err);
        /* A recovered active segment reads back whole batches with valid
         * CRCs (none when o falls in a gap with no data after it).  A sealed
         * one is trusted when its index checks out, as Kafka trusts it, so
         * bytes inside it may be bad: then a read may fail or serve them,
         * but must not crash. */
        if (sealed) continue;
        if (r != 0) abort();
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, out.data, out.len);
        int rc;
        while ((rc = floe_batch_iter_next(&it, NULL, NULL, NULL, &err)) == 1) {
        }
        if (rc != 0) abort();
    }
    floe_log_offset_for_time(l, 0, NULL);
    floe_log_offset_for_time(l, INT64_MAX, NULL);
    /* an append continues at the end */
    floe_batch_builder_t *b = floe_batch_builder_new(NULL);
    floe_slice_t v = floe_slice_str("x");
    floe_batch_builder_add(b, 1, NULL, &v, NULL, 0, &err);
    floe_buf_reset(&out);
    floe_batch_builder_finish(b, &out, &err);
    floe_batch_builder_free(b);
    floe_log_append_result_t r;
    if (floe_log_append(l, out.data, out.len, -1, &r, &err) != 0 || r.base_offset != end) abort();
    floe_buf_free(&out);
    floe_log_drop(l, &err);
    return 0;
}
