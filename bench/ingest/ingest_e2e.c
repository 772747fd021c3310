/* bench/ingest (part 2): end to end through `floe serve`.
 *
 * Starts floe on free ports in a temp dir, creates a table topic
 * (table.commit.interval.ms=1000), and produces ~1 KiB JSON events with
 * librdkafka (acks=all) at FLOE_E2E_MB_S (50) for FLOE_E2E_SECS (10).
 * Freshness of a record = time from its acknowledgement until a commit
 * covers its offset (floe's /admin/tables, polled every 10 ms); sampled
 * every 50th record.  RSS from /proc: idle, and the peak under load, less
 * the bytes the partitions report buffered at that moment.  Done twice at
 * the same rate, with 4 and with 16 partitions: the growth between the two
 * runs per added partition is the memory per active partition, the rest
 * the fixed cost of the load (FLOE_E2E_PARTS=N: one run of N partitions).
 * Freshness figures are the 4-partition run's.
 * Last line: ingest_e2e mb_s=... p50_ms=... p99_ms=... rss_idle_mb=...
 * rss_load_mb=... rss_per_partition_mb=... rss_fixed_mb=...
 * rss_avg_per_partition_4_mb=... */
#include <limits.h>

#include "../e2e_run.h"

typedef struct run {
    double mb_s;
    int64_t p50, p99;
    double rss_idle, rss_load, buffered, beyond; /* MiB; beyond = load - idle - buffered */
} run_t;

/* One floe, one table topic of `parts` partitions, `secs` of produce at
 * `rate` MB/s (bench/e2e_run.h). */
static int run_once(const char *bin, int parts, double rate, int secs, run_t *r)
{
    const char *configs[] = {"table.commit.interval.ms", "1000", NULL};
    e2e_opts_t o = {
        .bin = bin, .parts = parts, .rate_mb_s = rate, .secs = secs, .configs = configs};
    e2e_result_t e;
    if (e2e_run(&o, &e) < 0) return -1;
    double per_part = ((e.rss_load - e.rss_idle) - e.buffered) / parts;
    printf("-- %d partitions\n", parts);
    printf("produced: %llu records, %.1f MB in %.1f s (%.1f MB/s), acks=all, %d partitions\n",
           (unsigned long long)e.sent, e.bytes / 1e6, e.produce_s, e.mb_s, parts);
    printf("freshness (ack -> committed snapshot), %d of %d samples: p50 %lld ms, p99 %lld ms\n",
           e.nfresh, e.nsamples, (long long)e.p50, (long long)e.p99);
    printf("floe heap in use at the peak: %.1f MiB\n", e.heap);
    printf(
        "floe RSS: idle %.1f MiB, peak under load %.1f MiB (%.1f MiB buffered then); per partition "
        "beyond buffers %.2f MiB\n",
        e.rss_idle, e.rss_load, e.buffered, per_part);
    r->mb_s = e.mb_s;
    r->p50 = e.p50;
    r->p99 = e.p99;
    r->rss_idle = e.rss_idle;
    r->rss_load = e.rss_load;
    r->buffered = e.buffered;
    r->beyond = r->rss_load - r->rss_idle - r->buffered;
    return 0;
}

int main(void)
{
    char bin[PATH_MAX];
    if (floe_proc_bin(bin, sizeof bin, "../../floe")) return 1;
    double rate = getenv("FLOE_E2E_MB_S") ? atof(getenv("FLOE_E2E_MB_S")) : 50;
    int secs = getenv("FLOE_E2E_SECS") ? atoi(getenv("FLOE_E2E_SECS")) : 10;
    /* Two runs at the same rate, 4 then 16 partitions: the memory that
     * grows with the partition count is the per-partition cost; what does
     * not (the producer's requests in flight, the shared encode and
     * compress buffers, the heap the memory policy keeps) is the fixed
     * cost of the load. */
    int few = 4, many = 16;
    if (getenv("FLOE_E2E_PARTS")) few = many = atoi(getenv("FLOE_E2E_PARTS"));
    if (few < 1 || few > E2E_MAXPARTS) few = many = 4;
    run_t a, b;
    if (run_once(bin, few, rate, secs, &a) < 0) return 1;
    if (many != few && run_once(bin, many, rate, secs, &b) < 0) return 1;
    double slope = many != few ? (b.beyond - a.beyond) / (many - few) : a.beyond / few;
    if (slope < 0) slope = 0;
    double fixed = a.beyond - slope * few;
    printf("-- per partition: %.2f MiB beyond buffers (RSS beyond idle and buffers: %.1f MiB at %d "
           "partitions, %.1f MiB at %d); fixed cost of the load %.1f MiB; %.2f MiB per partition "
           "averaged over %d\n",
           slope, a.beyond, few, many != few ? b.beyond : a.beyond, many, fixed, a.beyond / few,
           few);
    printf("ingest_e2e mb_s=%.1f p50_ms=%lld p99_ms=%lld rss_idle_mb=%.1f rss_load_mb=%.1f "
           "rss_per_partition_mb=%.2f rss_fixed_mb=%.1f rss_avg_per_partition_%d_mb=%.2f\n",
           a.mb_s, (long long)a.p50, (long long)a.p99, a.rss_idle, a.rss_load, slope, fixed, few,
           a.beyond / few);
    return 0;
}
