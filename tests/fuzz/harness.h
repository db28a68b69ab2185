/* harness.h: the fuzzing properties, one function per harness.
 *
 * Shared by the libFuzzer driver (tests/fuzz/fuzz.c, one binary per
 * harness) and by the regression replay in tests/unit/test_verify.c, which
 * runs every file under tests/regression/ through every function here.
 *
 * Each fz_<name>(data, n) takes arbitrary bytes, runs the code under test on
 * an exactly sized copy (so the sanitizers see any read past the end) and
 * returns NULL when every property holds, else a static text naming the one
 * that failed. Crashes, leaks and undefined behaviour are the sanitizers' to
 * report. fz_init must be called once first; nothing here is thread-safe.
 *
 * The properties (THREATS.md's rule, and each module's contract):
 *   split         the splitter gives the same frames and the same error
 *                 whatever pieces the stream arrives in; frames are views
 *                 inside the input; errors are sticky and at the stated offsets
 *   decode        errors lie inside the input; an accepted message is JSON,
 *                 and decode . encode . decode is the identity on its model
 *   validate      tr_validate_Issue gives tr_decode_Issue's code and offset;
 *                 with views, the same, and the detail tr_scan_detail finds
 *   json          js_validate gives one answer under every SIMD width, and
 *                 jv_valid (jsonvalid.h) the same verdict on container texts with
 *                 the scanner's detail; a
 *                 valid value placed as an unknown field inside a valid
 *                 message is accepted by the decoder (its JSON layer agrees)
 *   rules         tests/fuzz/rules.h's: the rule parser on arbitrary text
 *   model, scan_<optic>
 *                 model.h's, for any schema (see there); scan_every runs
 *                 every scan_<optic> on one input, for the replay
 *   policy        jp_parse accepts only JSON, only known names, and what it
 *                 accepts means the default's three rules
 *   differential  verify=schema optics give the decoder's verdict on every
 *                 input (vf_check then the rules, and rd_message), verify=json
 *                 accepts all the decoder accepts and reads its values, and
 *                 verify=off optics read the decoder's values on every
 *                 message the decoder accepts
 */
#ifndef TR_FUZZ_HARNESS_H
#define TR_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "gzip.h"
#include "issues.h"
#include "model.h"
#include "rules.h" /* tests/fuzz/rules.h: the rule parser's property */
#include "jsonpolicy.h"
#include "policy.h"
#include "reader.h"
#include "skip.h"
#include "jsonvalid.h"
#include "tr_model.h"
#include "tr_optics.h"
#include "verify.h"

#define FZ_FN __attribute__((unused)) static

/* The decoder's arena, as demo/judge.c sizes it (16 x the 4 MiB frame). */
#define FZ_DECODE_ARENA (64u << 20)
/* Room for re-encoding a decoded message (absent lists come back as []). */
#define FZ_ENCODE_CAP (16u << 20)

typedef struct {
    bool ready;
    uint8_t *dec_mem, *dec2_mem, *enc, *enc2;
    ar_arena dec, dec2;
    tr_Issue issue, issue2;
    vf_checker *vc;
    po_policy policy;
    rd_reader *rd;
    int nimpls; /* the SIMD widths this CPU has (model.h's fzm.impls) */
    /* a valid generated message, for wrapping values into */
    uint8_t *base;
    size_t base_n;
} fz_state;

static fz_state fz;

/* model.h's: the message, the SIMD widths, the exact copies. */
#define fz_die fzm_die
#define fz_use_impl fzm_use_impl
#define fz_copy fzm_copy

