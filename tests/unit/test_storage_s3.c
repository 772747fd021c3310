/* The S3 FileIO against a real S3 server (Ceph radosgw, started here
 * through tests/integration/s3_server.sh): whole and ranged reads,
 * create-if-absent under a race, listings across continuation pages,
 * batch deletes, multipart uploads larger than the part size, aborts,
 * virtual-hosted addressing, https with a private CA, unsigned payloads,
 * and the errors a wrong key, a missing bucket and a dead endpoint give. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3_server.h"
#include "storage/s3.h"
#include "test.h"

static s3_server_t srv;
static char base[256]; /* s3://BUCKET/PREFIX */

static floe_fileio_t *open_io(floe_s3_config_t c)
{
    if (!c.endpoint) c.endpoint = srv.endpoint;
    c.region = srv.region;
    if (!c.access_key_id) c.access_key_id = srv.access_key_id;
    if (!c.secret_access_key) c.secret_access_key = srv.secret_access_key;
    c.path_style = true;
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_s3_new(&c, &e);
    if (!io) fprintf(stderr, "s3_new: %s\n", e.msg);
    return io;
}

static void reads_and_writes(void)
{
    floe_fileio_t *io = open_io((floe_s3_config_t){0});
    floe_err_t e;
    char p[400];
    snprintf(p, sizeof p, "%s/rw/a b+c.txt", base); /* a key that needs encoding */
    CHECK(floe_fileio_write(io, p, "hello world", 11, 0, &e) == 0);
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == 0);
    CHECK(b.len == 11 && !memcmp(b.data, "hello world", 11));
    b.len = 0;
    CHECK(floe_fileio_read(io, p, 5, &b, &e) == -1 && e.code == FLOE_ERANGE);
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, 6, 3, &b, &e) == 0);
    CHECK(b.len == 3 && !memcmp(b.data, "wor", 3));
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, 8, 100, &b, &e) == 0); /* cut at the end */
    CHECK(b.len == 3 && !memcmp(b.data, "rld", 3));
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, 11, 4, &b, &e) == 0); /* past the end: nothing */
    CHECK_EQ(b.len, 0);
    bool ex = false;
    CHECK(floe_fileio_exists(io, p, &ex, &e) == 0 && ex);
    char d[400];
    snprintf(d, sizeof d, "%s/rw/", base); /* a folder exists through its keys */
    CHECK(floe_fileio_exists(io, d, &ex, &e) == 0 && ex);
    d[strlen(d) - 1] = 0; /* without the '/': a key, and there is none */
    CHECK(floe_fileio_exists(io, d, &ex, &e) == 0 && !ex);
    strcat(d, "/");
    /* replace, then remove; removing again succeeds */
    CHECK(floe_fileio_write(io, p, "x", 1, 0, &e) == 0);
    b.len = 0;
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == 0 && b.len == 1);
    CHECK(floe_fileio_remove(io, p, &e) == 0);
    CHECK(floe_fileio_remove(io, p, &e) == 0);
    CHECK(floe_fileio_exists(io, p, &ex, &e) == 0 && !ex);
    CHECK(floe_fileio_exists(io, d, &ex, &e) == 0 && !ex);
    b.len = 0;
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == -1 && e.code == FLOE_ENOENT);
    CHECK(floe_fileio_read_range(io, p, 0, 4, &b, &e) == -1 && e.code == FLOE_ENOENT);
    /* an empty file */
    CHECK(floe_fileio_write(io, p, "", 0, 0, &e) == 0);
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == 0 && b.len == 0);
    /* rename: copy, then delete; noreplace refuses an existing target */
    char q[400];
    snprintf(q, sizeof q, "%s/rw/renamed", base);
    CHECK(floe_fileio_rename(io, p, q, true, &e) == 0);
    CHECK(floe_fileio_exists(io, p, &ex, &e) == 0 && !ex);
    CHECK(floe_fileio_exists(io, q, &ex, &e) == 0 && ex);
    CHECK(floe_fileio_write(io, p, "y", 1, 0, &e) == 0);
    CHECK(floe_fileio_rename(io, p, q, true, &e) == -1 && e.code == FLOE_EEXIST);
    floe_buf_free(&b);
    floe_fileio_free(io);
}

