#include "allocation_counter.h"

#include <errno.h>
#include <stddef.h>

// glibc exports its allocator under these names as well, so the wrappers need no dlsym (which allocates).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

// initial-exec: reading the thread's counter must not itself allocate thread-local storage inside malloc.
static __thread long *thread_counter __attribute__((tls_model("initial-exec")));

static inline void note(void) {
    long *counter = thread_counter;
    if (counter != NULL) {
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
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

void clubroom_allocation_counting_begin(long *counter) { thread_counter = counter; }
void clubroom_allocation_counting_end(void) { thread_counter = NULL; }
long clubroom_allocation_counter_read(const long *counter) { return __atomic_load_n(counter, __ATOMIC_RELAXED); }