FZ_FN void fz_init(void)
{
    if (fz.ready)
        return;
    fzm_init(); /* js_init, sk_init, the SIMD widths */
    fz.nimpls = fzm.nimpls;
    fz.dec_mem = malloc(FZ_DECODE_ARENA);
    fz.dec2_mem = malloc(FZ_DECODE_ARENA);
    fz.enc = malloc(FZ_ENCODE_CAP);
    fz.enc2 = malloc(FZ_ENCODE_CAP);
    fz.vc = vf_new();
    if (fz.dec_mem == NULL || fz.dec2_mem == NULL || fz.enc == NULL || fz.enc2 == NULL ||
        fz.vc == NULL || fz.nimpls == 0)
        fz_die("out of memory");
    ar_init(&fz.dec, fz.dec_mem, FZ_DECODE_ARENA);
    ar_init(&fz.dec2, fz.dec2_mem, FZ_DECODE_ARENA);
    rd_choice none = {NULL, NULL, NULL};
    char err[1024];
    if (!rd_policy(&none, &fz.policy, err, sizeof err))
        fz_die(err);
    fz.rd = rd_new();
    if (fz.rd == NULL)
        fz_die("out of memory");
    iss_gen *g = iss_gen_new(2);
    size_t n = 0;
    const uint8_t *f = g != NULL ? iss_gen_frame(g, 1, 0, false, &n) : NULL;
    if (f == NULL || n <= FR_HEADER_LEN || (fz.base = malloc(n)) == NULL)
        fz_die("cannot generate the base message");
    fz.base_n = n - FR_HEADER_LEN;
    memcpy(fz.base, f + FR_HEADER_LEN, fz.base_n);
    iss_gen_free(g);
    fz_use_impl(fz.nimpls - 1);
    fz.ready = true;
}

#define FZ_CHECK(cond, what)                                                  \
    do {                                                                      \
        if (!(cond)) {                                                        \
            why = (what);                                                     \
            goto out;                                                         \
        }                                                                     \
    } while (0)

/* ======================================================== split ===== */

typedef struct {
    size_t offset, n;
    bool compressed;
} fz_fr;

typedef struct {
    fz_fr *frames;
    size_t count;
    fr_status last; /* FR_ERROR, or FR_NEED_MORE at the end */
    tr_code finish; /* fr_finish's answer */
    tr_error err;
    size_t err_frame;
} fz_split_result;

static uint64_t fz_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Input: d[0] options (bit 0 allow compressed, bits 1-2 the length limit),
 * d[1] the seed of the piece sizes, then the stream. */
