/* Start and stop the tests' S3 server through s3_server.sh (s3_server.h). */
#include "s3_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The script's path: $FLOE_ROOT/tests/integration/s3_server.sh, else
 * relative to the working folder (tests/run runs from the root). */
static void script(char *out, size_t n)
{
    const char *root = getenv("FLOE_ROOT");
    snprintf(out, n, "%s/tests/integration/s3_server.sh", root && *root ? root : ".");
}

static void field(const char *env, const char *name, char *out, size_t n)
{
    size_t l = strlen(name);
    for (const char *p = env; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t ll = e ? (size_t)(e - p) : strlen(p);
        if (ll > l && !strncmp(p, name, l) && p[l] == '=') {
            snprintf(out, n, "%.*s", (int)(ll - l - 1), p + l + 1);
            return;
        }
        p = e ? e + 1 : NULL;
    }
}

int s3_server_start(s3_server_t *s, char *why, size_t why_size)
{
    memset(s, 0, sizeof *s);
    char sh[1024], cmd[2400];
    script(sh, sizeof sh);
    const char *req = getenv("FLOE_TEST_S3");
    bool required = req && *req && strcmp(req, "0");
    snprintf(cmd, sizeof cmd, "'%s' available 2>&1", sh);
    FILE *p = popen(cmd, "r");
    char line[512] = "";
    if (!p) {
        snprintf(why, why_size, "cannot run %s", sh);
        return -1;
    }
    if (!fgets(line, sizeof line, p)) line[0] = 0;
    int rc = pclose(p);
    line[strcspn(line, "\n")] = 0;
    if (rc != 0) {
        snprintf(why, why_size, "%s%s", line[0] ? line : "s3_server.sh available failed",
                 required ? " (FLOE_TEST_S3 requires it)" : "");
        return required ? -1 : 1;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/floe-s3-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    if (!mkdtemp(s->dir)) {
        snprintf(why, why_size, "cannot make a temp folder");
        return -1;
    }
    /* the script's watchdog stops the server if this process dies first */
    snprintf(cmd, sizeof cmd, "S3_OWNER_PID=%d '%s' start '%s' 2>&1", (int)getpid(), sh, s->dir);
    if (!(p = popen(cmd, "r"))) {
        snprintf(why, why_size, "cannot run %s", sh);
        return -1;
    }
    char out[2048] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    rc = pclose(p);
    if (rc != 0) {
        out[strcspn(out, "\n")] = 0;
        snprintf(why, why_size, "the S3 server did not start: %s", out);
        s->dir[0] = 0;
        return -1;
    }
    char envp[600], env[2048] = "";
    snprintf(envp, sizeof envp, "%s/env", s->dir);
    FILE *f = fopen(envp, "r");
    if (f) {
        n = fread(env, 1, sizeof env - 1, f);
        env[n] = 0;
        fclose(f);
    }
    field(env, "S3_ENDPOINT", s->endpoint, sizeof s->endpoint);
    field(env, "S3_BUCKET", s->bucket, sizeof s->bucket);
    field(env, "S3_REGION", s->region, sizeof s->region);
    field(env, "S3_ACCESS_KEY_ID", s->access_key_id, sizeof s->access_key_id);
    field(env, "S3_SECRET_ACCESS_KEY", s->secret_access_key, sizeof s->secret_access_key);
    field(env, "S3_HTTPS_ENDPOINT", s->https_endpoint, sizeof s->https_endpoint);
    field(env, "S3_CA_FILE", s->ca_file, sizeof s->ca_file);
    if (!s->endpoint[0] || !s->bucket[0] || !s->secret_access_key[0]) {
        snprintf(why, why_size, "the S3 server wrote no complete %s", envp);
        s3_server_stop(s);
        return -1;
    }
    return 0;
}

void s3_server_stop(s3_server_t *s)
{
    if (!s->dir[0]) return;
    char sh[1024], cmd[1400];
    script(sh, sizeof sh);
    snprintf(cmd, sizeof cmd, "'%s' stop '%s' >/dev/null 2>&1", sh, s->dir);
    if (system(cmd) != 0) fprintf(stderr, "s3_server: stopping %s failed\n", s->dir);
    s->dir[0] = 0;
}
