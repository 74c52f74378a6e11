// compiled by the find_package consumer: sion_cxx.h through sheaf::sheaf_cxx
#include <sion_cxx.h>
int cxx_check(void);
int cxx_check(void)
{
    sionlib::serial::SIONFile f("x.sion", "rb");
    return f.getSid() < 0 ? 0 : 1;
}