FZ_FN const char *fz_split(const uint8_t *d, size_t n)
{
    static const uint32_t limits[4] = {FR_DEFAULT_MAX_LEN, 0, 16, 1000};
    const char *why = NULL;
    if (n < 2)
        return NULL;
    bool allow = d[0] & 1;
    uint32_t max_len = limits[(d[0] >> 1) & 3];
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ d[1];
    const uint8_t *sd = d + 2;
    size_t sn = n - 2;
    uint8_t *s = fz_copy(sd, sn);
    fz_split_result ref = {calloc(sn / FR_HEADER_LEN + 1, sizeof(fz_fr)), 0, FR_NEED_MORE,
                           TR_E_OK, {TR_E_OK, 0, NULL}, 0};
    uint8_t *piece = NULL;
    if (ref.frames == NULL)
        fz_die("out of memory");

    /* In one piece: the reference. */
    fr_splitter sp;
    fr_init(&sp);
    sp.allow_compressed = allow;
    sp.max_len = max_len;
    size_t at = 0;
    for (;;) {
        fr_frame f;
        fr_status st = fr_next(&sp, s + at, s + sn, at, &f);
        if (st == FR_FRAME) {
            FZ_CHECK(f.head == s + at && f.msg.p == f.head + FR_HEADER_LEN, "split: frame view misplaced");
            FZ_CHECK(f.offset == at, "split: frame offset");
            FZ_CHECK(f.msg.n <= max_len, "split: frame over the limit");
            FZ_CHECK(fr_frame_size(&f) <= sn - at, "split: frame past the end");
            uint32_t len = (uint32_t)s[at + 1] << 24 | (uint32_t)s[at + 2] << 16 |
                           (uint32_t)s[at + 3] << 8 | s[at + 4];
            FZ_CHECK(f.msg.n == len, "split: frame length is not the header's");
            FZ_CHECK(s[at] <= 1 && f.compressed == (s[at] == 1), "split: flag");
            FZ_CHECK(!f.compressed || allow, "split: compressed frame let through");
            FZ_CHECK(fr_frame_end(&f) == s + at + FR_HEADER_LEN + len, "split: frame end");
            ref.frames[ref.count++] = (fz_fr){at, f.msg.n, f.compressed};
            at += fr_frame_size(&f);
            continue;
        }
        ref.last = st;
        break;
    }
    if (ref.last == FR_ERROR) {
        tr_code c = sp.err.code;
        FZ_CHECK(sp.err_frame == at, "split: err_frame is not the bad frame");
        FZ_CHECK(c == TR_E_FRAME_FLAG || c == TR_E_COMPRESSED || c == TR_E_FRAME_SIZE,
                 "split: unexpected error code");
        FZ_CHECK(c != TR_E_FRAME_FLAG || (s[at] > 1 && sp.err.offset == at), "split: FLAG offset");
        FZ_CHECK(c != TR_E_COMPRESSED || (s[at] == 1 && !allow && sp.err.offset == at),
                 "split: COMPRESSED offset");
        FZ_CHECK(c != TR_E_FRAME_SIZE || (sp.err.offset == at + 1 && sn - at >= FR_HEADER_LEN),
                 "split: FRAME_SIZE offset");
        tr_error before = sp.err;
        fr_frame f;
        FZ_CHECK(fr_next(&sp, s, s + sn, 0, &f) == FR_ERROR, "split: error not sticky");
        FZ_CHECK(sp.err.code == before.code && sp.err.offset == before.offset,
                 "split: first error does not win");
    }
    ref.finish = fr_finish(&sp, s + at, s + sn, at);
    ref.err = sp.err;
    ref.err_frame = sp.err_frame;
    if (ref.last == FR_NEED_MORE) {
        if (at == sn)
            FZ_CHECK(ref.finish == TR_E_OK, "split: clean end reported as an error");
        else
            FZ_CHECK(ref.finish == TR_E_FRAME_TRUNCATED && ref.err.offset == sn &&
                         ref.err_frame == at,
                     "split: truncation not reported at the end");
    } else {
        FZ_CHECK(ref.finish == ref.err.code, "split: fr_finish forgot the error");
    }

    /* Joining: frames back to back join into one iovec. */
    if (ref.count > 0) {
        fr_frame *fs = calloc(ref.count, sizeof *fs);
        struct iovec *iov = calloc(ref.count, sizeof *iov);
        if (fs == NULL || iov == NULL)
            fz_die("out of memory");
        size_t total = 0;
        for (size_t i = 0; i < ref.count; i++) {
            fs[i].head = s + ref.frames[i].offset;
            fs[i].msg.p = fs[i].head + FR_HEADER_LEN;
            fs[i].msg.n = ref.frames[i].n;
            fs[i].offset = ref.frames[i].offset;
            total += fr_frame_size(&fs[i]);
        }
        size_t k = fr_join(fs, ref.count, iov);
        bool ok = k == 1 && iov[0].iov_base == (void *)s && iov[0].iov_len == total;
        /* Every other frame: no two adjacent, so each takes an entry. */
        struct iovec g2[2];
        fr_gather g;
        fr_gather_init(&g, g2, 2);
        size_t added = 0;
        for (size_t i = 0; i < ref.count; i += 2) {
            bool fits = fr_gather_add(&g, &fs[i]);
            if (fits != (added < 2))
                ok = false;
            added += fits;
        }
        if (g.n != added || g.frames != added)
            ok = false;
        free(fs);
        free(iov);
        FZ_CHECK(ok, "split: join or gather miscounted");
    }

    /* In pieces: the same frames, the same end. Each call sees an exactly
     * sized copy of the bytes received and not yet consumed. */
    fr_init(&sp);
    sp.allow_compressed = allow;
    sp.max_len = max_len;
    size_t got = 0, done = 0, idx = 0;
    fr_status st = FR_NEED_MORE;
    while (st != FR_ERROR) {
        if (got == sn)
            break;
        uint64_t r = fz_rng(&seed);
        size_t step = (r & 3) == 0 ? (size_t)(r >> 8) % 64 + 1 : (r & 3) == 1 ? sn - got : (size_t)(r >> 8) % 7 + 1;
        got += step < sn - got ? step : sn - got;
        for (;;) {
            free(piece);
            piece = fz_copy(s + done, got - done);
            fr_frame f;
            st = fr_next(&sp, piece, piece + (got - done), done, &f);
            if (st != FR_FRAME)
                break;
            FZ_CHECK(idx < ref.count, "split: more frames in pieces than in one");
            FZ_CHECK(f.offset == ref.frames[idx].offset && f.msg.n == ref.frames[idx].n &&
                         f.compressed == ref.frames[idx].compressed && f.head == piece,
                     "split: a frame differs when the stream comes in pieces");
            FZ_CHECK(memcmp(f.msg.p, s + done + FR_HEADER_LEN, f.msg.n) == 0, "split: frame bytes");
            idx++;
            done += fr_frame_size(&f);
        }
    }
    FZ_CHECK(idx == ref.count, "split: fewer frames in pieces");
    FZ_CHECK(st == ref.last, "split: different end state in pieces");
    free(piece);
    piece = fz_copy(s + done, sn - done);
    tr_code fin = fr_finish(&sp, piece, piece + (sn - done), done);
    FZ_CHECK(fin == ref.finish && sp.err.code == ref.err.code && sp.err.offset == ref.err.offset &&
                 sp.err_frame == ref.err_frame,
             "split: different error in pieces");
out:
    free(piece);
    free(ref.frames);
    free(s);
    return why;
}

