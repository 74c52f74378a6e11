/* hdf5_mpio.c - an unmodified parallel HDF5 program on HDF5's MPI-IO driver
 * (H5Pset_fapl_mpio), for the interposition test (tests/mpiio/hdf5.sh).
 *
 *   hdf5_mpio FILE [hint]
 *
 * Writes, on P ranks, a file with
 *   /grid    2-D double (8P x 24), contiguous: rank r's block of 8 rows,
 *            collective transfer (H5FD_MPIO_COLLECTIVE)
 *   /cols    2-D int (8P x 24), contiguous: rank r's block of columns (a
 *            noncontiguous hyperslab), independent transfer
 *   /chunked 2-D long long (8P x 24), chunks of 4 x 12: rank r's rows
 *            r, r+P, r+2P, ... (a strided hyperslab), collective
 *   attributes: /grid "units" (string), /grid "origin" (3 doubles), / "ranks"
 * and in the same open reads back collectively another rank's rows of /grid
 * and the whole of /cols (written independently just before); then closes,
 * reopens read-only and reads everything again (collective and independent).
 * Object modification times are off (H5Pset_obj_track_times), so two runs
 * at the same P write the same bytes. With "hint", the file access's MPI_Info
 * carries sheaf_cache=pfr (the interposition library takes the file over).
 * Every value is checked; HDF5's actual I/O mode (H5Pget_mpio_actual_io_mode)
 * of the collective writes must be collective. Exit 0 and "all data right"
 * on rank 0, else 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <hdf5.h>

#define ROWS 8 /* rows per rank */
#define NY 24

static int nerr;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            if (nerr++ < 10) {                                                                                         \
                fprintf(stderr, "hdf5_mpio: rank %d: ", rank);                                                         \
                fprintf(stderr, __VA_ARGS__);                                                                          \
                fprintf(stderr, "\n");                                                                                 \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

static int rank, nproc;

static double gval(int i, int j) { return i * 1000.0 + j + 0.25; }
static int cval(int i, int j) { return i * 100 + j + 7; }
static long long kval(int i, int j) { return (long long)i * 1000003LL + j * 17 + 1; }

static hid_t fapl_new(int hint)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable"); /* the same hints plain and interposed */
    if (hint)
        MPI_Info_set(info, "sheaf_cache", "pfr");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    MPI_Info_free(&info);
    return fapl;
}

static hid_t dxpl_new(H5FD_mpio_xfer_t mode)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, mode);
    return dxpl;
}

/* rows [r0, r0+n) x all columns of a 2-D dataset */
static hid_t rows_space(hid_t ds, int r0, int n)
{
    hid_t fs = H5Dget_space(ds);
    hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)n, NY};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    return fs;
}

static void check_mode(hid_t dxpl, const char *what)
{
    H5D_mpio_actual_io_mode_t m = H5D_MPIO_NO_COLLECTIVE;
    H5Pget_mpio_actual_io_mode(dxpl, &m);
    CHECK(m != H5D_MPIO_NO_COLLECTIVE, "%s: HDF5 did not do collective I/O (mode %d)", what, (int)m);
}

static void write_grid(hid_t f, hid_t dcpl, int nx)
{
    hsize_t dims[2] = {(hsize_t)nx, NY};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "grid", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    double buf[ROWS][NY];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < NY; j++)
            buf[i][j] = gval(rank * ROWS + i, j);
    hsize_t mdims[2] = {ROWS, NY};
    hid_t ms = H5Screate_simple(2, mdims, NULL), fs = rows_space(ds, rank * ROWS, ROWS);
    hid_t dxpl = dxpl_new(H5FD_MPIO_COLLECTIVE);
    CHECK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) >= 0, "write grid");
    check_mode(dxpl, "write grid");
    /* attributes (collective in parallel HDF5: every rank, the same values) */
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 8);
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(ds, "units", str, as, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, str, "kelvin\0\0") >= 0, "write units");
    H5Aclose(a);
    H5Sclose(as);
    H5Tclose(str);
    hsize_t three = 3;
    double origin[3] = {1.5, -2.25, 1e-3};
    as = H5Screate_simple(1, &three, NULL);
    a = H5Acreate2(ds, "origin", H5T_IEEE_F64LE, as, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(a, H5T_NATIVE_DOUBLE, origin) >= 0, "write origin");
    H5Aclose(a);
    H5Sclose(as);
    H5Pclose(dxpl);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Sclose(sp);
    H5Dclose(ds);
}

