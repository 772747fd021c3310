/* A table-topic partition's pipeline: fetch messages from the source,
 * convert records into the main sink, route bad ones (pipeline.h). */
#include "table/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/dlq.h"
#include "table/upsert.h"
#include "util/clock.h"
#include "util/diag.h"

floe_tpart_t *floe_tpart_new(floe_ttable_t *t, int32_t id, floe_err_t *err)
{
    floe_tpart_t *p = calloc(1, sizeof *p);
    if (!p) {
        floe_err_oom(err);
        return NULL;
    }
    p->t = t;
    p->id = id;
    p->pending_ts_ms = p->behind_since_ms = -1;
    if (floe_tsink_init(&p->main, &t->files, &t->main, id, FLOE_TSINK_PARTITIONED, err) < 0 ||
        floe_tsink_init(&p->dlq, &t->files, &t->dlq, id, 0, err) < 0 ||
        !(p->conv = floe_conv_new(p->main.rows, t->cfg.value_conv, t->cfg.key_conv, err)) ||
        floe_tdlq_shape(p->dlq.rows, err) < 0) {
        floe_tpart_free(p);
        return NULL;
    }
    floe_conv_set_schemas(p->conv, &t->schemas);
    if (floe_conv_set_subjects(p->conv, t->cfg.value_subject,
                               (int32_t)strtol(t->cfg.value_version, NULL, 10), t->cfg.key_subject,
                               err) < 0) {
        floe_tpart_free(p);
        return NULL;
    }
    floe_xform_t xf;
    floe_table_config_xform(&t->cfg, &xf);
    floe_conv_set_transforms(p->conv, &xf);
    if (t->cfg.write_mode == FLOE_WRITE_UPSERT && t->cfg.id_columns[0] &&
        (floe_conv_set_upsert(p->conv, t->cfg.id_columns, t->cfg.cdc_field, err) < 0 ||
         floe_tsink_set_upsert(&p->main, t->cfg.id_columns, t->cfg.cdc_field, err) < 0)) {
        floe_tpart_free(p);
        return NULL;
    }
    return p;
}

void floe_tpart_free(floe_tpart_t *p)
{
    if (!p) return;
    floe_conv_free(p->conv);
    floe_tsink_clear(&p->main);
    floe_tsink_clear(&p->dlq);
    free(p);
}

int floe_tpart_drain_due(floe_tpart_t *p, floe_err_t *err)
{
    return floe_tsink_drain_due(&p->main, err) < 0 || floe_tsink_drain_due(&p->dlq, err) < 0 ? -1
                                                                                             : 0;
}

int floe_tpart_seal(floe_tpart_t *p, floe_err_t *err)
{
    return floe_tsink_seal(&p->main, err) < 0 || floe_tsink_seal(&p->dlq, err) < 0 ? -1 : 0;
}

void floe_tpart_restart(floe_tpart_t *p)
{
    floe_tsink_discard(&p->main);
    floe_tsink_discard(&p->dlq);
    int64_t c = p->t->main.committed ? p->t->main.committed[p->id] : -1;
    p->next = c >= 0 ? c : 0;
    p->hold_field = 0;
}

uint64_t floe_tpart_buffered(const floe_tpart_t *p)
{
    return floe_tsink_buffered(&p->main);
}

/* ---- bad records --------------------------------------------------------- */

/* Message m (a record that did not convert at `stage`, or stored bytes
 * that did not decode) goes where table.invalid.record.action says.
 * Returns 0 to go on, 1 when the table pauses on it. */
static int bad_record(floe_tpart_t *p, const floe_tmsg_t *m, floe_conv_stage_t stage,
                      const char *why)
{
    floe_ttable_t *t = p->t;
    switch (t->cfg.invalid_action) {
    case FLOE_INVALID_PAUSE:
        floe_ttable_pause(t, FLOE_TPAUSE_INVALID, "partition %d offset %lld: %s: %s", (int)p->id,
                          (long long)m->offset, floe_conv_stage_name(stage), why);
        return 1;
    case FLOE_INVALID_DROP:
        if (p->dropped++ % 1000 == 0)
            FLOE_WARN(
                "table %s.%s: dropped record at partition %d offset %lld (%s: %s); %llu dropped",
                t->main.ns, t->main.name, (int)p->id, (long long)m->offset,
                floe_conv_stage_name(stage), why, (unsigned long long)p->dropped);
        return 0;
    case FLOE_INVALID_DLQ: break;
    }
    if (t->dlq.committed && m->offset < t->dlq.committed[p->id]) return 0; /* already there */
    floe_err_t e;
    if (floe_tdlq_row(p->dlq.rows, p->id, m, stage, why, &e) < 0) {
        floe_ttable_pause(t, FLOE_TPAUSE_DLQ,
                          "partition %d offset %lld: cannot write the dead-letter row (%s)",
                          (int)p->id, (long long)m->offset, e.msg);
        return 1;
    }
    if (p->dlq_records++ % 1000 == 0)
        FLOE_WARN("table %s.%s: record at partition %d offset %lld to %s (%s: %s); %llu so far",
                  t->main.ns, t->main.name, (int)p->id, (long long)m->offset, t->dlq.name,
                  floe_conv_stage_name(stage), why, (unsigned long long)p->dlq_records);
    return 0;
}

