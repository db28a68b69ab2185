/* peers_cjson.c: cJSON (Debian's libcjson-dev) as a peer of our readers
 * (peers.h): cJSON_ParseWithLength builds the whole tree (a malloc per
 * value), the policy reads it, cJSON_Delete frees it.
 *
 * While timed, cJSON allocates straight from glibc (cJSON_InitHooks with
 * __libc_malloc), not through the counting malloc of counters.c, whose
 * atomic adds would be charged to cJSON's hundreds of allocations; the
 * allocation figures come from an untimed pass with the default hooks. */
#ifdef TRIAGE_HAVE_CJSON
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "peers.h"

extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);

static const cJSON *at(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static bool str_in(const cJSON *v, const pr_names *set)
{
    return cJSON_IsString(v) && pr_in(set, v->valuestring, strlen(v->valuestring));
}

static int cj_verdict(void *p, size_t i)
{
    const pr_env *e = p;
    const pr_policy *P = e->policy;
    cJSON *root = cJSON_ParseWithLength((const char *)e->buf + e->off[i], e->len[i]);
    if (root == NULL)
        return pr_verdict(-1, false);
    const cJSON *d = at(root, "detail"), *ty = at(d, "type");
    int kind = cJSON_IsString(ty) ? pr_find(&P->kinds, ty->valuestring, strlen(ty->valuestring))
                                  : -1;
    bool keep = false;
    if (kind < 0) {
    } else if (kind == P->incident) {
        keep = str_in(at(d, "severity"), &P->urgent) &&
               str_in(at(at(at(d, "impact"), "service"), "tier"), &P->tiers);
    } else if (kind == P->bug) {
        const cJSON *frames = at(at(d, "trace"), "frames");
        keep = cJSON_IsArray(frames) && str_in(at(cJSON_GetArrayItem(frames, 0), "module"),
                                               &P->modules);
    } else if (kind == P->request) {
        const cJSON *votes = at(at(d, "votes"), "count");
        keep = cJSON_IsNumber(votes) && votes->valuedouble >= (double)P->min_votes &&
               str_in(at(at(at(d, "requester"), "contract"), "plan"), &P->plans);
    }
    cJSON_Delete(root);
    return pr_verdict(kind, keep);
}

static void *cj_make(const pr_env *env) { return (void *)(uintptr_t)env; }
static void cj_done(void *p) { (void)p; }

static void cj_direct(void *p, bool on)
{
    (void)p;
    cJSON_Hooks h = {__libc_malloc, __libc_free};
    cJSON_InitHooks(on ? &h : NULL);
}

#define STR_(x) #x
#define STR(x) STR_(x)
const pr_peer pr_cjson = {"cjson",
                          "cJSON " STR(CJSON_VERSION_MAJOR) "." STR(CJSON_VERSION_MINOR) "." STR(
                              CJSON_VERSION_PATCH) ": parse the whole tree, judge, free",
                          cj_make, cj_verdict, cj_done, cj_direct};
#else
/* Without libcjson-dev the case is left out (peers.h). */
typedef int tr_peers_cjson_unused;
#endif
