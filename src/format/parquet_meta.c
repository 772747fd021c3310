/* Parquet footer (FileMetaData) and page headers in Thrift compact form. */
#include <stdlib.h>
#include <string.h>

#include "format/parquet_int.h"

/* ---- encode ---- */

static void put_time_unit(floe_thrift_w_t *w, int16_t id, floe_pq_unit_t u)
{
    floe_thrift_w_struct_begin(w, id);
    floe_thrift_w_empty(w, (int16_t)(u == FLOE_PQ_MILLIS ? 1 : u == FLOE_PQ_MICROS ? 2 : 3));
    floe_thrift_w_struct_end(w);
}

static void put_schema_element(floe_thrift_w_t *w, const floe_pq_node_t *n, int nchildren)
{
    floe_thrift_w_elem_struct_begin(w);
    bool grp = n->phys == FLOE_PQ_GROUP;
    if (!grp) floe_thrift_w_i32(w, 1, n->phys);
    if (n->phys == FLOE_PQ_FIXED) floe_thrift_w_i32(w, 2, n->type_length);
    floe_thrift_w_i32(w, 3, n->rep);
    floe_thrift_w_str(w, 4, n->name);
    if (grp) floe_thrift_w_i32(w, 5, nchildren);
    int ct = -1;
    switch (n->logical) {
    case FLOE_PQ_LT_STRING: ct = PQ_CT_UTF8; break;
    case FLOE_PQ_LT_ENUM: ct = PQ_CT_ENUM; break;
    case FLOE_PQ_LT_JSON: ct = PQ_CT_JSON; break;
    case FLOE_PQ_LT_DECIMAL: ct = PQ_CT_DECIMAL; break;
    case FLOE_PQ_LT_DATE: ct = PQ_CT_DATE; break;
    case FLOE_PQ_LT_LIST: ct = PQ_CT_LIST; break;
    case FLOE_PQ_LT_MAP: ct = PQ_CT_MAP; break;
    case FLOE_PQ_LT_TIME:
        /* the legacy annotation means "adjusted to UTC" */
        if (n->utc && n->unit != FLOE_PQ_NANOS)
            ct = n->unit == FLOE_PQ_MILLIS ? PQ_CT_TIME_MILLIS : PQ_CT_TIME_MICROS;
        break;
    case FLOE_PQ_LT_TIMESTAMP:
        if (n->utc && n->unit != FLOE_PQ_NANOS)
            ct = n->unit == FLOE_PQ_MILLIS ? PQ_CT_TS_MILLIS : PQ_CT_TS_MICROS;
        break;
    case FLOE_PQ_LT_INT: {
        int k = n->bit_width == 8 ? 0 : n->bit_width == 16 ? 1 : n->bit_width == 32 ? 2 : 3;
        ct = (n->is_signed ? PQ_CT_INT_8 : PQ_CT_UINT_8) + k;
        break;
    }
    default: break;
    }
    if (ct >= 0) floe_thrift_w_i32(w, 6, ct);
    if (n->logical == FLOE_PQ_LT_DECIMAL) {
        floe_thrift_w_i32(w, 7, n->scale);
        floe_thrift_w_i32(w, 8, n->precision);
    }
    if (n->field_id >= 0) floe_thrift_w_i32(w, 9, n->field_id);
    if (n->logical != FLOE_PQ_LT_NONE && n->logical != FLOE_PQ_LT_UNKNOWN) {
        floe_thrift_w_struct_begin(w, 10);
        switch (n->logical) {
        case FLOE_PQ_LT_STRING: floe_thrift_w_empty(w, 1); break;
        case FLOE_PQ_LT_MAP: floe_thrift_w_empty(w, 2); break;
        case FLOE_PQ_LT_LIST: floe_thrift_w_empty(w, 3); break;
        case FLOE_PQ_LT_ENUM: floe_thrift_w_empty(w, 4); break;
        case FLOE_PQ_LT_DECIMAL:
            floe_thrift_w_struct_begin(w, 5);
            floe_thrift_w_i32(w, 1, n->scale);
            floe_thrift_w_i32(w, 2, n->precision);
            floe_thrift_w_struct_end(w);
            break;
        case FLOE_PQ_LT_DATE: floe_thrift_w_empty(w, 6); break;
        case FLOE_PQ_LT_TIME:
        case FLOE_PQ_LT_TIMESTAMP:
            floe_thrift_w_struct_begin(w, n->logical == FLOE_PQ_LT_TIME ? 7 : 8);
            floe_thrift_w_bool(w, 1, n->utc);
            put_time_unit(w, 2, n->unit);
            floe_thrift_w_struct_end(w);
            break;
        case FLOE_PQ_LT_INT:
            floe_thrift_w_struct_begin(w, 10);
            /* i8 field: compact type BYTE, raw byte value */
            {
                floe_buf_t *o = w->out;
                int16_t delta = (int16_t)(1 - w->last[w->depth]);
                uint8_t hdr[2] = {(uint8_t)((delta << 4) | FLOE_TT_BYTE), (uint8_t)n->bit_width};
                if (floe_buf_append(o, hdr, 2) < 0) w->oom = true;
                w->last[w->depth] = 1;
            }
            floe_thrift_w_bool(w, 2, n->is_signed);
            floe_thrift_w_struct_end(w);
            break;
        case FLOE_PQ_LT_JSON: floe_thrift_w_empty(w, 12); break;
        case FLOE_PQ_LT_UUID: floe_thrift_w_empty(w, 14); break;
        default: break;
        }
        floe_thrift_w_struct_end(w);
    }
    floe_thrift_w_struct_end(w);
}

