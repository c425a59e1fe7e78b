#!/usr/bin/env python3
"""ClickHouse build benchmark: `sluice build --auto-approve` of a chain of N trivial MergeTree models over an adopted
`stream_table` source (generate_project.py --clickhouse) against the floor, the same statements Sluice sends to
ClickHouse (the DROPs, CREATE TABLEs, CREATE MATERIALIZED VIEWs and the replay INSERT, read from the
target/run/build/statements.sql of a warm-up build) sent in order by `clickhouse_floor` over one keep-alive HTTP
connection.

Starts its own server (scripts/clickhouse_test_server.sh, data in WORK/clickhouse) and stops it at the end. Before
the rounds, one warm-up build (untimed) writes the statements; its sha256 headers are checked against the
statements. Each round runs the floor, then Sluice, each into a fresh database holding only the source table and
its rows (created and filled untimed); before Sluice's run its state store and the `_sluice` database (ledger,
fingerprints) are removed, so every build is a first build. After each run the last model must hold the source's
rows. Prints the medians of wall time, of the client's CPU (user + system) and of the server's CPU over the run,
the ratio sluice/floor (median of the rounds' ratios) and the overhead per model, (sluice - floor) / N.

--profile: one more build through a logging HTTP proxy: every request Sluice sends, grouped by the shape of its
query (literals and names blanked), with its count, connections and the server's time for it (measured at the
proxy); then ablation floors: the floor plus each group of Sluice's extra requests, sent the floor's way (one
keep-alive connection), in rounds, so each group's cost is measured as the floor would pay it.

usage: run_bench_clickhouse.py --sluice BIN --floor BIN --work DIR [--models 200] [--rounds 5] [--profile]
"""
import argparse
import collections
import hashlib
import http.client
import os
import re
import shutil
import socket
import socketserver
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SERVER_SCRIPT = os.path.join(REPO, "scripts", "clickhouse_test_server.sh")
WARM = "chb_warm"


class Server:
    """The test server and a keep-alive client for the untimed setup."""

    def __init__(self, folder):
        self.folder = folder
        subprocess.run([SERVER_SCRIPT, "start", folder], check=True, stdout=subprocess.DEVNULL)
        self.port = int(open(os.path.join(folder, "http_port")).read())
        self.password = open(os.path.join(folder, "password")).read().strip()
        self.pid = int(open(os.path.join(folder, "server.pid")).read())
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def query(self, sql):
        try:
            self.connection.request("POST", "/", body=sql.encode(), headers=self.headers())
            response = self.connection.getresponse()
        except (ConnectionError, http.client.HTTPException):  # the server closed the idle connection
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            self.connection.request("POST", "/", body=sql.encode(), headers=self.headers())
            response = self.connection.getresponse()
        body = response.read().decode()
        if response.status != 200:
            raise RuntimeError(f"{sql[:200]}: {body}")
        return body

    def headers(self):
        return {"X-ClickHouse-User": "default", "X-ClickHouse-Key": self.password}

    def cpu(self):
        """The server's CPU seconds so far (user + system, every thread)."""
        fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def env(self, port=None):
        env = dict(os.environ)
        env.update(STREAMBUILD_CLICKHOUSE_HOST="127.0.0.1", STREAMBUILD_CLICKHOUSE_PORT=str(port or self.port),
                   STREAMBUILD_CLICKHOUSE_PASSWORD=self.password)
        return env

    def stop(self):
        self.connection.close()
        subprocess.run([SERVER_SCRIPT, "stop", self.folder], check=True)


def measure(argv, server, cwd=None, env=None):
    """(wall seconds, client CPU seconds, server CPU seconds) of one run; raises on a non-zero exit."""
    server_cpu = server.cpu()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env or server.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, server.cpu() - server_cpu


