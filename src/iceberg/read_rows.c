/* Rows of a table's data files as JSON objects (read.h).
 *
 * Data files are read with floe's Parquet reader and mapped to the table's
 * current schema by field id (a column a file lacks reads null, which is
 * how old files look after schema evolution).  Records are assembled from
 * the Dremel definition/repetition levels column chunk by column chunk: a
 * cursor per leaf column; at every node, the first leaf below it tells
 * whether the node is null, an empty list or has one more element.  Rows
 * the position or equality deletes of the file name are assembled (the
 * cursors move on) but not handed over. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/read_int.h"
#include "util/json.h"

typedef struct cursor {
    floe_pq_column_t col;
    bool loaded;
    size_t pos, vpos; /* next level entry, next value */
} cursor_t;

typedef struct node_info {
    int def, rep;         /* levels of the node itself */
    int first_col, ncols; /* leaf columns below it (contiguous) */
} node_info_t;

typedef struct file_scan {
    const floe_pq_schema_t *ps;
    node_info_t *ni;
    cursor_t *cur;
    int ncols;
    floe_buf_t scratch;
} file_scan_t;

static int corrupt(floe_err_t *err, const char *what)
{
    return floe_err_set(err, FLOE_ECORRUPT, "data file levels do not add up (%s)", what);
}

/* ---- record assembly ---- */

static int16_t def_at(const cursor_t *c)
{
    return c->col.def ? c->col.def[c->pos] : 0;
}
static int16_t rep_at(const cursor_t *c)
{
    return c->col.rep ? c->col.rep[c->pos] : 0;
}

/* The first leaf cursor under node, checked to have an entry left. */
static cursor_t *lead(file_scan_t *fs, int node, floe_err_t *err)
{
    const node_info_t *ni = &fs->ni[node];
    if (ni->ncols <= 0) {
        corrupt(err, "a group without leaf columns");
        return NULL;
    }
    cursor_t *c = &fs->cur[ni->first_col];
    if (c->pos >= c->col.n_levels) {
        corrupt(err, "a column chunk ended early");
        return NULL;
    }
    return c;
}

/* A null or empty instance of node: every leaf below has exactly one entry. */
static int skip_one(file_scan_t *fs, int node, floe_err_t *err)
{
    const node_info_t *ni = &fs->ni[node];
    for (int k = 0; k < ni->ncols; k++) {
        cursor_t *c = &fs->cur[ni->first_col + k];
        if (c->pos >= c->col.n_levels) return corrupt(err, "a column chunk ended early");
        if (def_at(c) >= ni->def) return corrupt(err, "a value where a null was expected");
        c->pos++;
    }
    return 0;
}

static const floe_ice_field_t *ice_child(const floe_ice_type_t *ice, int32_t id)
{
    if (!ice || ice->kind != FLOE_ICE_STRUCT || id < 0) return NULL;
    for (size_t i = 0; i < ice->nfields; i++)
        if (ice->fields[i].id == id) return &ice->fields[i];
    return NULL;
}

static int read_field(file_scan_t *fs, int node, const floe_ice_type_t *ice, floe_buf_t *out,
                      int depth, floe_err_t *err);

static int read_instance(file_scan_t *fs, int node, const floe_ice_type_t *ice, floe_buf_t *out,
                         int depth, floe_err_t *err);

typedef enum { REP_ELEMENT_CHILD, REP_SELF, REP_MAP } rep_mode_t;

/* The instances of repeated node rnode as a JSON array (or object, for a
 * map with string keys). */