/* ---- the step ------------------------------------------------------------- */

/* Pin the buffer's long nodes that may not widen to double: those
 * floe_tsink_pin refuses (a partition source, a table above
 * table.json.widen.max.bytes) and those whose widening was refused
 * (t->nowiden); fractions there go to the dead-letter table. */
static void pin_refused(const floe_ttable_t *t, floe_rnode_t *n)
{
    for (size_t i = 0; i < n->nkids; i++) {
        floe_rnode_t *k = n->kids[i];
        for (size_t j = 0; k->field_id > 0 && !k->pinned && j < t->nnowiden; j++)
            k->pinned = t->nowiden[j] == k->field_id;
        pin_refused(t, k);
    }
}

/* Records [p->next, start) were deleted from the log before the table
 * read them: retention went past table.retention.max.lag.bytes, or they
 * were gone before the log kept them for the table.  One dead-letter row
 * says so, with the range, whatever table.invalid.record.action says (a
 * gap is never silent: design.md invariant 8), and the partition goes on
 * at start.  Unlike a bad record's row this one is written even below
 * the dead-letter table's committed offset: records read and converted
 * by a run whose main commit never landed may be in the gap too, so a
 * range is recorded at least once (twice when a main commit failed after
 * the dead-letter commit), never zero times.  The table pauses when the
 * row cannot be written. */
static void skipped_by_retention(floe_tpart_t *p, int64_t start)
{
    floe_ttable_t *t = p->t;
    char why[256];
    snprintf(why, sizeof why,
             "skipped by retention: offsets [%lld, %lld) (%lld records) were deleted from the log "
             "before reaching the table",
             (long long)p->next, (long long)start, (long long)(start - p->next));
    floe_tmsg_t gap = {.kind = FLOE_TMSG_SKIP,
                       .offset = p->next,
                       .last = start - 1,
                       .timestamp = floe_wall_ms(),
                       .key_null = true,
                       .value_null = true};
    floe_err_t e;
    if (floe_tdlq_row(p->dlq.rows, p->id, &gap, FLOE_STAGE_RETENTION, why, &e) < 0) {
        floe_ttable_pause(t, FLOE_TPAUSE_DLQ,
                          "partition %d offset %lld: cannot write the dead-letter row (%s)",
                          (int)p->id, (long long)p->next, e.msg);
        return;
    }
    p->retention_skipped += (uint64_t)(start - p->next);
    FLOE_WARN("table %s.%s: partition %d: %s; one row in %s.%s says so", t->main.ns, t->main.name,
              (int)p->id, why, t->dlq.ns, t->dlq.name);
    p->next = start;
}

/* Fetch from p->next.  1 when there is something to take, 0 when not
 * (caught up, records gone to retention, topic going away), -1 on
 * failure. */
static int fetch(floe_tpart_t *p, floe_err_t *err)
{
    floe_ttable_t *t = p->t;
    int64_t start, end;
    floe_err_t re;
    if (t->src->ops->fetch(t->src, t->topic, p->id, p->next, t->read_bytes, &start, &end, &re) <
        0) {
        if (re.code == FLOE_ERANGE) {
            skipped_by_retention(p, start);
            p->log_start = start;
            p->log_end = end;
            return 0;
        }
        if (re.code == FLOE_ENOENT) return 0; /* topic going away: discovery drops it */
        *err = re;
        return -1;
    }
    p->log_start = start;
    p->log_end = end;
    int64_t committed = t->main.committed ? t->main.committed[p->id] : -1;
    if (end > (committed >= 0 ? committed : start) && p->behind_since_ms < 0)
        p->behind_since_ms = floe_wall_ms();
    return 1;
}

/* The identifier fields of schema s as a table.id.columns list, into out
 * (size): 1, or 0 when it has none (or a name does not fit). */
static int schema_ids(const floe_ice_schema_t *s, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; s && i < s->n_identifier_ids; i++) {
        char name[200];
        if (!floe_ice_schema_field_name(s, s->identifier_ids[i], name, sizeof name)) return 0;
        int n = snprintf(out + len, size - len, "%s%s", i ? "," : "", name);
        if (n < 0 || (size_t)n >= size - len) return 0;
        len += (size_t)n;
    }
    return len > 0;
}

