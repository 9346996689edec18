// sendmmsg, recvmmsg and struct mmsghdr need _GNU_SOURCE, which a Swift shim header cannot set before
// <sys/socket.h> is first included; this file sets it and wraps the two calls.
#define _GNU_SOURCE
#include "cmediaio.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Points each header at its datagram: its bytes (`length` of them to send, or `capacity` to receive into) and
/// its address.
static void point_headers(struct mmsghdr *headers, struct iovec *vectors, clubroom_datagram *datagrams,
                          unsigned int count, int receiving) {
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = datagrams[i].base;
        vectors[i].iov_len = receiving ? datagrams[i].capacity : datagrams[i].length;
        memset(&headers[i], 0, sizeof(headers[i]));
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
        headers[i].msg_hdr.msg_name = datagrams[i].address;
        headers[i].msg_hdr.msg_namelen = datagrams[i].address_length;
    }
}

int clubroom_send_batch(int fd, clubroom_datagram *datagrams, unsigned int count) {
    struct mmsghdr headers[CLUBROOM_MAX_BATCH];
    struct iovec vectors[CLUBROOM_MAX_BATCH];
    if (count > CLUBROOM_MAX_BATCH) count = CLUBROOM_MAX_BATCH;
    point_headers(headers, vectors, datagrams, count, 0);
    return sendmmsg(fd, headers, count, MSG_DONTWAIT);
}

int clubroom_receive_batch(int fd, clubroom_datagram *datagrams, unsigned int count) {
    struct mmsghdr headers[CLUBROOM_MAX_BATCH];
    struct iovec vectors[CLUBROOM_MAX_BATCH];
    if (count > CLUBROOM_MAX_BATCH) count = CLUBROOM_MAX_BATCH;
    point_headers(headers, vectors, datagrams, count, 1);
    int received = recvmmsg(fd, headers, count, MSG_DONTWAIT, NULL);
    for (int i = 0; i < received; i++) {
        datagrams[i].length = headers[i].msg_len;
        datagrams[i].address_length = headers[i].msg_hdr.msg_namelen;
    }
    return received;
}

/// The arrival stamp a received message carries, as its age against `now` (both CLOCK_REALTIME, as
/// SO_TIMESTAMPNS stamps); -1 without one.
static int64_t stamp_age(struct msghdr *header, const struct timespec *now) {
    for (struct cmsghdr *message = CMSG_FIRSTHDR(header); message; message = CMSG_NXTHDR(header, message)) {
        if (message->cmsg_level != SOL_SOCKET || message->cmsg_type != SCM_TIMESTAMPNS) continue;
        struct timespec stamp;
        memcpy(&stamp, CMSG_DATA(message), sizeof stamp);
        return (int64_t)(now->tv_sec - stamp.tv_sec) * 1000000000 + (now->tv_nsec - stamp.tv_nsec);
    }
    return -1;
}

#define CLUBROOM_MAX_STAMPED_BATCH 64

int clubroom_receive_batch_stamped(int fd, clubroom_datagram *datagrams, unsigned int count, int64_t *ages_ns) {
    struct mmsghdr headers[CLUBROOM_MAX_STAMPED_BATCH];
    struct iovec vectors[CLUBROOM_MAX_STAMPED_BATCH];
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } controls[CLUBROOM_MAX_STAMPED_BATCH];
    if (count > CLUBROOM_MAX_STAMPED_BATCH) count = CLUBROOM_MAX_STAMPED_BATCH;
    point_headers(headers, vectors, datagrams, count, 1);
    for (unsigned int i = 0; i < count; i++) {
        headers[i].msg_hdr.msg_control = controls[i].bytes;
        headers[i].msg_hdr.msg_controllen = sizeof controls[i].bytes;
    }
    int received = recvmmsg(fd, headers, count, MSG_DONTWAIT, NULL);
    if (received <= 0) return received;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (int i = 0; i < received; i++) {
        datagrams[i].length = headers[i].msg_len;
        datagrams[i].address_length = headers[i].msg_hdr.msg_namelen;
        ages_ns[i] = stamp_age(&headers[i].msg_hdr, &now);
    }
    return received;
}

int clubroom_enable_arrival_stamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}

/// sched_attr as the kernel reads it (its first version, 48 bytes; glibc 2.36 declares none).
struct clubroom_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

int clubroom_set_thread_slice(uint64_t slice_ns) {
    // The thread's policy, nice value and flags stay as they are: only the slice changes. A thread under a
    // real-time or idle policy has no slice to set.
    struct clubroom_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return -1;
    if (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH) {
        errno = EINVAL;
        return -1;
    }
    attr.size = sizeof attr;
    attr.sched_runtime = slice_ns;
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}

int64_t clubroom_thread_slice(int tid) {
    struct clubroom_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, tid, &attr, sizeof attr, 0) != 0) return -1;
    return (int64_t)attr.sched_runtime;
}
