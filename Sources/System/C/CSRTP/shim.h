#ifndef CLUBROOM_CSRTP_SHIM_H
#define CLUBROOM_CSRTP_SHIM_H

#include <srtp2/srtp.h>
#include <string.h>

// The policy struct holds pointers and a linked list; building it here keeps C types out of Swift signatures.
// direction: 0 inbound, 1 outbound. ssrc: 0 means any SSRC of that direction.
static inline srtp_err_status_t clubroom_srtp_create(srtp_t *session, const unsigned char *key, int outbound,
                                                     unsigned int ssrc, unsigned long window) {
    srtp_policy_t policy;
    memset(&policy, 0, sizeof(policy));
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
    if (ssrc == 0) {
        policy.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound;
    } else {
        policy.ssrc.type = ssrc_specific;
        policy.ssrc.value = ssrc;
    }
    policy.key = (unsigned char *)key;
    policy.window_size = window;
    policy.allow_repeat_tx = 0;
    policy.next = NULL;
    return srtp_create(session, &policy);
}

// The master key and salt length of AES_CM_128_HMAC_SHA1_80.
static inline int clubroom_srtp_master_length(void) { return SRTP_AES_ICM_128_KEY_LEN_WSALT; }
// The most bytes protecting can add to a packet.
static inline int clubroom_srtp_max_trailer(void) { return SRTP_MAX_TRAILER_LEN; }

#endif