/* An upsert table without table.id.columns keeps the identifier fields
 * its schema has (an earlier run chose them), or takes the fields of the
 * first record key it meets (upsert.h floe_tupsert_ids_from_key), for
 * every partition.  0, or -1 with *err (the record goes to the
 * dead-letter table: no key, or one that names no usable column). */
static int default_ids(floe_ttable_t *t, const floe_tmsg_t *m, floe_err_t *err)
{
    char ids[sizeof t->cfg.id_columns];
    bool kept = schema_ids(t->main.work, ids, sizeof ids);
    if (!kept && m->key_null)
        return floe_err_set(err, FLOE_EINVAL,
                            "upsert: no table.id.columns and no record key to take them from");
    if (!kept && floe_tupsert_ids_from_key(m->key, ids, sizeof ids, err) < 0) return -1;
    for (int32_t i = 0; i < t->nparts; i++)
        if (floe_conv_set_upsert(t->parts[i]->conv, ids, t->cfg.cdc_field, err) < 0 ||
            floe_tsink_set_upsert(&t->parts[i]->main, ids, t->cfg.cdc_field, err) < 0)
            return -1;
    memcpy(t->cfg.id_columns, ids, sizeof ids);
    FLOE_INFO("table %s.%s: id columns '%s', %s (no table.id.columns)", t->main.ns, t->main.name,
              ids, kept ? "the table's identifier fields" : "the fields of the record key");
    return 0;
}

int64_t floe_tpart_step(floe_tpart_t *p, floe_err_t *err)
{
    floe_ttable_t *t = p->t;
    if (t->paused || p->hold_field) return 0;
    if (floe_tsink_seed(&p->main, err) < 0) return -1; /* fields other partitions added */
    /* an upsert table never widens a committed column: the rewrite would
     * move rows its key index and delete files point at */
    floe_tsink_pin(&p->main, p->main.up ? 0 : t->cfg.json_widen_max_bytes);
    if (t->nnowiden) pin_refused(t, floe_rows_root(p->main.rows));
    int f = fetch(p, err);
    if (f <= 0) return f;
    uint64_t refused = floe_rows_widen_refused(p->main.rows);
    int64_t converted = 0;
    /* records below the main table's offset are there already (the DLQ
     * table was behind) */
    int64_t main_from = t->main.committed ? t->main.committed[p->id] : -1;
    uint64_t shape = floe_rows_shape_version(p->main.rows);
    floe_tmsg_t m;
    floe_err_t e;
    int rc;
    while ((rc = t->src->ops->next(t->src, &m, &e)) == 1) {
        if (m.last < p->next) continue;
        if (m.kind == FLOE_TMSG_SKIP) {
            p->next = m.last + 1;
            continue;
        }
        if (p->pending_ts_ms < 0 || m.timestamp < p->pending_ts_ms)
            p->pending_ts_ms = m.timestamp; /* freshness: the first record read */
        if (m.kind == FLOE_TMSG_BAD) {
            if (bad_record(p, &m, FLOE_STAGE_DECODE, m.why)) break;
            p->next = m.last + 1;
            continue;
        }
        size_t in = m.value.len + m.key.len;
        if (m.offset >= main_from) {
            floe_conv_stage_t stage = FLOE_STAGE_CONVERT;
            int cr = t->cfg.write_mode == FLOE_WRITE_UPSERT && !t->cfg.id_columns[0]
                         ? default_ids(t, &m, &e)
                         : 0;
            if (cr == 0) cr = floe_conv_record(p->conv, p->id, &m, &stage, &e);
            if (cr == 0) {
                if (p->main.up &&
                    floe_tsink_note_op(&p->main, floe_conv_last_deletes(p->conv), err) < 0)
                    return -1;
                converted++;
                p->records++;
                p->bytes += in;
            } else if ((p->hold_field = floe_rows_held(p->main.rows))) {
                break; /* read again from here once the column widened */
            } else if (bad_record(p, &m, stage, e.msg)) {
                break;
            }
        }
        p->next = m.offset + 1;
        if (floe_tsink_consumed(&p->main, in, err) < 0) return -1;
    }
    if (rc < 0)
        floe_ttable_pause(t, FLOE_TPAUSE_UNREADABLE, "partition %d offset %lld: %s", (int)p->id,
                          (long long)p->next, e.msg);
    /* the fields this step found get their ids: other partitions take
     * them at their next step */
    if (floe_rows_shape_version(p->main.rows) != shape &&
        floe_tsink_merge_schema(&p->main, err) < 0)
        return -1;
    p->widen_refused += floe_rows_widen_refused(p->main.rows) - refused;
    if (floe_tpart_drain_due(p, err) < 0) return -1;
    p->open_bytes = floe_tsink_file_bytes(&p->main) + floe_tsink_file_bytes(&p->dlq);
    return converted;
}
