package io.nvmf4j.it;

import io.netty.util.concurrent.EventExecutor;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.runtime.ArmCounter;
import io.nvmf4j.runtime.IdleStrategies;
import io.nvmf4j.runtime.IdleStrategyNames;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Every idle strategy, with one and with two poll groups, carries verified I/O on two I/O queues:
 * in-capsule writes (up to the 8 KiB in-capsule size) and R2T writes (beyond it), first one at a time
 * per queue, then pipelined on both queues at once.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class IdleStrategyTest {
    private static final int IN_CAPSULE = 8192;
    private static final int[] IN_CAPSULE_SIZES = {512, 4096, IN_CAPSULE};
    private static final int[] R2T_SIZES = {IN_CAPSULE + 512, 32 * 1024, 128 * 1024};
    /** LBAs per queue: queue q uses [q * QUEUE_SPAN, (q + 1) * QUEUE_SPAN). */
    private static final long QUEUE_SPAN = TestTarget.NUM_BLOCKS / 2;

    @ParameterizedTest(name = "{0}, cores={1}")
    @CsvSource({"busy, 2", "backoff, 2", "interrupt, 2", "busy, 1", "backoff, 1", "interrupt, 1"})
    void verifiedIoOnTwoQueues(String strategy, int cores) throws Exception {
        try (TestTarget target = TestTarget.start(cfg -> {
                cfg.idleStrategy = strategy;
                cfg.cores = cores;
                cfg.tcp.inCapsuleDataSize = IN_CAPSULE;
            });
             NvmeController ctrl = target.controller(2, TcpHostOptions.DEFAULT)) {
            assertThat(ctrl.ioQueues()).hasSize(2);
            for (int q = 0; q < 2; q++) {
                oneAtATime(ctrl.io(q), q * QUEUE_SPAN, q);
            }
            pipelinedOnBothQueues(ctrl);

            // every poll group out of work, backoff and interrupt blocked in epoll_wait (awaited: each arms a poller of
            // the test just before it blocks); the assertion is that the next commands still complete
            if (!IdleStrategyNames.BUSY.equals(strategy)) {
                for (EventExecutor group : target.nvmf().engine().pollGroups().workers()) {
                    assertThat(ArmCounter.on(group).awaitArmed()).as("%s poll group about to block", strategy).isTrue();
                }
            }
            for (int q = 0; q < 2; q++) {
                TestTarget.assertWriteReadBack(ctrl.io(q), q * QUEUE_SPAN + 4000, 4096, 77 + q);
            }
            assertThat(ctrl.admin().keepAlive().ok()).as("admin queue after idling").isTrue();
            for (NvmeHost io : ctrl.ioQueues()) {
                assertThat(io.queue().protocolErrors()).as("host-side protocol errors").isEmpty();
                assertThat(io.queue().isClosed()).isFalse();
            }
        }
    }

    /** Each size written and read back in turn; in-capsule writes take no R2T, larger ones do. */
    private static void oneAtATime(NvmeHost io, long base, int q) {
        long slba = base;
        for (int size : IN_CAPSULE_SIZES) {
            long r2t = io.queue().r2tCount();
            TestTarget.assertWriteReadBack(io, slba, size, size * 7L + q);
            assertThat(io.queue().r2tCount() - r2t).as("R2Ts for an in-capsule write of %d B", size).isZero();
            slba += size / TestTarget.BLOCK_SIZE;
        }
        for (int size : R2T_SIZES) {
            long r2t = io.queue().r2tCount();
            TestTarget.assertWriteReadBack(io, slba, size, size * 7L + q);
            assertThat(io.queue().r2tCount() - r2t).as("R2Ts for a write of %d B", size).isPositive();
            slba += size / TestTarget.BLOCK_SIZE;
        }
    }

    /** 32 writes in flight per queue, on both queues from two threads, then all read back. */
    private static void pipelinedOnBothQueues(NvmeController ctrl) throws InterruptedException {
        List<String> errors = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int q = 0; q < 2; q++) {
            NvmeHost io = ctrl.io(q);
            long base = q * QUEUE_SPAN + 8192;
            int queue = q;
            threads.add(new Thread(() -> pipeline(io, base, queue, errors), "pipeline-q" + q));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(20));
            assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
        }
        assertThat(errors).isEmpty();
    }

    private static void pipeline(NvmeHost io, long base, int q, List<String> errors) {
        try {
            int n = 32;
            int[] sizes = new int[n];
            long[] lbas = new long[n];
            List<CompletableFuture<Completion>> writes = new ArrayList<>();
            long slba = base;
            for (int i = 0; i < n; i++) {
                sizes[i] = i % 2 == 0 ? IN_CAPSULE_SIZES[i / 2 % 3] : R2T_SIZES[i / 2 % 3];
                lbas[i] = slba;
                slba += sizes[i] / TestTarget.BLOCK_SIZE;
                writes.add(io.writeAsync(1, lbas[i], Le.random(sizes[i], 1000L * q + i)));
            }
            for (int i = 0; i < n; i++) {
                Completion w = io.await(writes.get(i));
                if (!w.ok()) {
                    errors.add("q" + q + " write " + i + ": " + w);
                }
            }
            List<CompletableFuture<Completion>> reads = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                reads.add(io.readAsync(1, lbas[i], sizes[i] / TestTarget.BLOCK_SIZE));
            }
            for (int i = 0; i < n; i++) {
                Completion r = io.await(reads.get(i));
                if (!r.ok()) {
                    errors.add("q" + q + " read " + i + ": " + r);
                } else if (!java.util.Arrays.equals(r.data(), Le.random(sizes[i], 1000L * q + i))) {
                    errors.add("q" + q + " data mismatch at LBA " + lbas[i] + " (" + sizes[i] + " B)");
                }
            }
        } catch (RuntimeException e) {
            errors.add("q" + q + ": " + e);
        }
    }

    @Test
    void unknownStrategyIsRejectedByTheValidator() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.idleStrategy = "yield";
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c));
        assertThat(e).isNotNull();
        assertThat(e.problems()).singleElement().asString().startsWith("idleStrategy:").contains("yield");
        assertThat(IdleStrategyNames.isValid("yield")).isFalse();
        assertThatThrownBy(() -> IdleStrategies.factory("yield")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("yield");
    }

    @Test
    void unknownStrategyStopsTheTargetFromStarting() {
        assertThatThrownBy(() -> TestTarget.start(cfg -> cfg.idleStrategy = "spin"))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("idleStrategy");
    }

    @Test
    void knownStrategiesAreValid() {
        for (String s : new String[] {IdleStrategyNames.BUSY, IdleStrategyNames.BACKOFF, IdleStrategyNames.INTERRUPT}) {
            assertThat(IdleStrategyNames.isValid(s)).as(s).isTrue();
            assertThat(IdleStrategies.factory(s).newSelectStrategy()).as(s).isNotNull();
        }
        assertThat(new TargetConfig().idleStrategy).as("default").isEqualTo(IdleStrategyNames.BACKOFF);
    }

    /** Keeps {@link JavaEngine} referenced: the strategy is validated before anything is opened. */
    @SuppressWarnings("unused")
    private static final Class<?> TARGET = JavaEngine.class;
}
