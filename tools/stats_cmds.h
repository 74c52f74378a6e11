/* stats_cmds.h - `sheaf stats` subcommands in files of their own, called by
 * cmd_stats.c's dispatch (argv[0] is the subcommand's name). */
#ifndef SHEAF_TOOLS_STATS_CMDS_H
#define SHEAF_TOOLS_STATS_CMDS_H

/* sheaf stats top: the online view of a running job (cmd_stats_top.c) */
int cmd_stats_top(int argc, char **argv);
/* sheaf stats node: the per-node sampler (cmd_stats_node.c) */
int cmd_stats_node(int argc, char **argv);

#endif
