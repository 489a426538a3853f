#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool fill(Err *e, ErrCode code, const char *fmt, va_list ap) {
    if (!e) return false;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    e->code = code;
    return false;
}

bool err_set(Err *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fill(e, ERR_FAILED, fmt, ap);
    va_end(ap);
    return false;
}

bool err_code(Err *e, ErrCode code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fill(e, code, fmt, ap);
    va_end(ap);
    return false;
}

bool err_prefix(Err *e, const char *fmt, ...) {
    if (!e) return false;
    char head[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char old[sizeof e->msg];
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return false;
}
