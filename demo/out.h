/* out.h: failures to write stdout, remembered and reported. */
#ifndef TRIAGE_OUT_H
#define TRIAGE_OUT_H

#include <stdbool.h>

/* Results on stdout are never lost silently. out_failed: true
 * once a write to stdout has failed (ferror), remembering the first
 * failure's errno; call it right after writing, so that errno is the
 * write's. out_close_as: flushes and closes stdout; 0, or 1 after printing
 * "WHO: cannot write stdout: REASON" on stderr when any write to it
 * failed. out_close(cmd) is it for "triage-demo CMD": every command that
 * writes results ends with it (triage-bench too, as itself). */
bool out_failed(void);
bool out_flush_failed(void); /* fflush(stdout), then out_failed */
int out_close_as(const char *who);
int out_close(const char *cmd);

#endif
