/* json_simd.c: the two byte finders under the string scanner and the
 * skippers, in four widths (portable, SSE2, AVX2, AVX-512BW), one chosen at
 * run time.
 *
 * How the finders meet the end of input, in one place: a whole vector is
 * loaded only while a whole vector remains before end. The tail is read with
 * a masked load for AVX-512 (masked-off bytes are not accessed and cannot
 * fault) and, for SSE2 and AVX2, copied into a stack buffer padded with a
 * byte that neither finder looks for. Nothing is ever read at or past end.
 *
 * Dispatch goes through two function pointers, published with relaxed
 * atomics so a late js_init or js_force_simd on another thread is not a data
 * race; until js_init runs, the first call resolves them itself.
 */
#include "json.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define JS_X86 1
#include <immintrin.h>
#else
#define JS_X86 0
#endif

typedef const uint8_t *(*js_find_fn)(const uint8_t *p, const uint8_t *end);

/* ---- portable: the reference every other width must agree with ---- */

static const uint8_t *special_portable(const uint8_t *p, const uint8_t *end)
{
    for (; p < end; p++) {
        uint8_t b = *p;
        if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\')
            return p;
    }
    return end;
}

static const uint8_t *structural_portable(const uint8_t *p, const uint8_t *end)
{
    for (; p < end; p++) {
        switch (*p) {
        case '"': case '\\': case '[': case ']': case '{': case '}':
            return p;
        default:
            break;
        }
    }
    return end;
}

#if JS_X86

/* The pad byte for SSE2/AVX2 tails: not special to either finder. */
#define PAD 'a'

/* A signed compare against 0x20 catches both bytes < 0x20 and bytes >= 0x80
 * (negative as int8): one instruction for two of the four classes.
 * For the brackets, b | 0x20 maps '[' onto '{' and ']' onto '}' and nothing
 * else onto either. */

/* ---- SSE2 ---- */

__attribute__((target("sse2"))) static inline int special_mask16(__m128i v)
{
    __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    m = _mm_or_si128(m, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    return _mm_movemask_epi8(m);
}

__attribute__((target("sse2"))) static inline int structural_mask16(__m128i v)
{
    __m128i l = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(l, _mm_set1_epi8('{')));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(l, _mm_set1_epi8('}')));
    return _mm_movemask_epi8(m);
}

#define SSE2_FINDER(name, maskfn)                                               \
    __attribute__((target("sse2"))) static const uint8_t *name(const uint8_t *p, \
                                                                const uint8_t *end) \
    {                                                                           \
        while ((size_t)(end - p) >= 16) {                                       \
            int m = maskfn(_mm_loadu_si128((const __m128i *)(const void *)p));  \
            if (m != 0)                                                         \
                return p + __builtin_ctz((unsigned)m);                          \
            p += 16;                                                            \
        }                                                                       \
        size_t n = (size_t)(end - p);                                           \
        if (n == 0)                                                             \
            return end;                                                         \
        uint8_t buf[16];                                                        \
        memset(buf, PAD, sizeof buf);                                           \
        memcpy(buf, p, n);                                                      \
        int m = maskfn(_mm_loadu_si128((const __m128i *)(const void *)buf));    \
        return m != 0 ? p + __builtin_ctz((unsigned)m) : end;                   \
    }

SSE2_FINDER(special_sse2, special_mask16)
SSE2_FINDER(structural_sse2, structural_mask16)

/* ---- AVX2 ---- */

__attribute__((target("avx2"))) static inline uint32_t special_mask32(__m256i v)
{
    __m256i m = _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
                                _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\')));
    m = _mm256_or_si256(m, _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));
    return (uint32_t)_mm256_movemask_epi8(m);
}

__attribute__((target("avx2"))) static inline uint32_t structural_mask32(__m256i v)
{
    __m256i l = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    __m256i m = _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
                                _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\')));
    m = _mm256_or_si256(m, _mm256_cmpeq_epi8(l, _mm256_set1_epi8('{')));
    m = _mm256_or_si256(m, _mm256_cmpeq_epi8(l, _mm256_set1_epi8('}')));
    return (uint32_t)_mm256_movemask_epi8(m);
}

#define AVX2_FINDER(name, maskfn)                                               \
    __attribute__((target("avx2"))) static const uint8_t *name(const uint8_t *p, \
                                                                const uint8_t *end) \
    {                                                                           \
        while ((size_t)(end - p) >= 32) {                                       \
            uint32_t m = maskfn(_mm256_loadu_si256((const __m256i *)(const void *)p)); \
            if (m != 0)                                                         \
                return p + __builtin_ctz(m);                                    \
            p += 32;                                                            \
        }                                                                       \
        size_t n = (size_t)(end - p);                                           \
        if (n == 0)                                                             \
            return end;                                                         \
        uint8_t buf[32];                                                        \
        memset(buf, PAD, sizeof buf);                                           \
        memcpy(buf, p, n);                                                      \
        uint32_t m = maskfn(_mm256_loadu_si256((const __m256i *)(const void *)buf)); \
        return m != 0 ? p + __builtin_ctz(m) : end;                             \
    }

