/* gzip.c: gzip members and zlib streams parsed here, their deflate data
 * inflated by libdeflate, their trailers checked here (libdeflate's own
 * gzip and zlib readers answer BAD_DATA alike for a bad stream and a bad
 * checksum; parsing the wrapper ourselves tells them apart and gives
 * offsets). */
#include "gzip.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "frames.h"

/* RFC 1952. */
#define GZ_ID1 0x1f
#define GZ_ID2 0x8b
#define GZ_CM_DEFLATE 8
#define GZ_FHCRC 0x02
#define GZ_FEXTRA 0x04
#define GZ_FNAME 0x08
#define GZ_FCOMMENT 0x10
#define GZ_FRESERVED 0xe0
#define GZ_HEADER_LEN 10u
#define GZ_TRAILER_LEN 8u

/* Deflate's best case: a length-258 match in 2 bits (two 1-bit codes, no
 * extra bits), so n bytes of deflate data never inflate past 1032 n. */
#define GZ_MAX_RATIO 1032u

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static tr_error fail(tr_code code, size_t offset)
{
    tr_error e = {.code = code, .offset = offset, .what = NULL};
    return e;
}

bool gz_inflater_init(gz_inflater *z, size_t max_len)
{
    memset(z, 0, sizeof *z);
    z->max_len = max_len != 0 ? max_len : FR_DEFAULT_MAX_LEN;
    z->d = libdeflate_alloc_decompressor();
    z->buf = ar_map(z->max_len);
    z->allocs = 2;
    if (z->d == NULL || z->buf == NULL) {
        gz_inflater_destroy(z);
        return false;
    }
    return true;
}

void gz_inflater_destroy(gz_inflater *z)
{
    libdeflate_free_decompressor(z->d);
    ar_unmap(z->buf, z->max_len);
    z->d = NULL;
    z->buf = NULL;
}

/* The member header at p[pos]: returns the offset of its deflate data, or 0
 * with *e set (a header is never empty, so 0 is free). */
static size_t parse_header(const uint8_t *p, size_t n, size_t pos, tr_error *e)
{
    if (n - pos < GZ_HEADER_LEN) {
        /* Check what has arrived, so a wrong magic is not called a cut. */
        if (n - pos >= 1 && p[pos] != GZ_ID1) {
            *e = fail(TR_E_GZIP_CORRUPT, pos);
            return 0;
        }
        if (n - pos >= 2 && p[pos + 1] != GZ_ID2) {
            *e = fail(TR_E_GZIP_CORRUPT, pos + 1);
            return 0;
        }
        *e = fail(TR_E_GZIP_TRUNCATED, n);
        return 0;
    }
    const uint8_t *h = p + pos;
    if (h[0] != GZ_ID1 || h[1] != GZ_ID2) {
        *e = fail(TR_E_GZIP_CORRUPT, pos + (h[0] == GZ_ID1));
        return 0;
    }
    if (h[2] != GZ_CM_DEFLATE) {
        *e = fail(TR_E_GZIP_CORRUPT, pos + 2);
        return 0;
    }
    uint8_t flg = h[3];
    if (flg & GZ_FRESERVED) {
        *e = fail(TR_E_GZIP_CORRUPT, pos + 3);
        return 0;
    }
    size_t q = pos + GZ_HEADER_LEN;
    if (flg & GZ_FEXTRA) {
        if (n - q < 2) {
            *e = fail(TR_E_GZIP_TRUNCATED, n);
            return 0;
        }
        size_t xlen = (size_t)p[q] | (size_t)p[q + 1] << 8;
        if (n - q - 2 < xlen) {
            *e = fail(TR_E_GZIP_TRUNCATED, n);
            return 0;
        }
        q += 2 + xlen;
    }
    for (unsigned f = GZ_FNAME; f <= GZ_FCOMMENT; f <<= 1) {
        if (flg & f) {
            const uint8_t *nul = memchr(p + q, 0, n - q);
            if (nul == NULL) {
                *e = fail(TR_E_GZIP_TRUNCATED, n);
                return 0;
            }
            q = (size_t)(nul - p) + 1;
        }
    }
    if (flg & GZ_FHCRC) {
        if (n - q < 2) {
            *e = fail(TR_E_GZIP_TRUNCATED, n);
            return 0;
        }
        uint32_t want = (uint32_t)p[q] | (uint32_t)p[q + 1] << 8;
        if ((libdeflate_crc32(0, p + pos, q - pos) & 0xffffu) != want) {
            *e = fail(TR_E_GZIP_CRC, q);
            return 0;
        }
        q += 2;
    }
    return q;
}

/* The deflate data at p[data] of the n bytes p, inflated into z's buffer
 * after its first len bytes: *got bytes, the data ending at *t, where a
 * trailer of trailer bytes must follow. Errors: INFLATE_LIMIT (at the data)
 * when the buffer is full first; corrupt (at the data) for what libdeflate
 * rejects; cut (at n) when the trailer is not all there. */
static tr_error inflate_data(gz_inflater *z, const uint8_t *p, size_t n, size_t data, size_t len,
                             size_t trailer, tr_code corrupt, tr_code cut, size_t *t, size_t *got)
{
    size_t used_in = 0;
    enum libdeflate_result r = libdeflate_deflate_decompress_ex(
        z->d, p + data, n - data, z->buf + len, z->max_len - len, &used_in, got);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        return fail(TR_E_INFLATE_LIMIT, data);
    if (r != LIBDEFLATE_SUCCESS)
        return fail(corrupt, data);
    /* libdeflate reports used_in <= what it was given; checked anyway,
     * since an overrun here would read past the message. */
    *t = data + used_in;
    if (used_in > n - data || n - *t < trailer)
        return fail(cut, n);
    return fail(TR_E_OK, 0);
}

