/*
 * harness.c — private PostgreSQL, the server under test and an HTTP client
 * for API tests (see tests/harness.h).
 *
 * PostgreSQL refuses to run as root, so when the tests run as root its
 * commands (initdb, pg_ctl) run as the `postgres` user: the child process
 * drops to that user (setgid/setuid, the same as `runuser -u postgres --`)
 * before exec, and the directory is handed to it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/harness.h"

#define HARNESS_MAX_ENV 32

struct harness {
    char dir[256];    /* mkdtemp; everything lives here */
    char pgdata[300];
    char pgbin[256];
    char bin[4096];   /* perfcast, absolute */
    char url[256];
    int as_postgres;  /* running as root: PostgreSQL as the postgres user */
    uid_t pg_uid;
    gid_t pg_gid;
    int pg_port;
    int pg_running;
    pid_t server;     /* 0 when not running */
    int port;
    long log_offset;  /* where the current server's log starts */
    char *env[HARNESS_MAX_ENV + 1];
    pid_t reaper;
    int reaper_fd;    /* write end: 'q' = cleaned up; EOF = the test died */
    int attached;     /* harness_second(): the PostgreSQL is another harness's */
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("harness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static void path_join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* --- processes ----------------------------------------------------------- */

/* In a forked child: output to log, stdin from /dev/null, cwd the harness
 * directory, and the postgres user when asked. */
static void child_setup(const harness *h, int as_pg, const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    if (chdir(h->dir))
        _exit(127);
    if (as_pg && h->as_postgres &&
        (setgroups(0, NULL) || setgid(h->pg_gid) || setuid(h->pg_uid)))
        _exit(126);
}

/* Runs argv (argv[0] a path) to completion with output appended to log.
 * Returns its exit status, -1 when it could not run or was killed. */
static int run(const harness *h, int as_pg, char *const argv[], const char *log)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        child_setup(h, as_pg, log);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* --- PostgreSQL ---------------------------------------------------------- */

static int find_pgbin(harness *h)
{
    const char *env = getenv("PERFCAST_PG_BIN");
    char probe[600];
    if (env && *env) {
        snprintf(h->pgbin, sizeof h->pgbin, "%s", env);
        path_join(probe, sizeof probe, h->pgbin, "initdb");
        return access(probe, X_OK) ? -1 : 0;
    }
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : "");
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        path_join(probe, sizeof probe, d, "initdb");
        if (*d && !access(probe, X_OK)) {
            snprintf(h->pgbin, sizeof h->pgbin, "%s", d);
            free(copy);
            return 0;
        }
    }
    free(copy);
    glob_t g;
    int found = -1;
    if (!glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g)) {
        /* the newest major version: compare numerically */
        int best = -1;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));
            if (v > best) {
                best = v;
                snprintf(h->pgbin, sizeof h->pgbin, "%.*s", (int)(strlen(g.gl_pathv[i]) - 7),
                         g.gl_pathv[i]);
                found = 0;
            }
        }
        globfree(&g);
    }
    return found;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof a) &&
        !getsockname(fd, (struct sockaddr *)&a, &len))
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* pg_ctl start on h->pg_port, waiting until it accepts connections. */
static int pg_ctl_start(harness *h)
{
    char exe[600], log[300], ctl_log[300], opts[600];
    path_join(exe, sizeof exe, h->pgbin, "pg_ctl");
    path_join(log, sizeof log, h->dir, "postgres.log");
    path_join(ctl_log, sizeof ctl_log, h->dir, "pg_ctl.log");
    snprintf(opts, sizeof opts,
             "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
             "-c full_page_writes=off",
             h->pg_port, h->dir);
    char *argv[] = {exe, "-D", h->pgdata, "-l", log, "-w", "-t", "30", "-o", opts, "start", NULL};
    return run(h, 1, argv, ctl_log);
}

/* pg_ctl stop; mode "fast" (disconnects clients, clean) or "immediate". */
static int pg_ctl_stop(harness *h, const char *mode)
{
    char exe[600], ctl_log[300], m[16];
    path_join(exe, sizeof exe, h->pgbin, "pg_ctl");
    path_join(ctl_log, sizeof ctl_log, h->dir, "pg_ctl.log");
    snprintf(m, sizeof m, "%s", mode);
    char *argv[] = {exe, "-D", h->pgdata, "-w", "-t", "30", "-m", m, "stop", NULL};
    return run(h, 1, argv, ctl_log);
}

