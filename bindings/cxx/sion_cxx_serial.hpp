// sion_cxx_serial.hpp - sionlib::serial::SIONFile: SIONlib 1.7's serial C++
// class, header-only over sion_open / sion_open_rank / sion_close (sheaf).
// RAII: a SIONFile that is still open when destroyed is closed (in write
// mode that writes the metadata, so the container is complete).
// Differences to SIONlib (compatible): chunk_sizes and global_ranks given to
// the constructor are used (SIONlib ignored them); without them every task
// gets getChunkSize() and the global rank of its index; in read mode
// getChunkSizes()/getGlobalRanks() return the file's arrays (valid while the
// object lives); operator>> exists here too; copying is not allowed (moving
// is).
#ifndef SION_CXX_SERIAL_HPP_
#define SION_CXX_SERIAL_HPP_

#include "sion.h"
#include "sion_cxx_common.hpp"
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sionlib {
namespace serial {

class SIONFile : public SION_Base {
public:
  SIONFile(std::string sion_file_name, std::string mode = "wb", int num_tasks = 1, int num_files = 1,
           sion_int64 *chunk_sizes = nullptr, sion_int32 fs_blk_size = -1, int *global_ranks = nullptr)
  {
    _sion_file_name = sion_file_name;
    _mode = mode;
    _num_tasks = num_tasks;
    _num_files = num_files;
    _chunk_sizes_given = chunk_sizes;
    _fs_blk_size = fs_blk_size;
    _global_ranks_given = global_ranks;
  }
  SIONFile(SIONFile &&o) noexcept { *this = std::move(o); }
  SIONFile &operator=(SIONFile &&o) noexcept
  {
    if (this != &o) {
      if (_open)
        close();
      static_cast<void>(swapState(o));
    }
    return *this;
  }
  ~SIONFile()
  {
    if (_open)
      close();
  }

  // Opens all tasks (sion_open). Write: getNumberOfTasks() tasks with the
  // chunk sizes and global ranks given (or getChunkSize() each, ranks
  // 0..n-1). Read: tasks, files, block size, chunk sizes and ranks are
  // read from the file. getSid() < 0 on failure.
  void open()
  {
    if (_open)
      close();
    FILE *fp = nullptr;
    if (isWrite()) {
      _cs.assign(_num_tasks > 0 ? _num_tasks : 0, _chunk_size);
      _gr.resize(_cs.size());
      for (size_t i = 0; i < _cs.size(); i++) {
        if (_chunk_sizes_given)
          _cs[i] = _chunk_sizes_given[i];
        _gr[i] = _global_ranks_given ? _global_ranks_given[i] : static_cast<int>(i);
      }
      sion_int64 *cs = _cs.data();
      int *gr = _gr.data();
      _sid = sion_open(const_cast<char *>(_sion_file_name.c_str()), _mode.c_str(), &_num_tasks, &_num_files,
                       &cs, &_fs_blk_size, &gr, &fp);
    } else {
      sion_int64 *cs = nullptr;
      int *gr = nullptr;
      _sid = sion_open(const_cast<char *>(_sion_file_name.c_str()), _mode.c_str(), &_num_tasks, &_num_files,
                       &cs, &_fs_blk_size, &gr, &fp);
      if (_sid >= 0 && cs && gr) {
        _cs.assign(cs, cs + _num_tasks);
        _gr.assign(gr, gr + _num_tasks);
        _chunk_sizes_given = _cs.data();
        _global_ranks_given = _gr.data();
      }
      std::free(cs);
      std::free(gr);
    }
    _file_ptr = fp;
    _open = _sid >= 0;
    _return_code = _sid;
  }

  // Opens one task for reading (sion_open_rank; getRank() = the task).
  void openRank()
  {
    if (_open)
      close();
    FILE *fp = nullptr;
    _sid = sion_open_rank(const_cast<char *>(_sion_file_name.c_str()), _mode.c_str(), &_chunk_size,
                          &_fs_blk_size, &_rank, &fp);
    _file_ptr = fp;
    _open = _sid >= 0;
    _return_code = _sid;
  }

  int close()
  {
    if (!_open)
      return SION_NOT_SUCCESS;
    _open = false;
    _return_code = sion_close(_sid);
    return _return_code;
  }

  // The bytes of one value (trivially copyable types).
  template <class T> void write(T data)
  {
    static_assert(std::is_trivially_copyable<T>::value, "SIONFile::write(T): T must be trivially copyable");
    _return_code = static_cast<int>(sion_fwrite(reinterpret_cast<const char *>(&data), 1, sizeof(data), _sid));
  }
  // As SIONlib: the current task's whole chunk (getChunkSizes()[getRank()]
  // bytes) from data.
  template <class T> void write(T *data)
  {
    sion_int64 n = _chunk_sizes_given ? _chunk_sizes_given[_rank] : _chunk_size;
    _return_code = static_cast<int>(sion_fwrite(reinterpret_cast<const char *>(data), 1, (size_t)n, _sid));
  }
  // length items of unit bytes from a container with data() (std::vector, std::string, ...).
  template <class T> void write(const T &data, int unit, int length)
  {
    _return_code = static_cast<int>(sion_fwrite((const void *)data.data(), unit, length, _sid));
  }

  template <typename T> void read(T *data) { readDone(sion_fread(data, 1, sizeof(T), _sid)); }
  template <typename T> void read(T *data, int unit, int length) { readDone(sion_fread(data, unit, length, _sid)); }

  // sheaf: true at the end of the current task's data (sion_feof)
  bool endOfFile() { return sion_feof(_sid) != 0; }

private:
  bool isWrite() const { return isWriteMode(_mode); }
  int swapState(SIONFile &o)
  {
    std::swap(static_cast<SION_Base &>(*this), static_cast<SION_Base &>(o));
    _cs.swap(o._cs);
    _gr.swap(o._gr);
    o._open = false;
    return 0;
  }
  std::vector<sion_int64> _cs;
  std::vector<int> _gr;
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

} // namespace serial
} // namespace sionlib

#endif /* SION_CXX_SERIAL_HPP_ */