typedef struct racer {
    floe_fileio_t *io;
    const char *path;
    char body[32];
    int rc;
    floe_code_t code;
} racer_t;

static void *race(void *arg)
{
    racer_t *r = arg;
    floe_err_t e = {0};
    r->rc = floe_fileio_write(r->io, r->path, r->body, strlen(r->body), FLOE_IO_EXCL, &e);
    r->code = e.code;
    return NULL;
}

/* Eight writers create one key at once: one wins, the others see EEXIST,
 * and the object is the winner's. */
static void create_if_absent_race(void)
{
    floe_fileio_t *io = open_io((floe_s3_config_t){0});
    char p[400];
    snprintf(p, sizeof p, "%s/race/v1.metadata.json", base);
    racer_t r[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (racer_t){.io = io, .path = p};
        snprintf(r[i].body, sizeof r[i].body, "writer %d", i);
        CHECK(pthread_create(&th[i], NULL, race, &r[i]) == 0);
    }
    int wins = 0, winner = -1;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        if (r[i].rc == 0) {
            wins++;
            winner = i;
        } else {
            CHECK_EQ(r[i].code, FLOE_EEXIST);
        }
    }
    CHECK_EQ(wins, 1);
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t e;
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == 0);
    if (winner >= 0) CHECK_STR(floe_buf_cstr(&b), r[winner].body);
    /* and again, later: refused, unchanged */
    CHECK(floe_fileio_write(io, p, "late", 4, FLOE_IO_EXCL, &e) == -1 && e.code == FLOE_EEXIST);
    floe_buf_free(&b);
    floe_fileio_free(io);
}

/* 25 files and a folder listed 7 keys a page: every page is followed. */
static void list_pages_and_batch_delete(void)
{
    floe_fileio_t *io = open_io((floe_s3_config_t){.list_page = 7, .delete_page = 8});
    floe_err_t e;
    char p[400], d[400];
    snprintf(d, sizeof d, "%s/list", base);
    const char *paths[27];
    static char store[27][600];
    for (int i = 0; i < 25; i++) {
        snprintf(store[i], sizeof store[i], "%s/f%02d.bin", d, i);
        CHECK(floe_fileio_write(io, store[i], "abcdef", (size_t)(i % 6) + 1, 0, &e) == 0);
        paths[i] = store[i];
    }
    snprintf(store[25], sizeof store[25], "%s/sub/deeper.bin", d);
    CHECK(floe_fileio_write(io, store[25], "z", 1, 0, &e) == 0);
    paths[25] = store[25];
    snprintf(store[26], sizeof store[26], "%s/absent.bin", d);
    paths[26] = store[26];
    floe_fileio_entry_t *en = NULL;
    size_t n = 0;
    CHECK(floe_fileio_list_entries(io, d, &en, &n, &e) == 0);
    CHECK_EQ(n, 26);
    for (size_t i = 0; i < n && i < 25; i++) {
        snprintf(p, sizeof p, "f%02zu.bin", i);
        CHECK_STR(en[i].name, p);
        CHECK(!en[i].is_dir);
        CHECK_EQ(en[i].size, (int64_t)(i % 6) + 1);
        CHECK(en[i].mtime_ms > 1700000000000LL);
    }
    if (n == 26) {
        CHECK_STR(en[25].name, "sub");
        CHECK(en[25].is_dir);
    }
    floe_fileio_entries_free(en, n);
    char **names;
    CHECK(floe_fileio_list(io, d, &names, &n, &e) == 0 && n == 26);
    floe_fileio_names_free(names, n);
    /* 27 paths, 8 a request, one absent: all gone */
    bool done[27];
    CHECK(floe_fileio_remove_batch(io, paths, 27, done, &e) == 0);
    for (int i = 0; i < 27; i++) CHECK(done[i]);
    CHECK(floe_fileio_list(io, d, &names, &n, &e) == 0);
    CHECK_EQ(n, 0);
    floe_fileio_names_free(names, n);
    /* an absent folder lists as empty */
    snprintf(p, sizeof p, "%s/nothing-here", base);
    CHECK(floe_fileio_list(io, p, &names, &n, &e) == 0 && n == 0);
    floe_fileio_free(io);
}