static void put_path(floe_thrift_w_t *w, const floe_pq_schema_t *s, int node)
{
    const char *names[64];
    int k = 0;
    for (int a = node; a >= 0 && k < 64; a = s->nodes[a].parent) names[k++] = s->nodes[a].name;
    floe_thrift_w_list(w, 3, FLOE_TT_BINARY, (uint32_t)k);
    while (k > 0) {
        k--;
        floe_thrift_w_elem_bin(w, names[k], strlen(names[k]));
    }
}

static void put_chunk(floe_thrift_w_t *w, const floe_pq_schema_t *s, int col,
                      const pq_chunk_meta_t *c)
{
    floe_thrift_w_elem_struct_begin(w);
    int64_t start = c->dict_page_offset >= 0 ? c->dict_page_offset : c->data_page_offset;
    floe_thrift_w_i64(w, 2, start);
    floe_thrift_w_struct_begin(w, 3);
    floe_thrift_w_i32(w, 1, c->phys);
    uint32_t nenc = (uint32_t)__builtin_popcount(c->encodings);
    floe_thrift_w_list(w, 2, FLOE_TT_I32, nenc);
    for (int e = 0; e < 32; e++)
        if (c->encodings & (1u << e)) floe_thrift_w_elem_i32(w, e);
    put_path(w, s, s->col_node[col]);
    floe_thrift_w_i32(w, 4, c->codec);
    floe_thrift_w_i64(w, 5, c->num_values);
    floe_thrift_w_i64(w, 6, c->total_uncompressed);
    floe_thrift_w_i64(w, 7, c->total_compressed);
    floe_thrift_w_i64(w, 9, c->data_page_offset);
    if (c->dict_page_offset >= 0) floe_thrift_w_i64(w, 11, c->dict_page_offset);
    if (c->has_stats) {
        floe_thrift_w_struct_begin(w, 12);
        floe_thrift_w_i64(w, 3, c->stats.null_count);
        if (c->stats.has_minmax) {
            floe_thrift_w_bin(w, 5, c->stats.max.data, c->stats.max.len);
            floe_thrift_w_bin(w, 6, c->stats.min.data, c->stats.min.len);
        }
        floe_thrift_w_struct_end(w);
    }
    floe_thrift_w_struct_end(w);
    floe_thrift_w_struct_end(w);
}

