/* elementwise.c -- placeholder */
#include "loops.h"
