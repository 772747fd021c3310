/* The C side of the integration-test harness: see floe_proc.h. */
#include "floe_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNNING 16

static pid_t running[MAX_RUNNING];
static int hooked;

static double env_seconds(const char *name, double dflt)
{
    const char *v = getenv(name);
    double s = v && *v ? atof(v) : dflt;
    return s > 0 ? s : dflt;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void kill_running(void)
{
    for (int i = 0; i < MAX_RUNNING; i++)
        if (running[i] > 0) kill(running[i], SIGKILL);
}

static void at_exit(void)
{
    for (int i = 0; i < MAX_RUNNING; i++)
        if (running[i] > 0) {
            kill(running[i], SIGKILL);
            waitpid(running[i], NULL, 0);
            running[i] = 0;
        }
}

static void on_signal(int sig)
{
    kill_running(); /* kill(2) is async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track(pid_t pid, pid_t now)
{
    for (int i = 0; i < MAX_RUNNING; i++)
        if (running[i] == pid) {
            running[i] = now;
            return;
        }
}

int floe_proc_bin(char *out, size_t size, const char *rel)
{
    const char *env = getenv("FLOE_BIN");
    if (env && *env) return snprintf(out, size, "%s", env) < (int)size ? 0 : -1;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    return snprintf(out, size, "%s/%s", self, rel) < (int)size ? 0 : -1;
}

/* The last n non-empty lines of the log, joined by " | ". */
static void log_tail(const char *path, int n, char *out, size_t size)
{
    char buf[4096];
    out[0] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
    ssize_t got = pread(fd, buf, sizeof buf - 1, from);
    close(fd);
    if (got <= 0) return;
    buf[got] = 0;
    const char *lines[64];
    int k = 0;
    for (char *s = strtok(buf, "\n"); s; s = strtok(NULL, "\n")) {
        if (strspn(s, " \t\r") == strlen(s)) continue;
        if (k == 64) {
            memmove(lines, lines + 1, sizeof lines[0] * 63);
            k = 63;
        }
        lines[k++] = s;
    }
    size_t used = 0;
    for (int i = k > n ? k - n : 0; i < k && used < size; i++) {
        int w = snprintf(out + used, size - used, "%s%s", used ? " | " : "", lines[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* The ready line written after offset `from`, parsed into p; 1 when found. */
static int read_ready(floe_proc_t *p, off_t from)
{
    char buf[65536];
    int fd = open(p->log, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t got = pread(fd, buf, sizeof buf - 1, from);
    close(fd);
    if (got <= 0) return 0;
    buf[got] = 0;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break; /* only whole lines */
        *nl = 0;
        if (sscanf(line, "floe ready kafka=%127s http=%127s", p->kafka, p->http) == 2) return 1;
        line = nl + 1;
    }
    return 0;
}

static const char *status_text(int st, char *out, size_t size)
{
    if (WIFEXITED(st)) snprintf(out, size, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(out, size, "killed by signal %d", WTERMSIG(st));
    return out;
}

int floe_proc_start(floe_proc_t *p, const char *bin, const char *data, const char *config,
                    char *why, size_t whylen)
{
    p->pid = 0;
    p->kafka[0] = p->http[0] = 0;
    if (snprintf(p->log, sizeof p->log, "%s.log", data) >= (int)sizeof p->log) {
        snprintf(why, whylen, "data dir path too long: %s", data);
        return -1;
    }
    int fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(why, whylen, "%s: %s", p->log, strerror(errno));
        return -1;
    }
    off_t from = lseek(fd, 0, SEEK_END);
    int slot = -1;
    for (int i = 0; i < MAX_RUNNING && slot < 0; i++)
        if (running[i] <= 0) slot = i;
    if (slot < 0) {
        close(fd);
        snprintf(why, whylen, "more than %d floe processes at once", MAX_RUNNING);
        return -1;
    }
    if (!hooked) {
        hooked = 1;
        atexit(at_exit);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        signal(SIGHUP, on_signal);
    }
    fflush(stdout); /* the child must not flush our buffers a second time */
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        snprintf(why, whylen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) dup2(in, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (config)
            execl(bin, bin, "serve", "--config", config, "--data-dir", data, "--listen",
                  "127.0.0.1:0", "--http", "127.0.0.1:0", (char *)NULL);
        else
            execl(bin, bin, "serve", "--data-dir", data, "--listen", "127.0.0.1:0", "--http",
                  "127.0.0.1:0", (char *)NULL);
        dprintf(2, "exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    close(fd);
    running[slot] = pid;
    double deadline = now_s() + env_seconds("FLOE_READY_TIMEOUT", 60);
    char tail[1024], st_text[64];
    for (;;) {
        if (read_ready(p, from)) {
            p->pid = pid;
            return 0;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            track(pid, 0);
            log_tail(p->log, 5, tail, sizeof tail);
            snprintf(why, whylen, "floe serve %s before its ready line: %s",
                     status_text(st, st_text, sizeof st_text), tail);
            return -1;
        }
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            track(pid, 0);
            log_tail(p->log, 5, tail, sizeof tail);
            snprintf(why, whylen, "no ready line from floe serve within %gs: %s",
                     env_seconds("FLOE_READY_TIMEOUT", 60), tail);
            return -1;
        }
        usleep(20000);
    }
}

int floe_proc_stop(floe_proc_t *p, int sig)
{
    if (p->pid <= 0) return -1;
    int st = 0;
    kill(p->pid, sig);
    double deadline = now_s() + env_seconds("FLOE_STOP_TIMEOUT", 60);
    for (;;) {
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) break;
        if (now_s() > deadline) {
            fprintf(stderr, "floe: still running %gs after signal %d; SIGKILL\n",
                    env_seconds("FLOE_STOP_TIMEOUT", 60), sig);
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
            break;
        }
        usleep(20000);
    }
    track(p->pid, 0);
    p->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

long floe_proc_rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && kb < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

double floe_proc_cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
