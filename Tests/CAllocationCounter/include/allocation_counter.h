#ifndef CLUBROOM_ALLOCATION_COUNTER_H
#define CLUBROOM_ALLOCATION_COUNTER_H

// Counts heap allocations made by the threads that opted in, for tests that prove a thread does not allocate.
//
// The test binary defines malloc and its siblings (see allocation_counter.c); the dynamic linker binds every
// allocation in the process, including libc's, the Swift runtime's and alsa-lib's, to these definitions.
// Each one adds to a process-wide counter when the calling thread has switched counting on, then hands the
// call to glibc's own allocator.

/// Starts counting allocations made by the calling thread.
void clubroom_allocation_counting_begin(void);
/// Stops counting allocations made by the calling thread.
void clubroom_allocation_counting_end(void);
/// Allocations made so far by counting threads.
long clubroom_allocation_count(void);

#endif
