/* Parquet schema trees: nodes, leaf columns and their max levels. */
#include <stdlib.h>
#include <string.h>

#include "format/parquet_int.h"

floe_pq_node_t floe_pq_leaf(const char *name, floe_pq_rep_t rep, floe_pq_phys_t phys,
                            int32_t field_id)
{
    floe_pq_node_t n;
    memset(&n, 0, sizeof n);
    n.name = name;
    n.parent = -1;
    n.rep = rep;
    n.phys = phys;
    n.field_id = field_id;
    n.unit = FLOE_PQ_MICROS;
    return n;
}

floe_pq_node_t floe_pq_group(const char *name, floe_pq_rep_t rep, floe_pq_logical_t lt,
                             int32_t field_id)
{
    floe_pq_node_t n = floe_pq_leaf(name, rep, FLOE_PQ_GROUP, field_id);
    n.logical = lt;
    return n;
}

floe_pq_schema_t *floe_pq_schema_new(void)
{
    return calloc(1, sizeof(floe_pq_schema_t));
}

void floe_pq_schema_free(floe_pq_schema_t *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) free((char *)s->nodes[i].name);
    free(s->nodes);
    free(s->parent_child_count);
    free(s->col_node);
    free(s->node_col);
    free(s->max_def);
    free(s->max_rep);
    free(s);
}

size_t floe_pq_value_size(floe_pq_phys_t p)
{
    switch (p) {
    case FLOE_PQ_BOOLEAN: return 1;
    case FLOE_PQ_INT32:
    case FLOE_PQ_FLOAT: return 4;
    case FLOE_PQ_INT64:
    case FLOE_PQ_DOUBLE: return 8;
    default: return sizeof(floe_slice_t);
    }
}

size_t pq_phys_width(floe_pq_phys_t p, int32_t type_length)
{
    switch (p) {
    case FLOE_PQ_INT96: return 12;
    case FLOE_PQ_FIXED: return type_length > 0 ? (size_t)type_length : 0;
    case FLOE_PQ_BYTE_ARRAY:
    case FLOE_PQ_GROUP: return 0;
    default: return floe_pq_value_size(p); /* the numbers: stored as they are held */
    }
}

static int check_node(const floe_pq_node_t *n, floe_err_t *err)
{
    const char *nm = n->name ? n->name : "?";
    if (!n->name || !*n->name) return floe_err_set(err, FLOE_EINVAL, "schema node without a name");
    if (n->rep < FLOE_PQ_REQUIRED || n->rep > FLOE_PQ_REPEATED)
        return floe_err_set(err, FLOE_EINVAL, "%s: bad repetition", nm);
    if (n->phys < FLOE_PQ_GROUP || n->phys > FLOE_PQ_FIXED)
        return floe_err_set(err, FLOE_EINVAL, "%s: bad physical type", nm);
    if (n->phys == FLOE_PQ_FIXED && n->type_length <= 0)
        return floe_err_set(err, FLOE_EINVAL, "%s: fixed needs a positive type_length", nm);
    bool grp = n->phys == FLOE_PQ_GROUP;
    switch (n->logical) {
    case FLOE_PQ_LT_NONE:
    case FLOE_PQ_LT_UNKNOWN: return 0;
    case FLOE_PQ_LT_LIST:
    case FLOE_PQ_LT_MAP:
        if (!grp) return floe_err_set(err, FLOE_EINVAL, "%s: LIST/MAP annotate groups", nm);
        return 0;
    case FLOE_PQ_LT_STRING:
    case FLOE_PQ_LT_ENUM:
    case FLOE_PQ_LT_JSON:
        if (n->phys != FLOE_PQ_BYTE_ARRAY)
            return floe_err_set(err, FLOE_EINVAL, "%s: string types need BYTE_ARRAY", nm);
        return 0;
    case FLOE_PQ_LT_UUID:
        if (n->phys != FLOE_PQ_FIXED || n->type_length != 16)
            return floe_err_set(err, FLOE_EINVAL, "%s: uuid needs FIXED[16]", nm);
        return 0;
    case FLOE_PQ_LT_DECIMAL: {
        int maxp = n->phys == FLOE_PQ_INT32   ? 9
                   : n->phys == FLOE_PQ_INT64 ? 18
                   : n->phys == FLOE_PQ_FIXED
                       ? (n->type_length >= 16 ? 38 : (int)((8 * n->type_length - 1) * 0.30103))
                   : n->phys == FLOE_PQ_BYTE_ARRAY ? 1000
                                                   : 0;
        if (n->precision < 1 || n->precision > maxp || n->scale < 0 || n->scale > n->precision)
            return floe_err_set(err, FLOE_EINVAL, "%s: bad decimal(%d,%d) for its physical type",
                                nm, n->precision, n->scale);
        return 0;
    }
    case FLOE_PQ_LT_DATE:
        if (n->phys != FLOE_PQ_INT32)
            return floe_err_set(err, FLOE_EINVAL, "%s: date needs INT32", nm);
        return 0;
    case FLOE_PQ_LT_TIME:
        if (!(n->phys == FLOE_PQ_INT32 && n->unit == FLOE_PQ_MILLIS) &&
            !(n->phys == FLOE_PQ_INT64 && n->unit != FLOE_PQ_MILLIS))
            return floe_err_set(err, FLOE_EINVAL, "%s: time(ms) needs INT32, time(us/ns) INT64",
                                nm);
        return 0;
    case FLOE_PQ_LT_TIMESTAMP:
        if (n->phys != FLOE_PQ_INT64 || n->unit > FLOE_PQ_NANOS)
            return floe_err_set(err, FLOE_EINVAL, "%s: timestamp needs INT64", nm);
        return 0;
    case FLOE_PQ_LT_INT:
        if (!(n->bit_width == 8 || n->bit_width == 16 || n->bit_width == 32 ||
              n->bit_width == 64) ||
            (n->phys != FLOE_PQ_INT32 && n->phys != FLOE_PQ_INT64) ||
            (n->phys == FLOE_PQ_INT32) != (n->bit_width <= 32))
            return floe_err_set(err, FLOE_EINVAL, "%s: bad integer annotation", nm);
        return 0;
    }
    return floe_err_set(err, FLOE_EINVAL, "%s: bad logical type", nm);
}

