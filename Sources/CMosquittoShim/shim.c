#include "CMosquittoShim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mosquitto.h>
#include <mqtt_protocol.h>

struct vmqtt_client {
    struct mosquitto *mosq;
    struct vmqtt_callbacks callbacks;
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
    X(mosquitto_reconnect_delay_set) \
    X(mosquitto_username_pw_set) \
    X(mosquitto_tls_set) \
    X(mosquitto_will_set_v5) \
    X(mosquitto_loop_start) \
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
    X(mosquitto_loop_stop) \
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
    if (reason == 0) api.mosquitto_log_callback_set(mosq, NULL);
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
    // A broker back after an outage is found within 5 s.
    api.mosquitto_reconnect_delay_set(client->mosq, 1, 5, true);
    return client;
}

void vmqtt_destroy(vmqtt_client *client) {
    if (!client) return;
    api.mosquitto_destroy(client->mosq);
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

int vmqtt_start(vmqtt_client *client, const char *host, int port, int keepalive_seconds) {
    int rc = api.mosquitto_loop_start(client->mosq);
    if (rc != MOSQ_ERR_SUCCESS) return rc;
    rc = api.mosquitto_connect_async(client->mosq, host, port, keepalive_seconds);
    // A broker that is down now is retried by the network thread; only bad arguments are final.
    if (rc == MOSQ_ERR_ERRNO || rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_REFUSED) return MOSQ_ERR_SUCCESS;
    return rc;
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
    if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_ERRNO && rc != MOSQ_ERR_NO_CONN && rc != MOSQ_ERR_CONN_REFUSED) return rc;
    return api.mosquitto_loop_start(client->mosq);
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
    api.mosquitto_disconnect_v5(client->mosq, 0, NULL);
    api.mosquitto_loop_stop(client->mosq, false);
}

// Only called about a client, so the library is loaded.
const char *vmqtt_error_text(int error) { return api.mosquitto_strerror(error); }
const char *vmqtt_reason_text(int reason) { return api.mosquitto_reason_string(reason); }
