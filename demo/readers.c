/* readers.c: capability adapters for the policy. */
#include "readers.h"

po_schema rd_schema(void)
{
    return (po_schema){
        .kind = {tr_Detail_names, TR_DETAIL_COUNT},
        .severity = {tr_Severity_names, TR_SEVERITY_COUNT},
        .tier = {tr_Tier_names, TR_TIER_COUNT},
        .module = {tr_Module_names, TR_MODULE_COUNT},
        .plan = {tr_Plan_names, TR_PLAN_COUNT},
    };
}

/* ---- over the decoded model */

static int m_kind(const void *self)
{
    tr_Detail_kind v;
    return tr_get_kind(self, &v) ? (int)v : -1;
}

static int m_severity(const void *self)
{
    tr_Severity v;
    return tr_get_severity(self, &v) ? (int)v : -1;
}

static int m_tier(const void *self)
{
    tr_Tier v;
    return tr_get_tier(self, &v) ? (int)v : -1;
}

static int m_module(const void *self)
{
    tr_Module v;
    return tr_get_module(self, &v) ? (int)v : -1;
}

static int m_plan(const void *self)
{
    tr_Plan v;
    return tr_get_plan(self, &v) ? (int)v : -1;
}

static bool m_votes(const void *self, int64_t *count)
{
    const tr_Votes *v;
    if (!tr_get_votes(self, &v))
        return false;
    *count = v->count;
    return true;
}

po_reader rd_model(const tr_Detail *d)
{
    return (po_reader){d, m_kind, m_severity, m_tier, m_module, m_plan, m_votes};
}

/* ---- over the bytes, through the scanners */

static int o_kind(const void *self)
{
    tr_Detail_kind v;
    return tr_scan_kind(((const rd_bytes *)self)->detail, &v) ? (int)v : -1;
}

static int o_severity(const void *self)
{
    tr_Severity v;
    return tr_scan_severity(((const rd_bytes *)self)->detail, &v) ? (int)v : -1;
}

static int o_tier(const void *self)
{
    tr_Tier v;
    return tr_scan_tier(((const rd_bytes *)self)->detail, &v) ? (int)v : -1;
}

static int o_module(const void *self)
{
    tr_Module v;
    return tr_scan_module(((const rd_bytes *)self)->detail, &v) ? (int)v : -1;
}

static int o_plan(const void *self)
{
    tr_Plan v;
    return tr_scan_plan(((const rd_bytes *)self)->detail, &v) ? (int)v : -1;
}

static bool o_votes(const void *self, int64_t *count)
{
    /* The capability interface is const; the arena is scratch for escaped
     * keys inside the record, reset before each use. */
    rd_bytes *st = (rd_bytes *)(uintptr_t)self;
    tr_Votes v;
    ar_reset(&st->arena);
    if (!tr_scan_votes(st->detail, &v, &st->arena))
        return false;
    *count = v.count;
    return true;
}

po_reader rd_optics(rd_bytes *st, tr_view_Detail detail)
{
    st->detail = detail;
    ar_init(&st->arena, st->mem, sizeof st->mem);
    return (po_reader){st, o_kind, o_severity, o_tier, o_module, o_plan, o_votes};
}
