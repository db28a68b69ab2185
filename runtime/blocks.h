/* blocks.h: what the 64-byte block walkers share (skip.c's member walk and
 * jsonvalid.c's validator): the escaped-character bits, the in-string prefix
 * XOR, and for the x86 widths the tail copy and the lane-mask gathering.
 * Internal to the runtime: static inline helpers, no state. */
#ifndef TR_BLOCKS_H
#define TR_BLOCKS_H

#include <stdint.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define BK_X86 1
#include <immintrin.h>
#else
#define BK_X86 0
#endif

/* Bits of the characters escaped by a backslash. carry is 1 when the last
 * block ended with a backslash that escapes this block's first byte.
 * Backslashes are rare, so a loop over them is cheaper than the branch-free
 * arithmetic. */
static inline uint64_t bk_escaped_bits(uint64_t bs, uint64_t *carry)
{
    uint64_t esc = *carry;
    if (bs == 0 && esc == 0)
        return 0;
    bs &= ~esc;
    *carry = 0;
    while (bs) {
        int i = __builtin_ctzll(bs);
        if (i == 63) {
            *carry = 1;
            break;
        }
        esc |= 2ull << i;
        bs &= ~(3ull << i);
    }
    return esc;
}

static inline uint64_t bk_prefix_xor_portable(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

#if BK_X86

/* The x86 widths other than AVX-512 load whole vectors only: a block of
 * n < 64 bytes is copied into a 64-byte stack buffer padded with spaces. */
#define BK_TAIL_COPY(s, n, buf)                                                            \
    do {                                                                                \
        if ((n) < 64) {                                                                 \
            memset((buf), ' ', 64);                                                     \
            memcpy((buf), (s), (n));                                                    \
            (s) = (buf);                                                                \
        }                                                                               \
    } while (0)

__attribute__((target("pclmul,sse2"))) static inline uint64_t bk_prefix_xor_clmul(uint64_t x)
{
    __m128i r = _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)x), _mm_set1_epi8((char)0xFF), 0);
    return (uint64_t)_mm_cvtsi128_si64(r);
}

__attribute__((target("sse2"))) static inline uint64_t bk_mask16x4(__m128i a, __m128i b, __m128i c,
                                                                __m128i d)
{
    return (uint64_t)(uint16_t)_mm_movemask_epi8(a) | (uint64_t)(uint16_t)_mm_movemask_epi8(b) << 16 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(c) << 32 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(d) << 48;
}

__attribute__((target("avx2"))) static inline uint64_t bk_mask32x2(__m256i a, __m256i b)
{
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(a) | (uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32;
}

#endif /* BK_X86 */

#endif