int harness_pg_start(harness *h)
{
    if (h->pg_running)
        return 0;
    if (pg_ctl_start(h)) {
        say("pg_ctl start failed on port %d; see %s/postgres.log", h->pg_port, h->dir);
        return -1;
    }
    h->pg_running = 1;
    return 0;
}

int harness_pg_stop(harness *h)
{
    if (!h->pg_running)
        return 0;
    int rc = pg_ctl_stop(h, "fast");
    h->pg_running = 0;
    return rc ? -1 : 0;
}

static int pg_setup(harness *h)
{
    if (find_pgbin(h)) {
        say("PostgreSQL server binaries not found (initdb): install postgresql or set "
            "PERFCAST_PG_BIN");
        return -1;
    }
    path_join(h->pgdata, sizeof h->pgdata, h->dir, "pg");
    char exe[600], log[300];
    path_join(exe, sizeof exe, h->pgbin, "initdb");
    path_join(log, sizeof log, h->dir, "initdb.log");
    char *argv[] = {exe, "-D", h->pgdata, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                    "--no-sync", "--no-instructions", NULL};
    if (run(h, 1, argv, log)) {
        say("initdb failed; see %s", log);
        return -1;
    }
    /* a port can be taken between choosing and binding: try a few */
    for (int attempt = 0; attempt < 5; attempt++) {
        h->pg_port = free_port();
        if (h->pg_port > 0 && !pg_ctl_start(h)) {
            h->pg_running = 1;
            snprintf(h->url, sizeof h->url, "postgresql://postgres@127.0.0.1:%d/postgres",
                     h->pg_port);
            return 0;
        }
    }
    say("PostgreSQL did not start; see %s/postgres.log", h->dir);
    return -1;
}

int harness_sql(harness *h, const char *sql, char *out, size_t cap)
{
    PGconn *c = PQconnectdb(h->url);
    int rc = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
            snprintf(out, cap, "%s",
                     st == PGRES_TUPLES_OK && PQntuples(r) && PQnfields(r) ? PQgetvalue(r, 0, 0)
                                                                          : "");
            rc = 0;
        } else {
            say("sql failed: %s", PQresultErrorMessage(r));
        }
        PQclear(r);
    } else {
        say("cannot connect to %s: %s", h->url, PQerrorMessage(c));
    }
    PQfinish(c);
    return rc;
}

/* --- the server ---------------------------------------------------------- */

static void server_log_path(const harness *h, char *out, size_t cap)
{
    path_join(out, cap, h->dir, "server.log");
}

/* The port from the first "listening" line after the current offset, 0 while
 * there is none. */
static int read_listen_port(const harness *h)
{
    char path[300], line[4096];
    server_log_path(h, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int port = 0;
    if (!fseek(f, h->log_offset, SEEK_SET))
        while (!port && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "\"msg\":\"listening\"");
            p = p ? strstr(p, "\"port\":") : NULL;
            if (p)
                port = atoi(p + 7);
        }
    fclose(f);
    return port;
}

static void write_pidfile(const harness *h)
{
    char path[300];
    path_join(path, sizeof path, h->dir, "server.pid");
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d\n", (int)h->server);
        fclose(f);
    }
}

int harness_server_start(harness *h)
{
    if (h->server)
        return 0;
    char log[300];
    server_log_path(h, log, sizeof log);
    struct stat st;
    h->log_offset = stat(log, &st) ? 0 : (long)st.st_size;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setenv("DATABASE_URL", h->url, 1);
        setenv("PERFCAST_LISTEN", "127.0.0.1:0", 1);
        setenv("PERFCAST_HTTP_THREADS", "4", 0);
        setenv("PERFCAST_LOG_LEVEL", "info", 0);
        for (int i = 0; h->env[i]; i++)
            putenv(h->env[i]);
        child_setup(h, 0, log);
        char *argv[] = {h->bin, "serve", NULL};
        execv(h->bin, argv);
        _exit(127);
    }
    h->server = pid;
    write_pidfile(h);
    double deadline = now_s() + 30;
    while (now_s() < deadline) {
        h->port = read_listen_port(h);
        if (h->port > 0)
            return 0;
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            h->server = 0;
            say("the server exited at start (status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            harness_server_log(h, 30);
            return -1;
        }
        sleep_ms(2);
    }
    say("the server did not log \"listening\" within 30 s");
    harness_server_kill(h);
    harness_server_log(h, 30);
    return -1;
}

static int reap(pid_t pid, double seconds, int *status)
{
    double deadline = now_s() + seconds;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return r == pid ? 0 : -1;
        if (now_s() > deadline)
            return -1;
        sleep_ms(5);
    }
}

