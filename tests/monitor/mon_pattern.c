/* mon_pattern.c - a program with a known I/O pattern for the monitor's exact
 * counts (test_monitor.py pattern): POSIX, stdio, readv/writev, mmap, stat,
 * two threads writing through one descriptor, a forked child with its own
 * file and a write to an inherited descriptor. usage: mon_pattern DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[20000];
static int dfd;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        if (write(dfd, buf, 8) != 8)
            die("write D");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (chdir(argv[1]))
        die("chdir");
    memset(buf, 'x', sizeof buf);
    /* A: 10 x 1000 bytes written in sequence, one pwrite of 100 at 20000, a seek, an fsync */
    int fd = open("A", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        die("open A");
    for (int i = 0; i < 10; i++)
        if (write(fd, buf, 1000) != 1000)
            die("write A");
    if (pwrite(fd, buf, 100, 20000) != 100 || lseek(fd, 0, SEEK_SET) != 0 || fsync(fd))
        die("pwrite/lseek/fsync A");
    close(fd);
    /* A read back: 4 x 2500, a pread of 100 at 20000, an fstat, a mmap of 4096 */
    fd = open("A", O_RDONLY);
    if (fd < 0)
        die("open A");
    for (int i = 0; i < 4; i++)
        if (read(fd, buf, 2500) != 2500)
            die("read A");
    struct stat st;
    if (pread(fd, buf, 100, 20000) != 100 || fstat(fd, &st))
        die("pread/fstat A");
    void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        die("mmap A");
    munmap(m, 4096);
    close(fd);
    if (stat("A", &st))
        die("stat A");
    /* B through stdio: 5 fwrite of 200, 3 fputc, fputs of 5, fprintf of 5 = 10 writes, 1013 bytes;
     * then one fread of 1013 and 2 fgets reading 4 and 3 bytes */
    FILE *f = fopen("B", "w");
    if (!f)
        die("fopen B");
    for (int i = 0; i < 5; i++)
        fwrite(buf, 1, 200, f);
    fputc('a', f);
    fputc('b', f);
    fputc('\n', f);
    fputs("hello", f);
    fprintf(f, "%d", 12345);
    fclose(f);
    f = fopen("B", "r");
    if (!f || fread(buf, 1, 1013, f) != 1013)
        die("fread B");
    fclose(f);
    f = fopen("B", "r");
    char line[16];
    if (!f || fseek(f, 1000, SEEK_SET) || !fgets(line, sizeof line, f) || !fgets(line, 4, f))
        die("fgets B");
    fclose(f);
    /* C: one writev of 10+20+30, one readv of 30+30 */
    fd = open("C", O_CREAT | O_RDWR | O_TRUNC, 0644);
    struct iovec iov[3] = {{buf, 10}, {buf + 10, 20}, {buf + 30, 30}};
    if (fd < 0 || writev(fd, iov, 3) != 60 || lseek(fd, 0, SEEK_SET) != 0)
        die("writev C");
    struct iovec riov[2] = {{buf, 30}, {buf + 30, 30}};
    if (readv(fd, riov, 2) != 60)
        die("readv C");
    close(fd);
    /* D: two threads, 1000 writes of 8 bytes each, on one descriptor */
    dfd = open("D", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (dfd < 0)
        die("open D");
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, writer, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    /* a forked child: E (3 writes of 111) and 50 bytes to the inherited D */
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        int e = open("E", O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (int i = 0; i < 3; i++)
            if (write(e, buf, 111) != 111)
                _exit(1);
        close(e);
        if (write(dfd, buf, 50) != 50)
            _exit(1);
        exit(0);
    }
    int ws;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws))
        die("child");
    close(dfd);
    /* F: 10 bytes, closed by close_range; a pipe then reuses the number: its 5 bytes are not F's */
    int ffd = open("F", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int pp[2];
    if (ffd < 0 || write(ffd, buf, 10) != 10 || close_range((unsigned)ffd, (unsigned)ffd, 0) || pipe(pp))
        die("F");
    if (pp[0] != ffd && pp[1] != ffd)
        die("pipe did not reuse F's descriptor");
    if (write(pp[1], buf, 5) != 5)
        die("pipe");
    return 0;
}
