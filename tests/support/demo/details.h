/* details.h: the demo's literal details, one of each case of Detail, as
 * C string literals: the verify suites (verify_cases.h) and the fuzzers'
 * handmade seeds (tests/fuzz/corpus.c) spell their cases with them. */
#ifndef TRIAGE_TEST_DETAILS_H
#define TRIAGE_TEST_DETAILS_H

#define INCIDENT(sev, tier)                                                          \
    "{\"type\":\"Incident\",\"severity\":\"" sev "\",\"startedAt\":1,\"mitigated\":false,"  \
    "\"impact\":{\"users\":1,\"errorRate\":0.5,\"service\":{\"name\":\"s\",\"tier\":\"" tier \
    "\",\"region\":\"r\"}}}"
#define BUG(mod)                                                                     \
    "{\"type\":\"Bug\",\"component\":\"c\",\"build\":\"b\",\"reproducible\":true,"        \
    "\"trace\":{\"exception\":\"e\",\"message\":\"m\",\"frames\":[{\"module\":\"" mod      \
    "\",\"function\":\"f\",\"file\":\"x.c\",\"line\":3}]}}"
#define REQUEST(votes, plan)                                                         \
    "{\"type\":\"Request\",\"product\":\"p\",\"votes\":{\"count\":" votes "},"            \
    "\"quarter\":\"q\",\"requester\":{\"name\":\"n\",\"contract\":{\"plan\":\"" plan      \
    "\",\"seats\":2,\"renewsAt\":3}}}"

#endif
