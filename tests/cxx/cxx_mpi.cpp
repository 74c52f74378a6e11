// cxx_mpi - sionlib::mpi::SIONFile (bindings/cxx): every rank writes a value
// with <<, a struct with write(T) and a vector with the collective
// write(data, unit, length), in NFILES files; the container is closed by
// RAII on every rank; then read back with >>, read(T*) and the collective
// read(ptr, unit, length). Each rank's bytes also go to expect.<rank> for
// the sioncat comparison. Usage: cxx_mpi FILE NFILES
#include <mpi.h>
#include <sion_cxx.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

static int nbad = 0;
#define CHECK(c)                                                                   \
  do {                                                                             \
    if (!(c)) {                                                                    \
      std::printf("cxx_mpi: rank %d: FAILED %s (line %d)\n", rank, #c, __LINE__);  \
      nbad++;                                                                      \
    }                                                                              \
  } while (0)

struct Pt {       // no padding: its bytes are all defined
  long long id;
  float v[4];
};

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string fname = argc > 1 ? argv[1] : "m.sion";
  int nfiles = argc > 2 ? std::atoi(argv[2]) : 1;

  int value = 4242 + rank;
  Pt pt{1000LL + rank, {1.0f * rank, 2.5f, -1.0f, 0.0f}};
  std::vector<double> vec(64 + 8 * rank);
  for (size_t k = 0; k < vec.size(); k++)
    vec[k] = rank * 100.0 + k / 4.0;
  {
    std::ofstream e(("expect." + std::to_string(rank)).c_str(), std::ios::binary);
    e.write(reinterpret_cast<const char *>(&value), sizeof value);
    e.write(reinterpret_cast<const char *>(&pt), sizeof pt);
    e.write(reinterpret_cast<const char *>(vec.data()), vec.size() * sizeof(double));
  }
  {
    sionlib::mpi::SIONFile f(fname, "bw,collective", nfiles, rank);
    f.setChunkSize(4096);
    f.open();
    CHECK(f.getSid() >= 0 && f.isOpen() && f.getGlobalRank() == rank);
    CHECK(std::strstr(f.getNewSionFileName(), fname.c_str()) != nullptr);
    f << value;
    f.write(pt);
    f.write(vec, (int)sizeof(double), (int)vec.size()); // collective
    CHECK(f.getReturnCode() == (int)vec.size());
  } // RAII: sion_parclose_mpi on every rank

  {
    sionlib::mpi::SIONFile r(fname, "br,collective");
    r.open();
    CHECK(r.isOpen() && r.getNumberOfFiles() == nfiles);
    int v2 = 0;
    Pt p2{};
    std::vector<double> w(vec.size());
    r >> v2;
    CHECK(v2 == value && r.getNumberOfSuccessfulReadElements() == 1);
    r.read(&p2);
    CHECK(std::memcmp(&p2, &pt, sizeof pt) == 0);
    r.read(w.data(), (int)sizeof(double), (int)w.size()); // collective
    CHECK(r.getReturnCode() == (int)w.size() && w == vec);
    r.endOfFile();
    CHECK(r.getReturnCode() == 1);
    r.close();
    CHECK(r.getReturnCode() == SION_SUCCESS && !r.isOpen());
  }

  int all = 0;
  MPI_Allreduce(&nbad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(all ? "cxx_mpi: FAILED (%d checks)\n" : "cxx_mpi: OK (%d ranks)\n", all ? all : size);
  MPI_Finalize();
  return all ? 1 : 0;
}
