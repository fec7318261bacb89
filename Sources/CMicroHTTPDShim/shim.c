#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include <microhttpd.h>

// Lock order: a server's lock, then a stream's, then libmicrohttpd's own (suspend and resume
// take it; it calls none of these callbacks while holding it).
struct vhttp_server {
    struct MHD_Daemon *daemon;
    vhttp_limits limits;
    vhttp_handler handler;
    void *context;
    pthread_mutex_t lock;
    pthread_cond_t answered;
    // Requests deferred and not answered yet; streams open. Both under `lock`.
    unsigned deferred;
    unsigned stream_count;
    vhttp_stream *streams;
    int stopping;
    // The heartbeat's thread, woken early by `vhttp_stop`.
    pthread_t beat;
    int beating;
    pthread_cond_t wake;
};

struct vhttp_request {
    vhttp_server *server;
    struct MHD_Connection *connection;
    const char *method;
    const char *path;
    char *body;
    size_t length;
    int too_large;
    int answered;
    // Suspended for an answer from another thread, which leaves it in `pending`.
    int deferred;
    struct MHD_Response *pending;
    unsigned pending_status;
    char client[INET6_ADDRSTRLEN];
};

struct message {
    char *bytes;
    size_t length;
};

struct vhttp_stream {
    pthread_mutex_t lock;
    // NULL once libmicrohttpd has let the response go (the client is gone, or the server stopped).
    struct MHD_Connection *connection;
    vhttp_server *server;
    // The content reader found nothing to send and suspended the connection.
    int suspended;
    int closing;
    // The response's and the caller's.
    int references;
    unsigned backlog;
    // Messages not yet taken by libmicrohttpd; `offset` bytes of the first are.
    struct message *messages;
    unsigned count;
    size_t offset;
    vhttp_stream *previous, *next;
};

static void *copy_bytes(const void *bytes, size_t length) {
    void *copy = malloc(length == 0 ? 1 : length);
    if (copy != NULL && length > 0) memcpy(copy, bytes, length);
    return copy;
}

static int add_headers(struct MHD_Response *response, const char *const *headers, size_t count) {
    for (size_t index = 0; index + 1 < count; index += 2) {
        if (MHD_add_response_header(response, headers[index], headers[index + 1]) != MHD_YES) return -1;
    }
    return 0;
}

static struct MHD_Response *make_response(const char *const *headers, size_t count, const void *body, size_t length) {
    // A copy freed by libmicrohttpd: from_buffer's MUST_COPY mode is deprecated in 1.0 and
    // from_buffer_copy is not in 0.9.75; this one is in both.
    void *copy = copy_bytes(body, length);
    if (copy == NULL) return NULL;
    struct MHD_Response *response = MHD_create_response_from_buffer_with_free_callback(length, copy, free);
    if (response == NULL) {
        free(copy);
        return NULL;
    }
    if (add_headers(response, headers, count) != 0) {
        MHD_destroy_response(response);
        return NULL;
    }
    return response;
}

// The shim's own refusals: the connection is closed after them.
static enum MHD_Result queue_text(struct MHD_Connection *connection, unsigned status, const char *text) {
    static const char *const headers[] = {"Content-Type", "text/plain; charset=utf-8", "Connection", "close"};
    struct MHD_Response *response = make_response(headers, 4, text, strlen(text));
    if (response == NULL) return MHD_NO;
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

// Queues `response` now (on the server's thread, in the handler), or hands it to the deferred
// request and resumes its connection: the access handler, called again, queues it.
static int deliver(vhttp_request *request, unsigned status, struct MHD_Response *response) {
    if (request->answered) {
        MHD_destroy_response(response);
        return -1;
    }
    request->answered = 1;
    if (!request->deferred) {
        enum MHD_Result result = MHD_queue_response(request->connection, status, response);
        MHD_destroy_response(response);
        return result == MHD_YES ? 0 : -1;
    }
    vhttp_server *server = request->server;
    request->pending = response;
    request->pending_status = status;
    // The request may be gone once resumed: nothing of it is used after this.
    pthread_mutex_lock(&server->lock);
    MHD_resume_connection(request->connection);
    server->deferred -= 1;
    pthread_cond_broadcast(&server->answered);
    pthread_mutex_unlock(&server->lock);
    return 0;
}

static void describe_client(struct vhttp_request *request) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(request->connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    request->client[0] = 0;
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, request->client, sizeof request->client);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, request->client, sizeof request->client);
    }
}

