#!/usr/bin/env python3
"""readme_test.py — runs the shell examples of the README and of every guide
in docs/ (each document on its own: in order, against a fresh perfcast and a
fresh PostgreSQL) and compares what each prints with the answer the
document shows under it (`make test-readme`). Prints one line per document
with its counts, and the document and line of every example that fails.
A document holding the line `<!-- readme-test: twice -->` is also pasted a
second time into the same server: every command must exit as the first time
and none may answer 409 unless the document shows a 409 there (a guide must
be safe to paste twice).

How the README is read (README.md, "Examples in this README"):
  * every ```sh block is run, in document order, by one bash process, so a
    variable captured in one block (id=$(...)) is there in the next;
  * a block right after the line `<!-- readme-test: skip -->` is not run
    (it needs something a test cannot have: Docker, a second terminal, ...);
    after `<!-- readme-test: fresh -->` the server and database are new;
  * in a block, the `#` lines right below a command are its answer; a `#`
    line after a blank line or at the top of a block is prose;
  * answers are compared with all white space removed; `...` stands for
    anything; numbers are compared to a relative tolerance of 1e-6 (the
    last digits of a floating-point result may differ between libm builds).
The examples talk to http://127.0.0.1:8080; the runner serves on a free
port and rewrites that address in commands and answers.

With README_TEST_UPDATE=1 the runner rewrites, in README.md, the numbers of
every answer whose shape matches but whose numbers differ (after a change
that moves results on purpose); review the diff before committing it.

The openapi.json examples of requests are checked too: each request body
example of an operation must be valid JSON (they are pasted by hand).

Prints one line per failing example and ends with "N passed, N failed".
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

TOL = 1e-6
ADDR = "127.0.0.1:8080"
NUM = r"(?<![\w.])(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d.])"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Postgres:
    """A private cluster in a temporary directory (as the postgres user when
    run as root: PostgreSQL refuses root)."""

    def __init__(self):
        bins = sorted(d for d in os.listdir("/usr/lib/postgresql") if d.isdigit())
        if not bins:
            raise SystemExit("readme_test: PostgreSQL server binaries not found")
        self.bin = "/usr/lib/postgresql/%s/bin" % bins[-1]
        self.dir = tempfile.mkdtemp(prefix="perfcast-readme-")
        self.as_pg = []
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.as_pg = ["runuser", "-u", "postgres", "--", "env", "-C", "/"]
        self.port = free_port()
        data = os.path.join(self.dir, "pg")
        self.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                 "--no-instructions")
        self.run("pg_ctl", "-D", data, "-l", os.path.join(self.dir, "postgres.log"), "-w",
                 "-t", "30", "-o", "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off"
                 % (self.port, self.dir), "start")
        self.url = "postgresql://postgres@127.0.0.1:%d/postgres" % self.port

    def run(self, prog, *args):
        subprocess.run(self.as_pg + [os.path.join(self.bin, prog)] + list(args), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        try:
            self.run("pg_ctl", "-D", os.path.join(self.dir, "pg"), "-m", "immediate", "-w",
                     "stop")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class Server:
    def __init__(self, binary, db_url):
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="perfcast-readme-log-", delete=False)
        env = dict(os.environ, DATABASE_URL=db_url, PERFCAST_LISTEN="127.0.0.1:%d" % self.port)
        env.pop("PERFCAST_TOKEN", None)
        self.proc = subprocess.Popen([binary, "serve"], env=env, stdout=self.log,
                                     stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/ready" % self.port, timeout=1)
                return
            except Exception:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise SystemExit("readme_test: the server did not start; see " + self.log.name)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if os.environ.get("README_TEST_KEEP_LOG"):  # the server's log, for a crash
            print("server log: " + self.log.name)
        else:
            os.unlink(self.log.name)


def blocks(text):
    """(line number, directive, lines) of each ```sh block."""
    lines = text.split("\n")
    out, i, directive = [], 0, None
    while i < len(lines):
        m = re.match(r"<!--\s*readme-test:\s*(\w+)", lines[i])
        if m:
            directive = m.group(1)
        elif lines[i].strip() == "```sh":
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            out.append((start + 1, directive, body))
            directive = None
        elif lines[i].strip():
            directive = None
        i += 1
    return out