/* The multipart uploads the store still holds for the bucket (boto3). */
static int open_uploads(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import boto3; from botocore.config import Config; "
             "s=boto3.client('s3', endpoint_url='%s', region_name='%s', aws_access_key_id='%s', "
             "aws_secret_access_key='%s', config=Config(s3={'addressing_style':'path'})); "
             "print(len(s.list_multipart_uploads(Bucket='%s').get('Uploads', [])))\"",
             srv.endpoint, srv.region, srv.access_key_id, srv.secret_access_key, srv.bucket);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = -1;
        pclose(p);
    }
    return n;
}

static void fill(uint8_t *b, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) b[i] = (uint8_t)((off + i) * 2654435761u >> 13);
}

/* 12 MiB and a bit with 5 MiB parts, two in flight: three parts, read
 * back byte for byte. */
static void multipart_upload(void)
{
    floe_fileio_t *io = open_io((floe_s3_config_t){.part_size = 5 << 20, .parts_in_flight = 2});
    floe_err_t e;
    char p[400];
    snprintf(p, sizeof p, "%s/big/data.parquet", base);
    size_t total = (12 << 20) + 12345, chunk = 100000;
    uint8_t *buf = malloc(chunk);
    floe_s3_stats_t st0, st1;
    floe_fileio_s3_stats(io, &st0);
    floe_outfile_t *f;
    CHECK(floe_fileio_create(io, p, 0, &f, &e) == 0);
    for (size_t off = 0; off < total; off += chunk) {
        size_t n = total - off < chunk ? total - off : chunk;
        fill(buf, n, off);
        CHECK(floe_outfile_write(f, buf, n, &e) == 0);
    }
    CHECK(floe_outfile_close(f, &e) == 0);
    floe_fileio_s3_stats(io, &st1);
    /* initiate, three parts, complete */
    CHECK_EQ(st1.requests - st0.requests, 5);
    floe_buf_t m = FLOE_BUF_INIT;
    CHECK(floe_fileio_s3_metrics(io, &m) == 0);
    const char *mt = floe_buf_cstr(&m);
    CHECK(strstr(mt, "floe_s3_requests_total{op=\"CreateMultipartUpload\",status=\"200\"} 1\n"));
    CHECK(strstr(mt, "floe_s3_requests_total{op=\"UploadPart\",status=\"200\"} 3\n"));
    CHECK(strstr(mt, "floe_s3_requests_total{op=\"CompleteMultipartUpload\",status=\"200\"} 1\n"));
    CHECK(strstr(mt, "floe_s3_request_seconds_count{op=\"UploadPart\"} 3\n"));
    CHECK(strstr(mt, "floe_s3_request_seconds_bucket{op=\"UploadPart\",le=\"+Inf\"} 3\n"));
    CHECK(strstr(mt, "floe_s3_bytes_total{direction=\"up\"} ") != NULL);
    floe_buf_free(&m);
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == 0);
    CHECK_EQ(b.len, total);
    uint8_t *want = malloc(total);
    fill(want, total, 0);
    CHECK(b.len == total && !memcmp(b.data, want, total));
    b.len = 0;
    CHECK(floe_fileio_read_range(io, p, (5 << 20) - 10, 20, &b, &e) == 0); /* across parts */
    CHECK(b.len == 20 && !memcmp(b.data, want + (5 << 20) - 10, 20));
    free(want);
    floe_buf_free(&b);
    CHECK_EQ(open_uploads(), 0);
    /* a file under the part size is one PUT */
    floe_fileio_s3_stats(io, &st0);
    CHECK(floe_fileio_write(io, p, buf, chunk, 0, &e) == 0);
    floe_fileio_s3_stats(io, &st1);
    CHECK_EQ(st1.requests - st0.requests, 1);
    free(buf);
    floe_fileio_free(io);
}