/* ======================================================= decode ===== */

/* Decodes [p, p+n) into fz.issue; the error. */
static tr_error fz_decode_into(const uint8_t *p, size_t n, ar_arena *a, tr_Issue *out)
{
    ar_reset(a);
    return tr_decode_Issue(p, n, a, out);
}

FZ_FN const char *fz_decode(const uint8_t *d, size_t n)
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

FZ_FN const char *fz_validate(const uint8_t *d, size_t n)
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

FZ_FN const char *fz_json(const uint8_t *d, size_t n)
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

/* ====================================================== scanners ===== */

/* verify=off's scanners read, on a message the decoder accepted into
 * fz.issue, what the model getters read: every optic a message reaches. */
static const char *fz_same_values(tr_message m)
{
    size_t en = fzm_encode(tr_schema.root, &fz.issue, fzm.enc2);
    bool canonical = en == m.n && memcmp(fzm.enc2, m.p, m.n) == 0;
    for (int i = 0; i < tr_schema.noptics; i++) {
        if (!op_from_message(&tr_schema, i))
            continue;
        op_value sv, gv;
        memset(&sv, 0, sizeof sv);
        memset(&gv, 0, sizeof gv);
        ar_reset(&fzm.scan);
        bool sh = op_scan_message(&tr_schema, i, m.p, m.n, &sv, fzm.scratch, &fzm.scan);
        bool gh = op_get_message(&tr_schema, i, &fz.issue, &gv);
        if (sh != gh)
            return "differential: verify=off optics hit or miss where the decoder does not";
        if (sh && !fzm_agree(&tr_schema.optics[i], &sv, &gv, canonical))
            return "differential: verify=off optics read other values than the decoder";
    }
    return NULL;
}

/* The scanners' own harnesses, one per optic (scan_<optic>), are
 * model.h's: they hold for any schema. scan_every runs them all, for the
 * regression replay. */
FZ_FN const char *fz_scan_every(const uint8_t *d, size_t n)
{
    for (int i = 0; i < tr_schema.noptics; i++) {
        fzm.optic = i;
        const char *why = fzm_scan(d, n);
        if (why != NULL)
            return why;
    }
    return NULL;
}

/* ======================================================= policy ===== */

/* jp_parse keeps jsmn's tokens in an uninitialized array on its stack. So
 * that a read of a token jsmn did not write gives the same answer on every
 * run, and one ASan sees, the stack below the caller is first filled with
 * tokens that point 1 MiB past any text: {type, start, end, size} as ints,
 * each a JSMN_ARRAY (2) or JSMN_PRIMITIVE (4) of one element, rotated by
 * `shift` ints since the token array may sit at any 4-byte offset. */
__attribute__((noinline)) static void fz_dirty_stack(int shift)
{
    volatile int junk[16384];
    static const int pattern[8] = {2, 1 << 20, (1 << 20) + 5, 1, 4, 1 << 20, (1 << 20) + 5, 1};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        junk[i] = pattern[(i + (size_t)shift) % 8];
}

