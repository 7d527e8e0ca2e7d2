#!/usr/bin/env python3
"""Where a target's CPU time goes, by category, from a Linux perf recording (engines.sh --profile).

usage: perf script -F comm,tid,ip,sym,dso -i perf.data | profile-categories.py [--top N]

Reads perf script's output of a call-graph recording (perf record -g) of one target process and prints one
line per category, "category<TAB>samples", then with --top N the N leaf symbols with the most samples as
"top<TAB>symbol<TAB>samples". Each sample is put in one category by its leaf frame:

- kernel frames by the system call they are part of (its entry and exit included): the libc wrapper the
  kernel was entered from (the first user frame, which is the interrupted instruction and so reliable even
  when the rest of the user stack is not), else the kernel's own frames: epoll waits (a busy poller's idle
  time), socket receive, socket send, other system calls; kernel work outside a system call (interrupts,
  softirqs) apart;
- Java code by the compiled method's class (the JIT's symbols from jcmd <pid> Compiler.perfmap): Netty's
  buffers, the rest of Netty, metrics (Micrometer, HdrHistogram, our observer), nvmf4j's block devices,
  the rest of nvmf4j, the JDK; the JVM's copy stubs and memcpy as copies; the interpreter, the JVM's own
  code (GC, JIT compiler), and threads other than the poll groups' as the JVM's;
- SPDK's nvmf_tgt and spdk_nvme_perf by their function names (NVMe/TCP, nvmf core, the host's nvme driver,
  sock layer, bdev, malloc bdev, reactor and threads, buffers and mempools, copies, time).

A compiled Java method counts under its own class even where the JIT inlined other classes' code into
it, so the split between nvmf4j and Netty is by compilation unit, not by source line.
"""
import re
import sys
from collections import Counter

FRAME = re.compile(r'^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$')
SYSCALL = re.compile(r'^(?:__x64_sys_|__do_sys_|__se_sys_|__ia32_sys_|__x32_sys_)(\w+?)(?:\+0x[0-9a-f]+)?$')
OFFSET = re.compile(r'\+0x[0-9a-f]+$')

RECEIVE = {'read', 'readv', 'recvfrom', 'recvmsg', 'recvmmsg'}
SEND = {'write', 'writev', 'sendto', 'sendmsg', 'sendmmsg'}
POLL = {'epoll_wait', 'epoll_pwait', 'epoll_pwait2', 'poll', 'ppoll', 'select', 'pselect6'}

# the SPDK target's threads that serve I/O, and the java engine's poll group threads (event loops)
IO_THREADS = re.compile(r'reactor_|nvmf_tgt|nvmf4j-poll|spdk_nvme_perf|^perf$')


# the libc wrappers (and Netty's JNI library calls them) by the system call they make
USER_RECEIVE = re.compile(r'(^|_)(read|readv|recv|recvfrom|recvmsg|recvmmsg)$')
USER_SEND = re.compile(r'(^|_)(write|writev|send|sendto|sendmsg|sendmmsg)$')
USER_POLL = re.compile(r'(^|_)(epoll_wait|epoll_pwait|epoll_pwait2|poll|ppoll|select|pselect6?)$')


def kernel_category(frames):
    """A kernel sample, by the system call it is part of (entry and exit included)."""
    user = next((s for s, d in frames if not d.startswith('[kernel')), None)
    if user is not None:
        u = user.replace('__GI___libc_', '').replace('__libc_', '')
        if USER_POLL.search(u):
            return 'kernel: epoll wait (polling, idle)'
        if USER_RECEIVE.search(u):
            return 'kernel: socket receive'
        if USER_SEND.search(u):
            return 'kernel: socket send'
        if 'epoll_ctl' in u:
            return 'kernel: epoll_ctl'
    syms = [s for s, d in frames if d.startswith('[kernel')]
    for sym in syms:
        m = SYSCALL.match(sym)
        name = m.group(1) if m else None
        if name in POLL or sym.startswith(('do_epoll_wait', 'ep_poll')):
            return 'kernel: epoll wait (polling, idle)'
        if name in RECEIVE or sym.startswith(('ksys_read', 'do_readv', 'sock_recvmsg', '__sys_recvmsg', 'tcp_recvmsg')):
            return 'kernel: socket receive'
        if name in SEND or sym.startswith(('ksys_write', 'do_writev', 'sock_sendmsg', '__sys_sendmsg', 'tcp_sendmsg')):
            return 'kernel: socket send'
        if name == 'epoll_ctl' or sym.startswith('do_epoll_ctl'):
            return 'kernel: epoll_ctl'
    if any(s.startswith(('entry_SYSCALL', 'do_syscall_64')) for s in syms):
        return 'kernel: other system calls'
    if any('irq' in s or 'softirq' in s or 'timer' in s or 'apic' in s for s in syms):
        return 'kernel: interrupts, softirqs, timers'
    if any(s.startswith(('exc_page_fault', 'asm_exc_page_fault', 'handle_mm_fault')) for s in syms):
        return 'kernel: page faults'
    return 'kernel: other'


