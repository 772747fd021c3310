/* The orphan sweep (orphans.h): the paths every snapshot references,
 * then a walk of data/ and metadata/ deleting what is not among them. */
#include "table/orphans.h"

#include <stdlib.h>
#include <string.h>

#include "iceberg/scan.h"
#include "util/fs.h"

typedef struct strset {
    char **v;
    size_t n, cap;
} strset_t;

static int strset_add(strset_t *s, const char *x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(x))) return -1;
    s->n++;
    return 0;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool strset_has(const strset_t *s, const char *x)
{
    return s->n && bsearch(&x, s->v, s->n, sizeof *s->v, cmpstr) != NULL;
}

static void strset_free(strset_t *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

/* Delete unreferenced files under dir: in data/ (recursively: partition
 * folders) every file floe wrote that no snapshot references, temp files of
 * interrupted writes included; in metadata/ unreferenced manifests and temp
 * files.  A name that lists as empty is a file (or an empty folder, whose
 * removal fails harmlessly). */
static int sweep(floe_fileio_t *io, const char *dir, const strset_t *refs, bool data,
                 size_t *removed, floe_err_t *err)
{
    char **names;
    size_t n;
    if (floe_fileio_list(io, dir, &names, &n, err) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        char path[1400];
        floe_err_t pe;
        if (floe_path_join(path, sizeof path, dir, names[i], &pe) < 0) continue; /* not ours */
        char **sub;
        size_t nsub;
        floe_err_t le;
        if (data && floe_fileio_list(io, path, &sub, &nsub, &le) == 0) {
            floe_fileio_names_free(sub, nsub);
            if (nsub) {
                if (sweep(io, path, refs, data, removed, err) < 0) {
                    floe_fileio_names_free(names, n);
                    return -1;
                }
                continue;
            }
        }
        size_t len = strlen(names[i]);
        bool tmp = names[i][0] == '.' && len > 4 && !strcmp(names[i] + len - 4, ".tmp");
        bool candidate = data || tmp || (len > 5 && !strcmp(names[i] + len - 5, ".avro"));
        if (!candidate || strset_has(refs, path)) continue;
        floe_err_t e;
        if (floe_fileio_remove(io, path, &e) < 0) continue; /* e.g. an empty folder */
        (*removed)++;
    }
    floe_fileio_names_free(names, n);
    return 0;
}

int floe_torphans_remove(const floe_ice_metadata_t *md, floe_fileio_t *io, size_t *removed,
                         floe_err_t *err)
{
    strset_t refs = {0};
    int rc = -1;
    *removed = 0;
    for (size_t i = 0; i < md->nsnapshots; i++) {
        const floe_ice_snapshot_t *s = md->snapshots[i];
        floe_ice_snapshot_content_t c;
        if (s->manifest_list && strset_add(&refs, s->manifest_list) < 0) goto oom;
        if (floe_ice_snapshot_content_read(io, s, &c, err) < 0) goto out;
        for (size_t m = 0; m < c.nmanifests; m++) {
            if (strset_add(&refs, c.manifests[m].path) < 0) {
                floe_ice_snapshot_content_free(&c);
                goto oom;
            }
            for (size_t k = 0; k < c.nentries[m]; k++)
                if (strset_add(&refs, c.entries[m][k].file.path) < 0) {
                    floe_ice_snapshot_content_free(&c);
                    goto oom;
                }
        }
        floe_ice_snapshot_content_free(&c);
    }
    if (refs.n) qsort(refs.v, refs.n, sizeof *refs.v, cmpstr);
    char dir[1100];
    if (floe_path_join(dir, sizeof dir, md->location, "data", err) < 0 ||
        sweep(io, dir, &refs, true, removed, err) < 0 ||
        floe_path_join(dir, sizeof dir, md->location, "metadata", err) < 0 ||
        sweep(io, dir, &refs, false, removed, err) < 0)
        goto out;
    rc = 0;
    goto out;
oom:
    floe_err_oom(err);
out:
    strset_free(&refs);
    return rc;
}