/* Recompute the depth-first leaf order and the max levels. */
static int recompute(floe_pq_schema_t *s)
{
    int n = s->n;
    int *col_node = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *node_col = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int16_t *md = malloc(sizeof(int16_t) * (size_t)(n ? n : 1));
    int16_t *mr = malloc(sizeof(int16_t) * (size_t)(n ? n : 1));
    int *stack = malloc(sizeof(int) * (size_t)(n + 1));
    if (!col_node || !node_col || !md || !mr || !stack) {
        free(col_node);
        free(node_col);
        free(md);
        free(mr);
        free(stack);
        return -1;
    }
    int ncols = 0;
    for (int i = 0; i < n; i++) node_col[i] = -1;
    /* iterative DFS: children in insertion order */
    int sp = 0;
    for (int i = n - 1; i >= 0; i--)
        if (s->nodes[i].parent == -1) stack[sp++] = i;
    while (sp > 0) {
        int v = stack[--sp];
        if (s->nodes[v].phys != FLOE_PQ_GROUP) {
            int16_t d = 0, r = 0;
            for (int a = v; a >= 0; a = s->nodes[a].parent) {
                if (s->nodes[a].rep != FLOE_PQ_REQUIRED) d++;
                if (s->nodes[a].rep == FLOE_PQ_REPEATED) r++;
            }
            node_col[v] = ncols;
            md[ncols] = d;
            mr[ncols] = r;
            col_node[ncols++] = v;
            continue;
        }
        for (int i = n - 1; i > v; i--)
            if (s->nodes[i].parent == v) stack[sp++] = i;
    }
    free(stack);
    free(s->col_node);
    free(s->node_col);
    free(s->max_def);
    free(s->max_rep);
    s->col_node = col_node;
    s->node_col = node_col;
    s->max_def = md;
    s->max_rep = mr;
    s->ncols = ncols;
    return 0;
}