int harness_server_kill(harness *h)
{
    if (!h->server)
        return 0;
    int status;
    kill(h->server, SIGKILL);
    int rc = reap(h->server, 10, &status);
    h->server = 0;
    h->port = 0;
    return rc;
}

int harness_server_stop(harness *h)
{
    if (!h->server)
        return 0;
    int status;
    kill(h->server, SIGTERM);
    if (reap(h->server, 20, &status)) {
        say("the server did not stop within 20 s of SIGTERM: killed");
        harness_server_kill(h);
        return -1;
    }
    h->server = 0;
    h->port = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void harness_server_log(harness *h, int lines)
{
    char path[300];
    server_log_path(h, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    /* keep the last `lines` lines in a ring */
    char **ring = calloc((size_t)lines, sizeof *ring);
    char buf[4096];
    long n = 0;
    while (ring && fgets(buf, sizeof buf, f)) {
        free(ring[n % lines]);
        ring[n % lines] = strdup(buf);
        n++;
    }
    fclose(f);
    fprintf(stderr, "---- server log (last %d lines of %s) ----\n", lines, path);
    for (long i = n > lines ? n - lines : 0; ring && i < n; i++)
        fputs(ring[i % lines] ? ring[i % lines] : "", stderr);
    fprintf(stderr, "---- end of server log ----\n");
    for (int i = 0; ring && i < lines; i++)
        free(ring[i]);
    free(ring);
}

/* --- life cycle ---------------------------------------------------------- */

/* Everything the reaper or close must undo, in order. */
static void teardown(harness *h)
{
    harness_server_stop(h);
    if (h->pg_running)
        pg_ctl_stop(h, "immediate");
    h->pg_running = 0;
    remove_tree(h->dir);
}

/* The reaper: waits for the test to end. 'q' means harness_close() cleaned
 * up; EOF means the test died first, so it cleans up itself. */
static void reaper_main(harness *h, int rfd)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    setsid();
    char c = 0;
    ssize_t n;
    while ((n = read(rfd, &c, 1)) < 0 && errno == EINTR)
        ;
    if (n == 1 && c == 'q')
        _exit(0);
    /* the server's pid as the test last wrote it */
    char path[300];
    path_join(path, sizeof path, h->dir, "server.pid");
    FILE *f = fopen(path, "r");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    if (pid > 0)
        kill(pid, SIGKILL);
    h->server = 0;
    h->pg_running = !h->attached; /* stop it whatever the test last knew, if ours */
    teardown(h);
    _exit(0);
}

static int start_reaper(harness *h)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        reaper_main(h, p[0]);
    }
    close(p[0]);
    h->reaper = pid;
    h->reaper_fd = p[1];
    return 0;
}

const char *harness_database_url(const harness *h)
{
    return h->url;
}

int harness_port(const harness *h)
{
    return h->port;
}

const char *harness_dir(const harness *h)
{
    return h->dir;
}

static int find_bin(harness *h)
{
    const char *bin = getenv("PERFCAST_BIN");
    if (!bin || !*bin)
        bin = "build/perfcast";
    if (!realpath(bin, h->bin) || access(h->bin, X_OK)) {
        say("server binary %s not found (set PERFCAST_BIN)", bin);
        return -1;
    }
    return 0;
}

harness *harness_open(const harness_opts *o)
{
    harness *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->reaper_fd = -1;
    if (find_bin(h)) {
        free(h);
        return NULL;
    }
    for (int i = 0; o && o->env && o->env[i] && i < HARNESS_MAX_ENV; i++)
        h->env[i] = strdup(o->env[i]);
    snprintf(h->dir, sizeof h->dir, "/tmp/perfcast-test-XXXXXX");
    if (!mkdtemp(h->dir)) {
        say("mkdtemp: %s", strerror(errno));
        free(h);
        return NULL;
    }
    if (geteuid() == 0) {
        struct passwd *pw = getpwnam("postgres");
        if (!pw) {
            say("running as root needs a `postgres` user for PostgreSQL (it refuses root)");
            remove_tree(h->dir);
            free(h);
            return NULL;
        }
        h->as_postgres = 1;
        h->pg_uid = pw->pw_uid;
        h->pg_gid = pw->pw_gid;
        if (chown(h->dir, h->pg_uid, h->pg_gid))
            say("chown %s: %s", h->dir, strerror(errno));
    }
    if (start_reaper(h)) {
        say("cannot start the clean-up process");
        remove_tree(h->dir);
        free(h);
        return NULL;
    }
    double t0 = now_s();
    if (pg_setup(h) || ((!o || !o->no_server) &&
                        (harness_server_start(h) || !harness_wait_status(h, "/ready", 200, 30)))) {
        harness_close(h, 0);
        return NULL;
    }
    if (getenv("PERFCAST_HARNESS_VERBOSE"))
        say("ready in %.2f s: %s, server port %d", now_s() - t0, h->url, h->port);
    return h;
}

