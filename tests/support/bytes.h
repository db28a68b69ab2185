/* bytes.h: growing byte buffers for building test inputs.
 *
 * The bytes are always followed by a NUL (not counted in n), so a buffer of
 * text can be searched with the string functions. bb_new's buffers are
 * freed by fx_teardown (fixture.h), or earlier by bb_free; a bb declared
 * zeroed (static bb x;) works too, and is the caller's to keep. */
#ifndef TRIAGE_TEST_BYTES_H
#define TRIAGE_TEST_BYTES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *p;
    size_t n, cap;
} bb;

bb *bb_new(void);
bb *bb_of(const void *p, size_t n); /* a new buffer holding a copy */
bb *bb_str(const char *s);
void bb_free(bb *b);

/* Room for n more bytes (and the NUL) without moving p again. */
void bb_reserve(bb *b, size_t n);
void bb_put(bb *b, const void *s, size_t n);
void bb_puts(bb *b, const char *s);
void bb_putc(bb *b, int c);
void bb_rep(bb *b, const char *s, size_t times); /* s, times over */

#endif
