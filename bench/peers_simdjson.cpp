// peers_simdjson.cpp: simdjson (Debian's libsimdjson-dev) as two peers of
// our readers, for the `peers` and `sweep` benchmarks (peers.h).
//
//   simdjson-ondemand  ondemand::parser over the padded copy of the pool:
//                      find detail, read its "type", then only the leaves
//                      the policy asks for, in the order it asks for them
//                      (lookups are simdjson's unordered ones, so any field
//                      order reads right);
//   simdjson-dom       dom::parser: parse the whole message into the
//                      parser's tape, then the same judging over the DOM.
//
// Both parsers are made once (with capacity for the largest message) and
// reused, as simdjson's documentation asks; nothing is allocated per message.
// A lookup that fails (absent, wrong type) is a miss, as for our readers.
#include <simdjson.h>

#include <new>
#include <string_view>

#include "peers.h"

static_assert(simdjson::SIMDJSON_PADDING <= PR_PAD, "the pool's padding is too small for simdjson");

using namespace simdjson;

#define PR_STR_(x) #x
#define PR_STR(x) PR_STR_(x)

namespace {

bool in(const pr_names &set, std::string_view s) { return pr_in(&set, s.data(), s.size()); }

struct od_state {
    ondemand::parser parser{};
    const pr_env *env = nullptr;
};

int od_verdict(void *p, size_t i)
{
    od_state *s = static_cast<od_state *>(p);
    const pr_env *e = s->env;
    const pr_policy &P = *e->policy;
    ondemand::document doc;
    if (s->parser.iterate(reinterpret_cast<const char *>(e->pad + e->pad_off[i]), e->len[i],
                          e->len[i] + PR_PAD)
            .get(doc))
        return pr_verdict(-1, false);
    ondemand::object detail;
    if (doc["detail"].get_object().get(detail))
        return pr_verdict(-1, false);
    std::string_view type;
    if (detail["type"].get_string().get(type))
        return pr_verdict(-1, false);
    int kind = pr_find(&P.kinds, type.data(), type.size());
    bool keep = false;
    if (kind < 0) {
    } else if (kind == P.incident) {
        std::string_view sev, tier;
        keep = !detail["severity"].get_string().get(sev) && in(P.urgent, sev) &&
               !detail["impact"]["service"]["tier"].get_string().get(tier) && in(P.tiers, tier);
    } else if (kind == P.bug) {
        ondemand::array frames;
        if (!detail["trace"]["frames"].get_array().get(frames))
            for (auto f : frames) {
                std::string_view m;
                keep = !f["module"].get_string().get(m) && in(P.modules, m);
                break;
            }
    } else if (kind == P.request) {
        int64_t votes;
        std::string_view plan;
        keep = !detail["votes"]["count"].get_int64().get(votes) && votes >= P.min_votes &&
               !detail["requester"]["contract"]["plan"].get_string().get(plan) &&
               in(P.plans, plan);
    }
    return pr_verdict(kind, keep);
}

void *od_make(const pr_env *env)
{
    od_state *s = new (std::nothrow) od_state();
    if (s == nullptr)
        return nullptr;
    s->env = env;
    if (s->parser.allocate(env->max_len)) {
        delete s;
        return nullptr;
    }
    return s;
}

void od_done(void *p) { delete static_cast<od_state *>(p); }

struct dom_state {
    dom::parser parser{};
    const pr_env *env = nullptr;
};

int dom_verdict(void *p, size_t i)
{
    dom_state *s = static_cast<dom_state *>(p);
    const pr_env *e = s->env;
    const pr_policy &P = *e->policy;
    dom::element doc;
    // realloc_if_needed false: the bytes are padded already, copy nothing.
    if (s->parser.parse(e->pad + e->pad_off[i], e->len[i], false).get(doc))
        return pr_verdict(-1, false);
    dom::object detail;
    if (doc["detail"].get_object().get(detail))
        return pr_verdict(-1, false);
    std::string_view type;
    if (detail["type"].get_string().get(type))
        return pr_verdict(-1, false);
    int kind = pr_find(&P.kinds, type.data(), type.size());
    bool keep = false;
    if (kind < 0) {
    } else if (kind == P.incident) {
        std::string_view sev, tier;
        keep = !detail["severity"].get_string().get(sev) && in(P.urgent, sev) &&
               !detail["impact"]["service"]["tier"].get_string().get(tier) && in(P.tiers, tier);
    } else if (kind == P.bug) {
        std::string_view m;
        keep = !detail["trace"]["frames"].at(0)["module"].get_string().get(m) &&
               in(P.modules, m);
    } else if (kind == P.request) {
        int64_t votes;
        std::string_view plan;
        keep = !detail["votes"]["count"].get_int64().get(votes) && votes >= P.min_votes &&
               !detail["requester"]["contract"]["plan"].get_string().get(plan) &&
               in(P.plans, plan);
    }
    return pr_verdict(kind, keep);
}

void *dom_make(const pr_env *env)
{
    dom_state *s = new (std::nothrow) dom_state();
    if (s == nullptr)
        return nullptr;
    s->env = env;
    if (s->parser.allocate(env->max_len)) {
        delete s;
        return nullptr;
    }
    return s;
}

void dom_done(void *p) { delete static_cast<dom_state *>(p); }

} // namespace

extern "C" {
const char *pr_simdjson_impl(void) { return get_active_implementation()->name().c_str(); }

const pr_peer pr_simdjson_ondemand = {
    "simdjson-ondemand", "simdjson " PR_STR(SIMDJSON_VERSION) " On-Demand: detail, its type, the policy's leaves",
    od_make, od_verdict, od_done, nullptr};
const pr_peer pr_simdjson_dom = {
    "simdjson-dom", "simdjson " PR_STR(SIMDJSON_VERSION) " DOM: parse the whole message, then judge",
    dom_make, dom_verdict, dom_done, nullptr};
}