harness *harness_second(harness *first)
{
    harness *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    memcpy(h->pgbin, first->pgbin, sizeof h->pgbin);
    memcpy(h->bin, first->bin, sizeof h->bin);
    memcpy(h->url, first->url, sizeof h->url);
    h->pg_port = first->pg_port;
    h->as_postgres = first->as_postgres;
    h->pg_uid = first->pg_uid;
    h->pg_gid = first->pg_gid;
    h->attached = 1;
    h->reaper_fd = -1;
    for (int i = 0; first->env[i]; i++)
        h->env[i] = strdup(first->env[i]);
    snprintf(h->dir, sizeof h->dir, "/tmp/perfcast-test-XXXXXX");
    if (!mkdtemp(h->dir)) {
        say("mkdtemp: %s", strerror(errno));
        harness_close(h, 0);
        return NULL;
    }
    if (start_reaper(h) || harness_server_start(h) ||
        !harness_wait_status(h, "/ready", 200, 30)) {
        harness_close(h, 0);
        return NULL;
    }
    return h;
}

void harness_close(harness *h, int show_log)
{
    if (!h)
        return;
    if (show_log)
        harness_server_log(h, 60);
    teardown(h);
    if (h->reaper_fd >= 0) {
        ssize_t w = write(h->reaper_fd, "q", 1);
        (void)w;
        close(h->reaper_fd);
        int st;
        reap(h->reaper, 10, &st);
    }
    for (int i = 0; h->env[i]; i++)
        free(h->env[i]);
    free(h);
}

/* --- HTTP client --------------------------------------------------------- */

void harness_response_free(harness_response *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

int harness_header(const harness_response *r, const char *name, char *out, size_t cap)
{
    size_t nlen = strlen(name);
    const char *p = r->head ? strstr(r->head, "\r\n") : NULL;
    while (p && p[2]) {
        p += 2;
        const char *end = strstr(p, "\r\n");
        if (!end)
            end = p + strlen(p);
        if ((size_t)(end - p) > nlen && p[nlen] == ':' && !strncasecmp(p, name, nlen)) {
            const char *v = p + nlen + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(out, cap, "%.*s", (int)(end - v), v);
            return 1;
        }
        p = end;
    }
    return 0;
}

/* Decodes a chunked body in place; returns 1 when complete (and sets *len),
 * 0 when more is needed, -1 when malformed. */
static int dechunk(char *b, size_t n, size_t *len)
{
    size_t in = 0, out = 0;
    for (;;) {
        char *eol = memmem(b + in, n - in, "\r\n", 2);
        if (!eol)
            return 0;
        char *end;
        unsigned long size = strtoul(b + in, &end, 16);
        if (end == b + in)
            return -1;
        in = (size_t)(eol - b) + 2;
        if (size == 0) {
            *len = out;
            return 1;
        }
        if (n - in < size + 2)
            return 0;
        memmove(b + out, b + in, size);
        out += size;
        in += size + 2;
    }
}

/* Splits a complete response in buf; 1 done, 0 need more, -1 bad. With
 * at_eof, a response without length ends here. */
static int parse_response(char *buf, size_t n, int at_eof, int head_request,
                          harness_response *r)
{
    char *hend = memmem(buf, n, "\r\n\r\n", 4);
    if (!hend)
        return at_eof ? -1 : 0;
    size_t hlen = (size_t)(hend - buf) + 4;
    int status = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    harness_response tmp = {.status = status};
    tmp.head = strndup(buf, hlen - 2);
    char cl[32], te[64];
    size_t blen = n - hlen;
    int chunked = harness_header(&tmp, "Transfer-Encoding", te, sizeof te) &&
                  strcasestr(te, "chunked");
    int has_cl = harness_header(&tmp, "Content-Length", cl, sizeof cl);
    size_t want = has_cl ? strtoull(cl, NULL, 10) : 0;
    int no_body =
        head_request || (status >= 100 && status < 200) || status == 204 || status == 304;
    int done;
    char *body = malloc(blen + 1);
    if (!body || !tmp.head) {
        free(body);
        free(tmp.head);
        return -1;
    }
    memcpy(body, buf + hlen, blen);
    if (no_body) {
        done = 1;
        blen = 0;
    } else if (chunked) {
        size_t dl;
        done = dechunk(body, blen, &dl);
        if (done == 1)
            blen = dl;
    } else if (has_cl) {
        done = blen >= want;
        if (done)
            blen = want;
    } else {
        done = at_eof;
    }
    if (done != 1) {
        free(body);
        free(tmp.head);
        return done < 0 || at_eof ? -1 : 0;
    }
    body[blen] = '\0';
    tmp.body = body;
    tmp.body_len = blen;
    *r = tmp;
    /* what followed a 1xx is the real response: report how much was used */
    return 1 + (int)(status >= 100 && status < 200);
}

int harness_raw(harness *h, const char *bytes, size_t len, harness_response *r)
{
    memset(r, 0, sizeof *r);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((unsigned short)h->port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t cap = 65536, n = 0, sent = 0;
    char *buf = malloc(cap);
    int head_request = len >= 5 && !memcmp(bytes, "HEAD ", 5);
    int rc = -1, eof = 0;
    double deadline = now_s() + 60;
    while (buf && now_s() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN | (sent < len ? POLLOUT : 0)};
        if (poll(&p, 1, 1000) < 0 && errno != EINTR)
            break;
        if ((p.revents & POLLOUT) && sent < len) {
            ssize_t w = send(fd, bytes + sent, len - sent, MSG_NOSIGNAL);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EINTR && errno != EAGAIN)
                sent = len; /* the server closed: read what it said */
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (n + 4096 > cap) {
                char *nb = realloc(buf, cap * 2);
                if (!nb)
                    break;
                buf = nb;
                cap *= 2;
            }
            ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                eof = 1;
            else
                n += (size_t)got;
            for (;;) { /* skip 1xx responses */
                int pr = parse_response(buf, n, eof, head_request, r);
                if (pr == 2) {
                    char *hend = memmem(buf, n, "\r\n\r\n", 4);
                    size_t used = (size_t)(hend - buf) + 4;
                    memmove(buf, buf + used, n - used);
                    n -= used;
                    harness_response_free(r);
                    continue;
                }
                rc = pr == 1 ? 0 : pr < 0 ? -1 : rc;
                if (pr != 0)
                    eof = 1; /* done either way */
                break;
            }
            if (eof)
                break;
        }
    }
    free(buf);
    close(fd);
    if (rc)
        harness_response_free(r);
    return rc;
}

