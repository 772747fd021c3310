/* The table engine on the HTTP listener (http/http.h):
 *   GET  /admin/tables               the engine's state as JSON
 *                                    (floe_engine_status_json; `floe table
 *                                    describe` reads it)
 *   POST /admin/tables/NAME/redrive  re-drive a table's dead letters
 *                                    (floe_engine_redrive): 200 with the
 *                                    outcome, 404 for an unknown table, 409
 *                                    when it cannot run now, 500 otherwise,
 *                                    each with {"error": why}
 *   POST /admin/tables/NAME/pause    pause a table on purpose
 *                                    (floe_engine_pause), and
 *   POST /admin/tables/NAME/resume   resume it (floe_engine_resume): 200
 *                                    with the table's state, else as for
 *                                    redrive
 *   GET  /metrics                    the engine's metrics, after those added
 *                                    before */
#ifndef FLOE_TABLE_ENGINE_HTTP_H
#define FLOE_TABLE_ENGINE_HTTP_H

#include "http/http.h"
#include "table/engine.h"

/* Add the routes above to h (before floe_http_start).  e is borrowed and
 * must outlive h (free h first).  -1 with *err when out of memory. */
int floe_engine_http(floe_engine_t *e, floe_http_t *h, floe_err_t *err);

#endif
