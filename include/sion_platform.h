/* sion_platform.h - platform detection (SIONlib-compatible name).
 * sheaf targets POSIX systems with a 64-bit off_t; _SION_LINUX is defined by
 * `sionconfig --cflags` on Linux, as SIONlib does. Nothing here is a call. */
#ifndef SION_PLATFORM_H
#define SION_PLATFORM_H
#if defined(__linux__) && !defined(_SION_LINUX)
#define _SION_LINUX 1
#endif
#endif
