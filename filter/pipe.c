/* pipe.c: split, judge, tally, gather; and the feed of the loop between
 * two descriptors. */
#include "pipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "reader.h"
#include "tr_optics.h"

pp_pipe *pp_new(rd_type reader, const po_policy *policy, char *err, size_t errlen)
{
    pp_pipe *pp = calloc(1, sizeof *pp);
    if (pp == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pp->reader = reader;
    pp->policy = *policy;
    fr_init(&pp->split);
    const char *names[TL_MAX_KINDS];
    tl_init(&pp->tally, rd_kinds(names, TL_MAX_KINDS), names);
    pp->tally.allocations = 1;
    fw_sink_init(&pp->sink, pp->iov, FW_IOV);
    if (reader != RD_NONE) {
        pp->rd = rd_new();
        if (pp->rd == NULL) {
            snprintf(err, errlen, "out of memory (reader)");
            free(pp);
            return NULL;
        }
        pp->tally.allocations += RD_ALLOCS;
    }
    if (reader == RD_DECODE) {
        if (!rd_decoding(pp->rd)) {
            snprintf(err, errlen, "out of memory (decode arena)");
            pp_free(pp);
            return NULL;
        }
        pp->tally.allocations += RD_DECODE_ALLOCS;
    }
    return pp;
}

void pp_free(pp_pipe *pp)
{
    if (pp == NULL)
        return;
    rd_free(pp->rd);
    if (pp->enc != GZ_IDENTITY)
        gz_inflater_destroy(&pp->gz);
    free(pp);
}

bool pp_set_verify(pp_pipe *pp, vf_level level)
{
    pp->verify = level;
    return true;
}

bool pp_set_encoding(pp_pipe *pp, gz_encoding e)
{
    if (e == GZ_IDENTITY)
        return true;
    /* one inflater reads both formats: made the first time only */
    if (pp->enc == GZ_IDENTITY && pp->reader != RD_NONE) {
        if (!gz_inflater_init(&pp->gz, 0))
            return false;
        pp->tally.allocations += pp->gz.allocs;
    }
    pp->enc = e;
    pp->split.allow_compressed = true;
    return true;
}

/* ---- the pipe over bytes in memory */

static bool judge_one(pp_pipe *pp, tr_message m, int *kind)
{
    *kind = -1;
    if (pp->reader == RD_OPTICS) {
        if (!rd_message(pp->rd, pp->verify, m))
            return false;
        return po_judge(&pp->policy, &pp->rd->ru, kind);
    }
    if (!rd_decode(pp->rd, m))
        return false;
    return po_judge(&pp->policy, &pp->rd->ru, kind);
}

/* CPU time of this thread: judging time should not count the moments the
 * scheduler gave the core to the upstream or the downstream (three
 * processes on two cores). */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A compressed message that does not inflate: judged none and dropped (by
 * the caller), counted, and said once on pp->warn. */
static void inflate_failed(pp_pipe *pp, const fr_frame *f, tr_error e)
{
    pp->inflate_failed++;
    pp->inflate_err = e;
    pp->inflate_err_frame = f->offset;
    if (pp->warn != NULL)
        fprintf(pp->warn,
                "%s: %s (%s) at byte %zu (byte %zu of the message of the frame at byte %zu): "
                "dropped\n",
                gz_encoding_name(pp->enc), tr_error_text(e.code), tr_error_name(e.code),
                f->offset + FR_HEADER_LEN + e.offset, e.offset, f->offset);
}

/* Judges batch[0 .. n) (timed as one piece: two clock reads per batch,
 * not per message), then tallies and gathers in order. */
static pp_status handle_batch(pp_pipe *pp, size_t n)
{
    if (pp->reader == RD_NONE) {
        for (size_t i = 0; i < n; i++) {
            pp->kind[i] = -1;
            pp->keep[i] = true;
        }
    } else if (pp->enc == GZ_IDENTITY) {
        uint64_t t0 = cpu_ns();
        for (size_t i = 0; i < n; i++)
            pp->keep[i] = judge_one(pp, pp->batch[i].msg, &pp->kind[i]);
        tl_judge_time(&pp->tally, n, cpu_ns() - t0);
    } else {
        /* One message at a time through the inflater's one buffer. The
         * batch's thread CPU time is read twice, as above, and split
         * between inflating and judging in proportion to the monotonic
         * clock's time for each step: the thread CPU clock is a system
         * call (~0.4 us here), too dear to read per message, while the
         * monotonic one is read in user space (~20 ns). */
        uint64_t c0 = cpu_ns(), t = clk_now_ns(), inflate_mono = 0, judge_mono = 0;
        uint64_t judged = 0;
        for (size_t i = 0; i < n; i++) {
            const fr_frame *f = &pp->batch[i];
            tr_message m = f->msg;
            if (f->compressed) {
                tr_error e = gz_inflate_as(&pp->gz, pp->enc, f->msg, &m);
                uint64_t t1 = clk_now_ns();
                inflate_mono += t1 - t;
                t = t1;
                if (e.code != TR_E_OK) {
                    inflate_failed(pp, f, e);
                    pp->kind[i] = -1;
                    pp->keep[i] = false;
                    continue;
                }
                pp->inflated++;
                pp->compressed_bytes += f->msg.n;
                pp->inflated_bytes += m.n;
            }
            pp->keep[i] = judge_one(pp, m, &pp->kind[i]);
            uint64_t t2 = clk_now_ns();
            judge_mono += t2 - t;
            judged++;
            t = t2;
        }
        uint64_t cpu = cpu_ns() - c0, mono = inflate_mono + judge_mono;
        uint64_t inflate = mono > 0 ? (uint64_t)((double)cpu * (double)inflate_mono / (double)mono) : 0;
        pp->inflate_ns += inflate;
        tl_judge_time(&pp->tally, judged, cpu - inflate);
    }
    const uint8_t *ring_end = pp->ring != NULL ? pp->ring->base + pp->ring->cap : NULL;
    for (size_t i = 0; i < n; i++) {
        const fr_frame *f = &pp->batch[i];
        size_t size = fr_frame_size(f);
        tl_count(&pp->tally, pp->kind[i], pp->keep[i], size);
        if (ring_end != NULL && f->head < ring_end && fr_frame_end(f) > ring_end)
            pp->straddled++;
        if (!pp->keep[i])
            continue;
        tl_digest_add(&pp->tally.forwarded, f->head, size);
        if (fw_sink_add(&pp->sink, f) != FW_OK)
            return PP_FLUSH_FAILED;
    }
    return PP_OK;
}

pp_status pp_feed(pp_pipe *pp, const uint8_t *p, const uint8_t *end, size_t off, size_t *used)
{
    size_t pos = 0;
    fr_status st = FR_NEED_MORE;
    for (;;) {
        size_t n = 0;
        while (n < PP_BATCH) {
            st = fr_next(&pp->split, p + pos, end, off + pos, &pp->batch[n]);
            if (st != FR_FRAME)
                break;
            pos += fr_frame_size(&pp->batch[n]);
            n++;
        }
        if (n > 0 && handle_batch(pp, n) != PP_OK) {
            *used = pos;
            return PP_FLUSH_FAILED;
        }
        if (n < PP_BATCH)
            break;
    }
    *used = pos;
    return st == FR_ERROR ? PP_BAD_STREAM : PP_OK;
}

/* ---- between two descriptors */

static fw_status feed(void *ctx, const uint8_t *p, const uint8_t *end, size_t off, size_t *used)
{
    switch (pp_feed(ctx, p, end, off, used)) {
    case PP_OK:
        return FW_OK;
    case PP_BAD_STREAM:
        return FW_BAD_STREAM;
    default:
        return FW_FLUSH_FAILED;
    }
}

fw_outcome pp_stream(pp_pipe *pp, int in, int out, const fw_opts *o, fw_result *res)
{
    fw_feeder fe = {pp, feed, &pp->sink, &pp->split, &pp->tally, &pp->ring};
    return fw_run(&fe, in, out, o, res);
}
