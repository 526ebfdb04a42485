#include <criterion/criterion.h>
#include "proto/error.h"
Test(frame, placeholder) { cr_assert_eq(PROTO_OK, 0); }
