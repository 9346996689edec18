#ifndef CLUBROOM_CEVENTPOLL_SHIM_H
#define CLUBROOM_CEVENTPOLL_SHIM_H

// Linux headers that Swift's Glibc module leaves out: epoll, eventfd and TCP socket options.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>

#endif
