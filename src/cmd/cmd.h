/* Subcommands of the floe binary. */
#ifndef FLOE_CMD_H
#define FLOE_CMD_H

#define FLOE_VERSION "0.1.0"

#endif
