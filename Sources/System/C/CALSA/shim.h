#ifndef CLUBROOM_CALSA_SHIM_H
#define CLUBROOM_CALSA_SHIM_H

#include <alsa/asoundlib.h>

// snd_pcm_hw_params_alloca and friends are macros; these allocate on the heap instead.
static inline int clubroom_snd_pcm_hw_params_malloc(snd_pcm_hw_params_t **p) { return snd_pcm_hw_params_malloc(p); }
static inline int clubroom_snd_pcm_sw_params_malloc(snd_pcm_sw_params_t **p) { return snd_pcm_sw_params_malloc(p); }

// alsa-lib prints its own errors to stderr through a variadic handler; this silences it so that errors
// reach the person once, through our own messages, and never scribble over the terminal UI.
static void clubroom_snd_silent_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline int clubroom_snd_silence_errors(void) { return snd_lib_error_set_handler(clubroom_snd_silent_handler); }

#endif
