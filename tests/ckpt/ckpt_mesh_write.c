/* ckpt_mesh_write.c BASE - writes checkpoint step 7 of a known mesh through
 * libsheaf_ckpt (any rank count, coio): a 4 x 3 x 2 grid of 24 points split
 * unequally over the ranks in rank order (rank r holds points [lo, hi) with
 * rank 0 the smallest share), fields with global point index i:
 *   T f64 = 100 + 0.25 i     id i32 = -3 i     mask u8 = i % 2
 *   x, y, z f64 = i % 4, i / 4 % 3, i / 12   (the grid's own coordinates, * 1.5)
 *   short f32 of 5 elements on rank 0 only   (a field that fits no grid)
 * tests/ckpt/check_vtk.py exports it and reads it back with a real VTK reader. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "sheaf_ckpt.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    /* unequal shares: rank r gets weight r + 1 */
    int total = 24, wsum = np * (np + 1) / 2, lo = 0;
    for (int r = 0; r < me; r++)
        lo += total * (r + 1) / wsum;
    int hi = me == np - 1 ? total : lo + total * (me + 1) / wsum, n = hi - lo;
    double *T = malloc(24 * sizeof *T), *x = malloc(24 * sizeof *x), *y = malloc(24 * sizeof *y),
           *z = malloc(24 * sizeof *z);
    int32_t *id = malloc(24 * sizeof *id);
    uint8_t *mask = malloc(24);
    float sh[5] = {1, 2, 3, 4, 5};
    for (int j = 0; j < n; j++) {
        int i = lo + j;
        T[j] = 100 + 0.25 * i;
        id[j] = -3 * i;
        mask[j] = (uint8_t)(i % 2);
        x[j] = 1.5 * (i % 4), y[j] = 1.5 * (i / 4 % 3), z[j] = 1.5 * (i / 12);
    }
    sheaf_ckpt_ctx *c = NULL;
    int rc = sheaf_ckpt_init(MPI_COMM_WORLD, argv[1], "mesh", "strategy=coio", &c);
    rc = rc ? rc : sheaf_ckpt_declare(c, "T", SHEAF_CKPT_F64, (uint64_t)n, T, NULL);
    rc = rc ? rc : sheaf_ckpt_declare(c, "id", SHEAF_CKPT_I32, (uint64_t)n, id, NULL);
    rc = rc ? rc : sheaf_ckpt_declare(c, "mask", SHEAF_CKPT_U8, (uint64_t)n, mask, NULL);
    rc = rc ? rc : sheaf_ckpt_declare(c, "x", SHEAF_CKPT_F64, (uint64_t)n, x, NULL);
    rc = rc ? rc : sheaf_ckpt_declare(c, "y", SHEAF_CKPT_F64, (uint64_t)n, y, NULL);
    rc = rc ? rc : sheaf_ckpt_declare(c, "z", SHEAF_CKPT_F64, (uint64_t)n, z, NULL);
    rc = rc ? rc : sheaf_ckpt_declare(c, "short", SHEAF_CKPT_F32, me == 0 ? 5 : 0, sh, NULL);
    rc = rc ? rc : sheaf_ckpt_write(c, 7);
    rc = rc ? rc : sheaf_ckpt_wait(c);
    if (rc)
        fprintf(stderr, "rank %d: %s\n", me, sheaf_ckpt_error(c));
    int frc = sheaf_ckpt_finalize(&c);
    if (me == 0 && !rc && !frc)
        printf("ckpt_mesh_write: OK (%d ranks, rank 0 holds %d points)\n", np, n);
    free(T), free(x), free(y), free(z), free(id), free(mask);
    MPI_Finalize();
    return rc || frc;
}
