#ifndef OCD_C_SWIFT_RUNTIME_H
#define OCD_C_SWIFT_RUNTIME_H

#include <stdint.h>

/// The Swift runtime's entry point that adds `n` strong references to a native Swift object with one atomic
/// increment (part of the runtime's exported interface, declared in its HeapObject.h). OpenCoreData uses
/// it where many values made at once each hold the same object: `n` separate retains would be `n` atomic
/// increments of one cache line.
void *swift_retain_n(void *object, uint32_t n);

/// Its counterpart: removes `n` strong references with one atomic decrement (deinitializing the object if
/// they were the last).
void swift_release_n(void *object, uint32_t n);

#endif
