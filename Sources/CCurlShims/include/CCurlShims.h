// The daemon's use of libcurl for the opt-in connectivity check, as plain C functions Swift can
// call: curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, and the
// response body is gathered by a C write callback. libcurl itself is not linked: it is loaded
// with dlopen the first time a check is configured (CheckURL=), so a daemon with checks off
// (the default) neither loads it nor pays for its start-up and memory. Everything is prefixed
// `CReachCurl_`.
#ifndef CCURL_SHIMS_H
#define CCURL_SHIMS_H

#include <stddef.h>
#include <curl/curl.h>

/// Loads libcurl (libcurl.so.4, else libcurl-gnutls.so.4) and initialises it, unless done.
/// Returns 0 when it is ready (it stays so); else -1 with what failed in `why` (dlerror's text,
/// a missing function, "curl_global_init failed"), truncated to `whySize` bytes with its NUL.
/// A failure is not final: the next call tries again (libcurl may have been installed since).
/// Thread-safe. The corresponding C functions are `dlopen`, `dlsym` and `curl_global_init`.
int CReachCurl_load(char *why, size_t whySize);

/// The callback libcurl calls to set its one timer: -1 deletes it, else milliseconds from now.
/// `context` is the pointer given to CReachCurl_multi_new.
typedef int (*CReachCurl_TimerCallback)(long milliseconds, void *context);

/// A libcurl multi handle with an epoll instance holding the sockets libcurl wants watched.
typedef struct CReachCurl_Multi CReachCurl_Multi;

/// A multi handle calling `timerCallback`; NULL when libcurl is not loaded (see
/// CReachCurl_load) or when epoll_create1 or memory failed (*error: the negative errno, or 0).
CReachCurl_Multi *CReachCurl_multi_new(CReachCurl_TimerCallback timerCallback, void *context, int *error);
/// Closes the epoll instance and frees the handle; remove every transfer first.
void CReachCurl_multi_free(CReachCurl_Multi *multi);
/// The epoll instance's descriptor: readable when a watched socket is ready.
int CReachCurl_multi_descriptor(const CReachCurl_Multi *multi);
/// Serves every ready socket (epoll_wait without waiting, curl_multi_socket_action for each).
/// Returns 0, or the negative errno of epoll_wait or of the last failed epoll_ctl (libcurl's
/// socket callback cannot report it).
int CReachCurl_multi_serve_ready(CReachCurl_Multi *multi);
/// Tells libcurl its timer expired (curl_multi_socket_action with CURL_SOCKET_TIMEOUT).
void CReachCurl_multi_serve_timeout(CReachCurl_Multi *multi);

/// The host name a lookup must resolve before a transfer of `url`, and its port (the scheme's
/// default when the URL gives none), as libcurl reads the URL (an IDN host in punycode).
/// Returns 1 with `host` (NUL-terminated) and *port set; 0 when the host is a literal address,
/// which needs no lookup; -1 when libcurl is not loaded, cannot parse the URL, or the host is
/// longer than `hostSize` - 1. The corresponding C functions are `curl_url_set`, `curl_url_get`.
int CReachCurl_url_host(const char *url, char *host, size_t hostSize, long *port);

/// One HTTP GET of a check.
typedef struct CReachCurl_Request {
    /// The URL (http or https only).
    const char *url;
    /// 4 or 6: resolve and connect over that family only.
    int family;
    /// The interface to bind the socket to (SO_BINDTODEVICE, no fallback); NULL: none.
    const char *interfaceName;
    /// The whole transfer's limit, connection included.
    long timeoutMilliseconds;
    /// An Accept header's value; NULL: none.
    const char *accept;
    /// A CA file trusted besides the system's store; NULL: the system's store only.
    const char *caFile;
    /// The User-Agent header.
    const char *userAgent;
    /// At most this many bytes of the body are kept (the rest is read and dropped).
    size_t bodyLimit;
    /// The host's addresses, resolved by the caller, as a CURLOPT_RESOLVE entry
    /// ("HOST:PORT:ADDRESS[,ADDRESS]…", IPv6 addresses in brackets); NULL: libcurl resolves
    /// the host itself (a literal address needs no resolving).
    const char *resolve;
} CReachCurl_Request;

/// A transfer: its easy handle, its collected body and the error text libcurl left.
typedef struct CReachCurl_Transfer CReachCurl_Transfer;

/// A transfer for `request` added to `multi`; NULL (and *error set to libcurl's text or to an
/// allocation failure) when it could not be set up.
CReachCurl_Transfer *CReachCurl_transfer_start(CReachCurl_Multi *multi, const CReachCurl_Request *request, const char **error);
/// Removes the transfer from `multi` (finished or not) and frees it.
void CReachCurl_transfer_free(CReachCurl_Multi *multi, CReachCurl_Transfer *transfer);

/// The next finished transfer, with its result code (a CURLcode) in *result, 0 too for one
/// stopped at its body limit; NULL when none is left.
CReachCurl_Transfer *CReachCurl_next_done(CReachCurl_Multi *multi, int *result);

/// What a finished transfer got.
typedef struct CReachCurl_Response {
    /// The HTTP status; 0 when no response came.
    long status;
    /// The Location of a redirection, absolute; NULL without one. Valid until the transfer is freed.
    const char *redirectURL;
    /// The body's first bytes (at most the request's bodyLimit: the transfer stops there and
    /// counts as complete). Valid until the transfer is freed.
    const unsigned char *body;
    /// Their count.
    size_t bodyLength;
    /// The whole transfer's time in microseconds.
    long long totalMicroseconds;
    /// libcurl's detailed error text (may be empty). Valid until the transfer is freed.
    const char *errorText;
    /// The errno of the last failed system call of the transfer (connect...), 0 when none.
    long systemErrno;
} CReachCurl_Response;

/// Reads what `transfer` got.
CReachCurl_Response CReachCurl_response(CReachCurl_Transfer *transfer);
/// curl_easy_strerror for a CURLcode.
const char *CReachCurl_strerror(int code);
/// The CURLcode of a timeout, a failure to resolve, to connect.
extern const int CReachCurl_OPERATION_TIMEDOUT;

#endif
