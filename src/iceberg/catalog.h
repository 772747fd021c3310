/* Iceberg catalogs: where tables are found and how a commit is made atomic.
 *
 * A catalog maps "namespace.table" to the table's current metadata and
 * commits changes as REST-style requirements + updates: requirements are
 * checked against the current metadata, updates applied, and the result
 * published only if nobody published in between.
 *
 * Errors that matter to callers:
 *   FLOE_ECONFLICT  a requirement failed or another writer won the race:
 *                   nothing was published; reload and retry.
 *   FLOE_EUNKNOWN   publishing may or may not have happened (the store
 *                   failed while the new metadata was being made visible):
 *                   resolve by reloading; never delete files referenced by
 *                   the attempted commit until then.
 *
 * The filesystem (Hadoop-layout) catalog keeps table NS.T at
 * WAREHOUSE/NS/T with metadata/vN.metadata.json (N = 1, 2, ...) and
 * metadata/version-hint.text; version N+1 is published by create-if-absent
 * (link(2) locally, conditional put on object stores), so two writers can
 * never both publish the same version.  Readers: DuckDB iceberg_scan,
 * icebird, Spark's hadoop catalog. */
#ifndef FLOE_ICEBERG_CATALOG_H
#define FLOE_ICEBERG_CATALOG_H

#include "iceberg/metadata.h"
#include "storage/fileio.h"

typedef struct floe_ice_catalog floe_ice_catalog_t;
typedef struct floe_ice_table floe_ice_table_t;

/* Filesystem catalog over io (borrowed; must outlive the catalog) rooted
 * at warehouse (copied; a local path or file: URL).  Caller frees with
 * floe_ice_catalog_free. */
floe_ice_catalog_t *floe_ice_catalog_fs_new(floe_fileio_t *io, const char *warehouse,
                                            floe_err_t *err);
/* The REST catalog client's settings (floe_ice_catalog_rest_open); all
 * borrowed for the call.  Empty strings count as absent. */
typedef struct floe_ice_rest_config {
    const char *uri;        /* the server's base URL, without /v1 (required) */
    const char *warehouse;  /* sent to /v1/config; its overrides.prefix goes into every path */
    const char *token;      /* a bearer token, or */
    const char *credential; /* OAuth2 client credentials "id:secret" (or "secret") */
    const char *oauth2_uri; /* their token endpoint; default URI/v1/oauth/tokens */
    const char *scope;      /* default "catalog" */
    /* SigV4 instead of bearer tokens: every request signed for region
     * (default us-east-1) and signing_name (default execute-api) */
    bool sigv4;
    const char *region, *signing_name, *access_key_id, *secret_access_key, *session_token;
    const char *ca_file; /* PEM CAs for an https server (token endpoint too); NULL: the system's */
    unsigned need;       /* FLOE_ICE_REST_NEED_*: refused at open when the server lacks one */
} floe_ice_rest_config_t;

/* floe reads tables (lists namespaces and tables, loads tables) */
#define FLOE_ICE_REST_NEED_READ 1u
/* floe commits tables (creates namespaces and tables, loads, commits) */
#define FLOE_ICE_REST_NEED_COMMIT 2u

/* REST catalog client: every operation a call to the Iceberg REST catalog
 * server at cfg->uri.  io (borrowed; must outlive the catalog) reads and
 * writes the files the metadata names.  Asks /v1/config here (with a
 * token first, for OAuth2 credentials): NULL with *err when the server
 * refuses the credentials (FLOE_EINVAL) or lists endpoints without one
 * cfg->need names (FLOE_EUNSUPPORTED, naming it); a later call to an
 * endpoint it does not list fails the same way.  A server that does not
 * answer (or answers 5xx) is logged and asked again at the first call,
 * which fails with FLOE_EIO until it answers.
 * OAuth2 tokens are fetched again a tenth of their lifetime before they
 * expire and when the server answers 401.  A commit answered 409 is
 * FLOE_ECONFLICT; one answered 5xx, or not answered, FLOE_EUNKNOWN.
 * Thread-safe.  Caller frees with floe_ice_catalog_free. */
floe_ice_catalog_t *floe_ice_catalog_rest_open(floe_fileio_t *io, const floe_ice_rest_config_t *cfg,
                                               floe_err_t *err);
/* The same with a uri, warehouse and token only (each may be NULL but
 * uri), needing no endpoint in particular. */
floe_ice_catalog_t *floe_ice_catalog_rest_new(floe_fileio_t *io, const char *uri,
                                              const char *warehouse, const char *token,
                                              floe_err_t *err);
