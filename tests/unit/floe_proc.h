/* The C side of the integration-test harness, for the unit tests and
 * benchmarks that drive a real `floe serve` (tests/integration/lib.sh and
 * floe_serve.py are the shell and Python sides).  All three behave the
 * same: free ports (port 0), a bounded wait for the line
 * "floe ready kafka=HOST:PORT http=HOST:PORT data=DIR" (FLOE_READY_TIMEOUT
 * seconds, default 60) that reports floe's last log lines when it exits
 * first, SIGTERM with a SIGKILL after FLOE_STOP_TIMEOUT seconds (60), and a
 * SIGKILL for every floe still running when the program exits, returns
 * from main, or dies of SIGTERM, SIGINT or SIGHUP.
 *
 * Single-threaded use: start and stop from one thread. */
#ifndef FLOE_TESTS_FLOE_PROC_H
#define FLOE_TESTS_FLOE_PROC_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct floe_proc {
    pid_t pid;          /* > 0 while floe runs */
    char log[PATH_MAX]; /* DATA.log: floe's stdout and stderr, appended */
    char kafka[128];    /* HOST:PORT of the Kafka listener, after a start */
    char http[128];     /* HOST:PORT of the HTTP listener */
} floe_proc_t;

/* The floe binary into out: $FLOE_BIN when set, else `rel` resolved against
 * the directory of the running executable (e.g. "../floe" for a unit test
 * in build/tests).  -1 when it does not fit. */
int floe_proc_bin(char *out, size_t size, const char *rel);

/* Start `bin serve --data-dir data [--config config] --listen 127.0.0.1:0
 * --http 127.0.0.1:0` and wait for its ready line; p->kafka and p->http
 * then hold the listeners.  data is created by floe; config may be NULL.
 * Strings are borrowed for the call.  Returns 0, or -1 with why (one line,
 * floe's last log lines included) when floe exits before it is ready or
 * stays silent for FLOE_READY_TIMEOUT seconds (then it is killed). */
int floe_proc_start(floe_proc_t *p, const char *bin, const char *data, const char *config,
                    char *why, size_t whylen);

/* Send sig (SIGTERM for a clean stop, SIGKILL for a crash) and reap floe;
 * SIGKILL if it still runs FLOE_STOP_TIMEOUT seconds later.  Returns its
 * status as a shell shows it (0 = clean exit, 128+N = killed by signal N),
 * or -1 when it was not running. */
int floe_proc_stop(floe_proc_t *p, int sig);

/* Resident set size of process pid in KiB (VmRSS), or -1. */
long floe_proc_rss_kb(pid_t pid);
/* User + system CPU seconds process pid has used so far, or -1. */
double floe_proc_cpu_s(pid_t pid);

#endif
