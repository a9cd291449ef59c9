// libFuzzer's entry point for programs that own `main` (see docs/FUZZING.md). SwiftPM links its own
// `main` into executable targets, so the fuzz targets call the driver from there instead of using
// libFuzzer's `main`. The symbol comes from the toolchain's libclang_rt.fuzzer, linked by -sanitize=fuzzer.
#ifndef OCD_FUZZ_DRIVER_H
#define OCD_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
