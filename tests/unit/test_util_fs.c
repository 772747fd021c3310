/* util/fs.h, util/json.h and util/rand.h: the shared file, path, JSON and
 * random helpers. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/rand.h"

static char *tmpdir(void)
{
    static char d[64];
    snprintf(d, sizeof d, "/tmp/floe-fs-XXXXXX");
    return mkdtemp(d);
}

static void mkdirs_creates_parents_and_refuses_files(void)
{
    char *d = tmpdir();
    CHECK(d != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/a/b/c", d);
    floe_err_t err;
    CHECK_EQ(floe_fs_mkdirs(p, &err), 0);
    struct stat st;
    CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_EQ(floe_fs_mkdirs(p, &err), 0); /* exists: fine */
    char f[300];
    snprintf(f, sizeof f, "%s/file", p);
    CHECK_EQ(floe_fs_write_atomic(f, "x", 1, &err), 0);
    CHECK_EQ(floe_fs_mkdirs(f, &err), -1);
    CHECK_EQ(err.code, FLOE_EINVAL);
    char under[320];
    snprintf(under, sizeof under, "%s/sub", f);
    CHECK_EQ(floe_fs_mkdirs(under, &err), -1); /* a parent is a file */
    CHECK_EQ(floe_fs_mkdirs("", &err), -1);
    CHECK_EQ(floe_fs_fsync_dir(p, &err), 0);
    CHECK_EQ(floe_fs_fsync_dir("/nonexistent/floe", &err), -1);
    CHECK_EQ(err.code, FLOE_ENOENT);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    CHECK(system(cmd) == 0);
}

