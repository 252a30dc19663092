#ifndef VAULTSYNC_CCRYPTO_SHIM_H
#define VAULTSYNC_CCRYPTO_SHIM_H
/* OpenSSL's libcrypto: already loaded by libcurl (OpenSSL flavour); used only to compute the SHA-256 pin of
   Syncthing's https-cert.pem public key. */
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/err.h>
#endif
