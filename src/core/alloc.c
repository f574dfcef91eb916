// The allocator hook. Global because stb_ds calls STBDS_REALLOC with no
// context; everything carom allocates, stb_ds growth included, comes here.
#include <stdlib.h>

#include "core/internal.h"

static void* default_realloc(void* ptr, size_t size, void* user) {
    (void)user;
    // glibc's malloc is 16-aligned on x86-64 and aarch64, which the 16-byte
    // aligned carom_xform needs.
    return realloc(ptr, size);
}

static void default_free(void* ptr, void* user) {
    (void)user;
    free(ptr);
}

static carom_allocator g_allocator = {default_realloc, default_free, NULL};

void carom_set_allocator(const carom_allocator* allocator) {
    if (allocator && allocator->realloc_fn && allocator->free_fn) {
        g_allocator = *allocator;
    } else {
        g_allocator = (carom_allocator){default_realloc, default_free, NULL};
    }
}

void* carom_alloc(size_t size) { return g_allocator.realloc_fn(NULL, size, g_allocator.user); }

void* carom_realloc(void* ptr, size_t size) {
    return g_allocator.realloc_fn(ptr, size, g_allocator.user);
}

void carom_free(void* ptr) {
    if (ptr) g_allocator.free_fn(ptr, g_allocator.user);
}