def fresh_database(server, project, database):
    """The database with only the source table and its rows."""
    server.query(f"DROP DATABASE IF EXISTS `{database}`")
    server.query(f"CREATE DATABASE `{database}`")
    for statement in open(os.path.join(project, "source_table.sql")).read().splitlines():
        if statement.strip():
            server.query(statement.replace("{database}", database))


def check_built(server, database, models):
    last = f"tbl__m{models:05d}"
    count = server.query(f"SELECT count() FROM `{database}`.`{last}`").strip()
    if count != "300":
        raise RuntimeError(f"{database}.{last} holds {count} rows, not 300")


def fresh_state(server, project):
    server.query("DROP DATABASE IF EXISTS `_sluice`")
    shutil.rmtree(os.path.join(project, ".sluice"), ignore_errors=True)
    shutil.rmtree(os.path.join(project, "target"), ignore_errors=True)


def sluice_build(sluice, project, database):
    return [sluice, "--project-dir", project, "build", "--auto-approve", "--database", database]


def read_statements(path):
    """The statements of a build's statements.sql, each checked against the sha256 in its header."""
    text = open(path).read()
    parts = re.split(r"^-- (\S+) \(sha256 ([0-9a-f]{64})\)\n", text, flags=re.M)
    statements = []
    for i in range(1, len(parts), 3):
        step, sha, body = parts[i], parts[i + 1], parts[i + 2]
        assert body.endswith(";\n\n"), body[-20:]
        sql = body[:-3]
        if hashlib.sha256(sql.encode()).hexdigest() != sha:
            raise RuntimeError(f"statements.sql: the statement of {step} does not match its sha256")
        statements.append((step, sql))
    return statements


def for_database(statements, database):
    """The statements with the warm-up's database replaced by `database` (as a name and as a string literal)."""
    return [re.sub(rf"(?<![A-Za-z0-9_]){WARM}(?![A-Za-z0-9_])", database, sql) for sql in statements]


def write_script(path, statements):
    with open(path, "w") as out:
        out.write("\0".join(statements))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also where Sluice's requests go (a proxy, ablations)")
    args = parser.parse_args()
    sluice = os.path.abspath(args.sluice)
    floor = os.path.abspath(args.floor)
    work = os.path.abspath(args.work)
    models = args.models
    project = os.path.join(work, f"clickhouse_{models}")
    subprocess.run([sys.executable, os.path.join(HERE, "generate_project.py"), project, "--models", str(models),
                    "--clickhouse"], check=True)
    os.sync()
    server = Server(os.path.join(work, "clickhouse"))
    try:
        # Warm-up: a build whose statements are the floor's, and one run of the floor.
        fresh_database(server, project, WARM)
        fresh_state(server, project)
        measure(sluice_build(sluice, project, WARM), server)
        check_built(server, WARM, models)
        statements = [sql for _, sql in read_statements(os.path.join(project, "target", "run", "build",
                                                                     "statements.sql"))]
        server.query(f"DROP DATABASE `{WARM}`")
        script = os.path.join(work, f"clickhouse_{models}_floor.sql")
        fresh_database(server, project, "chb_floor_warm")
        write_script(script, for_database(statements, "chb_floor_warm"))
        measure([floor, "127.0.0.1", str(server.port), script], server)
        check_built(server, "chb_floor_warm", models)
        server.query("DROP DATABASE `chb_floor_warm`")
        kinds = collections.Counter(re.match(r"\s*(\w+(?: \w+)?)", sql).group(1).upper() for sql in statements)
        print(f"{models} models; the floor: {len(statements)} statements ("
              + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")", flush=True)

        samples = {"floor": [], "sluice": []}
        print(HEADER, flush=True)
        for round_ in range(1, args.rounds + 1):
            database = f"chb_floor_{round_}"
            fresh_database(server, project, database)
            write_script(script, for_database(statements, database))
            samples["floor"].append(measure([floor, "127.0.0.1", str(server.port), script], server))
            check_built(server, database, models)
            server.query(f"DROP DATABASE `{database}`")
            database = f"chb_sluice_{round_}"
            fresh_database(server, project, database)
            fresh_state(server, project)
            samples["sluice"].append(measure(sluice_build(sluice, project, database), server))
            check_built(server, database, models)
            server.query(f"DROP DATABASE `{database}`")
            print_round(round_, samples["floor"][-1], samples["sluice"][-1], models)
        print_summary(samples, models, len(statements))
        if args.profile:
            profile(server, sluice, floor, project, work, models, statements, args.rounds)
    finally:
        server.stop()


