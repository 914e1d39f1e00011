/*
 * devtensor run — a launcher for multi-process jobs, like PyTorch's torchrun.
 *
 * Starts N copies of a program with torch.distributed's env:// variables set (RANK,
 * LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT),
 * prefixes each line of their output with its rank, forwards SIGINT/SIGTERM/SIGHUP to
 * them and stops every rank as soon as one fails. See launcher.c.
 */
#ifndef DEVTENSOR_TOOLS_LAUNCHER_H
#define DEVTENSOR_TOOLS_LAUNCHER_H

/* argv[0] is "run"; the options and the program follow. Returns the exit status:
 * 0 every rank exited 0, 1 a rank failed (or one could not be started), 2 a usage
 * error, 128+N the launcher received signal N (SIGINT, SIGTERM or SIGHUP). */
int launcher_main(int argc, char** argv);

#endif
