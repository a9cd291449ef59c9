// Intentionally empty: the target only exports FuzzDriver.h to Swift.
#include "FuzzDriver.h"
