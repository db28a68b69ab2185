/* jsonvalid.h: JSON validation in one pass of 64-byte blocks, finding one
 * top-level member on the way (verify=json: the check and the scan in the
 * same pass).
 *
 * jv_valid proves that [p, end) is exactly one JSON text (RFC 8259, as
 * js_validate in json.h judges it) whose value is an object or an array.
 * Per 64-byte block, three vector compares (quotes, backslashes, bytes
 * below 0x20 or above 0x7F) and a prefix XOR of the unescaped quotes find
 * the strings; only those holding an escape, a control byte or a non-ASCII
 * byte are read, by json.h's own string validator. What remains are the
 * tokens (the bytes outside strings, and one opening quote per string),
 * which a table-driven automaton reads in order with a bracket stack;
 * numbers (js_number_raw) and literals are read where they start. A 4 KB
 * message has some 600 tokens.
 *
 * Contract. The answer is one-sided: true means js_validate accepts the
 * input; false means it is not valid, or its value is a scalar, which this
 * pass leaves to js_validate. Callers then run js_validate, which names the
 * error and its offset (an invalid message is the rare case, and the error
 * must be the same at every level). Nothing is read outside [p, end): the
 * last block is read with a masked load (AVX-512) or copied into a stack
 * buffer padded with spaces. No allocation, no recursion: the bracket stack
 * is JS_MAX_DEPTH bytes on the caller's stack. The block code exists in the
 * four widths of json.h, following js_simd_name (JS_SIMD or js_force_simd
 * select one); all give the same answers.
 *
 * The member found. With find != NULL and a top-level object, find->val and
 * find->end delimit the value of the first member at depth 1 whose key,
 * unescaped, is find->key: the same view the optic scanners' walk gives
 * (a generated tr_scan_NAME over a root member, and sk_next, skip.h) on
 * valid input. find->val is NULL
 * when there is no such member. It is meaningful only when jv_valid
 * returned true.
 */
#ifndef TR_JSONVALID_H
#define TR_JSONVALID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

typedef struct {
    js_str key;         /* the key to find, at least one byte */
    const uint8_t *val; /* out: its value's first byte, or NULL */
    const uint8_t *end; /* out: one past the value */
} jv_find;

bool jv_valid(const uint8_t *p, const uint8_t *end, jv_find *find) __attribute__((warn_unused_result));

/* The AVX-512 walk reads its input in chunks of this many bytes (blocks
 * whose tokens one run of the automaton reads): tests cross the boundary. */
#define JV_CHUNK_BYTES 4096

/* The width in use ("avx512", "avx2", "sse2", "portable"), after js_init. */
const char *jv_impl_name(void);

#endif