int harness_request(harness *h, const char *method, const char *path, const char *headers,
                    const char *body, size_t body_len, harness_response *r)
{
    char *req = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&req, &len);
    if (!f)
        return -1;
    fprintf(f, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s", method, path,
            h->port, headers ? headers : "");
    if (body)
        fprintf(f, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len);
    fputs("\r\n", f);
    if (body)
        fwrite(body, 1, body_len, f);
    fclose(f);
    int rc = harness_raw(h, req, len, r);
    free(req);
    return rc;
}

int harness_get(harness *h, const char *path, harness_response *r)
{
    return harness_request(h, "GET", path, NULL, NULL, 0, r);
}

int harness_post(harness *h, const char *path, const char *json, harness_response *r)
{
    return harness_request(h, "POST", path, NULL, json, strlen(json), r);
}

int harness_delete(harness *h, const char *path, harness_response *r)
{
    return harness_request(h, "DELETE", path, NULL, NULL, 0, r);
}

json_t *harness_json(const harness_response *r)
{
    return r->body ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
}

int harness_wait_status(harness *h, const char *path, int want, double seconds)
{
    double deadline = now_s() + seconds;
    for (;;) {
        harness_response r;
        int got = harness_get(h, path, &r) ? 0 : r.status;
        harness_response_free(&r);
        if (got == want)
            return 1;
        if (now_s() > deadline)
            return 0;
        sleep_ms(50);
    }
}

int harness_wait_job(harness *h, long job, double seconds)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    for (double waited = 0; waited <= seconds; waited += 0.05) {
        harness_response r;
        harness_get(h, path, &r);
        json_t *doc = harness_json(&r);
        const char *state = json_string_value(json_object_get(doc, "state"));
        int done = state && !strcmp(state, "done"), failed = state && !strcmp(state, "failed");
        if (failed)
            fprintf(stderr, "job %ld failed: %s\n", job, r.body);
        json_decref(doc);
        harness_response_free(&r);
        if (done || failed)
            return done;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

double harness_now(void)
{
    return now_s();
}

char *harness_read_file(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0)
        b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

void harness_sleep(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
}

long harness_sql_long(harness *h, const char *fmt, ...)
{
    char sql[1024], out[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    return harness_sql(h, sql, out, sizeof out) ? -1 : atol(out);
}
