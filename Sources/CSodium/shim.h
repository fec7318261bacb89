// The system's libsodium (Debian libsodium-dev): Argon2id password hashes, random tokens and
// constant-time comparison for the back office (VendOffice).
#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H

#include <sodium.h>

#endif
