#include <criterion/criterion.h>
#include "proto/error.h"
Test(jobdir, placeholder) { cr_assert_eq(PROTO_OK, 0); }
