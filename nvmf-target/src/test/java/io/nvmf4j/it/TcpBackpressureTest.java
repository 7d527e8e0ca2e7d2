package io.nvmf4j.it;

import ch.qos.logback.classic.Level;
import io.netty.buffer.PooledByteBufAllocator;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import io.nvmf4j.testhost.TermReq;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hosts that send commands and never read their socket. The target must keep its memory bounded (a
 * request and its buffers are held until the response is on the wire, and a connection whose outbound
 * buffer is full is not read), keep serving every other connection, and throttle or terminate the
 * offender. Figures are printed, not timed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpBackpressureTest {
    private static final long FLOOD_MS = 20_000;
    private static final long MAX_GROWTH = 64L << 20;
    private static final int RAW_CID = TcpHost.RAW_CID_BASE;
    private static final int READ_BYTES = 128 * 1024;

    /** Sends one PDU over and over from its own thread, never reading; counts what the socket took. */
    private static final class Flood extends Thread {
        final TcpHost queue;
        final byte[] pdu;
        final AtomicLong sent = new AtomicLong();
        final AtomicReference<IOException> failure = new AtomicReference<>();
        final long limit;
        volatile boolean stop;

        Flood(String name, TcpHost queue, byte[] pdu, long limit) {
            super(name);
            setDaemon(true);
            this.queue = queue;
            this.pdu = pdu;
            this.limit = limit;
            queue.pauseReading();
        }

        @Override
        public void run() {
            try {
                while (!stop && sent.get() < limit) {
                    queue.sendRaw(pdu);
                    sent.incrementAndGet();
                }
            } catch (IOException e) {
                failure.set(e);
            }
        }
    }

    /** Direct memory in use: the pooled allocator's arenas, and the JVM's direct buffers (whichever is higher). */
    private static long directMemory() {
        long pooled = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
        long jvm = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                jvm = pool.getMemoryUsed();
            }
        }
        return Math.max(pooled, jvm);
    }

    private static Controller controller(TestTarget target, int cntlid) {
        for (Subsystem s : target.nvmf().engine().target().nvmSubsystems()) {
            for (Controller c : s.controllers()) {
                if (c.cntlid() == cntlid && s.nqn().equals(TestTarget.SUBNQN)) {
                    return c;
                }
            }
        }
        return null;
    }

    /**
     * Two offenders and one healthy controller on one target for 20 s. The Identify flooder's admin queue
     * (36 requests of 4 KiB responses, below the 2 MiB high water mark together) runs out of requests
     * while its responses wait unwritten: terminated (PDU Sequence Error). The read flooder's I/O queue
     * (128 KiB responses) crosses the high water mark at once: throttled, its connection stays open and
     * its writes stall. Meanwhile the healthy controller's verified I/O goes on and direct memory grows
     * by less than 64 MiB.
     */
    @Test
    void hostsThatNeverReadAreBoundedAndOthersKeepServing() throws Exception {
        CountingObserver observer = new CountingObserver();
        try (TestTarget target = TestTarget.start(c -> {
        }, observer);
             NvmeController healthy = target.controller(1, TcpHostOptions.DEFAULT);
             NvmeController identifier = target.controller(0, TcpHostOptions.DEFAULT);
             NvmeController reader = target.controller(1, TcpHostOptions.DEFAULT)) {
            TestTarget.assertWriteReadBack(healthy.io(0), 0, 8192, 1);
            long base = directMemory();
            Sqe identify = Sqe.of(NvmeHost.OPC_IDENTIFY).cid(RAW_CID).cdw(10, 1).sgl(Sqe.SGL_TRANSPORT, 0, 4096);
            Sqe read = NvmeHost.rw(NvmeHost.OPC_READ, 1, 0, READ_BYTES / 512).cid(RAW_CID).sgl(Sqe.SGL_TRANSPORT, 0, READ_BYTES);
            TcpHost adminQueue = identifier.admin().queue();
            TcpHost ioQueue = reader.io(0).queue();
            Flood identifyFlood = new Flood("identify-flood", adminQueue, adminQueue.encodeCapsule(identify, null), Long.MAX_VALUE);
            Flood readFlood = new Flood("read-flood", ioQueue, ioQueue.encodeCapsule(read, null), Long.MAX_VALUE);

            AtomicLong maxGrowth = new AtomicLong();
            AtomicBoolean over = new AtomicBoolean();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    long g = directMemory() - base;
                    maxGrowth.accumulateAndGet(g, Math::max);
                    if (g >= MAX_GROWTH) {
                        over.set(true); // stop early rather than run the JVM out of direct memory
                        return;
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "direct-memory-sampler");
            sampler.setDaemon(true);
            sampler.start();
            identifyFlood.start();
            readFlood.start();

            long start = System.nanoTime();
            long deadline = start + TimeUnit.MILLISECONDS.toNanos(FLOOD_MS);
            long stallCheck = start + TimeUnit.MILLISECONDS.toNanos(FLOOD_MS - 8_000);
            long readsSentAtStallCheck = -1;
            int verified = 0;
            // the floods last FLOOD_MS, and longer until the healthy host has its 101 verified pairs: how many fit
            // in FLOOD_MS depends on the machine's speed, whether each of them succeeds does not
            while ((System.nanoTime() < deadline || verified <= 100) && !over.get()) {
                TestTarget.assertWriteReadBack(healthy.io(0), 1000 + (verified % 64) * 16L, 8192, verified);
                verified++;
                if (readsSentAtStallCheck < 0 && System.nanoTime() > stallCheck) {
                    readsSentAtStallCheck = readFlood.sent.get();
                }
            }
            sampler.interrupt();
            sampler.join();
            long readsSent = readFlood.sent.get();
            System.out.printf("non-reading hosts for %d ms: direct memory grew by at most %.1f MiB (base %.1f MiB);"
                    + " identify flood sent %d capsules (%s), read flood sent %d (%d at %d s); healthy host verified"
                    + " %d write+read pairs%n", (System.nanoTime() - start) / 1_000_000, maxGrowth.get() / 1048576.0,
                base / 1048576.0, identifyFlood.sent.get(), identifyFlood.failure.get(), readsSent,
                readsSentAtStallCheck, (FLOOD_MS - 8_000) / 1000, verified);

            assertThat(maxGrowth.get()).as("direct memory growth while hosts do not read").isLessThan(MAX_GROWTH);
            assertThat(verified).as("verified I/Os of the healthy controller meanwhile").isGreaterThan(100);

            // terminated: the admin queue ran out of requests (PDU Sequence Error) and was closed
            assertThat(observer.transportErrors(TermReq.FES_PDU_SEQUENCE_ERROR)).as("C2HTermReq PDU Sequence Error")
                .isEqualTo(1);
            identifyFlood.join(10_000);
            assertThat(identifyFlood.failure.get()).as("identify flood's socket closed by the target").isNotNull();
            assertThat(controller(target, identifier.cntlid())).as("identify flooder's controller torn down").isNull();

            // throttled: the read flood's writes stalled for (at least) the last 8 s, and its queue is still connected
            assertThat(readsSent).as("read capsules sent by the end vs. at %d s", (FLOOD_MS - 8_000) / 1000)
                .isEqualTo(readsSentAtStallCheck);
            assertThat(readFlood.failure.get()).as("read flood's socket").isNull();
            Controller throttled = controller(target, reader.cntlid());
            assertThat(throttled).as("read flooder's controller").isNotNull();
            assertThat(throttled.ioQueues()).as("read flooder's I/O queue still connected").hasSize(1);
            assertThat(reader.admin().keepAlive().ok()).as("read flooder's own admin queue still answers").isTrue();

            readFlood.stop = true;
            ioQueue.abort();
            adminQueue.abort();
            readFlood.join(10_000);
            TestTarget.assertWriteReadBack(healthy.io(0), 5000, 65536, 99);
        }
    }

    /**
     * A full queue of 128 KiB reads (16 MiB, more than the socket buffers hold) while the host does not
     * read: the target stops reading the socket with capsules still buffered; once the host reads again it
     * resumes, decodes what it had buffered, and every read completes with its data.
     */
    @Test
    void aThrottledQueueResumesWhenTheHostReadsAgain() throws Exception {
        try (TestTarget target = TestTarget.start(); NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = Le.random(READ_BYTES, 11);
            assertThat(io.write(1, 0, data).ok()).isTrue();
            io.queue().pauseReading();
            List<CompletableFuture<Completion>> reads = new ArrayList<>();
            for (int i = 0; i < NvmeController.IO_SQSIZE + 1; i++) {
                reads.add(io.readAsync(1, 0, READ_BYTES / 512));
            }
            Thread.sleep(1000);
            assertThat(reads.stream().filter(CompletableFuture::isDone).count()).as("completed while not reading")
                .isZero();
            io.queue().resumeReading();
            for (CompletableFuture<Completion> f : reads) {
                Completion r = io.await(f);
                assertThat(r.ok()).as("read %s", r).isTrue();
                assertThat(r.data()).isEqualTo(data);
            }
            TestTarget.assertWriteReadBack(io, 1000, 65536, 12);
        }
    }

    /**
     * A host that stopped reading with a few dozen responses queued resets its connection: closing fails
     * every pending write, and the target logs that connection's failure in one line (not one per write). That
     * responses are queued is awaited, not guessed from the flood's progress: the target says (at DEBUG) that its
     * outbound buffer is full and it stopped reading that connection, and with the host not reading it stays so.
     */
    @Test
    void aFailedConnectionWithPendingWritesIsLoggedOnce() throws Exception {
        try (TestTarget target = TestTarget.start();
             NvmeController c = target.controller(1, TcpHostOptions.DEFAULT);
             LogCapture log = new LogCapture("io.nvmf4j.transport.tcp.TcpQueue", Level.DEBUG)) {
            TcpHost q = c.io(0).queue();
            String peer = ":" + q.localPort();
            Sqe read = NvmeHost.rw(NvmeHost.OPC_READ, 1, 0, 32).cid(RAW_CID).sgl(Sqe.SGL_TRANSPORT, 0, 16384);
            // at most 64 MiB of responses, should they all be queued (as they were before backpressure)
            Flood flood = new Flood("read-flood", q, q.encodeCapsule(read, null), 4096);
            flood.start();
            log.await(peer + ": outbound buffer full; reading paused", Level.DEBUG, Duration.ofSeconds(30));
            System.out.printf("read flood: %d capsules of 16 KiB reads sent when the target stopped reading%n",
                flood.sent.get());
            q.abort();
            flood.join(10_000);
            long closeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (controller(target, c.cntlid()).ioQueues().size() > 0 && System.nanoTime() < closeDeadline) {
                Thread.sleep(20);
            }
            assertThat(controller(target, c.cntlid()).ioQueues()).as("I/O queue gone after the reset").isEmpty();
            Thread.sleep(200); // let a per-write logger (the defect) write its lines
            List<String> lines = log.lines(peer);
            lines.forEach(l -> System.out.println("logged: " + l));
            assertThat(lines).as("lines logged at INFO+ for the failed connection %s", peer).hasSize(1);
            assertThat(lines.get(0)).as("the one line").contains("more errors while closing");
            assertThat(c.admin().keepAlive().ok()).as("admin queue unaffected").isTrue();
        }
    }
}
