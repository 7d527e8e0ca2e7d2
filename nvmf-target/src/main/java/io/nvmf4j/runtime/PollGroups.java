package io.nvmf4j.runtime;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.spi.SelectorProvider;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The poll groups: {@code cores} event-loop threads, each owning the queues assigned to it for their
 * whole life, plus one acceptor thread that always blocks. Their socket I/O ({@code socketIo}) is epoll by
 * default; io_uring (Netty's io_uring transport) where asked for and available, else epoll, said once in the log and
 * in {@link #describe()}; NIO where asked for, or where epoll is unavailable. The idle strategy works the same on
 * each ({@link IdleStrategies}; on io_uring through {@link IdleIoHandler}), and so does what else a poll group's loop
 * drives: the fds it watches for the RDMA transport and the file bdev's rings ({@link FdWatch}, epoll and io_uring
 * only), its pollers, tasks and timers.
 *
 * <p>With {@code pinTo} (the config's {@code pollGroupCores}) poll group {@code i} runs on the {@code i}-th CPU
 * of that set alone ({@link CpuAffinity}); the acceptor and the JVM's other threads keep the process's CPUs.
 */
public final class PollGroups implements AutoCloseable {
    static {
        NettyDefaults.apply();
    }

    private static final Logger LOG = LoggerFactory.getLogger(PollGroups.class);

    private final EventLoopGroup acceptor;
    private final EventLoopGroup workers;
    /** The socket I/O the loops run on ({@link SocketIoNames}). */
    private final String socketIo;
    /** Why the socket I/O asked for is not the one in use, or null. */
    private final String fallback;
    private final String requested;
    private final String idleStrategy;
    private final int cores;
    private final BitSet pinTo;
    private final List<IdleStrategies.Accounting> strategies = new CopyOnWriteArrayList<>();
    private long lastBusyNanos;

    public PollGroups(int cores, String idleStrategy) {
        this(cores, idleStrategy, null);
    }

    /**
     * {@code pinTo}: null leaves the poll groups wherever the scheduler puts them; else exactly {@code cores} CPUs,
     * each of which this process may run on ({@link IllegalArgumentException} naming the others otherwise).
     */
    public PollGroups(int cores, String idleStrategy, BitSet pinTo) {
        this(cores, idleStrategy, pinTo, SocketIoNames.EPOLL);
    }

    /** {@code socketIo}: {@link SocketIoNames}; io_uring where it is unavailable runs on epoll (logged once). */
    public PollGroups(int cores, String idleStrategy, BitSet pinTo, String socketIo) {
        this(cores, idleStrategy, pinTo, socketIo, SocketIoNames.IO_URING.equals(socketIo) && !IoUring.isAvailable()
            ? String.valueOf(IoUring.unavailabilityCause()) : null);
    }

    /** {@code ioUringUnavailable}: why io_uring cannot be used here, or null (tests pass their own). */
    PollGroups(int cores, String idleStrategy, BitSet pinTo, String socketIo, String ioUringUnavailable) {
        this.cores = cores;
        this.pinTo = pinTo == null ? null : (BitSet) pinTo.clone();
        ThreadFactory workerThreads = new DefaultThreadFactory("nvmf4j-poll", true);
        if (pinTo != null) {
            checkPinnable(cores, pinTo);
            workerThreads = pinning(workerThreads, pinTo);
        }
        this.idleStrategy = idleStrategy;
        this.requested = socketIo;
        if (!SocketIoNames.isValid(socketIo)) {
            throw new IllegalArgumentException("unknown socketIo '" + socketIo + "' (expected "
                + String.join(", ", SocketIoNames.ALL) + ")");
        }
        String io = socketIo;
        String why = null;
        if (SocketIoNames.IO_URING.equals(io) && ioUringUnavailable != null) {
            why = "io_uring is unavailable: " + ioUringUnavailable;
            io = SocketIoNames.EPOLL;
        }
        EventLoopGroup[] loops = null;
        if (SocketIoNames.IO_URING.equals(io)) {
            try {
                loops = loops(io, workerThreads);
            } catch (RuntimeException e) {
                // a ring the kernel would not make for a loop (memory, limits) after all
                why = "its event loops could not be made: " + e;
                io = SocketIoNames.EPOLL;
                strategies.clear();
            }
        }
        if (SocketIoNames.EPOLL.equals(io) && !Epoll.isAvailable()) {
            String epoll = "epoll is unavailable: " + Epoll.unavailabilityCause();
            why = why == null ? epoll : why + "; " + epoll;
            io = SocketIoNames.NIO;
        }
        if (why != null) {
            LOG.warn("socketIo {}: {}; the poll groups run on {}", socketIo, why, io);
        }
        this.socketIo = io;
        this.fallback = why;
        if (loops == null) {
            loops = loops(io, workerThreads);
        }
        this.workers = loops[0];
        this.acceptor = loops[1];
    }

    /** The workers and the acceptor on {@code io}; nothing left running when it throws. */
    private EventLoopGroup[] loops(String io, ThreadFactory workerThreads) {
        IoHandlerFactory acceptorIo;
        IoHandlerFactory workerIo;
        switch (io) {
            case SocketIoNames.IO_URING -> {
                if (IoUringPeek.unavailabilityCause() != null) {
                    LOG.info("io_uring poll groups: {}; a pass that does not block allocates 16 bytes in Netty"
                        + " (netty/netty#17437)", IoUringPeek.unavailabilityCause());
                }
                acceptorIo = IoUringIoHandler.newFactory();
                workerIo = IdleIoHandler.factory(IoUringIoHandler.newFactory(),
                    IdleStrategies.factory(idleStrategy, strategies));
            }
            case SocketIoNames.EPOLL -> {
                acceptorIo = EpollIoHandler.newFactory();
                workerIo = EpollIoHandler.newFactory(0, IdleStrategies.factory(idleStrategy, strategies));
            }
            default -> {
                acceptorIo = NioIoHandler.newFactory();
                workerIo = NioIoHandler.newFactory(SelectorProvider.provider(),
                    IdleStrategies.factory(idleStrategy, strategies));
            }
        }
        EventLoopGroup w = new MultiThreadIoEventLoopGroup(cores, workerThreads, workerIo);
        try {
            return new EventLoopGroup[] {w,
                new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("nvmf4j-accept", true), acceptorIo)};
        } catch (RuntimeException e) {
            w.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            throw e;
        }
    }

    private static void checkPinnable(int cores, BitSet pinTo) {
        if (pinTo.cardinality() != cores) {
            throw new IllegalArgumentException("pollGroupCores names " + pinTo.cardinality() + " CPU(s) " + pinTo
                + " for " + cores + " poll group(s)");
        }
        if (CpuAffinity.unavailabilityCause() != null) {
            throw new IllegalArgumentException("pollGroupCores: cannot pin here: " + CpuAffinity.unavailabilityCause());
        }
        BitSet outside = (BitSet) pinTo.clone();
        BitSet allowed = CpuAffinity.current();
        outside.andNot(allowed);
        if (!outside.isEmpty()) {
            throw new IllegalArgumentException("pollGroupCores: CPU(s) " + outside + " are not among the CPUs this "
                + "process may use " + allowed + " (a smaller machine: scale the profile down, see docs/dpu-profile.md)");
        }
    }

    /** Threads that pin themselves, in creation order, each to the next CPU of {@code pinTo}, then run. */
    private static ThreadFactory pinning(ThreadFactory threads, BitSet pinTo) {
        int[] cpus = pinTo.stream().toArray();
        AtomicInteger next = new AtomicInteger();
        return task -> {
            int cpu = cpus[next.getAndIncrement() % cpus.length];
            return threads.newThread(() -> {
                BitSet one = new BitSet();
                one.set(cpu);
                try {
                    CpuAffinity.pinCurrentThread(one);
                    LOG.info("poll group {} pinned to CPU {}", Thread.currentThread().getName(), cpu);
                } catch (IllegalStateException e) {
                    LOG.error("poll group {} not pinned: {}", Thread.currentThread().getName(), e.getMessage());
                }
                task.run();
            });
        };
    }

    public EventLoopGroup acceptor() {
        return acceptor;
    }

    public EventLoopGroup workers() {
        return workers;
    }

    public Class<? extends ServerChannel> serverChannelClass() {
        return switch (socketIo) {
            case SocketIoNames.IO_URING -> IoUringServerSocketChannel.class;
            case SocketIoNames.EPOLL -> EpollServerSocketChannel.class;
            default -> NioServerSocketChannel.class;
        };
    }

    /** The socket I/O the loops run on ({@link SocketIoNames}): the one asked for, or the fallback. */
    public String socketIo() {
        return socketIo;
    }

    /** Why the loops do not run on the socket I/O asked for, or null when they do. */
    public String socketIoFallback() {
        return fallback;
    }

    /** Whether the loops watch fds for the RDMA transport and the file bdev's rings ({@link FdWatch}): not NIO. */
    public boolean watchFds() {
        return !SocketIoNames.NIO.equals(socketIo);
    }

    /**
     * Waits until every poll group has run one task submitted now: afterwards no poll group still works
     * from state that was replaced before the call (the "pause, apply, resume" of a control change).
     */
    public void barrier() {
        List<Future<?>> done = new ArrayList<>();
        for (EventExecutor e : workers) {
            if (!e.inEventLoop()) {
                done.add(e.submit(() -> { }));
            }
        }
        for (Future<?> f : done) {
            if (!f.awaitUninterruptibly(5, TimeUnit.SECONDS)) {
                LOG.warn("a poll group did not reach the barrier within 5 s; going on");
            }
        }
    }

    /**
     * Seconds the poll groups have spent working (not idle) since they started, summed over the poll groups:
     * a counter, so any number of readers may sample it and {@code rate()} gives the busy cores.
     */
    public synchronized double busySeconds() {
        long busy = 0;
        for (IdleStrategies.Accounting a : strategies) {
            busy += a.busyNanos();
        }
        lastBusyNanos = Math.max(lastBusyNanos, busy); // a counter never goes back
        return lastBusyNanos / 1e9;
    }

    public String describe() {
        return cores + " poll group(s)" + (pinTo != null ? " pinned to CPUs " + pinTo : "") + ", " + idleStrategy
            + " idle strategy, " + socketIo + (fallback == null ? "" : " (socketIo " + requested + ": " + fallback + ")");
    }

    @Override
    public void close() {
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
