// The declarations in include/CSwiftRuntime.h name functions of the Swift runtime itself; this file only
// gives the package's C target a source to build.
#include "CSwiftRuntime.h"