def java_category(sym):
    s = sym.replace('/', '.')
    if s.startswith('Interpreter') or 'Interpreter' in s.split(' ')[0]:
        return 'JVM: interpreter'
    if 'arraycopy' in s or 'copyMemory' in s or 'Copy::' in s or s.startswith('StubRoutines'):
        return 'copies (JIT stubs: arraycopy, Unsafe.copyMemory)'
    if 'io.netty.buffer' in s:
        return 'netty: buffers, allocator'
    if 'io.netty' in s:
        return 'netty: channel, pipeline, event loop'
    if 'io.micrometer' in s or 'HdrHistogram' in s or 'io.nvmf4j.metrics' in s or 'IoObserver' in s or 'IoMetrics' in s:
        return 'metrics'
    if 'io.nvmf4j.bdev' in s:
        return 'nvmf4j: block devices'
    if 'io.nvmf4j' in s:
        return 'nvmf4j: transport, commands'
    if re.search(r'(^|[\s.])(java|jdk|sun)\.', s):
        return 'JDK library'
    if 'Stub' in s or 'stub' in s:
        return 'JVM: stubs'
    return 'JIT: other'


def spdk_category(sym):
    s = sym
    if 'memcpy' in s or 'memmove' in s or 'iovcpy' in s:
        return 'copies'
    if 'get_ticks' in s or 'rdtsc' in s:
        return 'time (clock_gettime)'
    if 'crc32' in s:
        return 'digests'
    if s.startswith(('nvmf_tcp', '_nvmf_tcp', 'nvme_tcp', '_nvme_tcp')):
        return 'SPDK: NVMe/TCP (nvmf_tcp, nvme_tcp)'
    if 'nvmf' in s:
        return 'SPDK: nvmf core'
    if 'nvme' in s:
        return 'SPDK: nvme driver (host)'
    if 'sock' in s or 'posix' in s:
        return 'SPDK: sock layer'
    if 'malloc' in s and 'bdev' in s:
        return 'SPDK: malloc bdev'
    if 'bdev' in s:
        return 'SPDK: bdev layer'
    if 'reactor' in s or 'thread' in s or 'poller' in s or 'msg' in s or 'event' in s:
        return 'SPDK: reactor, threads, pollers'
    if 'mempool' in s or 'iobuf' in s or 'rte_' in s or 'ring' in s:
        return 'SPDK/DPDK: buffers, mempools, rings'
    return 'SPDK: other'


def category(comm, frames):
    sym, dso = frames[0]
    if dso == '[kernel.kallsyms]' or dso.startswith('[kernel'):
        return kernel_category(frames)
    if comm and not IO_THREADS.search(comm):
        return 'other threads (JVM: GC, JIT compiler; SPDK: app thread)'
    base = dso.rsplit('/', 1)[-1]
    if base.startswith('perf-') and base.endswith('.map') or dso == '[JIT]' or 'jitted' in base:
        return java_category(sym)
    if base.startswith('libjvm'):
        return 'time (clock_gettime)' if 'javaTimeNanos' in sym else 'JVM: runtime (libjvm)'
    if base == '[vdso]':
        return 'time (clock_gettime)' if 'clock' in sym or 'time' in sym else 'vdso'
    if base.startswith('libc.') or base.startswith('libc-'):
        if 'memcpy' in sym or 'memmove' in sym or 'memset' in sym:
            return 'copies'
        return 'time (clock_gettime)' if 'clock_gettime' in sym else 'libc'
    if 'netty' in base:
        return 'netty: native epoll (JNI)'
    if base.startswith(('libjava', 'libnio', 'libnet', 'libzip', 'libjimage')):
        return 'JDK native'
    if base in ('nvmf_tgt', 'spdk_nvme_perf') or base.startswith(('libspdk', 'librte', 'libnvmf4j_spdk')):
        return spdk_category(sym)
    if base in ('[unknown]', 'unknown'):
        return 'JIT: other' if sym in ('[unknown]', '') else java_category(sym)
    return 'other: ' + base


def samples(lines):
    comm, frames = None, []
    for line in lines:
        line = line.rstrip('\n')
        if not line.strip():
            if frames:
                yield comm, frames
            comm, frames = None, []
            continue
        if not line[0].isspace():
            # header: "comm tid [...]"; comm may contain spaces, the tid is the last all-digit word before more
            parts = line.split()
            tid_at = next((i for i in range(len(parts) - 1, -1, -1) if parts[i].isdigit()), len(parts))
            comm = ' '.join(parts[:tid_at]) if tid_at else line.strip()
            continue
        m = FRAME.match(line)
        if m:
            frames.append((OFFSET.sub('', m.group(2)), m.group(3)))
    if frames:
        yield comm, frames


def main():
    top = 0
    if len(sys.argv) == 3 and sys.argv[1] == '--top':
        top = int(sys.argv[2])
    elif len(sys.argv) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cats, leaves = Counter(), Counter()
    for comm, frames in samples(sys.stdin):
        cats[category(comm, frames)] += 1
        leaves[frames[0][0] + ' (' + frames[0][1].rsplit('/', 1)[-1] + ')'] += 1
    for c, n in cats.most_common():
        print(f'{c}\t{n}')
    for s, n in leaves.most_common(top):
        print(f'top\t{s}\t{n}')


if __name__ == '__main__':
    main()
