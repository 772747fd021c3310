/* Catalog internals: the operations table each catalog implements (the
 * filesystem catalog now; REST client and SQL later) and the table value. */
#ifndef FLOE_ICEBERG_CATALOG_INT_H
#define FLOE_ICEBERG_CATALOG_INT_H

#include "iceberg/catalog.h"

typedef struct floe_ice_catalog_ops {
    int (*create_namespace)(floe_ice_catalog_t *c, const char *ns, floe_err_t *err);
    int (*drop_namespace)(floe_ice_catalog_t *c, const char *ns, floe_err_t *err);
    int (*list_namespaces)(floe_ice_catalog_t *c, char ***names, size_t *n, floe_err_t *err);
    int (*list_tables)(floe_ice_catalog_t *c, const char *ns, char ***names, size_t *n,
                       floe_err_t *err);
    int (*create_table)(floe_ice_catalog_t *c, const char *ns, const char *name,
                        const floe_ice_schema_t *schema, const floe_ice_spec_t *spec,
                        const floe_ice_sort_order_t *order, const floe_ice_props_t *props,
                        floe_ice_table_t **out, floe_err_t *err);
    int (*load_table)(floe_ice_catalog_t *c, const char *ns, const char *name,
                      floe_ice_table_t **out, floe_err_t *err);
    int (*drop_table)(floe_ice_catalog_t *c, const char *ns, const char *name, bool purge,
                      floe_err_t *err);
    int (*commit)(floe_ice_catalog_t *c, const char *ns, const char *name,
                  const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                  const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                  floe_err_t *err);
    int (*load_namespace)(floe_ice_catalog_t *c, const char *ns, floe_ice_props_t *out,
                          floe_err_t *err);
    int (*update_namespace)(floe_ice_catalog_t *c, const char *ns, const floe_ice_props_t *updates,
                            const floe_ice_props_t *removals, floe_err_t *err);
    int (*rename_table)(floe_ice_catalog_t *c, const char *ns, const char *name, const char *to_ns,
                        const char *to_name, floe_err_t *err);
    int (*create_from)(floe_ice_catalog_t *c, const char *ns, const char *name,
                       const floe_ice_metadata_t *md, floe_ice_table_t **out, floe_err_t *err);
    int (*table_location)(floe_ice_catalog_t *c, const char *ns, const char *name, char **out,
                          floe_err_t *err);
    void (*destroy)(floe_ice_catalog_t *c);
} floe_ice_catalog_ops_t;

struct floe_ice_catalog {
    const floe_ice_catalog_ops_t *ops;
    floe_fileio_t *io; /* borrowed */
};

struct floe_ice_table {
    char *ns, *name;
    char *metadata_location;
    int64_t version;
    floe_ice_metadata_t *md;          /* owned, or borrowed from shared */
    struct floe_ice_md_entry *shared; /* a metadata cache entry holding md and its text */
    size_t metadata_files_deleted;    /* by the commit that returned this table */
};

/* Build a table value; takes ownership of md (freed on failure). */
floe_ice_table_t *floe_ice_table_make(const char *ns, const char *name, const char *location,
                                      int64_t version, floe_ice_metadata_t *md);

/* The filesystem catalog's metadata file names: true, with *v = N, when
 * name is "vN.metadata.json" (N >= 1). */
bool floe_ice_fs_metadata_version(const char *name, int64_t *v);

#endif
