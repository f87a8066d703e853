/*
 * commands.h — the subcommands of the perfcast executable and the small
 * helpers they share. Each cmd_* takes argv starting at the command name and
 * returns the exit status (0 ok, 1 failure, 2 invalid input or usage).
 */
#ifndef PERFCAST_COMMANDS_H
#define PERFCAST_COMMANDS_H

#include <stddef.h>

int cmd_model(int argc, char **argv);

/* Reads a whole file ("-" is stdin) into a malloc'ed buffer. Returns 0, or -1
 * with a message in err. */
int cli_read_file(const char *path, char **buf, size_t *len, char *err, size_t errcap);

#endif
