/* The process's own metrics for /metrics (http.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "http/http.h"

#ifdef __SANITIZE_ADDRESS__
/* Under AddressSanitizer malloc is the sanitizer's, and mallinfo2 reports
 * nothing: ask its allocator (libasan exports these; gcc ships no header). */
size_t __sanitizer_get_current_allocated_bytes(void);
size_t __sanitizer_get_free_bytes(void);
#endif

/* The heap split into bytes in use and bytes held free tells live data
 * from what a memory policy keeps (floe serve keeps freed pages while
 * traffic flows). */
int floe_http_process_metrics(void *arg, floe_buf_t *out)
{
    (void)arg;
    long rss_kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) rss_kb = atol(line + 6);
    if (f) fclose(f);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                 ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
#ifdef __SANITIZE_ADDRESS__
    size_t in_use = __sanitizer_get_current_allocated_bytes(), held = __sanitizer_get_free_bytes();
#else
    struct mallinfo2 mi = mallinfo2();
    size_t in_use = mi.uordblks + mi.hblkhd, held = mi.fordblks;
#endif
    return floe_buf_printf(
        out,
        "# HELP process_resident_memory_bytes Resident set size.\n"
        "# TYPE process_resident_memory_bytes gauge\n"
        "process_resident_memory_bytes %ld\n"
        "# HELP process_cpu_seconds_total User and system CPU time.\n"
        "# TYPE process_cpu_seconds_total counter\n"
        "process_cpu_seconds_total %.3f\n"
        "# HELP floe_heap_bytes malloc heap: bytes in live allocations, bytes held free.\n"
        "# TYPE floe_heap_bytes gauge\n"
        "floe_heap_bytes{state=\"in_use\"} %zu\n"
        "floe_heap_bytes{state=\"free\"} %zu\n",
        rss_kb * 1024, cpu, in_use, held);
}
