/* view.h: views (pointer + length) over bytes someone else owns.
 *
 * A view never owns its bytes and is valid only as long as the buffer it
 * points into keeps them (for a frame, until the read buffer consumes them).
 * Each kind of view is its own struct type, so passing a whole message where
 * the bytes of one value inside it are expected, or the reverse, fails to
 * compile.
 */
#ifndef TR_VIEW_H
#define TR_VIEW_H

#include <stddef.h>
#include <stdint.h>

/* A whole message: the body of one frame (one JSON value of the root type). */
typedef struct {
    const uint8_t *p;
    size_t n;
} tr_message;

/* Views of one value inside a message (a union's bytes, ...) are generated
 * with the scanners, one struct type per value type (tr_optics.h). */

#endif
