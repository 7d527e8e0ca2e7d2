package io.nvmf4j.it;

import io.nvmf4j.bdev.ErrorBdev;
import io.nvmf4j.bdev.HeldErrorTimer;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Command Quiesce Time over loopback TCP: a lost controller's commands on a device are bounded and the host is
 * told the bound. Identify Controller reports CQT; after a disconnect the host's next controller starts only once
 * the old controller's device commands have ended, or the CQT has passed (logged); after CC.EN is cleared CSTS.RDY
 * stays set until they have ended. The device is an error bdev whose {@code timeout} injection holds a write; the
 * test holds the bdev's timer ({@link HeldErrorTimer}), so the write stays on the device exactly until the test
 * lets it go, not for a time that a loaded machine's checks could outlast. The tests whose device command ends
 * before the bound run on a target whose CQT (60 s) no check comes near.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CommandQuiesceTest {
    private static final int NSID = 5;
    private static final String ERR = "err0";
    private static final int CQT_MS = 3000;
    private static final int PATIENT_CQT_MS = 60_000;
    /** CQT 3 s: the bound is reached. */
    static TestTarget target;
    /** CQT 60 s: the device commands end first. */
    static TestTarget patient;

    @BeforeAll
    static void start() throws Exception {
        target = start(CQT_MS);
        patient = start(PATIENT_CQT_MS);
    }

    private static TestTarget start(int cqtMs) throws Exception {
        return TestTarget.start(c -> {
            c.commandQuiesceTimeMs = cqtMs;
            TestTarget.addErrorNamespace(c, NSID, ERR);
        });
    }

    @AfterAll
    static void stop() {
        for (TestTarget t : new TestTarget[] {target, patient}) {
            if (t != null) {
                t.close();
            }
        }
    }

    /** Nothing held stays behind for the next test. */
    @AfterEach
    void settle() throws InterruptedException {
        for (TestTarget t : new TestTarget[] {target, patient}) {
            t.nvmf().clearErrors(ERR);
            awaitInFlight(t, 0, Duration.ofSeconds(15));
        }
    }

    private static Namespace namespace(TestTarget t) {
        return t.nvmf().engine().target().subsystem(TestTarget.SUBNQN).namespace(NSID);
    }

    private static void awaitInFlight(TestTarget t, long n, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (namespace(t).inFlight() != n) {
            assertThat(System.nanoTime()).as("commands on the device: %d, awaited %d", namespace(t).inFlight(), n)
                .isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /**
     * Holds the device's timer, then has {@code host}'s next write held on the device until the returned hold is
     * closed; returns once the write is there.
     */
    private static HeldErrorTimer heldWrite(TestTarget t, NvmeController host, long seed) throws Exception {
        HeldErrorTimer timer = HeldErrorTimer.of((ErrorBdev) t.nvmf().engine().bdev(ERR));
        t.nvmf().injectError(ERR, new ErrorInjection("write", "timeout", 1, 1));
        host.io(0).writeAsync(NSID, 0, Le.random(4096, seed));
        awaitInFlight(t, 1, Duration.ofSeconds(10));
        return timer;
    }

    private static NvmeController host(TestTarget t) throws Exception {
        return t.controller(1, TcpHostOptions.DEFAULT);
    }

    /** Drops {@code c}'s connections and waits until the target has torn its controller down (no live one left). */
    private static void drop(TestTarget t, NvmeController c) throws InterruptedException {
        c.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!t.nvmf().engine().target().subsystem(TestTarget.SUBNQN).controllers().isEmpty()) {
            assertThat(System.nanoTime()).as("the lost controller torn down").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void identifyReportsTheCommandQuiesceTimeAndCapTimeoutCoversIt() throws Exception {
        try (NvmeController c = host(target)) {
            Completion id = c.admin().identify(1, 0, 0);
            assertThat(id.ok()).isTrue();
            assertThat(Le.u16(id.data(), 386)).as("CQT (bytes 387:386, milliseconds)").isEqualTo(CQT_MS);
            long cap = c.admin().propertyGet(NvmeHost.PROP_CAP, true).result64();
            assertThat((cap >>> 24) & 0xFF).as("CAP.TO (500 ms units) covers the CQT").isGreaterThan(CQT_MS / 500);
        }
    }

    /**
     * The next Connect is sent while the lost controller's write is on the device: it is not answered while the write
     * stays there (a second's look; a Connect that did not wait would be answered in it), and once the device ends
     * the write it completes, with nothing of the lost controller left on the device.
     */
    @Test
    void theHostsNextControllerStartsAfterTheLostOnesDeviceCommandsEnded() throws Exception {
        NvmeController lost = host(patient);
        CompletableFuture<Long> inFlightAtConnect;
        try (HeldErrorTimer held = heldWrite(patient, lost, 7)) {
            drop(patient, lost); // the connections drop with the write still on the device
            inFlightAtConnect = CompletableFuture.supplyAsync(() -> {
                try (NvmeController next = host(patient)) {
                    long n = namespace(patient).inFlight();
                    assertThat(next.io(0).read(NSID, 0, 8).ok()).isTrue();
                    return n;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThatThrownBy(() -> inFlightAtConnect.get(1, TimeUnit.SECONDS))
                .as("the next controller while the lost one's write is on the device").isInstanceOf(TimeoutException.class);
        }
        assertThat(inFlightAtConnect.get(30, TimeUnit.SECONDS)).as("commands of the lost controller on the device "
            + "when the host's next Connect completed").isZero();
    }

    @Test
    void theWaitEndsAtTheCommandQuiesceTimeAndIsLogged() throws Exception {
        try (LogCapture log = new LogCapture("io.nvmf4j.core.DeviceQuiesce")) {
            NvmeController lost = host(target);
            try (HeldErrorTimer held = heldWrite(target, lost, 8)) {
                long t0 = System.nanoTime(); // the wait starts after this, when the target tears the controller down
                drop(target, lost);
                try (NvmeController next = host(target)) {
                    long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                    assertThat(namespace(target).inFlight()).as("the lost controller's write, still on the device "
                        + "when the next Connect completed (%d ms after the drop began)", waited).isEqualTo(1);
                    assertThat(waited).as("the next Connect waited the CQT").isGreaterThanOrEqualTo(CQT_MS);
                    assertThat(next.io(0).read(NSID, 64, 8).ok()).isTrue();
                }
            }
            assertThat(log.lines("Command Quiesce Time exceeded")).hasSize(1);
        }
    }

    @Test
    void readyStaysSetAfterCcEnClearedUntilTheDeviceCommandsEnded() throws Exception {
        try (NvmeController c = host(patient)) {
            try (HeldErrorTimer held = heldWrite(patient, c, 9)) {
                int cc = c.admin().propertyGet(NvmeHost.PROP_CC, false).dw0();
                assertThat(c.admin().propertySet(NvmeHost.PROP_CC, cc & ~1, false).ok()).isTrue();
                Completion csts = c.admin().propertyGet(NvmeHost.PROP_CSTS, false);
                assertThat(csts.dw0() & 1).as("CSTS.RDY after CC.EN was cleared, with a write on the device")
                    .isEqualTo(1);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((c.admin().propertyGet(NvmeHost.PROP_CSTS, false).dw0() & 1) != 0) {
                assertThat(System.nanoTime()).as("CSTS.RDY cleared").isLessThan(deadline);
                Thread.sleep(5);
            }
            assertThat(namespace(patient).inFlight()).as("commands on the device once CSTS.RDY is 0").isZero();
            c.admin().enableController();
        }
    }
}