/* rank r's columns [c0, c1) of /cols, written independently */
static void my_cols(int *c0, int *c1)
{
    *c0 = rank * NY / nproc;
    *c1 = (rank + 1) * NY / nproc;
}

static void write_cols(hid_t f, hid_t dcpl, int nx)
{
    hsize_t dims[2] = {(hsize_t)nx, NY};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "cols", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int c0, c1;
    my_cols(&c0, &c1);
    int w = c1 - c0;
    int *buf = malloc(sizeof(int) * (size_t)nx * (size_t)(w ? w : 1));
    for (int i = 0; i < nx; i++)
        for (int j = c0; j < c1; j++)
            buf[i * w + (j - c0)] = cval(i, j);
    hsize_t start[2] = {0, (hsize_t)c0}, count[2] = {(hsize_t)nx, (hsize_t)w};
    hid_t fs = H5Dget_space(ds);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL);
    hid_t dxpl = dxpl_new(H5FD_MPIO_INDEPENDENT);
    CHECK(H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, dxpl, buf) >= 0, "write cols");
    free(buf);
    H5Pclose(dxpl);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Sclose(sp);
    H5Dclose(ds);
}

static void write_chunked(hid_t f, hid_t dcpl0, int nx)
{
    hsize_t dims[2] = {(hsize_t)nx, NY}, chunk[2] = {4, 12};
    hid_t dcpl = H5Pcopy(dcpl0);
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "chunked", H5T_NATIVE_LLONG, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int n = nx / nproc;
    long long *buf = malloc(sizeof(long long) * (size_t)n * NY);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < NY; j++)
            buf[k * NY + j] = kval(rank + k * nproc, j);
    hsize_t start[2] = {(hsize_t)rank, 0}, stride[2] = {(hsize_t)nproc, 1}, count[2] = {(hsize_t)n, NY};
    hid_t fs = H5Dget_space(ds);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, stride, count, NULL);
    hsize_t mdims[2] = {(hsize_t)n, NY};
    hid_t ms = H5Screate_simple(2, mdims, NULL);
    hid_t dxpl = dxpl_new(H5FD_MPIO_COLLECTIVE);
    CHECK(H5Dwrite(ds, H5T_NATIVE_LLONG, ms, fs, dxpl, buf) >= 0, "write chunked");
    check_mode(dxpl, "write chunked");
    free(buf);
    H5Pclose(dxpl);
    H5Pclose(dcpl);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Sclose(sp);
    H5Dclose(ds);
}

/* in the same open: another rank's rows of /grid, and all of /cols, collectively */
static void read_back_open(hid_t f, int nx)
{
    hid_t dxpl = dxpl_new(H5FD_MPIO_COLLECTIVE);
    hid_t ds = H5Dopen2(f, "grid", H5P_DEFAULT);
    int other = (rank + 1) % nproc;
    double g[ROWS][NY];
    hsize_t mdims[2] = {ROWS, NY};
    hid_t ms = H5Screate_simple(2, mdims, NULL), fs = rows_space(ds, other * ROWS, ROWS);
    CHECK(H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, dxpl, g) >= 0, "read grid rows");
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < NY; j++)
            CHECK(g[i][j] == gval(other * ROWS + i, j), "grid[%d][%d] = %g in the same open", other * ROWS + i, j,
                  g[i][j]);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    ds = H5Dopen2(f, "cols", H5P_DEFAULT);
    int *c = malloc(sizeof(int) * (size_t)nx * NY);
    CHECK(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, dxpl, c) >= 0, "read cols");
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < NY; j++)
            CHECK(c[i * NY + j] == cval(i, j), "cols[%d][%d] = %d in the same open", i, j, c[i * NY + j]);
    free(c);
    H5Dclose(ds);
    H5Pclose(dxpl);
}

