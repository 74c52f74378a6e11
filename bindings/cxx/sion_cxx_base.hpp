// sion_cxx_base.hpp - SION_Base, the state and getters that SIONlib 1.7's
// serial and MPI SIONFile classes share. Header-only over the C API (sheaf).
// Calls never throw: as in SIONlib, results are in getReturnCode() and
// getSid() (< 0 when an open failed; sheaf_last_error() has the message).
#ifndef SION_CXX_BASE_HPP_
#define SION_CXX_BASE_HPP_

#include "sion.h"
#include <cstdio>
#include <string>
#include <vector>

class SION_Base {
public:
  SION_Base() = default;
  SION_Base(const SION_Base &) = delete;             // one open container, one owner
  SION_Base &operator=(const SION_Base &) = delete;
  SION_Base(SION_Base &&) = default;                  // the derived classes' moves use these
  SION_Base &operator=(SION_Base &&) = default;
  ~SION_Base() = default;

  char *getSionFileName() const { return const_cast<char *>(_sion_file_name.c_str()); }
  void setMode(std::string mode) { _mode = mode; }
  std::string getMode() const { return _mode; }
  void setNumberOfFiles(int num_files) { _num_files = num_files; }
  int getNumberOfFiles() const { return _num_files; }
  void setNumberOfTasks(int num_tasks) { _num_tasks = num_tasks; }
  int getNumberOfTasks() const { return _num_tasks; }
  void setRank(int rank) { _rank = rank; }
  int getRank() const { return _rank; }
  void setChunkSize(sion_int64 chunk_size) { _chunk_size = chunk_size; }
  sion_int64 getChunkSize() const { return _chunk_size; }
  // The array is copied (SIONlib keeps the caller's pointer).
  void setChunkSizes(sion_int64 *chunk_sizes) { _chunk_sizes_given = chunk_sizes; }
  sion_int64 *getChunkSizes() const { return _chunk_sizes_given; }
  void setGlobalRanks(int *global_ranks) { _global_ranks_given = global_ranks; }
  int *getGlobalRanks() const { return _global_ranks_given; }
  void setFileSystemBlockSize(sion_int32 fs_blk_size) { _fs_blk_size = fs_blk_size; }
  sion_int32 getFileSystemBlockSize() const { return _fs_blk_size; }
  int getNumberOfSuccessfulReadElements() const { return _number_of_elements_sucessfully_read; }
  int getSid() const { return _sid; }
  int getReturnCode() const { return _return_code; }
  bool isOpen() const { return _open; }   // sheaf: open() succeeded, close() not yet called

  // Seeking: SIONlib's seek() keeps rank, block and position (flushes the
  // position); sheaf adds the full form.
  void seek() { _return_code = sion_seek(_sid, SION_CURRENT_RANK, SION_CURRENT_BLK, SION_CURRENT_POS); }
  void seek(int rank, int block, sion_int64 pos) { _return_code = sion_seek(_sid, rank, block, pos); }

  int getFileEndianness() const { return sion_get_file_endianness(_sid); }
  sion_int64 getBytesWritten() const { return sion_get_bytes_written(_sid); }
  sion_int64 getBytesRead() const { return sion_get_bytes_read(_sid); }
  sion_int64 getBytesAvailInBlock() const { return sion_bytes_avail_in_block(_sid); }
  sion_int64 getBytesAvailInChunk() const { return sion_bytes_avail_in_chunk(_sid); }
  sion_int64 getPosition() const { return sion_get_position(_sid); }

  // SIONlib's write modes: a token w, wb or bw in the comma-separated mode
  static bool isWriteMode(const std::string &mode)
  {
    size_t start = 0;
    while (start <= mode.size()) {
      size_t comma = mode.find(',', start);
      std::string tok = mode.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (tok == "w" || tok == "wb" || tok == "bw")
        return true;
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    return false;
  }

protected:
  // read calls record both the items read and the return code
  void readDone(size_t n)
  {
    _number_of_elements_sucessfully_read = static_cast<int>(n);
    _return_code = static_cast<int>(n);
  }

  std::string _sion_file_name;
  std::string _mode;
  int _num_files = 1;
  int _num_tasks = 1;
  int _rank = 0;
  sion_int64 *_chunk_sizes_given = nullptr;
  sion_int64 _chunk_size = 0;
  sion_int32 _fs_blk_size = -1;
  int *_global_ranks_given = nullptr;
  FILE *_file_ptr = nullptr;
  int _number_of_elements_sucessfully_read = 0;
  int _return_code = 0;
  int _sid = -9999;
  bool _open = false;
};

#endif /* SION_CXX_BASE_HPP_ */
