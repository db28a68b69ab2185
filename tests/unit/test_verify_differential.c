/* test_verify_differential.c: the parser-differential classes, one by
 * one, through the verify levels (filter/verify.h) and every reader:
 * truncation at every byte, NUL bytes anywhere, invalid UTF-8 in keys and
 * values, the depth bomb; and JSONTestSuite's files through the JSON level,
 * the decoder's JSON layer and the differential. On each input docs/security.md's
 * rule holds (verify_cases.h): either verify=schema rejects it, or the
 * decoder accepts it and the optics read the values it read. */
#include <stdio.h>
#include <string.h>

#include "support/bytes.h"
#include "support/conformance.h"
#include "support/demo/verify_cases.h"
#include "support/fixture.h"
#include "support/suite.h"

/* ---- the parser-differential classes ---- */

/* Truncation at every byte: every proper prefix is rejected at both levels,
 * and the optics agree with decode on each (a miss or a rejection, never a
 * shorter value: the votes count 1300 cut to 130 would keep). */
START_TEST(truncation_at_every_byte)
{
    static const char *const ds[] = {D_KEEP, "\"detail\":" REQUEST("1300", "Business"),
                                     "\"detail\":" BUG("Payments")};
    for (size_t d = 0; d < 3; d++) {
        for (int first = 0; first < 2; first++) {
            static bb dsbuf;
            vc_piece dp = vc_complete_member(vc_pz(ds[d]), &dsbuf);
            vc_piece parts[2] = {dp, vc_of(vc_rest)};
            if (!first) {
                parts[0] = parts[1];
                parts[1] = dp;
            }
            bb *m = vc_compose(parts, 2, NULL);
            vc_verdict full = vc_judge_decode(vc_msg(m));
            REQUIRE(full.kind >= 0 && full.keep);
            for (size_t k = 0; k < m->n; k++) {
                tr_message t = {m->p, k};
                REQUIREF(vc_check(VF_JSON, t).code != TR_E_OK, "json accepts prefix %zu", k);
                REQUIREF(vc_check(VF_SCHEMA, t).code != TR_E_OK, "schema accepts prefix %zu", k);
                vc_differential("prefix", t);
                /* verify=off on a prefix: a miss or the whole message's verdict */
                vc_verdict v = vc_judge_optics(VF_OFF, t);
                REQUIREF(v.kind == -1 || v.kind == full.kind, "prefix %zu: kind %d", k, v.kind);
                if (d == 1 && v.kind == REQ) {
                    tr_view_Detail dv;
                    tr_Votes votes;
                    uint64_t mem[64];
                    ar_arena a;
                    ar_init(&a, mem, sizeof mem);
                    if (tr_scan_detail(t, &dv) && tr_scan_votes(dv, &votes, &a))
                        REQUIREF(votes.count == 1300, "prefix %zu: votes read as %d", k, votes.count);
                }
            }
        }
    }
}
END_TEST

/* NUL anywhere: in a key, a value, between tokens, before, after. */
START_TEST(nul_bytes)
{
    size_t pos[2];
    vc_piece parts[2] = {vc_keep, vc_of(vc_rest)};
    bb *good = vc_compose(parts, 2, pos);
    /* every position of a NUL replacing a byte, and of one inserted */
    for (size_t i = 0; i <= good->n; i++) {
        bb *b = bb_new();
        bb_put(b, good->p, i);
        bb_put(b, "\0", 1);
        bb_put(b, good->p + i, good->n - i);
        tr_error j = vc_check(VF_JSON, vc_msg(b));
        REQUIREF(j.code != TR_E_OK && j.offset <= i, "NUL inserted at %zu: json %s at %zu", i,
                 tr_error_name(j.code), j.offset);
        REQUIREF(vc_check(VF_SCHEMA, vc_msg(b)).code != TR_E_OK, "NUL at %zu accepted", i);
        vc_differential("NUL inserted", vc_msg(b));
        if (i < good->n) {
            b = bb_new();
            bb_put(b, good->p, good->n);
            b->p[i] = 0;
            REQUIREF(vc_check(VF_JSON, vc_msg(b)).code != TR_E_OK, "NUL replacing %zu", i);
            vc_differential("NUL replacing", vc_msg(b));
        }
    }
}
END_TEST

