#!/usr/bin/env python3
"""The scale probe: how the control plane's costs grow with the number of namespaces.

Usage: fio-jobs/scale.py [--sizes 100,500,1000,2000] [--engine java|spdk] [--hosts H] [--per-subsystem 10]
                          [--controllers C] [--logs] [--spdk-mem-mb MB] [--keep DIR]

Starts the target (bin/nvmf4j-target, a fresh state directory, the REST API and one NVMe/TCP listener on free
loopback ports, one poll group), then adds null-bdev namespaces through the REST API (each add is two calls: POST
/bdevs, POST /subsystems/<nqn>/namespaces), a new subsystem every --per-subsystem namespaces, until the largest size.
At each size it prints one row:

  n            namespaces in the document
  add p50/p99  milliseconds per add (both calls) over the adds since the size before
  list         milliseconds to GET every subsystem and every bdev
  change       milliseconds per one-field change (PATCH allowAnyHost of the first subsystem, p50 of 20): the
               commit and save of a change that touches nothing else
  disk         bytes of the configuration on disk (the document and its journal, if any)
  heap         MiB of heap in use after a full GC (jcmd GC.run, GC.heap_info)
  direct       MiB of native memory the JVM counts as "Other" (direct buffers; Native Memory Tracking)
  rss          MiB resident (VmRSS)
  fds          open file descriptors
  restart      seconds from SIGTERM of the running target to a new one answering /health/ready and accepting a
               TCP connection on every listener

and, at the end, the growth of each cost: its value at the largest size over its value at the smallest.
--hosts H also allows H hosts on the first subsystem before the namespaces (a row "hosts" with their p50/p99).
--controllers C, after the last size, connects C controllers (an admin and one I/O queue each, host NQNs spread over
up to 1,000 hosts) to the first namespaces' subsystem with the test host (nvmf-target's test classes), and prints the
time to connect them, the target's memory and fds with them, and the time of GET controllers and GET /metrics.
--logs, with the test host too (io.nvmf4j.testhost.LogSizes): at the smallest and the largest size the IOPS of one
namespace (4 KiB random reads at QD 16 for --iops-seconds after --iops-warmup seconds not counted, on the first
subsystem's nsid 1: the same namespace while the rest exist) and their ratio; after the last size the whole discovery log page as a host reads it (records,
bytes, 4 KiB pieces, time, the generation counter over the read) and the Changed Namespace List of a controller of
a new subsystem after 10 and then after 1,100 namespaces were added to it (NSIDs, or the FFFFFFFFh overflow).
--spdk-mem-mb MB sets the spdk engine's spdk.memSizeMb: the hugepages SPDK's queues take their buffers from
(reserve MB / 2 + 64 pages of 2 MiB and mount hugetlbfs first).
Without --controllers and --logs nothing is connected over NVMe and no I/O runs. Needs Java 17 and a build
(./dev.sh build; ./dev.sh scale builds).
"""
import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from free_port import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "scale-probe-token-0123456789abcdef"


class Api:
    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None, ok=(200, 201, 204)):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                headers = {"Authorization": "Bearer " + TOKEN}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = "application/json"
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                payload = r.read()
                if r.status not in ok:
                    raise RuntimeError(f"{method} {path}: {r.status} {payload[:300]!r}")
                return payload
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn = None
                if attempt:
                    raise
        return None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Target:
    """bin/nvmf4j-target on a state directory, started and stopped by PID."""

    def __init__(self, state, log):
        self.state = state
        self.log = log
        self.proc = None

    def start(self):
        env = dict(os.environ)
        env["NVMF4J_JAVA_OPTS"] = (env.get("NVMF4J_JAVA_OPTS", "") + " -XX:NativeMemoryTracking=summary").strip()
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([os.path.join(ROOT, "bin", "nvmf4j-target"), "--state-dir", self.state],
                                     stdout=out, stderr=subprocess.STDOUT, env=env)
        out.close()

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def pid(self):
        return self.proc.pid


