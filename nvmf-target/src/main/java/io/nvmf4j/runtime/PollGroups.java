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
 * whole life, plus one acceptor thread that always blocks. Epoll where available, NIO otherwise.
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
    private final boolean epoll;
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
        this.cores = cores;
        this.pinTo = pinTo == null ? null : (BitSet) pinTo.clone();
        ThreadFactory workerThreads = new DefaultThreadFactory("nvmf4j-poll", true);
        if (pinTo != null) {
            checkPinnable(cores, pinTo);
            workerThreads = pinning(workerThreads, pinTo);
        }
        this.idleStrategy = idleStrategy;
        this.epoll = Epoll.isAvailable();
        IoHandlerFactory acceptorIo = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        IoHandlerFactory workerIo = epoll
            ? EpollIoHandler.newFactory(0, IdleStrategies.factory(idleStrategy, strategies))
            : NioIoHandler.newFactory(SelectorProvider.provider(), IdleStrategies.factory(idleStrategy, strategies));
        if (!epoll) {
            LOG.info("epoll unavailable ({}); using NIO", Epoll.unavailabilityCause().toString());
        }
        this.acceptor = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("nvmf4j-accept", true), acceptorIo);
        this.workers = new MultiThreadIoEventLoopGroup(cores, workerThreads, workerIo);
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
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
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
            + " idle strategy, " + (epoll ? "epoll" : "nio");
    }

    @Override
    public void close() {
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
