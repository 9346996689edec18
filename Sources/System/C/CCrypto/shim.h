#ifndef CLUBROOM_CCRYPTO_SHIM_H
#define CLUBROOM_CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

// SSL_CTX_set_mode and similar are macros over SSL_CTX_ctrl.
static inline long clubroom_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long clubroom_ssl_ctx_set_min_proto_tls12(SSL_CTX *ctx) { return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline long clubroom_ssl_ctx_prefer_server_ciphers(SSL_CTX *ctx) { return (long)SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE); }
static inline long clubroom_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }

// The names a certificate is valid for: the DNS names and IP addresses of the subjectAltName of the first
// certificate in the PEM file `path`, written into `buffer` as "D:name" and "I:address" strings one after another,
// each ended by a NUL. Returns the bytes written (names that do not fit are left out), or -1 when the file holds no
// certificate.
static inline int clubroom_certificate_names(const char *path, char *buffer, int capacity) {
    BIO *bio = BIO_new_file(path, "r");
    if (bio == NULL) return -1;
    X509 *certificate = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (certificate == NULL) return -1;
    GENERAL_NAMES *names = X509_get_ext_d2i(certificate, NID_subject_alt_name, NULL, NULL);
    int used = 0;
    for (int index = 0; names != NULL && index < sk_GENERAL_NAME_num(names); index++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, index);
        char text[300];
        if (name->type == GEN_DNS) {
            int length = ASN1_STRING_length(name->d.dNSName);
            if (length <= 0 || length > 253) continue;
            memcpy(text, "D:", 2);
            memcpy(text + 2, ASN1_STRING_get0_data(name->d.dNSName), (size_t)length);
            text[2 + length] = 0;
            if (strlen(text) != (size_t)(2 + length)) continue;
        } else if (name->type == GEN_IPADD) {
            int length = ASN1_STRING_length(name->d.iPAddress);
            int family = length == 4 ? AF_INET : length == 16 ? AF_INET6 : 0;
            memcpy(text, "I:", 2);
            if (family == 0 || inet_ntop(family, ASN1_STRING_get0_data(name->d.iPAddress), text + 2, 200) == NULL) {
                continue;
            }
        } else {
            continue;
        }
        int size = (int)strlen(text) + 1;
        if (used + size > capacity) break;
        memcpy(buffer + used, text, (size_t)size);
        used += size;
    }
    GENERAL_NAMES_free(names);
    X509_free(certificate);
    return used;
}

#endif
