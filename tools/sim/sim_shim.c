/* sim_shim.c — linked into the simulation build only, in front of libc (-Wl,--wrap=fclose).
 *
 * Under SMPI every rank is a thread of one process, so stdout is one FILE for
 * all of them: the first rank to leave main (cli_finish_stdout) would close
 * it under the others, which then flush a freed FILE. Here closing stdout
 * only flushes it (its write errors still count); the process's exit closes
 * it. Every other stream closes as usual. */
#include <stdio.h>

int __real_fclose(FILE *f);
int __wrap_fclose(FILE *f);

int __wrap_fclose(FILE *f) { return f == stdout ? fflush(f) : __real_fclose(f); }
