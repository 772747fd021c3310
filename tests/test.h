/* A tiny test harness for floe's unit tests.
 *
 * Each test is a void function; RUN(fn) runs it and prints one line,
 * "ok - fn" or "not ok - fn: file:line: what failed".  CHECKs record a failure
 * and go on, so one run reports every broken expectation.  tests/run reads
 * these lines and prints the suite's closing count. */
#ifndef FLOE_TESTS_TEST_H
#define FLOE_TESTS_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_checks_failed;
static int t_tests_failed;
static char t_first_failure[1200];

static inline void t_fail(const char *file, int line, const char *what)
{
    if (!t_checks_failed)
        snprintf(t_first_failure, sizeof t_first_failure, "%s:%d: %s", file, line, what);
    t_checks_failed++;
}

#define CHECK(cond)                                     \
    do {                                                \
        if (!(cond)) t_fail(__FILE__, __LINE__, #cond); \
    } while (0)

#define CHECK_EQ(a, b)                                                                  \
    do {                                                                                \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);                         \
        if (t_a_ != t_b_) {                                                             \
            char t_m_[400];                                                             \
            snprintf(t_m_, sizeof t_m_, "%s == %s (%lld != %lld)", #a, #b, t_a_, t_b_); \
            t_fail(__FILE__, __LINE__, t_m_);                                           \
        }                                                                               \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                              \
    do {                                                                                \
        unsigned long long t_a_ = (a), t_b_ = (b);                                      \
        if (t_a_ != t_b_) {                                                             \
            char t_m_[400];                                                             \
            snprintf(t_m_, sizeof t_m_, "%s == %s (%llu != %llu)", #a, #b, t_a_, t_b_); \
            t_fail(__FILE__, __LINE__, t_m_);                                           \
        }                                                                               \
    } while (0)

#define CHECK_STR(a, b)                                                                      \
    do {                                                                                     \
        const char *t_a_ = (a), *t_b_ = (b);                                                 \
        if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0) {                                     \
            char t_m_[1024];                                                                 \
            snprintf(t_m_, sizeof t_m_, "%.60s == %.60s (\"%.400s\" != \"%.400s\")", #a, #b, \
                     t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)");                        \
            t_fail(__FILE__, __LINE__, t_m_);                                                \
        }                                                                                    \
    } while (0)

static inline void t_run(const char *name, void (*fn)(void))
{
    t_checks_failed = 0;
    fn();
    if (t_checks_failed) {
        t_tests_failed++;
        printf("not ok - %s: %s (%d failed checks)\n", name, t_first_failure, t_checks_failed);
    } else {
        printf("ok - %s\n", name);
    }
    fflush(stdout);
}

#define RUN(fn) t_run(#fn, fn)
#define TEST_MAIN(...)                 \
    int main(void)                     \
    {                                  \
        __VA_ARGS__;                   \
        return t_tests_failed ? 1 : 0; \
    }

#endif
