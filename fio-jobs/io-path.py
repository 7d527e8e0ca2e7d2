#!/usr/bin/env python3
"""An I/O's round trip at queue depth 1, segment by segment (engines.sh --io-path).

usage: perf script --ns -F pid,tid,time,event,trace -i io.data | io-path.py HOST_PID TARGET_PID
       io-path.py --table iopath.tsv TARGET[,TARGET...]

The recording holds the system-call entries and exits (raw_syscalls) of both processes, one clock for both:
socket reads and writes, and epoll waits that returned events. Each process's busiest thread is taken (the
one with the most socket writes: spdk_nvme_perf's and the target's poller). With one I/O in flight the
timeline repeats; each repetition, from the host's write of a command to its next one, is cut at these
points:

  host send         the host's write of the command (its system call)
  to the target     from the end of that write to the target's epoll wait returning with it (negative when
                    the target's wait returned before the host's write did: loopback delivers in the sender's
                    system call)
  target: to read   from there to the target's read
  target: read      its reads (the system calls)
  target: work      from the end of its last read to its write: parsing, the namespace, building the PDUs
  target: send      its write of the data and completion (the system call; on loopback it includes the
                    delivery to the host's socket)
  to the host       from the end of that write to the host's epoll wait returning with it
  host: read        the host's reads of the reply (their system calls and what lies between them)
  host: work        from the end of the host's last read to its next command's write

The segments' means add up to the mean round trip (the last line). A repetition with a piece missing (a
wait that woke for something else, a write without a read) is not counted, nor one over 10 times the
median round trip (the thread was descheduled). The first form prints "segment<TAB>mean ns<TAB>median
ns<TAB>repetitions", "host reads<TAB>mean per I/O" (reads that got data) and "host empty reads<TAB>mean per
I/O" (reads that got nothing); the second prints, per segment, the median over the
rounds of the means for each target, from engines.sh's iopath.tsv (round target row segment mean median n).
Tracing costs each system call some time; compare targets within one run, not with the IOPS of a run
without it.
"""
import re
import statistics
import sys
from collections import Counter, defaultdict

READS = {0, 17, 19, 45, 47, 295}         # read, pread64, readv, recvfrom, recvmsg, preadv
WRITES = {1, 18, 20, 44, 46, 296}        # write, pwrite64, writev, sendto, sendmsg, pwritev
POLLS = {7, 23, 232, 281, 441}           # poll, select, epoll_wait, epoll_pwait, epoll_pwait2
LINE = re.compile(r'^\s*(\d+)/(\d+)\s+(\d+)\.(\d+):\s+raw_syscalls:sys_(enter|exit):\s+NR\s+(\d+)\s*(?:=\s*(-?\d+))?')
SEGMENTS = ['host send', 'to the target', 'target: to read', 'target: read', 'target: work', 'target: send',
            'to the host', 'host: read', 'host: work']


def parse(lines):
    """{pid: {tid: [(t_ns, kind, nr, ret)]}} with kind 'enter' or 'exit'."""
    out = defaultdict(lambda: defaultdict(list))
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        pid, tid, sec, frac, kind, nr, ret = m.groups()
        t = int(sec) * 1_000_000_000 + int(frac.ljust(9, '0')[:9])
        out[int(pid)][int(tid)].append((t, kind, int(nr), int(ret) if ret is not None else None))
    return out


def events(threads):
    """The busiest thread's events as (t, what): what is rx0/rx1 (read enter/exit), tx0/tx1, ready (a poll that
    returned events), rxnone (the exit of a read that found nothing); a failed write counts as nothing."""
    if not threads:
        return []
    tid = max(threads, key=lambda k: sum(1 for e in threads[k] if e[1] == 'exit' and e[2] in WRITES))
    ev, pending = [], {}
    for t, kind, nr, ret in sorted(threads[tid]):
        if kind == 'enter':
            pending[nr] = t
            continue
        start = pending.pop(nr, None)
        if nr in POLLS:
            if ret is not None and ret > 0:
                ev.append((t, 'ready'))
        elif start is not None and ret is not None and ret > 0:
            name = 'rx' if nr in READS else 'tx' if nr in WRITES else None
            if name:
                ev.append((start, name + '0'))
                ev.append((t, name + '1'))
        elif start is not None and nr in READS:
            ev.append((t, 'rxnone'))                # a read that found nothing (EAGAIN)
    ev.sort()
    return ev


