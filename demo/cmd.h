/* cmd.h: the subcommands of triage-demo, each in its own file (services.c
 * holds upstream, filter and downstream). */
#ifndef TRIAGE_CMD_H
#define TRIAGE_CMD_H

int cmd_gen(int argc, char **argv);
int cmd_judge(int argc, char **argv);
int cmd_upstream(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_downstream(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_proxy(int argc, char **argv);

#endif
