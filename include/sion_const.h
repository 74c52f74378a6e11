/* sion_const.h - constants of the SIONlib 1.7 API (values are part of the ABI). */
#ifndef SION_CONST_H
#define SION_CONST_H

#define SION_SUCCESS               1
#define SION_NOT_SUCCESS           0
#define SION_STD_SUCCESS           0   /* callback (generic API) convention */
#define SION_STD_NOT_SUCCESS       1

#define SION_SMALLEST_VALID_ID     0
#define SION_ID_UNDEF             -1
#define SION_ID_NOT_VALID         -1
#define SION_UNKNOWN              -1
#define SION_AUTOMATIC            -1
#define SION_SIZE_NOT_VALID       -1
#define SION_ANSI_SIZE_NOT_VALID   0

#define SION_MAIN_VERSION          1
#define SION_SUB_VERSION           7
#define SION_VERSION_PATCHLEVEL    6
#define SION_FILEFORMAT_VERSION    5

#define SION_CURRENT_RANK       -101
#define SION_CURRENT_BLK        -102
#define SION_CURRENT_CHUNK      -102
#define SION_CURRENT_BLOCK      -102
#define SION_CURRENT_POS        -103
#define SION_ABSOLUTE_POS       -104
#define SION_END_POS            -105

#define SION_DUP_ALL            -201
#define SION_DUP_RANK           -202
#define SION_DUP_RANK_KEY       -203

#define SION_KEYVAL_NONE          50
#define SION_KEYVAL_INLINE        51
#define SION_KEYVAL_META          52
#define SION_KEYVAL_HASH          53
#define SION_KEYVAL_UNKNOWN       54
#define SION_KEYVAL_NOTSET        55

#define _SION_INT32               10
#define _SION_INT64               11
#define _SION_CHAR                12

#define SION_ROLE_NONE             0
#define SION_ROLE_COLLECTOR        1
#define SION_ROLE_SENDER           2
#define SION_ROLE_WRITER           4
#define SION_ROLE_NOWRITER         8
#define SION_ROLE_READER          16
#define SION_ROLE_NOREADER        32
#define SION_ROLE_COLLECTOR_READER 64
#define SION_GET_IO_INFO_FLAG_NONE 0

#define SION_MAX_FSBLOCKSIZE      (32 * 1024 * 1024)
#define SION_DEFAULT_FSBLOCKSIZE  (2 * 1024 * 1024)
#define SION_FILENAME_LENGTH      1024
#define MAXCHUNKS                 100

#endif
