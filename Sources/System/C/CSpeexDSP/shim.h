#ifndef CLUBROOM_CSPEEXDSP_SHIM_H
#define CLUBROOM_CSPEEXDSP_SHIM_H

#include <speex/speex_preprocess.h>
#include <speex/speex_echo.h>
#include <speex/speex_resampler.h>

// speex_preprocess_ctl and speex_echo_ctl take their argument through a void pointer whose type depends on the
// request; these wrappers give Swift one typed function per request it uses.
static inline int clubroom_speex_preprocess_set_int(SpeexPreprocessState *st, int request, spx_int32_t value) {
    return speex_preprocess_ctl(st, request, &value);
}
static inline int clubroom_speex_preprocess_set_float(SpeexPreprocessState *st, int request, float value) {
    return speex_preprocess_ctl(st, request, &value);
}
static inline int clubroom_speex_preprocess_get_int(SpeexPreprocessState *st, int request, spx_int32_t *value) {
    return speex_preprocess_ctl(st, request, value);
}
static inline int clubroom_speex_preprocess_set_echo_state(SpeexPreprocessState *st, SpeexEchoState *echo) {
    return speex_preprocess_ctl(st, SPEEX_PREPROCESS_SET_ECHO_STATE, echo);
}
static inline int clubroom_speex_echo_set_sampling_rate(SpeexEchoState *st, spx_int32_t rate) {
    return speex_echo_ctl(st, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
}

#endif
