// The assert hook: internal invariants only. Bad caller input never lands
// here; it is reported in a result or status.
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"

static void default_assert(const char* condition, const char* file, int line) {
    fprintf(stderr, "carom: assertion failed: %s (%s:%d)\n", condition, file, line);
    abort();
}

static carom_assert_fn* g_assert = default_assert;

void carom_set_assert_fn(carom_assert_fn* fn) { g_assert = fn ? fn : default_assert; }

void carom_assert_fail(const char* condition, const char* file, int line) {
    g_assert(condition, file, line);
}
