// The system's libmicrohttpd (Debian libmicrohttpd-dev: 0.9.75 in 12, 1.0.1 in 13); only
// CMicroHTTPDShim includes it: its start function and connection queries are C varargs.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <sys/types.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <microhttpd.h>

#endif
