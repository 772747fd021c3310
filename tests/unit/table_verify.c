/* Test support for tables the engine writes (table_verify.h). */
#include "table_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tverify_table(const char *location, const floe_buf_t *dump, const char *dump_path,
                   bool orphans)
{
    FILE *f = fopen(dump_path, "w");
    if (!f) return false;
    fwrite(dump->data, 1, dump->len, f);
    fclose(f);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s/tests/interop && node verify_table.mjs %s %s%s 2>&1",
             getenv("FLOE_ROOT") ? getenv("FLOE_ROOT") : ".", location, dump_path,
             orphans ? " --orphans" : "");
    FILE *p = popen(cmd, "r");
    floe_buf_t b = FLOE_BUF_INIT;
    char tmp[4096];
    size_t n;
    while (p && (n = fread(tmp, 1, sizeof tmp, p)) > 0) floe_buf_append(&b, tmp, n);
    if (p) pclose(p);
    const char *out = floe_buf_cstr(&b);
    bool ok = out && !strstr(out, "not ok") && strstr(out, "ok - table rows equal");
    if (!ok) printf("# %s", out ? out : "(no output from verify_table.mjs)\n");
    floe_buf_free(&b);
    return ok;
}

uint64_t tverify_commit_failures(floe_engine_t *e)
{
    floe_buf_t js = FLOE_BUF_INIT;
    floe_engine_status_json(e, &js);
    const char *s = floe_buf_cstr(&js);
    uint64_t n = 0;
    for (const char *at = s; at && (at = strstr(at, "\"commit_failures\":")); at++)
        n += strtoull(at + strlen("\"commit_failures\":"), NULL, 10);
    floe_buf_free(&js);
    return n;
}
