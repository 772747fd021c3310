/* bench/s3: uploads to an S3 server, floe's S3 FileIO against boto3.
 *
 * Starts the tests' radosgw (tests/integration/s3_server.sh; it collects
 * deleted objects within seconds, so its memstore does not fill up), writes
 * a FLOE_S3_BENCH_MB file (default 1024) of pseudo-random bytes to local
 * disk, then, in FLOE_S3_BENCH_ROUNDS alternating rounds (default 5), uploads
 * the same file over http
 *   - with floe's FileIO (read in 1 MiB chunks and written through
 *     floe_fileio_create/floe_outfile_write: a multipart upload streamed with
 *     16 MiB parts, 4 in flight, payloads signed as s3.payload-signing=auto
 *     does over http),
 *   - with python3-boto3's upload_file (Debian's, /usr/bin/python3: the same
 *     part size and concurrency; botocore signs payloads over http too),
 *   - with floe's FileIO again, payloads unsigned (s3.payload-signing=false,
 *     what auto does over https), to show what signing costs,
 * each object checked for its size and deleted after its round.  Prints the
 * median MB/s of each (the ratio is floe's signed median against boto3's)
 * and the median CPU seconds each client spent on the file,
 * and this process's peak resident memory while floe uploaded (VmHWM:
 * bounded by the parts in flight, (4 + 1) x 16 MiB, not the file size).
 * Last line: s3 mb=... floe_mb_s=... boto3_mb_s=... ratio=...
 * floe_unsigned_mb_s=... floe_cpu_s=... boto3_cpu_s=... floe_unsigned_cpu_s=...
 * peak_rss_mb=... part_mb=16 in_flight=4 rounds=...
 * Without the Ceph and radosgw packages it says so and exits 0. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/s3.h"
#include "util/clock.h"

#include "../../tests/unit/s3_server.h"
#include "../xorshift.h"

#define CHUNK ((size_t)1 << 20)
#define PART_MB 16
#define IN_FLIGHT 4

static long vm_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t l = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, l)) kb = atol(line + l);
    if (f) fclose(f);
    return kb;
}

/* CPU seconds (user + system, every thread) this process has used. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Seconds the upload took; *cpu gets the CPU seconds it used. */
static double floe_upload(floe_fileio_t *io, const char *file, const char *url, size_t total,
                          double *cpu)
{
    floe_err_t e;
    int fd = open(file, O_RDONLY);
    uint8_t *buf = malloc(CHUNK);
    floe_outfile_t *f = NULL;
    if (fd < 0 || !buf || floe_fileio_create(io, url, 0, &f, &e) < 0) {
        fprintf(stderr, "s3_bench: cannot start the upload\n");
        exit(1);
    }
    int64_t t0 = floe_mono_ns();
    double c0 = cpu_s();
    size_t done = 0;
    while (done < total) {
        ssize_t n = read(fd, buf, CHUNK);
        if (n <= 0 || floe_outfile_write(f, buf, (size_t)n, &e) < 0) {
            fprintf(stderr, "s3_bench: floe write failed: %s\n", n <= 0 ? "short read" : e.msg);
            exit(1);
        }
        done += (size_t)n;
    }
    if (floe_outfile_close(f, &e) < 0) {
        fprintf(stderr, "s3_bench: floe close failed: %s\n", e.msg);
        exit(1);
    }
    double s = (double)(floe_mono_ns() - t0) / 1e9;
    *cpu = cpu_s() - c0;
    close(fd);
    free(buf);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The object at url is total bytes; then it goes. */
static void check_and_remove(floe_fileio_t *io, const char *bucket, const char *url, size_t total)
{
    floe_fileio_entry_t *en;
    size_t n;
    floe_err_t e;
    char dir[400];
    snprintf(dir, sizeof dir, "s3://%s/bench", bucket);
    if (floe_fileio_list_entries(io, dir, &en, &n, &e) < 0 || n != 1 ||
        en[0].size != (int64_t)total) {
        fprintf(stderr, "s3_bench: the uploaded object is not %zu bytes\n", total);
        exit(1);
    }
    floe_fileio_entries_free(en, n);
    if (floe_fileio_remove(io, url, &e) < 0) {
        fprintf(stderr, "s3_bench: %s\n", e.msg);
        exit(1);
    }
}

static double boto3_upload(const s3_server_t *srv, const char *file, const char *key, double *cpu)
{
    char cmd[3000];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import boto3, time, sys, resource\n"
             "from botocore.config import Config\n"
             "from boto3.s3.transfer import TransferConfig\n"
             "s=boto3.client('s3', endpoint_url='%s', region_name='%s', aws_access_key_id='%s',"
             " aws_secret_access_key='%s', config=Config(s3={'addressing_style':'path'},"
             " max_pool_connections=%d))\n"
             "tc=TransferConfig(multipart_threshold=%d<<20, multipart_chunksize=%d<<20,"
             " max_concurrency=%d)\n"
             "cpu=lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])\n"
             "t=time.monotonic(); c=cpu(); s.upload_file('%s', '%s', '%s', Config=tc);"
             " print(time.monotonic()-t, cpu()-c)\"",
             srv->endpoint, srv->region, srv->access_key_id, srv->secret_access_key, IN_FLIGHT + 2,
             PART_MB, PART_MB, IN_FLIGHT, file, srv->bucket, key);
    FILE *p = popen(cmd, "r");
    double s = -1;
    if (!p || fscanf(p, "%lf %lf", &s, cpu) != 2) s = -1;
    if (p && pclose(p) != 0) s = -1;
    if (s <= 0) {
        fprintf(stderr, "s3_bench: the boto3 upload failed\n");
        exit(1);
    }
    return s;
}