static void write_atomic_replaces_and_leaves_no_temp(void)
{
    char *d = tmpdir();
    char p[256], tmp[270], buf[64] = {0};
    snprintf(p, sizeof p, "%s/state.json", d);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    floe_err_t err;
    CHECK_EQ(floe_fs_write_atomic(p, "first", 5, &err), 0);
    CHECK_EQ(floe_fs_write_atomic(p, "second", 6, &err), 0);
    int fd = open(p, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ(read(fd, buf, sizeof buf), 6);
    close(fd);
    CHECK_STR(buf, "second");
    CHECK(access(tmp, F_OK) != 0);
    /* a directory in the way: the error names it, no temp file stays */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/x", d);
    CHECK_EQ(floe_fs_write_atomic(bad, "x", 1, &err), -1);
    CHECK_EQ(err.code, FLOE_ENOENT);
    CHECK(strstr(err.msg, "missing") != NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    CHECK(system(cmd) == 0);
}

static void rename_replaces_or_refuses_and_nosync_writes(void)
{
    char *d = tmpdir();
    char a[256], b[256], c[256], buf[64] = {0};
    snprintf(a, sizeof a, "%s/a", d);
    snprintf(b, sizeof b, "%s/b", d);
    snprintf(c, sizeof c, "%s/c", d);
    floe_err_t err;
    CHECK_EQ(floe_fs_write_nosync(a, "one", 3, &err), 0);
    CHECK_EQ(floe_fs_write_nosync(b, "two", 3, &err), 0);
    /* noreplace: b stays, a stays */
    CHECK_EQ(floe_fs_rename(a, b, true, &err), -1);
    CHECK_EQ(err.code, FLOE_EEXIST);
    CHECK(access(a, F_OK) == 0);
    /* noreplace to a free name: moved */
    CHECK_EQ(floe_fs_rename(a, c, true, &err), 0);
    CHECK(access(a, F_OK) != 0);
    /* replace */
    CHECK_EQ(floe_fs_rename(c, b, false, &err), 0);
    int fd = open(b, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ(read(fd, buf, sizeof buf), 3);
    close(fd);
    CHECK_STR(buf, "one");
    CHECK_EQ(floe_fs_rename(a, b, false, &err), -1);
    CHECK_EQ(err.code, FLOE_ENOENT);
    CHECK_EQ(floe_fs_rename(a, c, true, &err), -1);
    CHECK_EQ(err.code, FLOE_ENOENT);
    char tmp[270];
    snprintf(tmp, sizeof tmp, "%s.tmp", b);
    CHECK(access(tmp, F_OK) != 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    CHECK(system(cmd) == 0);
}

static void paths_join_or_fail_never_truncate(void)
{
    char out[16];
    floe_err_t err;
    CHECK_EQ(floe_path_join(out, sizeof out, "a/b", "c", &err), 0);
    CHECK_STR(out, "a/b/c");
    CHECK_EQ(floe_path_join(out, sizeof out, "a/", "c", &err), 0);
    CHECK_STR(out, "a/c");
    CHECK_EQ(floe_path_join(out, sizeof out, "", "c", &err), 0);
    CHECK_STR(out, "c");
    CHECK_EQ(floe_path_join(out, sizeof out, "0123456789", "abcde", &err), -1);
    CHECK_EQ(err.code, FLOE_ERANGE);
    CHECK_STR(out, "");
    CHECK_EQ(floe_path_join(out, sizeof out, "0123456789", "abcd", &err), 0); /* 15 fits */
    CHECK_EQ(floe_path_fmt(out, sizeof out, &err, "%s-%d", "part", 7), 0);
    CHECK_STR(out, "part-7");
    CHECK_EQ(floe_path_fmt(out, 4, &err, "%s", "long"), -1);
    CHECK_STR(out, "");
    CHECK_EQ(floe_fs_dirname("x/y/z", out, sizeof out, &err), 0);
    CHECK_STR(out, "x/y");
    CHECK_EQ(floe_fs_dirname("z", out, sizeof out, &err), 0);
    CHECK_STR(out, ".");
    CHECK_EQ(floe_fs_dirname("/z", out, sizeof out, &err), 0);
    CHECK_STR(out, "/");
}

static void json_strings_escape_and_stay_utf8(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_json_str(&b, "a\"b\\c\n\t\x01", 8), 0);
    CHECK_EQ(floe_buf_append_u8(&b, 0), 0);
    CHECK_STR((char *)b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\"");
    floe_buf_reset(&b);
    /* valid multi-byte kept; invalid bytes become U+FFFD */
    const char in[] = "\xc3\xa9 \xff \xed\xa0\x80";
    CHECK_EQ(floe_json_str(&b, in, sizeof in - 1), 0);
    CHECK_EQ(floe_buf_append_u8(&b, 0), 0);
    CHECK_STR((char *)b.data, "\"\xc3\xa9 \\ufffd \\ufffd\\ufffd\\ufffd\"");
    floe_buf_reset(&b);
    CHECK_EQ(floe_json_cstr(&b, NULL), 0);
    CHECK_EQ(floe_json_cstr(&b, "x"), 0);
    CHECK_EQ(floe_buf_append_u8(&b, 0), 0);
    CHECK_STR((char *)b.data, "null\"x\"");
    floe_buf_free(&b);
}

/* A second holder is refused, naming the first; closing releases. */
static void lock_is_exclusive_and_names_its_holder(void)
{
    char *d = tmpdir();
    CHECK(d != NULL);
    char p[256];
    snprintf(p, sizeof p, "%s/lock", d);
    floe_err_t err;
    int a = -1, b = -1;
    CHECK_EQ(floe_fs_lock(p, "holder one", &a, NULL, 0, &err), 0);
    CHECK(a >= 0);
    char holder[64] = "";
    /* another open file: refused */
    CHECK_EQ(floe_fs_lock(p, "holder two", &b, holder, sizeof holder, &err), -1);
    CHECK_EQ(err.code, FLOE_EEXIST);
    CHECK(strstr(err.msg, "holder one") != NULL);
    CHECK_STR(holder, "holder one");
    CHECK_EQ(b, -1);
    close(a);
    CHECK_EQ(floe_fs_lock(p, "holder two", &b, NULL, 0, &err), 0);
    char got[32] = "";
    int f = open(p, O_RDONLY);
    CHECK(f >= 0 && read(f, got, sizeof got - 1) == 10);
    CHECK(!strcmp(got, "holder two")); /* the longer text before it is gone */
    close(f);
    close(b);
    snprintf(p, sizeof p, "%s/no/such/dir/lock", d);
    CHECK_EQ(floe_fs_lock(p, "x", &b, NULL, 0, &err), -1);
    CHECK_EQ(err.code, FLOE_ENOENT);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    CHECK(system(cmd) == 0);
}

static void random_bytes_differ(void)
{
    uint8_t a[16] = {0}, b[16] = {0};
    floe_rand_bytes(a, sizeof a);
    floe_rand_bytes(b, sizeof b);
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK(floe_rand_u64() != floe_rand_u64());
}

TEST_MAIN(RUN(mkdirs_creates_parents_and_refuses_files);
          RUN(write_atomic_replaces_and_leaves_no_temp);
          RUN(rename_replaces_or_refuses_and_nosync_writes); RUN(paths_join_or_fail_never_truncate);
          RUN(json_strings_escape_and_stay_utf8); RUN(lock_is_exclusive_and_names_its_holder);
          RUN(random_bytes_differ))
