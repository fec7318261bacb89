#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

struct vhttp_server {
    struct MHD_Daemon *daemon;
    size_t max_body;
    vhttp_handler handler;
    void *context;
};

struct vhttp_request {
    struct MHD_Connection *connection;
    const char *method;
    const char *path;
    char *body;
    size_t length;
    int too_large;
    int answered;
    char client[INET6_ADDRSTRLEN];
};

static void *copy_bytes(const void *bytes, size_t length) {
    void *copy = malloc(length == 0 ? 1 : length);
    if (copy != NULL && length > 0) memcpy(copy, bytes, length);
    return copy;
}

static enum MHD_Result queue(struct MHD_Connection *connection, unsigned status, const char *const *headers, size_t count,
                             const void *body, size_t length) {
    // A copy freed by libmicrohttpd: from_buffer's MUST_COPY mode is deprecated in 1.0 and
    // from_buffer_copy is not in 0.9.75; this one is in both.
    void *copy = copy_bytes(body, length);
    if (copy == NULL) return MHD_NO;
    struct MHD_Response *response = MHD_create_response_from_buffer_with_free_callback(length, copy, free);
    if (response == NULL) {
        free(copy);
        return MHD_NO;
    }
    for (size_t index = 0; index + 1 < count; index += 2) {
        if (MHD_add_response_header(response, headers[index], headers[index + 1]) != MHD_YES) {
            MHD_destroy_response(response);
            return MHD_NO;
        }
    }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
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

static enum MHD_Result on_access(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls) {
    (void)version;
    vhttp_server *server = cls;
    struct vhttp_request *request = *req_cls;
    if (request == NULL) {
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        request->connection = connection;
        request->method = method;
        request->path = url;
        describe_client(request);
        *req_cls = request;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t piece = *upload_data_size;
        *upload_data_size = 0;
        if (request->too_large || request->length + piece > server->max_body) {
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
    if (request->too_large) {
        static const char text[] = "request body too large\n";
        const char *headers[] = {"Content-Type", "text/plain; charset=utf-8"};
        return queue(connection, 413, headers, 2, text, sizeof text - 1);
    }
    server->handler(server->context, request);
    if (request->answered) return MHD_YES;
    static const char text[] = "internal error: no answer\n";
    const char *headers[] = {"Content-Type", "text/plain; charset=utf-8"};
    return queue(connection, 500, headers, 2, text, sizeof text - 1);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **req_cls, enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    struct vhttp_request *request = *req_cls;
    if (request == NULL) return;
    free(request->body);
    free(request);
    *req_cls = NULL;
}

vhttp_server *vhttp_start(const char *address, unsigned port, size_t max_body, unsigned connection_limit,
                          unsigned timeout_seconds, vhttp_handler handler, void *context, char *error, size_t error_size) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *bind_to;
    // Suspend and resume: a stream with nothing to send waits without being polled.
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME;
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
    server->max_body = max_body;
    server->handler = handler;
    server->context = context;
    server->daemon = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_access, server, MHD_OPTION_SOCK_ADDR, bind_to,
                                      MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_CONNECTION_LIMIT,
                                      connection_limit, MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds, MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_size, "libmicrohttpd could not listen on %s port %u (in use, or not an address of this host)", address,
                 port);
        free(server);
        return NULL;
    }
    return server;
}

void vhttp_stop(vhttp_server *server) {
    if (server == NULL) return;
    MHD_stop_daemon(server->daemon);
    free(server);
}

unsigned vhttp_port(const vhttp_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

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

int vhttp_respond(vhttp_request *request, unsigned status, const char *const *headers, size_t count, const void *body,
                  size_t length) {
    if (request->answered) return -1;
    request->answered = 1;
    return queue(request->connection, status, headers, count, body, length) == MHD_YES ? 0 : -1;
}

struct vhttp_stream {
    pthread_mutex_t lock;
    struct MHD_Connection *connection;
    char *pending;
    size_t length;
    size_t max_pending;
    int suspended;
    int ended;
    int failed;
    vhttp_stream_closed closed;
    void *context;
};

// Under the stream's lock: a suspended connection is resumed (libmicrohttpd's own thread picks
// it up through its inter-thread channel).
static void stream_wake(vhttp_stream *stream) {
    if (!stream->suspended) return;
    stream->suspended = 0;
    MHD_resume_connection(stream->connection);
}

static ssize_t stream_read(void *cls, uint64_t position, char *buffer, size_t size) {
    (void)position;
    vhttp_stream *stream = cls;
    ssize_t result;
    pthread_mutex_lock(&stream->lock);
    if (stream->failed) {
        result = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (stream->length > 0) {
        size_t piece = stream->length < size ? stream->length : size;
        memcpy(buffer, stream->pending, piece);
        memmove(stream->pending, stream->pending + piece, stream->length - piece);
        stream->length -= piece;
        result = (ssize_t)piece;
    } else if (stream->ended) {
        result = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        // Nothing yet: suspended under the lock, so a send cannot slip in before it.
        stream->suspended = 1;
        MHD_suspend_connection(stream->connection);
        result = 0;
    }
    pthread_mutex_unlock(&stream->lock);
    return result;
}

static void stream_free(void *cls) {
    vhttp_stream *stream = cls;
    stream->closed(stream->context, stream);
    pthread_mutex_destroy(&stream->lock);
    free(stream->pending);
    free(stream);
}

vhttp_stream *vhttp_respond_stream(vhttp_request *request, const char *const *headers, size_t count, size_t max_pending,
                                   vhttp_stream_closed closed, void *context) {
    if (request->answered) return NULL;
    vhttp_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) return NULL;
    pthread_mutex_init(&stream->lock, NULL);
    stream->connection = request->connection;
    stream->max_pending = max_pending;
    stream->closed = closed;
    stream->context = context;
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, stream, stream_free);
    if (response == NULL) {
        pthread_mutex_destroy(&stream->lock);
        free(stream);
        return NULL;
    }
    for (size_t index = 0; index + 1 < count; index += 2) {
        if (MHD_add_response_header(response, headers[index], headers[index + 1]) != MHD_YES) {
            // Destroying the response frees the stream through stream_free, which tells `closed`.
            MHD_destroy_response(response);
            return NULL;
        }
    }
    request->answered = 1;
    enum MHD_Result result = MHD_queue_response(request->connection, 200, response);
    MHD_destroy_response(response);
    return result == MHD_YES ? stream : NULL;
}

int vhttp_stream_send(vhttp_stream *stream, const void *bytes, size_t length) {
    int result = 0;
    pthread_mutex_lock(&stream->lock);
    if (stream->failed || stream->ended) {
        result = -1;
    } else if (stream->length + length > stream->max_pending) {
        stream->failed = 1;
        result = -1;
    } else {
        char *grown = realloc(stream->pending, stream->length + length);
        if (grown == NULL) {
            stream->failed = 1;
            result = -1;
        } else {
            memcpy(grown + stream->length, bytes, length);
            stream->pending = grown;
            stream->length += length;
        }
    }
    stream_wake(stream);
    pthread_mutex_unlock(&stream->lock);
    return result;
}

void vhttp_stream_end(vhttp_stream *stream) {
    pthread_mutex_lock(&stream->lock);
    stream->ended = 1;
    stream_wake(stream);
    pthread_mutex_unlock(&stream->lock);
}
