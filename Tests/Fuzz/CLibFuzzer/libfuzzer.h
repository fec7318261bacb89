// libFuzzer's driver, for executables that have their own main (see FuzzDriver.swift). Linked by
// -sanitize=fuzzer; only referenced in builds with -DFUZZING.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
