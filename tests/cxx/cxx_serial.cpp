// cxx_serial - sionlib::serial::SIONFile (bindings/cxx): a 3-task container
// written with <<, write(value), write(container, unit, length), closed by
// RAII (the destructor), checked through the C API byte for byte, read back
// through the class (open, openRank, >>, read), a moved object, and bad input
// (a missing file, calls on a closed object). Each task's bytes also go to
// expect.<t> for the sioncat comparison. Prints "cxx_serial: OK".
#include <sion_cxx.h>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

static int nbad = 0;
#define CHECK(c)                                                         \
  do {                                                                   \
    if (!(c)) {                                                          \
      std::printf("cxx_serial: FAILED %s (line %d)\n", #c, __LINE__);    \
      nbad++;                                                            \
    }                                                                    \
  } while (0)

struct Rec {      // no padding: its bytes are all defined
  long long id;
  double x[3];
};

// the bytes task t stores, in order
static std::vector<char> task_bytes(int t, int &id, Rec &rec, std::vector<char> &blob)
{
  id = 1000 + t;
  rec.id = t;
  for (int k = 0; k < 3; k++)
    rec.x[k] = t + 0.5 * k;
  blob.assign(50 + 10 * t, 0);
  for (size_t k = 0; k < blob.size(); k++)
    blob[k] = static_cast<char>('a' + (k + t) % 26);
  std::vector<char> all(sizeof id + sizeof rec + blob.size());
  std::memcpy(all.data(), &id, sizeof id);
  std::memcpy(all.data() + sizeof id, &rec, sizeof rec);
  std::memcpy(all.data() + sizeof id + sizeof rec, blob.data(), blob.size());
  return all;
}

int main()
{
  const int nt = 3;
  sion_int64 chunks[nt] = {64, 128, 256};
  int granks[nt] = {10, 11, 12};
  {
    sionlib::serial::SIONFile f("s.sion", "wb", nt, 1, chunks, -1, granks);
    f.open();
    CHECK(f.getSid() >= 0 && f.isOpen());
    for (int t = 0; t < nt; t++) {
      int id;
      Rec rec;
      std::vector<char> blob;
      std::vector<char> all = task_bytes(t, id, rec, blob);
      f.seek(t, SION_CURRENT_BLK, SION_CURRENT_POS);
      CHECK(f.getReturnCode() == SION_SUCCESS);
      f << id;
      CHECK(f.getReturnCode() == (int)sizeof id);
      f.write(rec);
      f.write(blob, 1, (int)blob.size());
      CHECK(f.getReturnCode() == (int)blob.size());
      std::ofstream(("expect." + std::to_string(t)).c_str(), std::ios::binary).write(all.data(), all.size());
    }
  } // the destructor closes the container

  // through the C API
  {
    int ntasks = 0, nfiles = 0;
    sion_int32 fsblk = -1;
    sion_int64 *cs = nullptr;
    int *gr = nullptr;
    int sid = sion_open(const_cast<char *>("s.sion"), "rb", &ntasks, &nfiles, &cs, &fsblk, &gr, nullptr);
    CHECK(sid >= 0 && ntasks == nt);
    if (sid >= 0) {
      for (int t = 0; t < nt; t++) {
        int id;
        Rec rec;
        std::vector<char> blob;
        std::vector<char> all = task_bytes(t, id, rec, blob), got(all.size() + 8);
        CHECK(gr[t] == granks[t]);
        sion_seek(sid, t, 0, 0);
        size_t n = sion_fread(got.data(), 1, all.size(), sid);
        CHECK(n == all.size() && std::memcmp(got.data(), all.data(), n) == 0);
        CHECK(sion_feof(sid) == 1);
      }
      sion_close(sid);
    }
    std::free(cs);
    std::free(gr);
  }

  // through the class
  {
    sionlib::serial::SIONFile r("s.sion", "rb");
    r.open();
    CHECK(r.isOpen() && r.getNumberOfTasks() == nt && r.getNumberOfFiles() == 1);
    CHECK(r.getGlobalRanks() && r.getGlobalRanks()[2] == 12);
    CHECK(r.getChunkSizes() && r.getChunkSizes()[1] >= 128);
    sionlib::serial::SIONFile moved(std::move(r));   // one owner: only `moved` closes
    CHECK(moved.isOpen() && !r.isOpen());
    for (int t = nt - 1; t >= 0; t--) {
      int id, id2 = 0;
      Rec rec, rec2;
      std::vector<char> blob, blob2(200);
      task_bytes(t, id, rec, blob);
      moved.seek(t, 0, 0);
      moved >> id2;
      CHECK(id2 == id && moved.getNumberOfSuccessfulReadElements() == (int)sizeof id);
      moved.read(&rec2);
      CHECK(std::memcmp(&rec2, &rec, sizeof rec) == 0);
      moved.read(blob2.data(), 1, (int)blob.size());
      CHECK(moved.getReturnCode() == (int)blob.size() && std::memcmp(blob2.data(), blob.data(), blob.size()) == 0);
      CHECK(moved.endOfFile());
    }
    CHECK(moved.close() == SION_SUCCESS && !moved.isOpen());
    CHECK(moved.close() == SION_NOT_SUCCESS); // twice: refused, no crash
  }
  {
    sionlib::serial::SIONFile one("s.sion", "rb");
    one.setRank(1);
    one.openRank();
    CHECK(one.isOpen());
    int id, id2 = 0;
    Rec rec;
    std::vector<char> blob;
    task_bytes(1, id, rec, blob);
    one >> id2;
    CHECK(id2 == id);
  }

  // bad input
  {
    sheaf_set_error_printing(0);
    sionlib::serial::SIONFile bad("missing.sion", "rb");
    bad.open();
    CHECK(bad.getSid() < 0 && !bad.isOpen());
    CHECK(std::strstr(sheaf_last_error(), "missing.sion") != nullptr);
    int x = 7;
    bad >> x;
    CHECK(bad.getReturnCode() == 0 && x == 7);
    sionlib::serial::SIONFile ro("s.sion", "wb", 1);
    ro.setRank(0);
    ro.openRank(); // write mode: refused
    CHECK(!ro.isOpen());
  }

  if (nbad) {
    std::printf("cxx_serial: FAILED (%d checks)\n", nbad);
    return 1;
  }
  std::printf("cxx_serial: OK\n");
  return 0;
}
