/* source.c: frames from a file descriptor, split in place. */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net.h"

#define READ_PIECE (256u << 10)

bool src_open(src_input *s, int fd, gz_encoding enc, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    fr_init(&s->split);
    s->enc = enc;
    s->split.allow_compressed = enc != GZ_IDENTITY;
    if (enc != GZ_IDENTITY && !gz_inflater_init(&s->gz, 0)) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    if (rb_init(&s->ring, 0, RB_AUTO, err, errlen) != 0) {
        gz_inflater_destroy(&s->gz);
        return false;
    }
    return true;
}

void src_close(src_input *s)
{
    rb_destroy(&s->ring);
    gz_inflater_destroy(&s->gz);
}

tr_error src_message(src_input *s, const fr_frame *f, tr_message *m)
{
    if (f->compressed)
        return gz_inflate_as(&s->gz, s->enc, f->msg, m);
    *m = f->msg;
    return (tr_error){TR_E_OK, 0, NULL};
}

/* One line of n bytes at p (stream offset off) as a message, when it holds
 * more than whitespace. */
static bool line_message(const uint8_t *p, size_t n, size_t off, fr_frame *f)
{
    for (size_t i = 0; i < n; i++)
        if (!(p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) {
            *f = (fr_frame){NULL, {p, n}, off, false};
            return true;
        }
    return false;
}

int src_next(src_input *s, fr_frame *f)
{
    if (s->pending > 0) {
        rb_consume(&s->ring, s->pending);
        s->offset += s->pending;
        s->pending = 0;
    }
    for (;;) {
        size_t n;
        const uint8_t *p = rb_data(&s->ring, &n);
        if (s->ndjson) {
            const uint8_t *nl = n > s->scanned ? memchr(p + s->scanned, '\n', n - s->scanned) : NULL;
            s->scanned = n;
            if (nl != NULL || (s->eof && n > 0)) {
                size_t len = nl != NULL ? (size_t)(nl - p) : n;
                /* the message: the line without its end, LF or CRLF */
                size_t body = len > 0 && p[len - 1] == '\r' ? len - 1 : len;
                if (body > FR_DEFAULT_MAX_LEN)
                    break; /* longer than a message may be, however it arrived */
                s->scanned = 0;
                s->pending = nl != NULL ? len + 1 : len;
                if (line_message(p, body, s->offset, f))
                    return 1;
                rb_consume(&s->ring, s->pending);
                s->offset += s->pending;
                s->pending = 0;
                continue;
            }
            if (s->eof)
                return 0;
            if (n > FR_DEFAULT_MAX_LEN + 1)
                break; /* no end in sight of a line already too long (a
                        * message's bytes, then a CR, may come before a LF) */
        } else {
            fr_status st = fr_next(&s->split, p, p + n, s->offset, f);
            if (st == FR_FRAME) {
                s->pending = fr_frame_size(f);
                return 1;
            }
            if (st == FR_ERROR) {
                s->err = s->split.err;
                return -1;
            }
            if (s->eof) {
                if (fr_finish(&s->split, p, p + n, s->offset) == TR_E_OK)
                    return 0;
                s->err = s->split.err;
                return -1;
            }
        }
        size_t room;
        uint8_t *w = rb_space(&s->ring, &room);
        if (room > READ_PIECE)
            room = READ_PIECE;
        ssize_t got = read(s->fd, w, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(s->io_err, sizeof s->io_err, "read: %s", strerror(errno));
            s->err.code = TR_E_IO;
            s->err.offset = s->offset + n;
            return -1;
        }
        if (got == 0)
            s->eof = true;
        else
            rb_commit(&s->ring, (size_t)got);
    }
    /* (ndjson) a line longer than a message may be: said at its first byte */
    s->err = (tr_error){TR_E_FRAME_SIZE, s->offset, NULL};
    return -1;
}

void src_report(const src_input *s, const char *cmd)
{
    if (s->err.code == TR_E_IO)
        fprintf(stderr, "triage-demo %s: %s at byte %zu\n", cmd, s->io_err, s->err.offset);
    else if (s->ndjson && s->err.code == TR_E_FRAME_SIZE)
        /* said of the line, which is what --ndjson reads (a frame is not) */
        fprintf(stderr, "triage-demo %s: a line longer than %u bytes, the most a message may be "
                        "(%s) at byte %zu\n",
                cmd, (unsigned)FR_DEFAULT_MAX_LEN, tr_error_name(s->err.code), s->err.offset);
    else
        fprintf(stderr, "triage-demo %s: %s (%s) at byte %zu\n", cmd, tr_error_text(s->err.code),
                tr_error_name(s->err.code), s->err.offset);
}
