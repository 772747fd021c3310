/* The parts of the source interface every source shares (source.h). */
#include "table/source.h"

#include <stdlib.h>

void floe_tsource_topics_free(floe_tsource_topic_t *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        free(t[i].name);
        for (size_t k = 0; k < t[i].nconfigs; k++) {
            free(t[i].keys[k]);
            free(t[i].values[k]);
        }
        free(t[i].keys);
        free(t[i].values);
    }
    free(t);
}

void floe_theaders_iter_init(floe_theaders_iter_t *it, const floe_theaders_t *h)
{
    it->h = h;
    it->i = 0;
    if (!h->list) {
        floe_record_t r = {.header_count = (int32_t)h->count, .headers_raw = h->raw};
        floe_header_iter_init(&it->raw, &r);
    }
}

int floe_theaders_iter_next(floe_theaders_iter_t *it, floe_record_header_t *out)
{
    if (it->i >= it->h->count) return 0;
    if (it->h->list) {
        *out = it->h->list[it->i++];
        return 1;
    }
    if (floe_header_iter_next(&it->raw, out) != 1) return -1;
    it->i++;
    return 1;
}
