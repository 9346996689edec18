#ifndef CLUBROOM_CMEDIAIO_H
#define CLUBROOM_CMEDIAIO_H

#include <stddef.h>
#include <stdint.h>

/// One datagram of a batch: its bytes and its peer address (a struct sockaddr_in or sockaddr_in6).
typedef struct clubroom_datagram {
    void *base;
    size_t capacity;
    /// Bytes to send, or bytes received.
    size_t length;
    void *address;
    uint32_t address_length;
} clubroom_datagram;

/// The most datagrams one call moves.
#define CLUBROOM_MAX_BATCH 256

/// sendmmsg(2) over the batch; returns the number sent, or -1 with errno set.
int clubroom_send_batch(int fd, clubroom_datagram *datagrams, unsigned int count);

/// recvmmsg(2) without waiting; fills length and address_length; returns the number received, or -1 with errno.
int clubroom_receive_batch(int fd, clubroom_datagram *datagrams, unsigned int count);

/// recvmmsg(2) without waiting, as clubroom_receive_batch, and for each datagram how long ago the kernel stamped
/// its arrival (SO_TIMESTAMPNS) in ages_ns, or -1 when it carries no stamp. At most 64 datagrams a call.
int clubroom_receive_batch_stamped(int fd, clubroom_datagram *datagrams, unsigned int count, int64_t *ages_ns);

/// Asks the kernel to stamp each datagram with its arrival time (SO_TIMESTAMPNS); 0, or -1 with errno.
int clubroom_enable_arrival_stamps(int fd);

/// Asks the kernel to give the calling thread time slices of `slice_ns` nanoseconds (sched_setattr(2) with
/// sched_runtime, which Linux 6.12 and later read as the thread's EEVDF slice; earlier kernels ignore it),
/// keeping its policy and nice value. Returns 0, or -1 with errno (EINVAL for a thread that is not SCHED_OTHER
/// or SCHED_BATCH).
int clubroom_set_thread_slice(uint64_t slice_ns);

/// A thread's slice as the kernel holds it (sched_getattr(2)'s sched_runtime; 0 for the calling thread), or -1
/// with errno.
int64_t clubroom_thread_slice(int tid);

#endif
