/* The part of the source interface every source shares (source.h). */
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
