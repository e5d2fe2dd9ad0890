#include "CCurlShims.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

// The libcurl functions the daemon uses, resolved from the loaded library.
static struct {
    CURLcode (*global_init)(long);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
    CURLSHcode (*share_cleanup)(CURLSH *);
    CURLU *(*url)(void);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
    void (*url_cleanup)(CURLU *);
    void (*free)(void *);
} curl;

// Guards the loading below: CReachCurl_load may be called from any thread.
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
// The library, once dlopen and every dlsym succeeded (it stays loaded).
static void *library;
// curl_global_init succeeded: libcurl is ready for good.
static int initialised;

#define RESOLVE(field, name)                                          \
    do {                                                              \
        *(void **)(&curl.field) = dlsym(handle, name);                \
        if (curl.field == NULL) {                                     \
            snprintf(why, whySize, "%s lacks %s", soname, name);      \
            dlclose(handle);                                          \
            return -1;                                                \
        }                                                             \
    } while (0)

// One attempt, under load_lock: opens the library unless it is open, then initialises it.
// A library lacking a function is closed again (a newer one may be installed before the next
// attempt); one whose initialisation failed stays open and is initialised again next time.
static int load(char *why, size_t whySize) {
    if (library == NULL) {
        const char *soname = "libcurl.so.4";
        void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            soname = "libcurl-gnutls.so.4";
            handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        }
        if (handle == NULL) {
            const char *error = dlerror();
            snprintf(why, whySize, "%s", error ? error : "dlopen libcurl.so.4 failed");
            return -1;
        }
        RESOLVE(global_init, "curl_global_init");
        RESOLVE(multi_init, "curl_multi_init");
        RESOLVE(multi_setopt, "curl_multi_setopt");
        RESOLVE(multi_add_handle, "curl_multi_add_handle");
        RESOLVE(multi_remove_handle, "curl_multi_remove_handle");
        RESOLVE(multi_socket_action, "curl_multi_socket_action");
        RESOLVE(multi_info_read, "curl_multi_info_read");
        RESOLVE(multi_cleanup, "curl_multi_cleanup");
        RESOLVE(multi_assign, "curl_multi_assign");
        RESOLVE(easy_init, "curl_easy_init");
        RESOLVE(easy_setopt, "curl_easy_setopt");
        RESOLVE(easy_getinfo, "curl_easy_getinfo");
        RESOLVE(easy_cleanup, "curl_easy_cleanup");
        RESOLVE(easy_strerror, "curl_easy_strerror");
        RESOLVE(slist_append, "curl_slist_append");
        RESOLVE(slist_free_all, "curl_slist_free_all");
        RESOLVE(share_init, "curl_share_init");
        RESOLVE(share_setopt, "curl_share_setopt");
        RESOLVE(share_cleanup, "curl_share_cleanup");
        RESOLVE(url, "curl_url");
        RESOLVE(url_set, "curl_url_set");
        RESOLVE(url_get, "curl_url_get");
        RESOLVE(url_cleanup, "curl_url_cleanup");
        RESOLVE(free, "curl_free");
        library = handle;
    }
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(why, whySize, "curl_global_init failed");
        return -1;
    }
    initialised = 1;
    return 0;
}

int CReachCurl_load(char *why, size_t whySize) {
    pthread_mutex_lock(&load_lock);
    int result = initialised ? 0 : load(why, whySize);
    pthread_mutex_unlock(&load_lock);
    return result;
}

// Whether libcurl is ready (loading it if it is not), for the functions below, which Swift
// calls only once CReachCurl_load succeeded.
static int ready(void) {
    char why[1];
    return CReachCurl_load(why, sizeof why) == 0;
}

struct CReachCurl_Multi {
    CURLM *handle;
    int epoll;
    int epollError;
    CReachCurl_TimerCallback timerCallback;
    void *context;
};

