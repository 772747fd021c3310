/* An output table of a table topic (the main table or its dead-letter
 * table) as the engine holds it between commits: the table's last loaded
 * Iceberg state, the working schema (the committed one plus fields found
 * since), the partition spec of new files, the closed files awaiting a
 * commit, and the widenings their files still need.
 *
 * Every change of this state goes through the functions below (tout.c),
 * which keep these invariants:
 *   - committed[p] is the next offset of Kafka partition p that ice's
 *     snapshots record (-1: none), for p < nparts;
 *   - work holds every field of ice's current schema, with the same ids;
 *     schema_version grows with work, schema_dirty says work is not yet
 *     the table's schema, schema_json is work's JSON;
 *   - committed_max_id: every field id up to it may be in the table's
 *     files (a long of those widens through the maintenance thread); the
 *     ids of fields found since are higher;
 *   - pending files are closed, written under work and spec, and in no
 *     snapshot yet: a commit adds them, a reset deletes them;
 *   - widened lists the long fields work replaced by doubles that pending
 *     files may still hold: the next commit rewrites those first.
 * Other writers (the maintenance thread) commit to the table too: ice is
 * only the last state this thread loaded, reloaded after each commit.
 * Fields may be read anywhere in the engine; only tout.c writes them.
 * Not thread-safe: the engine thread owns it. */
#ifndef FLOE_TABLE_TOUT_H
#define FLOE_TABLE_TOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "iceberg/catalog.h"
#include "iceberg/manifest.h"
#include "table/rows.h"
#include "table/schema_map.h"
#include "table/upsert.h"

/* What becomes of uncommitted files that are dropped. */
typedef enum floe_tfiles {
    FLOE_TFILES_DELETE = 0, /* delete them: they were never committed */
    FLOE_TFILES_KEEP,       /* keep them: a commit whose outcome is unknown may
                             * hold them (the next open's orphan sweep decides) */
} floe_tfiles_t;

typedef struct floe_tout {
    char ns[128], name[300];
    floe_ice_table_t *ice;   /* last loaded state; NULL until opened */
    floe_ice_schema_t *work; /* current schema + fields found since */
    int32_t last_column_id;
    uint64_t schema_version;       /* bumped when work grows */
    bool schema_dirty;             /* work differs from the committed schema */
    char *schema_json;             /* of work, for new files */
    int64_t *committed;            /* per partition; -1: nothing yet */
    int32_t nparts;                /* entries of committed */
    floe_ice_spec_t *spec;         /* spec of new files (owned) */
    bool spec_dirty;               /* spec not yet in the table */
    char spec_text[512];           /* table.partition.by it was made from */
    bool spec_waiting;             /* its source fields are not there yet */
    floe_ice_data_file_t *pending; /* closed files awaiting commit */
    size_t npending, cappending;
    uint64_t file_seq; /* numbers this run's files */
    floe_twiden_t *widened;
    size_t nwidened;
    int32_t committed_max_id; /* see above */
    /* upsert tables: the key changes the pending files bring (kept and
     * dropped with them) */
    floe_tupsert_log_t uplog;
} floe_tout_t;

/* Name an empty output (o zeroed or cleared); opened by floe_tout_adopt. */
void floe_tout_init(floe_tout_t *o, const char *ns, const char *name);
/* Free everything o holds, uncommitted files kept on storage. */
void floe_tout_clear(floe_tout_t *o);

/* Take the loaded table ice (ownership moves here, also on failure) as
 * the committed state of a topic of nparts partitions: committed offsets
 * from its snapshots, work = its current schema, spec = its default spec;
 * widenings are forgotten (pending files are not touched).
 * 0, or -1 with *err (o unchanged). */
int floe_tout_adopt(floe_tout_t *o, floe_ice_table_t *ice, int32_t nparts, floe_err_t *err);
/* The topic grew to nparts partitions: new ones have nothing committed. */
int floe_tout_set_partitions(floe_tout_t *o, int32_t nparts, floe_err_t *err);
/* Replace the loaded state by a reload of the same table (takes nt). */
void floe_tout_reloaded(floe_tout_t *o, floe_ice_table_t *nt);

/* Location of the table's data folder ("<location>/data"), into buf.
 * 0, or -1 with *err (no location, or too long). */
int floe_tout_data_dir(const floe_tout_t *o, char *buf, size_t size, floe_err_t *err);
/* The path of a new data file of Kafka partition id, written by run
 * writer_id (borrowed) in the partition folder part ("" or "a=1/b=2/"),
 * into buf.  0, or -1 with *err. */
int floe_tout_file_path(floe_tout_t *o, const char *writer_id, int32_t id, const char *part,
                        char *buf, size_t size, floe_err_t *err);
/* The path of a rewrite of file in (borrowed), in its folder, into buf. */
int floe_tout_rewrite_path(floe_tout_t *o, const char *writer_id, const char *in, char *buf,
                           size_t size, floe_err_t *err);