def first(ev, what, after, before=None):
    """Index of the first event `what` at or after time `after` (and before `before`), else None."""
    lo, hi = 0, len(ev)
    while lo < hi:
        mid = (lo + hi) // 2
        if ev[mid][0] < after:
            lo = mid + 1
        else:
            hi = mid
    for i in range(lo, len(ev)):
        if before is not None and ev[i][0] >= before:
            return None
        if ev[i][1] == what:
            return i
    return None


def cycles(host, target):
    """Per repetition the 9 segments (ns) and the host's reads in it."""
    sends = [i for i, e in enumerate(host) if e[1] == 'tx0']
    out = []
    for a, b in zip(sends, sends[1:]):
        t0, t9 = host[a][0], host[b][0]
        h1 = first(host, 'tx1', t0, t9)
        if h1 is None:
            continue
        t1 = host[h1][0]
        g2 = first(target, 'ready', t0, t9)
        if g2 is None:
            continue
        t2 = target[g2][0]
        g3 = first(target, 'rx0', t2, t9)
        g5 = first(target, 'tx0', t2, t9) if g3 is not None else None
        if g5 is None or target[g3][0] > target[g5][0]:
            continue
        t3, t5 = target[g3][0], target[g5][0]
        t4 = max(t for t, w in target[g3:g5] if w == 'rx1')
        t6 = target[first(target, 'tx1', t5)][0]
        h7 = first(host, 'ready', t5, t9)
        if h7 is None:
            continue
        t7 = host[h7][0]
        reads = [t for t, w in host[h7:b] if w == 'rx1']
        if not reads:
            continue
        t8 = reads[-1]
        seg = [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6, t8 - t7, t9 - t8]
        out.append((seg, len(reads), sum(1 for _, w in host[h7:b] if w == 'rxnone')))
    if out:
        med = statistics.median(sum(c[0]) for c in out)
        out = [c for c in out if sum(c[0]) <= 10 * med]
    return out


def analyse(lines, host_pid, target_pid):
    procs = parse(lines)
    found = cycles(events(procs.get(host_pid, {})), events(procs.get(target_pid, {})))
    if not found:
        sys.stderr.write('io-path.py: no complete round trip in the recording\n')
        return 1
    for k, name in enumerate(SEGMENTS + ['round trip']):
        vals = [sum(c[0]) if name == 'round trip' else c[0][k] for c in found]
        print('%s\t%.0f\t%.0f\t%d' % (name, statistics.mean(vals), statistics.median(vals), len(vals)))
    print('host reads\t%.2f' % statistics.mean(c[1] for c in found))
    print('host empty reads\t%.2f' % statistics.mean(c[2] for c in found))
    return 0


def table(path, targets):
    means = defaultdict(list)                       # (target, row, segment) -> [mean of each round]
    rows = []
    with open(path) as f:
        next(f, None)
        for line in f:
            p = line.rstrip('\n').split('\t')
            if len(p) < 5:
                continue
            _, target, row, seg, mean = p[:5]
            means[(target, row, seg)].append(float(mean))
            if row not in rows:
                rows.append(row)
    for row in rows:
        print('%-44s' % ('%s: the round trip, us (mean)' % row) + ''.join(' | %10s' % t for t in targets))
        for seg in SEGMENTS + ['round trip', 'host reads', 'host empty reads']:
            cells = []
            for t in targets:
                v = means.get((t, row, seg))
                x = statistics.median(v) if v else None
                cells.append('-' if x is None else ('%.2f' % x if seg.startswith('host') and 'reads' in seg
                                                    else '%.2f' % (x / 1000)))
            label = {'host reads': "host reads per I/O that got data",
                     'host empty reads': "host reads per I/O that got nothing"}.get(seg, seg)
            print('%-44s' % ('  ' + label if seg in SEGMENTS else label)
                  + ''.join(' | %10s' % c for c in cells))
    return 0


def main(argv):
    if len(argv) == 3 and argv[0] == '--table':
        try:
            return table(argv[1], argv[2].split(','))
        except OSError as e:
            sys.stderr.write('io-path.py: %s\n' % e)
            return 2
    if len(argv) == 2 and all(a.isdigit() for a in argv):
        return analyse(sys.stdin, int(argv[0]), int(argv[1]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
