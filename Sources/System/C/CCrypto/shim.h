#ifndef CLUBROOM_CCRYPTO_SHIM_H
#define CLUBROOM_CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/err.h>

// SSL_CTX_set_mode and similar are macros over SSL_CTX_ctrl.
static inline long clubroom_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long clubroom_ssl_ctx_set_min_proto_tls12(SSL_CTX *ctx) { return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline long clubroom_ssl_ctx_prefer_server_ciphers(SSL_CTX *ctx) { return (long)SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE); }
static inline long clubroom_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }

#endif
