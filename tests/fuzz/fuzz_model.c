/* fuzz_model.c: the harnesses that hold for any schema, reached through the
 * generated tables (tr_schema, runtime/optic.h), so they name no type,
 * optic or case; every fuzz build holds them, a build for a schema the
 * demo cannot run on (make model-check) them alone. They check:
 *
 *   model          the input as a message: the validator's verdict, code
 *                  and offset are the decoder's; what it accepts is JSON,
 *                  and decode . encode . decode changes nothing.
 *   scan_<optic>   the input as the bytes of the optic's source type: at
 *                  every SIMD width the scanner says the same (a raw view
 *                  inside the input); when the bytes decode as that type,
 *                  the scanner and the model getter agree; when the optic
 *                  can be read from a message, the same for the input as a
 *                  message.
 *   scan_every     every scan_<optic> on one input: the regression replay,
 *                  and make test's smoke runs, one process for the optics.
 *
 * Also what fuzz.h declares for every harness file: exact copies, the SIMD
 * widths, the model's buffers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json.h"
#include "level.h"
#include "skip.h"
#include "tr_optics.h"

fzm_state fzm;

void fz_die(const char *what)
{
    fprintf(stderr, "fuzz harness: %s\n", what);
    abort();
}

uint8_t *fz_copy(const uint8_t *d, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    if (c == NULL)
        fz_die("out of memory");
    if (n)
        memcpy(c, d, n);
    return c;
}

void *fz_region(size_t n)
{
    void *p = ar_map(n);
    if (p == NULL)
        fz_die("out of memory");
    return p;
}

void fz_use_impl(int i)
{
    if (js_force_simd(fzm.impls[i]) == NULL)
        fz_die("a SIMD width went away");
    sk_init();
}

void fzm_init(void)
{
    if (fzm.ready)
        return;
    js_init();
    sk_init();
    static const char *const names[] = {"portable", "sse2", "avx2", "avx512"};
    const char *widest = js_simd_name();
    for (int i = 0; i < 4; i++) {
        if (js_force_simd(names[i]) != NULL)
            fzm.impls[fzm.nimpls++] = names[i];
        if (strcmp(names[i], widest) == 0)
            break;
    }
    size_t most = 0;
    for (int t = 0; t < tr_schema.ntypes; t++)
        if (tr_schema.types[t].size > most)
            most = tr_schema.types[t].size;
    fzm.dec_mem = fz_region(FZM_ARENA);
    fzm.dec2_mem = fz_region(FZM_ARENA);
    fzm.scan_mem = fz_region(FZM_ARENA);
    fzm.enc = fz_region(FZM_ENCODE_CAP);
    fzm.enc2 = fz_region(FZM_ENCODE_CAP);
    fzm.v1 = malloc(most);
    fzm.v2 = malloc(most);
    if (!fzm.v1 || !fzm.v2 || fzm.nimpls == 0)
        fz_die("out of memory");
    ar_init(&fzm.dec, fzm.dec_mem, FZM_ARENA);
    ar_init(&fzm.dec2, fzm.dec2_mem, FZM_ARENA);
    ar_init(&fzm.scan, fzm.scan_mem, FZM_ARENA);
    for (int i = 0; i < tr_schema.noptics; i++)
        if (tr_schema.optics[i].rec_size > FZM_SCRATCH)
            fz_die("an optic's record is larger than the scratch");
    fz_use_impl(fzm.nimpls - 1);
    fzm.ready = true;
}

size_t fzm_encode(int t, const void *v, uint8_t *buf)
{
    uint8_t *w = tr_schema.types[t].encode(buf, buf + FZM_ENCODE_CAP, v);
    return w == NULL ? (size_t)-1 : (size_t)(w - buf);
}

/* ===================================================== model ===== */

const char *fzm_model(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    const op_schema *s = &tr_schema;
    const op_type *root = &s->types[s->root];
    uint8_t *m = fz_copy(d, n);
    ar_reset(&fzm.dec);
    tr_error e = root->decode(m, n, &fzm.dec, fzm.v1);
    FZ_CHECK(e.code < TR_E_COUNT_, "model: error code out of the table");
    FZ_CHECK(e.code == TR_E_OK || e.offset <= n, "model: error offset past the end");
    ar_reset(&fzm.dec2);
    tr_error v = s->validate(m, n, &fzm.dec2);
    FZ_CHECK(v.code == e.code, "model: the validator's code differs from the decoder's");
    FZ_CHECK(v.code == TR_E_OK || v.offset == e.offset,
             "model: the validator's offset differs from the decoder's");
    if (e.code != TR_E_OK)
        goto out;
    js_ctx c;
    js_ctx_init(&c, m, NULL);
    FZ_CHECK(js_validate(&c, m, m + n) == m + n, "model: accepted what is not JSON");
    size_t en = fzm_encode(s->root, fzm.v1, fzm.enc);
    if (en == (size_t)-1)
        goto out;
    ar_reset(&fzm.dec2);
    tr_error e2 = root->decode(fzm.enc, en, &fzm.dec2, fzm.v2);
    FZ_CHECK(e2.code == TR_E_OK, "model: rejects the encoding of what it accepted");
    size_t en2 = fzm_encode(s->root, fzm.v2, fzm.enc2);
    FZ_CHECK(en2 == en && memcmp(fzm.enc, fzm.enc2, en) == 0,
             "model: decode . encode . decode changed the model");
out:
    free(m);
    return why;
}

