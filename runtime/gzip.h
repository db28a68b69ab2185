/* gzip.h: gzip messages (gRPC's `grpc-encoding: gzip`, compressed flag 1)
 * and deflate ones (`grpc-encoding: deflate`: a zlib stream, RFC 1950)
 * inflated with libdeflate into one buffer reused for every message, and
 * gzip compressed again for the senders.
 *
 * Memory. A gz_inflater is the caller's struct; gz_inflater_init allocates
 * its decompressor and one output buffer of max_len bytes (ar_map: mapped,
 * a page that faults after it), and nothing is allocated after that
 * (z->allocs counts, so tests can show it). An inflated message is a view
 * into that buffer, valid until the next gz_inflate or gz_inflater_destroy:
 * the result is never copied. The buffer's untouched pages cost nothing,
 * so 4 MiB of capacity costs a small message a page.
 *
 * What is accepted: one or more gzip members back to back (RFC 1952, as
 * gRPC's Go and Java readers accept), each with a valid header (FEXTRA,
 * FNAME, FCOMMENT skipped; FHCRC checked), a deflate stream, and a trailer
 * whose CRC-32 and length match what was inflated, and nothing after the
 * last member. Errors, with the offset inside the compressed message:
 *   TR_E_INFLATE_LIMIT    the message inflates to more than max_len bytes.
 *                         Nothing is ever written past max_len: deflate data
 *                         is inflated into exactly the bytes left, and
 *                         libdeflate stops when they are full (offset: the
 *                         member's deflate data). Before that, once the
 *                         first header is read, a last trailer that declares
 *                         more than max_len is rejected without inflating at
 *                         all (offset: that length field), if the compressed
 *                         size could produce that much (deflate expands at
 *                         most 1032:1) -- otherwise those four bytes cannot
 *                         be a true trailer, and the member is inflated to
 *                         find what is wrong with it.
 *   TR_E_GZIP_TRUNCATED   the input ends inside a header or a trailer (or is
 *                         empty); offset: the input's length (the first
 *                         missing byte).
 *   TR_E_GZIP_CORRUPT     a bad header (magic, method, reserved flags;
 *                         offset: that byte), or deflate data libdeflate
 *                         rejects (offset: the start of the deflate data;
 *                         libdeflate does not say where). A cut inside the
 *                         deflate data shows here too: libdeflate cannot tell
 *                         it from corruption.
 *   TR_E_GZIP_CRC         the trailer's CRC-32 differs from the inflated
 *                         bytes' (offset: the trailer), or FHCRC from the
 *                         header's (offset: that field).
 *   TR_E_GZIP_SIZE        the trailer's length differs from the inflated
 *                         length (offset: the length field).
 * On any error *out is empty.
 *
 * Compressing: a gz_deflater writes one gzip member (libdeflate's header:
 * no name, no time, so the same input gives the same bytes), or one zlib
 * stream, into the caller's buffer.
 *
 * gz_encoding names the three by gRPC's `grpc-encoding` names, for the
 * tools whose frames carry no header saying which (--grpc-encoding,
 * --compress): gz_inflate_as and gz_deflate_as pick the format.
 */
#ifndef TR_GZIP_H
#define TR_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "view.h"

/* libdeflate's default level: its speed and ratio suit messages of a few KB. */
#define GZ_DEFAULT_LEVEL 6

struct libdeflate_decompressor;
struct libdeflate_compressor;

typedef struct {
    struct libdeflate_decompressor *d;
    uint8_t *buf;    /* max_len bytes: every message is inflated here */
    size_t max_len;  /* longest inflated message accepted */
    uint64_t allocs; /* allocations made: 2 by init, none after */
} gz_inflater;

/* max_len 0 means FR_DEFAULT_MAX_LEN (4 MiB, gRPC's default receive limit).
 * false: out of memory (nothing to destroy). */
bool gz_inflater_init(gz_inflater *z, size_t max_len) __attribute__((warn_unused_result));
void gz_inflater_destroy(gz_inflater *z);

/* Inflates the gzip message in into z's buffer; *out views the result (see
 * the contract above). Returns the error, TR_E_OK on success. */
tr_error gz_inflate(gz_inflater *z, tr_message in, tr_message *out)
    __attribute__((warn_unused_result));

/* The same for a deflate message: one zlib stream (RFC 1950: a 2-byte
 * header, deflate data, the Adler-32 of what it inflates to), nothing after
 * it, no preset dictionary (gRPC never sets one). Errors, with the offset
 * inside the message: TR_E_ZLIB_CORRUPT for a bad header (that byte),
 * deflate data libdeflate rejects (the data's start) or bytes after the
 * stream (the first of them); TR_E_ZLIB_TRUNCATED when the input ends
 * inside the header or the checksum (its length); TR_E_ZLIB_ADLER for a
 * checksum that differs (the checksum); TR_E_INFLATE_LIMIT as for gzip
 * (zlib declares no length, so only inflating finds it). */
tr_error gz_inflate_zlib(gz_inflater *z, tr_message in, tr_message *out)
    __attribute__((warn_unused_result));

typedef struct {
    struct libdeflate_compressor *c;
    uint64_t allocs; /* allocations made: 1 by init, none after */
} gz_deflater;

/* level 0 (stored) .. 12; false: bad level or out of memory. */
bool gz_deflater_init(gz_deflater *c, int level) __attribute__((warn_unused_result));
void gz_deflater_destroy(gz_deflater *c);

/* The most bytes gz_deflate (or gz_deflate_zlib: its header and trailer
 * are shorter) can write for n bytes of input. */
size_t gz_bound(const gz_deflater *c, size_t n);

/* Compresses in as one gzip member into out[0, cap). Returns its length, or
 * 0 when it does not fit in cap (then out's contents are undefined). */
size_t gz_deflate(gz_deflater *c, tr_message in, uint8_t *out, size_t cap)
    __attribute__((warn_unused_result));

/* The same as one zlib stream (gRPC's deflate). */
size_t gz_deflate_zlib(gz_deflater *c, tr_message in, uint8_t *out, size_t cap)
    __attribute__((warn_unused_result));

typedef enum { GZ_IDENTITY, GZ_GZIP, GZ_DEFLATE } gz_encoding;

/* "identity", "gzip" or "deflate". */
const char *gz_encoding_name(gz_encoding e);

/* The encoding named by the n bytes at s (one of the three names); false
 * for another. */
bool gz_encoding_parse(const char *s, size_t n, gz_encoding *e)
    __attribute__((warn_unused_result));

/* gz_inflate for GZ_GZIP, gz_inflate_zlib for GZ_DEFLATE; GZ_IDENTITY
 * gives in back as it is. */
tr_error gz_inflate_as(gz_inflater *z, gz_encoding e, tr_message in, tr_message *out)
    __attribute__((warn_unused_result));

/* gz_deflate for GZ_GZIP, gz_deflate_zlib for GZ_DEFLATE; 0 for
 * GZ_IDENTITY, which compresses nothing. */
size_t gz_deflate_as(gz_deflater *c, gz_encoding e, tr_message in, uint8_t *out, size_t cap)
    __attribute__((warn_unused_result));

#endif
