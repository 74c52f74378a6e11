/* sion_libversion_rep.h - repository revision strings (SIONlib-compatible). */
#ifndef SION_LIBVERSION_REP_H
#define SION_LIBVERSION_REP_H
#ifndef SION_GIT_VERSION
#define SION_GIT_VERSION "sheaf"
#endif
#ifndef SION_SVN_VERSION
#define SION_SVN_VERSION "Unknown"
#endif
#endif
