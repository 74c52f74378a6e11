/* sionlib_internal.c - functions under SIONlib-internal names that programs
 * written against SIONlib declare and call themselves (SIONlib's own test
 * programs do: test_buddy__1/2 declare `char *_lsion_buddy_role_to_str(unsigned
 * int)` to print the roles sion_get_io_info reports). Not in SIONlib's
 * installed headers; sheaf declares it in sion_common.h (SHEAF_API), which
 * such a program's own declaration matches. */
#include "sion_common.h"
#include "sion_const.h"

/* The name of a SION_ROLE_* value (SIONlib's strings), "undef" otherwise. */
char *_lsion_buddy_role_to_str(unsigned int flag)
{
    switch (flag) {
    case SION_ROLE_NONE:
        return "SION_ROLE_NONE";
    case SION_ROLE_COLLECTOR:
        return "SION_ROLE_COLLECTOR";
    case SION_ROLE_WRITER:
        return "SION_ROLE_WRITER";
    case SION_ROLE_SENDER:
        return "SION_ROLE_SENDER";
    case SION_ROLE_NOWRITER:
        return "SION_ROLE_NOWRITER";
    case SION_ROLE_READER:
        return "SION_ROLE_READER";
    case SION_ROLE_NOREADER:
        return "SION_ROLE_NOREADER";
    case SION_ROLE_COLLECTOR_READER:
        return "SION_ROLE_COLLECTOR_READER";
    default:
        return "undef";
    }
}