int floe_pq_schema_add(floe_pq_schema_t *s, const floe_pq_node_t *n, floe_err_t *err)
{
    if (check_node(n, err) < 0) return -1;
    if (n->parent < -1 || n->parent >= s->n ||
        (n->parent >= 0 && s->nodes[n->parent].phys != FLOE_PQ_GROUP))
        return floe_err_set(err, FLOE_EINVAL, "%s: parent %d is not a group", n->name, n->parent);
    int depth = 0;
    for (int a = n->parent; a >= 0; a = s->nodes[a].parent) depth++;
    if (depth >= 64) return floe_err_set(err, FLOE_EINVAL, "%s: schema nested too deep", n->name);
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        floe_pq_node_t *nn = realloc(s->nodes, sizeof *nn * (size_t)cap);
        if (!nn) return floe_err_oom(err);
        int *cc = realloc(s->parent_child_count, sizeof(int) * (size_t)cap);
        if (!cc) {
            s->nodes = nn;
            return floe_err_oom(err);
        }
        s->nodes = nn;
        s->parent_child_count = cc;
        s->cap = cap;
    }
    floe_pq_node_t c = *n;
    c.name = strdup(n->name);
    if (!c.name) return floe_err_oom(err);
    s->nodes[s->n] = c;
    s->parent_child_count[s->n] = 0;
    if (n->parent >= 0) s->parent_child_count[n->parent]++;
    s->n++;
    if (recompute(s) < 0) {
        s->n--;
        if (n->parent >= 0) s->parent_child_count[n->parent]--;
        free((char *)c.name);
        return floe_err_oom(err);
    }
    return s->n - 1;
}

int floe_pq_schema_num_nodes(const floe_pq_schema_t *s)
{
    return s->n;
}
const floe_pq_node_t *floe_pq_schema_node(const floe_pq_schema_t *s, int node)
{
    return node >= 0 && node < s->n ? &s->nodes[node] : NULL;
}

int floe_pq_schema_num_children(const floe_pq_schema_t *s, int node)
{
    if (node >= 0) return node < s->n ? s->parent_child_count[node] : 0;
    int c = 0;
    for (int i = 0; i < s->n; i++) c += s->nodes[i].parent == -1;
    return c;
}

int floe_pq_schema_child(const floe_pq_schema_t *s, int node, int i)
{
    for (int k = node + 1; k < s->n; k++)
        if (s->nodes[k].parent == node && i-- == 0) return k;
    return -1;
}

int floe_pq_schema_num_columns(const floe_pq_schema_t *s)
{
    return s->ncols;
}
int floe_pq_schema_column_node(const floe_pq_schema_t *s, int col)
{
    return col >= 0 && col < s->ncols ? s->col_node[col] : -1;
}
int floe_pq_schema_column_of(const floe_pq_schema_t *s, int node)
{
    return node >= 0 && node < s->n ? s->node_col[node] : -1;
}
int floe_pq_schema_max_def(const floe_pq_schema_t *s, int col)
{
    return col >= 0 && col < s->ncols ? s->max_def[col] : 0;
}
int floe_pq_schema_max_rep(const floe_pq_schema_t *s, int col)
{
    return col >= 0 && col < s->ncols ? s->max_rep[col] : 0;
}

int floe_pq_schema_find_field(const floe_pq_schema_t *s, int32_t field_id)
{
    for (int i = 0; i < s->n; i++)
        if (s->nodes[i].field_id == field_id && field_id >= 0) return i;
    return -1;
}

int floe_pq_schema_columns_under(const floe_pq_schema_t *s, int node, int *cols, int max)
{
    int c = 0;
    for (int k = 0; k < s->ncols; k++) {
        int a = s->col_node[k];
        while (a >= 0 && a != node) a = s->nodes[a].parent;
        if (a == node) {
            if (c < max) cols[c] = k;
            c++;
        }
    }
    return c;
}

int pq_codec_to_floe(int pq, floe_codec_t *out)
{
    switch (pq) {
    case PQ_CODEC_NONE: *out = FLOE_CODEC_NONE; return 0;
    case PQ_CODEC_SNAPPY: *out = FLOE_CODEC_SNAPPY; return 0;
    case PQ_CODEC_GZIP: *out = FLOE_CODEC_GZIP; return 0;
    case PQ_CODEC_ZSTD: *out = FLOE_CODEC_ZSTD; return 0;
    case PQ_CODEC_LZ4_RAW: *out = FLOE_CODEC_LZ4_RAW; return 0;
    default: return -1;
    }
}

int pq_codec_from_floe(floe_codec_t c)
{
    switch (c) {
    case FLOE_CODEC_NONE: return PQ_CODEC_NONE;
    case FLOE_CODEC_SNAPPY: return PQ_CODEC_SNAPPY;
    case FLOE_CODEC_GZIP: return PQ_CODEC_GZIP;
    case FLOE_CODEC_ZSTD: return PQ_CODEC_ZSTD;
    case FLOE_CODEC_LZ4_RAW: return PQ_CODEC_LZ4_RAW;
    default: return -1;
    }
}
