/* seeds.c: the seed inputs of fuzz_model.c's harnesses, made from the generated
 * tables (any schema): `seeds OUTDIR` writes
 *   OUTDIR/model/           messages, in both layouts, sizes 2..9
 *   OUTDIR/scan_<optic>/    values of the optic's source type, and messages
 *                           when the optic can be read from one
 * Each file is one value as the encoder writes it. Never committed: the
 * Makefile makes them at fuzz time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "optic.h"
#include "tr_optics.h"

#define ARENA_BYTES (64u << 20)
#define BUF_BYTES (16u << 20)

static uint8_t *mem, *buf;
static void *value;
static ar_arena arena;

static void die(const char *what, const char *path)
{
    fprintf(stderr, "seeds: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void mkdir_p(const char *path)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        die("cannot create", path);
}

/* Value k of type t (the root with its first field in front when first)
 * written to dir/name. */
static void put(const char *dir, const char *name, int t, int size, uint64_t k, bool first)
{
    const op_schema *s = &tr_schema;
    rg_rng rg;
    rg_seed(&rg, 0x7365656473ull ^ (uint64_t)t << 24 ^ (uint64_t)size, k);
    ar_reset(&arena);
    memset(value, 0, s->types[t].size);
    s->types[t].random(&rg, &arena, size, value);
    uint8_t *w = first ? s->encode_first(buf, buf + BUF_BYTES, value, s->first_field)
                       : s->types[t].encode(buf, buf + BUF_BYTES, value);
    if (w == NULL) {
        fprintf(stderr, "seeds: a %s of size %d does not fit\n", s->types[t].name, size);
        exit(1);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        die("cannot write", path);
    if (fwrite(buf, 1, (size_t)(w - buf), f) != (size_t)(w - buf) || fclose(f) != 0)
        die("cannot write", path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds OUTDIR\n");
        return 2;
    }
    const op_schema *s = &tr_schema;
    size_t most = 0;
    for (int t = 0; t < s->ntypes; t++)
        if (s->types[t].size > most)
            most = s->types[t].size;
    mem = malloc(ARENA_BYTES);
    buf = malloc(BUF_BYTES);
    value = calloc(1, most);
    if (mem == NULL || buf == NULL || value == NULL) {
        fprintf(stderr, "seeds: out of memory\n");
        return 1;
    }
    ar_init(&arena, mem, ARENA_BYTES);
    mkdir_p(argv[1]);
    char dir[4096], name[64];
    snprintf(dir, sizeof dir, "%s/model", argv[1]);
    mkdir_p(dir);
    for (int size = 2; size <= 9; size++)
        for (int first = 0; first < 2; first++) {
            snprintf(name, sizeof name, "m%d%s", size, first ? "f" : "");
            put(dir, name, s->root, size, 0, first);
        }
    for (int i = 0; i < s->noptics; i++) {
        const op_optic *o = &s->optics[i];
        snprintf(dir, sizeof dir, "%s/scan_%s", argv[1], o->name);
        mkdir_p(dir);
        for (int size = 2; size <= 13; size++) {
            snprintf(name, sizeof name, "v%d", size);
            put(dir, name, o->source, size, (uint64_t)i, false);
        }
        if (!o->source_is_root && op_from_message(s, i))
            for (int size = 2; size <= 9; size++) {
                snprintf(name, sizeof name, "m%d", size);
                put(dir, name, s->root, size, (uint64_t)i, size % 2 == 1);
            }
    }
    return 0;
}