// libcurl's socket callback: the socket joins, changes in or leaves the epoll set.
static int on_socket(CURL *easy, curl_socket_t socket, int what, void *userp, void *socketp) {
    (void)easy;
    CReachCurl_Multi *multi = userp;
    if (what == CURL_POLL_REMOVE) {
        // (libcurl may have closed it already, which removed it: ENOENT and EBADF are fine.)
        if (epoll_ctl(multi->epoll, EPOLL_CTL_DEL, socket, NULL) < 0 && errno != ENOENT && errno != EBADF) multi->epollError = errno;
        curl.multi_assign(multi->handle, socket, NULL);
        return 0;
    }
    struct epoll_event event = {.events = 0, .data.fd = socket};
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    // socketp is non-NULL once the socket is in the set (curl_multi_assign below).
    if (epoll_ctl(multi->epoll, socketp != NULL ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket, &event) < 0) {
        multi->epollError = errno;
        return 0;
    }
    if (socketp == NULL) curl.multi_assign(multi->handle, socket, multi);
    return 0;
}

static int on_timer(CURLM *handle, long milliseconds, void *userp) {
    (void)handle;
    CReachCurl_Multi *multi = userp;
    return multi->timerCallback(milliseconds, multi->context);
}

CReachCurl_Multi *CReachCurl_multi_new(CReachCurl_TimerCallback timerCallback, void *context, int *error) {
    *error = 0;
    if (!ready()) return NULL;
    CReachCurl_Multi *multi = calloc(1, sizeof *multi);
    if (multi == NULL) return NULL;
    multi->epoll = epoll_create1(EPOLL_CLOEXEC);
    if (multi->epoll < 0) {
        *error = -errno;
        free(multi);
        return NULL;
    }
    multi->handle = curl.multi_init();
    if (multi->handle == NULL) {
        close(multi->epoll);
        free(multi);
        return NULL;
    }
    multi->timerCallback = timerCallback;
    multi->context = context;
    curl.multi_setopt(multi->handle, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl.multi_setopt(multi->handle, CURLMOPT_SOCKETDATA, multi);
    curl.multi_setopt(multi->handle, CURLMOPT_TIMERFUNCTION, on_timer);
    curl.multi_setopt(multi->handle, CURLMOPT_TIMERDATA, multi);
    return multi;
}

void CReachCurl_multi_free(CReachCurl_Multi *multi) {
    curl.multi_cleanup(multi->handle);
    close(multi->epoll);
    free(multi);
}

int CReachCurl_multi_descriptor(const CReachCurl_Multi *multi) {
    return multi->epoll;
}

int CReachCurl_multi_serve_ready(CReachCurl_Multi *multi) {
    struct epoll_event events[16];
    int count = epoll_wait(multi->epoll, events, 16, 0);
    if (count < 0) return errno == EINTR ? 0 : -errno;
    int running = 0;
    for (int i = 0; i < count; i++) {
        int flags = 0;
        if (events[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
        curl.multi_socket_action(multi->handle, events[i].data.fd, flags, &running);
    }
    int failure = multi->epollError;
    multi->epollError = 0;
    return failure != 0 ? -failure : 0;
}

void CReachCurl_multi_serve_timeout(CReachCurl_Multi *multi) {
    int running = 0;
    curl.multi_socket_action(multi->handle, CURL_SOCKET_TIMEOUT, 0, &running);
}

int CReachCurl_url_host(const char *url, char *host, size_t hostSize, long *port) {
    if (!ready()) return -1;
    CURLU *parsed = curl.url();
    if (parsed == NULL) return -1;
    char *name = NULL;
    char *number = NULL;
    int found = -1;
    // CURLU_PUNYCODE: an IDN host as libcurl resolves it, and keys its DNS cache.
    if (curl.url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK && curl.url_get(parsed, CURLUPART_HOST, &name, CURLU_PUNYCODE) == CURLUE_OK
        && curl.url_get(parsed, CURLUPART_PORT, &number, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        struct in_addr ipv4;
        // libcurl gives an IPv6 literal in brackets; neither kind of literal is resolved.
        if (name[0] == '[' || inet_pton(AF_INET, name, &ipv4) == 1) {
            found = 0;
        } else if (strlen(name) < hostSize) {
            strcpy(host, name);
            *port = strtol(number, NULL, 10);
            found = 1;
        }
    }
    curl.free(name);
    curl.free(number);
    curl.url_cleanup(parsed);
    return found;
}

struct CReachCurl_Transfer {
    CURL *easy;
    // The transfer's own DNS cache, holding only its CURLOPT_RESOLVE entry: in the multi
    // handle's shared cache, the other family's entry for the same host and port would replace it.
    CURLSH *dnsCache;
    struct curl_slist *headers;
    struct curl_slist *resolve;
    unsigned char *body;
    size_t bodyLength;
    size_t bodyLimit;
    // The body went past bodyLimit and the transfer was stopped there, on purpose.
    int stoppedAtLimit;
    char errorText[CURL_ERROR_SIZE];
};

// Frees a transfer that is not (or no longer) in a multi handle.
static void discard(CReachCurl_Transfer *transfer) {
    if (transfer->easy != NULL) curl.easy_cleanup(transfer->easy);
    if (transfer->dnsCache != NULL) curl.share_cleanup(transfer->dnsCache);
    curl.slist_free_all(transfer->headers);
    curl.slist_free_all(transfer->resolve);
    free(transfer->body);
    free(transfer);
}

// Keeps the body's first bodyLimit bytes and stops the transfer there: a check judges the
// first bytes, and an endless body (a broken or hostile server) must not be downloaded until
// the timeout, on what may be a metered link.
static size_t on_body(char *data, size_t size, size_t count, void *userp) {
    CReachCurl_Transfer *transfer = userp;
    size_t length = size * count;
    size_t room = transfer->bodyLimit - transfer->bodyLength;
    size_t kept = length < room ? length : room;
    if (kept > 0) {
        memcpy(transfer->body + transfer->bodyLength, data, kept);
        transfer->bodyLength += kept;
    }
    if (kept < length) {
        transfer->stoppedAtLimit = 1;
        return 0;  // CURLE_WRITE_ERROR, which CReachCurl_next_done reports as a success
    }
    return length;
}

CReachCurl_Transfer *CReachCurl_transfer_start(CReachCurl_Multi *multi, const CReachCurl_Request *request, const char **error) {
    *error = NULL;
    CReachCurl_Transfer *transfer = calloc(1, sizeof *transfer);
    if (transfer != NULL) transfer->body = malloc(request->bodyLimit > 0 ? request->bodyLimit : 1);
    if (transfer == NULL || transfer->body == NULL || (transfer->easy = curl.easy_init()) == NULL) {
        if (transfer != NULL) discard(transfer);
        *error = "out of memory";
        return NULL;
    }
    transfer->bodyLimit = request->bodyLimit;
    CURL *easy = transfer->easy;
    CURLcode code = CURLE_OK;
#define SET(option, value) \
    if (code == CURLE_OK) code = curl.easy_setopt(easy, option, value)
    SET(CURLOPT_URL, request->url);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_IPRESOLVE, request->family == 6 ? (long)CURL_IPRESOLVE_V6 : (long)CURL_IPRESOLVE_V4);
    SET(CURLOPT_TIMEOUT_MS, request->timeoutMilliseconds);
    SET(CURLOPT_NOSIGNAL, 1L);
    // Never wait for a resolver thread, should libcurl start one (the caller resolves host
    // names; only a URL it could not read is left to libcurl): a transfer removed or timed out
    // while getaddrinfo() is still waiting for a silent nameserver (up to 30 s with glibc's
    // defaults) would hold the daemon's queue for as long. The thread would finish alone.
    SET(CURLOPT_QUICK_EXIT, 1L);
    if (code == CURLE_OK && request->resolve != NULL) {
        transfer->dnsCache = curl.share_init();
        transfer->resolve = curl.slist_append(NULL, request->resolve);
        if (transfer->dnsCache == NULL || transfer->resolve == NULL) {
            discard(transfer);
            *error = "out of memory";
            return NULL;
        }
        if (curl.share_setopt(transfer->dnsCache, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK) code = CURLE_FAILED_INIT;
        SET(CURLOPT_SHARE, transfer->dnsCache);
        SET(CURLOPT_RESOLVE, transfer->resolve);
    }
    // Every check asks the network anew: no connection or DNS answer kept from the last one.
    SET(CURLOPT_FRESH_CONNECT, 1L);
    SET(CURLOPT_FORBID_REUSE, 1L);
    SET(CURLOPT_DNS_CACHE_TIMEOUT, 0L);
    // A redirection is the answer (a portal), not something to follow; no proxy from the
    // environment: the check is about this host's own path.
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_USERAGENT, request->userAgent);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, transfer);
    SET(CURLOPT_PRIVATE, transfer);
    SET(CURLOPT_ERRORBUFFER, transfer->errorText);
    if (request->caFile != NULL) SET(CURLOPT_CAINFO, request->caFile);
    if (request->interfaceName != NULL) {
        // "if!NAME": bind to the device (SO_BINDTODEVICE) and never fall back to an address.
        char device[64];
        snprintf(device, sizeof device, "if!%s", request->interfaceName);
        SET(CURLOPT_INTERFACE, device);
    }
    if (code == CURLE_OK && request->accept != NULL) {
        char header[256];
        snprintf(header, sizeof header, "Accept: %s", request->accept);
        transfer->headers = curl.slist_append(NULL, header);
        SET(CURLOPT_HTTPHEADER, transfer->headers);
    }
#undef SET
    if (code != CURLE_OK || curl.multi_add_handle(multi->handle, easy) != CURLM_OK) {
        *error = code != CURLE_OK ? curl.easy_strerror(code) : "curl_multi_add_handle failed";
        discard(transfer);
        return NULL;
    }
    return transfer;
}

void CReachCurl_transfer_free(CReachCurl_Multi *multi, CReachCurl_Transfer *transfer) {
    curl.multi_remove_handle(multi->handle, transfer->easy);
    discard(transfer);
}

CReachCurl_Transfer *CReachCurl_next_done(CReachCurl_Multi *multi, int *result) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl.multi_info_read(multi->handle, &left)) != NULL) {
        if (message->msg != CURLMSG_DONE) continue;
        CReachCurl_Transfer *transfer = NULL;
        curl.easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&transfer);
        *result = message->data.result;
        if (*result == CURLE_WRITE_ERROR && transfer != NULL && transfer->stoppedAtLimit) *result = CURLE_OK;
        if (transfer != NULL) return transfer;
    }
    return NULL;
}

CReachCurl_Response CReachCurl_response(CReachCurl_Transfer *transfer) {
    CReachCurl_Response response = {0};
    curl.easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &response.status);
    char *redirect = NULL;
    if (curl.easy_getinfo(transfer->easy, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK) response.redirectURL = redirect;
    curl_off_t total = 0;
    if (curl.easy_getinfo(transfer->easy, CURLINFO_TOTAL_TIME_T, &total) == CURLE_OK) response.totalMicroseconds = total;
    response.body = transfer->body;
    response.bodyLength = transfer->bodyLength;
    response.errorText = transfer->errorText;
    curl.easy_getinfo(transfer->easy, CURLINFO_OS_ERRNO, &response.systemErrno);
    return response;
}

const char *CReachCurl_strerror(int code) {
    return ready() ? curl.easy_strerror((CURLcode)code) : "libcurl is not loaded";
}

const int CReachCurl_OPERATION_TIMEDOUT = CURLE_OPERATION_TIMEDOUT;
