#ifndef CLUBROOM_COPUSENC_SHIM_H
#define CLUBROOM_COPUSENC_SHIM_H

// libopusenc: writing Ogg Opus as it goes, for a room's recording and its live streams.
#include <opus/opusenc.h>

// ope_encoder_ctl is variadic; Swift calls these instead.
static inline int clubroom_ope_set_muxing_delay(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPE_SET_MUXING_DELAY(v)); }
static inline int clubroom_ope_set_decision_delay(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPE_SET_DECISION_DELAY(v)); }
static inline int clubroom_ope_set_comment_padding(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPE_SET_COMMENT_PADDING(v)); }
static inline int clubroom_ope_set_serialno(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPE_SET_SERIALNO(v)); }
static inline int clubroom_ope_set_packet_callback(OggOpusEnc *e, ope_packet_func f, void *user) { return ope_encoder_ctl(e, OPE_SET_PACKET_CALLBACK(f, user)); }
static inline int clubroom_ope_set_bitrate(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_BITRATE(v)); }
static inline int clubroom_ope_set_complexity(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_COMPLEXITY(v)); }
static inline int clubroom_ope_set_signal(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_SIGNAL(v)); }
static inline int clubroom_ope_set_vbr(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_VBR(v)); }

#endif
