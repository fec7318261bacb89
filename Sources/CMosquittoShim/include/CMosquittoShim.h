// A small MQTT 5 client API over libmosquitto for vendd and vendfleet. Swift sees only this
// header: callbacks carry one context pointer, MQTT 5 properties come as plain arguments.
// Every callback runs on the client's network thread (vmqtt_start); keep them short.
#ifndef CMOSQUITTOSHIM_H
#define CMOSQUITTOSHIM_H

#include <stddef.h>

typedef struct vmqtt_client vmqtt_client;

struct vmqtt_callbacks {
    void *context;
    // CONNACK: reason 0 is success; otherwise vmqtt_reason_text(reason) says why.
    void (*connected)(void *context, int reason);
    // The connection ended; the network thread reconnects by itself.
    void (*disconnected)(void *context, int reason);
    // The broker acknowledged the QoS 1 message `mid` (PUBACK) with `reason` (0: accepted).
    void (*acknowledged)(void *context, int mid, int reason);
    // A message on a subscribed topic, with the MQTT 5 response topic and correlation data
    // when the sender gave them (NULL otherwise).
    void (*message)(void *context, const char *topic, const void *payload, int length,
                    const char *response_topic, const void *correlation, int correlation_length);
    // libmosquitto's own warnings and errors (TLS failures, refused sockets).
    void (*log)(void *context, int is_error, const char *text);
};

// NULL with errno set on failure. `clean_start` 0 keeps the broker-side session.
/// Loads libmosquitto.so.1 (once); NULL when it is there, else why not.
const char *vmqtt_load_error(void);
/// NULL if libmosquitto cannot be loaded (vmqtt_load_error says why) or memory is short.
vmqtt_client *vmqtt_new(const char *client_id, int clean_start, const struct vmqtt_callbacks *callbacks);
void vmqtt_destroy(vmqtt_client *client);

// Each returns 0 or a libmosquitto error number (vmqtt_error_text).
int vmqtt_set_credentials(vmqtt_client *client, const char *username, const char *password);
// Server certificate checked against `ca_file`, host name included.
int vmqtt_set_tls(vmqtt_client *client, const char *ca_file);
int vmqtt_set_will(vmqtt_client *client, const char *topic, const void *payload, int length, int qos, int retain);
// Starts the network thread and connects in the background; reconnects after every loss and
// every failed try (TLS errors included), within 5 s of the broker's return.
int vmqtt_start(vmqtt_client *client, const char *host, int port, int keepalive_seconds);
// As vmqtt_start, with an MQTT 5 session the broker keeps `session_expiry_seconds` after a
// disconnection (with clean_start 0: subscriptions and queued QoS 1 messages survive).
int vmqtt_start_session(vmqtt_client *client, const char *host, int port, int keepalive_seconds, unsigned session_expiry_seconds);
// Queues a message; `mid` gets its id (for `acknowledged`). Fails when not connected.
int vmqtt_publish(vmqtt_client *client, const char *topic, const void *payload, int length, int qos, int retain, int *mid);
// A reply to a command: `correlation` (may be NULL) sent back as MQTT 5 correlation data.
int vmqtt_reply(vmqtt_client *client, const char *topic, const void *payload, int length,
                const void *correlation, int correlation_length);
// An MQTT 5 request at QoS 1: the answer is wanted on `response_topic` with `correlation` echoed;
// the broker drops it after `expiry_seconds` undelivered (an offline machine never acts on it late).
int vmqtt_request(vmqtt_client *client, const char *topic, const void *payload, int length, const char *response_topic,
                  const void *correlation, int correlation_length, unsigned expiry_seconds, int *mid);
int vmqtt_subscribe(vmqtt_client *client, const char *pattern, int qos);
// Disconnects cleanly (no last will) and joins the network thread: never from a callback.
void vmqtt_stop(vmqtt_client *client);

const char *vmqtt_error_text(int error);
const char *vmqtt_reason_text(int reason);

#endif
