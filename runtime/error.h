/* error.h: one table of every error the runtime and generated code can report.
 *
 * An error is a code plus the byte offset (from the start of the message or
 * stream being read) at which it was found. The first error recorded wins:
 * later failures while unwinding do not overwrite it. The table yields both
 * the enum and the text a person reads, so the two cannot drift.
 */
#ifndef TR_ERROR_H
#define TR_ERROR_H

#include <stddef.h>

#define TR_ERRORS(X)                                                          \
    X(OK, "no error")                                                         \
    X(EOF, "unexpected end of input")                                         \
    X(SYNTAX, "unexpected character")                                         \
    X(TRAILING, "bytes after the JSON value")                                 \
    X(BOM, "byte-order mark is not allowed")                                  \
    X(DEPTH, "nesting deeper than the limit")                                 \
    X(CTRL, "raw control character in string")                                \
    X(ESCAPE, "invalid escape sequence")                                      \
    X(SURROGATE, "lone or broken surrogate in \\u escape")                    \
    X(UTF8, "invalid UTF-8")                                                  \
    X(NUMBER, "malformed number")                                             \
    X(NOT_INTEGER, "integer field holds a fraction or an exponent")           \
    X(RANGE, "number out of range for its type")                              \
    X(TYPE, "value has the wrong type")                                       \
    X(NULL_REQUIRED, "required field is null")                                \
    X(MISSING, "required field is missing")                                   \
    X(DUPLICATE, "field appears twice in one object")                         \
    X(DUPLICATE_KEY, "key appears twice in one map")                          \
    X(ENUM, "unknown enum case")                                              \
    X(TAG, "unknown union tag")                                               \
    X(NO_TAG, "union has no tag field")                                       \
    X(ARENA, "decode arena exhausted")                                        \
    X(TOO_LONG, "string or number longer than the limit")                     \
    X(COMPRESSED, "compressed frame but no encoding was negotiated")          \
    X(FRAME_SIZE, "frame length over the limit")                              \
    X(FRAME_TRUNCATED, "input ends inside a frame")                           \
    X(FRAME_FLAG, "invalid compressed-flag byte")                             \
    X(BUFFER, "output buffer too small")                                      \
    X(IO, "input/output error")                                               \
    X(GZIP_CORRUPT, "corrupt gzip member")                                    \
    X(GZIP_TRUNCATED, "gzip member ends early")                               \
    X(GZIP_CRC, "gzip CRC mismatch")                                          \
    X(GZIP_SIZE, "gzip length trailer mismatch")                              \
    X(ZLIB_CORRUPT, "corrupt deflate (zlib) message")                         \
    X(ZLIB_TRUNCATED, "deflate (zlib) message ends early")                    \
    X(ZLIB_ADLER, "deflate (zlib) Adler-32 mismatch")                         \
    X(INFLATE_LIMIT, "inflated message over the limit")

typedef enum {
#define TR_ERR_ENUM(name, text) TR_E_##name,
    TR_ERRORS(TR_ERR_ENUM)
#undef TR_ERR_ENUM
        TR_E_COUNT_
} tr_code;

typedef struct {
    tr_code code;
    size_t offset;    /* byte offset where the problem was found */
    const char *what; /* static text naming the field or key, or NULL */
} tr_error;

/* The human-readable text of a code; never NULL. */
const char *tr_error_text(tr_code code);

/* The name of a code ("SYNTAX", ...), for tests and machine output. */
const char *tr_error_name(tr_code code);

/* Formats a message into a caller's buffer (nothing when err is NULL or
 * errlen 0): how modules that fail with text report it. */
void tr_say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* errno's text, thread-safe; e is captured right after the failing call. */
const char *tr_errno_text(int e, char *buf, size_t n);

/* Records code at offset unless an error is already recorded (first wins). */
static inline void tr_error_set(tr_error *e, tr_code code, size_t offset)
{
    if (e->code == TR_E_OK) {
        e->code = code;
        e->offset = offset;
        e->what = NULL;
    }
}

#endif
