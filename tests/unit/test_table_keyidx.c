/* The key index bounded in memory (table/keyidx.h): past its bound the keys
 * live in a page file; every answer matches a plain reference map, the
 * memory held stays under the bound, a damaged, truncated or dirty file is
 * refused, and a SIGKILL at any moment of updates and saves leaves a file
 * that is either refused or exactly a saved state. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "table/keyidx.h"
#include "table/upsert.h"
#include "test.h"
#include "tmp_dir.h"

#define NK 100000 /* long ids */
#define NLONG 40  /* keys over 1 KiB, which stay in memory */
#define NPATHS 40
#define BOUND ((size_t)256 << 10)
#define ROUND_OPS 20000

typedef struct ref {
    bool live;
    uint8_t path;
    int64_t pos;
} ref_t;

static char paths[NPATHS][64];

/* Key i in upsert.h's form: a long id, or a long string for the last NLONG. */
static void key_of(int i, floe_buf_t *k)
{
    char s[1600];
    k->len = 0;
    if (i < NK) {
        int n = snprintf(s, sizeof s, "%lld", (long long)i * 7919);
        CHECK_EQ(floe_tupsert_key_part(k, 'n', s, (size_t)n), 0);
        return;
    }
    memset(s, 'a' + i % 26, sizeof s);
    snprintf(s, 32, "long-%d-", i);
    CHECK_EQ(floe_tupsert_key_part(k, 's', s, sizeof s), 0);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int fails;

/* One op on the reference and, when x, on the index: its answer and the
 * old location it gives checked against the reference. */
static void op(floe_tkeyidx_t *x, ref_t *ref, int i, int kind, uint8_t path, int64_t pos,
               floe_buf_t *k)
{
    floe_tkeyidx_loc_t l = {0};
    ref_t was = ref[i];
    int got = was.live;
    if (x) key_of(i, k);
    if (kind == 0) { /* put */
        if (x) got = floe_tkeyidx_put(x, k->data, k->len, paths[path], pos, &l);
        ref[i] = (ref_t){true, path, pos};
    } else if (kind == 1) { /* delete */
        if (x) got = floe_tkeyidx_del(x, k->data, k->len, &l);
        ref[i].live = false;
    } else if (x) {
        got = floe_tkeyidx_get(x, k->data, k->len, &l);
    }
    if (!x) return;
    if (got != (int)was.live ||
        (got == 1 && (l.pos != was.pos || !l.path || strcmp(l.path, paths[was.path])))) {
        if (fails++ < 5)
            printf("# key %d op %d: %d at %lld, want %d at %lld\n", i, kind, got, (long long)l.pos,
                   was.live, (long long)was.pos);
    }
}

/* Round r (0: every key inserted) applied to ref and, when x, to x. */
static void round_ops(floe_tkeyidx_t *x, ref_t *ref, int r, floe_buf_t *k, bool check_mem)
{
    if (r == 0) {
        for (int i = 0; i < NK + NLONG; i++) {
            op(x, ref, i, 0, (uint8_t)(i % NPATHS), i, k);
            if (check_mem && x && floe_tkeyidx_mem(x) > BOUND && fails++ < 5)
                printf("# %zu bytes held after insert %d\n", floe_tkeyidx_mem(x), i);
        }
        return;
    }
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)r + 1;
    for (int n = 0; n < ROUND_OPS; n++) {
        int i = (int)(rnd(&s) % (NK + NLONG)), d = (int)(rnd(&s) % 10);
        op(x, ref, i,
           d < 8    ? 0
           : d == 8 ? 1
                    : 2,
           (uint8_t)(r % NPATHS), (int64_t)r * 1000000 + n, k);
        if (check_mem && x && floe_tkeyidx_mem(x) > BOUND && fails++ < 5)
            printf("# %zu bytes held in round %d\n", floe_tkeyidx_mem(x), r);
    }
}

/* Every key of ref answers the same in x. */
static int same(floe_tkeyidx_t *x, const ref_t *ref, floe_buf_t *k)
{
    size_t live = 0;
    int bad = 0;
    for (int i = 0; i < NK + NLONG; i++) {
        floe_tkeyidx_loc_t l;
        key_of(i, k);
        int got = floe_tkeyidx_get(x, k->data, k->len, &l);
        live += ref[i].live;
        if (got != (int)ref[i].live ||
            (got == 1 && (l.pos != ref[i].pos || strcmp(l.path, paths[ref[i].path]))))
            bad++;
    }
    if (floe_tkeyidx_count(x) != live) bad++;
    return bad;
}

