/* launch_py.c - sheaf-launch's --python-prefix inferred when none is given
 * (issue 26 item 7): when the launch line's executable is a Python
 * interpreter (its name starts with "python", or a ".py" script whose "#!"
 * line names one, read from the server's node-local copy), the directories
 * CPython searches are served: the script's directory (sys.path[0]), every
 * PYTHONPATH entry (the launcher's environment and NAME=VALUE words of the
 * launch line before the executable, as `env PYTHONPATH=... python3` sets
 * them), and the interpreter's own library directories: <prefix>/lib/python*
 * (also lib64 and local/lib) of sys.prefix and sys.base_prefix, found as
 * CPython finds them (a venv's pyvenv.cfg next to or above the executable
 * and its "home", else the resolved executable's grandparent), without
 * running the interpreter. Nothing here reads a file of the shared tree but
 * pyvenv.cfg beside the interpreter and the listings of its lib directories. */
#define _GNU_SOURCE
#include "launch_py.h"
#include "sheaf_loader.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int has_entry(const char *list, const char *v)
{
    size_t l = strlen(v);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == l && !memcmp(s, v, l))
            return 1;
        s += n + (e ? 1 : 0);
    }
    return 0;
}

/* one more absolute, ':'-free directory (duplicates skipped); -1 when full */
static int add(char *list, size_t cap, const char *v)
{
    size_t n = strlen(list), l = strlen(v);
    if (!l || v[0] != '/' || strchr(v, ':') || has_entry(list, v))
        return 0;
    if (n + l + 2 > cap)
        return -1;
    snprintf(list + n, cap - n, "%s%s", n ? ":" : "", v);
    return 0;
}

/* an absolute form of p, lexically (no file-system access): cwd joined */
static int absolute(const char *p, char *out, size_t cap)
{
    if (p[0] == '/')
        return snprintf(out, cap, "%s", p) < (int)cap ? 0 : -1;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return snprintf(out, cap, "%s/%s", cwd, p) < (int)cap ? 0 : -1;
}

/* the interpreter named w (a path, or a name searched in PATH) */
static int find_in_path(const char *w, char *out, size_t cap)
{
    if (strchr(w, '/'))
        return absolute(w, out, cap);
    const char *path = getenv("PATH");
    for (const char *s = path ? path : ""; *s;) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char p[PATH_MAX];
        if (n && snprintf(p, sizeof p, "%.*s/%s", (int)n, s, w) < (int)sizeof p && !access(p, X_OK))
            return absolute(p, out, cap);
        s += n + (e ? 1 : 0);
    }
    return -1;
}

static int is_python_name(const char *w)
{
    const char *b = strrchr(w, '/');
    return !strncmp(b ? b + 1 : w, "python", 6);
}

/* every <dir>/python* directory (python3.11, python3: dist-packages) */
static int add_lib_dirs(char *list, size_t cap, const char *prefix)
{
    static const char *const sub[] = {"lib", "lib64", "local/lib"};
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        char d[PATH_MAX], p[PATH_MAX];
        if (snprintf(d, sizeof d, "%s/%s", strcmp(prefix, "/") ? prefix : "", sub[i]) >= (int)sizeof d)
            continue;
        DIR *dir = opendir(d);
        if (!dir)
            continue;
        struct dirent *e;
        int rc = 0;
        while (!rc && (e = readdir(dir)))
            if (!strncmp(e->d_name, "python", 6) && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) &&
                snprintf(p, sizeof p, "%s/%s", d, e->d_name) < (int)sizeof p)
                rc = add(list, cap, p);
        closedir(dir);
        if (rc)
            return -1;
    }
    return 0;
}