HEADER = f"{'round':>7} {'floor wall':>10} {'sluice wall':>11} {'ratio':>6} {'ms/model':>8}"


def print_round(round_, f, s, models):
    print(f"{round_:>7} {f[0]:10.3f} {s[0]:11.3f} {s[0] / f[0]:6.2f} {(s[0] - f[0]) * 1000 / models:8.2f}", flush=True)


def print_summary(samples, models, statement_count):
    med = {k: tuple(statistics.median(run[i] for run in runs) for i in range(3)) for k, runs in samples.items()}
    ratio = statistics.median(s[0] / f[0] for f, s in zip(samples["floor"], samples["sluice"]))
    (fw, fc, fs), (sw, sc, ss) = med["floor"], med["sluice"]
    print(f"\nmedians over {len(samples['floor'])} rounds, {models} models:")
    print(f"  wall            floor {fw:7.3f} s   sluice {sw:7.3f} s   ratio {ratio:5.2f}   "
          f"{(sw - fw) * 1000 / models:6.2f} ms a model over the floor   "
          f"(floor {fw * 1000 / statement_count:.2f} ms a statement)")
    print(f"  client cpu      floor {fc:7.3f} s   sluice {sc:7.3f} s")
    print(f"  server cpu      floor {fs:7.3f} s   sluice {ss:7.3f} s   "
          f"{(ss - fs) * 1000 / models:6.2f} ms a model over the floor", flush=True)


# --- profile ---------------------------------------------------------------------------------------------------