void floe_ice_catalog_free(floe_ice_catalog_t *c);
/* The warehouse of floe's own filesystem catalog: DATA/warehouse under the
 * data dir of `floe serve`, where the CLI reads it too.  Into out; fails
 * with FLOE_ERANGE (out "") when it does not fit. */
int floe_ice_warehouse_of(const char *data_dir, char *out, size_t size, floe_err_t *err);
/* The catalog's FileIO (borrowed). */
floe_fileio_t *floe_ice_catalog_io(floe_ice_catalog_t *c);

/* Namespaces: names of [A-Za-z0-9_-], one level ("sales") or several
 * joined by FLOE_ICE_NS_SEP (the REST spec's 0x1F unit separator:
 * "sales\x1feu"), at most FLOE_ICE_NS_MAX_DEPTH.  The filesystem catalog
 * nests them as folders (WAREHOUSE/sales/eu/T); a namespace is created
 * under an existing parent. */
#define FLOE_ICE_NS_SEP '\x1f'
#define FLOE_ICE_NS_MAX_DEPTH 16
int floe_ice_catalog_create_namespace(floe_ice_catalog_t *c, const char *ns, floe_err_t *err);
/* Fails with FLOE_EINVAL while the namespace holds tables. */
int floe_ice_catalog_drop_namespace(floe_ice_catalog_t *c, const char *ns, floe_err_t *err);
/* Sorted names; caller frees with floe_fileio_names_free. */
int floe_ice_catalog_list_namespaces(floe_ice_catalog_t *c, char ***names, size_t *n,
                                     floe_err_t *err);
/* The namespaces directly under parent (NULL: the top level), as their
 * last level's name, as above.  FLOE_ENOENT when parent does not exist;
 * FLOE_EUNSUPPORTED from a catalog that keeps one level. */
int floe_ice_catalog_list_namespaces_in(floe_ice_catalog_t *c, const char *parent, char ***names,
                                        size_t *n, floe_err_t *err);
int floe_ice_catalog_list_tables(floe_ice_catalog_t *c, const char *ns, char ***names, size_t *n,
                                 floe_err_t *err);

/* A namespace's properties into *out (cleared first; caller clears with
 * floe_ice_props_clear).  FLOE_ENOENT when the namespace does not exist. */
int floe_ice_catalog_load_namespace(floe_ice_catalog_t *c, const char *ns, floe_ice_props_t *out,
                                    floe_err_t *err);
/* Set the properties in updates and remove the keys of removals (both
 * borrowed; removals' values ignored).  Read-modify-write: callers that
 * may race on one namespace serialize.  FLOE_ENOENT as above. */
int floe_ice_catalog_update_namespace(floe_ice_catalog_t *c, const char *ns,
                                      const floe_ice_props_t *updates,
                                      const floe_ice_props_t *removals, floe_err_t *err);

/* Where a new table ns.name would live (its "location"), for a create
 * that is staged before it is committed.  Caller frees *out with free(). */
int floe_ice_catalog_table_location(floe_ice_catalog_t *c, const char *ns, const char *name,
                                    char **out, floe_err_t *err);

/* Create table ns.name (namespace created if needed) with schema, spec
 * (NULL: unpartitioned), order (NULL: unsorted) and props (NULL: none), all
 * borrowed.  FLOE_EEXIST when it exists.  *out (may be NULL) receives the
 * loaded table; caller frees with floe_ice_table_free. */
int floe_ice_catalog_create_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                  const floe_ice_schema_t *schema, const floe_ice_spec_t *spec,
                                  const floe_ice_sort_order_t *order, const floe_ice_props_t *props,
                                  floe_ice_table_t **out, floe_err_t *err);
/* FLOE_ENOENT when the table does not exist.  Caller frees *out. */
int floe_ice_catalog_load_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                floe_ice_table_t **out, floe_err_t *err);
/* Drop: forget the table (remove its metadata folder); purge also deletes
 * every file under the table location. */
int floe_ice_catalog_drop_table(floe_ice_catalog_t *c, const char *ns, const char *name, bool purge,
                                floe_err_t *err);
/* Rename ns.name to to_ns.to_name (to_ns must exist): the current
 * metadata is published as version 1 under the new name, then the old
 * name's metadata folder goes.  The table keeps its location (data files
 * stay where they are; the filesystem catalog names no table by its
 * files).  FLOE_ENOENT (source or to_ns), FLOE_EEXIST (destination).  A
 * crash between the two steps leaves both names: drop one.  A table later
 * created under the old name gets the same folder: a purge of either
 * deletes the other's files. */