static int read_repeated(file_scan_t *fs, int rnode, rep_mode_t mode, const floe_ice_type_t *ice,
                         floe_buf_t *out, int depth, floe_err_t *err)
{
    const node_info_t *ni = &fs->ni[rnode];
    const floe_pq_schema_t *ps = fs->ps;
    int kn = -1, vn = -1;
    bool as_object = false;
    const floe_ice_type_t *kt = NULL, *vt = NULL, *et = NULL;
    if (mode == REP_MAP) {
        if (floe_pq_schema_num_children(ps, rnode) != 2)
            return corrupt(err, "a map entry without key and value");
        kn = floe_pq_schema_child(ps, rnode, 0);
        vn = floe_pq_schema_child(ps, rnode, 1);
        if (ice && ice->kind == FLOE_ICE_MAP && ice->nfields == 2) {
            kt = ice->fields[0].type;
            vt = ice->fields[1].type;
        }
        const floe_pq_node_t *k = floe_pq_schema_node(ps, kn);
        as_object = k->phys == FLOE_PQ_BYTE_ARRAY &&
                    (k->logical == FLOE_PQ_LT_STRING || (kt && kt->kind == FLOE_ICE_STRING));
    } else if (ice && ice->kind == FLOE_ICE_LIST && ice->nfields == 1) {
        et = ice->fields[0].type;
    }
    cursor_t *c = lead(fs, rnode, err);
    if (!c) return -1;
    if (def_at(c) < ni->def) {
        if (skip_one(fs, rnode, err)) return -1;
        return floe_buf_append_str(out, as_object ? "{}" : "[]");
    }
    if (floe_buf_append_u8(out, as_object ? '{' : '[')) goto oom;
    for (bool first = true;; first = false) {
        if (!first && floe_buf_append_u8(out, ',')) goto oom;
        if (mode == REP_MAP) {
            if (!as_object && floe_buf_append_str(out, "{\"key\":")) goto oom;
            if (read_field(fs, kn, kt, out, depth + 1, err)) return -1;
            if (floe_buf_append_str(out, as_object ? ":" : ",\"value\":")) goto oom;
            if (read_field(fs, vn, vt, out, depth + 1, err)) return -1;
            if (!as_object && floe_buf_append_u8(out, '}')) goto oom;
        } else if (mode == REP_ELEMENT_CHILD) {
            if (read_field(fs, floe_pq_schema_child(ps, rnode, 0), et, out, depth + 1, err))
                return -1;
        } else {
            if (read_instance(fs, rnode, et, out, depth + 1, err)) return -1;
        }
        if (c->pos >= c->col.n_levels || rep_at(c) != ni->rep) break;
        if (def_at(c) < ni->def) return corrupt(err, "an empty element inside a list");
    }
    if (floe_buf_append_u8(out, as_object ? '}' : ']')) goto oom;
    return 0;
oom:
    return floe_err_oom(err);
}

/* A struct: every Parquet child is read (so the cursors stay aligned); the
 * ones the schema knows are printed under their schema names, and schema
 * fields the file lacks print null. */
static int read_struct(file_scan_t *fs, int node, const floe_ice_type_t *ice, floe_buf_t *out,
                       int depth, floe_err_t *err)
{
    const floe_pq_schema_t *ps = fs->ps;
    int nc = floe_pq_schema_num_children(ps, node);
    if (floe_buf_append_u8(out, '{')) goto oom;
    bool first = true;
    for (int i = 0; i < nc; i++) {
        int ch = floe_pq_schema_child(ps, node, i);
        const floe_pq_node_t *cn = floe_pq_schema_node(ps, ch);
        const floe_ice_field_t *f = ice_child(ice, cn->field_id);
        if (ice && !f) {
            /* a column the schema no longer has: consume, print nothing */
            size_t mark = fs->scratch.len;
            int rc = read_field(fs, ch, NULL, &fs->scratch, depth + 1, err);
            fs->scratch.len = mark;
            if (rc) return -1;
            continue;
        }
        if (!first && floe_buf_append_u8(out, ',')) goto oom;
        first = false;
        const char *name = f ? f->name : cn->name;
        if (floe_json_str(out, name, strlen(name)) || floe_buf_append_u8(out, ':')) goto oom;
        if (read_field(fs, ch, f ? f->type : NULL, out, depth + 1, err)) return -1;
    }
    for (size_t i = 0; ice && ice->kind == FLOE_ICE_STRUCT && i < ice->nfields; i++) {
        bool present = false;
        for (int k = 0; k < nc && !present; k++)
            present = floe_pq_schema_node(ps, floe_pq_schema_child(ps, node, k))->field_id ==
                      ice->fields[i].id;
        if (present) continue;
        if (!first && floe_buf_append_u8(out, ',')) goto oom;
        first = false;
        if (floe_json_str(out, ice->fields[i].name, strlen(ice->fields[i].name)) ||
            floe_buf_append_str(out, ":null"))
            goto oom;
    }
    if (floe_buf_append_u8(out, '}')) goto oom;
    return 0;
oom:
    return floe_err_oom(err);
}

/* One present instance of node (its own optional/repeated level already
 * decided by the caller). */
