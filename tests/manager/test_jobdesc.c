#include <criterion/criterion.h>
Test(jobdesc, placeholder) {}