static void check_attrs(hid_t f)
{
    hid_t ds = H5Dopen2(f, "grid", H5P_DEFAULT);
    char units[9] = {0};
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 8);
    hid_t a = H5Aopen(ds, "units", H5P_DEFAULT);
    CHECK(a >= 0 && H5Aread(a, str, units) >= 0 && strcmp(units, "kelvin") == 0, "attribute units '%s'", units);
    H5Aclose(a);
    H5Tclose(str);
    double o[3] = {0};
    a = H5Aopen(ds, "origin", H5P_DEFAULT);
    CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, o) >= 0 && o[0] == 1.5 && o[1] == -2.25 && o[2] == 1e-3,
          "attribute origin");
    H5Aclose(a);
    H5Dclose(ds);
    int r = -1;
    a = H5Aopen(f, "ranks", H5P_DEFAULT);
    CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_INT, &r) >= 0 && r == nproc, "attribute ranks %d", r);
    H5Aclose(a);
}

/* after reopening: every dataset whole (collective), /chunked's own rows (independent) */
static void read_back_reopened(hid_t f, int nx)
{
    hid_t coll = dxpl_new(H5FD_MPIO_COLLECTIVE), ind = dxpl_new(H5FD_MPIO_INDEPENDENT);
    size_t n = (size_t)nx * NY;
    double *g = malloc(n * sizeof *g);
    int *c = malloc(n * sizeof *c);
    long long *k = malloc(n * sizeof *k);
    hid_t ds = H5Dopen2(f, "grid", H5P_DEFAULT);
    CHECK(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, g) >= 0, "reread grid");
    H5Dclose(ds);
    ds = H5Dopen2(f, "cols", H5P_DEFAULT);
    CHECK(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, c) >= 0, "reread cols");
    H5Dclose(ds);
    ds = H5Dopen2(f, "chunked", H5P_DEFAULT);
    CHECK(H5Dread(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, coll, k) >= 0, "reread chunked");
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < NY; j++) {
            CHECK(g[i * NY + j] == gval(i, j), "grid[%d][%d] = %g", i, j, g[i * NY + j]);
            CHECK(c[i * NY + j] == cval(i, j), "cols[%d][%d] = %d", i, j, c[i * NY + j]);
            CHECK(k[i * NY + j] == kval(i, j), "chunked[%d][%d] = %lld", i, j, k[i * NY + j]);
        }
    /* the rows of the next rank, independently */
    int other = (rank + 1) % nproc;
    memset(k, 0, n * sizeof *k);
    hid_t fs = rows_space(ds, other, 1);
    hsize_t one[2] = {1, NY};
    hid_t ms = H5Screate_simple(2, one, NULL);
    CHECK(H5Dread(ds, H5T_NATIVE_LLONG, ms, fs, ind, k) >= 0, "independent read chunked");
    for (int j = 0; j < NY; j++)
        CHECK(k[j] == kval(other, j), "chunked[%d][%d] = %lld independently", other, j, k[j]);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    check_attrs(f);
    free(g);
    free(c);
    free(k);
    H5Pclose(coll);
    H5Pclose(ind);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nproc);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: hdf5_mpio FILE [hint]\n");
        MPI_Finalize();
        return 2;
    }
    int hint = argc > 2 && strcmp(argv[2], "hint") == 0;
    int nx = ROWS * nproc;
    hid_t fapl = fapl_new(hint);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0); /* no timestamps: runs compare byte for byte */
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0, "create %s", argv[1]);
    if (f >= 0) {
        write_grid(f, dcpl, nx);
        write_cols(f, dcpl, nx);
        write_chunked(f, dcpl, nx);
        hid_t as = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, "ranks", H5T_STD_I32LE, as, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(H5Awrite(a, H5T_NATIVE_INT, &nproc) >= 0, "write ranks");
        H5Aclose(a);
        H5Sclose(as);
        read_back_open(f, nx);
        CHECK(H5Fclose(f) >= 0, "close");
        f = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
        CHECK(f >= 0, "reopen %s", argv[1]);
        if (f >= 0) {
            read_back_reopened(f, nx);
            H5Fclose(f);
        }
    }
    H5Pclose(dcpl);
    H5Pclose(fapl);
    int total = 0;
    MPI_Allreduce(&nerr, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf("hdf5_mpio: %d ranks: %d wrong values or failed calls\n", nproc, total);
        else
            printf("hdf5_mpio: %d ranks: all data right (grid, cols, chunked, attributes)\n", nproc);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
