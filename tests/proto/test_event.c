#include <criterion/criterion.h>
#include "proto/error.h"
Test(event, placeholder) { cr_assert_eq(PROTO_OK, 0); }
