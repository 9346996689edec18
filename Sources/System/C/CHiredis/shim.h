#ifndef CLUBROOM_CHIREDIS_SHIM_H
#define CLUBROOM_CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <sys/time.h>

// hiredis's command builders are variadic printf-style functions (redisCommand, redisAppendCommand), which Swift
// cannot call. These wrappers take the argv form instead: binary-safe arguments, one pointer and length each.

// Queues one command in the context's output buffer without sending it (the pipelining half of a call).
static inline int clubroom_redis_append(redisContext *context, int count, const char **arguments,
                                        const size_t *lengths) {
    return redisAppendCommandArgv(context, count, arguments, lengths);
}

// Reads the next reply, flushing the output buffer first; REDIS_OK with *reply set, or REDIS_ERR with
// context->err and context->errstr describing the failure.
static inline int clubroom_redis_next_reply(redisContext *context, redisReply **reply) {
    void *raw = NULL;
    int status = redisGetReply(context, &raw);
    *reply = (redisReply *)raw;
    return status;
}

// Sets the send and receive timeout of a blocking context (SO_SNDTIMEO and SO_RCVTIMEO) in milliseconds.
static inline int clubroom_redis_set_timeout(redisContext *context, long milliseconds) {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    return redisSetTimeout(context, tv);
}

// The error text of a context, which Swift sees as a tuple of 128 chars.
static inline const char *clubroom_redis_error_text(const redisContext *context) { return context->errstr; }

// Element `index` of an array reply.
static inline redisReply *clubroom_redis_element(const redisReply *reply, size_t index) {
    return reply->element[index];
}

#endif
