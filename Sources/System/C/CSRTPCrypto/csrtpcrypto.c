// libsrtp2's AES-CM-128 and HMAC-SHA1 on OpenSSL's libcrypto, registered with libsrtp's own replacement calls
// (srtp_replace_cipher_type, srtp_replace_auth_type). Only the primitives change: the SRTP transform around them
// is libsrtp's. The contexts are made once per libsrtp cipher or authenticator (per stream and direction) and
// keyed once; per packet, AES-CM only counts on from a new IV and HMAC restarts from the keyed pad states.
// The SHA-1 calls HMAC is built on are deprecated in OpenSSL 3 (see below); this file alone uses them.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "csrtpcrypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <srtp2/auth.h>
#include <srtp2/cipher.h>
#include <srtp2/srtp.h>
#include <stdlib.h>
#include <string.h>

// libsrtp exports its own known-answer cases; a replacement must pass them.
extern const srtp_cipher_test_case_t srtp_aes_icm_128_test_case_0;
extern const srtp_auth_test_case_t srtp_hmac_test_case_0;

enum { aes_key_length = 16, salt_length = 14, block_length = 16, sha1_length = 20 };

// The two types, defined below; each allocation points back at its type.
static const srtp_cipher_type_t clubroom_aes_cm_128;
static const srtp_auth_type_t clubroom_hmac_sha1;

// MARK: AES-CM-128 (RFC 3711 4.1.1): AES-128 in counter mode, the counter starting at (salt XOR IV) << 16.
//
// The keystream is AES-128-ECB over the counter blocks, made here: the ECB context is keyed once and never
// re-initialised, where giving OpenSSL 3's CTR context a new IV per packet looked up its parameters by name.

// Counter blocks encrypted per call into libcrypto (a 1,500-byte packet is 94 blocks: three calls).
enum { keystream_blocks = 32 };

typedef struct {
    EVP_CIPHER_CTX *context;
    // The session salt, padded to a block with two zero bytes: XORed with each packet's IV.
    uint8_t offset[block_length];
    // The next counter block to encrypt.
    uint8_t counter[block_length];
    // The last keystream block made, and how many of its bytes are used (block_length: none left).
    uint8_t keystream[block_length];
    unsigned int used;
} aes_cm_state;

static srtp_err_status_t aes_cm_dealloc(srtp_cipher_t *cipher) {
    if (cipher == NULL) return srtp_err_status_ok;
    aes_cm_state *state = cipher->state;
    if (state != NULL) {
        EVP_CIPHER_CTX_free(state->context);
        OPENSSL_cleanse(state, sizeof(*state));
        free(state);
    }
    free(cipher);
    return srtp_err_status_ok;
}

static srtp_err_status_t aes_cm_alloc(srtp_cipher_t **result, int key_length, int tag_length) {
    (void)tag_length;
    if (key_length != SRTP_AES_ICM_128_KEY_LEN_WSALT) return srtp_err_status_bad_param;
    srtp_cipher_t *cipher = calloc(1, sizeof(*cipher));
    aes_cm_state *state = calloc(1, sizeof(*state));
    if (cipher == NULL || state == NULL) {
        free(cipher);
        free(state);
        return srtp_err_status_alloc_fail;
    }
    cipher->state = state;
    state->context = EVP_CIPHER_CTX_new();
    if (state->context == NULL) {
        aes_cm_dealloc(cipher);
        return srtp_err_status_alloc_fail;
    }
    state->used = block_length;
    cipher->type = &clubroom_aes_cm_128;
    cipher->algorithm = SRTP_AES_ICM_128;
    cipher->key_len = key_length;
    *result = cipher;
    return srtp_err_status_ok;
}

// The key is 16 bytes of AES key followed by 14 of salt.
static srtp_err_status_t aes_cm_init(void *opaque, const uint8_t *key) {
    aes_cm_state *state = opaque;
    memset(state->offset, 0, sizeof(state->offset));
    memcpy(state->offset, key + aes_key_length, salt_length);
    memcpy(state->counter, state->offset, sizeof(state->counter));
    state->used = block_length;
    if (EVP_EncryptInit_ex(state->context, EVP_aes_128_ecb(), NULL, key, NULL) != 1) {
        return srtp_err_status_init_fail;
    }
    // Whole blocks in, whole blocks out: nothing held back for padding.
    if (EVP_CIPHER_CTX_set_padding(state->context, 0) != 1) return srtp_err_status_init_fail;
    return srtp_err_status_ok;
}

