package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.ReservationTest.ok;
import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A controller's count of commands on its devices (what Command Quiesce Time waits for) over loopback NVMe/TCP:
 * two hosts send every kind of command — reads, writes, Compare (equal and not), Flush, Dataset Management, Write
 * Zeroes, each reservation command with its failures (conflicts, a preempt-and-abort), commands refused by a
 * reservation, on a missing namespace or with an invalid opcode, admin commands, Abort, Keep Alive, an outstanding
 * AER — and once every answer is in, neither controller counts a command. Each host then disconnects as Linux's
 * {@code nvme disconnect} does (I/O queues closed, CC.SHN until CSTS.SHST complete, admin queue closed): the
 * controller is released at once, with nothing left to wait for, and the host connects again. With and without a
 * reservation state directory (with one, every reservation change runs on the reservation's executor).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DeviceCommandCountTest {
    private static final String HOST_A = ReservationTest.HOST_A;
    private static final String HOST_B = ReservationTest.HOST_B;
    private static final long KEY_A = ReservationTest.KEY_A;
    private static final long KEY_B = ReservationTest.KEY_B;
    private static final int NSID = 1;
    private static final int MISSING_NSID = 9;
    private static final int WRITE_EXCLUSIVE = 1;
    private static final int SC_INVALID_OPCODE = 0x01;
    private static final int SC_COMPARE_FAILURE = 0x85;
    private static final int SCT_MEDIA = 2;
    private static final int FID_NOTIFICATION_MASK = 0x82;
    private static final int FID_PERSISTENCE = 0x83;
    private static final int PROP_CSTS = 0x1C;

    @TempDir
    Path stateDir;

    private ConfigController<JavaEngine> target;

    @ParameterizedTest(name = "reservation state directory: {0}")
    @ValueSource(booleans = {true, false})
    void noCommandStaysCountedAndAnOrderlyDisconnectWaitsForNothing(boolean keepState) throws Exception {
        int port = FreePorts.pick();
        try (ConfigController<JavaEngine> t = JavaEngine.start(TestTarget.config(port), IoObserver.NONE,
                keepState ? stateDir : null);
             NvmeController a = TestTarget.openController(port, HOST_A);
             NvmeController b = TestTarget.openController(port, HOST_B)) {
            target = t;
            commandsThenOrderlyDisconnects(a, b, keepState);
            try (NvmeController again = TestTarget.openController(port, HOST_B)) {
                assertThat(again.io(0).read(NSID, 0, 1).ok()).as("a read through host B's next controller").isTrue();
            }
        }
    }

    private void commandsThenOrderlyDisconnects(NvmeController a, NvmeController b, boolean keepState)
            throws InterruptedException {
        Controller ctrlA = controllerOf(a);
        Controller ctrlB = controllerOf(b);
        // the reservation notices masked, so that each host's AER stays outstanding through the disconnect
        ok(a.admin().execute(maskNotices()));
        ok(b.admin().execute(maskNotices()));
        CompletableFuture<Completion> aerA = a.admin().asyncEventRequest();
        CompletableFuture<Completion> aerB = b.admin().asyncEventRequest();

        dataCommands(a.io(0));
        reservationCommands(a, b, keepState);
        refusedCommands(b.io(0));
        adminCommands(a.admin());

        assertThat(ctrlA.deviceCommands()).as("commands host A's controller counts on its devices, every answer in")
            .isZero();
        assertThat(ctrlB.deviceCommands()).as("commands host B's controller counts on its devices, every answer in")
            .isZero();
        assertThat(aerA).as("host A's AER is still held").isNotDone();
        assertThat(aerB).as("host B's AER is still held").isNotDone();

        try (LogCapture log = new LogCapture("io.nvmf4j.core.DeviceQuiesce")) {
            disconnect(a, ctrlA);
            disconnect(b, ctrlB);
            assertThat(log.lines("waiting up to")).as("waits for device commands after the orderly disconnects")
                .isEmpty();
        }
    }

    /** Set Features Reservation Notification Mask on every namespace: no notice (so no AEN) of any kind. */
    private static Sqe maskNotices() {
        return Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(-1).cdw(10, FID_NOTIFICATION_MASK).cdw(11, 0xE);
    }

    private Subsystem subsystem() {
        return target.engine().target().subsystem(TestTarget.SUBNQN);
    }

    private Controller controllerOf(NvmeController c) {
        Controller ctrl = subsystem().controller(c.cntlid());
        assertThat(ctrl).as("the target's controller %d", c.cntlid()).isNotNull();
        return ctrl;
    }

    /** Reads, writes, Compare equal and not, Flush, Dataset Management and Write Zeroes, small and large. */
    private static void dataCommands(NvmeHost io) {
        byte[] block = Le.random(TestTarget.BLOCK_SIZE, 1);
        ok(io.write(NSID, 10, block));
        ok(io.write(NSID, 1000, Le.random(128 * 1024, 2)));
        ok(io.read(NSID, 10, 1));
        ok(io.read(NSID, 1000, 256));
        ok(io.compare(NSID, 10, block));
        assertStatus(io.compare(NSID, 10, Le.random(TestTarget.BLOCK_SIZE, 3)), SCT_MEDIA, SC_COMPARE_FAILURE, true);
        ok(io.flush(NSID));
        ok(io.writeZeroes(NSID, 20, 8));
        ok(io.writeZeroes(NSID, 2048, 65536));
        ok(io.deallocate(NSID, new NvmeHost.Range(30, 8)));
        ok(io.deallocate(NSID, new NvmeHost.Range(4096, 32768), new NvmeHost.Range(65536, 32768),
            new NvmeHost.Range(100, 1)));
    }

    /** Register, Acquire, Report, Release and Preempt and Abort, with the conflicts and bad fields they meet. */
    private static void reservationCommands(NvmeController a, NvmeController b, boolean keepState) {
        NvmeHost ioA = a.io(0);
        NvmeHost ioB = b.io(0);
        ok(ioA.resvRegister(NSID, 0, false, 0, 0, KEY_A));
        ReservationTest.conflict(ioA.resvRegister(NSID, 0, false, 0, 0, KEY_B)); // another key while registered
        ok(ioB.resvRegister(NSID, 0, false, 0, 0, KEY_B));
        ok(ioA.resvAcquire(NSID, 0, WRITE_EXCLUSIVE, KEY_A, 0));
        ReservationTest.conflict(ioB.resvAcquire(NSID, 0, WRITE_EXCLUSIVE, KEY_B, 0)); // A holds it
        ReservationTest.conflict(ioB.write(NSID, 10, Le.random(TestTarget.BLOCK_SIZE, 4))); // fenced out by A
        ok(ioB.read(NSID, 10, 1));
        ok(ioA.resvReport(NSID, true, 4096));
        assertThat(ioA.resvReport(NSID, false, 4096).ok()).as("Report without EDS").isFalse();
        ReservationTest.conflict(ioB.resvRelease(NSID, 0, WRITE_EXCLUSIVE, KEY_A)); // a key B does not hold
        ok(ioB.resvAcquire(NSID, 2, WRITE_EXCLUSIVE, KEY_B, KEY_A)); // Preempt and Abort of A
        ReservationTest.conflict(ioA.write(NSID, 10, Le.random(TestTarget.BLOCK_SIZE, 5))); // A no longer registered
        ok(ioB.resvRelease(NSID, 0, WRITE_EXCLUSIVE, KEY_B));
        ok(ioB.resvRelease(NSID, 1, 0, KEY_B)); // Clear
        ok(ioA.resvRegister(NSID, 0, false, 0, 0, KEY_A));
        ok(ioA.resvRegister(NSID, 1, false, 0, KEY_A, 0)); // Unregister
        if (keepState) {
            ok(a.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(NSID).cdw(10, FID_PERSISTENCE).cdw(11, 1)));
            ok(a.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(NSID).cdw(10, FID_PERSISTENCE).cdw(11, 0)));
        }
    }

    /** Commands that end before reaching a device: a missing namespace, an invalid opcode, a bad range. */
    private static void refusedCommands(NvmeHost io) {
        assertStatus(io.read(MISSING_NSID, 0, 1), 0, ReservationTest.SC_INVALID_NAMESPACE, true);
        assertStatus(io.resvRegister(MISSING_NSID, 0, false, 0, 0, KEY_B), 0, ReservationTest.SC_INVALID_NAMESPACE,
            true);
        assertStatus(io.execute(Sqe.of(0x7E).nsid(NSID)), 0, SC_INVALID_OPCODE, true);
        assertThat(io.read(NSID, TestTarget.NUM_BLOCKS, 1).ok()).as("a read past the end").isFalse();
    }

    /** Identify, a log page, Get Features, Abort and Keep Alive on the admin queue. */
    private static void adminCommands(NvmeHost admin) {
        ok(admin.identify(1, 0, 0));
        ok(admin.abort(1, 0));
        ok(admin.identify(0, NSID, 0));
        ok(admin.getLogPage(2, -1, 0, 512));
        ok(admin.getFeatures(0x07, 0));
        ok(admin.keepAlive());
    }

    /**
     * As {@code nvme disconnect}: the I/O queues closed, CC.SHN set until CSTS.SHST reports complete, the admin queue
     * closed; then the target has released the controller (its cntlid free, nothing left to wait for).
     */
    private void disconnect(NvmeController c, Controller ctrl) throws InterruptedException {
        c.ioQueues().forEach(q -> q.queue().close());
        NvmeHost admin = c.admin();
        int cc = admin.propertyGet(NvmeHost.PROP_CC, false).dw0();
        ok(admin.propertySet(NvmeHost.PROP_CC, (cc & ~0xC000) | (1 << 14), false));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (((admin.propertyGet(PROP_CSTS, false).dw0() >>> 2) & 3) != 2) {
            assertThat(System.nanoTime()).as("CSTS.SHST complete after CC.SHN").isLessThan(deadline);
            Thread.sleep(5);
        }
        admin.queue().close();
        while (!ctrl.isDestroyed() || subsystem().quiescingControllers().contains(ctrl)) {
            assertThat(System.nanoTime()).as("%s released after its orderly disconnect (destroyed: %s, commands "
                + "counted on its devices: %d)", ctrl, ctrl.isDestroyed(), ctrl.deviceCommands()).isLessThan(deadline);
            Thread.sleep(5);
        }
        assertThat(ctrl.deviceCommands()).as("commands %s counts on its devices after the disconnect", ctrl).isZero();
    }
}
