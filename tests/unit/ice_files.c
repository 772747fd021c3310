/* Hand-written Iceberg tables for tests and benchmarks (ice_files.h). */
#include "ice_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

void ice_file_describe(floe_ice_data_file_t *f, char *path, floe_ice_content_t content,
                       int64_t rows)
{
    floe_ice_data_file_init(f);
    floe_ice_data_file_set_path(f, path, "PARQUET");
    free(path);
    f->content = content;
    f->record_count = rows;
    struct stat st;
    f->file_size = stat(f->path, &st) == 0 ? st.st_size : 0;
}

int ice_file_commit(floe_ice_catalog_t *cat, const char *ns, const char *table, floe_ice_op_t op,
                    floe_ice_data_file_t *files, size_t n)
{
    floe_err_t e;
    floe_ice_commit_t *c = floe_ice_commit_new(cat, ns, table, op, &e);
    int rc = c ? 0 : -1;
    for (size_t i = 0; !rc && i < n; i++) rc = floe_ice_commit_add(c, &files[i], &e);
    if (!rc) rc = floe_ice_commit_run(c, NULL, &e);
    if (rc < 0) fprintf(stderr, "commit %s.%s: %s\n", ns, table, e.msg);
    floe_ice_commit_free(c);
    for (size_t i = 0; i < n; i++) floe_ice_data_file_clear(&files[i]);
    return rc;
}

int ice_rows_collect(void *arg, const char *json, size_t len, floe_err_t *err)
{
    floe_buf_t *b = arg;
    if (floe_buf_append(b, json, len) || floe_buf_append_u8(b, '\n')) return floe_err_oom(err);
    return 0;
}
