/* Scan planning: the live data files of a snapshot, each with the delete
 * files that apply to it (spec "Scan Planning"):
 *   - a position delete file applies to data files of the same partition
 *     whose data sequence number is <= the delete's;
 *   - an equality delete file applies to data files of the same partition
 *     (or of every partition when the delete's spec is unpartitioned) whose
 *     data sequence number is < the delete's.
 * Optional equality predicates on source columns prune data manifests
 * whose partition summaries exclude the predicate value (put through the
 * field's transform), and data files whose partition value differs. */
#ifndef FLOE_ICEBERG_SCAN_H
#define FLOE_ICEBERG_SCAN_H

#include "iceberg/manifest.h"

typedef struct floe_ice_scan_task {
    const floe_ice_data_file_t *file;     /* borrowed from the scan */
    int64_t sequence_number;              /* data sequence number */
    int64_t snapshot_id;                  /* snapshot that added it */
    const floe_ice_data_file_t **deletes; /* borrowed; applicable delete files */
    size_t ndeletes;
} floe_ice_scan_task_t;

typedef struct floe_ice_scan_pred {
    int32_t source_id;      /* schema field id */
    floe_ice_value_t value; /* of the field's type; borrowed */
} floe_ice_scan_pred_t;

typedef struct floe_ice_scan floe_ice_scan_t;

/* Whether delete file entry del applies to data file entry data of md
 * (borrowed) by the rules above: kind, data sequence numbers, partition.
 * A position delete then still removes only the rows it names by path. */
bool floe_ice_delete_applies(const floe_ice_metadata_t *md, const floe_ice_manifest_entry_t *del,
                             const floe_ice_manifest_entry_t *data);

/* Plan a scan of snapshot_id (-1: the current snapshot; a table without
 * snapshots plans empty).  md, preds borrowed for the call.  Caller frees
 * *out with floe_ice_scan_free. */
int floe_ice_scan_plan(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t snapshot_id,
                       const floe_ice_scan_pred_t *preds, size_t npreds, floe_ice_scan_t **out,
                       floe_err_t *err);
size_t floe_ice_scan_ntasks(const floe_ice_scan_t *s);
/* Borrowed; valid until floe_ice_scan_free. */
const floe_ice_scan_task_t *floe_ice_scan_task(const floe_ice_scan_t *s, size_t i);
/* Data manifests the partition summaries let the plan skip unread. */
size_t floe_ice_scan_manifests_skipped(const floe_ice_scan_t *s);
/* Every live delete file of the snapshot (borrowed). */
size_t floe_ice_scan_ndelete_files(const floe_ice_scan_t *s);
const floe_ice_manifest_entry_t *floe_ice_scan_delete_file(const floe_ice_scan_t *s, size_t i);
void floe_ice_scan_free(floe_ice_scan_t *s);

/* Every manifest of a snapshot with all its entries (including deleted
 * ones), for producers and maintenance.  Caller frees with
 * floe_ice_snapshot_content_free. */
typedef struct floe_ice_snapshot_content {
    floe_ice_manifest_file_t *manifests;
    size_t nmanifests;
    floe_ice_manifest_entry_t **entries;
    size_t *nentries; /* per manifest */
} floe_ice_snapshot_content_t;

int floe_ice_snapshot_content_read(floe_fileio_t *io, const floe_ice_snapshot_t *snap,
                                   floe_ice_snapshot_content_t *out, floe_err_t *err);
void floe_ice_snapshot_content_free(floe_ice_snapshot_content_t *c);

#endif
