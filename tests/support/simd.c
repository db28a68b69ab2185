/* simd.c: forcing one string-scanning width (simd.h). */
#include "simd.h"

#include "json.h"
#include "skip.h"

const char *const simd_names[SIMD_WIDTHS] = {"portable", "sse2", "avx2", "avx512"};

bool simd_use(int i)
{
    if (i < 0 || i >= SIMD_WIDTHS || js_force_simd(simd_names[i]) == NULL)
        return false;
    sk_init();
    return true;
}
