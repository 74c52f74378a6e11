/* fdshare.h - virtual descriptors sharing one real descriptor per file
 * (fdshare.c), so that 10^5+ simulated tasks fit under RLIMIT_NOFILE. */
#ifndef FDSHARE_H
#define FDSHARE_H
/* Files opened under prefix (a directory path with trailing '/') get virtual
 * descriptors from now on; NULL: none. */
void fds_share_under(const char *prefix);
/* Largest number of virtual descriptors and of real files open at once. */
void fds_stats(long *peak_virtual, long *peak_real);
#endif