def shape(sql):
    """The query with string and number literals and backquoted names blanked, one line."""
    text = re.sub(r"'(?:[^'\\]|\\.)*'", "'?'", sql)
    text = re.sub(r"`([^`]*)`", lambda m: m.group(0) if m.group(1) in KEPT_NAMES else "`?`", text)
    text = re.sub(r"\b\d+\b", "N", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\((?:'\?', )+'\?'\)(?:, \((?:'\?', )+'\?'\))*", "(…)", text)
    return text[:150]


KEPT_NAMES = {"_sluice", "ledger", "fingerprints", "events_raw"}


class Proxy(socketserver.ThreadingTCPServer):
    """Forwards HTTP requests to the server over one keep-alive connection, logging each query and its time."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, upstream_port):
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.upstream_port = upstream_port
        self.log = []  # (sql, upstream seconds)
        self.connections = 0
        self.lock = threading.Lock()


class ProxyHandler(socketserver.StreamRequestHandler):
    def handle(self):
        proxy = self.server
        with proxy.lock:
            proxy.connections += 1
        upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=300)
        while True:
            line = self.rfile.readline()
            if not line:
                return
            method, target, _ = line.decode().split(" ", 2)
            headers = {}
            while True:
                h = self.rfile.readline().decode()
                if h in ("\r\n", "\n", ""):
                    break
                name, value = h.split(":", 1)
                headers[name.strip()] = value.strip()
            length = int(next((v for k, v in headers.items() if k.lower() == "content-length"), "0"))
            body = self.rfile.read(length)
            query = body.decode(errors="replace")
            if "query=" in target:
                from urllib.parse import parse_qs, urlsplit
                query = parse_qs(urlsplit(target).query).get("query", [""])[0] + " <data>"
            forward = {k: v for k, v in headers.items() if k.lower() not in ("connection", "host")}
            start = time.perf_counter()
            upstream.request(method, target, body=body, headers=forward)
            response = upstream.getresponse()
            payload = response.read()
            elapsed = time.perf_counter() - start
            with proxy.lock:
                proxy.log.append((query, elapsed, target, body))
            close = any(k.lower() == "connection" and v.lower() == "close" for k, v in headers.items())
            out = [f"HTTP/1.1 {response.status} {response.reason}\r\n"]
            for k, v in response.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length", "keep-alive"):
                    out.append(f"{k}: {v}\r\n")
            out.append(f"Content-Length: {len(payload)}\r\n")
            out.append("Connection: close\r\n\r\n" if close else "Connection: keep-alive\r\n\r\n")
            self.wfile.write("".join(out).encode() + payload)
            self.wfile.flush()
            if close:
                return


def profile(server, sluice, floor, project, work, models, statements, rounds):
    proxy = Proxy(server.port)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    database = "chb_profile"
    fresh_database(server, project, database)
    fresh_state(server, project)
    wall = measure(sluice_build(sluice, project, database), server, env=server.env(proxy.server_address[1]))[0]
    check_built(server, database, models)
    server.query(f"DROP DATABASE `{database}`")
    proxy.shutdown()
    log = proxy.log
    floor_set = collections.Counter(for_database(statements, database))
    groups = collections.OrderedDict()
    extra = []  # the requests that are not the floor's, in order, with their shapes
    for sql, elapsed, _, _ in log:
        if floor_set[sql] > 0:
            floor_set[sql] -= 1
            key = "[floor] " + " ".join(sql.split()[:3 if sql.startswith("CREATE MATERIALIZED") else 2])
        else:
            key = shape(sql)
            extra.append((key, sql))
        count, total = groups.get(key, (0, 0.0))
        groups[key] = (count + 1, total + elapsed)
    total_time = sum(entry[1] for entry in log)
    print(f"\nprofile: one build through a logging proxy ({wall:.3f} s wall there): {len(log)} requests on "
          f"{proxy.connections} connections, {total_time:.3f} s of server round trips "
          f"({len(statements)} of the requests are the floor's statements)")
    print(f"{'count':>6} {'per model':>9} {'total ms':>9} {'ms/model':>8}  query shape")
    for key, (count, total) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{count:6d} {count / models:9.2f} {total * 1000:9.1f} {total * 1000 / models:8.2f}  {key}")

    # Ablations: the floor plus one group of the extra requests, sent the floor's way, in rounds.
    by_group = collections.OrderedDict()
    for key, sql in extra:
        by_group.setdefault(category(key), []).append(sql)
    print("\nablation floors: the floor's statements plus one category of Sluice's extra requests, each request "
          "where Sluice sends it, one keep-alive connection; medians over up to 3 rounds")
    # The base holds the creation of `_sluice` and its tables, which the ledger and fingerprint INSERTs need.
    setup = "_sluice: CREATE DATABASE, ledger and fingerprints tables"
    variants = {"floor + _sluice tables": [setup]}
    for name in ABLATED:
        if name in by_group:
            variants["+ " + name] = [setup, name]
    variants["+ all of Sluice's extra requests"] = list(by_group)
    merged = {}
    for name, cats in variants.items():
        merged[name] = [(target, body) for sql, _, target, body in log
                        if category_of(sql, statements, database) in cats + ["floor"]]
    # What-ifs for the fixes: the ledger rows in one INSERT, and the row counts read in one query of system.parts.
    everything = merged["+ all of Sluice's extra requests"]
    batched = batch_ledger(everything)
    variants_sql = {"  what if: all, the ledger rows in one INSERT": batched,
                    "  what if: that, and the counts in one system.parts query": one_count_query(batched, database)}
    merged.update(variants_sql)
    results = {name: [] for name in merged}
    for round_ in range(min(rounds, 3)):
        for name, sqls in merged.items():
            db = "chb_ablation"
            fresh_database(server, project, db)
            server.query("DROP DATABASE IF EXISTS `_sluice`")
            script = os.path.join(work, "clickhouse_ablation.sql")
            with open(script, "wb") as out:
                out.write(b"\0".join(target.replace(database, db).encode() + b"\x1f" + body.replace(database.encode(), db.encode())
                                      for target, body in sqls))
            results[name].append(measure([floor, "127.0.0.1", str(server.port), script, "--keep-going"], server)[0])
            server.query(f"DROP DATABASE `{db}`")
    base = statistics.median(results["floor + _sluice tables"])
    print(f"{'variant':<58} {'requests':>8} {'wall s':>7} {'+ms/model':>9}")
    for name, sqls in merged.items():
        med = statistics.median(results[name])
        print(f"{name:<58} {len(sqls):8d} {med:7.3f} {(med - base) * 1000 / models:9.2f}")


CATEGORIES = [
    ("capability probes and server checks", r"version\(\)|::Int32|toDateTime64|isNotDistinctFrom|OVER \(\)|TTL d|"
                                            r"engine = '\?'|CREATE OR REPLACE VIEW|system\.databases|EXCHANGE|"
                                            r"DROP TABLE IF EXISTS `\?`\.t"),
    ("quiet window: watermark, boundary, inserts in flight", r"system\.parts|system\.processes|max\(_replay_offset\)|"
                                                             r"FROM `\?`\.`events_raw`$"),
    ("actual state: catalog and fingerprint reads", r"system\.tables|system\.columns|FROM `_sluice`\.`fingerprints` ORDER"),
    ("ledger INSERT, one a model", r"INSERT INTO `_sluice`\.`ledger`"),
    ("count() of each model (ledger rows) and of the root", r"SELECT toString\(count\(\)\) FROM `\?`\.`\?`$"),
    ("fingerprints INSERT, one a build", r"INSERT INTO `_sluice`\.`fingerprints`"),
    ("_sluice: CREATE DATABASE, ledger and fingerprints tables", r"CREATE DATABASE|CREATE TABLE IF NOT EXISTS `_sluice`"),
]


def batch_ledger(requests):
    """The requests with every ledger INSERT merged into one multi-row INSERT where the first was."""
    out, first, values = [], None, []
    for target, body in requests:
        text = body.decode()
        if text.startswith("INSERT INTO `_sluice`.`ledger`"):
            head, tail = text.split(" VALUES ", 1)
            values.append(tail)
            if first is None:
                first = len(out)
                out.append((target, head))
            continue
        out.append((target, body))
    if first is not None:
        out[first] = (out[first][0], (out[first][1] + " VALUES " + ", ".join(values)).encode())
    return out


def one_count_query(requests, database):
    """The requests with the per-model count() reads replaced by one read of the row counts from system.parts."""
    out, done = [], False
    for target, body in requests:
        text = body.decode()
        if re.fullmatch(r"SELECT toString\(count\(\)\) FROM `[^`]*`\.`tbl__[^`]*`", text):
            if not done:
                out.append((target, (f"SELECT table, toString(sum(rows)) FROM system.parts WHERE active AND "
                                     f"database = '{database}' GROUP BY table").encode()))
                done = True
            continue
        out.append((target, body))
    return out


# The categories ablated one at a time (the others cost a few requests a build).
ABLATED = ["ledger INSERT, one a model", "count() of each model (ledger rows) and of the root"]


def category(key):
    for name, pattern in CATEGORIES:
        if re.search(pattern, key):
            return name
    return "other"


def category_of(sql, statements, database, _cache={}):
    key = (database, id(statements))
    if key not in _cache:
        _cache[key] = set(for_database(statements, database))
    if sql in _cache[key]:
        return "floor"
    return category(shape(sql))


if __name__ == "__main__":
    main()
