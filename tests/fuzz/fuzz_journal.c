/* fuzz_journal.c - libFuzzer target: arbitrary bytes into the journal parser
 * (core_journal_parse), as `sheaf recover` reads "<file>.sheafj" after a crash.
 * The first byte chooses the task count (1..64); the rest is the journal.
 * Beyond "no crash, no leak, no huge allocation": every kept record names a
 * task in range with 1..(journal size / 8) blocks, 1..(size / 12) when it
 * carries block CRCs (version SHJ2). */
#include "journal.h"
#include "error.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_journal: check failed: %s (line %d)\n", #c, __LINE__);                               \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    int32_t ntasks = 1 + data[0] % 64;
    int64_t granks[64];
    for (int i = 0; i < 64; i++)
        granks[i] = i;
    core_journal_state st;
    memset(&st, 0, sizeof st);
    int rc = core_journal_parse(data + 1, size - 1, ntasks, data[0] & 64 ? granks : NULL, &st, "fuzz");
    if (!rc)
        for (int32_t t = 0; t < ntasks; t++) {
            CHECK(st.nblocks[t] >= 0);
            CHECK(st.nblocks[t] == 0 || (st.bsize[t] && st.nblocks[t] <= (int64_t)size / 8));
            CHECK(!st.bcrc[t] || (st.nblocks[t] > 0 && st.nblocks[t] <= (int64_t)size / 12)); /* SHJ2 */
        }
    core_journal_state_free(&st);
    return 0;
}