int floe_ice_catalog_rename_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                  const char *to_ns, const char *to_name, floe_err_t *err);
/* Create ns.name (ns must exist) with metadata md (borrowed) as its
 * version 1: a create whose metadata was built, or staged, by the caller.
 * FLOE_EEXIST, FLOE_ENOENT (no such namespace).  *out (may be NULL) as in
 * create. */
int floe_ice_catalog_create_from(floe_ice_catalog_t *c, const char *ns, const char *name,
                                 const floe_ice_metadata_t *md, floe_ice_table_t **out,
                                 floe_err_t *err);
/* Register ns.name as the table whose metadata file is metadata_location
 * (read through the catalog's FileIO), as floe_ice_catalog_create_from;
 * FLOE_ECORRUPT when the file is not table metadata. */
int floe_ice_catalog_register_table(floe_ice_catalog_t *c, const char *ns, const char *name,
                                    const char *metadata_location, floe_ice_table_t **out,
                                    floe_err_t *err);
/* Check reqs against the current metadata, apply ups, publish the next
 * version.  Arrays are borrowed.  On success *out (may be NULL) receives
 * the new table state (caller frees).  ECONFLICT / EUNKNOWN as above. */
int floe_ice_catalog_commit(floe_ice_catalog_t *c, const char *ns, const char *name,
                            const floe_ice_req_t *reqs, size_t nreqs, const floe_ice_update_t *ups,
                            size_t nups, floe_ice_table_t **out, floe_err_t *err);

/* Same, given the table as the caller loaded it (borrowed): when it is
 * still the current version the catalog may skip re-reading it.  The
 * requirements are what make the commit safe, not base. */
int floe_ice_catalog_commit_on(floe_ice_catalog_t *c, const floe_ice_table_t *base,
                               const floe_ice_req_t *reqs, size_t nreqs,
                               const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                               floe_err_t *err);

/* One table's part of a multi-table transaction (all borrowed). */
typedef struct floe_ice_table_change {
    const char *ns, *name;
    const floe_ice_req_t *reqs;
    size_t nreqs;
    const floe_ice_update_t *ups;
    size_t nups;
} floe_ice_table_change_t;

/* Commit ch[0..n) (distinct tables) atomically: all or none.  No other
 * commit through a catalog of this process over the same warehouse lands
 * on any of the tables between the check of the requirements and the last
 * publish.  Every table's next metadata is staged and a redo journal
 * (WAREHOUSE/_floe_txn/<uuid>.json) naming each table's expected and new
 * version written before the first publish; a journal left by a crash is
 * rolled forward when a catalog opens the warehouse (and before its next
 * load or commit after a storage failure).  Errors: a failed requirement
 * or update as floe_ice_catalog_commit (nothing changed; *failed (may be
 * NULL) is the index of the table, else n); FLOE_EUNKNOWN when storage
 * failed after the journal may have landed (the transaction is then
 * finished by recovery, never undone); FLOE_EUNSUPPORTED from a catalog
 * other than the filesystem one. */
int floe_ice_catalog_commit_tx(floe_ice_catalog_t *c, const floe_ice_table_change_t *ch, size_t n,
                               size_t *failed, floe_err_t *err);

/* Keep up to bytes (0: none) of parsed metadata files in memory, each
 * with its JSON text, so that loading an unchanged table again, or
 * committing to it, does not read and parse its metadata again (a table
 * of 10,000 snapshots has ~5 MB of it).  Published metadata files never
 * change; a drop or rename made through this catalog forgets the
 * folder's entries.  Only the filesystem catalog keeps one; others
 * ignore the call.  Thread-safe. */
void floe_ice_catalog_cache_metadata(floe_ice_catalog_t *c, size_t bytes);

/* A loaded table: metadata and where it came from (borrowed from t). */
const floe_ice_metadata_t *floe_ice_table_metadata(const floe_ice_table_t *t);
const char *floe_ice_table_metadata_location(const floe_ice_table_t *t);
const char *floe_ice_table_namespace(const floe_ice_table_t *t);
const char *floe_ice_table_name(const floe_ice_table_t *t);
/* The JSON text of t's metadata file when the catalog kept it (its
 * metadata cache), else NULL; borrowed from t, *len its length. */
const char *floe_ice_table_metadata_text(const floe_ice_table_t *t, size_t *len);
/* Metadata version N of vN.metadata.json. */
int64_t floe_ice_table_version(const floe_ice_table_t *t);
void floe_ice_table_free(floe_ice_table_t *t);

#endif
