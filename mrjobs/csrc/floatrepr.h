/* repr(float) of a finite double (floatrepr.c) */
#ifndef MRJOBS_FLOATREPR_H
#define MRJOBS_FLOATREPR_H

#include "speedups.h"

HIDDEN_BEGIN
/* Ryu's tables, computed at import (module.c): 0, or -1 with an error set */
int ryu_tables(void);
/* repr(v) of a finite double into w (at most 24 bytes): its length, or -1
 * (an error set) */
int format_score(double v, char *w);
HIDDEN_END

#endif /* MRJOBS_FLOATREPR_H */