static int read_instance(file_scan_t *fs, int node, const floe_ice_type_t *ice, floe_buf_t *out,
                         int depth, floe_err_t *err)
{
    if (depth > 64) return corrupt(err, "nesting deeper than 64");
    const floe_pq_schema_t *ps = fs->ps;
    const floe_pq_node_t *n = floe_pq_schema_node(ps, node);
    if (n->phys != FLOE_PQ_GROUP) {
        int col = floe_pq_schema_column_of(ps, node);
        if (col < 0 || col >= fs->ncols) return corrupt(err, "a leaf without a column");
        cursor_t *c = &fs->cur[col];
        if (c->pos >= c->col.n_levels) return corrupt(err, "a column chunk ended early");
        if (def_at(c) != fs->ni[node].def) return corrupt(err, "a null where a value was expected");
        if (c->vpos >= c->col.n_values) return corrupt(err, "fewer values than levels say");
        if (floe_ice_json_value(out, n, ice, &c->col, c->vpos)) return floe_err_oom(err);
        c->vpos++;
        c->pos++;
        return 0;
    }
    if (n->logical == FLOE_PQ_LT_LIST || n->logical == FLOE_PQ_LT_MAP) {
        if (floe_pq_schema_num_children(ps, node) != 1)
            return corrupt(err, "a list or map group without its one repeated child");
        int r = floe_pq_schema_child(ps, node, 0);
        const floe_pq_node_t *rn = floe_pq_schema_node(ps, r);
        if (rn->rep != FLOE_PQ_REPEATED)
            return corrupt(err, "a list or map whose child is not repeated");
        rep_mode_t mode = n->logical == FLOE_PQ_LT_MAP ? REP_MAP
                          : (rn->phys == FLOE_PQ_GROUP && floe_pq_schema_num_children(ps, r) == 1)
                              ? REP_ELEMENT_CHILD
                              : REP_SELF;
        return read_repeated(fs, r, mode, ice, out, depth, err);
    }
    return read_struct(fs, node, ice, out, depth, err);
}

/* node with its own repetition: null, a bare repeated field (an array), or
 * an instance. */
static int read_field(file_scan_t *fs, int node, const floe_ice_type_t *ice, floe_buf_t *out,
                      int depth, floe_err_t *err)
{
    if (depth > 64) return corrupt(err, "nesting deeper than 64");
    const floe_pq_node_t *n = floe_pq_schema_node(fs->ps, node);
    if (n->rep == FLOE_PQ_REPEATED) return read_repeated(fs, node, REP_SELF, NULL, out, depth, err);
    if (n->rep == FLOE_PQ_OPTIONAL) {
        cursor_t *c = lead(fs, node, err);
        if (!c) return -1;
        if (def_at(c) < fs->ni[node].def) {
            if (skip_one(fs, node, err)) return -1;
            return floe_buf_append_str(out, "null") ? floe_err_oom(err) : 0;
        }
    }
    return read_instance(fs, node, ice, out, depth, err);
}

/* ---- files ---- */

static void free_cursors(file_scan_t *fs)
{
    for (int k = 0; k < fs->ncols; k++)
        if (fs->cur[k].loaded) floe_pq_column_free(&fs->cur[k].col);
    memset(fs->cur, 0, (size_t)fs->ncols * sizeof *fs->cur);
}

/* Decode column col of row group rg into its cursor, unless it is there. */
static int load_col(file_scan_t *fs, floe_pq_reader_t *r, int rg, int col, const char *what,
                    floe_err_t *err)
{
    cursor_t *c = &fs->cur[col];
    if (c->loaded) return 0;
    if (floe_pq_read_column(r, rg, col, &c->col, err)) {
        floe_err_wrap(err, "%s", what);
        return -1;
    }
    c->loaded = true;
    return 0;
}

/* A top-level column to print: its name, its Parquet node (-1: the file
 * lacks it, print null) and its schema type (NULL: unknown). */
typedef struct top_col {
    const char *name;
    int node;
    const floe_ice_type_t *type;
} top_col_t;

/* Levels of every node, and the top-level columns to print: schema's, or
 * the file's own when schema is NULL.  *top: caller frees. */