static void setup_paths(void)
{
    for (int i = 0; i < NPATHS; i++)
        snprintf(paths[i], sizeof paths[i], "/warehouse/ns/t/data/00000-%d-w.parquet", i);
}

/* A new folder (*dir, caller frees), path[512] its index file, an empty
 * reference (*ref, caller frees) and an index bound to BOUND at path
 * holding every key of round 0. */
static floe_tkeyidx_t *bounded_new(const char *what, char **dir, char *path, ref_t **ref,
                                   floe_buf_t *k)
{
    setup_paths();
    *dir = floe_test_tmpdir(what);
    snprintf(path, 512, "%s/t.keyidx", *dir);
    *ref = calloc(NK + NLONG, sizeof **ref);
    floe_err_t e;
    floe_tkeyidx_t *x = floe_tkeyidx_new();
    CHECK_EQ(floe_tkeyidx_set_bound(x, BOUND, path, &e), 0);
    fails = 0;
    round_ops(x, *ref, 0, k, true);
    return x;
}

static void bounded_index_answers_as_a_map(void)
{
    char *dir, path[512];
    ref_t *ref;
    floe_buf_t k = FLOE_BUF_INIT;
    floe_err_t e;
    floe_tkeyidx_t *x = bounded_new("keyidx-bound", &dir, path, &ref, &k);
    CHECK(floe_tkeyidx_disk(x) > 0);
    for (int r = 1; r <= 10; r++) round_ops(x, ref, r, &k, true);
    CHECK_EQ(fails, 0);
    CHECK_EQ(same(x, ref, &k), 0);
    CHECK(floe_tkeyidx_mem(x) <= BOUND);
    printf("# bounded: %zu keys, %zu bytes held (bound %zu), %zu bytes on disk\n",
           floe_tkeyidx_count(x), floe_tkeyidx_mem(x), BOUND, floe_tkeyidx_disk(x));
    /* saved in place and loaded: the same answers; the encoding of every key too */
    floe_tkeyidx_set_state(x, "uuid-1", 42);
    CHECK_EQ(floe_tkeyidx_save(x, path, &e), 0);
    floe_tkeyidx_t *y = floe_tkeyidx_load(path, &e);
    CHECK(y != NULL);
    if (y) {
        CHECK_EQ(floe_tkeyidx_snapshot(y), 42);
        CHECK_STR(floe_tkeyidx_uuid(y), "uuid-1");
        CHECK_EQ(floe_tkeyidx_set_bound(y, BOUND, path, &e), 0);
        CHECK_EQ(same(y, ref, &k), 0);
        CHECK(floe_tkeyidx_mem(y) <= BOUND);
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK_EQ(floe_tkeyidx_encode(y, &b), 0);
        floe_tkeyidx_t *z = floe_tkeyidx_decode(b.data, b.len, &e);
        CHECK(z && same(z, ref, &k) == 0);
        floe_tkeyidx_free(z);
        floe_buf_free(&b);
        /* updates written back make the file dirty: refused until saved */
        fails = 0;
        round_ops(y, ref, 11, &k, true);
        CHECK_EQ(fails, 0);
        floe_tkeyidx_t *w = floe_tkeyidx_load(path, &e);
        CHECK(w == NULL && e.code == FLOE_ECORRUPT);
        floe_tkeyidx_free(w);
        CHECK_EQ(floe_tkeyidx_save(y, path, &e), 0);
        w = floe_tkeyidx_load(path, &e);
        CHECK(w && same(w, ref, &k) == 0);
        floe_tkeyidx_free(w);
    }
    floe_tkeyidx_free(y);
    floe_tkeyidx_free(x);
    floe_buf_free(&k);
    free(ref);
    floe_test_rm_rf(dir);
    free(dir);
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static int load_refused(const char *path)
{
    floe_err_t e;
    floe_tkeyidx_t *x = floe_tkeyidx_load(path, &e);
    int r = x == NULL && e.code == FLOE_ECORRUPT && e.msg[0];
    floe_tkeyidx_free(x);
    return r;
}

static void damaged_or_truncated_page_files_are_refused(void)
{
    char *dir, path[512];
    ref_t *ref;
    floe_buf_t k = FLOE_BUF_INIT;
    floe_err_t e;
    floe_tkeyidx_t *x = bounded_new("keyidx-damage", &dir, path, &ref, &k);
    CHECK_EQ(fails, 0);
    floe_tkeyidx_set_state(x, "u", 7);
    CHECK_EQ(floe_tkeyidx_save(x, path, &e), 0);
    floe_tkeyidx_free(x);
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    uint8_t *orig = malloc((size_t)size);
    fseek(f, 0, SEEK_SET);
    CHECK_EQ(fread(orig, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    /* offsets: the header, spots in pages, the trailer */
    long offs[200];
    size_t n = 0;
    for (long o = 0; o < 52; o += 3) offs[n++] = o;
    uint64_t s = 99;
    while (n < 160) offs[n++] = 4096 + (long)(rnd(&s) % (uint64_t)(size - 4096));
    for (long o = size - 40; o < size; o += 2) offs[n++] = o;
    int refused = 0;
    for (size_t i = 0; i < n; i++) {
        orig[offs[i]] ^= 0x04;
        CHECK_EQ(write_file(path, orig, (size_t)size), 0);
        refused += load_refused(path);
        orig[offs[i]] ^= 0x04;
    }
    CHECK_EQ(refused, (int)n);
    long cuts[] = {0, 5, 51, 4096, 4097, size / 2, size - 4, size - 1};
    refused = 0;
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        CHECK_EQ(write_file(path, orig, (size_t)cuts[i]), 0);
        refused += load_refused(path);
    }
    CHECK_EQ(refused, (int)(sizeof cuts / sizeof cuts[0]));
    CHECK_EQ(write_file(path, orig, (size_t)size), 0);
    x = floe_tkeyidx_load(path, &e);
    CHECK(x && floe_tkeyidx_snapshot(x) == 7 && same(x, ref, &k) == 0);
    floe_tkeyidx_free(x);
    free(orig);
    floe_buf_free(&k);
    free(ref);
    floe_test_rm_rf(dir);
    free(dir);
}

/* A child updates and saves round after round; SIGKILL at some moment;
 * the file then is refused or is exactly the state of the round it names. */
static void sigkill_leaves_a_saved_state_or_a_refusal(void)
{
    setup_paths();
    char *dir = floe_test_tmpdir("keyidx-kill");
    char path[512];
    snprintf(path, sizeof path, "%s/t.keyidx", dir);
    floe_buf_t k = FLOE_BUF_INIT;
    int loaded = 0;
    for (int t = 0; t < 6; t++) {
        unlink(path);
        int pfd[2];
        CHECK_EQ(pipe(pfd), 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            ref_t *ref = calloc(NK + NLONG, sizeof *ref);
            floe_err_t e;
            floe_tkeyidx_t *x = floe_tkeyidx_new();
            /* a cache that holds every page (written at saves only), or one
             * that writes pages back all the time */
            if (floe_tkeyidx_set_bound(x, t % 2 ? BOUND : 16 * BOUND, path, &e) < 0) _exit(2);
            for (int r = 0; r < 10000000; r++) { /* until killed, on any machine */
                round_ops(x, ref, r, &k, false);
                floe_tkeyidx_set_state(x, "u", r);
                if (floe_tkeyidx_save(x, path, &e) < 0) _exit(3);
                if (write(pfd[1], "s", 1) != 1) _exit(4); /* a save done */
            }
            _exit(0);
        }
        close(pfd[1]);
        /* after t+1 saves (however fast the machine), a moment into the
         * rounds that follow: within an update, a save or between */
        char c;
        for (int n = 0; n <= t; n++) CHECK_EQ(read(pfd[0], &c, 1), 1);
        close(pfd[0]);
        struct timespec d = {0, (long)(t * t) * 1000000L}; /* 0 to 25 ms */
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        CHECK(WIFSIGNALED(st));
        floe_err_t e;
        floe_tkeyidx_t *x = floe_tkeyidx_load(path, &e);
        if (!x) {
            CHECK(e.code == FLOE_ECORRUPT || e.code == FLOE_ENOENT);
            continue;
        }
        loaded++;
        ref_t *ref = calloc(NK + NLONG, sizeof *ref);
        for (int r = 0; r <= floe_tkeyidx_snapshot(x); r++) round_ops(NULL, ref, r, &k, false);
        int bad = same(x, ref, &k);
        if (bad)
            printf("# killed after round %lld: %d keys differ\n",
                   (long long)floe_tkeyidx_snapshot(x), bad);
        CHECK_EQ(bad, 0);
        free(ref);
        floe_tkeyidx_free(x);
    }
    printf("# %d of 6 killed runs left a loadable file\n", loaded);
    floe_buf_free(&k);
    floe_test_rm_rf(dir);
    free(dir);
}

TEST_MAIN(RUN(bounded_index_answers_as_a_map); RUN(damaged_or_truncated_page_files_are_refused);
          RUN(sigkill_leaves_a_saved_state_or_a_refusal))