/* ===================================================== scan_<optic> ===== */

/* Whether the scanner's a and b (from two SIMD widths) say the same. */
static bool fzm_same_scan(const op_optic *o, const op_value *a, const op_value *b)
{
    switch (o->kind) {
    case OP_BOOL:
        return a->b == b->b;
    case OP_I32:
    case OP_I64:
        return a->i == b->i;
    case OP_F64:
        return memcmp(&a->f, &b->f, sizeof(double)) == 0;
    case OP_STRING:
        return a->s.n == b->s.n && memcmp(a->s.p, b->s.p, a->s.n) == 0;
    case OP_ENUM:
    case OP_TAG:
        return a->e == b->e;
    case OP_RAW:
        return a->bytes.p == b->bytes.p && a->bytes.n == b->bytes.n;
    case OP_RECORD:
        return true; /* compared through the model below */
    }
    return false;
}

/* Raw bytes are checked by decoding them when the focus is a declared
 * type; otherwise by re-encoding, when the input is canonical. */
bool fzm_agree(const op_optic *o, const op_value *sv, const op_value *gv, bool canonical)
{
    switch (o->kind) {
    case OP_RECORD: {
        uint8_t *half = fzm.enc + FZM_ENCODE_CAP / 2;
        uint8_t *a = o->encode(fzm.enc, half, sv->ptr);
        uint8_t *b = o->encode(half, fzm.enc + FZM_ENCODE_CAP, gv->ptr);
        return a != NULL && b != NULL && a - fzm.enc == b - half &&
               memcmp(fzm.enc, half, (size_t)(a - fzm.enc)) == 0;
    }
    case OP_RAW: {
        uint8_t *half = fzm.enc + FZM_ENCODE_CAP / 2;
        uint8_t *w = o->encode(half, fzm.enc + FZM_ENCODE_CAP, gv->ptr);
        if (w == NULL)
            return false;
        /* A declared type: the view must decode to the getter's value. */
        int t = op_find_type(&tr_schema, o->focus);
        if (t >= 0) {
            ar_reset(&fzm.dec2);
            if (tr_schema.types[t].decode(sv->bytes.p, sv->bytes.n, &fzm.dec2, fzm.v2).code !=
                TR_E_OK)
                return false;
            uint8_t *a = tr_schema.types[t].encode(fzm.enc, half, fzm.v2);
            return a != NULL && a - fzm.enc == w - half &&
                   memcmp(fzm.enc, half, (size_t)(a - fzm.enc)) == 0;
        }
        if (!canonical)
            return true;
        return (size_t)(w - half) == sv->bytes.n && memcmp(half, sv->bytes.p, sv->bytes.n) == 0;
    }
    default:
        return fzm_same_scan(o, sv, gv);
    }
}

/* Scans m at every width: the hit and value of the widest in *v. */
static const char *fzm_scan_all(int i, const uint8_t *m, size_t n, bool message, op_value *v,
                                bool *hit)
{
    const char *why = NULL;
    const op_optic *o = &tr_schema.optics[i];
    op_value first;
    bool hit0 = false;
    /* one arena for every width: a string the first unescaped stays put
     * while the others are compared with it */
    ar_reset(&fzm.scan);
    for (int k = 0; k < fzm.nimpls; k++) {
        fz_use_impl(k);
        op_value x;
        memset(&x, 0, sizeof x);
        bool h = message ? op_scan_message(&tr_schema, i, m, n, &x, fzm.scratch, &fzm.scan)
                         : o->scan(m, n, &x, fzm.scratch, &fzm.scan);
        /* A raw view lies inside the input, except that an absent list or
         * map reads as an empty one (as the decoder reads it): "[]", "{}". */
        if (h && o->kind == OP_RAW)
            FZ_CHECK((x.bytes.p >= m && x.bytes.n <= n &&
                      (size_t)(x.bytes.p - m) <= n - x.bytes.n) ||
                         (x.bytes.n == 2 && (memcmp(x.bytes.p, "[]", 2) == 0 ||
                                             memcmp(x.bytes.p, "{}", 2) == 0)),
                     "scan: a raw view outside the input");
        if (h && (o->kind == OP_ENUM || o->kind == OP_TAG))
            FZ_CHECK(x.e >= 0 && x.e < o->ncases, "scan: a case index out of range");
        if (k == 0) {
            hit0 = h;
            first = x;
        }
        FZ_CHECK(h == hit0 && (!h || fzm_same_scan(o, &x, &first)), "scan: SIMD widths disagree");
        *v = x;
    }
    *hit = hit0;
out:
    fz_use_impl(fzm.nimpls - 1);
    return why;
}