int pq_footer_encode(floe_buf_t *out, const floe_pq_schema_t *s, int64_t num_rows,
                     const pq_row_group_meta_t *rgs, int nrg, const pq_kv_t *kv, int nkv,
                     const char *created_by, floe_err_t *err)
{
    floe_thrift_w_t w;
    floe_thrift_w_init(&w, out);
    floe_thrift_w_i32(&w, 1, 1);
    floe_thrift_w_list(&w, 2, FLOE_TT_STRUCT, (uint32_t)s->n + 1);
    /* root */
    floe_thrift_w_elem_struct_begin(&w);
    floe_thrift_w_str(&w, 4, "schema");
    floe_thrift_w_i32(&w, 5, floe_pq_schema_num_children(s, -1));
    floe_thrift_w_struct_end(&w);
    /* depth-first pre-order */
    int *stack = malloc(sizeof(int) * (size_t)(s->n + 1));
    if (!stack) return floe_err_oom(err);
    int sp = 0;
    for (int i = s->n - 1; i >= 0; i--)
        if (s->nodes[i].parent == -1) stack[sp++] = i;
    while (sp > 0) {
        int v = stack[--sp];
        put_schema_element(&w, &s->nodes[v], s->parent_child_count[v]);
        for (int i = s->n - 1; i > v; i--)
            if (s->nodes[i].parent == v) stack[sp++] = i;
    }
    free(stack);
    floe_thrift_w_i64(&w, 3, num_rows);
    floe_thrift_w_list(&w, 4, FLOE_TT_STRUCT, (uint32_t)nrg);
    for (int g = 0; g < nrg; g++) {
        const pq_row_group_meta_t *rg = &rgs[g];
        floe_thrift_w_elem_struct_begin(&w);
        floe_thrift_w_list(&w, 1, FLOE_TT_STRUCT, (uint32_t)s->ncols);
        for (int c = 0; c < s->ncols; c++) put_chunk(&w, s, c, &rg->cols[c]);
        floe_thrift_w_i64(&w, 2, rg->total_byte_size);
        floe_thrift_w_i64(&w, 3, rg->num_rows);
        floe_thrift_w_i64(&w, 5, rg->file_offset);
        floe_thrift_w_i64(&w, 6, rg->total_compressed);
        floe_thrift_w_struct_end(&w);
    }
    if (nkv > 0) {
        floe_thrift_w_list(&w, 5, FLOE_TT_STRUCT, (uint32_t)nkv);
        for (int i = 0; i < nkv; i++) {
            floe_thrift_w_elem_struct_begin(&w);
            floe_thrift_w_str(&w, 1, kv[i].key);
            floe_thrift_w_str(&w, 2, kv[i].value);
            floe_thrift_w_struct_end(&w);
        }
    }
    floe_thrift_w_str(&w, 6, created_by);
    floe_thrift_w_list(&w, 7, FLOE_TT_STRUCT, (uint32_t)s->ncols);
    for (int c = 0; c < s->ncols; c++) {
        floe_thrift_w_elem_struct_begin(&w);
        floe_thrift_w_empty(&w, 1);
        floe_thrift_w_struct_end(&w);
    }
    if (floe_thrift_w_finish(&w) < 0)
        return floe_err_set(err, FLOE_ENOMEM, "out of memory encoding the footer");
    return 0;
}

int pq_page_header_encode(floe_buf_t *out, const pq_page_header_t *h)
{
    floe_thrift_w_t w;
    floe_thrift_w_init(&w, out);
    floe_thrift_w_i32(&w, 1, h->type);
    floe_thrift_w_i32(&w, 2, h->uncompressed);
    floe_thrift_w_i32(&w, 3, h->compressed);
    if (h->type == PQ_PAGE_DATA) {
        floe_thrift_w_struct_begin(&w, 5);
        floe_thrift_w_i32(&w, 1, h->num_values);
        floe_thrift_w_i32(&w, 2, h->encoding);
        floe_thrift_w_i32(&w, 3, PQ_ENC_RLE);
        floe_thrift_w_i32(&w, 4, PQ_ENC_RLE);
        floe_thrift_w_struct_end(&w);
    } else if (h->type == PQ_PAGE_DICT) {
        floe_thrift_w_struct_begin(&w, 7);
        floe_thrift_w_i32(&w, 1, h->num_values);
        floe_thrift_w_i32(&w, 2, h->encoding);
        floe_thrift_w_struct_end(&w);
    } else {
        floe_thrift_w_struct_begin(&w, 8);
        floe_thrift_w_i32(&w, 1, h->num_values);
        floe_thrift_w_i32(&w, 2, h->num_nulls);
        floe_thrift_w_i32(&w, 3, h->num_rows);
        floe_thrift_w_i32(&w, 4, h->encoding);
        floe_thrift_w_i32(&w, 5, h->def_len);
        floe_thrift_w_i32(&w, 6, h->rep_len);
        floe_thrift_w_bool(&w, 7, h->is_compressed);
        floe_thrift_w_struct_end(&w);
    }
    return floe_thrift_w_finish(&w);
}

/* ---- decode ---- */

