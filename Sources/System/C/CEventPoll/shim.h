#ifndef CLUBROOM_CEVENTPOLL_SHIM_H
#define CLUBROOM_CEVENTPOLL_SHIM_H

// Linux headers that Swift's Glibc module leaves out: epoll, eventfd, TCP socket options, and malloc_trim
// (memory freed by many connections at once given back to the system).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>
#include <malloc.h>

#endif
