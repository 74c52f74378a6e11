/* launch_py.h - sheaf-launch's --python-prefix inferred (launch_py.c) */
#ifndef SHEAF_LAUNCH_PY_H
#define SHEAF_LAUNCH_PY_H
#include <stddef.h>

/* When line[at] (the launch line's executable) is a Python interpreter or a
 * ".py" script with a Python "#!" line (read from the copy the server at
 * sock hands out; sock may be NULL), appends to the ':'-separated list the
 * directories CPython searches: the script's directory, PYTHONPATH (the
 * environment and NAME=VALUE words before the executable), the user site and
 * the interpreter's lib/python* directories of sys.prefix and
 * sys.base_prefix. 0 (also when it is not Python), -1 when the list is full. */
int lpy_infer(char **line, int n, int at, const char *sock, int timeout, char *list, size_t cap);

#endif
