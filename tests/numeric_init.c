/*
 * numeric_init.c — linked into every test, bench and fuzz program: calls
 * pmnf_numeric_init() before main(), as server/main.c does for perfcast, so
 * that these programs run the library the way the service does (GSL's
 * aborting error handler off, every status checked by the library).
 */
#include "modeling/modeler.h"

__attribute__((constructor)) static void numeric_init(void)
{
    pmnf_numeric_init();
}
