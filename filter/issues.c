/* issues.c: generated Issues, encoded into frames. */
#include "issues.h"

#include <stdlib.h>

#include "frames.h"
#include "gzip.h"

#define GEN_ARENA (64u << 20)
#define GEN_FRAME (FR_HEADER_LEN + (size_t)ISS_MAX_MESSAGE) /* a frame: header and body */

struct iss_gen {
    int size;
    ar_arena arena;
    uint8_t *mem;
    uint8_t *frame; /* GEN_FRAME bytes */
    void *root;     /* the generated root, tr_schema's root type */
    double ratio;   /* share of frames compressed */
    gz_encoding enc; /* how (gzip or deflate) */
    gz_deflater gz; /* when ratio > 0 */
    uint8_t *plain; /* ISS_MAX_MESSAGE bytes: the JSON before compression */
};

iss_gen *iss_gen_new(int size)
{
    iss_gen *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->size = size;
    g->mem = ar_map(GEN_ARENA);
    g->frame = ar_map(GEN_FRAME);
    g->root = calloc(1, tr_schema.types[tr_schema.root].size);
    if (g->mem == NULL || g->frame == NULL || g->root == NULL) {
        iss_gen_free(g);
        return NULL;
    }
    ar_init(&g->arena, g->mem, GEN_ARENA);
    return g;
}

void iss_gen_free(iss_gen *g)
{
    if (g == NULL)
        return;
    ar_unmap(g->mem, GEN_ARENA);
    ar_unmap(g->frame, GEN_FRAME);
    free(g->root);
    if (g->plain != NULL) {
        gz_deflater_destroy(&g->gz);
        ar_unmap(g->plain, ISS_MAX_MESSAGE);
    }
    free(g);
}

const void *iss_gen_issue(iss_gen *g, uint64_t seed, uint64_t i)
{
    rg_rng rg;
    rg_seed(&rg, seed, i);
    ar_reset(&g->arena);
    tr_schema.types[tr_schema.root].random(&rg, &g->arena, g->size, g->root);
    return g->root;
}

const uint8_t *iss_gen_frame(iss_gen *g, uint64_t seed, uint64_t i, bool detail_first, size_t *n)
{
    const void *is = iss_gen_issue(g, seed, i);
    bool gz = iss_compressed(seed, i, g->ratio);
    uint8_t *body = gz ? g->plain : g->frame + FR_HEADER_LEN;
    uint8_t *w = tr_schema.encode_first(body, body + ISS_MAX_MESSAGE, is,
                                        detail_first ? tr_schema.first_field : -1);
    if (w == NULL)
        return NULL;
    size_t len = (size_t)(w - body);
    if (gz) {
        tr_message plain = {body, len};
        len = gz_deflate_as(&g->gz, g->enc, plain, g->frame + FR_HEADER_LEN, ISS_MAX_MESSAGE);
        if (len == 0)
            return NULL;
    }
    fr_put_header(g->frame, gz, (uint32_t)len);
    *n = len + FR_HEADER_LEN;
    return g->frame;
}

bool iss_gen_compress(iss_gen *g, gz_encoding e, double ratio)
{
    if (e == GZ_IDENTITY)
        ratio = 0;
    if (ratio > 0 && g->plain == NULL) {
        uint8_t *plain = ar_map(ISS_MAX_MESSAGE);
        if (plain == NULL)
            return false;
        if (!gz_deflater_init(&g->gz, GZ_DEFAULT_LEVEL)) {
            ar_unmap(plain, ISS_MAX_MESSAGE);
            return false;
        }
        g->plain = plain;
    }
    g->enc = e;
    g->ratio = ratio;
    return true;
}

bool iss_compressed(uint64_t seed, uint64_t i, double ratio)
{
    if (ratio <= 0)
        return false;
    if (ratio >= 1)
        return true;
    /* Stream (seed ^ K, i), never (seed, i): the issue's own draws stay as
     * they were. 53 bits make a double in [0, 1) exactly. */
    rg_rng r;
    rg_seed(&r, seed ^ 0x677a6970u /* "gzip" */, i);
    return (double)(rg_next(&r) >> 11) * 0x1p-53 < ratio;
}
