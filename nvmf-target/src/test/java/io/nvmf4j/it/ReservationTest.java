package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.bdev.HeldErrorTimer;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.ReservationInfo;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.Le.slice;
import static io.nvmf4j.it.Le.u16;
import static io.nvmf4j.it.Le.u32;
import static io.nvmf4j.it.Le.u64;
import static io.nvmf4j.it.Le.u8;
import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Persistent reservations over loopback NVMe/TCP with the test initiator as three hosts (A, B, C: three host
 * NQNs, so three host identifiers): every command and action, the six types' access rules on every I/O
 * command, preemption, notifications (log page 80h, its AEN, the mask), Persist Through Power Loss across a
 * real restart of the target, and bad input.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReservationTest {
    static final String HOST_A = "nqn.2014-08.org.nvmexpress:uuid:7d0c1e2a-0000-4000-8000-00000000000a";
    static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:7d0c1e2a-0000-4000-8000-00000000000b";
    static final String HOST_C = "nqn.2014-08.org.nvmexpress:uuid:7d0c1e2a-0000-4000-8000-00000000000c";
    static final long KEY_A = 0xA1A1_0000_0000_00A1L;
    static final long KEY_B = 0xB2B2_0000_0000_00B2L;
    static final int SC_INVALID_FIELD = 0x02;
    static final int SC_CONFLICT = 0x83;
    static final int SC_INVALID_NAMESPACE = 0x0B;
    static final int SC_HOST_ID_INCONSISTENT = 0x18;
    static final int NOTICE_REG_PREEMPTED = 1;
    static final int NOTICE_RELEASED = 2;
    static final int NOTICE_PREEMPTED = 3;
    static final int AEN_RESERVATION = 0x00800006;
    static final int FID_NOTIFICATION_MASK = 0x82;
    static final int FID_PERSISTENCE = 0x83;

    @TempDir
    Path stateDir;

    private ConfigController<JavaEngine> target;
    private TargetConfig config;
    private int port;
    private final List<NvmeController> open = new ArrayList<>();

    @AfterEach
    void stop() {
        open.forEach(NvmeController::close);
        if (target != null) {
            target.close();
        }
    }

    private void start(boolean keepState) throws IOException {
        if (config == null) {
            port = FreePorts.pick();
            config = TestTarget.config(port);
        }
        target = JavaEngine.start(config, IoObserver.NONE, keepState ? stateDir : null);
    }

    private NvmeController connect(String hostnqn) throws IOException {
        NvmeController c = TestTarget.openController(port, hostnqn);
        open.add(c);
        return c;
    }

    static void ok(Completion c) {
        assertThat(c.ok()).as("%s", c).isTrue();
    }

    static void conflict(Completion c) {
        assertStatus(c, 0, SC_CONFLICT, true);
    }

    private static void invalidField(Completion c) {
        assertStatus(c, 0, SC_INVALID_FIELD, true);
    }

    static byte[] block(long seed) {
        return Le.random(TestTarget.BLOCK_SIZE, seed);
    }

    /** Read, Compare, Write, Write Zeroes, Dataset Management and Flush of one host: which passed. */
    private static boolean[] access(NvmeHost io) {
        byte[] data = block(7);
        boolean read = io.read(1, 100, 1).ok();
        Completion compare = io.compare(1, 100, data);
        boolean compareAllowed = compare.sc() != SC_CONFLICT;
        boolean write = io.write(1, 100, data).ok();
        boolean zeroes = io.writeZeroes(1, 200, 1).ok();
        boolean dsm = io.deallocate(1, new NvmeHost.Range(300, 1)).ok();
        boolean flush = io.flush(1).ok();
        assertThat(compareAllowed).as("Compare follows Read").isEqualTo(read);
        assertThat(zeroes).as("Write Zeroes follows Write").isEqualTo(write);
        assertThat(dsm).as("Dataset Management follows Write").isEqualTo(write);
        assertThat(flush).as("Flush follows Write").isEqualTo(write);
        return new boolean[] {read, write};
    }

    private static void assertAccess(NvmeController c, boolean read, boolean write, String who) {
        boolean[] got = access(c.io(0));
        assertThat(got[0]).as("%s may read", who).isEqualTo(read);
        assertThat(got[1]).as("%s may write", who).isEqualTo(write);
    }

    // ---- Identify ----

    @Test
    void identifyAdvertisesReservations() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        byte[] ctrl = a.admin().identify(1, 0, 0).data();
        assertThat(u16(ctrl, 520) & 0x20).as("ONCS bit 5: reservations").isEqualTo(0x20);
        byte[] ns = a.admin().identify(0, 1, 0).data();
        assertThat(u8(ns, 30)).as("NMIC: shared namespace").isEqualTo(1);
        assertThat(u8(ns, 31)).as("RESCAP: six types and IEKEY, no PTPL without a state directory").isEqualTo(0xFE);
        invalidField(a.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE).cdw(11, 1)));
        invalidField(a.io(0).resvRegister(1, 0, false, 3, 0, KEY_A)); // CPTPL set: nowhere to keep it
    }

    // ---- masking: a host that does not see the namespace touches nothing of it ----

    @Test
    void aMaskedNamespaceTakesNoReservationFeatureOrSmartReadFromAHostThatDoesNotSeeIt() throws Exception {
        port = FreePorts.pick();
        config = TestTarget.config(port);
        config.subsystems.stream().filter(s -> s.nqn.equals(TestTarget.SUBNQN)).findFirst().orElseThrow()
            .namespaces.stream().filter(n -> n.nsid == 1).findFirst().orElseThrow().hosts = new ArrayList<>(List.of(HOST_A));
        start(true);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE).cdw(11, 1)));
        assertThat(target.reservation(TestTarget.SUBNQN, 1).ptpl()).isTrue();

        // B: nsid 1 is inactive for it, so every path answers Invalid Namespace and changes nothing
        assertStatus(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B), 0, SC_INVALID_NAMESPACE, true);
        assertStatus(b.io(0).resvReport(1, true, 4096), 0, SC_INVALID_NAMESPACE, true);
        assertStatus(b.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE).cdw(11, 0)),
            0, SC_INVALID_NAMESPACE, true);
        assertStatus(b.admin().execute(Sqe.of(NvmeHost.OPC_GET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE)),
            0, SC_INVALID_NAMESPACE, true);
        assertStatus(b.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_NOTIFICATION_MASK)
            .cdw(11, 0)), 0, SC_INVALID_NAMESPACE, true);
        ReservationInfo info = target.reservation(TestTarget.SUBNQN, 1);
        assertThat(info.ptpl()).as("B could not turn A's persistence off").isTrue();
        assertThat(info.registrants()).hasSize(1);
        assertThat(Files.list(stateDir).filter(f -> f.getFileName().toString().startsWith("reservation-")).count())
            .as("A's state file kept").isEqualTo(1);

        // SMART: A's writes are A's to count, B's log (all namespaces) does not see them
        for (int i = 0; i < 3; i++) {
            ok(a.io(0).write(1, i, block(i)));
        }
        byte[] smartA = a.admin().getLogPage(2, -1, 0, 512).data();
        byte[] smartB = b.admin().getLogPage(2, -1, 0, 512).data();
        assertThat(u64(smartA, 80)).as("A's host write commands").isGreaterThanOrEqualTo(3);
        assertThat(u64(smartB, 80)).as("B sees no write of a namespace masked from it").isZero();
    }

    // ---- Register, Report ----

    @Test
    void registerReplaceUnregisterAndReport() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A)); // the same key again: success
        conflict(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_B)); // another key while registered
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));

        byte[] r = b.io(0).resvReport(1, true, 4096).data();
        assertThat(u32(r, 0)).as("generation: two registrations (the same key again changes nothing)").isEqualTo(2);
        assertThat(u8(r, 4)).as("no reservation").isEqualTo(0);
        assertThat(u16(r, 5)).as("REGCTL").isEqualTo(2);
        assertThat(u16(r, 64)).as("dynamic cntlid").isEqualTo(0xFFFF);
        assertThat(u64(r, 64 + 8)).as("A's key").isEqualTo(KEY_A);
        assertThat(slice(r, 64 + 16, 16)).as("A's hostid, as sent in Connect").isEqualTo(a.hostid());
        assertThat(u64(r, 128 + 8)).as("B's key").isEqualTo(KEY_B);
        assertThat(slice(r, 128 + 16, 16)).as("B's hostid").isEqualTo(b.hostid());

        // a short buffer: the header still counts every registrant
        byte[] shortReport = b.io(0).resvReport(1, true, 128).data();
        assertThat(u16(shortReport, 5)).isEqualTo(2);
        assertThat(u64(shortReport, 64 + 8)).isEqualTo(KEY_A);

        // the 64-bit-host-identifier format cannot carry a fabrics hostid
        assertStatus(a.io(0).resvReport(1, false, 4096), 0, SC_HOST_ID_INCONSISTENT, true);

        conflict(a.io(0).resvRegister(1, 2, false, 0, KEY_B, 0x77)); // replace with a wrong key
        ok(a.io(0).resvRegister(1, 2, false, 0, KEY_A, 0x77));
        conflict(a.io(0).resvRegister(1, 1, false, 0, KEY_A, 0)); // unregister with the old key
        ok(a.io(0).resvRegister(1, 2, true, 0, 0xDEAD, 0x78)); // IEKEY: the current key is not checked
        ok(a.io(0).resvRegister(1, 1, true, 0, 0xDEAD, 0));
        conflict(a.io(0).resvRegister(1, 1, false, 0, 0x78, 0)); // not registered any more
        conflict(c(a).resvRegister(1, 2, false, 0, 0x78, 1)); // replace without a registration

        ReservationInfo info = target.reservation(TestTarget.SUBNQN, 1);
        assertThat(info.registrants()).hasSize(1);
        assertThat(info.registrants().get(0).hostid()).isEqualTo(HexFormat.of().formatHex(b.hostid()));
        assertThat(info.registrants().get(0).key()).isEqualTo(Long.toUnsignedString(KEY_B));
        assertThat(info.type()).isEqualTo("none");
    }

    private static NvmeHost c(NvmeController ctrl) {
        return ctrl.io(0);
    }

    @Test
    void controllersOfOneHostShareItsRegistration() throws Exception {
        start(false);
        NvmeController a1 = connect(HOST_A);
        NvmeController a2 = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        assertThat(a1.cntlid()).isNotEqualTo(a2.cntlid());
        ok(a1.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a1.io(0).resvAcquire(1, 0, 1, KEY_A, 0)); // Write Exclusive
        assertAccess(a2, true, true, "A's second controller");
        assertAccess(b, true, false, "B");
        ok(a2.io(0).resvRelease(1, 0, 1, KEY_A)); // the other controller releases for the host
        assertAccess(b, true, true, "B after the release");
        byte[] r = b.io(0).resvReport(1, true, 4096).data();
        assertThat(u16(r, 5)).as("one registrant for both controllers").isEqualTo(1);
    }

    // ---- the six types ----

    @Test
    void accessRulesOfEveryType() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A); // holder
        NvmeController b = connect(HOST_B); // registrant
        NvmeController c = connect(HOST_C); // neither
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        // type: {registrant read, registrant write, other read, other write}
        boolean[][] rules = {
            null,
            {true, false, true, false},   // 1 Write Exclusive
            {false, false, false, false}, // 2 Exclusive Access
            {true, true, true, false},    // 3 Write Exclusive - Registrants Only
            {true, true, false, false},   // 4 Exclusive Access - Registrants Only
            {true, true, true, false},    // 5 Write Exclusive - All Registrants
            {true, true, false, false},   // 6 Exclusive Access - All Registrants
        };
        for (int type = 1; type <= 6; type++) {
            ok(a.io(0).resvAcquire(1, 0, type, KEY_A, 0));
            byte[] r = c.io(0).resvReport(1, true, 4096).data();
            assertThat(u8(r, 4)).as("RTYPE").isEqualTo(type);
            boolean all = type >= 5;
            assertThat(u8(r, 64 + 2)).as("A holds type %d", type).isEqualTo(1);
            assertThat(u8(r, 128 + 2)).as("B holds type %d (all registrants)", type).isEqualTo(all ? 1 : 0);
            assertAccess(a, true, true, "holder, type " + type);
            assertAccess(b, rules[type][0], rules[type][1], "registrant, type " + type);
            assertAccess(c, rules[type][2], rules[type][3], "non-registrant, type " + type);
            conflict(b.io(0).resvAcquire(1, 0, type == 1 ? 2 : 1, KEY_B, 0)); // held by another (or as another type)
            ok(a.io(0).resvRelease(1, 0, type, KEY_A));
            assertAccess(c, true, true, "anyone without a reservation");
        }
    }

    // ---- Acquire, preempt, release, clear; notifications ----

    @Test
    void preemptFencesTheHolderAndTellsIt() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        ok(a.io(0).resvAcquire(1, 0, 2, KEY_A, 0)); // Exclusive Access
        assertAccess(b, false, false, "B under A's exclusive access");
        CompletableFuture<Completion> aer = a.admin().asyncEventRequest();

        ok(b.io(0).resvAcquire(1, 1, 1, KEY_B, KEY_A)); // preempt A, take Write Exclusive
        Completion event = aer.get(10, TimeUnit.SECONDS);
        assertThat(event.dw0()).as("AEN: reservation log page available").isEqualTo(AEN_RESERVATION);
        byte[] page = a.admin().getLogPage(0x80, -1, 0, 64).data();
        assertThat(u64(page, 0)).as("log page count").isEqualTo(1);
        assertThat(u8(page, 8)).as("registration preempted").isEqualTo(NOTICE_REG_PREEMPTED);
        assertThat(u8(page, 9)).as("no more pages").isEqualTo(0);
        assertThat(u32(page, 12)).as("nsid").isEqualTo(1);
        byte[] empty = a.admin().getLogPage(0x80, -1, 0, 64).data();
        assertThat(u8(empty, 8)).as("read once: empty page after").isEqualTo(0);

        assertAccess(a, true, false, "A after preemption");
        conflict(a.io(0).resvAcquire(1, 0, 1, KEY_A, 0)); // A is no registrant now
        byte[] r = b.io(0).resvReport(1, true, 4096).data();
        assertThat(u16(r, 5)).isEqualTo(1);
        assertThat(u8(r, 4)).isEqualTo(1);
        assertThat(u32(r, 0)).as("generation: 2 registrations + preempt").isEqualTo(3);

        // preempt-and-abort: A registers again and is preempted again (its commands end as conflicts)
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvAcquire(1, 2, 1, KEY_B, KEY_A));
        assertThat(target.reservation(TestTarget.SUBNQN, 1).registrants()).hasSize(1);
        // preempting with a key nobody holds
        conflict(b.io(0).resvAcquire(1, 1, 1, KEY_B, 0x4242));
        // preempting a reservation held by another with PRKEY 0
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        invalidField(a.io(0).resvAcquire(1, 1, 1, KEY_A, 0));
    }

    @Test
    void releaseAndClearNotifyRegistrantsUnlessMasked() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));

        ok(a.io(0).resvAcquire(1, 0, 3, KEY_A, 0)); // Write Exclusive - Registrants Only
        CompletableFuture<Completion> aer = b.admin().asyncEventRequest();
        invalidField(a.io(0).resvRelease(1, 0, 4, KEY_A)); // not the type held
        conflict(a.io(0).resvRelease(1, 0, 3, KEY_B)); // a wrong key
        ok(b.io(0).resvRelease(1, 0, 3, KEY_B)); // not the holder: nothing happens
        assertThat(target.reservation(TestTarget.SUBNQN, 1).rtype()).isEqualTo(3);
        ok(a.io(0).resvRelease(1, 0, 3, KEY_A));
        assertThat(aer.get(10, TimeUnit.SECONDS).dw0()).isEqualTo(AEN_RESERVATION);
        byte[] page = b.admin().getLogPage(0x80, -1, 0, 64).data();
        assertThat(u8(page, 8)).as("reservation released").isEqualTo(NOTICE_RELEASED);

        // Write Exclusive: a release tells nobody
        ok(a.io(0).resvAcquire(1, 0, 1, KEY_A, 0));
        ok(a.io(0).resvRelease(1, 0, 1, KEY_A));
        assertThat(u8(b.admin().getLogPage(0x80, -1, 0, 64).data(), 8)).as("nothing for WE").isEqualTo(0);

        // mask RESREL for nsid 1 on B's controller: a release goes unannounced
        Completion set = b.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_NOTIFICATION_MASK)
            .cdw(11, 1 << NOTICE_RELEASED));
        ok(set);
        Completion get = b.admin().execute(Sqe.of(NvmeHost.OPC_GET_FEATURES).nsid(1).cdw(10, FID_NOTIFICATION_MASK));
        assertThat(get.dw0()).isEqualTo(1 << NOTICE_RELEASED);
        ok(a.io(0).resvAcquire(1, 0, 4, KEY_A, 0));
        ok(a.io(0).resvRelease(1, 0, 4, KEY_A));
        assertThat(u8(b.admin().getLogPage(0x80, -1, 0, 64).data(), 8)).as("masked").isEqualTo(0);
        invalidField(b.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_NOTIFICATION_MASK)
            .cdw(11, 1))); // bit 0 is reserved
        assertStatus(b.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(9).cdw(10, FID_NOTIFICATION_MASK)
            .cdw(11, 0)), 0, 0x0B, true);

        // clear: every other registrant hears "reservation preempted", and all registrations go
        ok(a.io(0).resvAcquire(1, 0, 2, KEY_A, 0));
        ok(a.io(0).resvRelease(1, 1, 0, KEY_A));
        byte[] cleared = b.admin().getLogPage(0x80, -1, 0, 64).data();
        assertThat(u8(cleared, 8)).as("reservation preempted").isEqualTo(NOTICE_PREEMPTED);
        ReservationInfo info = target.reservation(TestTarget.SUBNQN, 1);
        assertThat(info.registrants()).isEmpty();
        assertThat(info.rtype()).isZero();
        assertAccess(b, true, true, "B after the clear");
    }

    @Test
    void holderUnregisteringReleasesOrPassesOn() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        NvmeController c = connect(HOST_C);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        ok(a.io(0).resvAcquire(1, 0, 6, KEY_A, 0)); // Exclusive Access - All Registrants
        ok(a.io(0).resvRegister(1, 1, false, 0, KEY_A, 0));
        assertThat(target.reservation(TestTarget.SUBNQN, 1).rtype()).as("stays with B").isEqualTo(6);
        assertAccess(c, false, false, "C under B's all-registrants reservation");
        ok(b.io(0).resvRegister(1, 1, false, 0, KEY_B, 0));
        assertThat(target.reservation(TestTarget.SUBNQN, 1).rtype()).as("last registrant gone").isZero();
        assertAccess(c, true, true, "C with no reservation");
    }

    // ---- bad input ----

    @Test
    void badInputGetsItsStatus() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        NvmeHost io = a.io(0);
        conflict(io.resvAcquire(1, 0, 1, KEY_A, 0)); // not registered
        ok(io.resvRegister(1, 0, false, 0, 0, KEY_A));
        invalidField(io.resvAcquire(1, 0, 0, KEY_A, 0)); // RTYPE 0
        invalidField(io.resvAcquire(1, 0, 7, KEY_A, 0)); // RTYPE 7
        conflict(io.resvAcquire(1, 0, 1, KEY_B, 0)); // wrong key
        invalidField(io.resvAcquire(1, 3, 1, KEY_A, 0)); // RACQA 3
        invalidField(io.resvAcquireRaw(1, 1 << 8 | 1 << 3, KEY_A, 0)); // IEKEY on Acquire
        invalidField(io.resvAcquireRaw(1, 1 << 8 | 1 << 16, KEY_A, 0)); // reserved bits 31:16
        invalidField(io.resvRegister(1, 3, false, 0, 0, KEY_A)); // RREGA 3
        invalidField(io.resvRegister(1, 0, false, 1, 0, KEY_A)); // CPTPL 01b
        invalidField(io.resvRegisterRaw(1, 1 << 8, 0, KEY_A)); // reserved bits
        invalidField(io.resvRelease(1, 2, 1, KEY_A)); // RRELA 2
        invalidField(io.resvReleaseRaw(1, 1 << 8 | 1 << 3, KEY_A)); // IEKEY on Release
        invalidField(io.executeRead(Sqe.of(NvmeHost.OPC_RESV_REPORT).nsid(1).cdw(10, 15).cdw(11, 3), 64));
        assertStatus(io.resvRegister(9, 0, false, 0, 0, KEY_A), 0, 0x0B, true); // no such namespace
        // a short data transfer for Register (8 bytes instead of 16)
        Completion shortData = io.executeWrite(Sqe.of(NvmeHost.OPC_RESV_REGISTER).nsid(1), new byte[8]);
        assertThat(shortData.ok()).isFalse();
        // the queues carry on
        ok(io.resvAcquire(1, 0, 1, KEY_A, 0));
        assertAccess(b, true, false, "B");
        // nsid 3 has its own reservation
        byte[] other = b.io(0).resvReport(3, true, 4096).data();
        assertThat(u16(other, 5)).isZero();
        assertThat(b.io(0).write(3, 0, block(1)).ok()).isTrue();
    }

    // ---- Persist Through Power Loss across a restart ----

    @Test
    void persistThroughPowerLossKeepsTheReservationAcrossARestart() throws Exception {
        start(true);
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        byte[] ns = a.admin().identify(0, 1, 0).data();
        assertThat(u8(ns, 31) & 1).as("RESCAP PTPLS with a state directory").isEqualTo(1);
        Path file = stateDir.resolve("reservation-" + TestTarget.NGUID + ".json");

        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A)); // PTPL off: nothing written
        assertThat(file).doesNotExist();
        ok(b.io(0).resvRegister(1, 0, false, 3, 0, KEY_B)); // CPTPL 11b: PTPL on
        assertThat(file).exists();
        ok(a.io(0).resvAcquire(1, 0, 3, KEY_A, 0));
        Completion ptpl = a.admin().execute(Sqe.of(NvmeHost.OPC_GET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE));
        assertThat(ptpl.dw0()).isEqualTo(1);
        byte[] before = b.io(0).resvReport(1, true, 4096).data();
        assertThat(u8(before, 9)).as("PTPLS").isEqualTo(1);

        open.forEach(NvmeController::close);
        open.clear();
        target.close();
        start(true); // a real restart: new poll groups, transport, namespaces; the same document and state dir

        a = connect(HOST_A);
        b = connect(HOST_B);
        NvmeController c = connect(HOST_C);
        byte[] after = c.io(0).resvReport(1, true, 4096).data();
        assertThat(after).as("the same report after the restart").isEqualTo(before);
        assertAccess(c, true, false, "C under the kept Write Exclusive - Registrants Only");
        assertAccess(b, true, true, "B, still registered");
        ok(a.io(0).resvRelease(1, 0, 3, KEY_A)); // A still holds it with its key

        // PTPL off through Set Features 83h: the file goes, and the next restart starts empty
        ok(a.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE).cdw(11, 0)));
        assertThat(file).doesNotExist();
        open.forEach(NvmeController::close);
        open.clear();
        target.close();
        start(true);
        assertThat(target.reservation(TestTarget.SUBNQN, 1).registrants()).isEmpty();
        assertThat(target.reservation(TestTarget.SUBNQN, 1).ptpl()).isFalse();

        // on again, then the namespace is removed through the control plane: its state file goes with it
        a = connect(HOST_A);
        ok(a.admin().execute(Sqe.of(NvmeHost.OPC_SET_FEATURES).nsid(1).cdw(10, FID_PERSISTENCE).cdw(11, 1)));
        assertThat(file).exists();
        target.removeNamespace(TestTarget.SUBNQN, 1);
        assertThat(file).doesNotExist();
    }

    @Test
    void unreadableStateFileStopsTheStartWithItsName() throws Exception {
        Files.writeString(stateDir.resolve("reservation-" + TestTarget.NGUID + ".json"), "{\"rtype\": 9}");
        port = FreePorts.pick();
        config = TestTarget.config(port);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> JavaEngine.start(config, IoObserver.NONE, stateDir))
            .hasMessageContaining("reservation-" + TestTarget.NGUID + ".json");
    }

    // ---- review fixes: same-key Register, Preempt and Abort, removal within one change ----

    @Test
    void registeringAgainWithTheSameKeyChangesNothing() throws Exception {
        start(false);
        NvmeController a = connect(HOST_A);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A)); // again, same key: success, nothing changes
        assertThat(target.reservation(TestTarget.SUBNQN, 1).generation()).as("generation (nvmet, SPDK)").isEqualTo(1);
        conflict(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_B)); // again with another key: conflict
        assertThat(target.reservation(TestTarget.SUBNQN, 1).generation()).isEqualTo(1);
    }

    private static final int HELD_NSID = 7;
    private static final long HOLD_MS = 1500;

    /** The standard configuration plus nsid 7 on an error bdev, whose writes the test can hold. */
    private void startWithHeldWrites() throws IOException {
        port = FreePorts.pick();
        config = TestTarget.config(port);
        config.bdevs.add(new io.nvmf4j.config.BdevConfig("held-base", "malloc", TestTarget.BLOCK_SIZE,
            TestTarget.SMALL_BLOCKS));
        io.nvmf4j.config.BdevConfig e = new io.nvmf4j.config.BdevConfig("held", "error", TestTarget.BLOCK_SIZE, 0);
        e.base = "held-base";
        config.bdevs.add(e);
        config.subsystems.get(0).namespaces.add(new io.nvmf4j.config.NamespaceConfig(HELD_NSID, "held"));
        start(false);
    }

    private io.nvmf4j.bdev.ErrorBdev heldDevice() {
        return (io.nvmf4j.bdev.ErrorBdev) target.engine().target().subsystem(TestTarget.SUBNQN).namespace(HELD_NSID)
            .bdev();
    }

    /** B's write is held on the device (its injected timeout); returns it once the target holds it. */
    private CompletableFuture<Completion> heldWriteOf(NvmeController b) throws Exception {
        target.injectError("held", new io.nvmf4j.engine.ErrorInjection("write", "timeout", 1, HOLD_MS));
        CompletableFuture<Completion> w = b.io(0).writeAsync(HELD_NSID, 0, block(3));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (heldDevice().heldCommands() == 0) {
            assertThat(System.nanoTime()).as("B's write reaches the device").isLessThan(deadline);
            Thread.sleep(5);
        }
        return w;
    }

    @Test
    void preemptAndAbortCompletesOnlyAfterThePreemptedHostsCommandsHaveCompleted() throws Exception {
        startWithHeldWrites();
        NvmeController a = connect(HOST_A);
        NvmeController b = connect(HOST_B);
        ok(a.io(0).resvRegister(HELD_NSID, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(HELD_NSID, 0, false, 0, 0, KEY_B));
        ok(a.io(0).resvAcquire(HELD_NSID, 0, 3, KEY_A, 0)); // Write Exclusive - Registrants Only: B may write

        // Preempt (no abort) does not wait for B's write on the device: it completes while the write is held (until
        // the test lets the device's timer go, however slowly a loaded machine runs the Preempt)
        CompletableFuture<Completion> w1;
        try (HeldErrorTimer held = HeldErrorTimer.of(heldDevice())) {
            w1 = heldWriteOf(b);
            ok(a.io(0).resvAcquire(HELD_NSID, 1, 3, KEY_A, KEY_B));
            assertThat(w1.isDone()).as("B's write still held after a plain preempt").isFalse();
        }
        w1.get(10, TimeUnit.SECONDS);

        // Preempt and Abort: the command completes only once B's write has left the device
        ok(b.io(0).resvRegister(HELD_NSID, 0, false, 0, 0, KEY_B));
        long sent = System.nanoTime(); // the hold starts after this, when the write reaches the device
        CompletableFuture<Completion> w2 = heldWriteOf(b);
        Completion abort = a.io(0).resvAcquireRaw(HELD_NSID, 2 | (3 << 8), KEY_A, KEY_B);
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
        ok(abort);
        assertThat(waited).as("Preempt and Abort waited for B's held write: ms from the write's submission")
            .isGreaterThanOrEqualTo(HOLD_MS);
        Completion held = w2.get(10, TimeUnit.SECONDS);
        assertThat(held.ok()).as("B's write ended by its injected timeout: %s", held).isFalse();
        conflict(b.io(0).write(HELD_NSID, 0, block(4))); // and B, preempted, is fenced out now
        ok(a.io(0).write(HELD_NSID, 0, block(5)));
        assertThat(target.reservation(TestTarget.SUBNQN, HELD_NSID).registrants()).hasSize(1);
    }

    @Test
    void aNamespaceReplacedWithinOneChangeKeepsItsReservationAndItsFile() throws Exception {
        start(true);
        NvmeController a = connect(HOST_A);
        ok(a.io(0).resvRegister(1, 0, false, 3, 0, KEY_A)); // PTPL on
        ok(a.io(0).resvAcquire(1, 0, 1, KEY_A, 0));
        Path file = stateDir.resolve("reservation-" + TestTarget.NGUID + ".json");
        assertThat(file).exists();
        io.nvmf4j.config.NamespaceConfig ns1 = target.configSnapshot().subsystems.get(0).namespaces.stream()
            .filter(n -> n.nsid == 1).findFirst().orElseThrow();

        // a config import that changes the namespace removes it and adds it again (same NGUID): all is kept
        target.keepingReservations(() -> {
            target.removeNamespace(TestTarget.SUBNQN, 1);
            assertThat(file).as("not removed while the change runs").exists();
            target.addNamespace(TestTarget.SUBNQN, ns1);
            return null;
        });
        assertThat(file).exists();
        ReservationInfo kept = target.reservation(TestTarget.SUBNQN, 1);
        assertThat(kept.registrants()).hasSize(1);
        assertThat(kept.ptpl()).isTrue();

        // removed for good within a change: the file goes when the change ends
        target.keepingReservations(() -> {
            target.removeNamespace(TestTarget.SUBNQN, 1);
            return null;
        });
        assertThat(file).doesNotExist();
        // a Register of a host that still had the removed namespace's command in hand writes nothing again
        target.addNamespace(TestTarget.SUBNQN, ns1);
        assertThat(target.reservation(TestTarget.SUBNQN, 1).registrants()).as("a new namespace: no registrants")
            .isEmpty();
        assertThat(file).doesNotExist();
    }
}
