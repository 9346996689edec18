#include "allocation_counter.h"

#include <stdatomic.h>
#include <stddef.h>
#include <errno.h>

// glibc exports its allocator under these names as well, so the wrappers need no dlsym (which allocates).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

// initial-exec: reading the flag must not itself allocate thread-local storage from inside malloc.
static __thread int counting __attribute__((tls_model("initial-exec")));
static atomic_long allocations;

static inline void note(void) {
    if (counting) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) {
    note();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    note();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    note();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    note();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) {
        return EINVAL;
    }
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) {
        return ENOMEM;
    }
    *result = pointer;
    return 0;
}

void clubroom_allocation_counting_begin(void) { counting = 1; }
void clubroom_allocation_counting_end(void) { counting = 0; }
long clubroom_allocation_count(void) { return atomic_load(&allocations); }
