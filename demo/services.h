/* services.h: what the three services and `run` share: the policy option,
 * the line a listening service prints, and JSON strings. */
#ifndef TRIAGE_SERVICES_H
#define TRIAGE_SERVICES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gzip.h"
#include "policy.h"
#include "reader.h"
#include "verify.h"

/* What c chooses (reader.h: rules, --where, a JSON policy, or the default
 * rules); on failure prints "triage-demo CMD: FILE:LINE:COL: problem" to
 * stderr and returns false. */
bool svc_policy(const char *cmd, const rd_choice *c, po_policy *out);

/* Listens on hostport and prints "listening HOST:PORT" (the port bound, so
 * port 0 can be found by whoever started us) on stdout, flushed. Returns the
 * descriptor or -1 after printing the error. */
int svc_listen(const char *cmd, const char *hostport);

/* The compression line of a report, named for enc (gzip or deflate):
 * messages inflated, the compression ratio (compressed bytes / inflated
 * bytes), inflate time per message. */
void svc_print_inflate(FILE *f, gz_encoding enc, uint64_t inflated, uint64_t compressed_bytes,
                       uint64_t inflated_bytes, uint64_t inflate_ns, uint64_t failed);

/* s as a JSON string, quotes included. */
void svc_json_string(FILE *f, const char *s);

#endif