/* Invalid UTF-8 in a key and in a value, in every string of the detail
 * (the focus) and the first member, each byte sequence at each string. */
START_TEST(invalid_utf8_in_keys_and_values)
{
    static const char *const bad[] = {"\xff", "\xfe", "\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf",
                                      "\xed\xa0\x80", "\xed\xbf\xbf", "\xf0\x80\x80\xaf",
                                      "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xe2\x82", "\xc3"};
    size_t pos[2];
    vc_piece parts[2] = {vc_keep, vc_of(vc_rest)};
    bb *good = vc_compose(parts, 2, pos);
    size_t checked = 0;
    /* After each opening quote in the first 400 bytes (detail and the
     * first fields): keys and values alike. */
    for (size_t i = 0; i < good->n && i < 400; i++) {
        if (good->p[i] != '"' || (i > 0 && good->p[i - 1] == '\\'))
            continue;
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            bb *b = bb_new();
            bb_put(b, good->p, i + 1);
            bb_puts(b, bad[k]);
            bb_put(b, good->p + i + 1, good->n - i - 1);
            tr_error j = vc_check(VF_JSON, vc_msg(b));
            /* an opening quote: the bad byte is inside a string. A closing
             * quote: it lands between tokens, a syntax error right there. */
            REQUIREF((j.code == TR_E_UTF8 || j.code == TR_E_SYNTAX) && j.offset == i + 1,
                     "bad UTF-8 after byte %zu: %s at %zu", i, tr_error_name(j.code), j.offset);
            vc_differential("invalid UTF-8", vc_msg(b));
            checked++;
        }
    }
    REQUIRE(checked > 100);
}
END_TEST

/* 100 000 nested arrays inside an unknown field, at either end, closed or
 * not, and inside the detail: TR_E_DEPTH at the bracket past the limit, at
 * both levels, without a stack overflow (the readers do not recurse on it). */
