// The one stb_ds implementation, wired to the allocator hook.
#include "core/internal.h"

#define STB_DS_IMPLEMENTATION
#include "core/ds.h"

void* carom_stbds_realloc(void* ptr, size_t size) {
    void* p = carom_realloc(ptr, size);
    // stb_ds has no failure path: it would write through NULL.
    if (!p && size) carom_assert_fail("stb_ds growth: out of memory", __FILE__, __LINE__);
    return p;
}

void carom_stbds_free(void* ptr) { carom_free(ptr); }
