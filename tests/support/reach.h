/* reach.h: whether random values reach an optic, for the generic suites'
 * checks that they are not vacuous (every optic, or some, hits).
 *
 * Random lists are no longer than their size (rng.h), each level of lists
 * and maps gives its items half the size, and the generator makes an item
 * an optic reads only below RG_INDEX_PLANT, and a key an optic reads (or
 * the item) in about half of the lists and maps. So an optic of an item
 * past that, or stepping into more than RC_CONTAINERS lists and maps, may
 * never hit in random values: a suite notes it rather than failing. */
#ifndef TRIAGE_TESTS_REACH_H
#define TRIAGE_TESTS_REACH_H

#include <stdbool.h>

#include "optic.h"
#include "rng.h"

#define RC_CONTAINERS 4

static inline bool rc_reaches(const op_optic *o)
{
    return o->index_max < RG_INDEX_PLANT && o->containers <= RC_CONTAINERS;
}

#endif