FZ_FN const char *fz_policy(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    char *t = (char *)fz_copy(d, n);
    po_policy p = {NULL, NULL};
    char err[128];
    bool ok = false;
    for (int shift = 0; shift < 8; shift += 1) {
        memset(err, 'x', sizeof err);
        fz_dirty_stack(shift);
        po_free(&p);
        bool ok2 = jp_parse(t, n, "fuzz", &tr_schema, &p, err, sizeof err);
        if (shift > 0)
            FZ_CHECK(ok2 == ok, "policy: the answer depends on what was on the stack");
        ok = ok2;
    }
    if (!ok) {
        FZ_CHECK(memchr(err, 0, sizeof err) != NULL, "policy: error message not terminated");
        FZ_CHECK(strncmp(err, "fuzz", 4) == 0, "policy: error message does not name the file");
        goto out;
    }
    FZ_CHECK(p.rules != NULL && ru_count(p.rules) == 3,
             "policy: an accepted file does not mean the three rules");
    js_ctx c;
    js_ctx_init(&c, (const uint8_t *)t, NULL);
    FZ_CHECK(js_validate(&c, (const uint8_t *)t, (const uint8_t *)t + n) != NULL,
             "policy: accepted a file that is not JSON");
out:
    po_free(&p);
    free(t);
    return why;
}

/* ================================================= differential ===== */

typedef struct {
    int kind;
    bool keep;
} fz_verdict;

/* judge --reader optics --verify level, as the readers do it (rd_message,
 * then the rules through the scanners). */
FZ_FN fz_verdict fz_judge_optics(vf_level level, tr_message m)
{
    fz_verdict v = {-1, false};
    if (rd_message(fz.rd, level, m))
        v.keep = po_judge(&fz.policy, &fz.rd->ru, &v.kind);
    return v;
}

/* The codes that say "not JSON" (or nested past the limit), as opposed to
 * "JSON, but not an Issue" (TR_E_TOO_LONG is the latter: only an f64
 * field's number is held to JS_MAX_NUMBER_LEN). */
static bool fz_json_code(tr_code c)
{
    switch (c) {
    case TR_E_EOF: case TR_E_SYNTAX: case TR_E_TRAILING: case TR_E_BOM: case TR_E_DEPTH:
    case TR_E_CTRL: case TR_E_ESCAPE: case TR_E_SURROGATE: case TR_E_UTF8: case TR_E_NUMBER:
        return true;
    default:
        return false;
    }
}

FZ_FN const char *fz_differential(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    uint8_t *m = fz_copy(d, n);
    tr_message msg = {m, n};

    /* The decoder: a message it rejects is `none drop`. */
    tr_error e = fz_decode_into(m, n, &fz.dec, &fz.issue);
    fz_verdict dec = {-1, false};
    if (e.code == TR_E_OK) {
        rd_decoded(fz.rd, &fz.issue);
        dec.keep = po_judge(&fz.policy, &fz.rd->ru, &dec.kind);
    }

    for (int i = 0; i < fz.nimpls; i++) {
        fz_use_impl(i);
        tr_error vj = vf_check(fz.vc, VF_JSON, msg);
        FZ_CHECK(e.code != TR_E_OK || vj.code == TR_E_OK, "differential: verify=json rejects what decodes");
        tr_error vs = vf_check(fz.vc, VF_SCHEMA, msg);
        FZ_CHECK(vs.code == e.code && (vs.code == TR_E_OK || vs.offset == e.offset),
                 "differential: verify=schema and the decoder differ in code or offset");
        FZ_CHECK(vs.code == TR_E_OK || vj.code != TR_E_OK || !fz_json_code(vs.code),
                 "differential: verify=schema rejects as bad JSON what verify=json accepts");

        /* judge --reader optics at each level */
        fz_verdict opt = fz_judge_optics(VF_SCHEMA, msg);
        FZ_CHECK(opt.kind == dec.kind && opt.keep == dec.keep,
                 "differential: verify=schema optics and decode give different verdicts");
        fz_verdict json = fz_judge_optics(VF_JSON, msg);
        if (vj.code != TR_E_OK)
            FZ_CHECK(json.kind == -1 && !json.keep, "differential: verify=json judged a message it rejects");

        /* verify=json and off, on what the decoder accepts: the same verdict, and off reads the same values */
        if (e.code == TR_E_OK) {
            FZ_CHECK(json.kind == dec.kind && json.keep == dec.keep,
                     "differential: verify=json optics and decode differ on a message that decodes");
            fz_verdict off = fz_judge_optics(VF_OFF, msg);
            FZ_CHECK(off.kind == dec.kind && off.keep == dec.keep,
                     "differential: verify=off optics and decode differ on a message that decodes");
            const char *w = fz_same_values(msg);
            FZ_CHECK(w == NULL, w);
        }
    }
out:
    fz_use_impl(fz.nimpls - 1);
    free(m);
    return why;
}