START_TEST(depth_bomb)
{
    enum { DEEP = 100000 };
    for (int closed = 0; closed < 2; closed++) {
        bb *bomb = bb_new();
        bb_puts(bomb, "\"zz\":");
        size_t open = bomb->n;
        bb_rep(bomb, "[", DEEP);
        if (closed)
            bb_rep(bomb, "]", DEEP);
        for (int l = 0; l < 6; l++) {
            vc_piece parts[3];
            int xi = 0;
            for (int i = 0; i < 3; i++) {
                char w = vc_layouts[l][i];
                parts[i] = w == 'X' ? vc_of(bomb) : w == 'D' ? vc_keep : vc_of(vc_rest);
                if (w == 'X')
                    xi = i;
            }
            size_t pos[3];
            bb *m = vc_compose(parts, 3, pos);
            /* The root is depth 1: the 256th '[' is depth 257. */
            size_t at = pos[xi] + open + (JS_MAX_DEPTH - 1);
            char name[64];
            snprintf(name, sizeof name, "depth bomb %s [%s]", closed ? "closed" : "open", vc_layouts[l]);
            vc_expect_bad(name, vc_msg(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
        }
        /* inside the detail, as an unknown field of the Incident */
        bb *d = bb_new();
        bb_puts(d, "\"detail\":{\"type\":\"Incident\",\"zz\":");
        size_t dopen = d->n;
        bb_rep(d, "[", DEEP);
        if (closed)
            bb_rep(d, "]", DEEP);
        bb_puts(d, ",\"severity\":\"Sev1\"}");
        vc_piece parts[2] = {vc_of(d), vc_of(vc_rest)};
        size_t pos[2];
        bb *m = vc_compose(parts, 2, pos);
        /* root 1, detail 2: the 255th '[' is depth 257 */
        size_t at = pos[0] + dopen + (JS_MAX_DEPTH - 2);
        vc_expect_bad("depth bomb in the detail", vc_msg(m), TR_E_DEPTH, at, TR_E_DEPTH, at);
        /* the optics alone, verify=off: a walk that gives up, no crash */
        tr_view_Detail dv;
        if (tr_scan_detail(vc_msg(m), &dv)) {
            tr_Severity s;
            (void)tr_scan_severity(dv, &s);
        }
    }
}
END_TEST

/* ---- JSONTestSuite ---- */

typedef struct {
    int y, n, i;
    char disagree[4096];
} suite_seen;

static void suite_case(const char *name, const uint8_t *p, size_t len, void *ctx)
{
    suite_seen *seen = ctx;
    tr_message f = {p, len};
    char kind = name[0];
    tr_error j = vc_check(VF_JSON, f);
    if (kind == 'y') {
        REQUIREF(j.code == TR_E_OK, "%s: rejected (%s at %zu)", name, tr_error_name(j.code), j.offset);
        seen->y++;
    } else if (kind == 'n') {
        REQUIREF(j.code != TR_E_OK, "%s: accepted", name);
        REQUIREF(j.offset <= len, "%s: offset past the end", name);
        seen->n++;
    } else {
        /* The decoder's JSON layer: the file's value as an unknown field
         * ("zz":<file>,) right after the opening brace of a valid message. */
        bb *w = bb_new();
        bb_puts(w, "{\"zz\":");
        bb_put(w, p, len);
        bb_puts(w, ",");
        tr_message base = vc_base();
        bb_put(w, base.p + 1, base.n - 1);
        tr_error de = vc_decode(vc_msg(w));
        bool dec_ok = de.code == TR_E_OK;
        /* And the same error at the same byte, 6 bytes on ("{\"zz\":"),
         * but for two that differ for a reason: a BOM is only a BOM at
         * the start of a text, and a value one level down hits the
         * depth limit one bracket sooner. */
        bool same_err = dec_ok || j.code == TR_E_OK ||
                        (j.code == TR_E_BOM && de.code == TR_E_SYNTAX && de.offset == 6) ||
                        (j.code == TR_E_DEPTH && de.code == TR_E_DEPTH && de.offset == j.offset + 5) ||
                        (j.code == de.code && de.offset == j.offset + 6);
        if (dec_ok != (j.code == TR_E_OK) || !same_err) {
            size_t l = strlen(seen->disagree);
            snprintf(seen->disagree + l, sizeof seen->disagree - l, " %s (json %s at %zu, decoder %s at %zu)",
                     name, j.code == TR_E_OK ? "ok" : tr_error_name(j.code), j.offset,
                     dec_ok ? "ok" : tr_error_name(de.code), de.offset);
        }
        vc_differential(name, vc_msg(w));
        seen->i++;
    }
}

START_TEST(json_test_suite)
{
    suite_seen seen = {0, 0, 0, ""};
    if (cf_each(suite_case, &seen, 1) < 0)
        return;
    REQUIREF(seen.disagree[0] == 0, "i_ files answered differently:%s", seen.disagree);
    ck_assert_int_gt(seen.y, 0);
    ck_assert_int_gt(seen.n, 0);
    ck_assert_int_gt(seen.i, 0);
}
END_TEST


static Suite *differential_suite(void)
{
    Suite *s = suite_create("verify_differential");
    TCase *t = su_tcase(s, "differential", NULL, fx_teardown, 600);
    tcase_add_test(t, truncation_at_every_byte);
    tcase_add_test(t, nul_bytes);
    tcase_add_test(t, invalid_utf8_in_keys_and_values);
    tcase_add_test(t, depth_bomb);
    tcase_add_test(t, json_test_suite);
    return s;
}

int main(void)
{
    vc_init();
    return su_run(differential_suite());
}
