/* clock.h: the monotonic clock in nanoseconds, which timeouts, progress
 * lines and time per message are measured with (read in user space, no
 * system call). */
#ifndef TR_CLOCK_H
#define TR_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clk_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
