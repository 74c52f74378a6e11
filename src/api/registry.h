/* registry.h - moved: the table of open sids is src/sid/sid.h now (below both
 * src/api and src/par). This forwarding header only keeps branches written
 * against the old place compiling; the test `layers` fails for any file of a
 * layer above-or-beside api that includes it. Include ../sid/sid.h instead. */
#include "../sid/sid.h"
