// sendmmsg, recvmmsg and struct mmsghdr need _GNU_SOURCE, which a Swift shim header cannot set before
// <sys/socket.h> is first included; this file sets it and wraps the two calls.
#define _GNU_SOURCE
#include "cmediaio.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

int clubroom_send_batch(int fd, clubroom_datagram *datagrams, unsigned int count) {
    struct mmsghdr headers[CLUBROOM_MAX_BATCH];
    struct iovec vectors[CLUBROOM_MAX_BATCH];
    if (count > CLUBROOM_MAX_BATCH) count = CLUBROOM_MAX_BATCH;
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = datagrams[i].base;
        vectors[i].iov_len = datagrams[i].length;
        memset(&headers[i], 0, sizeof(headers[i]));
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
        headers[i].msg_hdr.msg_name = datagrams[i].address;
        headers[i].msg_hdr.msg_namelen = datagrams[i].address_length;
    }
    return sendmmsg(fd, headers, count, MSG_DONTWAIT);
}

int clubroom_receive_batch(int fd, clubroom_datagram *datagrams, unsigned int count) {
    struct mmsghdr headers[CLUBROOM_MAX_BATCH];
    struct iovec vectors[CLUBROOM_MAX_BATCH];
    if (count > CLUBROOM_MAX_BATCH) count = CLUBROOM_MAX_BATCH;
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = datagrams[i].base;
        vectors[i].iov_len = datagrams[i].capacity;
        memset(&headers[i], 0, sizeof(headers[i]));
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
        headers[i].msg_hdr.msg_name = datagrams[i].address;
        headers[i].msg_hdr.msg_namelen = datagrams[i].address_length;
    }
    int received = recvmmsg(fd, headers, count, MSG_DONTWAIT, NULL);
    for (int i = 0; i < received; i++) {
        datagrams[i].length = headers[i].msg_len;
        datagrams[i].address_length = headers[i].msg_hdr.msg_namelen;
    }
    return received;
}