static int file_scan_init(file_scan_t *fs, const floe_ice_schema_t *schema, top_col_t **top,
                          size_t *ntop, floe_err_t *err)
{
    int nn = floe_pq_schema_num_nodes(fs->ps);
    fs->ncols = floe_pq_schema_num_columns(fs->ps);
    *ntop = schema ? schema->root->nfields : (size_t)floe_pq_schema_num_children(fs->ps, -1);
    fs->ni = calloc((size_t)nn + 1, sizeof *fs->ni);
    fs->cur = calloc((size_t)fs->ncols + 1, sizeof *fs->cur);
    *top = calloc(*ntop + 1, sizeof **top);
    if (!fs->ni || !fs->cur || !*top) return floe_err_oom(err);
    /* nodes come parent-first, so parents' levels are known in time */
    for (int i = 0; i < nn; i++) {
        const floe_pq_node_t *n = floe_pq_schema_node(fs->ps, i);
        int pd = n->parent >= 0 ? fs->ni[n->parent].def : 0,
            pr = n->parent >= 0 ? fs->ni[n->parent].rep : 0;
        fs->ni[i].def = pd + (n->rep != FLOE_PQ_REQUIRED);
        fs->ni[i].rep = pr + (n->rep == FLOE_PQ_REPEATED);
        int first = -1;
        fs->ni[i].ncols = floe_pq_schema_columns_under(fs->ps, i, &first, 1);
        fs->ni[i].first_col = first;
    }
    for (size_t f = 0; f < *ntop; f++) {
        if (schema) {
            const floe_ice_field_t *fld = &schema->root->fields[f];
            int node = floe_pq_schema_find_field(fs->ps, fld->id);
            (*top)[f] = (top_col_t){
                fld->name, node >= 0 && floe_pq_schema_node(fs->ps, node)->parent == -1 ? node : -1,
                fld->type};
        } else {
            int node = floe_pq_schema_child(fs->ps, -1, (int)f);
            (*top)[f] = (top_col_t){floe_pq_schema_node(fs->ps, node)->name, node, NULL};
        }
    }
    return 0;
}

/* Row group rg (nrows rows) starts: the key columns of q decoded. */
static int eq_start(floe_ice_eq_check_t *q, file_scan_t *fs, floe_pq_reader_t *r, int rg,
                    int64_t nrows, const char *what, floe_err_t *err)
{
    for (size_t k = 0; k < q->nkc; k++) {
        int col = q->kc[k].col;
        if (col >= 0 && load_col(fs, r, rg, col, what, err)) return -1;
        if (floe_ice_key_col_start(&q->kc[k], col >= 0 ? &fs->cur[col].col : NULL, nrows, what,
                                   err))
            return -1;
    }
    return 0;
}

/* The rows of the file r reads (named what in errors). */
static int read_file(floe_pq_reader_t *r, const char *what, const floe_ice_schema_t *schema,
                     const floe_ice_deletes_t *dels, int64_t *left, floe_ice_row_fn fn,
                     floe_ice_row_pos_fn pfn, void *arg, floe_err_t *err)
{
    floe_buf_t line = FLOE_BUF_INIT;
    file_scan_t fs = {.ps = floe_pq_reader_schema(r)};
    floe_ice_eq_check_t eq = {0};
    top_col_t *top = NULL;
    size_t ntop;
    int rc = -1;
    const int64_t *pos = dels ? dels->pos : NULL;
    size_t npos = dels ? dels->npos : 0;
    if (file_scan_init(&fs, schema, &top, &ntop, err) ||
        floe_ice_eq_check_bind(&eq, dels, fs.ps, schema, what, err))
        goto fail;
    int64_t row_in_file = 0;
    size_t di = 0;
    for (int rg = 0; rg < floe_pq_reader_num_row_groups(r) && *left != 0; rg++) {
        int64_t nrows = floe_pq_reader_row_group_rows(r, rg);
        for (size_t f = 0; f < ntop; f++) {
            if (top[f].node < 0) continue;
            const node_info_t *ni = &fs.ni[top[f].node];
            for (int k = 0; k < ni->ncols; k++)
                if (load_col(&fs, r, rg, ni->first_col + k, what, err)) goto fail;
        }
        if (eq_start(&eq, &fs, r, rg, nrows, what, err)) goto fail;
        for (int64_t row = 0; row < nrows && *left != 0; row++, row_in_file++) {
            line.len = 0;
            if (floe_buf_append_u8(&line, '{')) goto oom;
            for (size_t f = 0; f < ntop; f++) {
                if ((f && floe_buf_append_u8(&line, ',')) ||
                    floe_json_str(&line, top[f].name, strlen(top[f].name)) ||
                    floe_buf_append_u8(&line, ':'))
                    goto oom;
                if (top[f].node < 0) {
                    if (floe_buf_append_str(&line, "null")) goto oom;
                } else if (read_field(&fs, top[f].node, top[f].type, &line, 0, err)) {
                    floe_err_wrap(err, "%s row %lld", what, (long long)row_in_file);
                    goto fail;
                }
            }
            if (floe_buf_append_u8(&line, '}')) goto oom;
            bool deleted;
            if (floe_ice_eq_check_row(&eq, (size_t)row, &deleted, what, err)) goto fail;
            while (di < npos && pos[di] < row_in_file) di++;
            if (deleted || (di < npos && pos[di] == row_in_file)) continue;
            if (pfn ? pfn(arg, what, row_in_file, (const char *)line.data, line.len, err)
                    : fn(arg, (const char *)line.data, line.len, err))
                goto fail;
            if (*left > 0) (*left)--;
        }
        free_cursors(&fs);
    }
    rc = 0;
    goto done;
oom:
    floe_err_oom(err);
fail:
    if (fs.cur) free_cursors(&fs);
done:
    free(top);
    free(fs.ni);
    free(fs.cur);
    floe_ice_eq_check_clear(&eq);
    floe_buf_free(&fs.scratch);
    floe_buf_free(&line);
    return rc;
}

