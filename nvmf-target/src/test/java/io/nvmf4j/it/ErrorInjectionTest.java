package io.nvmf4j.it;

import io.nvmf4j.ControlException;
import io.nvmf4j.bdev.ErrorBdev;
import io.nvmf4j.bdev.HeldErrorTimer;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Fault injection through an error bdev over a malloc bdev, namespace 5 of the open subsystem: each error
 * type reaches the host as its status (through BdevErrors, the one errno-to-status function), the Error
 * log page (LID 01h) records the command, and the namespace serves again once the injection is spent.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ErrorInjectionTest {
    private static final int NSID = 5;
    private static final String ERR = "err0";
    static TestTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start(c -> TestTarget.addErrorNamespace(c, NSID, ERR));
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void clear() {
        target.nvmf().clearErrors(ERR);
    }

    private static NvmeController host() throws Exception {
        return target.controller(1, TcpHostOptions.DEFAULT);
    }

    @Test
    void readMediaErrorIsAnUnrecoveredReadErrorInTheErrorLogAndTheNamespaceStaysUsable() throws Exception {
        try (NvmeController c = host()) {
            byte[] data = Le.random(4096, 1);
            assertThat(c.io(0).write(NSID, 64, data).ok()).isTrue();
            target.nvmf().injectError(ERR, new ErrorInjection("read", "eio", 1, 0));
            Completion failed = c.io(0).read(NSID, 64, 8);
            assertStatus(failed, NvmeStatus.SCT_MEDIA, 0x81, false);

            Completion log = c.admin().getLogPage(0x01, 0xFFFFFFFF, 0, 64 * 64);
            assertThat(log.ok()).isTrue();
            int e = entryFor(log.data(), failed.cid());
            assertThat(Le.u16(log.data(), e + 8)).as("SQID").isEqualTo(1);
            assertThat(NvmeStatus.fromCqeField(Le.u16(log.data(), e + 12)) & 0x7FF)
                .as("status").isEqualTo(NvmeStatus.UNRECOVERED_READ_ERROR & 0x7FF);
            assertThat(Le.u64(log.data(), e + 16)).as("LBA").isEqualTo(64);
            assertThat(Le.u32(log.data(), e + 24)).as("NSID").isEqualTo(NSID);

            Completion again = c.io(0).read(NSID, 64, 8);
            assertThat(again.ok()).as("the read after the one injected failure").isTrue();
            assertThat(again.data()).isEqualTo(data);
        }
    }

    @Test
    void writeMediaErrorIsAWriteFault() throws Exception {
        try (NvmeController c = host()) {
            target.nvmf().injectError(ERR, new ErrorInjection("write", "eio", 2, 0));
            assertStatus(c.io(0).write(NSID, 0, new byte[512]), NvmeStatus.SCT_MEDIA, 0x80, false);
            assertStatus(c.io(0).write(NSID, 0, new byte[512]), NvmeStatus.SCT_MEDIA, 0x80, false);
            assertThat(target.nvmf().errorInjections(ERR)).as("spent after 2").isEmpty();
            TestTarget.assertWriteReadBack(c.io(0), 0, 4096, 2);
        }
    }

    @Test
    void noSpaceIsCapacityExceededAndGoneIsNamespaceNotReadyUntilCleared() throws Exception {
        try (NvmeController c = host()) {
            target.nvmf().injectError(ERR, new ErrorInjection("write", "nospc", 1, 0));
            assertStatus(c.io(0).write(NSID, 8, new byte[512]), NvmeStatus.SCT_GENERIC, 0x81, true);

            target.nvmf().injectError(ERR, new ErrorInjection("all", "gone", 0, 0));
            for (int i = 0; i < 3; i++) {
                assertStatus(c.io(0).read(NSID, 8, 1), NvmeStatus.SCT_GENERIC, 0x82, true);
                assertStatus(c.io(0).flush(NSID), NvmeStatus.SCT_GENERIC, 0x82, true);
            }
            assertThat(target.nvmf().errorInjections(ERR)).hasSize(5);
            target.nvmf().clearErrors(ERR);
            TestTarget.assertWriteReadBack(c.io(0), 8, 4096, 3);
        }
    }

    @Test
    void heldCommandFailsWithCommandInterruptedAfterItsTimeout() throws Exception {
        try (NvmeController c = host()) {
            target.nvmf().injectError(ERR, new ErrorInjection("read", "timeout", 1, 300));
            long t0 = System.nanoTime();
            Completion r = c.io(0).read(NSID, 0, 1);
            assertThat(System.nanoTime() - t0).as("held for its timeout").isGreaterThanOrEqualTo(300_000_000L);
            assertStatus(r, NvmeStatus.SCT_GENERIC, 0x21, false);
            assertThat(c.io(0).read(NSID, 0, 1).ok()).isTrue();
        }
    }

    /**
     * The host sends a write that the device holds and then goes silent: keep-alive expiry tears the
     * controller down with the write still in flight; the write completes later into the closed queue, and
     * nothing stays behind (no controller, no held command, the namespace and its bdev can be removed). The
     * device holds the write until the test lets it go ({@link HeldErrorTimer}), however late the expiry comes on a
     * loaded machine.
     */
    @Test
    void keepAliveExpiryWithIoInFlightLeavesNothingBehind() throws Exception {
        ErrorBdev device = (ErrorBdev) target.nvmf().engine().bdev(ERR);
        try (HeldErrorTimer held = HeldErrorTimer.of(device);
             NvmeController c = target.controller(1, TcpHostOptions.DEFAULT, 1000)) {
            target.nvmf().injectError(ERR, new ErrorInjection("write", "timeout", 1, 1));
            CompletableFuture<Completion> w = c.io(0).writeAsync(NSID, 16, new byte[4096]);
            assertThat(c.admin().queue().awaitClosed(Duration.ofSeconds(20)))
                .as("admin queue closed by keep-alive expiry").isTrue();
            assertThat(c.io(0).queue().awaitClosed(Duration.ofSeconds(20))).as("I/O queue closed").isTrue();
            assertThat(device.heldCommands()).as("the write on the device when the queues closed").isEqualTo(1);
            assertThat(w).as("the held write gets no completion on a closed queue").isNotCompleted();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!target.nvmf().engine().target().allControllers().isEmpty() || target.nvmf().errorInjections(ERR).size() != 0
            || inFlight() != 0) {
            assertThat(System.nanoTime()).as("controllers %s, in flight %d", target.nvmf().engine().target().allControllers(),
                inFlight()).isLessThan(deadline);
            Thread.sleep(50);
        }
        try (NvmeController fresh = host()) {
            TestTarget.assertWriteReadBack(fresh.io(0), 16, 4096, 4);
        }
        target.nvmf().removeNamespace(TestTarget.SUBNQN, NSID);
        target.nvmf().removeBdev(ERR);
        assertThatThrownBy(() -> target.nvmf().clearErrors(ERR)).isInstanceOf(ControlException.class);
        target.nvmf().addBdev(errorBdevConfig());
        target.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(NSID, ERR));
        try (NvmeController again = host()) {
            TestTarget.assertWriteReadBack(again.io(0), 16, 4096, 5);
        }
    }

    private static BdevConfig errorBdevConfig() {
        BdevConfig e = new BdevConfig(ERR, "error", TestTarget.BLOCK_SIZE, 0);
        e.base = "base0";
        return e;
    }

    private static long inFlight() {
        var ns = target.nvmf().engine().target().subsystem(TestTarget.SUBNQN).namespace(NSID);
        return ns == null ? 0 : ns.inFlight();
    }

    @Test
    void badInjectionsAreRefusedWithTheReason() {
        assertThatThrownBy(() -> target.nvmf().injectError(ERR, new ErrorInjection("trim", "eio", 1, 0)))
            .isInstanceOf(ControlException.class).hasMessageContaining("ioType must be read, write");
        assertThatThrownBy(() -> target.nvmf().injectError(ERR, new ErrorInjection("read", "timeout", 1, 0)))
            .isInstanceOf(ControlException.class).hasMessageContaining("timeoutMs must be 1..");
        assertThatThrownBy(() -> target.nvmf().injectError("m0", new ErrorInjection("read", "eio", 1, 0)))
            .isInstanceOf(ControlException.class).hasMessageContaining("not an error bdev");
        assertThatThrownBy(() -> target.nvmf().removeBdev("base0"))
            .isInstanceOf(ControlException.class).hasMessageContaining("base of error bdev err0");
    }

    /** The byte offset of the Error log entry for command {@code cid} on SQ 1. */
    private static int entryFor(byte[] log, int cid) {
        for (int e = 0; e + 64 <= log.length; e += 64) {
            if (Le.u64(log, e) != 0 && Le.u16(log, e + 10) == cid && Le.u16(log, e + 8) == 1) {
                return e;
            }
        }
        throw new AssertionError("no Error log entry for cid " + cid);
    }
}