/* sys.prefix and sys.base_prefix of the interpreter at exe (absolute) */
static int add_interp(char *list, size_t cap, const char *exe)
{
    char d[2][PATH_MAX], cfg[PATH_MAX], real[PATH_MAX], line[PATH_MAX + 16];
    snprintf(d[0], sizeof d[0], "%s", exe);
    dirname(d[0]); /* venv: <venv>/bin/python, pyvenv.cfg in <venv> (or beside it) */
    snprintf(d[1], sizeof d[1], "%s", d[0]);
    dirname(d[1]);
    for (int up = 1; up >= 0; up--) {
        if (snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", strcmp(d[up], "/") ? d[up] : "") >= (int)sizeof cfg)
            continue;
        FILE *f = fopen(cfg, "re");
        if (!f)
            continue;
        if (add_lib_dirs(list, cap, d[up])) {
            fclose(f);
            return -1;
        }
        int rc = 0;
        while (!rc && fgets(line, sizeof line, f)) {
            char *v = line + strspn(line, " \t");
            if (strncmp(v, "home", 4) || !strchr(v, '='))
                continue;
            v = strchr(v, '=') + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\r\n")] = 0;
            if (realpath(v, real)) /* home is the base interpreter's bin directory */
                rc = add_lib_dirs(list, cap, dirname(real));
        }
        fclose(f);
        return rc;
    }
    if (!realpath(exe, real))
        return 0;
    return add_lib_dirs(list, cap, dirname(dirname(real)));
}

static int add_pythonpath(char *list, size_t cap, const char *v)
{
    char one[PATH_MAX], abs[PATH_MAX];
    for (const char *s = v; s && *s;) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n && n < sizeof one) {
            snprintf(one, sizeof one, "%.*s", (int)n, s);
            if (!absolute(one, abs, sizeof abs) && add(list, cap, abs))
                return -1;
        }
        s += n + (e ? 1 : 0);
    }
    return 0;
}

/* a ".py" executable: the interpreter its "#!" line names, read from the
 * server's copy (the server reads the file once anyway; nothing more reaches
 * the shared tree); 0 and interp, or -1 */
static int shebang(const char *script, const char *sock, int timeout, char *interp, size_t cap)
{
    char abs[PATH_MAX], copy[PATH_MAX], line[PATH_MAX];
    if (!sock || absolute(script, abs, sizeof abs) ||
        sheaf_loader_request(sock, SHEAF_LOADER_LOOKUP, abs, copy, sizeof copy, timeout) || copy[0] != '/')
        return -1;
    FILE *f = fopen(copy, "re");
    if (!f)
        return -1;
    char *l = fgets(line, sizeof line, f);
    fclose(f);
    if (!l || strncmp(l, "#!", 2))
        return -1;
    l[strcspn(l, "\r\n")] = 0;
    char *w = strtok(l + 2, " \t"), *arg = strtok(NULL, " \t");
    if (!w)
        return -1;
    const char *b = strrchr(w, '/');
    if (!strcmp(b ? b + 1 : w, "env") && arg) /* #!/usr/bin/env python3 */
        w = arg;
    if (!is_python_name(w))
        return -1;
    return find_in_path(w, interp, cap);
}

/* the script CPython runs (argv after the interpreter): its index, or -1 */
static int script_of(char **line, int n, int at)
{
    for (int i = at + 1; i < n; i++) {
        const char *w = line[i];
        if (!strcmp(w, "-c") || !strcmp(w, "-m") || !strcmp(w, "-") || !strcmp(w, "--"))
            return -1;
        if (!strcmp(w, "-W") || !strcmp(w, "-X")) {
            i++;
            continue;
        }
        if (w[0] != '-')
            return i;
    }
    return -1;
}

int lpy_infer(char **line, int n, int at, const char *sock, int timeout, char *list, size_t cap)
{
    if (at < 0 || at >= n)
        return 0;
    char interp[PATH_MAX], dir[PATH_MAX];
    int script = -1;
    if (is_python_name(line[at])) {
        if (find_in_path(line[at], interp, sizeof interp))
            return 0;
        script = script_of(line, n, at);
    } else {
        size_t l = strlen(line[at]);
        if (l < 3 || strcmp(line[at] + l - 3, ".py") || shebang(line[at], sock, timeout, interp, sizeof interp))
            return 0; /* not Python */
        script = at;
    }
    if (script >= 0 && !absolute(line[script], dir, sizeof dir) && add(list, cap, dirname(dir)))
        return -1;
    for (int i = 0; i < at; i++)
        if (!strncmp(line[i], "PYTHONPATH=", 11) && add_pythonpath(list, cap, line[i] + 11))
            return -1;
    if (add_pythonpath(list, cap, getenv("PYTHONPATH")))
        return -1;
    const char *home = getenv("HOME");
    char user[PATH_MAX]; /* the user site: ~/.local/lib/pythonX.Y */
    if (home && snprintf(user, sizeof user, "%s/.local", home) < (int)sizeof user && add_lib_dirs(list, cap, user))
        return -1;
    return add_interp(list, cap, interp);
}
