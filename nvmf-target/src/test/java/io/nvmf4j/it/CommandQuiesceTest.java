package io.nvmf4j.it;

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
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Command Quiesce Time over loopback TCP: a lost controller's commands on a device are bounded and the host is
 * told the bound. Identify Controller reports CQT; after a disconnect the host's next controller starts only once
 * the old controller's device commands have ended, or the CQT has passed (logged); after CC.EN is cleared CSTS.RDY
 * stays set until they have ended. The device is an error bdev whose {@code timeout} injection holds a write.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CommandQuiesceTest {
    private static final int NSID = 5;
    private static final String ERR = "err0";
    private static final int CQT_MS = 3000;
    static TestTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start(c -> {
            c.commandQuiesceTimeMs = CQT_MS;
            TestTarget.addErrorNamespace(c, NSID, ERR);
        });
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    /** Nothing held stays behind for the next test. */
    @AfterEach
    void settle() throws InterruptedException {
        target.nvmf().clearErrors(ERR);
        awaitInFlight(0, Duration.ofSeconds(15));
    }

    private static Namespace namespace() {
        return target.nvmf().engine().target().subsystem(TestTarget.SUBNQN).namespace(NSID);
    }

    private static void awaitInFlight(long n, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (namespace().inFlight() != n) {
            assertThat(System.nanoTime()).as("commands on the device: %d, awaited %d", namespace().inFlight(), n)
                .isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    private static NvmeController host() throws Exception {
        return target.controller(1, TcpHostOptions.DEFAULT);
    }

    /** Drops {@code c}'s connections and waits until the target has torn its controller down (no live one left). */
    private static void drop(NvmeController c) throws InterruptedException {
        c.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!target.nvmf().engine().target().subsystem(TestTarget.SUBNQN).controllers().isEmpty()) {
            assertThat(System.nanoTime()).as("the lost controller torn down").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void identifyReportsTheCommandQuiesceTimeAndCapTimeoutCoversIt() throws Exception {
        try (NvmeController c = host()) {
            Completion id = c.admin().identify(1, 0, 0);
            assertThat(id.ok()).isTrue();
            assertThat(Le.u16(id.data(), 386)).as("CQT (bytes 387:386, milliseconds)").isEqualTo(CQT_MS);
            long cap = c.admin().propertyGet(NvmeHost.PROP_CAP, true).result64();
            assertThat((cap >>> 24) & 0xFF).as("CAP.TO (500 ms units) covers the CQT").isGreaterThan(CQT_MS / 500);
        }
    }

    @Test
    void theHostsNextControllerStartsAfterTheLostOnesDeviceCommandsEnded() throws Exception {
        target.nvmf().injectError(ERR, new ErrorInjection("write", "timeout", 1, 1500));
        NvmeController lost = host();
        lost.io(0).writeAsync(NSID, 0, Le.random(4096, 7));
        awaitInFlight(1, Duration.ofSeconds(5));
        drop(lost); // the connections drop with the write still on the device
        long t0 = System.nanoTime();
        try (NvmeController next = host()) {
            long inFlightAtConnect = namespace().inFlight();
            assertThat(inFlightAtConnect).as("commands of the lost controller on the device when the host's next "
                + "Connect completed (%d ms after the drop)", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0))
                .isZero();
            assertThat(next.io(0).read(NSID, 0, 8).ok()).isTrue();
        }
    }

    @Test
    void theWaitEndsAtTheCommandQuiesceTimeAndIsLogged() throws Exception {
        target.nvmf().injectError(ERR, new ErrorInjection("write", "timeout", 1, 8000));
        try (LogCapture log = new LogCapture("io.nvmf4j.core.DeviceQuiesce")) {
            NvmeController lost = host();
            lost.io(0).writeAsync(NSID, 0, Le.random(4096, 8));
            awaitInFlight(1, Duration.ofSeconds(5));
            drop(lost);
            long t0 = System.nanoTime();
            try (NvmeController next = host()) {
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertThat(waited).as("the next Connect waited the CQT, not the device's 8 s")
                    .isBetween((long) CQT_MS - 500, 7000L);
                assertThat(next.io(0).read(NSID, 64, 8).ok()).isTrue();
            }
            assertThat(log.lines("Command Quiesce Time exceeded")).hasSize(1);
        }
    }

    @Test
    void readyStaysSetAfterCcEnClearedUntilTheDeviceCommandsEnded() throws Exception {
        target.nvmf().injectError(ERR, new ErrorInjection("write", "timeout", 1, 1500));
        try (NvmeController c = host()) {
            c.io(0).writeAsync(NSID, 0, Le.random(4096, 9));
            awaitInFlight(1, Duration.ofSeconds(5));
            int cc = c.admin().propertyGet(NvmeHost.PROP_CC, false).dw0();
            assertThat(c.admin().propertySet(NvmeHost.PROP_CC, cc & ~1, false).ok()).isTrue();
            Completion csts = c.admin().propertyGet(NvmeHost.PROP_CSTS, false);
            assertThat(csts.dw0() & 1).as("CSTS.RDY right after CC.EN was cleared, with a write on the device")
                .isEqualTo(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((c.admin().propertyGet(NvmeHost.PROP_CSTS, false).dw0() & 1) != 0) {
                assertThat(System.nanoTime()).as("CSTS.RDY cleared").isLessThan(deadline);
                Thread.sleep(5);
            }
            assertThat(namespace().inFlight()).as("commands on the device once CSTS.RDY is 0").isZero();
            c.admin().enableController();
        }
    }
}
