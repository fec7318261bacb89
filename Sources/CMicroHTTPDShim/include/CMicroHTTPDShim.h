// A small HTTP server API over libmicrohttpd for the back office (VendOffice). Swift sees only
// this header: libmicrohttpd's start function and connection queries are C varargs, and its
// access handler is called several times per request (headers, body pieces, end). Here a
// request reaches the handler once, whole, with its body (at most `max_body` bytes: a larger one
// is answered 413 without it). The handler runs on libmicrohttpd's internal thread.
#ifndef CMICROHTTPDSHIM_H
#define CMICROHTTPDSHIM_H

#include <stddef.h>

typedef struct vhttp_server vhttp_server;
typedef struct vhttp_request vhttp_request;

// Called once per complete request; it answers with vhttp_respond (else the client gets 500).
typedef void (*vhttp_handler)(void *context, vhttp_request *request);

// Listens on `address` (an IPv4 or IPv6 literal) and `port` with one internal thread. NULL on
// failure, with the reason in `error`.
vhttp_server *vhttp_start(const char *address, unsigned port, size_t max_body, unsigned connection_limit,
                          unsigned timeout_seconds, vhttp_handler handler, void *context, char *error, size_t error_size);
// Stops listening, closes every connection and joins the thread: no handler runs after it.
void vhttp_stop(vhttp_server *server);
// The port listened on (the one asked, or the kernel's choice for 0).
unsigned vhttp_port(const vhttp_server *server);

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
// Queues the answer: `headers` holds `count` names and values alternately. 0 on success.
int vhttp_respond(vhttp_request *request, unsigned status, const char *const *headers, size_t count, const void *body, size_t length);

// A response that stays open (server-sent events): what vhttp_stream_send appends, from any
// thread, is sent as it comes. While nothing waits the connection is suspended (no polling, no
// timeout). When the connection ends, `closed` is called on libmicrohttpd's thread, then the
// stream is freed: the caller must not use it once `closed` has returned, so it serialises its
// sends with `closed` (a lock held around both).
typedef struct vhttp_stream vhttp_stream;
typedef void (*vhttp_stream_closed)(void *context, vhttp_stream *stream);
// Queues a 200 answer with `headers` whose body is the stream; NULL if it could not.
vhttp_stream *vhttp_respond_stream(vhttp_request *request, const char *const *headers, size_t count, size_t max_pending,
                                   vhttp_stream_closed closed, void *context);
// Appends bytes. -1 when more than `max_pending` would wait (a client that does not read): the
// stream is then closed.
int vhttp_stream_send(vhttp_stream *stream, const void *bytes, size_t length);
// Ends the stream once what waits is sent.
void vhttp_stream_end(vhttp_stream *stream);

#endif
