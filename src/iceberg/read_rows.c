/* Rows of a table's data files as JSON objects (read.h).
 *
 * Data files are read with floe's Parquet reader and mapped to the table's
 * current schema by field id (a column a file lacks reads null, which is
 * how old files look after schema evolution).  Records are assembled from
 * the Dremel definition/repetition levels column chunk by column chunk: a
 * cursor per leaf column; at every node, the first leaf below it tells
 * whether the node is null, an empty list or has one more element.
 * Position deletes are applied; equality deletes are refused, not ignored. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/parquet.h"
#include "iceberg/read.h"
#include "util/clock.h"
#include "util/json.h"

/* Iceberg's reserved field ids of position delete files. */
#define ICE_DELETE_FILE_PATH 2147483546
#define ICE_DELETE_POS 2147483545

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

/* ---- JSON output helpers ---- */

static int put_base64(floe_buf_t *b, const uint8_t *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (floe_buf_append_u8(b, '"')) return -1;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        char q[4] = {tab[(v >> 18) & 63], tab[(v >> 12) & 63], i + 1 < n ? tab[(v >> 6) & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        if (floe_buf_append(b, q, 4)) return -1;
    }
    return floe_buf_append_u8(b, '"');
}

/* Shortest text that reads back as the same double; NaN and infinities as
 * strings (JSON has no literal for them). */
static int put_double(floe_buf_t *b, double d)
{
    if (isnan(d)) return floe_buf_append_str(b, "\"NaN\"");
    if (isinf(d)) return floe_buf_append_str(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    char s[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, d);
        if (strtod(s, NULL) == d) break;
    }
    if (!strpbrk(s, ".en")) strcat(s, ".0");
    return floe_buf_append_str(b, s);
}

static int put_decimal(floe_buf_t *b, __int128 v, int32_t scale)
{
    char digits[64];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u && n < 60);
    while (n <= scale && n < 60) digits[n++] = '0';
    char s[72];
    int k = 0;
    if (neg) s[k++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        s[k++] = digits[i];
        if (i == scale && scale > 0) s[k++] = '.';
    }
    s[k] = 0;
    return floe_buf_append_str(b, s);
}

/* Unscaled big-endian two's complement (at most 16 bytes). */
static bool be_int128(const uint8_t *p, size_t n, __int128 *out)
{
    if (n == 0 || n > 16) return false;
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++) u = (u << 8) | p[i];
    *out = (__int128)u;
    return true;
}

/* Timestamps as ISO-8601 text in UTC (with Z when adjusted to UTC). */
static int put_timestamp(floe_buf_t *b, int64_t v, floe_pq_unit_t unit, bool utc)
{
    char t[48];
    int digits = unit == FLOE_PQ_MILLIS ? 3 : unit == FLOE_PQ_MICROS ? 6 : 9;
    if (floe_time_iso(t, sizeof t, v, digits, utc) < 0) return floe_buf_append_str(b, t);
    return floe_buf_printf(b, "\"%s\"", t);
}

static int put_date(floe_buf_t *b, int32_t days)
{
    char t[48];
    if (floe_time_iso(t, sizeof t, days, FLOE_TIME_DATE, false) < 0)
        return floe_buf_append_str(b, t);
    return floe_buf_printf(b, "\"%s\"", t);
}

static int put_time(floe_buf_t *b, int64_t v, floe_pq_unit_t unit)
{
    int64_t per = unit == FLOE_PQ_MILLIS ? 1000 : unit == FLOE_PQ_MICROS ? 1000000 : 1000000000;
    if (v < 0) return floe_buf_printf(b, "%" PRId64, v);
    int64_t s = v / per, f = v % per;
    int w = unit == FLOE_PQ_MILLIS ? 3 : unit == FLOE_PQ_MICROS ? 6 : 9;
    return floe_buf_printf(b, "\"%02lld:%02lld:%02lld.%0*lld\"", (long long)(s / 3600),
                           (long long)(s / 60 % 60), (long long)(s % 60), w, (long long)f);
}

/* One leaf value, typed by the Parquet node and (when known) the Iceberg
 * type, which wins for promoted columns (an old long file under a double). */
