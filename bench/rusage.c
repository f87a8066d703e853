/*
 * rusage.c — runs a command and reports the time and memory it used.
 *
 *   rusage [-o FILE] [-t SECONDS] CMD ARGS...
 *
 * The command's stdout goes to /dev/null, or to FILE with -o; its stderr is
 * left alone. With -t the command is killed (SIGKILL) after SECONDS. Prints
 * one JSON line from the wall clock and wait4()'s rusage:
 *   {"wall_s":..,"user_s":..,"sys_s":..,"max_rss_mb":..,"exit":..,"timed_out":..}
 * exit is the command's exit status, or 128 + the signal that ended it, and
 * is also rusage's own exit status (127 when CMD cannot be run). Used by
 * bench/run.sh for the speed figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* In the child: stdout to out (or /dev/null), then exec. Never returns. */
static void run_child(const char *out, char **argv, const sigset_t *oldmask)
{
    int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        fprintf(stderr, "rusage: %s: %s\n", out ? out : "/dev/null", strerror(errno));
        _exit(127);
    }
    close(fd);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    execvp(argv[0], argv);
    fprintf(stderr, "rusage: %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Waits for SIGCHLD up to timeout seconds (0: forever); kills pid when the
 * time is up. Returns 1 when it had to kill. */
static int wait_or_kill(pid_t pid, double timeout, const sigset_t *chld)
{
    if (timeout <= 0)
        return 0;
    double deadline = now_s() + timeout;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            kill(pid, SIGKILL);
            return 1;
        }
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        siginfo_t info = {0};
        if (sigtimedwait(chld, NULL, &ts) == SIGCHLD &&
            waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
            return 0;
    }
}

static int parse_opts(int argc, char **argv, const char **out, double *timeout)
{
    int opt;
    char *end;
    while ((opt = getopt(argc, argv, "+o:t:")) != -1) {
        if (opt == 'o') {
            *out = optarg;
        } else if (opt == 't') {
            *timeout = strtod(optarg, &end);
            if (end == optarg || *end || !(*timeout > 0))
                return -1;
        } else {
            return -1;
        }
    }
    return optind < argc ? optind : -1;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    double timeout = 0;
    int first = parse_opts(argc, argv, &out, &timeout);
    if (first < 0) {
        fprintf(stderr, "usage: rusage [-o FILE] [-t SECONDS] CMD ARGS...\n");
        return 2;
    }
    sigset_t chld, oldmask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &oldmask); /* so sigtimedwait sees it */
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage: fork");
        return 127;
    }
    if (pid == 0)
        run_child(out, argv + first, &oldmask);
    int timed_out = wait_or_kill(pid, timeout, &chld);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("rusage: wait4");
            return 127;
        }
    double wall = now_s() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("{\"wall_s\":%.6f,\"user_s\":%.6f,\"sys_s\":%.6f,\"max_rss_mb\":%.1f,\"exit\":%d,"
           "\"timed_out\":%s}\n",
           wall, tv_s(ru.ru_utime), tv_s(ru.ru_stime), (double)ru.ru_maxrss / 1024.0, code,
           timed_out ? "true" : "false");
    return code;
}
