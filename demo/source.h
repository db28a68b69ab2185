/* source.h: frames from a file descriptor (stdin for judge and check), read
 * in 256 KiB pieces into a ring and split in place: every frame handed out
 * is a view into the ring, valid until the next src_next call. With ndjson
 * set after src_open, each line is a message instead (its frame has no
 * head; offset is the line's). */
#ifndef TR_SOURCE_H
#define TR_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "frames.h"
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
} src_input;

__attribute__((warn_unused_result)) bool src_open(src_input *s, int fd, bool allow_compressed,
                                                  char *err, size_t errlen);
void src_close(src_input *s);

/* 1: *f is the next frame; 0: the input ended between two frames; -1: the
 * stream is bad (s->err, and s->io_err for TR_E_IO). */
int src_next(src_input *s, fr_frame *f);

/* Writes "triage-demo: <what> at byte <offset>" for s->err to stderr. */
void src_report(const src_input *s, const char *cmd);

#endif