def examples(first_line, body):
    """(line number, command text, expected answer or None) of a block."""
    out, cmd, cmd_line, expect = [], [], 0, None

    exp_lines = []

    def flush():
        if cmd:
            out.append((cmd_line, "\n".join(cmd), None if expect is None else "".join(expect),
                        list(exp_lines)))

    for n, line in enumerate(body):
        if line.startswith("#"):
            if cmd:  # an answer (or more of it)
                if expect is None:
                    expect = []
                    exp_lines.clear()
                expect.append(line[1:])
                exp_lines.append(first_line + n)
            continue  # prose
        if not line.strip():
            flush()
            cmd, expect = [], None
            continue
        if expect is not None:  # a new command right after an answer
            flush()
            cmd, expect = [], None
        if not cmd:
            cmd_line = first_line + n
        cmd.append(line)
    flush()
    return out


def squeeze(s):
    return re.sub(r"\s+", "", s)


def fragment_regex(frag):
    """A fragment of an answer as a regular expression whose groups are its
    numbers, and those numbers."""
    pos, rx, numbers = 0, "", []
    for m in re.finditer(NUM, frag):
        rx += re.escape(frag[pos:m.start()]) + NUM
        numbers.append(m.group(1))
        pos = m.end()
    return re.compile(rx + re.escape(frag[pos:])), numbers


def numbers_differ(want, got):
    """None when the numbers agree within TOL, else the first that does not."""
    for w, g in zip(want, got):
        a, b = float(w), float(g)
        if abs(a - b) > max(TOL * max(abs(a), abs(b)), 1e-12):
            return "%s where the README shows %s" % (g, w)
    return None


def matches(expected, actual, got=None):
    """None when actual fits expected, else why not. The fragments between
    `...` are found in order, each at its first place where its numbers
    agree; the first must start the answer and the last end it, unless the
    README puts `...` there. When got is a list, a shape that fits with
    other numbers is followed on and got receives the printed numbers."""
    e, a = squeeze(expected), squeeze(actual)
    frags = e.split("...")
    pos = 0
    differ = None
    for k, frag in enumerate(frags):
        if not frag:
            continue
        rx, want = fragment_regex(frag)
        first = k == 0
        last = k == len(frags) - 1
        found, why, shape = None, None, None
        for m in rx.finditer(a, pos):
            if first and m.start() != 0:
                break
            if last and m.end() != len(a):
                continue
            shape = shape or m
            why = numbers_differ(want, m.groups())
            if not why:
                found = m
                break
        if not found and got is not None and shape:
            found, differ = shape, differ or why
        if not found:
            return why or ("the answer does not have the shape shown (from %r on)" % frag[:80])
        if got is not None:
            got.extend(found.groups())
        pos = found.end()
    return differ


def rewrite_numbers(lines, line_numbers, got):
    """Puts the printed numbers in place of the README's in its answer lines
    (1-based line numbers), in order."""
    raw = sum(len(re.findall(NUM, lines[ln - 1][1:])) for ln in line_numbers)
    if raw != len(got):
        return False  # numbers that white space separates: not safely mapped
    k = 0
    for ln in line_numbers:
        text = lines[ln - 1]

        def sub(m):
            nonlocal k
            if k >= len(got):
                return m.group(0)
            k += 1
            return got[k - 1]
        lines[ln - 1] = "#" + re.sub(NUM, sub, text[1:])
    return True


