// sion_cxx_mpi.hpp - sionlib::mpi::SIONFile: SIONlib 1.7's MPI C++ class,
// header-only over sion_paropen_mpi / sion_parclose_mpi (sheaf). Visible
// when MPI is (<mpi.h> included first, or -DSION_MPI).
// As in SIONlib: write(T) / read(T*) are individual calls of one value;
// write(data, unit, length) / read(ptr, unit, length) are collective
// (sion_coll_fwrite_mpi / sion_coll_fread_mpi: every rank calls them).
// RAII: a SIONFile still open when destroyed is closed with
// sion_parclose_mpi, which is collective: let it go out of scope on every
// rank of its communicator together (or call close()). The default
// constructor makes an object without a name (SIONlib exits the program).
#ifndef SION_CXX_MPI_HPP_
#define SION_CXX_MPI_HPP_

#include <mpi.h>
#include "sion.h"
#include "sion_cxx_common.hpp"
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#if defined(MPI_VERSION)

namespace sionlib {
namespace mpi {

class SIONFile : public SION_Base {
public:
  SIONFile() = default;
  SIONFile(std::string sion_file_name, std::string mode = "bw", int num_files = 1, int global_rank = 0,
           MPI_Comm gComm = MPI_COMM_WORLD, MPI_Comm lComm = MPI_COMM_WORLD)
    : _g_comm(gComm), _l_comm(lComm), _global_rank(global_rank)
  {
    _sion_file_name = sion_file_name;
    _mode = mode;
    _num_files = num_files;
    _chunk_size = 2097152;
    _fs_blk_size = -1;
  }
  SIONFile(SIONFile &&o) noexcept { *this = std::move(o); }
  SIONFile &operator=(SIONFile &&o) noexcept
  {
    if (this != &o) {
      if (_open)
        close();
      std::swap(static_cast<SION_Base &>(*this), static_cast<SION_Base &>(o));
      std::swap(_new_sion_file_name, o._new_sion_file_name);
      std::swap(_g_comm, o._g_comm);
      std::swap(_l_comm, o._l_comm);
      std::swap(_global_rank, o._global_rank);
      o._open = false;
    }
    return *this;
  }
  virtual ~SIONFile()
  {
    if (_open)
      close();
    std::free(_new_sion_file_name);
  }

  // This rank's physical file (after open()); "" before.
  char *getNewSionFileName() const { return _new_sion_file_name ? _new_sion_file_name : const_cast<char *>(""); }
  void setLocalCommunicator(MPI_Comm lComm) { _l_comm = lComm; }
  MPI_Comm getLocalCommunicator() const { return _l_comm; }
  void setGlobalCommunicator(MPI_Comm gComm) { _g_comm = gComm; }
  MPI_Comm getGlobalCommunicator() const { return _g_comm; }
  void setGlobalRank(int global_rank) { _global_rank = global_rank; }
  int getGlobalRank() const { return _global_rank; }

  // Collective over the global communicator (sion_paropen_mpi): write with
  // getChunkSize() bytes per rank and getNumberOfFiles() files; read fills
  // them in. getSid() (and getReturnCode()) < 0 on failure on every rank.
  void open()
  {
    if (_open)
      close();
    std::free(_new_sion_file_name);
    _new_sion_file_name = nullptr;
    FILE *fp = nullptr;
    _sid = sion_paropen_mpi(_sion_file_name.c_str(), _mode.c_str(), &_num_files, _g_comm, &_l_comm, &_chunk_size,
                            &_fs_blk_size, &_global_rank, &fp, &_new_sion_file_name);
    _file_ptr = fp;
    _rank = _global_rank;
    _open = _sid >= 0;
    _return_code = _sid;
  }
  // Collective.
  void close()
  {
    if (!_open) {
      _return_code = SION_NOT_SUCCESS;
      return;
    }
    _open = false;
    _return_code = sion_parclose_mpi(_sid);
  }

  template <class T> void write(T data)
  {
    static_assert(std::is_trivially_copyable<T>::value, "SIONFile::write(T): T must be trivially copyable");
    _return_code = static_cast<int>(sion_fwrite(reinterpret_cast<const char *>(&data), sizeof(data), 1, _sid));
  }
  // Collective: length items of unit bytes from data.data().
  template <class T> void write(const T &data, int unit, int length)
  {
    _return_code = static_cast<int>(sion_coll_fwrite_mpi((const void *)data.data(), unit, length, _sid));
  }
  template <typename T> void read(T *data) { readDone(sion_fread(data, sizeof(T), 1, _sid)); }
  // Collective.
  template <typename T> void read(T *data, int unit, int length)
  {
    readDone(sion_coll_fread_mpi(data, unit, length, _sid));
  }

  void ensureFreeSpace(long numbytes) { _return_code = sion_ensure_free_space(_sid, numbytes); }
  // As SIONlib: the result (1 at the end of this rank's data) is in getReturnCode().
  void endOfFile() { _return_code = sion_feof(_sid); }

private:
  char *_new_sion_file_name = nullptr;
  MPI_Comm _g_comm = MPI_COMM_WORLD;
  MPI_Comm _l_comm = MPI_COMM_WORLD;
  int _global_rank = 0;
};

template <typename T> SIONFile &operator<<(SIONFile &sf, const T &rhs)
{
  sf.write(rhs);
  return sf;
}
template <typename T> SIONFile &operator>>(SIONFile &sf, T &rhs)
{
  sf.read(&rhs);
  return sf;
}

} // namespace mpi
} // namespace sionlib

#endif /* MPI_VERSION */
#endif /* SION_CXX_MPI_HPP_ */
