/* Golden batches written by other clients' own encoders (files made by
 * tests/unit/data/gen_kafka_python.py and gen_kafkajs.js): kafka-python
 * with every codec (its snappy is snappy-java's xerial framing, in several
 * blocks) and kafkajs (none, gzip).  Each decodes to the records the
 * generator wrote, and the log accepts and serves it unchanged. */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/batch.h"
#include "log/log.h"
#include "test.h"

#define N 400

static int load(const char *name, floe_buf_t *out)
{
    const char *root = getenv("FLOE_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/unit/data/%s", root ? root : ".", name);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("# cannot open %s\n", path);
        return -1;
    }
    uint8_t buf[65536];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) floe_buf_append(out, buf, (size_t)r);
    close(fd);
    return 0;
}

static size_t value_of(int i, char *v, size_t n)
{
    int len = snprintf(v, n, "{\"i\":%d,\"text\":\"", i);
    for (int j = 0; j < i % 40; j++) len += snprintf(v + len, n - (size_t)len, "lorem%d ", j);
    len += snprintf(v + len, n - (size_t)len, "\"}");
    return (size_t)len;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

/* Decode the one batch in b; nullh: whether the generator added the
 * null-valued header. */
static void check_file(const char *name, int codec, bool nullh)
{
    floe_buf_t b = FLOE_BUF_INIT;
    if (load(name, &b) != 0) {
        CHECK(0);
        return;
    }
    floe_batch_hdr_t h;
    floe_err_t err;
    CHECK_EQ(floe_batch_parse_hdr(b.data, b.len, &h, &err), 0);
    CHECK_EQ(floe_batch_size(&h), b.len);
    CHECK_EQ(floe_batch_compression(&h), codec);
    CHECK_EQ(h.record_count, N);
    CHECK_EQ(h.base_timestamp, 1700000000000);
    floe_buf_t scratch = FLOE_BUF_INIT;
    CHECK_EQ(floe_batch_validate_records(b.data, b.len, &h, &scratch, 0, &err), 0);
    floe_slice_t recs;
    CHECK_EQ(floe_batch_records(b.data, b.len, &h, &scratch, 0, &recs, &err), 0);
    floe_record_iter_t it;
    floe_record_iter_init(&it, &h, recs);
    floe_record_t r;
    int i = 0, rc;
    while ((rc = floe_record_iter_next(&it, &r, &err)) == 1) {
        char key[32], val[600];
        snprintf(key, sizeof key, "key-%d", i);
        size_t vl = value_of(i, val, sizeof val);
        CHECK(!r.key_null && floe_slice_eq(r.key, floe_slice_str(key)));
        if (i % 5 == 4) CHECK(r.value_null);
        else
            CHECK(!r.value_null && floe_slice_eq(r.value, floe_slice(val, vl)));
        CHECK_EQ(r.timestamp, 1700000000000 + i);
        CHECK_EQ(r.offset, i);
        floe_header_iter_t hi;
        floe_header_iter_init(&hi, &r);
        floe_record_header_t hh;
        CHECK_EQ(floe_header_iter_next(&hi, &hh), 1);
        CHECK(floe_slice_eq(hh.key, floe_slice_str("hdr")) &&
              floe_slice_eq(hh.value, floe_slice_str("hv")));
        if (nullh) {
            CHECK_EQ(floe_header_iter_next(&hi, &hh), 1);
            CHECK(floe_slice_eq(hh.key, floe_slice_str("nullh")) && hh.value_null);
        }
        CHECK_EQ(floe_header_iter_next(&hi, &hh), 0);
        i++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(i, N);
    /* through the log: accepted, offsets assigned, served as stored */
    char d[] = "/tmp/floe-test-golden-XXXXXX";
    if (!mkdtemp(d)) abort();
    floe_log_t *l;
    CHECK_EQ(floe_log_open(d, NULL, &l, &err), 0);
    floe_buf_t copy = FLOE_BUF_INIT, out = FLOE_BUF_INIT;
    for (int k = 0; k < 2; k++) {
        floe_buf_reset(&copy);
        floe_buf_append(&copy, b.data, b.len);
        floe_log_append_result_t res;
        CHECK_EQ(floe_log_append(l, copy.data, copy.len, -1, &res, &err), 0);
        CHECK_EQ(res.base_offset, k * N);
    }
    CHECK_EQ(floe_log_read(l, N, 1 << 20, &out, NULL, &err), 0);
    CHECK_EQ(out.len, b.len);
    floe_batch_set_base_offset(b.data, N);
    floe_batch_set_leader_epoch(b.data, 0);
    CHECK(out.len == b.len && memcmp(out.data, b.data, b.len) == 0);
    floe_log_close(l);
    nftw(d, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
    floe_buf_free(&copy);
    floe_buf_free(&out);
    floe_buf_free(&scratch);
    floe_buf_free(&b);
}

static void kafka_python_none(void)
{
    check_file("kafka_python_none.bin", FLOE_COMPRESSION_NONE, true);
}
static void kafka_python_gzip(void)
{
    check_file("kafka_python_gzip.bin", FLOE_COMPRESSION_GZIP, true);
}
static void kafka_python_lz4(void)
{
    check_file("kafka_python_lz4.bin", FLOE_COMPRESSION_LZ4, true);
}
static void kafka_python_zstd(void)
{
    check_file("kafka_python_zstd.bin", FLOE_COMPRESSION_ZSTD, true);
}

/* The snappy file is snappy-java framed, with more than one block. */
static void kafka_python_snappy_xerial(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(load("kafka_python_snappy.bin", &b), 0);
    static const uint8_t magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    CHECK(b.len > 80 && memcmp(b.data + FLOE_BATCH_HDR_SIZE, magic, 8) == 0);
    uint32_t first_block = b.len > 80 ? floe_rd_be32(b.data + FLOE_BATCH_HDR_SIZE + 16) : 0;
    CHECK(FLOE_BATCH_HDR_SIZE + 20 + first_block < b.len); /* a second block follows */
    floe_buf_free(&b);
    check_file("kafka_python_snappy.bin", FLOE_COMPRESSION_SNAPPY, true);
}

static void kafkajs_none(void)
{
    check_file("kafkajs_none.bin", FLOE_COMPRESSION_NONE, false);
}
static void kafkajs_gzip(void)
{
    check_file("kafkajs_gzip.bin", FLOE_COMPRESSION_GZIP, false);
}

TEST_MAIN(RUN(kafka_python_none); RUN(kafka_python_gzip); RUN(kafka_python_snappy_xerial);
          RUN(kafka_python_lz4); RUN(kafka_python_zstd); RUN(kafkajs_none); RUN(kafkajs_gzip))