/* A write dropped after parts went up aborts its upload: nothing visible,
 * nothing left on the store. */
static void multipart_abort(void)
{
    floe_fileio_t *io = open_io((floe_s3_config_t){.part_size = 5 << 20});
    floe_err_t e;
    char p[400];
    snprintf(p, sizeof p, "%s/big/aborted.parquet", base);
    size_t n = (11 << 20);
    uint8_t *buf = calloc(1, n);
    floe_outfile_t *f;
    CHECK(floe_fileio_create(io, p, 0, &f, &e) == 0);
    CHECK(floe_outfile_write(f, buf, n, &e) == 0);
    CHECK_EQ(open_uploads(), 1);
    floe_outfile_abort(f);
    bool ex = true;
    CHECK(floe_fileio_exists(io, p, &ex, &e) == 0 && !ex);
    CHECK_EQ(open_uploads(), 0);
    /* a part the store refuses (a bucket that does not exist): the close
     * fails, with the store's words */
    char q[400];
    snprintf(q, sizeof q, "s3://no-such-bucket-floe/x.parquet");
    CHECK(floe_fileio_create(io, q, 0, &f, &e) == 0);
    CHECK(floe_outfile_write(f, buf, n, &e) == -1);
    CHECK(strstr(e.msg, "NoSuchBucket") != NULL);
    floe_outfile_abort(f);
    free(buf);
    floe_fileio_free(io);
}

/* Other ways to the same store, each reading what another wrote:
 * virtual-hosted requests (BUCKET.localhost:PORT: the server's rgw dns
 * name is localhost, and curl resolves *.localhost to the loopback), https
 * with a certificate of a private CA (ca_file, else AWS_CA_BUNDLE), and
 * data payloads signed or sent unsigned.  A certificate nobody vouches
 * for fails at once, not after retries. */
