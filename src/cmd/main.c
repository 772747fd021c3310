/* floe: the command-line entry point.  Subcommands dispatch to their module;
 * exit status 0 on success, 1 on error with one line on stderr. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: floe <command> [options]\n"
               "commands:\n"
               "  serve        run the broker (floe serve --help for options)\n"
               "  sink         tables from an existing Kafka cluster (floe sink --help)\n"
               "  topic        create, list, describe, alter, delete topics (floe topic help)\n"
               "  table        list, describe, scan, history of Iceberg tables (floe table help)\n"
               "  config       print the configuration reference (floe config --markdown)\n"
               "  version      print the version\n"
               "  help         this text\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "serve")) return floe_cmd_serve(argc, argv);
    if (!strcmp(cmd, "sink")) return floe_cmd_sink(argc, argv);
    if (!strcmp(cmd, "topic")) return floe_cmd_topic(argc, argv);
    if (!strcmp(cmd, "table")) return floe_cmd_table(argc, argv);
    if (!strcmp(cmd, "config")) return floe_cmd_config(argc, argv);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("floe %s\n", FLOE_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "floe: unknown command '%s' (see 'floe help')\n", cmd);
    return 1;
}
