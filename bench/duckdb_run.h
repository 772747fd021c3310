/* The DuckDB side of a benchmark: a node script printing one line
 * "duckdb secs=S bytes=B rows=N cpu=C" (the duckdb_*.mjs scripts of the
 * benches). */
#ifndef FLOE_BENCH_DUCKDB_RUN_H
#define FLOE_BENCH_DUCKDB_RUN_H

#include <stdio.h>

/* Run shell command cmd and read its figures; 0, or -1 (with a line on
 * stderr) when it failed or printed no positive times. */
static inline int bench_duckdb_run(const char *cmd, double *secs, double *bytes, double *rows,
                                   double *cpu)
{
    FILE *pp = popen(cmd, "r");
    int n =
        pp ? fscanf(pp, "duckdb secs=%lf bytes=%lf rows=%lf cpu=%lf", secs, bytes, rows, cpu) : 0;
    if (pp) pclose(pp);
    if (n != 4 || *secs <= 0 || *cpu <= 0) {
        fprintf(stderr, "the DuckDB run failed\n");
        return -1;
    }
    return 0;
}

#endif