static srtp_err_status_t aes_cm_set_iv(void *opaque, uint8_t *iv, srtp_cipher_direction_t direction) {
    (void)direction;  // counter mode: the same keystream both ways
    aes_cm_state *state = opaque;
    for (int index = 0; index < block_length; index++) state->counter[index] = state->offset[index] ^ iv[index];
    state->used = block_length;
    return srtp_err_status_ok;
}

// The counter as one 128-bit big-endian number, plus one (as OpenSSL's CTR mode counts).
static void aes_cm_increment(uint8_t *counter) {
    for (int index = block_length - 1; index >= 0; index--) {
        if (++counter[index] != 0) break;
    }
}

// Encrypts `blocks` counter blocks into `keystream`, counting on from the state's counter.
static int aes_cm_keystream(aes_cm_state *state, uint8_t *keystream, unsigned int blocks) {
    uint8_t counters[keystream_blocks * block_length];
    for (unsigned int block = 0; block < blocks; block++) {
        memcpy(counters + block * block_length, state->counter, block_length);
        aes_cm_increment(state->counter);
    }
    int written = 0;
    int wanted = (int)(blocks * block_length);
    return EVP_EncryptUpdate(state->context, keystream, &written, counters, wanted) == 1 && written == wanted;
}

static srtp_err_status_t aes_cm_encrypt(void *opaque, uint8_t *buffer, unsigned int *length) {
    aes_cm_state *state = opaque;
    unsigned int done = 0;
    unsigned int total = *length;
    // What is left of the last block's keystream first (a call that ended inside a block).
    while (state->used < block_length && done < total) buffer[done++] ^= state->keystream[state->used++];
    uint8_t keystream[keystream_blocks * block_length];
    while (total - done >= block_length) {
        unsigned int blocks = (total - done) / block_length;
        if (blocks > keystream_blocks) blocks = keystream_blocks;
        if (!aes_cm_keystream(state, keystream, blocks)) return srtp_err_status_cipher_fail;
        for (unsigned int index = 0; index < blocks * block_length; index++) buffer[done + index] ^= keystream[index];
        done += blocks * block_length;
    }
    if (done < total) {
        if (!aes_cm_keystream(state, state->keystream, 1)) return srtp_err_status_cipher_fail;
        state->used = 0;
        while (done < total) buffer[done++] ^= state->keystream[state->used++];
    }
    OPENSSL_cleanse(keystream, sizeof(keystream));
    return srtp_err_status_ok;
}

static const srtp_cipher_type_t clubroom_aes_cm_128 = {
    .alloc = aes_cm_alloc,
    .dealloc = aes_cm_dealloc,
    .init = aes_cm_init,
    .set_aad = NULL,
    .encrypt = aes_cm_encrypt,
    .decrypt = aes_cm_encrypt,
    .set_iv = aes_cm_set_iv,
    .get_tag = NULL,
    .description = "AES-128 counter mode (OpenSSL libcrypto)",
    .test_data = &srtp_aes_icm_128_test_case_0,
    .id = SRTP_AES_ICM_128,
};

// MARK: HMAC-SHA1 (RFC 3711 4.2.1), its tag cut to the policy's length.
//
// HMAC by its definition (RFC 2104) over SHA-1's own state: the states after the key's inner and outer pads are
// computed once, at init, and each tag starts from a copy of them. A SHA_CTX is a plain struct, so a copy is a
// memcpy; OpenSSL 3's EVP_MAC_init and EVP_MD_CTX_copy_ex would look up parameters and allocate on each packet.
// The SHA-1 calls are deprecated in OpenSSL 3 in favour of EVP; they remain in every 3.x release.

enum { sha1_block = 64 };

typedef struct {
    SHA_CTX inner;  // after the key XOR the inner pad
    SHA_CTX outer;  // after the key XOR the outer pad
    SHA_CTX work;   // the tag being computed
} hmac_state;

