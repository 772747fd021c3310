/* Our decoder on bytes nobody here wrote: librdkafka producers (every
 * compression codec, plain and idempotent) produce into librdkafka's
 * in-process mock cluster, which stores the batches as received; a raw
 * Fetch v4 over loopback brings those exact bytes back.  We parse, check
 * the CRCs, decompress, decode every record against what was produced,
 * then append the batches to a floe log and read them back unchanged. */
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "test.h"
#include "util/buf.h"

#define NMSG 500

static const char *codec_names[] = {"none", "gzip", "snappy", "lz4", "zstd"};

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static void key_of(int i, char *k, size_t n)
{
    snprintf(k, n, "key-%d", i);
}
static size_t value_of(int i, char *v, size_t n)
{
    /* compressible but not trivial: repeated words and the index */
    int len = snprintf(v, n, "{\"i\":%d,\"text\":\"", i);
    for (int j = 0; j < i % 40 && (size_t)len + 12 < n; j++)
        len += snprintf(v + len, n - (size_t)len, "lorem%d ", j);
    len += snprintf(v + len, n - (size_t)len, "\"}");
    return (size_t)len;
}

/* Produce NMSG keyed messages with headers (every 5th has a null value)
 * with a librdkafka producer. */
static int produce(const char *bootstraps, const char *topic, const char *codec, bool idem)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr, sizeof errstr) ||
        rd_kafka_conf_set(conf, "compression.codec", codec, errstr, sizeof errstr) ||
        rd_kafka_conf_set(conf, "linger.ms", "50", errstr, sizeof errstr) ||
        rd_kafka_conf_set(conf, "batch.num.messages", "120", errstr, sizeof errstr) ||
        rd_kafka_conf_set(conf, "enable.idempotence", idem ? "true" : "false", errstr,
                          sizeof errstr)) {
        printf("# conf: %s\n", errstr);
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!rk) {
        printf("# producer: %s\n", errstr);
        return -1;
    }
    char k[32], v[600];
    for (int i = 0; i < NMSG; i++) {
        key_of(i, k, sizeof k);
        size_t vl = value_of(i, v, sizeof v);
        void *vp = i % 5 == 4 ? NULL : v;
        if (!vp) vl = 0;
        rd_kafka_resp_err_t e;
        do {
            e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                  RD_KAFKA_V_KEY(k, strlen(k)), RD_KAFKA_V_VALUE(vp, vl),
                                  RD_KAFKA_V_HEADER("hdr", "hv", 2),
                                  RD_KAFKA_V_HEADER("nullh", NULL, 0),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) rd_kafka_poll(rk, 10);
        } while (e == RD_KAFKA_RESP_ERR__QUEUE_FULL);
        if (e) {
            printf("# produce: %s\n", rd_kafka_err2str(e));
            rd_kafka_destroy(rk);
            return -1;
        }
    }
    rd_kafka_resp_err_t e = rd_kafka_flush(rk, 30000);
    rd_kafka_destroy(rk);
    if (e) printf("# flush: %s\n", rd_kafka_err2str(e));
    return e ? -1 : 0;
}