int pq_page_header_decode(const uint8_t *p, size_t n, pq_page_header_t *h, size_t *used,
                          floe_err_t *err)
{
    floe_thrift_r_t r;
    floe_thrift_r_init(&r, p, n);
    memset(h, 0, sizeof *h);
    h->type = -1;
    h->num_values = -1;
    h->is_compressed = true;
    int t, t2;
    int16_t id, id2;
    bool have_sizes = false;
    while (floe_thrift_r_field(&r, &t, &id)) {
        switch (id) {
        case 1: h->type = floe_thrift_r_i32(&r, t); break;
        case 2:
            h->uncompressed = floe_thrift_r_i32(&r, t);
            have_sizes = true;
            break;
        case 3: h->compressed = floe_thrift_r_i32(&r, t); break;
        case 5:
        case 7:
        case 8:
            if (t != FLOE_TT_STRUCT) {
                floe_thrift_r_fail(&r, "page header part is not a struct");
                break;
            }
            floe_thrift_r_struct_begin(&r);
            while (floe_thrift_r_field(&r, &t2, &id2)) {
                if (id2 == 1) h->num_values = floe_thrift_r_i32(&r, t2);
                else if (id2 == 2 && id != 8)
                    h->encoding = floe_thrift_r_i32(&r, t2);
                else if (id == 8 && id2 == 2)
                    h->num_nulls = floe_thrift_r_i32(&r, t2);
                else if (id == 8 && id2 == 3)
                    h->num_rows = floe_thrift_r_i32(&r, t2);
                else if (id == 8 && id2 == 4)
                    h->encoding = floe_thrift_r_i32(&r, t2);
                else if (id == 8 && id2 == 5)
                    h->def_len = floe_thrift_r_i32(&r, t2);
                else if (id == 8 && id2 == 6)
                    h->rep_len = floe_thrift_r_i32(&r, t2);
                else if (id == 8 && id2 == 7)
                    h->is_compressed = floe_thrift_r_bool(&r, t2);
                else
                    floe_thrift_r_skip(&r, t2);
            }
            break;
        default: floe_thrift_r_skip(&r, t); break;
        }
    }
    if (floe_thrift_r_failed(&r))
        return floe_err_set(err, FLOE_ECORRUPT, "bad page header: %s", r.error);
    if (h->type < 0 || !have_sizes || h->uncompressed < 0 || h->compressed < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "page header lacks type or sizes");
    if ((h->type == PQ_PAGE_DATA || h->type == PQ_PAGE_DICT || h->type == PQ_PAGE_DATA_V2) &&
        h->num_values < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "page header lacks its value count");
    if (h->type == PQ_PAGE_DATA_V2 &&
        (h->def_len < 0 || h->rep_len < 0 || h->num_nulls < 0 || h->num_rows < 0))
        return floe_err_set(err, FLOE_ECORRUPT, "bad DATA_PAGE_V2 header");
    *used = (size_t)(r.p - p);
    return 0;
}

typedef struct raw_elem {
    floe_pq_node_t n;
    int nchildren;
    bool has_type;
    int ct;
    floe_slice_t name;
} raw_elem_t;

