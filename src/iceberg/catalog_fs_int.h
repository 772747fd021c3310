/* The filesystem catalog's internals shared by catalog.c (namespaces,
 * tables, loads and single-table commits) and catalog_txn.c (commit locks
 * and multi-table transactions). */
#ifndef FLOE_ICEBERG_CATALOG_FS_INT_H
#define FLOE_ICEBERG_CATALOG_FS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "iceberg/catalog_int.h"

#define FLOE_ICE_MAX_METADATA_BYTES ((size_t)256 << 20)
#define FLOE_ICE_FS_STRIPES 64

typedef struct floe_ice_fs {
    floe_ice_catalog_t base;
    char *warehouse;
    pthread_mutex_t cmu; /* the metadata cache: */
    struct floe_ice_md_entry *head, *tail;
    size_t cached, max_cached; /* bytes */
    atomic_bool pending;       /* a transaction journal waits to be rolled forward */
} floe_ice_fs_t;

/* Names: a table or one namespace level is 1..200 of [A-Za-z0-9_-]; a
 * namespace is up to FLOE_ICE_NS_MAX_DEPTH levels.  0 or -1 (EINVAL). */
int floe_ice_fs_check_name(const char *what, const char *s, floe_err_t *err);
int floe_ice_fs_check_ns(const char *ns, floe_err_t *err);
/* a/b/c/d (b, c, d may be NULL), a namespace's levels as nested folders.
 * Caller frees; NULL on ENOMEM. */
char *floe_ice_fs_path(const char *a, const char *b, const char *c, const char *d);
/* MDIR/vV.metadata.json; caller frees, NULL on ENOMEM. */
char *floe_ice_fs_metadata_file(const char *mdir, int64_t v);
/* The current version in metadata folder mdir (the hint, checked against
 * the files). */
int floe_ice_fs_current_version(floe_fileio_t *io, const char *mdir, int64_t *out, floe_err_t *err);
/* Publish version v of ns.name from md (or its JSON text), then the hint.
 * EEXIST -> ECONFLICT; a failure while publishing -> EUNKNOWN. */
int floe_ice_fs_publish(floe_ice_fs_t *c, const char *ns, const char *name, int64_t v,
                        const floe_ice_metadata_t *md, const char *text, char **path_out,
                        char **json_out, bool *hinted, floe_err_t *err);
/* A commit's next metadata: the current table into *curout, reqs checked,
 * ups applied, the replaced version logged into *mdout (the caller's). */
int floe_ice_fs_prepare(floe_ice_fs_t *c, const char *ns, const char *name,
                        const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                        const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **curout,
                        floe_ice_metadata_t **mdout, floe_err_t *err);
/* After publishing v: delete the old metadata files md's log no longer
 * names; how many went. */
size_t floe_ice_fs_drop_old_versions(floe_ice_fs_t *c, const char *ns, const char *name,
                                     const floe_ice_table_t *cur, const floe_ice_metadata_t *md,
                                     int64_t v);
/* Remove a folder and everything in it. */
int floe_ice_fs_remove_tree(floe_fileio_t *io, const char *path, floe_err_t *err);

/* catalog_txn.c: the lock stripe of a table; lock or unlock the stripes
 * marked in held[FLOE_ICE_FS_STRIPES], ascending. */
size_t floe_ice_fs_stripe_of(const floe_ice_fs_t *c, const char *ns, const char *name);
void floe_ice_fs_stripes_lock(const bool *held, bool lock);
/* Roll pending transaction journals forward (at open: also remove staged
 * folders no journal names). */
void floe_ice_fs_recover_at(floe_ice_fs_t *c, bool at_open);
void floe_ice_fs_recover(floe_ice_fs_t *c);
/* A multi-table transaction (floe_ice_catalog_commit_tx). */
int floe_ice_fs_commit_tx(floe_ice_fs_t *c, const floe_ice_table_change_t *ch, size_t n,
                          size_t *failed, floe_err_t *err);

#endif