static int connect_to(const char *hostport)
{
    char host[64];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host) return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = 0;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int read_full(int fd, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Raw Fetch v4 of partition 0 of topic from offset; appends the records
 * bytes to out.  Returns 0 or -1. */
static int raw_fetch(const char *bootstrap, const char *topic, int64_t offset, floe_buf_t *out)
{
    floe_buf_t req = FLOE_BUF_INIT;
    floe_buf_append_be32(&req, 0); /* size, patched */
    floe_buf_append_be16(&req, 1); /* Fetch */
    floe_buf_append_be16(&req, 4);
    floe_buf_append_be32(&req, 7);
    floe_buf_append_be16(&req, 4);
    floe_buf_append(&req, "test", 4);
    floe_buf_append_be32(&req, (uint32_t)-1); /* replica id */
    floe_buf_append_be32(&req, 100);          /* max wait */
    floe_buf_append_be32(&req, 1);            /* min bytes */
    floe_buf_append_be32(&req, 64 << 20);     /* max bytes */
    floe_buf_append_u8(&req, 0);              /* read uncommitted */
    floe_buf_append_be32(&req, 1);
    floe_buf_append_be16(&req, (uint16_t)strlen(topic));
    floe_buf_append_str(&req, topic);
    floe_buf_append_be32(&req, 1);
    floe_buf_append_be32(&req, 0);
    floe_buf_append_be64(&req, (uint64_t)offset);
    floe_buf_append_be32(&req, 64 << 20);
    floe_wr_be32(req.data, (uint32_t)(req.len - 4));
    int fd = connect_to(bootstrap);
    int rc = -1;
    uint8_t *resp = NULL;
    if (fd < 0 || write(fd, req.data, req.len) != (ssize_t)req.len) goto out;
    uint8_t szb[4];
    if (read_full(fd, szb, 4) != 0) goto out;
    uint32_t n = floe_rd_be32(szb);
    if (n > (128u << 20)) goto out;
    resp = malloc(n);
    if (read_full(fd, resp, n) != 0) goto out;
    /* corr, throttle, [topic: name, [partition, err, hw, lso, aborted, records]] */
    size_t p = 8;
    if (n < p + 4 || floe_rd_be32(resp + p) != 1) goto out;
    p += 4;
    uint16_t tl = floe_rd_be16(resp + p);
    p += 2 + tl + 4; /* name, partition count (1) */
    int32_t part = (int32_t)floe_rd_be32(resp + p);
    int16_t perr = (int16_t)floe_rd_be16(resp + p + 4);
    p += 4 + 2 + 8 + 8;
    int32_t naborted = (int32_t)floe_rd_be32(resp + p);
    p += 4 + (naborted > 0 ? (size_t)naborted * 16 : 0);
    int32_t rlen = (int32_t)floe_rd_be32(resp + p);
    p += 4;
    if (part != 0 || perr != 0 || rlen < 0 || p + (size_t)rlen > n) {
        printf("# fetch: partition %d error %d records %d\n", part, perr, rlen);
        goto out;
    }
    floe_buf_append(out, resp + p, (size_t)rlen);
    rc = 0;
out:
    if (fd >= 0) close(fd);
    free(resp);
    floe_buf_free(&req);
    return rc;
}

/* Decode every batch of bytes, check the records against what produce()
 * sent; returns the number of records seen. */
static int check_batches(const uint8_t *p, size_t n, floe_compression_t codec, bool idem,
                         int *nbatches, int *ncodec)
{
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, p, n);
    const uint8_t *b;
    size_t blen;
    floe_batch_hdr_t h;
    floe_err_t err;
    floe_buf_t scratch = FLOE_BUF_INIT;
    int i = 0, rc;
    *nbatches = *ncodec = 0;
    while ((rc = floe_batch_iter_next(&it, &b, &blen, &h, &err)) == 1) {
        (*nbatches)++;
        /* librdkafka sends a batch plain when compressing did not help */
        if (floe_batch_compression(&h) == codec) (*ncodec)++;
        else
            CHECK_EQ(floe_batch_compression(&h), FLOE_COMPRESSION_NONE);
        if (idem) {
            CHECK(h.producer_id >= 0);
            CHECK_EQ(h.base_sequence, i);
        } else {
            CHECK_EQ(h.producer_id, -1);
        }
        CHECK_EQ(floe_batch_validate_records(b, blen, &h, &scratch, 0, &err), 0);
        floe_slice_t recs;
        CHECK_EQ(floe_batch_records(b, blen, &h, &scratch, 0, &recs, &err), 0);
        floe_record_iter_t ri;
        floe_record_iter_init(&ri, &h, recs);
        floe_record_t r;
        int k;
        while ((k = floe_record_iter_next(&ri, &r, &err)) == 1) {
            char key[32], val[600];
            key_of(i, key, sizeof key);
            size_t vl = value_of(i, val, sizeof val);
            CHECK(!r.key_null && floe_slice_eq(r.key, floe_slice_str(key)));
            if (i % 5 == 4) CHECK(r.value_null);
            else
                CHECK(!r.value_null && floe_slice_eq(r.value, floe_slice(val, vl)));
            CHECK_EQ(r.offset, i);
            CHECK_EQ(r.header_count, 2);
            floe_header_iter_t hi;
            floe_header_iter_init(&hi, &r);
            floe_record_header_t hh;
            CHECK_EQ(floe_header_iter_next(&hi, &hh), 1);
            CHECK(floe_slice_eq(hh.key, floe_slice_str("hdr")) &&
                  floe_slice_eq(hh.value, floe_slice_str("hv")));
            CHECK_EQ(floe_header_iter_next(&hi, &hh), 1);
            CHECK(floe_slice_eq(hh.key, floe_slice_str("nullh")) && hh.value_null);
            CHECK_EQ(floe_header_iter_next(&hi, &hh), 0);
            i++;
        }
        if (k != 0) printf("# records: %s\n", err.msg);
        CHECK_EQ(k, 0);
    }
    if (rc != 0) printf("# batches: %s\n", err.msg);
    CHECK_EQ(rc, 0);
    floe_buf_free(&scratch);
    return i;
}

