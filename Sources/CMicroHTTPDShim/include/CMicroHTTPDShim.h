// A small HTTP server API over libmicrohttpd for VendHTTP (the kiosk and the back office). Swift
// sees only this header: libmicrohttpd's start function and connection queries are C varargs,
// and its access handler is called several times per request (headers, body pieces, end). Here a
// request reaches the handler once, whole, with its body (at most `max_body` bytes, announced by
// Content-Length: a larger one is answered 413 before it is read, a chunked one 411). The handler runs on
// libmicrohttpd's internal thread; it may answer there, or defer the request and answer it later
// from any thread (the connection waits, suspended, without holding the server). An answer may
// be a stream: server-sent events pushed with vhttp_stream_send until the client goes.
#ifndef CMICROHTTPDSHIM_H
#define CMICROHTTPDSHIM_H

#include <stddef.h>

typedef struct vhttp_server vhttp_server;
typedef struct vhttp_request vhttp_request;
typedef struct vhttp_stream vhttp_stream;

// Called once per complete request; it answers with vhttp_respond or vhttp_respond_stream, or
// calls vhttp_defer and answers later (else the client gets 500).
typedef void (*vhttp_handler)(void *context, vhttp_request *request);

typedef struct vhttp_limits {
    // Bodies above this are answered 413.
    size_t max_body;
    // Connections at once (libmicrohttpd leaves more in the kernel's backlog).
    unsigned connections;
    // A connection with no byte read or written for this long is closed (a suspended one waits).
    unsigned timeout_seconds;
    // Each connection's memory pool: the request line and headers must fit (else 414 or 431).
    size_t connection_memory;
    // Event streams at once; vhttp_respond_stream refuses more.
    unsigned streams;
    // Messages a stream keeps for a client that reads slowly; older ones are dropped first.
    unsigned stream_backlog;
    // Every stream gets a comment (": ") this often: the browser ignores it, and a client that
    // went away is found out by the write (a quiet stream is suspended, and libmicrohttpd does
    // not watch a suspended connection).
    unsigned heartbeat_seconds;
} vhttp_limits;

// Listens on `address` (an IPv4 or IPv6 literal) and `port` with one internal thread (epoll on
// Linux). NULL on failure, with the reason in `error`.
vhttp_server *vhttp_start(const char *address, unsigned port, vhttp_limits limits, vhttp_handler handler, void *context, char *error,
                          size_t error_size);
// Waits for deferred requests to be answered, ends every stream, closes every connection and
// joins the thread: no handler runs after it.
void vhttp_stop(vhttp_server *server);
// The port listened on (the one asked, or the kernel's choice for 0).
unsigned vhttp_port(const vhttp_server *server);
// Event streams open now.
unsigned vhttp_stream_count(vhttp_server *server);
// The standard reason phrase of `status` ("Not Found").
const char *vhttp_reason(unsigned status);

const char *vhttp_method(const vhttp_request *request);
// The path, percent-decoded by libmicrohttpd, without the query.
const char *vhttp_path(const vhttp_request *request);
// A request header (case-insensitive name), or NULL.
const char *vhttp_header(const vhttp_request *request, const char *name);
// A query argument, percent-decoded, or NULL.
const char *vhttp_argument(const vhttp_request *request, const char *name);
const void *vhttp_body(const vhttp_request *request, size_t *length);
// The peer's address as text ("127.0.0.1", "::1"), or "" when unknown.
const char *vhttp_client_address(const vhttp_request *request);

// From the handler, on the server's thread: the answer comes later, from any thread. The
// request stays valid until it is answered; the server's thread goes on with other clients. -1
// when the server is stopping: answer now instead.
int vhttp_defer(vhttp_request *request);
// Answers: `headers` holds `count` names and values alternately. 0 on success. The request is
// gone after it.
int vhttp_respond(vhttp_request *request, unsigned status, const char *const *headers, size_t count, const void *body, size_t length);
// Answers 200 with `headers` and a body that vhttp_stream_send writes until the client goes or
// the server stops. NULL when `streams` are open already (answer something else then). The
// stream is the caller's until vhttp_stream_release; the request is gone after it.
vhttp_stream *vhttp_respond_stream(vhttp_request *request, const char *const *headers, size_t count);
// Queues one whole message for the client; what a slow client has not taken beyond
// `stream_backlog` messages is dropped, oldest first (`*dropped` says how many). -1 once the
// client has gone (release the stream), else 0.
int vhttp_stream_send(vhttp_stream *stream, const void *bytes, size_t length, unsigned *dropped);
void vhttp_stream_release(vhttp_stream *stream);

#endif
