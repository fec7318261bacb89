#define _GNU_SOURCE  // pthread_setname_np
#include "CMosquittoShim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mosquitto.h>
#include <mqtt_protocol.h>

struct vmqtt_client {
    struct mosquitto *mosq;
    struct vmqtt_callbacks callbacks;
    pthread_t network;
    bool network_started;
    /* `stopping` under `lock`; `wake` ends a wait between connection tries. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    /* The network thread's alone (on_connect runs on it too): the caller's connection try, and
       the tries that failed since the broker last accepted one, which set the next wait. */
    int first_try;
    unsigned failures;
};

// libmosquitto, and OpenSSL with it, is loaded when the first client is made, not when vendd
// starts: a machine without `mqtt:` maps neither (1.6 MiB of resident memory, most of it
// libcrypto's relocations). Every function the shim calls is resolved once, here.
#define VMQTT_API(X) \
    X(mosquitto_lib_init) \
    X(mosquitto_new) \
    X(mosquitto_destroy) \
    X(mosquitto_int_option) \
    X(mosquitto_connect_v5_callback_set) \
    X(mosquitto_disconnect_v5_callback_set) \
    X(mosquitto_publish_v5_callback_set) \
    X(mosquitto_message_v5_callback_set) \
    X(mosquitto_log_callback_set) \
    X(mosquitto_username_pw_set) \
    X(mosquitto_tls_set) \
    X(mosquitto_will_set_v5) \
    X(mosquitto_threaded_set) \
    X(mosquitto_loop) \
    X(mosquitto_reconnect) \
    X(mosquitto_socket) \
    X(mosquitto_connect_async) \
    X(mosquitto_connect_bind_v5) \
    X(mosquitto_property_add_int32) \
    X(mosquitto_publish_v5) \
    X(mosquitto_property_add_binary) \
    X(mosquitto_property_add_string) \
    X(mosquitto_property_free_all) \
    X(mosquitto_property_read_string) \
    X(mosquitto_property_read_binary) \
    X(mosquitto_subscribe_v5) \
    X(mosquitto_disconnect_v5) \
    X(mosquitto_strerror) \
    X(mosquitto_reason_string)

#define VMQTT_POINTER(name) __typeof__(name) *name;
static struct { VMQTT_API(VMQTT_POINTER) } api;
static char load_error[256];

static pthread_once_t library_once = PTHREAD_ONCE_INIT;

