/* Test support for tables the engine writes: the table against every
 * record produced, through icebird (tests/interop/verify_table.mjs), and
 * an engine's refused commits from its status. */
#ifndef FLOE_TESTS_TABLE_VERIFY_H
#define FLOE_TESTS_TABLE_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "table/engine.h"
#include "util/buf.h"

/* Whether the table at location holds every record of dump (lines
 * "partition \t offset \t value-JSON", written to dump_path) exactly once,
 * with no file it does not reference when orphans.  verify_table.mjs's
 * verdict is printed as a comment when it is not. */
bool tverify_table(const char *location, const floe_buf_t *dump, const char *dump_path,
                   bool orphans);

/* Commits of every table of e that failed (its status's commit_failures). */
uint64_t tverify_commit_failures(floe_engine_t *e);

#endif
