#ifndef CLUBROOM_CSRTPCRYPTO_H
#define CLUBROOM_CSRTPCRYPTO_H

/// Gives libsrtp2 the AES-CM-128 cipher and the HMAC-SHA1 authentication of OpenSSL's libcrypto, in place of the
/// ones it was built with (Debian builds it on NSS, which sets up a PKCS #11 context for every packet). libsrtp
/// keeps everything else: key derivation, rollover counters, replay windows, SRTCP. Each replacement must pass
/// libsrtp's own known-answer tests for that type before libsrtp takes it.
///
/// Call after srtp_init() and before the first session. Returns 0 when both replacements were taken, or the
/// libsrtp status of the first refusal (libsrtp then keeps its own implementation of that type).
int clubroom_srtp_use_libcrypto(void);

/// Runs libsrtp's known-answer tests for AES-CM-128 and HMAC-SHA1 on the libcrypto implementations.
/// Returns 0 when both pass, or the libsrtp status of the first failure.
int clubroom_srtp_self_test(void);

#endif