const char *fzm_scan(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    const op_schema *s = &tr_schema;
    int i = fzm.optic;
    const op_optic *o = &s->optics[i];
    uint8_t *m = fz_copy(d, n);
    for (int as_message = 0; as_message < 2; as_message++) {
        if (as_message && !op_from_message(s, i))
            break;
        int t = as_message ? s->root : o->source;
        op_value sv, gv;
        bool hit;
        why = fzm_scan_all(i, m, n, as_message, &sv, &hit);
        if (why != NULL)
            goto out;
        ar_reset(&fzm.dec);
        tr_error e = s->types[t].decode(m, n, &fzm.dec, fzm.v1);
        if (e.code != TR_E_OK)
            continue;
        memset(&gv, 0, sizeof gv);
        bool gh = as_message ? op_get_message(s, i, fzm.v1, &gv) : o->get(fzm.v1, &gv);
        FZ_CHECK(hit == gh, as_message ? "scan: on a message that decodes, hit and miss differ"
                                       : "scan: on a value that decodes, hit and miss differ");
        if (!hit)
            continue;
        size_t en = fzm_encode(t, fzm.v1, fzm.enc2);
        bool canonical = en == n && memcmp(fzm.enc2, m, n) == 0;
        FZ_CHECK(fzm_agree(o, &sv, &gv, canonical),
                 as_message ? "scan: on a message that decodes, the scanner reads another value"
                            : "scan: on a value that decodes, the scanner reads another value");
    }
out:
    free(m);
    return why;
}

/* The optics read from the root of message m in walks they share
 * (level.h: plans of them in schema order, each into the first that takes
 * it), read last first: each hits where its scanner hits, with the same
 * value. */
static const char *fzm_shared(const uint8_t *m, size_t n)
{
    const char *why = NULL;
    const op_schema *s = &tr_schema;
    static lv_plan plans[8];
    int np = 0;
    for (int i = 0; i < s->noptics; i++) {
        if (!s->optics[i].source_is_root || s->optics[i].member.mode == OP_M_NONE)
            continue;
        bool placed = false;
        for (int p = 0; p < np && !placed; p++)
            placed = lv_plan_add(&plans[p], i);
        if (!placed && np < 8) {
            lv_plan_init(&plans[np], s);
            placed = lv_plan_add(&plans[np++], i);
        }
    }
    const uint8_t *end = n ? m + n : m;
    for (int p = 0; p < np; p++) {
        lv_state st;
        lv_reset(&st, js_ws(m, end), end);
        for (int j = plans[p].n - 1; j >= 0; j--) {
            const op_optic *o = &s->optics[plans[p].optic[j]];
            op_value a, b;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            ar_reset(&fzm.scan);
            bool ha = o->scan(m, n, &a, fzm.scratch, &fzm.scan);
            bool hb = lv_read(&plans[p], &st, j, false, &b, fzm.scratch2, &fzm.scan);
            FZ_CHECK(ha == hb, "shared walk: hits where the optic's scanner misses, or misses "
                               "where it hits");
            bool empty = o->kind == OP_RAW && o->member.empty != NULL && a.bytes.n == 2 &&
                         b.bytes.n == 2 && memcmp(a.bytes.p, b.bytes.p, 2) == 0;
            if (o->kind == OP_RECORD && ha) {
                uint8_t *ea = o->encode(fzm.enc, fzm.enc + FZM_ENCODE_CAP, a.ptr);
                uint8_t *eb = o->encode(fzm.enc2, fzm.enc2 + FZM_ENCODE_CAP, b.ptr);
                FZ_CHECK(ea != NULL && eb != NULL && ea - fzm.enc == eb - fzm.enc2 &&
                             memcmp(fzm.enc, fzm.enc2, (size_t)(ea - fzm.enc)) == 0,
                         "shared walk: reads another record than the optic's scanner");
            }
            else if (ha && !empty)
                FZ_CHECK(fzm_same_scan(o, &a, &b),
                         "shared walk: reads another value than the optic's scanner");
        }
    }
out:
    return why;
}

const char *fzm_scan_every(const uint8_t *d, size_t n)
{
    for (int i = 0; i < tr_schema.noptics; i++) {
        fzm.optic = i;
        const char *why = fzm_scan(d, n);
        if (why != NULL)
            return why;
    }
    uint8_t *m = fz_copy(d, n);
    const char *why = fzm_shared(m, n);
    free(m);
    return why;
}

/* ===================================================== by name ===== */

fz_fn fzm_find(const char *name)
{
    if (strcmp(name, "model") == 0)
        return fzm_model;
    if (strcmp(name, "scan_every") == 0)
        return fzm_scan_every;
    if (strncmp(name, "scan_", 5) == 0) {
        int i = op_find(&tr_schema, name + 5, strlen(name + 5));
        if (i < 0)
            return NULL;
        fzm.optic = i;
        return fzm_scan;
    }
    return NULL;
}

void fzm_list_scans(FILE *f)
{
    for (int i = 0; i < tr_schema.noptics; i++)
        fprintf(f, " scan_%s", tr_schema.optics[i].name);
}

void fzm_list(FILE *f)
{
    fputs(" model scan_every", f);
    fzm_list_scans(f);
}
