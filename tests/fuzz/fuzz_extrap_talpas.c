/*
 * fuzz_extrap_talpas.c — libFuzzer target for the TaLPas reader
 * (ingest/extrap.h). Each input is handed over as an exact-size buffer; a
 * success must give a consistent experiment, a failure a zeroed one and a
 * message. Seeds: tests/fuzz/corpus/extrap_talpas/.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_extrap_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_extrap_read(data, size, INGEST_FORMAT_TALPAS);
    return 0;
}
