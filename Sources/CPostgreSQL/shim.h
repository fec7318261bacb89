// The system's libpq (Debian libpq-dev), PostgreSQL's reference client; only VendFleetStore
// includes it.
#ifndef CPOSTGRESQL_SHIM_H
#define CPOSTGRESQL_SHIM_H

#include <libpq-fe.h>

#endif
