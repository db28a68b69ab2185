/* out.c: stdout's failures, remembered and reported. */
#include "out.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int out_errno;

bool out_failed(void)
{
    if (!ferror(stdout))
        return false;
    if (out_errno == 0)
        out_errno = errno != 0 ? errno : EIO;
    return true;
}

bool out_flush_failed(void)
{
    fflush(stdout); /* a failure sets the stream's error flag and errno */
    return out_failed();
}

int out_close_as(const char *who)
{
    errno = 0;
    if (fflush(stdout) != 0)
        out_failed();
    out_failed();
    /* close too: some file systems report a failed write only there */
    errno = 0;
    if (fclose(stdout) != 0 && out_errno == 0)
        out_errno = errno != 0 ? errno : EIO;
    if (out_errno == 0)
        return 0;
    fprintf(stderr, "%s: cannot write stdout: %s\n", who, strerror(out_errno));
    return 1;
}

int out_close(const char *cmd)
{
    char who[64];
    snprintf(who, sizeof who, "triage-demo %s", cmd);
    return out_close_as(who);
}
