#ifndef CLUBROOM_ALLOCATION_COUNTER_H
#define CLUBROOM_ALLOCATION_COUNTER_H

// Counts heap allocations made by the threads that opted in, for tests that prove a thread does not allocate.
//
// The test binary defines malloc and its siblings (see allocation_counter.c); the dynamic linker binds every
// allocation in the process, including libc's, the Swift runtime's and alsa-lib's, to these definitions.
// Each one adds to the counter the calling thread has chosen, if any, then hands the call to glibc's own
// allocator. Each test owns its counter, so tests running in parallel do not see each other's allocations.

/// From now on, allocations made by the calling thread are added to `*counter` (atomically).
void clubroom_allocation_counting_begin(long *counter);
/// Stops counting allocations made by the calling thread.
void clubroom_allocation_counting_end(void);
/// Reads a counter that threads may be adding to.
long clubroom_allocation_counter_read(const long *counter);

#endif