static void read_logical(floe_thrift_r_t *r, raw_elem_t *e)
{
    int t, t2, t3;
    int16_t id, id2, id3;
    floe_thrift_r_struct_begin(r);
    while (floe_thrift_r_field(r, &t, &id)) {
        if (t != FLOE_TT_STRUCT) {
            floe_thrift_r_skip(r, t);
            continue;
        }
        floe_pq_logical_t lt = FLOE_PQ_LT_UNKNOWN;
        switch (id) {
        case 1: lt = FLOE_PQ_LT_STRING; break;
        case 2: lt = FLOE_PQ_LT_MAP; break;
        case 3: lt = FLOE_PQ_LT_LIST; break;
        case 4: lt = FLOE_PQ_LT_ENUM; break;
        case 5: lt = FLOE_PQ_LT_DECIMAL; break;
        case 6: lt = FLOE_PQ_LT_DATE; break;
        case 7: lt = FLOE_PQ_LT_TIME; break;
        case 8: lt = FLOE_PQ_LT_TIMESTAMP; break;
        case 10: lt = FLOE_PQ_LT_INT; break;
        case 12: lt = FLOE_PQ_LT_JSON; break;
        case 14: lt = FLOE_PQ_LT_UUID; break;
        default: break;
        }
        e->n.logical = lt;
        floe_thrift_r_struct_begin(r);
        while (floe_thrift_r_field(r, &t2, &id2)) {
            if (lt == FLOE_PQ_LT_DECIMAL && id2 == 1) e->n.scale = floe_thrift_r_i32(r, t2);
            else if (lt == FLOE_PQ_LT_DECIMAL && id2 == 2)
                e->n.precision = floe_thrift_r_i32(r, t2);
            else if ((lt == FLOE_PQ_LT_TIME || lt == FLOE_PQ_LT_TIMESTAMP) && id2 == 1)
                e->n.utc = floe_thrift_r_bool(r, t2);
            else if ((lt == FLOE_PQ_LT_TIME || lt == FLOE_PQ_LT_TIMESTAMP) && id2 == 2 &&
                     t2 == FLOE_TT_STRUCT) {
                floe_thrift_r_struct_begin(r);
                while (floe_thrift_r_field(r, &t3, &id3)) {
                    e->n.unit = id3 == 1   ? FLOE_PQ_MILLIS
                                : id3 == 2 ? FLOE_PQ_MICROS
                                           : FLOE_PQ_NANOS;
                    floe_thrift_r_skip(r, t3);
                }
            } else if (lt == FLOE_PQ_LT_INT && id2 == 1)
                e->n.bit_width = (int8_t)floe_thrift_r_i32(r, t2);
            else if (lt == FLOE_PQ_LT_INT && id2 == 2)
                e->n.is_signed = floe_thrift_r_bool(r, t2);
            else
                floe_thrift_r_skip(r, t2);
        }
    }
}

/* Logical type from a legacy converted type when no LogicalType is given. */
static void from_converted(raw_elem_t *e)
{
    floe_pq_node_t *n = &e->n;
    switch (e->ct) {
    case PQ_CT_UTF8: n->logical = FLOE_PQ_LT_STRING; break;
    case PQ_CT_MAP:
    case PQ_CT_MAP_KV:
        if (e->ct == PQ_CT_MAP) n->logical = FLOE_PQ_LT_MAP;
        break;
    case PQ_CT_LIST: n->logical = FLOE_PQ_LT_LIST; break;
    case PQ_CT_ENUM: n->logical = FLOE_PQ_LT_ENUM; break;
    case PQ_CT_DECIMAL: n->logical = FLOE_PQ_LT_DECIMAL; break;
    case PQ_CT_DATE: n->logical = FLOE_PQ_LT_DATE; break;
    case PQ_CT_TIME_MILLIS:
    case PQ_CT_TIME_MICROS:
        n->logical = FLOE_PQ_LT_TIME;
        n->utc = true;
        n->unit = e->ct == PQ_CT_TIME_MILLIS ? FLOE_PQ_MILLIS : FLOE_PQ_MICROS;
        break;
    case PQ_CT_TS_MILLIS:
    case PQ_CT_TS_MICROS:
        n->logical = FLOE_PQ_LT_TIMESTAMP;
        n->utc = true;
        n->unit = e->ct == PQ_CT_TS_MILLIS ? FLOE_PQ_MILLIS : FLOE_PQ_MICROS;
        break;
    case PQ_CT_JSON: n->logical = FLOE_PQ_LT_JSON; break;
    default:
        if (e->ct >= PQ_CT_UINT_8 && e->ct <= PQ_CT_INT_8 + 3) {
            int k = (e->ct - PQ_CT_UINT_8) % 4;
            n->logical = FLOE_PQ_LT_INT;
            n->is_signed = e->ct >= PQ_CT_INT_8;
            n->bit_width = (int8_t)(8 << k);
        }
        break;
    }
}

