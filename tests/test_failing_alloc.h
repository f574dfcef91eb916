// An allocator hook that fails the n-th allocation, for tests proving that
// every allocation failure of a build reports out of memory and leaks
// nothing (cmocka's test_realloc/test_free check leaks at each test's end).
// Include after cmocka.h.
#ifndef CAROM_TEST_FAILING_ALLOC_H
#define CAROM_TEST_FAILING_ALLOC_H

#include "carom/carom.h"

static int g_fail_at, g_count;

static void* failing_realloc(void* ptr, size_t size, void* user) {
    (void)user;
    if (!ptr && ++g_count == g_fail_at) return NULL;
    return test_realloc(ptr, size);
}

static void hooked_free(void* ptr, void* user) {
    (void)user;
    test_free(ptr);
}

#endif
