#ifndef CLUBROOM_CFFMPEG_SHIM_H
#define CLUBROOM_CFFMPEG_SHIM_H

// FFmpeg's muxers (HLS, FLV over RTMP) and its native AAC encoder (Debian's libavformat-dev, libavcodec-dev).
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>

// AVERROR and its tags are macros Swift does not import.
static inline int clubroom_averror_eof(void) { return AVERROR_EOF; }
static inline int clubroom_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int clubroom_averror_exit(void) { return AVERROR_EXIT; }
static inline int clubroom_averror_errno(int averror) { return averror < 0 && averror > -4096 ? -averror : 0; }

#endif
