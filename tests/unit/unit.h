/* unit.h: includes every unit test needs (cmocka and its prerequisites). */
#ifndef WEARMON_UNIT_H
#define WEARMON_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#endif
