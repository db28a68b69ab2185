/* error.c: the text and name of each error code, from the one table. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const texts[] = {
#define TR_ERR_TEXT(name, text) text,
    TR_ERRORS(TR_ERR_TEXT)
#undef TR_ERR_TEXT
};

static const char *const names[] = {
#define TR_ERR_NAME(name, text) #name,
    TR_ERRORS(TR_ERR_NAME)
#undef TR_ERR_NAME
};

const char *tr_error_text(tr_code code)
{
    return (unsigned)code < TR_E_COUNT_ ? texts[code] : "unknown error";
}

const char *tr_error_name(tr_code code)
{
    return (unsigned)code < TR_E_COUNT_ ? names[code] : "UNKNOWN";
}

void tr_say(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *tr_errno_text(int e, char *buf, size_t n)
{
    return strerror_r(e, buf, n); /* the GNU variant: may not use buf */
}
