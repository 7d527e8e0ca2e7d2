package io.nvmf4j.runtime;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The poll groups' socket I/O ({@code socketIo}): io_uring runs the workers and the acceptor where asked for, falls
 * back to epoll where unavailable and says so once, and on io_uring every idle strategy runs the loop's tasks, timers,
 * watched fds and pollers, blocking when idle where the strategy says so. The NVMe/TCP tests run over io_uring in the
 * build's {@code io-uring} executions.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SocketIoTest {
    private static void assumeIoUring() {
        Assumptions.assumeTrue(IoUring.isAvailable(), () -> "io_uring is unavailable here: "
            + IoUring.unavailabilityCause());
    }

    @Test
    void ioUringRunsTheWorkersAndTheAcceptor() {
        assumeIoUring();
        try (PollGroups pg = new PollGroups(2, IdleStrategyNames.BACKOFF, null, SocketIoNames.IO_URING)) {
            assertThat(pg.socketIo()).isEqualTo(SocketIoNames.IO_URING);
            assertThat(pg.socketIoFallback()).isNull();
            assertThat(pg.watchFds()).isTrue();
            assertThat(pg.serverChannelClass()).isEqualTo(IoUringServerSocketChannel.class);
            assertThat(pg.describe()).isEqualTo("2 poll group(s), backoff idle strategy, io_uring");
            for (EventExecutor e : pg.workers()) {
                assertThat(((IoEventLoop) e).isCompatible(IoUringIoHandle.class)).as("a worker on io_uring").isTrue();
            }
            assertThat(((IoEventLoop) pg.acceptor().next()).isCompatible(IoUringIoHandle.class))
                .as("the acceptor on io_uring").isTrue();
        }
    }

    @Test
    void ioUringWhereItIsUnavailableRunsOnEpollAndSaysSoOnce() {
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        Logger logger = (Logger) LoggerFactory.getLogger(PollGroups.class);
        logger.addAppender(log);
        String cause = "io_uring_setup: Operation not permitted";
        try (PollGroups pg = new PollGroups(1, IdleStrategyNames.BUSY, null, SocketIoNames.IO_URING, cause)) {
            assertThat(pg.socketIo()).isEqualTo(SocketIoNames.EPOLL);
            assertThat(pg.serverChannelClass()).isEqualTo(EpollServerSocketChannel.class);
            assertThat(pg.socketIoFallback()).isEqualTo("io_uring is unavailable: " + cause);
            assertThat(pg.describe()).isEqualTo("1 poll group(s), busy idle strategy, epoll (socketIo io_uring: "
                + "io_uring is unavailable: " + cause + ")");
            assertThat(((IoEventLoop) pg.workers().next()).isCompatible(EpollIoHandle.class)).isTrue();
        } finally {
            logger.detachAppender(log);
        }
        assertThat(log.list).as("one warning at start").filteredOn(e -> e.getLevel() == Level.WARN)
            .singleElement().extracting(ILoggingEvent::getFormattedMessage).isEqualTo("socketIo io_uring: io_uring is"
                + " unavailable: " + cause + "; the poll groups run on epoll");
    }

    @Test
    void epollAndNioAsAskedFor() {
        try (PollGroups pg = new PollGroups(1, IdleStrategyNames.BACKOFF, null, SocketIoNames.EPOLL)) {
            assertThat(pg.socketIo()).isEqualTo(SocketIoNames.EPOLL);
            assertThat(pg.socketIoFallback()).isNull();
            assertThat(pg.describe()).isEqualTo("1 poll group(s), backoff idle strategy, epoll");
        }
        try (PollGroups pg = new PollGroups(1, IdleStrategyNames.BACKOFF, null, SocketIoNames.NIO)) {
            assertThat(pg.socketIo()).isEqualTo(SocketIoNames.NIO);
            assertThat(pg.serverChannelClass()).isEqualTo(NioServerSocketChannel.class);
            assertThat(pg.watchFds()).isFalse();
            IoEventLoop loop = (IoEventLoop) pg.workers().next();
            assertThat(FdWatch.canWatch(loop)).isFalse();
            assertThatThrownBy(() -> FdWatch.watch(loop, new FileDescriptor(0), "stdin", () -> { }))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot watch stdin");
        }
        assertThatThrownBy(() -> new PollGroups(1, IdleStrategyNames.BACKOFF, null, "uring"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown socketIo 'uring'");
    }

    /**
     * A watched fd is level-triggered on both loops: input the first call leaves unread calls it again without more
     * input; and a loop ends while it watches one (on io_uring its poll in flight is cancelled, or the loop's end
     * would wait for it).
     */
    @ParameterizedTest
    @ValueSource(strings = {SocketIoNames.EPOLL, SocketIoNames.IO_URING})
    void aWatchedFdIsLevelTriggered(String socketIo) throws Exception {
        if (SocketIoNames.IO_URING.equals(socketIo)) {
            assumeIoUring();
        }
        PollGroups pg = new PollGroups(1, IdleStrategyNames.INTERRUPT, null, socketIo);
        FileDescriptor[] pipe = FileDescriptor.pipe(); // Netty's native library is loaded now
        try (pg) {
            IoEventLoop loop = (IoEventLoop) pg.workers().next();
            AtomicInteger calls = new AtomicInteger();
            CountDownLatch drained = new CountDownLatch(1);
            ByteBuffer in = ByteBuffer.allocateDirect(16);
            FdWatch.watch(loop, pipe[0], "a pipe", () -> {
                assertThat(loop.inEventLoop()).isTrue();
                if (calls.incrementAndGet() >= 2) {
                    try {
                        assertThat(pipe[0].read(in, 0, in.capacity())).isEqualTo(1);
                    } catch (java.io.IOException e) {
                        throw new AssertionError(e);
                    }
                    drained.countDown();
                }
            });
            write(pipe[1]);
            assertThat(drained.await(20, TimeUnit.SECONDS)).as("called again for the byte left unread").isTrue();
            assertThat(calls.get()).isEqualTo(2);
        } finally {
            pipe[0].close();
            pipe[1].close();
        }
    }

    /**
     * On io_uring, each idle strategy runs tasks from other threads, timers, and a poller fed through a watched fd
     * (as a file bdev's ring is): a busy loop polls without arming, a blocking one arms before it blocks and is woken
     * by the fd.
     */
    @ParameterizedTest
    @ValueSource(strings = {IdleStrategyNames.BUSY, IdleStrategyNames.BACKOFF, IdleStrategyNames.INTERRUPT})
    void everyStrategyRunsTasksTimersFdsAndPollersOnIoUring(String strategy) throws Exception {
        assumeIoUring();
        PollGroups pg = new PollGroups(1, strategy, null, SocketIoNames.IO_URING);
        FileDescriptor[] pipe = FileDescriptor.pipe();
        try (pg) {
            EventLoop loop = pg.workers().next();
            assertThat(CompletableFuture.supplyAsync(() -> 42, loop).get(10, TimeUnit.SECONDS)).isEqualTo(42);
            long scheduled = System.nanoTime();
            loop.schedule(() -> { }, 20, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
            assertThat(System.nanoTime() - scheduled).as("a timer fires no earlier than due")
                .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(20));
            Pipe p = new Pipe(pipe[0]);
            loop.submit(() -> {
                IdleStrategies.current().addPoller(p);
                FdWatch.watch((IoEventLoop) loop, pipe[0], "a pipe", p::poll);
            }).get(10, TimeUnit.SECONDS);
            for (int i = 1; i <= 20; i++) {
                write(pipe[1]);
                p.written.incrementAndGet();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (p.consumed.get() < i && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                assertThat(p.consumed.get()).as("byte %d taken by the poll group", i).isEqualTo(i);
            }
            assertThat(p.polls.get()).as("polled on every pass").isGreaterThanOrEqualTo(20);
            if (IdleStrategyNames.BUSY.equals(strategy)) {
                assertThat(p.arms.get()).as("a busy poll group never arms").isZero();
            } else {
                // the bytes above may all be taken while the group is still spinning (a fast machine never lets it go
                // idle between them); left idle now, it must arm before it blocks, and a byte written then wakes it
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (p.arms.get() == 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                assertThat(p.arms.get()).as("armed before blocking").isPositive();
                write(pipe[1]);
                p.written.incrementAndGet();
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (p.consumed.get() < 21 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                assertThat(p.consumed.get()).as("the byte written after arming taken").isEqualTo(21);
            }
        } finally {
            pipe[0].close();
            pipe[1].close();
        }
    }

    /**
     * On io_uring a blocking strategy blocks once idle: the poll group's thread takes (almost) no CPU time while the
     * group has nothing to do (a spinning thread would take all of the window). The window opens once the group has
     * gone idle and armed its poller before blocking, so the loop's start (its first passes, code run for the first
     * time) is not in it, however slowly a loaded machine runs that.
     */
    @ParameterizedTest
    @ValueSource(strings = {IdleStrategyNames.BACKOFF, IdleStrategyNames.INTERRUPT})
    void anIdlePollGroupBlocksOnIoUring(String strategy) throws Exception {
        assumeIoUring();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isCurrentThreadCpuTimeSupported(), "no thread CPU time here");
        try (PollGroups pg = new PollGroups(1, strategy, null, SocketIoNames.IO_URING)) {
            EventLoop loop = pg.workers().next();
            long tid = CompletableFuture.supplyAsync(() -> Thread.currentThread().getId(), loop)
                .get(10, TimeUnit.SECONDS);
            assertThat(ArmCounter.on(loop).awaitArmed()).as("the idle group about to block").isTrue();
            long cpu0 = threads.getThreadCpuTime(tid);
            long wall0 = System.nanoTime();
            Thread.sleep(300);
            long cpu = threads.getThreadCpuTime(tid) - cpu0;
            long wall = System.nanoTime() - wall0;
            assertThat(cpu).as("CPU time of the idle poll group over %d ms", wall / 1_000_000)
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(30));
        }
    }

    private static void write(FileDescriptor fd) throws java.io.IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(1);
        b.put(0, (byte) 7);
        assertThat(fd.write(b, 0, 1)).isEqualTo(1);
    }

    /** A poller over a pipe: takes the bytes written to it (never reads more than were written, so never blocks). */
    private static final class Pipe implements IdleStrategies.Poller {
        final AtomicInteger written = new AtomicInteger();
        final AtomicInteger consumed = new AtomicInteger();
        final AtomicLong polls = new AtomicLong();
        final AtomicInteger arms = new AtomicInteger();
        private final FileDescriptor fd;
        private final ByteBuffer in = ByteBuffer.allocateDirect(64);

        Pipe(FileDescriptor fd) {
            this.fd = fd;
        }

        @Override
        public int poll() {
            polls.incrementAndGet();
            int n = Math.min(written.get() - consumed.get(), in.capacity());
            if (n <= 0) {
                return 0;
            }
            try {
                int r = fd.read(in, 0, n);
                consumed.addAndGet(r);
                return r;
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public int beforeBlocking() {
            arms.incrementAndGet();
            return poll();
        }
    }
}
