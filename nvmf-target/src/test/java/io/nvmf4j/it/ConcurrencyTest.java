package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 4 I/O queues x QD 32 of verified mixed-size I/O for about 3 s. Each of the 128 workers owns a
 * disjoint LBA slot, so in-flight commands never overlap and every read must match its write.
 * MAXH2CDATA is lowered to 16 KiB so larger writes take several H2CData PDUs per R2T.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConcurrencyTest {
    private static final int QUEUES = 4;
    private static final int QD = 32;
    private static final int MAX_H2C_DATA = 16384;
    private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(3);

    static TestTarget target;
    static NvmeController ctrl;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start(cfg -> cfg.tcp.maxH2cData = MAX_H2C_DATA);
        ctrl = target.controller(QUEUES, TcpHostOptions.DEFAULT);
    }

    @AfterAll
    static void stop() {
        if (ctrl != null) {
            ctrl.close();
        }
        if (target != null) {
            target.close();
        }
    }

    @Test
    void icRespCarriesConfiguredMaxH2cData() {
        assertThat(ctrl.io(0).queue().icResp().maxH2cData()).isEqualTo(MAX_H2C_DATA);
    }

    @Test
    void mixedVerifiedIoOnFourQueues() throws Exception {
        long slotBlocks = TestTarget.NUM_BLOCKS / QUEUES / QD;
        AtomicLong ops = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        List<String> errors = new CopyOnWriteArrayList<>();
        long deadline = System.nanoTime() + RUN_NANOS;
        List<Thread> workers = new ArrayList<>();
        for (int q = 0; q < QUEUES; q++) {
            for (int slot = 0; slot < QD; slot++) {
                NvmeHost io = ctrl.io(q);
                long base = (q * (long) QD + slot) * slotBlocks;
                Random rnd = new Random(q * 1000L + slot);
                Thread t = new Thread(() -> runSlot(io, base, (int) slotBlocks, rnd, deadline, ops, mismatches, errors),
                        "io-q" + q + "-s" + slot);
                t.setDaemon(true);
                workers.add(t);
            }
        }
        workers.forEach(Thread::start);
        for (Thread t : workers) {
            t.join(TimeUnit.SECONDS.toMillis(40));
            assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
        }
        assertThat(errors).as("command errors").isEmpty();
        assertThat(mismatches.get()).as("mismatches").isZero();
        assertThat(ops.get()).as("verified write+read pairs: at least one per worker")
            .isGreaterThanOrEqualTo(QUEUES * QD);
        for (NvmeHost io : ctrl.ioQueues()) {
            assertThat(io.queue().protocolErrors()).as("host-side protocol errors").isEmpty();
            assertThat(io.queue().isClosed()).as("queue still open").isFalse();
        }
    }

    /**
     * One worker: write 512 B..64 KiB at a random LBA of its slot, read it back, compare; repeat until the deadline.
     * The first pair is made whatever the time, so each worker's verified I/O does not depend on when it started.
     */
    private static void runSlot(NvmeHost io, long base, int slotBlocks, Random rnd, long deadline, AtomicLong ops,
                                AtomicLong mismatches, List<String> errors) {
        try {
            for (boolean first = true; (first || System.nanoTime() < deadline) && errors.isEmpty(); first = false) {
                int nlb = 1 + rnd.nextInt(128);
                long slba = base + rnd.nextInt(slotBlocks - nlb + 1);
                byte[] data = new byte[nlb * TestTarget.BLOCK_SIZE];
                rnd.nextBytes(data);
                Completion w = io.write(1, slba, data);
                if (!w.ok()) {
                    errors.add("write LBA " + slba + " x" + nlb + ": " + w);
                    return;
                }
                Completion r = io.read(1, slba, nlb);
                if (!r.ok()) {
                    errors.add("read LBA " + slba + " x" + nlb + ": " + r);
                    return;
                }
                if (!Arrays.equals(r.data(), data)) {
                    mismatches.incrementAndGet();
                }
                ops.incrementAndGet();
            }
        } catch (RuntimeException e) {
            errors.add(Thread.currentThread().getName() + ": " + e);
        }
    }
}