// Whether the request announces a body over the limit (refused before a byte of it is read).
static int announces_too_much(struct MHD_Connection *connection, size_t max_body) {
    const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length == NULL) return 0;
    char *end = NULL;
    unsigned long long value = strtoull(length, &end, 10);
    return end != length && value > max_body;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls) {
    vhttp_server *server = cls;
    struct vhttp_request *request = *req_cls;
    if (request == NULL) {
        // RFC 9112 3.2: an HTTP/1.1 request without Host is 400 (0.9.75 lets it through, 1.0 not).
        if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST) == NULL) {
            return queue_text(connection, MHD_HTTP_BAD_REQUEST, "no Host header\n");
        }
        // A body comes with its length or not at all: browsers send one, and a chunked body
        // (which libmicrohttpd would take) is how a program, not a page, would press a button.
        if (MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL) {
            return queue_text(connection, MHD_HTTP_LENGTH_REQUIRED, "a request body needs a Content-Length\n");
        }
        if (announces_too_much(connection, server->limits.max_body)) {
            return queue_text(connection, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large\n");
        }
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        request->server = server;
        request->connection = connection;
        request->method = method;
        request->path = url;
        describe_client(request);
        *req_cls = request;
        return MHD_YES;
    }
    if (request->pending != NULL) {
        // Called again after a deferred answer resumed the connection.
        enum MHD_Result result = MHD_queue_response(connection, request->pending_status, request->pending);
        MHD_destroy_response(request->pending);
        request->pending = NULL;
        return result;
    }
    if (request->deferred) return MHD_YES;
    if (*upload_data_size > 0) {
        size_t piece = *upload_data_size;
        *upload_data_size = 0;
        if (request->too_large || request->length + piece > server->limits.max_body) {
            request->too_large = 1;
            free(request->body);
            request->body = NULL;
            request->length = 0;
            return MHD_YES;
        }
        char *grown = realloc(request->body, request->length + piece);
        if (grown == NULL) return MHD_NO;
        memcpy(grown + request->length, upload_data, piece);
        request->body = grown;
        request->length += piece;
        return MHD_YES;
    }
    if (request->too_large) return queue_text(connection, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large\n");
    server->handler(server->context, request);
    if (request->answered || request->deferred) return MHD_YES;
    return queue_text(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error: no answer\n");
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **req_cls, enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    struct vhttp_request *request = *req_cls;
    if (request == NULL) return;
    if (request->pending != NULL) MHD_destroy_response(request->pending);
    free(request->body);
    free(request);
    *req_cls = NULL;
}

static void *beat(void *cls);

vhttp_server *vhttp_start(const char *address, unsigned port, vhttp_limits limits, vhttp_handler handler, void *context, char *error,
                          size_t error_size) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *bind_to;
    // AUTO: epoll on Linux, one thread for every connection; suspend and resume for deferred
    // answers and quiet streams.
    unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, address, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons((uint16_t)port);
        bind_to = (const struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, address, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons((uint16_t)port);
        bind_to = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(error, error_size, "'%s' is not an IPv4 or IPv6 address", address);
        return NULL;
    }
    vhttp_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    server->limits = limits;
    server->handler = handler;
    server->context = context;
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->answered, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&server->wake, &monotonic);
    pthread_condattr_destroy(&monotonic);
    server->daemon = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_access, server, MHD_OPTION_SOCK_ADDR, bind_to,
                                      MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_CONNECTION_LIMIT, limits.connections,
                                      MHD_OPTION_CONNECTION_TIMEOUT, limits.timeout_seconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                      limits.connection_memory, MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_size, "libmicrohttpd could not listen on %s port %u (in use, or not an address of this host)", address,
                 port);
        pthread_cond_destroy(&server->wake);
        pthread_cond_destroy(&server->answered);
        pthread_mutex_destroy(&server->lock);
        free(server);
        return NULL;
    }
    server->beating = limits.streams > 0 && limits.heartbeat_seconds > 0 && pthread_create(&server->beat, NULL, beat, server) == 0;
    return server;
}