static int put_value(floe_buf_t *b, const floe_pq_node_t *n, const floe_ice_type_t *ice,
                     const floe_pq_column_t *c, size_t i)
{
    floe_ice_kind_t k = ice ? ice->kind : 0;
    switch (c->phys) {
    case FLOE_PQ_BOOLEAN:
        return floe_buf_append_str(b, ((const uint8_t *)c->values)[i] ? "true" : "false");
    case FLOE_PQ_INT32: {
        int32_t v = ((const int32_t *)c->values)[i];
        if (n->logical == FLOE_PQ_LT_DATE || k == FLOE_ICE_DATE) return put_date(b, v);
        if (n->logical == FLOE_PQ_LT_DECIMAL) return put_decimal(b, v, n->scale);
        if (n->logical == FLOE_PQ_LT_TIME) return put_time(b, v, n->unit);
        if (k == FLOE_ICE_DOUBLE || k == FLOE_ICE_FLOAT) return put_double(b, (double)v);
        if (n->logical == FLOE_PQ_LT_INT && !n->is_signed)
            return floe_buf_printf(b, "%" PRIu32, (uint32_t)v);
        return floe_buf_printf(b, "%" PRId32, v);
    }
    case FLOE_PQ_INT64: {
        int64_t v = ((const int64_t *)c->values)[i];
        if (n->logical == FLOE_PQ_LT_TIMESTAMP) return put_timestamp(b, v, n->unit, n->utc);
        if (k == FLOE_ICE_TIMESTAMP || k == FLOE_ICE_TIMESTAMPTZ)
            return put_timestamp(b, v, FLOE_PQ_MICROS, k == FLOE_ICE_TIMESTAMPTZ);
        if (n->logical == FLOE_PQ_LT_TIME || k == FLOE_ICE_TIME)
            return put_time(b, v, n->logical == FLOE_PQ_LT_TIME ? n->unit : FLOE_PQ_MICROS);
        if (n->logical == FLOE_PQ_LT_DECIMAL) return put_decimal(b, v, n->scale);
        if (k == FLOE_ICE_DOUBLE || k == FLOE_ICE_FLOAT) return put_double(b, (double)v);
        if (n->logical == FLOE_PQ_LT_INT && !n->is_signed)
            return floe_buf_printf(b, "%" PRIu64, (uint64_t)v);
        return floe_buf_printf(b, "%" PRId64, v);
    }
    case FLOE_PQ_INT96: {
        /* legacy timestamps: nanoseconds of the day, then the Julian day */
        const floe_slice_t *s = &((const floe_slice_t *)c->values)[i];
        if (s->len != 12) return floe_buf_append_str(b, "null");
        int64_t nanos = (int64_t)floe_rd_le64(s->ptr);
        int64_t jd = (int32_t)floe_rd_le32(s->ptr + 8);
        return put_timestamp(b, (jd - 2440588) * 86400000000000LL + nanos, FLOE_PQ_NANOS, true);
    }
    case FLOE_PQ_FLOAT: return put_double(b, (double)((const float *)c->values)[i]);
    case FLOE_PQ_DOUBLE: return put_double(b, ((const double *)c->values)[i]);
    case FLOE_PQ_BYTE_ARRAY:
    case FLOE_PQ_FIXED: {
        const floe_slice_t *s = &((const floe_slice_t *)c->values)[i];
        __int128 d;
        if (n->logical == FLOE_PQ_LT_DECIMAL && be_int128(s->ptr, s->len, &d))
            return put_decimal(b, d, n->scale);
        if ((n->logical == FLOE_PQ_LT_UUID || k == FLOE_ICE_UUID) && s->len == 16) {
            const uint8_t *u = s->ptr;
            return floe_buf_printf(
                b, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
        }
        if (n->logical == FLOE_PQ_LT_STRING || n->logical == FLOE_PQ_LT_ENUM ||
            n->logical == FLOE_PQ_LT_JSON || k == FLOE_ICE_STRING)
            return floe_json_str(b, s->ptr, s->len);
        return put_base64(b, s->ptr, s->len);
    }
    default: return floe_buf_append_str(b, "null");
    }
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
        if (put_value(out, n, ice, &c->col, c->vpos)) return floe_err_oom(err);
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

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- deletes ---- */

struct floe_ice_deletes {
    int64_t *pos; /* deleted row positions, sorted once loaded */
    size_t npos, cappos;
};

floe_ice_deletes_t *floe_ice_deletes_new(floe_err_t *err)
{
    floe_ice_deletes_t *d = calloc(1, sizeof *d);
    if (!d) floe_err_oom(err);
    return d;
}

void floe_ice_deletes_free(floe_ice_deletes_t *d)
{
    if (!d) return;
    free(d->pos);
    free(d);
}

static int add_position(floe_ice_deletes_t *d, int64_t pos, floe_err_t *err)
{
    if (d->npos == d->cappos) {
        size_t nc = d->cappos ? d->cappos * 2 : 64;
        int64_t *np = realloc(d->pos, nc * sizeof *np);
        if (!np) return floe_err_oom(err);
        d->pos = np;
        d->cappos = nc;
    }
    d->pos[d->npos++] = pos;
    return 0;
}

int floe_ice_deletes_add_positions(floe_ice_deletes_t *d, const int64_t *pos, size_t n,
                                   floe_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (add_position(d, pos[i], err)) return -1;
    if (d->npos) qsort(d->pos, d->npos, sizeof *d->pos, cmp_i64);
    return 0;
}

/* The positions that position delete file r (named what) deletes from data
 * file `path`, added to d unsorted. */
static int load_positions(floe_ice_deletes_t *d, floe_pq_reader_t *r, const char *what,
                          const char *path, floe_err_t *err)
{
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    int pn = floe_pq_schema_find_field(s, ICE_DELETE_FILE_PATH);
    int on = floe_pq_schema_find_field(s, ICE_DELETE_POS);
    int pc = pn < 0 ? -1 : floe_pq_schema_column_of(s, pn),
        oc = on < 0 ? -1 : floe_pq_schema_column_of(s, on);
    if (pc < 0 || oc < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "delete file %s lacks file_path/pos", what);
    size_t plen = strlen(path);
    int rc = 0;
    for (int rg = 0; !rc && rg < floe_pq_reader_num_row_groups(r); rg++) {
        floe_pq_column_t cp, co;
        if (floe_pq_read_column(r, rg, pc, &cp, err)) return -1;
        if (floe_pq_read_column(r, rg, oc, &co, err)) {
            floe_pq_column_free(&cp);
            return -1;
        }
        if (cp.phys != FLOE_PQ_BYTE_ARRAY || co.phys != FLOE_PQ_INT64 || cp.n_values != co.n_values)
            rc =
                floe_err_set(err, FLOE_ECORRUPT, "delete file %s: bad file_path/pos columns", what);
        for (size_t i = 0; !rc && i < cp.n_values; i++) {
            const floe_slice_t *sp = &((const floe_slice_t *)cp.values)[i];
            if (sp->len == plen && !memcmp(sp->ptr, path, plen))
                rc = add_position(d, ((const int64_t *)co.values)[i], err);
        }
        floe_pq_column_free(&cp);
        floe_pq_column_free(&co);
    }
    return rc;
}

static bool is_parquet(const floe_ice_data_file_t *f)
{
    return !f->format || !strcmp(f->format, "PARQUET") || !strcmp(f->format, "parquet");
}

int floe_ice_deletes_load(floe_fileio_t *io, const floe_ice_scan_task_t *t,
                          const floe_ice_schema_t *schema, floe_ice_deletes_t **out,
                          floe_err_t *err)
{
    (void)schema;
    floe_ice_deletes_t *d = floe_ice_deletes_new(err);
    if (!d) return -1;
    floe_buf_t data = FLOE_BUF_INIT;
    int rc = 0;
    for (size_t k = 0; k < t->ndeletes && !rc; k++) {
        const floe_ice_data_file_t *df = t->deletes[k];
        if (df->content == FLOE_ICE_CONTENT_EQUALITY_DELETES) {
            rc = floe_err_set(
                err, FLOE_EUNSUPPORTED,
                "the table has equality delete files (%s); scan does not apply them yet", df->path);
            break;
        }
        if (df->content != FLOE_ICE_CONTENT_POSITION_DELETES) continue;
        if (!is_parquet(df)) {
            rc = floe_err_set(err, FLOE_EUNSUPPORTED, "delete file %s is %s, not Parquet", df->path,
                              df->format);
            break;
        }
        floe_pq_reader_t *r = floe_ice_parquet_open(io, df->path, &data, err);
        if (!r) {
            rc = -1;
            break;
        }
        rc = load_positions(d, r, df->path, t->file->path, err);
        floe_pq_reader_free(r);
    }
    floe_buf_free(&data);
    if (rc) {
        floe_ice_deletes_free(d);
        return -1;
    }
    if (d->npos) qsort(d->pos, d->npos, sizeof *d->pos, cmp_i64);
    *out = d;
    return 0;
}

/* ---- files ---- */

static void free_cursors(file_scan_t *fs)
{
    for (int k = 0; k < fs->ncols; k++)
        if (fs->cur[k].loaded) floe_pq_column_free(&fs->cur[k].col);
    memset(fs->cur, 0, (size_t)fs->ncols * sizeof *fs->cur);
}

/* A top-level column to print: its name, its Parquet node (-1: the file
 * lacks it, print null) and its schema type (NULL: unknown). */
typedef struct top_col {
    const char *name;
    int node;
    const floe_ice_type_t *type;
} top_col_t;

/* The rows of the file r reads (named what in errors). */
static int read_file(floe_pq_reader_t *r, const char *what, const floe_ice_schema_t *schema,
                     const floe_ice_deletes_t *dels, int64_t *left, floe_ice_row_fn fn, void *arg,
                     floe_err_t *err)
{
    floe_buf_t line = FLOE_BUF_INIT;
    file_scan_t fs = {0};
    top_col_t *top = NULL;
    int rc = -1;
    const int64_t *pos = dels ? dels->pos : NULL;
    size_t npos = dels ? dels->npos : 0;
    fs.ps = floe_pq_reader_schema(r);
    int nn = floe_pq_schema_num_nodes(fs.ps);
    fs.ncols = floe_pq_schema_num_columns(fs.ps);
    size_t ntop = schema ? schema->root->nfields : (size_t)floe_pq_schema_num_children(fs.ps, -1);
    fs.ni = calloc((size_t)nn + 1, sizeof *fs.ni);
    fs.cur = calloc((size_t)fs.ncols + 1, sizeof *fs.cur);
    top = calloc(ntop + 1, sizeof *top);
    if (!fs.ni || !fs.cur || !top) goto oom;
    /* nodes come parent-first, so parents' levels are known in time */
    for (int i = 0; i < nn; i++) {
        const floe_pq_node_t *n = floe_pq_schema_node(fs.ps, i);
        int pd = n->parent >= 0 ? fs.ni[n->parent].def : 0,
            pr = n->parent >= 0 ? fs.ni[n->parent].rep : 0;
        fs.ni[i].def = pd + (n->rep != FLOE_PQ_REQUIRED);
        fs.ni[i].rep = pr + (n->rep == FLOE_PQ_REPEATED);
        int first = -1;
        fs.ni[i].ncols = floe_pq_schema_columns_under(fs.ps, i, &first, 1);
        fs.ni[i].first_col = first;
    }
    for (size_t f = 0; f < ntop; f++) {
        if (schema) {
            const floe_ice_field_t *fld = &schema->root->fields[f];
            int node = floe_pq_schema_find_field(fs.ps, fld->id);
            top[f] = (top_col_t){
                fld->name, node >= 0 && floe_pq_schema_node(fs.ps, node)->parent == -1 ? node : -1,
                fld->type};
        } else {
            int node = floe_pq_schema_child(fs.ps, -1, (int)f);
            top[f] = (top_col_t){floe_pq_schema_node(fs.ps, node)->name, node, NULL};
        }
    }
    int64_t row_in_file = 0;
    size_t di = 0;
    for (int rg = 0; rg < floe_pq_reader_num_row_groups(r) && *left != 0; rg++) {
        int64_t nrows = floe_pq_reader_row_group_rows(r, rg);
        for (size_t f = 0; f < ntop; f++) {
            if (top[f].node < 0) continue;
            const node_info_t *ni = &fs.ni[top[f].node];
            for (int k = 0; k < ni->ncols; k++) {
                cursor_t *c = &fs.cur[ni->first_col + k];
                if (c->loaded) continue;
                if (floe_pq_read_column(r, rg, ni->first_col + k, &c->col, err)) {
                    floe_err_wrap(err, "%s", what);
                    goto fail;
                }
                c->loaded = true;
            }
        }
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
            while (di < npos && pos[di] < row_in_file) di++;
            if (di < npos && pos[di] == row_in_file) continue;
            if (fn(arg, (const char *)line.data, line.len, err)) goto fail;
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
    int rc = read_file(r, what, schema, dels, left, fn, arg, err);
    floe_pq_reader_free(r);
    return rc;
}

/* The rows of one data file; *left counts down the limit. */
static int read_task(floe_fileio_t *io, const floe_ice_scan_task_t *t,
                     const floe_ice_schema_t *schema, int64_t *left, floe_ice_row_fn fn, void *arg,
                     floe_err_t *err)
{
    const char *path = t->file->path;
    if (!is_parquet(t->file))
        return floe_err_set(err, FLOE_EUNSUPPORTED, "data file %s is %s; floe reads Parquet only",
                            path, t->file->format);
    floe_ice_deletes_t *dels;
    if (floe_ice_deletes_load(io, t, schema, &dels, err)) return -1;
    floe_buf_t data = FLOE_BUF_INIT;
    floe_pq_reader_t *r = floe_ice_parquet_open(io, path, &data, err);
    int rc = r ? read_file(r, path, schema, dels, left, fn, arg, err) : -1;
    floe_pq_reader_free(r);
    floe_buf_free(&data);
    floe_ice_deletes_free(dels);
    return rc;
}

int floe_ice_read_table(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t limit,
                        floe_ice_row_fn fn, void *arg, floe_err_t *err)
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
        rc = read_task(io, floe_ice_scan_task(sc, i), schema, &left, fn, arg, err);
    floe_ice_scan_free(sc);
    return rc;
}