static int read_schema(floe_thrift_r_t *r, int t, pq_file_meta_t *m, floe_err_t *err)
{
    int et, ft;
    int16_t id;
    uint32_t cnt = floe_thrift_r_list(r, t, &et);
    if (floe_thrift_r_failed(r)) return 0;
    if (et != FLOE_TT_STRUCT || cnt == 0)
        return floe_err_set(err, FLOE_ECORRUPT, "bad schema list");
    int stack_node[65], stack_left[65], sp = 0;
    m->schema = floe_pq_schema_new();
    if (!m->schema) return floe_err_oom(err);
    for (uint32_t i = 0; i < cnt; i++) {
        raw_elem_t e;
        memset(&e, 0, sizeof e);
        e.n.field_id = -1;
        e.n.phys = FLOE_PQ_GROUP;
        e.n.unit = FLOE_PQ_MICROS;
        e.ct = -1;
        e.nchildren = -1;
        bool has_lt = false;
        floe_thrift_r_struct_begin(r);
        while (floe_thrift_r_field(r, &ft, &id)) {
            switch (id) {
            case 1:
                e.n.phys = (floe_pq_phys_t)floe_thrift_r_i32(r, ft);
                e.has_type = true;
                break;
            case 2: e.n.type_length = floe_thrift_r_i32(r, ft); break;
            case 3: e.n.rep = (floe_pq_rep_t)floe_thrift_r_i32(r, ft); break;
            case 4: e.name = floe_thrift_r_bin(r, ft); break;
            case 5: e.nchildren = floe_thrift_r_i32(r, ft); break;
            case 6: e.ct = floe_thrift_r_i32(r, ft); break;
            case 7: e.n.scale = floe_thrift_r_i32(r, ft); break;
            case 8: e.n.precision = floe_thrift_r_i32(r, ft); break;
            case 9: e.n.field_id = floe_thrift_r_i32(r, ft); break;
            case 10:
                if (ft != FLOE_TT_STRUCT) {
                    floe_thrift_r_fail(r, "bad logicalType");
                    break;
                }
                read_logical(r, &e);
                has_lt = true;
                break;
            default: floe_thrift_r_skip(r, ft); break;
            }
        }
        if (floe_thrift_r_failed(r)) return 0;
        if (i == 0) {
            if (e.nchildren < 0)
                return floe_err_set(err, FLOE_ECORRUPT, "schema root is not a group");
            stack_node[0] = -1;
            stack_left[0] = e.nchildren;
            sp = 1;
            continue;
        }
        while (sp > 0 && stack_left[sp - 1] == 0) sp--;
        if (sp == 0)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "schema has more elements than its groups hold");
        stack_left[sp - 1]--;
        e.n.parent = stack_node[sp - 1];
        if (e.nchildren >= 0 && e.nchildren > 0) e.n.phys = FLOE_PQ_GROUP;
        else if (!e.has_type)
            return floe_err_set(err, FLOE_ECORRUPT, "schema leaf without a type");
        if (e.n.phys != FLOE_PQ_GROUP && (e.n.phys < 0 || e.n.phys > FLOE_PQ_FIXED))
            return floe_err_set(err, FLOE_ECORRUPT, "bad physical type %d", (int)e.n.phys);
        if (!has_lt) from_converted(&e);
        if (e.name.len == 0 || e.name.len > 4096)
            return floe_err_set(err, FLOE_ECORRUPT, "bad schema element name");
        char name[4097];
        memcpy(name, e.name.ptr, e.name.len);
        name[e.name.len] = 0;
        e.n.name = name;
        floe_err_t e2;
        int idx = floe_pq_schema_add(m->schema, &e.n, &e2);
        if (idx < 0) {
            /* keep a node whose annotation we do not understand as plain */
            e.n.logical = FLOE_PQ_LT_UNKNOWN;
            idx = floe_pq_schema_add(m->schema, &e.n, err);
            if (idx < 0) {
                err->code = FLOE_ECORRUPT;
                return -1;
            }
        }
        if (e.n.phys == FLOE_PQ_GROUP) {
            if (sp >= 64) return floe_err_set(err, FLOE_ECORRUPT, "schema nested too deep");
            stack_node[sp] = idx;
            stack_left[sp] = e.nchildren > 0 ? e.nchildren : 0;
            sp++;
        }
    }
    while (sp > 0 && stack_left[sp - 1] == 0) sp--;
    if (sp != 0)
        return floe_err_set(err, FLOE_ECORRUPT, "schema has fewer elements than its groups claim");
    return 0;
}

/* Statistics: only null_count and the min_value/max_value pair, whose
 * order the format defines (the deprecated min/max are ignored). */