int main(void)
{
    const char *mbs = getenv("FLOE_S3_BENCH_MB"), *rs = getenv("FLOE_S3_BENCH_ROUNDS");
    size_t mb = mbs ? (size_t)atol(mbs) : 1024;
    int rounds = rs ? atoi(rs) : 5;
    if (mb < 1 || rounds < 1 || rounds > 99) return fprintf(stderr, "s3_bench: bad settings\n"), 1;
    size_t total = mb << 20;
    /* room for a few objects: radosgw collects deleted ones within seconds */
    char mem[32];
    snprintf(mem, sizeof mem, "%zu", 4 * total + ((size_t)1 << 30));
    setenv("S3_MEMSTORE_BYTES", mem, 0);
    s3_server_t srv;
    char why[600];
    int rc = s3_server_start(&srv, why, sizeof why);
    if (rc == 1) {
        printf("s3 skipped: %s\n", why);
        return 0;
    }
    if (rc < 0) return fprintf(stderr, "s3_bench: %s\n", why), 1;
    char file[300];
    snprintf(file, sizeof file, "%s/upload.bin", srv.dir);
    FILE *f = fopen(file, "wb");
    uint64_t *chunk = malloc(CHUNK);
    for (size_t done = 0; f && chunk && done < total; done += CHUNK) {
        for (size_t i = 0; i < CHUNK / 8; i++) chunk[i] = bench_next();
        fwrite(chunk, 1, total - done < CHUNK ? total - done : CHUNK, f);
    }
    if (!f || fclose(f) != 0) return fprintf(stderr, "s3_bench: cannot write %s\n", file), 1;
    free(chunk);
    floe_s3_config_t c = {.endpoint = srv.endpoint,
                          .region = srv.region,
                          .access_key_id = srv.access_key_id,
                          .secret_access_key = srv.secret_access_key,
                          .path_style = true,
                          .part_size = (size_t)PART_MB << 20,
                          .parts_in_flight = IN_FLIGHT};
    floe_err_t e;
    floe_fileio_t *io = floe_fileio_s3_new(&c, &e);
    c.payload_signing = FLOE_S3_SIGN_NEVER;
    floe_fileio_t *io_unsigned = io ? floe_fileio_s3_new(&c, &e) : NULL;
    if (!io_unsigned) return fprintf(stderr, "s3_bench: %s\n", e.msg), 1;
    long rss0 = vm_kb("VmRSS:");
    double t_floe[99], t_boto[99], t_uns[99], c_floe[99], c_boto[99], c_uns[99];
    long peak = 0;
    char url[400];
    for (int r = 0; r < rounds; r++) {
        snprintf(url, sizeof url, "s3://%s/bench/floe-%d.bin", srv.bucket, r);
        t_floe[r] = floe_upload(io, file, url, total, &c_floe[r]);
        long hwm = vm_kb("VmHWM:");
        if (hwm > peak) peak = hwm;
        check_and_remove(io, srv.bucket, url, total);
        char key[64];
        snprintf(key, sizeof key, "bench/boto3-%d.bin", r);
        t_boto[r] = boto3_upload(&srv, file, key, &c_boto[r]);
        snprintf(url, sizeof url, "s3://%s/%s", srv.bucket, key);
        check_and_remove(io, srv.bucket, url, total);
        snprintf(url, sizeof url, "s3://%s/bench/unsigned-%d.bin", srv.bucket, r);
        t_uns[r] = floe_upload(io_unsigned, file, url, total, &c_uns[r]);
        check_and_remove(io, srv.bucket, url, total);
        printf("round %d: floe %.1f MB/s (%.2f s CPU), boto3 %.1f MB/s (%.2f s CPU), floe unsigned "
               "%.1f MB/s (%.2f s CPU)\n",
               r + 1, (double)mb / t_floe[r], c_floe[r], (double)mb / t_boto[r], c_boto[r],
               (double)mb / t_uns[r], c_uns[r]);
        fflush(stdout);
    }
    double mf = median(t_floe, rounds), mbt = median(t_boto, rounds), mu = median(t_uns, rounds);
    double cf = median(c_floe, rounds), cb = median(c_boto, rounds), cu = median(c_uns, rounds);
    floe_fileio_free(io_unsigned);
    floe_fileio_free(io);
    s3_server_stop(&srv);
    printf("# peak RSS %.1f MB (%.1f MB before the uploads) while floe uploaded %zu MB; its "
           "part buffers: (%d in flight + 1) x %d MiB = %d MiB\n",
           (double)peak / 1024, (double)rss0 / 1024, mb, IN_FLIGHT, PART_MB,
           (IN_FLIGHT + 1) * PART_MB);
    printf("s3 mb=%zu floe_mb_s=%.1f boto3_mb_s=%.1f ratio=%.2f floe_unsigned_mb_s=%.1f "
           "floe_cpu_s=%.2f boto3_cpu_s=%.2f floe_unsigned_cpu_s=%.2f peak_rss_mb=%.1f part_mb=%d "
           "in_flight=%d rounds=%d\n",
           mb, (double)mb / mf, (double)mb / mbt, mbt / mf, (double)mb / mu, cf, cb, cu,
           (double)peak / 1024, PART_MB, IN_FLIGHT, rounds);
    return 0;
}
