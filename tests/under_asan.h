/*
 * under_asan.h — TESTS_UNDER_ASAN, defined when the program is built with
 * AddressSanitizer (gcc's __SANITIZE_ADDRESS__, clang's
 * __has_feature(address_sanitizer)): the tests whose figures depend on
 * glibc's allocator (test_memtrim, test_api_memtrim: under ASan there are
 * no arenas to trim, so they print the figures instead of checking them) or
 * on its speed and memory (test_ingest_kineto: a tenth of the events) read
 * it.
 * Header-only.
 */
#ifndef PERFCAST_TESTS_UNDER_ASAN_H
#define PERFCAST_TESTS_UNDER_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define TESTS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESTS_UNDER_ASAN 1
#endif
#endif

#endif
