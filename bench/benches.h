/* benches.h: the benchmarks triage-bench can run, bench_NAME each (bench.h
 * is what they share). */
#ifndef TRIAGE_BENCHES_H
#define TRIAGE_BENCHES_H

#include "bench.h"

/* triage.c: one message from bytes to verdict: decode, optics, detail. */
int bench_triage(const bn_opts *o);

/* stream.c: the filter's pipe in memory (filter/pipe.h), per reader. */
int bench_stream(const bn_opts *o);

/* peers.c: ours against simdjson, jsmn, cJSON, jq and the memchr/memcpy
 * limits at size 7 (peers), and the same over sizes 2, 7, 15, 40 (sweep). */
int bench_peers(const bn_opts *o);
int bench_sweep(const bn_opts *o);

/* grpc.c: gRPC over HTTP/2 through the proxy (runtime/h2proxy.h). */
int bench_grpc(const bn_opts *o);
/* The proxy's workers 1..cores, 1 to 256 streams, its added latency. */
int bench_grpc_scale(const bn_opts *o);
/* Calls through HAProxy (deploy/haproxy.cfg) to 0-3 proxy processes. */
int bench_grpc_haproxy(const bn_opts *o);

#endif
