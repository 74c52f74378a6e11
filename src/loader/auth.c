/* auth.c - the per-job secret and the challenge-response handshake of the
 * overlay (libsodium: crypto_auth = HMAC-SHA-512-256, randombytes_buf). */
#define _GNU_SOURCE
#include "net.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(SLN_KEY == crypto_auth_KEYBYTES, "key size");
_Static_assert(SLN_MAC == crypto_auth_BYTES, "mac size");

int sheaf_loader_has_overlay(void) { return 1; }

static int init(void) { return sodium_init() < 0 ? -1 : 0; }

int sln_secret_create(const char *path, char *err, size_t errlen)
{
    if (init()) {
        snprintf(err, errlen, "sheaf-ld: libsodium does not initialise");
        return -1;
    }
    unsigned char key[SLN_KEY];
    char hex[2 * SLN_KEY + 2];
    randombytes_buf(key, sizeof key);
    sodium_bin2hex(hex, sizeof hex, key, sizeof key);
    sodium_memzero(key, sizeof key);
    size_t n = strlen(hex);
    hex[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "sheaf-ld: cannot create the secret file %s: %s", path, strerror(errno));
        return -1;
    }
    int bad = fchmod(fd, 0600) || write(fd, hex, n) != (ssize_t)n;
    sodium_memzero(hex, sizeof hex);
    if (close(fd) || bad) {
        snprintf(err, errlen, "sheaf-ld: cannot write the secret file %s: %s", path, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}

int sln_secret_load(const char *path, unsigned char key[SLN_KEY], char *err, size_t errlen)
{
    if (init()) {
        snprintf(err, errlen, "sheaf-ld: libsodium does not initialise");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errlen, "sheaf-ld: cannot open the secret file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(err, errlen, "sheaf-ld: the secret file %s must be a regular file of ours, mode 0600", path);
        close(fd);
        return -1;
    }
    char hex[2 * SLN_KEY + 8];
    ssize_t r = read(fd, hex, sizeof hex - 1);
    close(fd);
    size_t bin = 0;
    if (r < 2 * SLN_KEY || (hex[r] = 0, sodium_hex2bin(key, SLN_KEY, hex, (size_t)r, "\n", &bin, NULL)) ||
        bin != SLN_KEY) {
        snprintf(err, errlen, "sheaf-ld: the secret file %s does not hold %d hex digits", path, 2 * SLN_KEY);
        sodium_memzero(hex, sizeof hex);
        return -1;
    }
    sodium_memzero(hex, sizeof hex);
    return 0;
}

/* HMAC(key, role tree rank first second) */
static void mac_of(unsigned char out[SLN_MAC], const unsigned char key[SLN_KEY], char role, uint32_t tree,
                   uint32_t rank, const unsigned char *first, const unsigned char *second)
{
    unsigned char m[1 + 8 + 2 * SLN_NONCE];
    m[0] = (unsigned char)role;
    for (int i = 0; i < 4; i++) {
        m[1 + i] = (unsigned char)(tree >> (8 * i));
        m[5 + i] = (unsigned char)(rank >> (8 * i));
    }
    memcpy(m + 9, first, SLN_NONCE);
    memcpy(m + 9 + SLN_NONCE, second, SLN_NONCE);
    crypto_auth(out, m, sizeof m, key);
}

static int verify(const unsigned char mac[SLN_MAC], const unsigned char key[SLN_KEY], char role, uint32_t tree,
                  uint32_t rank, const unsigned char *first, const unsigned char *second)
{
    unsigned char m[1 + 8 + 2 * SLN_NONCE];
    m[0] = (unsigned char)role;
    for (int i = 0; i < 4; i++) {
        m[1 + i] = (unsigned char)(tree >> (8 * i));
        m[5 + i] = (unsigned char)(rank >> (8 * i));
    }
    memcpy(m + 9, first, SLN_NONCE);
    memcpy(m + 9 + SLN_NONCE, second, SLN_NONCE);
    return crypto_auth_verify(mac, m, sizeof m, key);
}

int sln_auth_connect(int fd, const unsigned char key[SLN_KEY], uint32_t tree, uint32_t rank, int timeout_ms)
{
    if (init())
        return -1;
    sln_set_timeouts(fd, timeout_ms);
    struct sln_hello h = {tree, rank, {0}};
    randombytes_buf(h.nonce, SLN_NONCE);
    unsigned char buf[256];
    uint32_t type, len;
    size_t n = sln_pack_hello(&h, buf, sizeof buf);
    struct sln_challenge c;
    if (sln_send_all(fd, buf, n) || sln_recv_frame_fd(fd, buf, sizeof buf, &type, &len) || type != SLN_CHALLENGE ||
        sln_unpack_challenge(buf + SLD_HDR_SIZE, len, &c) || verify(c.mac, key, 'P', tree, rank, h.nonce, c.nonce))
        return -1;
    struct sln_proof p;
    mac_of(p.mac, key, 'C', tree, rank, c.nonce, h.nonce);
    n = sln_pack_proof(&p, buf, sizeof buf);
    if (sln_send_all(fd, buf, n) || sln_recv_frame_fd(fd, buf, sizeof buf, &type, &len) || type != SLN_WELCOME || len)
        return -1;
    return 0;
}

int sln_auth_challenge(const unsigned char key[SLN_KEY], const struct sln_hello *h, struct sln_challenge *c)
{
    if (init())
        return -1;
    randombytes_buf(c->nonce, SLN_NONCE);
    mac_of(c->mac, key, 'P', h->tree, h->rank, h->nonce, c->nonce);
    return 0;
}

int sln_auth_check(const unsigned char key[SLN_KEY], const struct sln_hello *h, const struct sln_challenge *c,
                   const struct sln_proof *p)
{
    return verify(p->mac, key, 'C', h->tree, h->rank, c->nonce, h->nonce) ? -1 : 0;
}