static void addressing_and_tls(void)
{
    char vhost[160];
    snprintf(vhost, sizeof vhost, "http://localhost%s", strrchr(srv.endpoint, ':'));
    const struct {
        const char *endpoint;
        bool path_style;
        const char *ca_file;
        floe_s3_payload_signing_t sign;
    } ways[] = {
        {vhost, false, NULL, FLOE_S3_SIGN_AUTO},
        {vhost, false, NULL, FLOE_S3_SIGN_NEVER},
        {srv.https_endpoint, false, srv.ca_file, FLOE_S3_SIGN_AUTO},
        {srv.https_endpoint, true, srv.ca_file, FLOE_S3_SIGN_ALWAYS},
    };
    floe_fileio_t *plain = open_io((floe_s3_config_t){0});
    floe_err_t e;
    size_t total = (11 << 20) + 777, chunk = 1 << 20;
    uint8_t *want = malloc(total);
    fill(want, total, 7);
    unsetenv("AWS_CA_BUNDLE");
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        floe_s3_config_t c = {.endpoint = ways[w].endpoint,
                              .region = srv.region,
                              .access_key_id = srv.access_key_id,
                              .secret_access_key = srv.secret_access_key,
                              .path_style = ways[w].path_style,
                              .ca_file = ways[w].ca_file,
                              .payload_signing = ways[w].sign,
                              .part_size = 5 << 20,
                              .parts_in_flight = 2};
        floe_fileio_t *io = floe_fileio_s3_new(&c, &e);
        CHECK(io != NULL);
        if (!io) continue;
        char dir[400], big[450], small[450];
        snprintf(dir, sizeof dir, "%s/ways/%zu", base, w);
        snprintf(big, sizeof big, "%s/big", dir);
        snprintf(small, sizeof small, "%s/small", dir);
        floe_outfile_t *f;
        CHECK(floe_fileio_create(io, big, 0, &f, &e) == 0);
        for (size_t off = 0; off < total; off += chunk)
            CHECK(floe_outfile_write(f, want + off, total - off < chunk ? total - off : chunk,
                                     &e) == 0);
        CHECK(floe_outfile_close(f, &e) == 0);
        CHECK(floe_fileio_write(io, small, "hi", 2, FLOE_IO_EXCL, &e) == 0);
        CHECK(floe_fileio_write(io, small, "ho", 2, FLOE_IO_EXCL, &e) == -1 &&
              e.code == FLOE_EEXIST);
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK(floe_fileio_read(plain, big, 0, &b, &e) == 0); /* path-style, http */
        CHECK(b.len == total && !memcmp(b.data, want, total));
        b.len = 0;
        CHECK(floe_fileio_write(plain, small, "hey", 3, 0, &e) == 0);
        CHECK(floe_fileio_read(io, small, 0, &b, &e) == 0 && b.len == 3 &&
              !memcmp(b.data, "hey", 3));
        b.len = 0;
        CHECK(floe_fileio_read_range(io, big, (5 << 20) - 3, 6, &b, &e) == 0);
        CHECK(b.len == 6 && !memcmp(b.data, want + (5 << 20) - 3, 6));
        floe_buf_free(&b);
        floe_fileio_entry_t *en = NULL;
        size_t n = 0;
        CHECK(floe_fileio_list_entries(io, dir, &en, &n, &e) == 0 && n == 2);
        floe_fileio_entries_free(en, n);
        const char *both[2] = {big, small};
        CHECK(floe_fileio_remove_batch(io, both, 2, NULL, &e) == 0);
        bool ex = true;
        CHECK(floe_fileio_exists(plain, big, &ex, &e) == 0 && !ex);
        floe_s3_stats_t st;
        floe_fileio_s3_stats(io, &st);
        CHECK_EQ(st.retries, 0);
        floe_fileio_free(io);
    }
    free(want);

    char p[400];
    snprintf(p, sizeof p, "%s/ways/ca", base);
    floe_s3_config_t c = {.endpoint = srv.https_endpoint,
                          .region = srv.region,
                          .access_key_id = srv.access_key_id,
                          .secret_access_key = srv.secret_access_key};
    floe_fileio_t *io = floe_fileio_s3_new(&c, &e);
    CHECK(io && floe_fileio_write(io, p, "x", 1, 0, &e) == -1 && e.code == FLOE_EIO);
    CHECK(io && strstr(e.msg, "certificate") != NULL);
    if (io && !strstr(e.msg, "certificate")) fprintf(stderr, "# %s\n", e.msg);
    floe_s3_stats_t st = {0};
    if (io) floe_fileio_s3_stats(io, &st);
    CHECK_EQ(st.requests, 1);
    floe_fileio_free(io);
    setenv("AWS_CA_BUNDLE", srv.ca_file, 1);
    io = floe_fileio_s3_new(&c, &e);
    CHECK(io && floe_fileio_write(io, p, "x", 1, 0, &e) == 0);
    unsetenv("AWS_CA_BUNDLE");
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_fileio_read(plain, p, 0, &b, &e) == 0 && b.len == 1);
    floe_buf_free(&b);
    floe_fileio_free(io);
    floe_fileio_free(plain);
}

/* A wrong secret, a missing bucket and a dead endpoint: one clear error
 * each, no retry storm. */