/* Reserve a field id for a field to come (a widening's double field, made
 * by the maintenance thread): no field of work gets it. */
int32_t floe_tout_reserve_id(floe_tout_t *o);

/* Fields of rows' shape new to the working schema get ids there (the
 * schema grows; a long field that meets fractions is noted as widened);
 * every node of rows gets its field id.  *grew tells whether work grew.
 * No storage is touched.  0, or -1 with *err (work unchanged: a field
 * whose kind conflicts is refused whole). */
int floe_tout_merge_schema(floe_tout_t *o, floe_rows_t *rows, bool *grew, floe_err_t *err);
/* Make o->spec follow table.partition.by (text) once its source fields
 * exist in the working schema; a new spec is committed before data. */
void floe_tout_resolve_spec(floe_tout_t *o, const char *text);

/* Bytes of the live files of o's table: the current snapshot's
 * total-files-size; 0 without a snapshot, -1 when the snapshot does not
 * say (another writer left it out). */
int64_t floe_tout_live_bytes(const floe_tout_t *o);

/* Whether a long field may become a double field (floe_tout_may_widen). */
typedef enum floe_twiden_verdict {
    FLOE_TWIDEN_OK = 0,
    FLOE_TWIDEN_SOURCE, /* a partition spec takes values from the field */
    FLOE_TWIDEN_LARGE,  /* the table's files holding it are too many bytes to rewrite */
} floe_twiden_verdict_t;

/* The one place that decides whether the long field field_id of o's
 * working schema may widen to double when a fraction arrives for it: not
 * when a partition spec of the table (or the one new files get) takes
 * values from it (the specs name its id); not when the table's committed
 * schema has it (so its live files hold it, and a widening rewrites every
 * one of them) while the table's live data is above max_bytes
 * (table.json.widen.max.bytes; a size the snapshot does not tell counts
 * as above).  For FLOE_TWIDEN_LARGE, why (size bytes) gets the reason for
 * the dead-letter row. */
floe_twiden_verdict_t floe_tout_may_widen(const floe_tout_t *o, int32_t field_id,
                                          uint64_t max_bytes, char *why, size_t size);

/* Add a closed file to the pending list (takes ownership of *f, also on
 * failure). */
int floe_tout_add_pending(floe_tout_t *o, floe_ice_data_file_t *f, floe_err_t *err);
/* Replace pending file i by its rewrite *f (taken); the old file is
 * deleted through io (it was never committed). */
void floe_tout_replace_pending(floe_tout_t *o, size_t i, floe_ice_data_file_t *f,
                               floe_fileio_t *io);
/* Forget the pending files; delete them through io unless FLOE_TFILES_KEEP
 * (io may be NULL then). */
void floe_tout_drop_pending(floe_tout_t *o, floe_tfiles_t fate, floe_fileio_t *io);

/* Upsert: the fields ids[0..n) (field ids of work) are the table's key:
 * work's identifier fields, required (the converter lets no row without
 * them in).  Work changes (schema_dirty) only when they were not so
 * already.  0, or -1 with *err (an id not in work, ENOMEM). */
int floe_tout_set_identifiers(floe_tout_t *o, const int32_t *ids, size_t n, floe_err_t *err);

/* Every pending file holding a widened field was rewritten: forget the
 * widenings. */
void floe_tout_widened_done(floe_tout_t *o);
/* The maintenance thread committed a widening: nt (taken) is the table
 * now, whose schema replaced the long fields w[i].from by double fields
 * w[i].to.  work takes the same change (keeping the fields found since),
 * and the pairs are noted as widened (pending files may hold the old
 * fields).  0, or -1 with *err (out of memory: o unchanged but for ice). */
int floe_tout_widen_committed(floe_tout_t *o, floe_ice_table_t *nt, const floe_twiden_t *w,
                              size_t n, floe_err_t *err);

/* A schema-only commit made work the table's schema: nt (taken) is the
 * table now. */
void floe_tout_schema_committed(floe_tout_t *o, floe_ice_table_t *nt);
/* A commit made spec the table's default spec: nt (taken) is the table
 * now. */
void floe_tout_spec_committed(floe_tout_t *o, floe_ice_table_t *nt);

/* What a snapshot of floe_tout_snapshot_committed held. */
typedef enum floe_tsnap {
    FLOE_TSNAP_PENDING = 1 << 0, /* the pending files */
    FLOE_TSNAP_SCHEMA = 1 << 1,  /* work, as the table's schema */
} floe_tsnap_t;

/* A snapshot landed with offsets next[0..nparts) (borrowed; may be
 * o->committed; nparts <= o->nparts) and what flags (floe_tsnap_t) say:
 * they are committed now. */
void floe_tout_snapshot_committed(floe_tout_t *o, const int64_t *next, int32_t nparts,
                                  unsigned flags);

#endif