/* The captured batches go through floe_log_append (validation, offsets)
 * and come back from floe_log_read byte for byte, offsets and leader
 * epoch aside (the log assigns those; librdkafka and the mock set
 * the same values here: offsets from 0, epoch 0). */
static void through_the_log(const floe_buf_t *cap, bool idem)
{
    char d[] = "/tmp/floe-test-rdk-XXXXXX";
    if (!mkdtemp(d)) abort();
    floe_log_t *l;
    floe_err_t err;
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, cap->data, cap->len);
    const uint8_t *b;
    size_t blen;
    floe_batch_hdr_t h;
    floe_buf_t copy = FLOE_BUF_INIT, expect = FLOE_BUF_INIT;
    while (floe_batch_iter_next(&it, &b, &blen, &h, &err) == 1) {
        floe_buf_reset(&copy);
        floe_buf_append(&copy, b, blen);
        floe_batch_set_base_offset(copy.data, 999); /* the log must overwrite it */
        floe_log_append_result_t r;
        CHECK_EQ(floe_log_append(l, copy.data, copy.len, -1, &r, &err), 0);
        CHECK_EQ(r.base_offset, h.base_offset);
        floe_buf_append(&expect, b, blen);
        floe_batch_set_leader_epoch(expect.data + expect.len - blen, 0);
        if (idem) {
            /* a retry of the same bytes is a duplicate */
            floe_buf_reset(&copy);
            floe_buf_append(&copy, b, blen);
            CHECK_EQ(floe_log_append(l, copy.data, copy.len, -1, &r, &err), 0);
            CHECK(r.duplicate);
            CHECK_EQ(r.base_offset, h.base_offset);
        }
    }
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_log_read(l, 0, 64 << 20, &out, NULL, &err), 0);
    CHECK_EQ(out.len, expect.len);
    CHECK(out.len == expect.len && memcmp(out.data, expect.data, out.len) == 0);
    floe_buf_free(&out);
    floe_buf_free(&copy);
    floe_buf_free(&expect);
    floe_log_close(l);
    nftw(d, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

static void librdkafka_batches_every_codec(void)
{
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    CHECK(rk != NULL);
    if (!rk) return;
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
    CHECK(mc != NULL);
    const char *bs = rd_kafka_mock_cluster_bootstraps(mc);
    for (int idem = 0; idem < 2; idem++) {
        for (int c = 0; c < 5; c++) {
            char topic[64];
            snprintf(topic, sizeof topic, "t-%s-%d", codec_names[c], idem);
            CHECK_EQ(rd_kafka_mock_topic_create(mc, topic, 1, 1), 0);
            if (produce(bs, topic, codec_names[c], idem) != 0) {
                CHECK(0);
                continue;
            }
            floe_buf_t cap = FLOE_BUF_INIT;
            int got = 0, nb = 0, ncodec = 0;
            /* the mock answers a fetch with part of the log: go on until
             * every record is in */
            while (got < NMSG) {
                size_t before = cap.len;
                if (raw_fetch(bs, topic, got, &cap) != 0 || cap.len == before) break;
                floe_batch_iter_t it;
                floe_batch_iter_init(&it, cap.data, cap.len);
                floe_batch_hdr_t h;
                floe_err_t err;
                got = 0;
                while (floe_batch_iter_next(&it, NULL, NULL, &h, &err) == 1)
                    got = (int)floe_batch_last_offset(&h) + 1;
            }
            CHECK_EQ(check_batches(cap.data, cap.len, (floe_compression_t)c, idem, &nb, &ncodec),
                     NMSG);
            CHECK(nb >= NMSG / 120);
            CHECK(ncodec >= 3);
            printf("# %s%s: %d records in %d batches (%d %s), %zu bytes\n", codec_names[c],
                   idem ? " idempotent" : "", NMSG, nb, ncodec, codec_names[c], cap.len);
            through_the_log(&cap, idem);
            floe_buf_free(&cap);
        }
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
}

TEST_MAIN(RUN(librdkafka_batches_every_codec))
