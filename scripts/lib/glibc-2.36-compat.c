/*
 * Linked into the programs scripts/debian-swift-build builds for Debian 12 (glibc 2.36), and
 * only there. Debian 13's static Swift standard library (swiftlang 6.0.3) was compiled against
 * glibc 2.41, whose headers redirect strtol/strtoll to their C23 versions and which has strlcpy;
 * glibc 2.36 has neither. These definitions give the standard library what it calls, with
 * hidden visibility so that nothing else binds to them:
 *   - __isoc23_strtol/strtoll/strtoul: C23's versions differ from the old ones only in also reading a
 *     "0b" prefix with base 0 or 2, which the runtime never parses (it reads decimal and hex).
 *   - __isoc23_sscanf: likewise (C23 adds %b), through vsscanf.
 *   - strlcpy, strlcat: the BSD functions glibc gained in 2.38, written from their specification.
 *   - __frexp, __ldexp, __scalbn and their float versions: the names Debian 13's libraries were
 *     compiled to call; glibc 2.36 exports them as frexp, ldexp, scalbn (and ...f).
 * Run `scripts/build-deb --arch arm64 --release bookworm`: a symbol missing here fails the link.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VENDD_COMPAT __attribute__((visibility("hidden")))

VENDD_COMPAT long __isoc23_strtol(const char *text, char **end, int base) {
    return strtol(text, end, base);
}

VENDD_COMPAT long long __isoc23_strtoll(const char *text, char **end, int base) {
    return strtoll(text, end, base);
}

VENDD_COMPAT unsigned long __isoc23_strtoul(const char *text, char **end, int base) {
    return strtoul(text, end, base);
}

VENDD_COMPAT size_t strlcpy(char *destination, const char *source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t copied = length < size ? length : size - 1;
        memcpy(destination, source, copied);
        destination[copied] = '\0';
    }
    return length;
}

VENDD_COMPAT int __isoc23_sscanf(const char *text, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int converted = vsscanf(text, format, arguments);
    va_end(arguments);
    return converted;
}

VENDD_COMPAT float __frexpf(float value, int *exponent) { return frexpf(value, exponent); }

VENDD_COMPAT float __ldexpf(float value, int exponent) { return ldexpf(value, exponent); }

VENDD_COMPAT float __scalbnf(float value, int exponent) { return scalbnf(value, exponent); }

VENDD_COMPAT size_t strlcat(char *destination, const char *source, size_t size) {
    size_t present = strnlen(destination, size);
    if (present == size) return size + strlen(source);
    return present + strlcpy(destination + present, source, size - present);
}

VENDD_COMPAT double __frexp(double value, int *exponent) { return frexp(value, exponent); }

VENDD_COMPAT double __ldexp(double value, int exponent) { return ldexp(value, exponent); }

VENDD_COMPAT double __scalbn(double value, int exponent) { return scalbn(value, exponent); }