tr_error gz_inflate(gz_inflater *z, tr_message in, tr_message *out)
{
    const uint8_t *p = in.p;
    size_t n = in.n;
    out->p = z->buf;
    out->n = 0;
    if (n == 0)
        return fail(TR_E_GZIP_TRUNCATED, 0);

    size_t pos = 0, len = 0;
    do {
        tr_error e;
        size_t data = parse_header(p, n, pos, &e);
        if (data == 0)
            return e;
        /* The cheap early reject, once the first header shows this is gzip:
         * the last member's length field, if it could be true, already says
         * the message is too long. */
        if (pos == 0 && n - data >= GZ_TRAILER_LEN) {
            uint32_t isize = le32(p + n - 4);
            uint64_t most = (uint64_t)(n - data - GZ_TRAILER_LEN) * GZ_MAX_RATIO;
            if (isize > z->max_len && isize <= most)
                return fail(TR_E_INFLATE_LIMIT, n - 4);
        }
        size_t t = 0, got = 0;
        e = inflate_data(z, p, n, data, len, GZ_TRAILER_LEN, TR_E_GZIP_CORRUPT,
                         TR_E_GZIP_TRUNCATED, &t, &got);
        if (e.code != TR_E_OK)
            return e;
        if (libdeflate_crc32(0, z->buf + len, got) != le32(p + t))
            return fail(TR_E_GZIP_CRC, t);
        if (le32(p + t + 4) != (uint32_t)got)
            return fail(TR_E_GZIP_SIZE, t + 4);
        len += got;
        pos = t + GZ_TRAILER_LEN;
    } while (pos < n);

    out->n = len;
    return fail(TR_E_OK, 0);
}

/* RFC 1950. */
#define ZL_CM_DEFLATE 8
#define ZL_MAX_CINFO 7 /* a window of 2^(CINFO + 8) bytes: 32 KiB at most */
#define ZL_FDICT 0x20
#define ZL_HEADER_LEN 2u
#define ZL_TRAILER_LEN 4u

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

tr_error gz_inflate_zlib(gz_inflater *z, tr_message in, tr_message *out)
{
    const uint8_t *p = in.p;
    size_t n = in.n;
    out->p = z->buf;
    out->n = 0;
    /* the header: what has arrived is checked first, so a wrong first byte
     * is not called a cut */
    if (n >= 1 && ((p[0] & 0x0f) != ZL_CM_DEFLATE || p[0] >> 4 > ZL_MAX_CINFO))
        return fail(TR_E_ZLIB_CORRUPT, 0);
    if (n < ZL_HEADER_LEN)
        return fail(TR_E_ZLIB_TRUNCATED, n);
    if (((unsigned)p[0] << 8 | p[1]) % 31 != 0 || (p[1] & ZL_FDICT))
        return fail(TR_E_ZLIB_CORRUPT, 1);
    size_t t = 0, got = 0;
    tr_error e = inflate_data(z, p, n, ZL_HEADER_LEN, 0, ZL_TRAILER_LEN, TR_E_ZLIB_CORRUPT,
                              TR_E_ZLIB_TRUNCATED, &t, &got);
    if (e.code != TR_E_OK)
        return e;
    if (libdeflate_adler32(1, z->buf, got) != be32(p + t))
        return fail(TR_E_ZLIB_ADLER, t);
    if (n - t > ZL_TRAILER_LEN)
        return fail(TR_E_ZLIB_CORRUPT, t + ZL_TRAILER_LEN);
    out->n = got;
    return fail(TR_E_OK, 0);
}

bool gz_deflater_init(gz_deflater *c, int level)
{
    c->c = libdeflate_alloc_compressor(level);
    c->allocs = 1;
    return c->c != NULL;
}

void gz_deflater_destroy(gz_deflater *c)
{
    libdeflate_free_compressor(c->c);
    c->c = NULL;
}

size_t gz_bound(const gz_deflater *c, size_t n)
{
    return libdeflate_gzip_compress_bound(c->c, n);
}

size_t gz_deflate(gz_deflater *c, tr_message in, uint8_t *out, size_t cap)
{
    return libdeflate_gzip_compress(c->c, in.p, in.n, out, cap);
}

size_t gz_deflate_zlib(gz_deflater *c, tr_message in, uint8_t *out, size_t cap)
{
    return libdeflate_zlib_compress(c->c, in.p, in.n, out, cap);
}

/* ---- the encodings by name */

static const char *const enc_names[] = {"identity", "gzip", "deflate"};

const char *gz_encoding_name(gz_encoding e)
{
    return (unsigned)e < sizeof enc_names / sizeof *enc_names ? enc_names[e] : "?";
}

bool gz_encoding_parse(const char *s, size_t n, gz_encoding *e)
{
    for (unsigned i = 0; i < sizeof enc_names / sizeof *enc_names; i++)
        if (strlen(enc_names[i]) == n && memcmp(s, enc_names[i], n) == 0) {
            *e = (gz_encoding)i;
            return true;
        }
    return false;
}

tr_error gz_inflate_as(gz_inflater *z, gz_encoding e, tr_message in, tr_message *out)
{
    if (e == GZ_DEFLATE)
        return gz_inflate_zlib(z, in, out);
    if (e == GZ_GZIP)
        return gz_inflate(z, in, out);
    *out = in;
    return fail(TR_E_OK, 0);
}

size_t gz_deflate_as(gz_deflater *c, gz_encoding e, tr_message in, uint8_t *out, size_t cap)
{
    if (e == GZ_DEFLATE)
        return gz_deflate_zlib(c, in, out, cap);
    if (e == GZ_GZIP)
        return gz_deflate(c, in, out, cap);
    return 0;
}
