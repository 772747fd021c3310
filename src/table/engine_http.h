/* The table engine on the HTTP listener (http/http.h):
 *   GET  /admin/tables               the engine's state as JSON
 *                                    (floe_engine_status_json; `floe table
 *                                    describe` reads it)
 *   POST /admin/tables/NAME/redrive  re-drive a table's dead letters
 *                                    (floe_engine_redrive)
 *   POST /admin/tables/NAME/pause    pause a table on purpose
 *                                    (floe_engine_pause); the table's state
 *   POST /admin/tables/NAME/resume   resume it (floe_engine_resume); the
 *                                    table's state
 *   POST /admin/tables/NAME/compact  maintenance on the maintenance thread
 *   POST /admin/tables/NAME/expire   (floe_engine_maintain), the body an
 *   POST /admin/tables/NAME/remove-orphans   optional JSON object
 *                                    {"older_than_ms": N, "keep": N,
 *                                    "dry_run": bool}
 *   GET  /admin/tables/NAME/maintenance   the table's maintenance state and
 *                                    the progress of what runs
 *                                    (floe_engine_maintenance_json; the CLI
 *                                    polls it while its POST waits)
 *   GET  /metrics                    the engine's metrics, after those added
 *                                    before
 * Each answers 200 with the outcome, 400 for a bad body, 404 for an
 * unknown table, 409 when it cannot run now, 503 while stopping, 500
 * otherwise, each with {"error": why}. */
#ifndef FLOE_TABLE_ENGINE_HTTP_H
#define FLOE_TABLE_ENGINE_HTTP_H

#include "http/http.h"
#include "table/engine.h"

/* Add the routes above to h (before floe_http_start).  e is borrowed and
 * must outlive h (free h first).  -1 with *err when out of memory. */
int floe_engine_http(floe_engine_t *e, floe_http_t *h, floe_err_t *err);

#endif
