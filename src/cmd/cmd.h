/* Subcommands of the floe binary. */
#ifndef FLOE_CMD_H
#define FLOE_CMD_H

#include <stddef.h>

#include "util/conf.h"

#define FLOE_VERSION "0.1.0"

/* `floe serve [--config FILE] [--data-dir DIR] [--listen HOST:PORT]
 * [--http HOST:PORT]`: argv[1] is "serve".  Returns the exit status. */
int floe_cmd_serve(int argc, char **argv);

/* `floe sink --config floe.yaml [--http HOST:PORT]`: the table engine fed
 * by a consumer group of an existing Kafka cluster (src/cmd/sink.c):
 * argv[1] is "sink".  Returns the exit status. */
int floe_cmd_sink(int argc, char **argv);

/* `floe topic create|list|describe|alter|delete ...` over the Kafka
 * protocol (src/cmd/topic.c): argv[1] is "topic".  Returns the exit status. */
int floe_cmd_topic(int argc, char **argv);

/* `floe table list|describe|scan|history ...` reading the filesystem
 * catalog under the data dir (src/cmd/table_cli.c): argv[1] is "table". */
int floe_cmd_table(int argc, char **argv);

/* `floe config --markdown`: the configuration reference (server, consumer
 * group and table topic keys) generated from their key tables, as
 * README.md's configuration section holds it (src/cmd/config_ref.c). */
int floe_cmd_config(int argc, char **argv);

/* The server's own config keys (src/cmd/serve.c).  Static; *n gets the
 * count. */
const floe_conf_key_t *floe_serve_config_keys(size_t *n);

#endif