void vhttp_stop(vhttp_server *server) {
    if (server == NULL) return;
    pthread_mutex_lock(&server->lock);
    // From now on nothing is deferred and no stream opens: libmicrohttpd must not stop with a
    // connection suspended.
    server->stopping = 1;
    pthread_cond_broadcast(&server->wake);
    while (server->deferred > 0) pthread_cond_wait(&server->answered, &server->lock);
    for (vhttp_stream *stream = server->streams; stream != NULL; stream = stream->next) {
        pthread_mutex_lock(&stream->lock);
        stream->closing = 1;
        if (stream->suspended) {
            stream->suspended = 0;
            MHD_resume_connection(stream->connection);
        }
        pthread_mutex_unlock(&stream->lock);
    }
    pthread_mutex_unlock(&server->lock);
    if (server->beating) pthread_join(server->beat, NULL);
    MHD_stop_daemon(server->daemon);
    pthread_cond_destroy(&server->wake);
    pthread_cond_destroy(&server->answered);
    pthread_mutex_destroy(&server->lock);
    free(server);
}

unsigned vhttp_port(const vhttp_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

unsigned vhttp_stream_count(vhttp_server *server) {
    pthread_mutex_lock(&server->lock);
    unsigned count = server->stream_count;
    pthread_mutex_unlock(&server->lock);
    return count;
}

const char *vhttp_reason(unsigned status) { return MHD_get_reason_phrase_for(status); }

const char *vhttp_method(const vhttp_request *request) { return request->method; }

const char *vhttp_path(const vhttp_request *request) { return request->path; }

const char *vhttp_header(const vhttp_request *request, const char *name) {
    return MHD_lookup_connection_value(request->connection, MHD_HEADER_KIND, name);
}

const char *vhttp_argument(const vhttp_request *request, const char *name) {
    return MHD_lookup_connection_value(request->connection, MHD_GET_ARGUMENT_KIND, name);
}

const void *vhttp_body(const vhttp_request *request, size_t *length) {
    *length = request->length;
    return request->body;
}

const char *vhttp_client_address(const vhttp_request *request) { return request->client; }

int vhttp_defer(vhttp_request *request) {
    vhttp_server *server = request->server;
    pthread_mutex_lock(&server->lock);
    int stopping = server->stopping;
    if (!stopping) {
        request->deferred = 1;
        server->deferred += 1;
        MHD_suspend_connection(request->connection);
    }
    pthread_mutex_unlock(&server->lock);
    return stopping ? -1 : 0;
}

int vhttp_respond(vhttp_request *request, unsigned status, const char *const *headers, size_t count, const void *body,
                  size_t length) {
    struct MHD_Response *response = make_response(headers, count, body, length);
    if (response == NULL) return -1;
    return deliver(request, status, response);
}

static void stream_release(vhttp_stream *stream) {
    pthread_mutex_lock(&stream->lock);
    int left = --stream->references;
    pthread_mutex_unlock(&stream->lock);
    if (left > 0) return;
    for (unsigned index = 0; index < stream->count; index++) free(stream->messages[index].bytes);
    free(stream->messages);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
}

// libmicrohttpd asks for more of the body: what is queued, else the connection waits suspended
// until vhttp_stream_send (or vhttp_stop) resumes it.
static ssize_t read_stream(void *cls, uint64_t position, char *buffer, size_t max) {
    (void)position;
    vhttp_stream *stream = cls;
    pthread_mutex_lock(&stream->lock);
    if (stream->count == 0) {
        ssize_t result = 0;
        if (stream->closing) {
            result = MHD_CONTENT_READER_END_OF_STREAM;
        } else {
            stream->suspended = 1;
            MHD_suspend_connection(stream->connection);
        }
        pthread_mutex_unlock(&stream->lock);
        return result;
    }
    size_t copied = 0;
    while (stream->count > 0 && copied < max) {
        struct message *first = &stream->messages[0];
        size_t piece = first->length - stream->offset;
        if (piece > max - copied) piece = max - copied;
        memcpy(buffer + copied, first->bytes + stream->offset, piece);
        copied += piece;
        stream->offset += piece;
        if (stream->offset == first->length) {
            free(first->bytes);
            memmove(stream->messages, stream->messages + 1, (stream->count - 1) * sizeof *stream->messages);
            stream->count -= 1;
            stream->offset = 0;
        }
    }
    pthread_mutex_unlock(&stream->lock);
    return (ssize_t)copied;
}

// The response is let go: its connection closed, or its request ended without it being sent.
static void end_stream(void *cls) {
    vhttp_stream *stream = cls;
    pthread_mutex_lock(&stream->lock);
    vhttp_server *server = stream->server;
    stream->connection = NULL;
    stream->server = NULL;
    pthread_mutex_unlock(&stream->lock);
    pthread_mutex_lock(&server->lock);
    if (stream->previous != NULL) stream->previous->next = stream->next;
    else server->streams = stream->next;
    if (stream->next != NULL) stream->next->previous = stream->previous;
    server->stream_count -= 1;
    pthread_mutex_unlock(&server->lock);
    stream_release(stream);
}

// With the stream's lock held: `bytes` queued (the oldest not started dropped beyond the
// backlog) and the connection resumed if it waits. -1 once the client has gone.
static int queue_message(vhttp_stream *stream, const void *bytes, size_t length, unsigned *dropped) {
    *dropped = 0;
    if (stream->connection == NULL || stream->closing) return -1;
    char *copy = copy_bytes(bytes, length);
    if (copy == NULL) return -1;
    stream->messages[stream->count++] = (struct message){copy, length};
    // A message partly sent stays: dropping it would cut the client's stream mid-message.
    unsigned started = stream->offset > 0 ? 1 : 0;
    while (stream->count - started > stream->backlog) {
        free(stream->messages[started].bytes);
        memmove(stream->messages + started, stream->messages + started + 1,
                (stream->count - started - 1) * sizeof *stream->messages);
        stream->count -= 1;
        *dropped += 1;
    }
    if (stream->suspended) {
        stream->suspended = 0;
        MHD_resume_connection(stream->connection);
    }
    return 0;
}

// Every `heartbeat_seconds` until the server stops: a comment on every stream.
static void *beat(void *cls) {
    vhttp_server *server = cls;
    pthread_setname_np(pthread_self(), "vendd-http-beat");
    pthread_mutex_lock(&server->lock);
    while (!server->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += server->limits.heartbeat_seconds;
        while (!server->stopping && pthread_cond_timedwait(&server->wake, &server->lock, &until) == 0) {
        }
        if (server->stopping) break;
        for (vhttp_stream *stream = server->streams; stream != NULL; stream = stream->next) {
            static const char comment[] = ": \n\n";
            unsigned dropped;
            pthread_mutex_lock(&stream->lock);
            queue_message(stream, comment, sizeof comment - 1, &dropped);
            pthread_mutex_unlock(&stream->lock);
        }
    }
    pthread_mutex_unlock(&server->lock);
    return NULL;
}

vhttp_stream *vhttp_respond_stream(vhttp_request *request, const char *const *headers, size_t count) {
    vhttp_server *server = request->server;
    vhttp_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) return NULL;
    // Room for `backlog` messages not started, one being sent, and one arriving.
    stream->messages = calloc(server->limits.stream_backlog + 2, sizeof *stream->messages);
    if (stream->messages == NULL) {
        free(stream);
        return NULL;
    }
    pthread_mutex_init(&stream->lock, NULL);
    stream->connection = request->connection;
    stream->server = server;
    stream->backlog = server->limits.stream_backlog;
    stream->references = 2;
    pthread_mutex_lock(&server->lock);
    int refused = server->stopping || server->stream_count >= server->limits.streams;
    if (!refused) {
        stream->next = server->streams;
        if (server->streams != NULL) server->streams->previous = stream;
        server->streams = stream;
        server->stream_count += 1;
    }
    pthread_mutex_unlock(&server->lock);
    if (refused) {
        free(stream->messages);
        pthread_mutex_destroy(&stream->lock);
        free(stream);
        return NULL;
    }
    // From here `end_stream` owns the response's reference, even if the answer is never sent.
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, stream, end_stream);
    if (response == NULL) {
        end_stream(stream);
        stream_release(stream);
        return NULL;
    }
    if (add_headers(response, headers, count) != 0 || deliver(request, MHD_HTTP_OK, response) != 0) {
        if (!request->answered) MHD_destroy_response(response);
        stream_release(stream);
        return NULL;
    }
    return stream;
}

int vhttp_stream_send(vhttp_stream *stream, const void *bytes, size_t length, unsigned *dropped) {
    pthread_mutex_lock(&stream->lock);
    int result = queue_message(stream, bytes, length, dropped);
    pthread_mutex_unlock(&stream->lock);
    return result;
}

void vhttp_stream_release(vhttp_stream *stream) { stream_release(stream); }