static void read_stats(floe_thrift_r_t *r, pq_chunk_meta_t *c)
{
    int t;
    int16_t id;
    bool has_min = false, has_max = false;
    c->has_stats = true;
    c->stats.null_count = -1;
    floe_thrift_r_struct_begin(r);
    while (floe_thrift_r_field(r, &t, &id)) {
        if (id == 3) {
            c->stats.null_count = floe_thrift_r_i64(r, t);
        } else if (id == 5 || id == 6) {
            floe_slice_t v = floe_thrift_r_bin(r, t);
            floe_buf_t *b = id == 5 ? &c->stats.max : &c->stats.min;
            if (floe_thrift_r_failed(r)) break;
            b->len = 0;
            /* a value of 0 bytes still counts: give it a buffer */
            if (floe_buf_reserve(b, v.len + 1) < 0 || floe_buf_append(b, v.ptr, v.len) < 0) {
                floe_thrift_r_fail(r, "out of memory");
                break;
            }
            *(id == 5 ? &has_max : &has_min) = true;
        } else {
            floe_thrift_r_skip(r, t);
        }
    }
    c->stats.has_minmax = has_min && has_max;
}

static void read_chunk_meta(floe_thrift_r_t *r, pq_chunk_meta_t *c)
{
    int t, et;
    int16_t id;
    floe_thrift_r_struct_begin(r);
    while (floe_thrift_r_field(r, &t, &id)) {
        switch (id) {
        case 1: c->phys = floe_thrift_r_i32(r, t); break;
        case 2: {
            uint32_t n = floe_thrift_r_list(r, t, &et);
            for (uint32_t i = 0; i < n && !floe_thrift_r_failed(r); i++) {
                int64_t e = floe_thrift_r_elem_int(r, et);
                if (e >= 0 && e < 32) c->encodings |= 1u << e;
            }
            break;
        }
        case 4: c->codec = floe_thrift_r_i32(r, t); break;
        case 5: c->num_values = floe_thrift_r_i64(r, t); break;
        case 6: c->total_uncompressed = floe_thrift_r_i64(r, t); break;
        case 7: c->total_compressed = floe_thrift_r_i64(r, t); break;
        case 9: c->data_page_offset = floe_thrift_r_i64(r, t); break;
        case 11: c->dict_page_offset = floe_thrift_r_i64(r, t); break;
        case 12:
            if (t != FLOE_TT_STRUCT) {
                floe_thrift_r_fail(r, "bad statistics");
                break;
            }
            read_stats(r, c);
            break;
        default: floe_thrift_r_skip(r, t); break;
        }
    }
}

static int read_row_groups(floe_thrift_r_t *r, int t, pq_file_meta_t *m, floe_err_t *err)
{
    int et, ft, ct;
    int16_t id, cid;
    uint32_t n = floe_thrift_r_list(r, t, &et);
    if (floe_thrift_r_failed(r)) return 0;
    if (n && et != FLOE_TT_STRUCT) return floe_err_set(err, FLOE_ECORRUPT, "bad row group list");
    m->rgs = calloc(n ? n : 1, sizeof *m->rgs);
    if (!m->rgs) return floe_err_oom(err);
    for (uint32_t g = 0; g < n && !floe_thrift_r_failed(r); g++) {
        pq_row_group_meta_t *rg = &m->rgs[g];
        m->nrg = (int)g + 1;
        rg->num_rows = -1;
        floe_thrift_r_struct_begin(r);
        uint32_t ncols = 0;
        while (floe_thrift_r_field(r, &ft, &id)) {
            if (id == 1 && !rg->cols) {
                ncols = floe_thrift_r_list(r, ft, &et);
                if (floe_thrift_r_failed(r)) break;
                if (et != FLOE_TT_STRUCT || ncols != (uint32_t)m->schema->ncols)
                    return floe_err_set(err, FLOE_ECORRUPT,
                                        "row group %u has %u columns, schema %d", g, ncols,
                                        m->schema->ncols);
                rg->cols = calloc(ncols ? ncols : 1, sizeof *rg->cols);
                if (!rg->cols) return floe_err_oom(err);
                for (uint32_t c = 0; c < ncols && !floe_thrift_r_failed(r); c++) {
                    pq_chunk_meta_t *cm = &rg->cols[c];
                    cm->phys = -1;
                    cm->dict_page_offset = -1;
                    cm->data_page_offset = -1;
                    cm->codec = -1;
                    floe_thrift_r_struct_begin(r);
                    while (floe_thrift_r_field(r, &ct, &cid)) {
                        if (cid == 1)
                            return floe_err_set(err, FLOE_EUNSUPPORTED,
                                                "column chunks in other files are not supported");
                        if (cid == 3 && ct == FLOE_TT_STRUCT) read_chunk_meta(r, cm);
                        else
                            floe_thrift_r_skip(r, ct);
                    }
                }
            } else if (id == 3) {
                rg->num_rows = floe_thrift_r_i64(r, ft);
            } else {
                floe_thrift_r_skip(r, ft);
            }
        }
        if (floe_thrift_r_failed(r)) break;
        if (!rg->cols && m->schema->ncols > 0)
            return floe_err_set(err, FLOE_ECORRUPT, "row group %u has no columns", g);
        if (rg->num_rows < 0)
            return floe_err_set(err, FLOE_ECORRUPT, "row group %u has no row count", g);
    }
    return 0;
}

