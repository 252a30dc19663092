#ifndef VAULTSYNC_CCURL_SHIM_H
#define VAULTSYNC_CCURL_SHIM_H
#include <curl/curl.h>

/* libcurl's curl_easy_setopt and curl_easy_getinfo are variadic and cannot be called from Swift.
   These typed wrappers pass exactly the argument type each option documents (long, char*, void*,
   curl_slist*, callback), which is what the variadic ABI requires. */

static inline CURLcode vs_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

static inline CURLcode vs_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode vs_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode vs_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode vs_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}

static inline CURLcode vs_curl_setopt_writefunction(CURL *h, curl_write_callback f) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f);
}

static inline CURLcode vs_curl_setopt_headerfunction(CURL *h, curl_write_callback f) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f);
}

/* Allow only http and https, for the request and for redirects. CURLOPT_PROTOCOLS_STR needs libcurl 7.85;
   with an older library (Ubuntu 22.04 ships 7.81) the same restriction is set through the deprecated bitmask
   options, so the restriction is never silently dropped. */
static inline CURLcode vs_curl_allow_http_only(CURL *h) {
    CURLcode rc;
#if LIBCURL_VERSION_NUM >= 0x075500
    rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    if (rc != CURLE_UNKNOWN_OPTION) return rc;
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#pragma GCC diagnostic pop
    return rc;
}

static inline CURLcode vs_curl_getinfo_long(CURL *h, CURLINFO i, long *out) { return curl_easy_getinfo(h, i, out); }

/* CURLMsg.data is a union; read the CURLcode member without relying on how Swift imports unions. */
static inline CURLcode vs_curl_msg_result(const CURLMsg *m) { return m->data.result; }
/* An open-socket callback that opens nothing: the transfer fails with CURLE_COULDNT_CONNECT instead of connecting. */
static inline curl_socket_t vs_curl_no_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)clientp; (void)purpose; (void)address;
    return CURL_SOCKET_BAD;
}
/* Makes the transfer use a kept-alive connection or fail: no new connection is opened. */
static inline CURLcode vs_curl_forbid_new_connection(CURL *h) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, vs_curl_no_socket);
}
// curl_multi_setopt is variadic too.
static inline CURLMcode vs_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

#endif