int floe_ice_read_file(const uint8_t *data, size_t len, const char *what,
                       const floe_ice_schema_t *schema, const floe_ice_deletes_t *dels,
                       int64_t *left, floe_ice_row_fn fn, void *arg, floe_err_t *err)
{
    floe_pq_reader_t *r = floe_pq_reader_open(data, len, err);
    if (!r) {
        floe_err_wrap(err, "%s", what);
        return -1;
    }
    int rc = read_file(r, what, schema, dels, left, fn, NULL, arg, err);
    floe_pq_reader_free(r);
    return rc;
}

/* The rows of one data file; *left counts down the limit. */
static int read_task(floe_fileio_t *io, const floe_ice_scan_task_t *t,
                     const floe_ice_schema_t *schema, int64_t *left, floe_ice_row_fn fn,
                     floe_ice_row_pos_fn pfn, void *arg, floe_err_t *err)
{
    const char *path = t->file->path;
    if (!floe_ice_is_parquet(t->file))
        return floe_err_set(err, FLOE_EUNSUPPORTED, "data file %s is %s; floe reads Parquet only",
                            path, t->file->format);
    floe_ice_deletes_t *dels;
    if (floe_ice_deletes_load(io, t, schema, &dels, err)) return -1;
    floe_buf_t data = FLOE_BUF_INIT;
    floe_pq_reader_t *r = floe_ice_parquet_open(io, path, &data, err);
    int rc = r ? read_file(r, path, schema, dels, left, fn, pfn, arg, err) : -1;
    floe_pq_reader_free(r);
    floe_buf_free(&data);
    floe_ice_deletes_free(dels);
    return rc;
}

/* floe_ice_read_table, with fn or pfn. */
static int read_table(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t limit,
                      floe_ice_row_fn fn, floe_ice_row_pos_fn pfn, void *arg, floe_err_t *err)
{
    const floe_ice_schema_t *schema = floe_ice_metadata_current_schema(md);
    if (!schema || !schema->root)
        return floe_err_set(err, FLOE_ECORRUPT, "the table has no current schema");
    if (md->current_snapshot_id < 0 || limit == 0) return 0;
    floe_ice_scan_t *sc;
    if (floe_ice_scan_plan(io, md, -1, NULL, 0, &sc, err)) return -1;
    int64_t left = limit;
    int rc = 0;
    for (size_t i = 0; i < floe_ice_scan_ntasks(sc) && left != 0 && !rc; i++)
        rc = read_task(io, floe_ice_scan_task(sc, i), schema, &left, fn, pfn, arg, err);
    floe_ice_scan_free(sc);
    return rc;
}

int floe_ice_read_table(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t limit,
                        floe_ice_row_fn fn, void *arg, floe_err_t *err)
{
    return read_table(io, md, limit, fn, NULL, arg, err);
}

int floe_ice_read_table_pos(floe_fileio_t *io, const floe_ice_metadata_t *md,
                            floe_ice_row_pos_fn fn, void *arg, floe_err_t *err)
{
    return read_table(io, md, -1, NULL, fn, arg, err);
}