static void library_init(void) {
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
#define VMQTT_RESOLVE(name) \
    if (!(api.name = (__typeof__(name) *)dlsym(library, #name))) { \
        snprintf(load_error, sizeof load_error, "libmosquitto.so.1 has no %s", #name); \
        return; \
    }
    VMQTT_API(VMQTT_RESOLVE)
    api.mosquitto_lib_init();
}

const char *vmqtt_load_error(void) {
    pthread_once(&library_once, library_init);
    return load_error[0] ? load_error : NULL;
}

static void on_log(struct mosquitto *mosq, void *obj, int level, const char *text);

/* libmosquitto formats every log line it has, debug ones too (a malloc, a vsnprintf and a lock
   each), whenever a log callback is set: two per message received. Its warnings and errors that
   say why a connection fails (TLS, socket) come while connecting, so the callback is set until
   the broker accepts the connection and again once it is lost. */
static void on_connect(struct mosquitto *mosq, void *obj, int reason, int flags, const mosquitto_property *props) {
    (void)flags; (void)props;
    struct vmqtt_client *client = obj;
    if (reason == 0) {
        api.mosquitto_log_callback_set(mosq, NULL);
        client->failures = 0;
    }
    if (client->callbacks.connected) client->callbacks.connected(client->callbacks.context, reason);
}

static void on_disconnect(struct mosquitto *mosq, void *obj, int reason, const mosquitto_property *props) {
    (void)props;
    struct vmqtt_client *client = obj;
    api.mosquitto_log_callback_set(mosq, on_log);
    if (client->callbacks.disconnected) client->callbacks.disconnected(client->callbacks.context, reason);
}

static void on_publish(struct mosquitto *mosq, void *obj, int mid, int reason, const mosquitto_property *props) {
    (void)mosq; (void)props;
    struct vmqtt_client *client = obj;
    if (client->callbacks.acknowledged) client->callbacks.acknowledged(client->callbacks.context, mid, reason);
}

static void on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *message, const mosquitto_property *props) {
    (void)mosq;
    struct vmqtt_client *client = obj;
    if (!client->callbacks.message) return;
    char *response_topic = NULL;
    void *correlation = NULL;
    uint16_t correlation_length = 0;
    api.mosquitto_property_read_string(props, MQTT_PROP_RESPONSE_TOPIC, &response_topic, false);
    api.mosquitto_property_read_binary(props, MQTT_PROP_CORRELATION_DATA, &correlation, &correlation_length, false);
    client->callbacks.message(client->callbacks.context, message->topic, message->payload, message->payloadlen,
                              response_topic, correlation, correlation_length);
    free(response_topic);
    free(correlation);
}

static void on_log(struct mosquitto *mosq, void *obj, int level, const char *text) {
    (void)mosq;
    struct vmqtt_client *client = obj;
    if (!client->callbacks.log || !(level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING))) return;
    client->callbacks.log(client->callbacks.context, (level & MOSQ_LOG_ERR) != 0, text);
}

vmqtt_client *vmqtt_new(const char *client_id, int clean_start, const struct vmqtt_callbacks *callbacks) {
    if (vmqtt_load_error()) return NULL;
    struct vmqtt_client *client = calloc(1, sizeof *client);
    if (!client) return NULL;
    client->callbacks = *callbacks;
    client->mosq = api.mosquitto_new(client_id, clean_start != 0, client);
    if (!client->mosq) {
        int saved = errno;
        free(client);
        errno = saved;
        return NULL;
    }
    api.mosquitto_int_option(client->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    api.mosquitto_connect_v5_callback_set(client->mosq, on_connect);
    api.mosquitto_disconnect_v5_callback_set(client->mosq, on_disconnect);
    api.mosquitto_publish_v5_callback_set(client->mosq, on_publish);
    api.mosquitto_message_v5_callback_set(client->mosq, on_message);
    api.mosquitto_log_callback_set(client->mosq, on_log);
    // The network thread is the shim's own (network_main): publishing from other threads only
    // queues and wakes it.
    api.mosquitto_threaded_set(client->mosq, true);
    pthread_mutex_init(&client->lock, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&client->wake, &monotonic);
    pthread_condattr_destroy(&monotonic);
    return client;
}

void vmqtt_destroy(vmqtt_client *client) {
    if (!client) return;
    vmqtt_stop(client);
    api.mosquitto_destroy(client->mosq);
    pthread_cond_destroy(&client->wake);
    pthread_mutex_destroy(&client->lock);
    free(client);
}

int vmqtt_set_credentials(vmqtt_client *client, const char *username, const char *password) {
    return api.mosquitto_username_pw_set(client->mosq, username, password);
}

int vmqtt_set_tls(vmqtt_client *client, const char *ca_file) {
    return api.mosquitto_tls_set(client->mosq, ca_file, NULL, NULL, NULL, NULL);
}

int vmqtt_set_will(vmqtt_client *client, const char *topic, const void *payload, int length, int qos, int retain) {
    return api.mosquitto_will_set_v5(client->mosq, topic, length, payload, qos, retain != 0, NULL);
}

static struct timespec monotonic_after(unsigned seconds) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += seconds;
    return at;
}

static bool is_past(struct timespec deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/* Waits `seconds` unless the client is stopped meanwhile; false when it is. */
static bool wait_unless_stopped(struct vmqtt_client *client, unsigned seconds) {
    struct timespec until = monotonic_after(seconds);
    pthread_mutex_lock(&client->lock);
    while (!client->stopping && pthread_cond_timedwait(&client->wake, &client->lock, &until) != ETIMEDOUT) {}
    bool stopped = client->stopping;
    pthread_mutex_unlock(&client->lock);
    return !stopped;
}

static bool is_stopping(struct vmqtt_client *client) {
    pthread_mutex_lock(&client->lock);
    bool stopping = client->stopping;
    pthread_mutex_unlock(&client->lock);
    return stopping;
}

/* The network thread. It is the shim's own because libmosquitto's (mosquitto_loop_start, which
   runs mosquitto_loop_forever) ends for good on a TLS error or EPROTO: a broker that dies
   mid-handshake, or anything but a broker answering on its port, left the client offline until
   its process restarted. This loop tries again after every failure, 1, 2, 4, then every 5 s, so
   a broker back after an outage is found within 5 s. */
static void *network_main(void *argument) {
    struct vmqtt_client *client = argument;
    int failure = client->first_try;
    bool disconnecting = false;
    struct timespec disconnected_by = {0, 0};
    for (;;) {
        if (failure != MOSQ_ERR_SUCCESS) {
            unsigned seconds = client->failures < 3 ? 1u << client->failures : 5;
            client->failures++;
            if (!wait_unless_stopped(client, seconds)) break;
            failure = api.mosquitto_reconnect(client->mosq);
            continue;
        }
        int rc = api.mosquitto_loop(client->mosq, 1000, 1);
        if (!is_stopping(client)) {
            failure = rc;
            continue;
        }
        // Stopped: the DISCONNECT queued by vmqtt_stop goes out (the broker then keeps the last
        // will unsent) and libmosquitto closes the socket; a broker that takes no bytes gets 2 s.
        if (!disconnecting) {
            disconnecting = true;
            disconnected_by = monotonic_after(2);
        }
        if (rc != MOSQ_ERR_SUCCESS || api.mosquitto_socket(client->mosq) < 0 || is_past(disconnected_by)) break;
    }
    return NULL;
}

/* Bad arguments or no memory: no later try can connect. Anything else (a broker down, refusing,
   answering with something but TLS, a name not resolved yet) the network thread tries again. */
static bool is_final(int rc) {
    return rc == MOSQ_ERR_INVAL || rc == MOSQ_ERR_NOMEM || rc == MOSQ_ERR_NOT_SUPPORTED;
}

static int start_network(struct vmqtt_client *client, int first_try) {
    if (is_final(first_try)) return first_try;
    client->first_try = first_try;
    int rc = pthread_create(&client->network, NULL, network_main, client);
    if (rc != 0) {
        errno = rc;
        return MOSQ_ERR_ERRNO;
    }
    pthread_setname_np(client->network, "vendd-mqtt-net");
    client->network_started = true;
    return MOSQ_ERR_SUCCESS;
}

int vmqtt_start(vmqtt_client *client, const char *host, int port, int keepalive_seconds) {
    return start_network(client, api.mosquitto_connect_async(client->mosq, host, port, keepalive_seconds));
}

int vmqtt_start_session(vmqtt_client *client, const char *host, int port, int keepalive_seconds, unsigned session_expiry_seconds) {
    if (session_expiry_seconds == 0) return vmqtt_start(client, host, port, keepalive_seconds);
    // libmosquitto has no asynchronous connect with properties: connect here (it keeps the
    // properties for every reconnection), then start the network thread, which retries.
    mosquitto_property *props = NULL;
    int rc = api.mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL, session_expiry_seconds);
    if (rc != MOSQ_ERR_SUCCESS) return rc;
    rc = api.mosquitto_connect_bind_v5(client->mosq, host, port, keepalive_seconds, NULL, props);
    api.mosquitto_property_free_all(&props);
    return start_network(client, rc);
}

int vmqtt_publish(vmqtt_client *client, const char *topic, const void *payload, int length, int qos, int retain, int *mid) {
    return api.mosquitto_publish_v5(client->mosq, mid, topic, length, payload, qos, retain != 0, NULL);
}

int vmqtt_reply(vmqtt_client *client, const char *topic, const void *payload, int length,
                const void *correlation, int correlation_length) {
    mosquitto_property *props = NULL;
    if (correlation && correlation_length > 0) {
        int rc = api.mosquitto_property_add_binary(&props, MQTT_PROP_CORRELATION_DATA, correlation, (uint16_t)correlation_length);
        if (rc != MOSQ_ERR_SUCCESS) return rc;
    }
    int rc = api.mosquitto_publish_v5(client->mosq, NULL, topic, length, payload, 1, false, props);
    api.mosquitto_property_free_all(&props);
    return rc;
}

int vmqtt_request(vmqtt_client *client, const char *topic, const void *payload, int length, const char *response_topic,
                  const void *correlation, int correlation_length, unsigned expiry_seconds, int *mid) {
    mosquitto_property *props = NULL;
    int rc = api.mosquitto_property_add_string(&props, MQTT_PROP_RESPONSE_TOPIC, response_topic);
    if (rc == MOSQ_ERR_SUCCESS)
        rc = api.mosquitto_property_add_binary(&props, MQTT_PROP_CORRELATION_DATA, correlation, (uint16_t)correlation_length);
    if (rc == MOSQ_ERR_SUCCESS) rc = api.mosquitto_property_add_int32(&props, MQTT_PROP_MESSAGE_EXPIRY_INTERVAL, expiry_seconds);
    if (rc == MOSQ_ERR_SUCCESS) rc = api.mosquitto_publish_v5(client->mosq, mid, topic, length, payload, 1, false, props);
    api.mosquitto_property_free_all(&props);
    return rc;
}

int vmqtt_subscribe(vmqtt_client *client, const char *pattern, int qos) {
    return api.mosquitto_subscribe_v5(client->mosq, NULL, pattern, qos, 0, NULL);
}

void vmqtt_stop(vmqtt_client *client) {
    if (!client->network_started) return;
    pthread_mutex_lock(&client->lock);
    client->stopping = true;
    pthread_cond_broadcast(&client->wake);
    pthread_mutex_unlock(&client->lock);
    api.mosquitto_disconnect_v5(client->mosq, 0, NULL);
    pthread_join(client->network, NULL);
    client->network_started = false;
}

// Only called about a client, so the library is loaded.
const char *vmqtt_error_text(int error) { return api.mosquitto_strerror(error); }
const char *vmqtt_reason_text(int reason) { return api.mosquitto_reason_string(reason); }