AVX2_FINDER(special_avx2, special_mask32)
AVX2_FINDER(structural_avx2, structural_mask32)

/* ---- AVX-512BW ---- */

__attribute__((target("avx512bw"))) static inline uint64_t special_mask64(__m512i v)
{
    __mmask64 m = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
    m |= _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\'));
    m |= _mm512_cmplt_epi8_mask(v, _mm512_set1_epi8(0x20));
    return (uint64_t)m;
}

__attribute__((target("avx512bw"))) static inline uint64_t structural_mask64(__m512i v)
{
    __m512i l = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    __mmask64 m = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
    m |= _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\'));
    m |= _mm512_cmpeq_epi8_mask(l, _mm512_set1_epi8('{'));
    m |= _mm512_cmpeq_epi8_mask(l, _mm512_set1_epi8('}'));
    return (uint64_t)m;
}

/* The tail's zeroed lanes would match the special finder's < 0x20 test,
 * so the result is masked with the load mask as well. */
#define AVX512_FINDER(name, maskfn)                                             \
    __attribute__((target("avx512bw"))) static const uint8_t *name(             \
        const uint8_t *p, const uint8_t *end)                                   \
    {                                                                           \
        while ((size_t)(end - p) >= 64) {                                       \
            uint64_t m = maskfn(_mm512_loadu_si512((const void *)p));           \
            if (m != 0)                                                         \
                return p + __builtin_ctzll(m);                                  \
            p += 64;                                                            \
        }                                                                       \
        size_t n = (size_t)(end - p);                                           \
        if (n == 0)                                                             \
            return end;                                                         \
        __mmask64 k = (__mmask64)((UINT64_C(1) << n) - 1);                      \
        uint64_t m = maskfn(_mm512_maskz_loadu_epi8(k, (const void *)p)) & k;   \
        return m != 0 ? p + __builtin_ctzll(m) : end;                           \
    }

AVX512_FINDER(special_avx512, special_mask64)
AVX512_FINDER(structural_avx512, structural_mask64)

#endif /* JS_X86 */

/* ---- dispatch ---- */

typedef struct {
    const char *name;
    js_find_fn special;
    js_find_fn structural;
} js_impl;

/* Narrowest first: an index is a width rank. */
static const js_impl impls[] = {
    {"portable", special_portable, structural_portable},
#if JS_X86
    {"sse2", special_sse2, structural_sse2},
    {"avx2", special_avx2, structural_avx2},
    {"avx512", special_avx512, structural_avx512},
#endif
};
#define N_IMPLS ((int)(sizeof impls / sizeof impls[0]))

static const uint8_t *special_resolve(const uint8_t *p, const uint8_t *end);
static const uint8_t *structural_resolve(const uint8_t *p, const uint8_t *end);

static _Atomic(js_find_fn) g_special = special_resolve;
static _Atomic(js_find_fn) g_structural = structural_resolve;
static _Atomic int g_chosen = -1; /* index into impls, -1 before js_init */

/* The widest implementation this CPU (and OS) supports. */
static int widest_supported(void)
{
#if JS_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bw"))
        return 3;
    if (__builtin_cpu_supports("avx2"))
        return 2;
    if (__builtin_cpu_supports("sse2"))
        return 1;
#endif
    return 0;
}

static int impl_index(const char *name)
{
    for (int i = 0; i < N_IMPLS; i++)
        if (strcmp(impls[i].name, name) == 0)
            return i;
    return -1;
}

static void use_impl(int i)
{
    atomic_store_explicit(&g_special, impls[i].special, memory_order_relaxed);
    atomic_store_explicit(&g_structural, impls[i].structural, memory_order_relaxed);
    atomic_store_explicit(&g_chosen, i, memory_order_relaxed);
}

const char *js_init(void)
{
    int i = atomic_load_explicit(&g_chosen, memory_order_relaxed);
    if (i >= 0)
        return impls[i].name;
    i = widest_supported();
    const char *env = getenv("JS_SIMD");
    if (env != NULL) {
        int want = impl_index(env);
        if (want >= 0 && want < i)
            i = want; /* narrower only; unknown names are ignored */
    }
    use_impl(i);
    return impls[i].name;
}

const char *js_simd_name(void)
{
    return js_init();
}

const char *js_force_simd(const char *name)
{
    int i = impl_index(name);
    if (i < 0 || i > widest_supported())
        return NULL;
    use_impl(i);
    return impls[i].name;
}

static const uint8_t *special_resolve(const uint8_t *p, const uint8_t *end)
{
    js_init();
    return js_find_string_special(p, end);
}

static const uint8_t *structural_resolve(const uint8_t *p, const uint8_t *end)
{
    js_init();
    return js_find_structural(p, end);
}

const uint8_t *js_find_string_special(const uint8_t *p, const uint8_t *end)
{
    return atomic_load_explicit(&g_special, memory_order_relaxed)(p, end);
}

const uint8_t *js_find_structural(const uint8_t *p, const uint8_t *end)
{
    return atomic_load_explicit(&g_structural, memory_order_relaxed)(p, end);
}
