/* test_base_wire.c - src/base/wire.h: the bytes of every field (little
 * endian whatever the host), the cursor's refusals (short input, a string
 * too long for its buffer, longer than what is left, with a NUL byte) and
 * that a refused read leaves the cursor bad for good.
 * Exit status 0 when every check holds, 1 otherwise (each failure printed). */
#include "wire.h"
#include <stdio.h>
#include <string.h>

static int fails;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static void test_fields(void)
{
    unsigned char b[32];
    memset(b, 0xee, sizeof b);
    unsigned char *p = base_put_le32(b, 0x11223344u);
    CHECK(p == b + 4);
    static const unsigned char le32[4] = {0x44, 0x33, 0x22, 0x11};
    CHECK(!memcmp(b, le32, 4));
    p = base_put_le64(p, 0x0102030405060708ull);
    CHECK(p == b + 12);
    static const unsigned char le64[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    CHECK(!memcmp(b + 4, le64, 8));
    CHECK(base_get_le32(b) == 0x11223344u);
    CHECK(base_get_le64(b + 4) == 0x0102030405060708ull);
    CHECK(base_get_le32((const unsigned char *)"\xff\xff\xff\xff") == 0xffffffffu);
    p = base_put_lestr(b + 12, "abc", 3);
    CHECK(p == b + 19);
    CHECK(!memcmp(b + 12, "\x03\0\0\0abc", 7));
    CHECK(b[19] == 0xee); /* nothing written past the end */
    p = base_put_lestr(b + 20, NULL, 0);
    CHECK(p == b + 24 && base_get_le32(b + 20) == 0);
}

static void test_cursor(void)
{
    unsigned char b[32];
    unsigned char *p = base_put_le32(b, 7);
    p = base_put_le64(p, 1ull << 40);
    p = base_put_lestr(p, "name", 4);
    base_cur c = {b, (size_t)(p - b), 0};
    char s[8];
    CHECK(base_cur_le32(&c) == 7);
    CHECK(base_cur_le64(&c) == 1ull << 40);
    base_cur_str(&c, s, sizeof s);
    CHECK(!c.bad && !strcmp(s, "name") && c.left == 0);
    /* past the end: zeros, bad, and bad stays */
    CHECK(base_cur_le32(&c) == 0 && c.bad);
    c.left = 100;
    CHECK(base_cur_le64(&c) == 0 && c.bad);

    /* a 64-bit read with 7 bytes left */
    base_cur d = {b, 7, 0};
    CHECK(base_cur_le64(&d) == 0 && d.bad && d.left == 7 && d.p == b);

    /* strings: too long for the buffer (n >= cap), longer than what is left, a NUL inside */
    unsigned char t[16];
    base_put_lestr(t, "12345678", 8);
    base_cur e = {t, 12, 0};
    strcpy(s, "x");
    base_cur_str(&e, s, 8);
    CHECK(e.bad && s[0] == 0);
    base_cur f = {t, 11, 0};
    char big[16];
    base_cur_str(&f, big, sizeof big);
    CHECK(f.bad && big[0] == 0);
    base_put_lestr(t, "a\0b", 3);
    base_cur g = {t, 7, 0};
    base_cur_str(&g, big, sizeof big);
    CHECK(g.bad && big[0] == 0);
    base_cur h = {t, 3, 0}; /* not even the length */
    base_cur_str(&h, big, sizeof big);
    CHECK(h.bad && big[0] == 0);
}

int main(void)
{
    test_fields();
    test_cursor();
    if (fails) {
        fprintf(stderr, "test_base_wire: %d check(s) failed\n", fails);
        return 1;
    }
    printf("test_base_wire: all checks hold\n");
    return 0;
}
