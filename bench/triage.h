/* triage.h: the benchmarks triage-bench can run. */
#ifndef TR_TRIAGE_BENCH_H
#define TR_TRIAGE_BENCH_H

#include "bench.h"

int bench_triage(const bn_opts *o);

#endif
