/* peers.h: what the `peers` and `sweep` benchmarks share with the peer
 * readers, the libraries a user would pick instead of ours.
 *
 * Plain C, also included from C++ (peers_simdjson.cpp): no project header
 * comes in through here. The policy reaches the peers as the names it keeps
 * (pr_policy, the demo policy of schema/default.rules), so a peer judges
 * the way its user would: read a string, compare it with the policy's names.
 *
 * A verdict is one int, comparable across readers: pr_verdict(kind, keep),
 * kind the index of the detail's case in the schema (tr_Detail_names), -1
 * when no kind could be read (an unknown or missing kind, or the reader
 * rejected the message): that is always a drop. */
#ifndef TRIAGE_PEERS_H
#define TRIAGE_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes after each message in the padded copy of the pool; simdjson asks for
 * SIMDJSON_PADDING (64 in 3.x; peers_simdjson.cpp checks it fits). */
#define PR_PAD 64

#define PR_MAX_NAMES 16

typedef struct {
    const char *s[PR_MAX_NAMES];
    size_t n[PR_MAX_NAMES];
    int count;
} pr_names;

typedef struct {
    pr_names kinds;                    /* every case of the union, in schema order */
    int bug, incident, request;        /* their indexes */
    pr_names urgent, tiers, modules, plans; /* the names the policy keeps */
    int64_t min_votes;
} pr_policy;

/* The messages: the pool (bodies, no frame headers) and a padded copy of it
 * (each message followed by PR_PAD spaces) for the readers that need one. */
typedef struct {
    const uint8_t *buf;
    const size_t *off, *len;
    const uint8_t *pad;
    const size_t *pad_off;
    size_t count, max_len;
    const pr_policy *policy;
} pr_env;

static inline int pr_verdict(int kind, bool keep) { return (kind + 1) * 2 + (keep && kind >= 0); }

static inline int pr_find(const pr_names *set, const char *s, size_t n)
{
    for (int i = 0; i < set->count; i++)
        if (set->n[i] == n && memcmp(set->s[i], s, n) == 0)
            return i;
    return -1;
}

static inline bool pr_in(const pr_names *set, const char *s, size_t n)
{
    return pr_find(set, s, n) >= 0;
}

/* A peer: make builds its state over env (once, before any timing; NULL on
 * failure), verdict judges message i, done frees the state. direct, when
 * set, is called with true before the timed passes and false after: it lets
 * a peer whose allocations go through malloc allocate straight from glibc
 * while timed (the counting malloc of counters.c costs an atomic add per
 * call, which would weigh on a reader that allocates per value). */
typedef struct {
    const char *name;
    const char *what;
    void *(*make)(const pr_env *env);
    int (*verdict)(void *st, size_t i);
    void (*done)(void *st);
    void (*direct)(void *st, bool on);
} pr_peer;

#ifdef TRIAGE_HAVE_SIMDJSON
extern const pr_peer pr_simdjson_ondemand, pr_simdjson_dom;
/* The kernel simdjson picked for this CPU (haswell, icelake, ...). */
const char *pr_simdjson_impl(void);
#endif
#ifdef TRIAGE_HAVE_CJSON
extern const pr_peer pr_cjson;
#endif
extern const pr_peer pr_jsmn;

#ifdef __cplusplus
}
#endif

#endif
