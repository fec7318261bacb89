// The system's libmosquitto (Debian libmosquitto-dev); only the CMosquittoShim target includes it.
#include <mosquitto.h>
#include <mqtt_protocol.h>