def await_ready(api, ports, target, bound=300.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < bound:
        if target.proc.poll() is not None:
            raise RuntimeError(f"the target exited ({target.proc.returncode}); see {target.log}")
        try:
            api.call("GET", "/api/v1/health/ready")
            for p in ports:
                with socket.create_connection(("127.0.0.1", p), timeout=5):
                    pass
            return
        except (RuntimeError, OSError):
            api.close()
            time.sleep(0.02)
    raise RuntimeError(f"not ready within {bound} s; see {target.log}")


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def jcmd(pid, *args):
    return subprocess.run(["jcmd", str(pid), *args], capture_output=True, text=True, timeout=120).stdout


def memory(pid):
    """(heap MiB after a full GC, native 'Other' MiB, RSS MiB, fds)."""
    jcmd(pid, "GC.run")
    heap = 0.0
    for line in jcmd(pid, "GC.heap_info").splitlines():
        words = line.replace(",", " ").split()
        if "used" in words and ("garbage-first" in line or "total" in words):
            heap = int(words[words.index("used") + 1].rstrip("K")) / 1024.0
            break
    other = 0.0
    for line in jcmd(pid, "VM.native_memory", "summary").splitlines():
        if line.strip().startswith("-") and "Other (reserved=" in line:
            other = int(line.split("committed=")[1].split("KB")[0]) / 1024.0
    rss = proc_status(pid, "VmRSS") / 1024.0
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return heap, other, rss, fds


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def disk_bytes(state):
    total = 0
    for name in os.listdir(state):
        if name.startswith("config"):
            total += os.path.getsize(os.path.join(state, name))
    return total


def test_host(main, *args, **popen):
    """The command line of one of nvmf-target's test host programs (its test classes: mvn test-compile)."""
    here = os.path.dirname(os.path.abspath(__file__))
    classes = os.path.join(here, "..", "nvmf-target", "target", "test-classes")
    if not os.path.isdir(os.path.join(classes, "io", "nvmf4j", "testhost")):
        raise RuntimeError(f"--controllers and --logs need the test host's classes in {classes} (mvn test-compile)")
    java = os.path.join(os.environ.get("JAVA_HOME", "/usr"), "bin", "java")
    return [java, "-Xss256k", "-cp", classes, f"io.nvmf4j.testhost.{main}"] + [str(x) for x in args]


def log_sizes(*args):
    """One run of the test host's LogSizes to its end: its output line."""
    out = subprocess.run(test_host("LogSizes", "127.0.0.1", *args), capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"LogSizes {' '.join(str(x) for x in args)} exited {out.returncode}: {out.stderr.strip()[-400:]}")
    return out.stdout.strip().splitlines()[-1]


def one_namespace_iops(a, nvme_port, nqn):
    line = log_sizes(nvme_port, "iops", nqn, 1, a.iops_seconds, 16, a.iops_warmup)
    print(line, flush=True)
    return float(line.rsplit(":", 1)[1].split()[0])


def changed_list(api, nvme_port, nqn, first, count):
    """A controller of nqn reads its Changed Namespace List after count namespaces (bdevs chg<first>..) were added."""
    probe = subprocess.Popen(test_host("LogSizes", "127.0.0.1", nvme_port, "changed", nqn), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        if probe.stdout.readline().strip() != "READY":
            raise RuntimeError(f"LogSizes changed did not connect ({probe.wait()})")
        for i in range(first, first + count):
            api.call("POST", "/api/v1/bdevs", {"name": f"chg{i}", "type": "null", "blockSize": 512, "numBlocks": 2048})
            api.call("POST", f"/api/v1/subsystems/{nqn}/namespaces", {"bdev": f"chg{i}"})
        probe.stdin.write("read\n")
        probe.stdin.flush()
        line = probe.stdout.readline().strip()
        if probe.wait(timeout=60) != 0:
            raise RuntimeError(f"LogSizes changed exited {probe.returncode}")
        print(f"after {count} namespaces added to {nqn}: {line}", flush=True)
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()


def logs(a, api, nvme_port):
    print(log_sizes(nvme_port, "discovery"), flush=True)
    nqn = "nqn.2026-12.io.nvmf4j.scale:changed"
    api.call("POST", "/api/v1/subsystems", {"nqn": nqn, "allowAnyHost": True, "maxNamespaces": 2048, "listeners": [
        {"transport": "tcp", "address": "127.0.0.1", "port": nvme_port}]})
    changed_list(api, nvme_port, nqn, 0, 10)
    changed_list(api, nvme_port, nqn, 10, 1100)


def controllers(a, api, target, nvme_port, nqn):
    """Connects a.controllers controllers to nqn through the test host's ControllerLoad, then measures the target."""
    heap0, other0, rss0, fds0 = memory(target.pid())
    kato = 600000
    load = subprocess.Popen(test_host("ControllerLoad", "127.0.0.1", nvme_port, nqn, a.controllers,
                                      max(1, min(a.controllers, a.hosts or 1000)), kato),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        summary = None
        for line in load.stdout:
            line = line.strip()
            if line == "READY":
                break
            summary = line
        else:
            raise RuntimeError(f"the controller load ended before it was ready ({load.wait()})")
        heap, other, rss, fds = memory(target.pid())
        t0 = time.perf_counter()
        listing = api.call("GET", f"/api/v1/subsystems/{nqn}/controllers")
        list_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        api.call("GET", "/metrics")
        metrics_ms = (time.perf_counter() - t0) * 1000
        n = a.controllers
        print(summary, flush=True)
        print(f"with {n} controllers: heap {heap:.1f} MiB (+{heap - heap0:.1f}), direct {other:.1f} MiB, rss {rss:.1f} MiB "
              f"(+{rss - rss0:.1f}, {(rss - rss0) * 1024 / n:.1f} KiB per controller), fds {fds} (+{fds - fds0}), "
              f"GET controllers {list_ms:.1f} ms, GET /metrics {metrics_ms:.1f} ms", flush=True)
        load.stdin.close()
        for line in load.stdout:
            print(line.strip(), flush=True)
        if load.wait() != 0:
            raise RuntimeError(f"the controller load exited {load.returncode}")
        return listing
    finally:
        if load.poll() is None:
            load.kill()
            load.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,500,1000,2000")
    ap.add_argument("--engine", default="java", choices=["java", "spdk"])
    ap.add_argument("--hosts", type=int, default=0)
    ap.add_argument("--per-subsystem", type=int, default=10)
    ap.add_argument("--controllers", type=int, default=0,
                    help="after the last size, connect this many controllers (admin + 1 I/O queue each) to the first "
                         "subsystem and measure (needs nvmf-target's test classes: mvn test-compile)")
    ap.add_argument("--logs", action="store_true",
                    help="the IOPS of one namespace at the smallest and largest size, then the discovery log and the "
                         "changed namespace list (needs nvmf-target's test classes: mvn test-compile)")
    ap.add_argument("--spdk-mem-mb", type=int, default=0,
                    help="the spdk engine's spdk.memSizeMb (default: the engine's, 1,024): SPDK's hugepages, which "
                         "bound the queues it can open (reserve memSizeMb / 2 + 64 pages of 2 MiB first)")
    ap.add_argument("--iops-seconds", type=int, default=5)
    ap.add_argument("--iops-warmup", type=int, default=3, help="seconds of reads not counted before --iops-seconds")
    ap.add_argument("--keep", help="state directory to use and keep (default: a temporary one, removed)")
    a = ap.parse_args()
    if a.spdk_mem_mb and a.engine != "spdk":
        ap.error("--spdk-mem-mb is the spdk engine's: give --engine spdk")
    sizes = sorted(int(x) for x in a.sizes.split(","))
    state = a.keep or tempfile.mkdtemp(prefix="nvmf4j-scale-")
    os.makedirs(state, exist_ok=True)
    api_port = free_port()
    nvme_port = free_port({api_port})
    doc = {"engine": a.engine, "cores": 1,
           "api": {"port": api_port, "token": TOKEN, "requestsPerSecond": 1000000, "requestBurst": 1000000}}
    if a.spdk_mem_mb:
        doc["spdk"] = {"memSizeMb": a.spdk_mem_mb}
    if a.controllers:
        # every controller comes from 127.0.0.1: two connections each, above the default 1,024 per address
        limit = max(4096, 2 * a.controllers + 64)
        doc["tcp"] = {"maxConnectionsPerHost": limit, "maxConnectionsPerListener": limit}
    with open(os.path.join(state, "config.json"), "w") as f:
        json.dump(doc, f)
    target = Target(state, os.path.join(state, "target.log"))
    api = Api(api_port)
    print(f"scale probe: engine {a.engine}, sizes {sizes}, {a.per_subsystem} namespaces per subsystem, "
          f"state {state}, cpus {os.cpu_count()}, load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    target.start()
    try:
        await_ready(api, [], target)
        if a.hosts:
            api.call("POST", "/api/v1/subsystems", {"nqn": "nqn.2026-12.io.nvmf4j.scale:hosts", "listeners": [
                {"transport": "tcp", "address": "127.0.0.1", "port": nvme_port}]})
            times = []
            for h in range(a.hosts):
                t0 = time.perf_counter()
                api.call("POST", "/api/v1/subsystems/nqn.2026-12.io.nvmf4j.scale:hosts/hosts",
                         {"nqn": f"nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-{h:012d}"})
                times.append((time.perf_counter() - t0) * 1000)
            print(f"hosts {a.hosts}: add p50 {pct(times, 50):.2f} ms p99 {pct(times, 99):.2f} ms "
                  f"(first 100 p50 {pct(times[:100], 50):.2f}, last 100 p50 {pct(times[-100:], 50):.2f})",
                  flush=True)
        print(f"{'n':>7} {'add p50':>8} {'add p99':>8} {'list':>8} {'change':>7} {'disk':>10} {'heap':>7} "
              f"{'direct':>7} {'rss':>7} {'fds':>5} {'restart':>8}", flush=True)
        n = 0
        first_nqn = None
        for size in sizes:
            times = []
            while n < size:
                if n % a.per_subsystem == 0:
                    nqn = f"nqn.2026-12.io.nvmf4j.scale:s{n // a.per_subsystem:06d}"
                    api.call("POST", "/api/v1/subsystems", {"nqn": nqn, "allowAnyHost": True, "listeners": [
                        {"transport": "tcp", "address": "127.0.0.1", "port": nvme_port}]})
                    first_nqn = first_nqn or nqn
                t0 = time.perf_counter()
                api.call("POST", "/api/v1/bdevs", {"name": f"null{n}", "type": "null", "blockSize": 512,
                                                  "numBlocks": 2048})
                api.call("POST", f"/api/v1/subsystems/{nqn}/namespaces", {"bdev": f"null{n}"})
                times.append((time.perf_counter() - t0) * 1000)
                n += 1
            t0 = time.perf_counter()
            api.call("GET", "/api/v1/subsystems")
            api.call("GET", "/api/v1/bdevs")
            list_ms = (time.perf_counter() - t0) * 1000
            changes = []
            for i in range(20):
                t0 = time.perf_counter()
                api.call("PATCH", f"/api/v1/subsystems/{first_nqn}", {"allowAnyHost": i % 2 == 1})
                changes.append((time.perf_counter() - t0) * 1000)
            heap, other, rss, fds = memory(target.pid())
            t0 = time.perf_counter()
            target.stop()
            api.close()
            target.start()
            await_ready(api, [nvme_port], target)
            restart = time.perf_counter() - t0
            row = dict(n=n, p50=pct(times, 50), p99=pct(times, 99), list=list_ms, change=pct(changes, 50),
                       disk=disk_bytes(state), heap=heap, direct=other, rss=rss, fds=fds, restart=restart)
            rows.append(row)
            print(f"{n:>7} {row['p50']:>8.2f} {row['p99']:>8.2f} {list_ms:>8.1f} {row['change']:>7.2f} "
                  f"{row['disk']:>10} {heap:>7.1f} {other:>7.1f} {rss:>7.1f} {fds:>5} {restart:>8.2f}", flush=True)
            if a.logs and size in (sizes[0], sizes[-1]):
                row["iops"] = one_namespace_iops(a, nvme_port, first_nqn)
        if a.logs:
            if len(rows) > 1:
                print(f"one namespace's IOPS beside {rows[-1]['n']} namespaces over beside {rows[0]['n']}: "
                      f"x{rows[-1]['iops'] / rows[0]['iops']:.3f}", flush=True)
            logs(a, api, nvme_port)
        if a.controllers:
            controllers(a, api, target, nvme_port, first_nqn)
        if len(rows) > 1:
            lo, hi = rows[0], rows[-1]
            print(f"growth from {lo['n']} to {hi['n']} namespaces (x{hi['n'] / lo['n']:.0f}): " + ", ".join(
                f"{k} x{hi[k] / lo[k]:.2f}" for k in ("p50", "p99", "list", "change", "disk", "heap", "rss", "fds",
                                                      "restart") if lo[k]), flush=True)
    finally:
        target.stop()
        api.close()
        if not a.keep:
            subprocess.run(["rm", "-rf", state])
    return 0


if __name__ == "__main__":
    sys.exit(main())
