#include <criterion/criterion.h>
#include "proto/error.h"
Test(msg, placeholder) { cr_assert_eq(PROTO_OK, 0); }
