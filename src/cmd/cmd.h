/* Subcommands of the floe binary. */
#ifndef FLOE_CMD_H
#define FLOE_CMD_H

#define FLOE_VERSION "0.1.0"

/* `floe serve [--config FILE] [--data-dir DIR] [--listen HOST:PORT]
 * [--http HOST:PORT]`: argv[1] is "serve".  Returns the exit status. */
int floe_cmd_serve(int argc, char **argv);

#endif
