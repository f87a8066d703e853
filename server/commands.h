/*
 * commands.h — the subcommands of the perfcast executable and the small
 * helpers they share. Each cmd_* takes argv starting at the command name and
 * returns the exit status (0 ok, 1 failure, 2 invalid input or usage).
 */
#ifndef PERFCAST_COMMANDS_H
#define PERFCAST_COMMANDS_H

#include <stddef.h>

int cmd_model(int argc, char **argv);

/* A whole input file, mapped or read into memory. */
typedef struct cli_file {
    char *data;
    size_t len;
    int mapped;
} cli_file;

/* Opens path ("-" is stdin). Returns 0, or -1 with a message in err. */
int cli_file_open(const char *path, cli_file *f, char *err, size_t errcap);
void cli_file_close(cli_file *f);

#endif
