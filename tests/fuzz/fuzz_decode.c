/* fuzz_decode.c: the harnesses of the demo's decoder and its JSON layer.
 * They check:
 *
 *   decode    errors lie inside the input; an accepted message is JSON,
 *             and decode . encode . decode is the identity on its model
 *   validate  tr_validate_Issue gives tr_decode_Issue's code and offset;
 *             with views, the same, and the detail tr_scan_detail finds
 *   json      js_validate gives one answer under every SIMD width, and
 *             jv_valid (jsonvalid.h) the same verdict on container texts with
 *             the scanner's detail; a valid value placed as an unknown
 *             field inside a valid message is accepted by the decoder (its
 *             JSON layer agrees)
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ======================================================= decode ===== */

const char *fz_decode(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    uint8_t *m = fz_copy(d, n);
    tr_error e = fz_decode_into(m, n, &fz.dec, &fz.issue);
    FZ_CHECK(e.code < TR_E_COUNT_, "decode: error code out of the table");
    FZ_CHECK(e.code == TR_E_OK || e.offset <= n, "decode: error offset past the end");
    if (e.code != TR_E_OK)
        goto out;
    js_ctx c;
    js_ctx_init(&c, m, NULL);
    FZ_CHECK(js_validate(&c, m, m + n) == m + n, "decode: accepted what is not JSON");
    FZ_CHECK((unsigned)fz.issue.detail.kind < TR_DETAIL_COUNT, "decode: detail kind out of range");
    uint8_t *w = tr_encode_Issue(fz.enc, fz.enc + FZ_ENCODE_CAP, &fz.issue);
    if (w == NULL)
        goto out;
    size_t en = (size_t)(w - fz.enc);
    tr_error e2 = fz_decode_into(fz.enc, en, &fz.dec2, &fz.issue2);
    FZ_CHECK(e2.code == TR_E_OK, "decode: rejects the encoding of what it accepted");
    uint8_t *w2 = tr_encode_Issue(fz.enc2, fz.enc2 + FZ_ENCODE_CAP, &fz.issue2);
    FZ_CHECK(w2 != NULL && (size_t)(w2 - fz.enc2) == en && memcmp(fz.enc, fz.enc2, en) == 0,
             "decode: decode . encode . decode changed the model");
out:
    free(m);
    return why;
}

/* ===================================================== validate ===== */

const char *fz_validate(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    uint8_t *m = fz_copy(d, n);
    tr_error e = fz_decode_into(m, n, &fz.dec, &fz.issue);
    tr_error v = vf_check(fz.vc, VF_SCHEMA, (tr_message){m, n});
    FZ_CHECK(v.code == e.code, "validate: code differs from the decoder's");
    FZ_CHECK(v.code == TR_E_OK || v.offset == e.offset, "validate: offset differs from the decoder's");
    /* with its views: the same verdict, and the detail the scanner finds */
    ar_reset(&fz.dec2);
    tr_Issue_views views;
    tr_error w = tr_validate_Issue_views(m, n, &fz.dec2, &views);
    FZ_CHECK(w.code == v.code && w.offset == v.offset, "validate: views change the verdict");
    if (w.code == TR_E_OK) {
        tr_view_Detail dv;
        bool hit = tr_scan_detail((tr_message){m, n}, &dv);
        FZ_CHECK(hit == views.has_detail && (!hit || (dv.p == views.detail.p && dv.n == views.detail.n)),
                 "validate: its detail view is not the scanner's");
    }
out:
    free(m);
    return why;
}

/* ========================================================= json ===== */

const char *fz_json(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    uint8_t *m = fz_copy(d, n), *wrapped = NULL;
    js_ctx c0;
    const uint8_t *r0 = NULL;
    for (int i = 0; i < fz.nimpls; i++) {
        fz_use_impl(i);
        js_ctx c;
        js_ctx_init(&c, m, NULL);
        const uint8_t *r = js_validate(&c, m, m + n);
        FZ_CHECK(r == NULL || r == m + n, "json: js_validate stopped short without an error");
        FZ_CHECK((r == NULL) == (c.err.code != TR_E_OK), "json: result and error disagree");
        FZ_CHECK(r != NULL || c.err.offset <= n, "json: error offset past the end");
        if (i == 0) {
            c0 = c;
            r0 = r;
        } else {
            FZ_CHECK(r == r0 && c.err.code == c0.err.code && c.err.offset == c0.err.offset,
                     "json: SIMD widths disagree");
        }
        /* the one-pass validator: exactly js_validate's verdict on a
         * container text, and the detail the scanner finds */
        const uint8_t *t = js_ws(m, m + n);
        bool container = t < m + n && (*t == '{' || *t == '[');
        jv_find f = {{"detail", 6}, NULL, NULL};
        bool fast = jv_valid(m, m + n, &f);
        FZ_CHECK(fast == (r != NULL && container), "json: jv_valid and js_validate disagree");
        if (fast) {
            tr_view_Detail dv;
            bool hit = tr_scan_detail((tr_message){m, n}, &dv);
            FZ_CHECK(hit == (f.val != NULL) && (!hit || (dv.p == f.val && dv.p + dv.n == f.end)),
                     "json: jv_valid finds another detail than the scanner");
        }
    }
    /* The decoder's JSON layer: a value one level shallower than the limit,
     * as an unknown field of a valid message, is accepted. */
    js_ctx c;
    js_ctx_init(&c, m, NULL);
    c.max_depth = JS_MAX_DEPTH - 1;
    if (js_validate(&c, m, m + n) == m + n) {
        static const char head[] = "{\"zz\":";
        size_t hn = sizeof head - 1;
        wrapped = malloc(hn + n + 1 + fz.base_n - 1);
        if (wrapped == NULL)
            fz_die("out of memory");
        memcpy(wrapped, head, hn);
        memcpy(wrapped + hn, m, n);
        wrapped[hn + n] = ',';
        memcpy(wrapped + hn + n + 1, fz.base + 1, fz.base_n - 1);
        size_t wn = hn + n + fz.base_n;
        tr_error e = fz_decode_into(wrapped, wn, &fz.dec, &fz.issue);
        FZ_CHECK(e.code == TR_E_OK, "json: valid JSON in an unknown field rejected by the decoder");
    }
out:
    fz_use_impl(fz.nimpls - 1);
    free(wrapped);
    free(m);
    return why;
}
