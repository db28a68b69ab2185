/* source.h: frames from a file descriptor (stdin for judge and check, a
 * socket for downstream), read in 256 KiB pieces into a ring and split in
 * place: every frame handed out is a view into the ring, valid until the
 * next src_next call. With ndjson set after src_open, each line is a message
 * instead (its frame has no head; offset is the line's). A source opened
 * with an encoding also inflates the compressed frames (src_message), into
 * one buffer of its own. */
#ifndef TRIAGE_SOURCE_H
#define TRIAGE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "frames.h"
#include "gzip.h"
#include "ringbuf.h"

typedef struct {
    rb_ring ring;
    fr_splitter split;
    int fd;
    size_t offset;  /* stream offset of the ring's first unread byte */
    size_t pending; /* size of the frame handed out last, consumed next call */
    bool eof;
    bool ndjson;    /* one JSON message a line instead of frames (blank
                       lines skipped; a line over 4 MiB is an error) */
    size_t scanned; /* ndjson: bytes of the ring known to hold no newline
                       (each byte of a long line is looked at once) */
    tr_error err;   /* framing error (stream offset), or TR_E_IO */
    char io_err[160];
    gz_encoding enc; /* what compressed frames hold; identity: none may come */
    gz_inflater gz;  /* for them (made by src_open when enc is not identity) */
} src_input;

/* enc GZ_IDENTITY: a compressed frame is a framing error; gzip or deflate:
 * compressed frames are allowed, and src_message inflates them. false (err
 * set) when out of memory. */
__attribute__((warn_unused_result)) bool src_open(src_input *s, int fd, gz_encoding enc,
                                                  char *err, size_t errlen);
void src_close(src_input *s);

/* The message frame f carries: its bytes, or for a compressed one those
 * inflated (a view into s's buffer, valid until the next call). TR_E_OK, or
 * the inflater's error (its offset in the compressed bytes; *m empty). */
tr_error src_message(src_input *s, const fr_frame *f, tr_message *m)
    __attribute__((warn_unused_result));

/* 1: *f is the next frame; 0: the input ended between two frames; -1: the
 * stream is bad (s->err, and s->io_err for TR_E_IO). */
int src_next(src_input *s, fr_frame *f);

/* Writes "triage-demo: <what> at byte <offset>" for s->err to stderr. */
void src_report(const src_input *s, const char *cmd);

#endif