int pq_footer_decode(const uint8_t *p, size_t n, pq_file_meta_t *m, floe_err_t *err)
{
    memset(m, 0, sizeof *m);
    m->num_rows = -1;
    floe_thrift_r_t r;
    floe_thrift_r_init(&r, p, n);
    int t, et;
    int16_t id;
    while (floe_thrift_r_field(&r, &t, &id)) {
        switch (id) {
        case 2:
            if (m->schema) {
                floe_thrift_r_fail(&r, "two schemas");
                break;
            }
            if (read_schema(&r, t, m, err) < 0) return -1;
            break;
        case 3: m->num_rows = floe_thrift_r_i64(&r, t); break;
        case 4:
            if (!m->schema || m->rgs) {
                floe_thrift_r_fail(&r, "row groups before the schema");
                break;
            }
            if (read_row_groups(&r, t, m, err) < 0) return -1;
            break;
        case 5: {
            uint32_t cnt = floe_thrift_r_list(&r, t, &et);
            if (floe_thrift_r_failed(&r) || m->kv) break;
            if (cnt && et != FLOE_TT_STRUCT) {
                floe_thrift_r_fail(&r, "bad key-value list");
                break;
            }
            m->kv = calloc(cnt ? cnt : 1, sizeof *m->kv);
            if (!m->kv) return floe_err_oom(err);
            for (uint32_t i = 0; i < cnt && !floe_thrift_r_failed(&r); i++) {
                floe_slice_t k = {NULL, 0}, v = {NULL, 0};
                int ft;
                int16_t fid;
                floe_thrift_r_struct_begin(&r);
                while (floe_thrift_r_field(&r, &ft, &fid)) {
                    if (fid == 1) k = floe_thrift_r_bin(&r, ft);
                    else if (fid == 2)
                        v = floe_thrift_r_bin(&r, ft);
                    else
                        floe_thrift_r_skip(&r, ft);
                }
                if (floe_thrift_r_failed(&r)) break;
                m->kv[i].key = strndup(k.ptr ? (const char *)k.ptr : "", k.len);
                m->kv[i].value = strndup(v.ptr ? (const char *)v.ptr : "", v.len);
                m->nkv = (int)i + 1;
                if (!m->kv[i].key || !m->kv[i].value) return floe_err_oom(err);
            }
            break;
        }
        case 6: {
            floe_slice_t s = floe_thrift_r_bin(&r, t);
            if (!floe_thrift_r_failed(&r) && !m->created_by) {
                m->created_by = strndup(s.ptr ? (const char *)s.ptr : "", s.len);
                if (!m->created_by) return floe_err_oom(err);
            }
            break;
        }
        case 8:
            return floe_err_set(err, FLOE_EUNSUPPORTED,
                                "encrypted Parquet files are not supported");
        default: floe_thrift_r_skip(&r, t); break;
        }
    }
    if (floe_thrift_r_failed(&r))
        return floe_err_set(err, FLOE_ECORRUPT, "bad footer: %s", r.error);
    if (!m->schema || m->num_rows < 0 || (!m->rgs && m->schema))
        return floe_err_set(err, FLOE_ECORRUPT, "footer lacks schema, row count or row groups");
    return 0;
}

void pq_file_meta_free(pq_file_meta_t *m)
{
    for (int g = 0; g < m->nrg; g++) {
        for (int c = 0; m->rgs[g].cols && c < m->schema->ncols; c++) {
            floe_buf_free(&m->rgs[g].cols[c].stats.min);
            floe_buf_free(&m->rgs[g].cols[c].stats.max);
        }
        free(m->rgs[g].cols);
    }
    free(m->rgs);
    floe_pq_schema_free(m->schema);
    for (int i = 0; i < m->nkv; i++) {
        free(m->kv[i].key);
        free(m->kv[i].value);
    }
    free(m->kv);
    free(m->created_by);
    memset(m, 0, sizeof *m);
}
