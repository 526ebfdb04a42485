/* proto/crc32c.c - placeholder until the module is written. */
#include "proto/error.h"