static void errors(void)
{
    floe_err_t e;
    char p[400];
    snprintf(p, sizeof p, "%s/err/x", base);
    floe_fileio_t *io = open_io((floe_s3_config_t){.secret_access_key = "wrong-secret"});
    CHECK(floe_fileio_write(io, p, "x", 1, 0, &e) == -1);
    CHECK_EQ(e.code, FLOE_EIO);
    CHECK(strstr(e.msg, "SignatureDoesNotMatch") != NULL);
    floe_s3_stats_t st;
    floe_fileio_s3_stats(io, &st);
    CHECK_EQ(st.retries, 0);
    floe_buf_t m = FLOE_BUF_INIT;
    CHECK(floe_fileio_s3_metrics(io, &m) == 0);
    CHECK(strstr(floe_buf_cstr(&m), "floe_s3_requests_total{op=\"PutObject\",status=\"403\"} 1\n"));
    floe_buf_free(&m);
    floe_fileio_free(io);

    io = open_io((floe_s3_config_t){0});
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_fileio_read(io, "s3://no-such-bucket-floe/x", 0, &b, &e) == -1);
    CHECK(strstr(e.msg, "NoSuchBucket") != NULL);
    CHECK(floe_fileio_write(io, "s3://no-such-bucket-floe/x", "x", 1, FLOE_IO_EXCL, &e) == -1);
    CHECK(strstr(e.msg, "NoSuchBucket") != NULL);
    CHECK(floe_fileio_write(io, "/local/path", "x", 1, 0, &e) == -1 && e.code == FLOE_EINVAL);
    floe_fileio_free(io);

    /* nothing listens there: bounded retries, then an I/O error */
    io = open_io((floe_s3_config_t){.endpoint = "http://127.0.0.1:1", .max_attempts = 3});
    CHECK(floe_fileio_read(io, p, 0, &b, &e) == -1);
    CHECK_EQ(e.code, FLOE_EIO);
    floe_fileio_s3_stats(io, &st);
    CHECK_EQ(st.requests, 3);
    CHECK_EQ(st.retries, 2);
    CHECK(floe_fileio_s3_metrics(io, &m) == 0);
    CHECK(strstr(floe_buf_cstr(&m), "floe_s3_requests_total{op=\"GetObject\",status=\"0\"} 3\n"));
    CHECK(strstr(floe_buf_cstr(&m), "floe_s3_retries_total 2\n"));
    floe_buf_free(&m);
    floe_fileio_free(io);
    floe_buf_free(&b);

    /* credentials from the environment, then from ~/.aws/credentials */
    floe_s3_config_t ce = {.endpoint = srv.endpoint, .region = srv.region, .path_style = true};
    setenv("AWS_ACCESS_KEY_ID", srv.access_key_id, 1);
    setenv("AWS_SECRET_ACCESS_KEY", srv.secret_access_key, 1);
    io = floe_fileio_s3_new(&ce, &e);
    CHECK(io && floe_fileio_write(io, p, "env", 3, 0, &e) == 0);
    floe_fileio_free(io);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    char cred[300];
    snprintf(cred, sizeof cred, "%s/credentials", srv.dir);
    FILE *cf = fopen(cred, "w");
    if (cf) {
        fprintf(cf,
                "[other]\naws_access_key_id = nope\n\n[default]\naws_access_key_id = %s\n"
                "aws_secret_access_key=%s\n",
                srv.access_key_id, srv.secret_access_key);
        fclose(cf);
    }
    setenv("AWS_SHARED_CREDENTIALS_FILE", cred, 1);
    io = floe_fileio_s3_new(&ce, &e);
    CHECK(io && floe_fileio_write(io, p, "file", 4, 0, &e) == 0);
    floe_fileio_free(io);
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
    setenv("HOME", srv.dir, 1); /* no ~/.aws there */
    CHECK(floe_fileio_s3_new(&ce, &e) == NULL && e.code == FLOE_EINVAL);

    floe_s3_config_t c = {.endpoint = "ftp://x", .access_key_id = "a", .secret_access_key = "b"};
    CHECK(floe_fileio_s3_new(&c, &e) == NULL && e.code == FLOE_EINVAL);
    c.endpoint = NULL;
    c.part_size = 1 << 20;
    CHECK(floe_fileio_s3_new(&c, &e) == NULL && e.code == FLOE_EINVAL);
}

int main(void)
{
    char why[600];
    int rc = s3_server_start(&srv, why, sizeof why);
    if (rc == 1) {
        printf("ok - storage_s3 # SKIP %s\n", why);
        return 0;
    }
    if (rc < 0) {
        printf("not ok - storage_s3: %s\n", why);
        return 1;
    }
    snprintf(base, sizeof base, "s3://%s/t%d", srv.bucket, (int)getpid());
    RUN(reads_and_writes);
    RUN(create_if_absent_race);
    RUN(list_pages_and_batch_delete);
    RUN(multipart_upload);
    RUN(multipart_abort);
    RUN(addressing_and_tls);
    RUN(errors);
    s3_server_stop(&srv);
    return t_tests_failed ? 1 : 0;
}