static srtp_err_status_t hmac_dealloc(srtp_auth_t *auth) {
    if (auth == NULL) return srtp_err_status_ok;
    hmac_state *state = auth->state;
    if (state != NULL) {
        OPENSSL_cleanse(state, sizeof(*state));
        free(state);
    }
    free(auth);
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_alloc(srtp_auth_t **result, int key_length, int tag_length) {
    if (key_length < 0 || key_length > sha1_length || tag_length < 0 || tag_length > sha1_length) {
        return srtp_err_status_bad_param;
    }
    srtp_auth_t *auth = calloc(1, sizeof(*auth));
    hmac_state *state = calloc(1, sizeof(*state));
    if (auth == NULL || state == NULL) {
        free(auth);
        free(state);
        return srtp_err_status_alloc_fail;
    }
    auth->state = state;
    auth->type = &clubroom_hmac_sha1;
    auth->out_len = tag_length;
    auth->key_len = key_length;
    auth->prefix_len = 0;
    *result = auth;
    return srtp_err_status_ok;
}

// A key no longer than a block (SRTP's is 20 bytes) is padded with zeros to one.
static srtp_err_status_t hmac_init(void *opaque, const uint8_t *key, int key_length) {
    hmac_state *state = opaque;
    if (key_length < 0 || key_length > sha1_block) return srtp_err_status_bad_param;
    uint8_t inner_pad[sha1_block];
    uint8_t outer_pad[sha1_block];
    for (int index = 0; index < sha1_block; index++) {
        uint8_t byte = index < key_length ? key[index] : 0;
        inner_pad[index] = byte ^ 0x36;
        outer_pad[index] = byte ^ 0x5c;
    }
    int ok = SHA1_Init(&state->inner) && SHA1_Update(&state->inner, inner_pad, sha1_block) &&
             SHA1_Init(&state->outer) && SHA1_Update(&state->outer, outer_pad, sha1_block);
    OPENSSL_cleanse(inner_pad, sizeof(inner_pad));
    OPENSSL_cleanse(outer_pad, sizeof(outer_pad));
    if (!ok) return srtp_err_status_auth_fail;
    state->work = state->inner;
    return srtp_err_status_ok;
}

// Starts a new tag: the inner state after the key.
static srtp_err_status_t hmac_start(void *opaque) {
    hmac_state *state = opaque;
    state->work = state->inner;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_update(void *opaque, const uint8_t *message, int length) {
    hmac_state *state = opaque;
    if (length < 0) return srtp_err_status_bad_param;
    if (!SHA1_Update(&state->work, message, (size_t)length)) return srtp_err_status_auth_fail;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_compute(void *opaque, const uint8_t *message, int length, int tag_length,
                                      uint8_t *result) {
    hmac_state *state = opaque;
    uint8_t digest[sha1_length];
    if (tag_length < 0 || tag_length > sha1_length || length < 0) return srtp_err_status_bad_param;
    if (!SHA1_Update(&state->work, message, (size_t)length) || !SHA1_Final(digest, &state->work)) {
        return srtp_err_status_auth_fail;
    }
    state->work = state->outer;
    if (!SHA1_Update(&state->work, digest, sha1_length) || !SHA1_Final(digest, &state->work)) {
        return srtp_err_status_auth_fail;
    }
    memcpy(result, digest, (size_t)tag_length);
    OPENSSL_cleanse(digest, sizeof(digest));
    return srtp_err_status_ok;
}

static const srtp_auth_type_t clubroom_hmac_sha1 = {
    .alloc = hmac_alloc,
    .dealloc = hmac_dealloc,
    .init = hmac_init,
    .compute = hmac_compute,
    .update = hmac_update,
    .start = hmac_start,
    .description = "HMAC-SHA1 (OpenSSL libcrypto's SHA-1)",
    .test_data = &srtp_hmac_test_case_0,
    .id = SRTP_HMAC_SHA1,
};

// MARK: Registration.

int clubroom_srtp_use_libcrypto(void) {
    srtp_err_status_t status = srtp_replace_cipher_type(&clubroom_aes_cm_128, SRTP_AES_ICM_128);
    if (status != srtp_err_status_ok) return (int)status;
    return (int)srtp_replace_auth_type(&clubroom_hmac_sha1, SRTP_HMAC_SHA1);
}

int clubroom_srtp_self_test(void) {
    srtp_err_status_t status = srtp_cipher_type_self_test(&clubroom_aes_cm_128);
    if (status != srtp_err_status_ok) return (int)status;
    return (int)srtp_auth_type_self_test(&clubroom_hmac_sha1);
}