def run_all(items, port, db_url):
    """Runs every command in one bash; returns [(output, status)]. The
    examples' commands see DATABASE_URL of the test's database (the README
    writes `export DATABASE_URL=${DATABASE_URL:-...}`)."""
    script = ["set +e", "export DATABASE_URL='%s'" % db_url]
    for k, (_, cmd, _, _) in enumerate(items):
        script.append(cmd.replace(ADDR, "127.0.0.1:%d" % port))
        script.append("printf '\\n@@readme-test %d %%s@@\\n' $?" % k)
    p = subprocess.run(["bash", "-c", "\n".join(script)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=900)
    text = p.stdout.decode("utf-8", "replace")
    res, pos = [], 0
    for m in re.finditer(r"\n@@readme-test (\d+) (\d+)@@\n", text):
        res.append((text[pos:m.start()], int(m.group(2))))
        pos = m.end()
    return res


def check_openapi(path):
    doc = json.load(open(path))
    bad = []
    for route, ops in doc.get("paths", {}).items():
        for method, op in ops.items():
            if not isinstance(op, dict):
                continue
            content = op.get("requestBody", {}).get("content", {})
            for ctype, media in content.items():
                for ex in [media.get("example")] + [
                        v.get("value") for v in media.get("examples", {}).values()]:
                    if isinstance(ex, str) and "json" in ctype:
                        try:
                            json.loads(ex)
                        except ValueError as err:
                            bad.append("%s %s: example is not JSON: %s" % (method, route, err))
    return bad


def second_paste(doc, items, first, second):
    """Why the second paste of a document's examples failed, one line each."""
    bad = []
    for k, (line, cmd, expect, _) in enumerate(items):
        if k >= len(second) or k >= len(first):
            bad.append("%s:%d: pasted twice: did not run the second time" % (doc, line))
            continue
        out, status = second[k]
        if status != first[k][1]:
            bad.append("%s:%d: pasted twice: exit status %d, the first time %d" %
                       (doc, line, status, first[k][1]))
        elif '"status":409' in squeeze(out) and '"status":409' not in squeeze(expect or ""):
            bad.append("%s:%d: pasted twice: 409 %s" % (doc, line, squeeze(out)[:200]))
    return bad


def run_document(doc, binary, update):
    """Runs one document's examples; prints a line per failure; (passed, failed)."""
    text = open(doc).read()
    twice = re.search(r"<!--\s*readme-test:\s*twice", text) is not None
    groups, current = [], []  # runs of blocks served by one server
    for first, directive, body in blocks(text):
        if directive == "skip":
            continue
        if directive == "fresh" and current:
            groups.append(current)
            current = []
        current.extend(examples(first, body))
    if current:
        groups.append(current)
    passed = failed = 0
    readme_lines = text.split("\n")
    for items in groups:
        pg = Postgres()
        srv = None
        again = []
        try:
            srv = Server(binary, pg.url)
            env_port = srv.port
            results = run_all(items, env_port, pg.url)
            if twice:
                again = second_paste(doc, items, results, run_all(items, env_port, pg.url))
        finally:
            if srv:
                srv.stop()
            pg.stop()
        for why in again:
            print(why)
        failed += len(again)
        passed += 1 if twice and not again else 0
        for k, (line, cmd, expect, exp_lines) in enumerate(items):
            if k >= len(results):
                print("%s:%d: did not run (an earlier command ended the shell)" % (doc, line))
                failed += 1
                continue
            out, status = results[k]
            out = out.replace("127.0.0.1:%d" % env_port, ADDR)
            if os.environ.get("README_TEST_DUMP"):  # every answer, for writing the README
                with open(os.environ["README_TEST_DUMP"], "a") as f:
                    f.write("==== %s:%d\n%s\n" % (doc, line, out))
            why = None
            if status != 0:
                why = "exit status %d" % status
            elif expect is not None:
                got = [] if update else None
                why = matches(expect, out, got)
                if why and update and got and "shape" not in why:
                    done = rewrite_numbers(readme_lines, exp_lines, got)
                    print("%s:%d: numbers %s" % (doc, line, "rewritten" if done else
                                                "not rewritten (write them by hand)"))
            if why:
                failed += 1
                print("%s:%d: %s\n  command: %s\n  printed: %s" %
                      (doc, line, why, cmd.split("\n")[0][:160],
                       out.strip()[:int(os.environ.get("README_TEST_SHOW", "600"))]))
            else:
                passed += 1
    if update:
        open(doc, "w").write("\n".join(readme_lines))
    nexamples = sum(len(g) for g in groups)
    print("%s: %d passed, %d failed (%d examples%s)" %
          (doc, passed, failed, nexamples, ", pasted twice" if twice else ""))
    return passed, failed


def main():
    # a killed run still stops its server and database (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(1))
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    docs = sys.argv[2:] or (["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md")))
    binary = os.path.abspath(os.path.join(build, "perfcast"))
    update = os.environ.get("README_TEST_UPDATE") == "1"
    passed = failed = 0
    for doc in docs:
        p, f = run_document(doc, binary, update)
        passed += p
        failed += f
    bad = check_openapi("api/openapi.json")
    for why in bad:
        print("api/openapi.json: " + why)
    failed += 1 if bad else 0
    passed += 0 if bad else 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
