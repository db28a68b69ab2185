/* triage-demo: the command line (README.md, and each command's --help). Each subcommand is
 * a function in its own file; this one only dispatches. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "version.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"gen", cmd_gen, "write generated messages to stdout as gRPC frames"},
    {"judge", cmd_judge, "read frames from stdin, print '<kind> <keep|drop>' per message"},
    {"upstream", cmd_upstream, "stream N generated frames to each connection"},
    {"filter", cmd_filter, "forward the frames the policy keeps, from upstream to downstream"},
    {"downstream", cmd_downstream, "receive frames, decode and check them, print the counts"},
    {"run", cmd_run, "the three services on loopback, once per reader, and the report"},
    {"check", cmd_check, "read frames from stdin, print 'ok' or 'bad <offset> <reason>'"},
    {"proxy", cmd_proxy, "a gRPC proxy over HTTP/2 that forwards only the messages kept"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: triage-demo COMMAND [OPTIONS]\n"
               "       triage-demo --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'triage-demo COMMAND --help' describes each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("triage-demo %s\n", TR_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "triage-demo: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