/* ======================================================== gzip ===== */

/* Input: d[0] bit 0 picks the property, bit 1 a small limit (1000 bytes,
 * to reach INFLATE_LIMIT often); the rest is the payload.
 *   bit 0 clear: inflate the payload as a gzip message. Any bytes: an error,
 *     or a view inside the inflater's buffer of at most the limit.
 *   bit 0 set: compress the payload, inflate it back: the same bytes when
 *     they fit the limit, INFLATE_LIMIT when they do not. */
FZ_FN const char *fz_gzip(const uint8_t *d, size_t n)
{
    static gz_inflater big, small;
    static gz_deflater def;
    static bool ready;
    if (!ready) {
        if (!gz_inflater_init(&big, 0) || !gz_inflater_init(&small, 1000) ||
            !gz_deflater_init(&def, GZ_DEFAULT_LEVEL))
            return "gzip: cannot set up";
        ready = true;
    }
    if (n == 0)
        return NULL;
    gz_inflater *z = (d[0] & 2) ? &small : &big;
    tr_message in = {d + 1, n - 1}, out = {NULL, 0};
    const char *why = NULL;
    uint8_t *buf = NULL;
    if ((d[0] & 1) == 0) {
        tr_error e = gz_inflate(z, in, &out);
        FZ_CHECK(e.code != TR_E_OK || (out.n <= z->max_len && out.p >= z->buf &&
                                       out.p + out.n <= z->buf + z->max_len),
                 "gzip: a view outside the inflater's buffer or past the limit");
    } else {
        size_t cap = gz_bound(&def, in.n);
        buf = malloc(cap);
        FZ_CHECK(buf != NULL, "gzip: out of memory");
        size_t m = gz_deflate(&def, in, buf, cap);
        FZ_CHECK(m > 0, "gzip: compressing failed");
        tr_error e = gz_inflate(z, (tr_message){buf, m}, &out);
        if (in.n <= z->max_len) {
            FZ_CHECK(e.code == TR_E_OK, "gzip: a round trip failed");
            FZ_CHECK(out.n == in.n && memcmp(out.p, in.p, in.n) == 0,
                     "gzip: a round trip changed the bytes");
        } else {
            FZ_CHECK(e.code == TR_E_INFLATE_LIMIT, "gzip: over the limit but not INFLATE_LIMIT");
        }
    }
out:
    free(buf);
    return why;
}

/* ======================================================== table ===== */

typedef const char *(*fz_fn)(const uint8_t *d, size_t n);

typedef struct {
    const char *name;
    fz_fn fn;
} fz_harness;

/* Every harness, for the regression replay; fuzz.c picks one by name. */
__attribute__((unused)) static const fz_harness fz_harnesses[] = {
    {"split", fz_split},
    {"decode", fz_decode},
    {"validate", fz_validate},
    {"json", fz_json},
    {"policy", fz_policy},
    {"differential", fz_differential},
    {"model", fzm_model},
    {"rules", fzr_rules},
    {"scan_every", fz_scan_every},
    {"gzip", fz_gzip},
};

#define FZ_NHARNESSES (sizeof fz_harnesses / sizeof fz_harnesses[0])

/* The harness named name, this file's or model.h's (scan_<optic>). */
__attribute__((unused)) static fz_fn fz_find(const char *name)
{
    for (size_t i = 0; i < FZ_NHARNESSES; i++)
        if (strcmp(fz_harnesses[i].name, name) == 0)
            return fz_harnesses[i].fn;
    return fzm_find(name);
}

#undef FZ_CHECK
#endif
