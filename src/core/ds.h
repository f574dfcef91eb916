// stb_ds configured for carom: every growth goes through the allocator hook.
// Include this, never <stb/stb_ds.h> directly, so that all translation units
// agree on the allocator. stb_ds cannot report a failed growth, so the hook
// wrapper ends in the assert hook with a message rather than let stb_ds
// dereference NULL.
#ifndef CAROM_DS_H
#define CAROM_DS_H

#include <stddef.h>

void* carom_stbds_realloc(void* ptr, size_t size);
void carom_stbds_free(void* ptr);

#define STBDS_REALLOC(context, ptr, size) carom_stbds_realloc((ptr), (size))
#define STBDS_FREE(context, ptr) carom_stbds_free(ptr)
#include <stb/stb_ds.h>

#endif
