/* auth_none.c - the overlay's secret and handshake in a build without
 * libsodium (SHEAF_WITH_SODIUM=OFF or libsodium-dev missing): every call fails
 * with a message saying so, so an overlay is never formed without
 * authentication; the per-node loader (part 1) does not need any of this. */
#include "net.h"
#include "sheaf_loader.h"

#include <stdio.h>

#define NO_SODIUM                                                                                                      \
    "sheaf-ld: the overlay across nodes is not available: sheaf was built without "                                    \
    "libsodium (install libsodium-dev and rebuild)"

int sheaf_loader_has_overlay(void) { return 0; }

int sln_secret_create(const char *path, char *err, size_t errlen)
{
    (void)path;
    snprintf(err, errlen, "%s", NO_SODIUM);
    return -1;
}

int sln_secret_load(const char *path, unsigned char key[SLN_KEY], char *err, size_t errlen)
{
    (void)path;
    (void)key;
    snprintf(err, errlen, "%s", NO_SODIUM);
    return -1;
}

int sln_auth_connect(int fd, const unsigned char key[SLN_KEY], uint32_t tree, uint32_t rank, int timeout_ms)
{
    (void)fd, (void)key, (void)tree, (void)rank, (void)timeout_ms;
    return -1;
}

int sln_auth_challenge(const unsigned char key[SLN_KEY], const struct sln_hello *h, struct sln_challenge *c)
{
    (void)key, (void)h, (void)c;
    return -1;
}

int sln_auth_check(const unsigned char key[SLN_KEY], const struct sln_hello *h, const struct sln_challenge *c,
                   const struct sln_proof *p)
{
    (void)key, (void)h, (void)c, (void)p;
    return -1;
}
