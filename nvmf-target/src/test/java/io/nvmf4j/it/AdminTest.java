package io.nvmf4j.it;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.IcResp;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.Le.slice;
import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/** ICResp, Connect, properties, Identify, log pages, features and the other admin commands. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AdminTest {
    private static final int NSID_ALL = 0xFFFFFFFF;
    private static final int SC_INVALID_FIELD = 0x02;

    static TestTarget target;
    static NvmeController ctrl;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
        ctrl = target.controller(1, TcpHostOptions.DEFAULT);
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

    private static NvmeHost admin() {
        return ctrl.admin();
    }

    private static byte[] ok(Completion c) {
        assertThat(c.ok()).as("%s", c).isTrue();
        return c.data();
    }

    // ---- ICResp and Connect ----

    @Test
    void icRespWithoutDigests() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            IcResp r = h.icResp();
            assertThat(r.pfv()).as("PFV").isEqualTo(0);
            assertThat(r.cpda()).as("CPDA").isEqualTo(0);
            assertThat(r.headerDigest()).as("HDGST").isFalse();
            assertThat(r.dataDigest()).as("DDGST").isFalse();
            assertThat(r.maxH2cData()).as("MAXH2CDATA").isEqualTo(target.config.tcp.maxH2cData).isEqualTo(131072);
        }
    }

    @Test
    void icRespWithDigests() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DIGESTS)) {
            assertThat(h.icResp().headerDigest()).as("HDGST").isTrue();
            assertThat(h.icResp().dataDigest()).as("DDGST").isTrue();
            assertThat(h.icResp().cpda()).as("CPDA").isEqualTo(0);
        }
    }

    @Test
    void connectAllocatesDistinctDynamicCntlids() throws Exception {
        try (NvmeController second = target.controller(0, TcpHostOptions.DEFAULT)) {
            assertThat(ctrl.cntlid()).isBetween(1, 0xFFEF);
            assertThat(second.cntlid()).isBetween(1, 0xFFEF).isNotEqualTo(ctrl.cntlid());
        }
    }

    // ---- Properties ----

    @Test
    void capabilitiesAndVersion() {
        Completion cap = admin().propertyGet(NvmeHost.PROP_CAP, true);
        assertThat(cap.ok()).as("%s", cap).isTrue();
        long v = cap.result64();
        assertThat(v & 0xFFFF).as("CAP.MQES").isEqualTo(target.config.tcp.maxQueueDepth - 1);
        assertThat((v >>> 16) & 1).as("CAP.CQR").isEqualTo(1);
        assertThat((v >>> 37) & 1).as("CAP.CSS NVM").isEqualTo(1);
        Completion vs = admin().propertyGet(NvmeHost.PROP_VS, false);
        assertThat(vs.ok()).as("%s", vs).isTrue();
        assertThat(vs.dw0()).as("VS").isEqualTo(0x00020000);
    }

    @Test
    void enabledControllerIsReady() {
        Completion cc = admin().propertyGet(NvmeHost.PROP_CC, false);
        assertThat(cc.ok()).as("%s", cc).isTrue();
        assertThat(cc.dw0() & 1).as("CC.EN").isEqualTo(1);
        assertThat((cc.dw0() >>> 16) & 0xF).as("CC.IOSQES").isEqualTo(6);
        assertThat((cc.dw0() >>> 20) & 0xF).as("CC.IOCQES").isEqualTo(4);
        Completion csts = admin().propertyGet(NvmeHost.PROP_CSTS, false);
        assertThat(csts.dw0() & 1).as("CSTS.RDY").isEqualTo(1);
    }

    @Test
    void shutdownNotificationCompletes() throws Exception {
        try (NvmeController c = target.controller(0, TcpHostOptions.DEFAULT)) {
            int cc = c.admin().propertyGet(NvmeHost.PROP_CC, false).dw0();
            assertThat(c.admin().propertySet(NvmeHost.PROP_CC, (cc & ~0xC000) | (1 << 14), false).ok()).isTrue();
            int shst = -1;
            for (long end = System.nanoTime() + 5_000_000_000L; System.nanoTime() < end && shst != 2; Thread.sleep(10)) {
                shst = (c.admin().propertyGet(NvmeHost.PROP_CSTS, false).dw0() >>> 2) & 3;
            }
            assertThat(shst).as("CSTS.SHST").isEqualTo(2);
        }
    }

    // ---- Identify ----

    @Test
    void identifyController() {
        byte[] id = ok(admin().identify(0x01, 0, 0));
        assertThat(id).hasSize(4096);
        assertThat(slice(id, 4, 20)).as("SN").isEqualTo(Le.spacePadded(TestTarget.SERIAL, 20));
        assertThat(slice(id, 24, 40)).as("MN").isEqualTo(Le.spacePadded(TestTarget.MODEL, 40));
        assertThat(new String(slice(id, 64, 8)).trim()).as("FR").isNotEmpty();
        assertThat(Le.u8(id, 77)).as("MDTS").isEqualTo(5);
        assertThat(Le.u16(id, 78)).as("CNTLID").isEqualTo(ctrl.cntlid());
        assertThat(Le.u32(id, 80)).as("VER").isEqualTo(0x00020000L);
        assertThat(Le.u8(id, 111)).as("CNTRLTYPE").isEqualTo(1);
        assertThat(Le.u16(id, 320)).as("KAS").isPositive();
        assertThat(Le.u8(id, 512)).as("SQES").isEqualTo(0x66);
        assertThat(Le.u8(id, 513)).as("CQES").isEqualTo(0x44);
        assertThat(Le.u16(id, 514)).as("MAXCMD").isPositive();
        assertThat(Le.u32(id, 516)).as("NN").isEqualTo(32L);
        assertThat(Le.u16(id, 520) & 0b1101).as("ONCS compare, DSM, write zeroes").isEqualTo(0b1101);
        assertThat(Le.u32(id, 536) & 1).as("SGLS").isEqualTo(1L);
        assertThat(Le.cString(id, 768, 256)).as("SUBNQN").isEqualTo(TestTarget.SUBNQN);
        assertThat(Le.u32(id, 1792)).as("IOCCSZ").isEqualTo((64 + 8192) / 16L);
        assertThat(Le.u32(id, 1796)).as("IORCSZ").isEqualTo(1L);
        assertThat(Le.u16(id, 1800)).as("ICDOFF").isEqualTo(0);
        assertThat(Le.u8(id, 1803)).as("MSDBD").isEqualTo(1);
    }

    @Test
    void identifyNamespace() {
        byte[] ns = ok(admin().identify(0x00, 1, 0));
        assertThat(Le.u64(ns, 0)).as("NSZE").isEqualTo(TestTarget.NUM_BLOCKS);
        assertThat(Le.u64(ns, 8)).as("NCAP").isEqualTo(TestTarget.NUM_BLOCKS);
        assertThat(Le.u64(ns, 16)).as("NUSE").isEqualTo(TestTarget.NUM_BLOCKS);
        assertThat(Le.u8(ns, 26)).as("FLBAS").isEqualTo(0);
        assertThat(Le.u8(ns, 130)).as("LBAF0.LBADS").isEqualTo(9);
        assertThat(slice(ns, 104, 16)).as("NGUID").isEqualTo(Le.hex(TestTarget.NGUID));
        assertThat(slice(ns, 120, 8)).as("EUI64").isEqualTo(Le.hex(TestTarget.EUI64));
        byte[] ns3 = ok(admin().identify(0x00, 3, 0));
        assertThat(Le.u64(ns3, 0)).as("NSZE of nsid 3").isEqualTo(TestTarget.SMALL_BLOCKS);
    }

    /**
     * CNS 08h, the I/O Command Set Independent Identify Namespace: a Linux host of VER 2.0 and later reads it instead
     * of CNS 00h for NMIC, RESCAP, ANAGRPID and whether the namespace is ready (NSTAT), and leaves out a namespace
     * whose CNS 08h fails or is not ready.
     */
    @Test
    void commandSetIndependentIdentifyNamespace() {
        assertThat(Le.u32(ok(admin().identify(0x01, 0, 0)), 80)).as("VER 2.0").isEqualTo(0x00020000L);
        byte[] cns0 = ok(admin().identify(0x00, 1, 0));
        byte[] ns = ok(admin().identify(0x08, 1, 0));
        assertThat(Le.u8(ns, 1)).as("NMIC, as CNS 00h").isEqualTo(Le.u8(cns0, 30)).isEqualTo(1);
        assertThat(Le.u8(ns, 2)).as("RESCAP, as CNS 00h").isEqualTo(Le.u8(cns0, 31)).isNotZero();
        assertThat(Le.u32(ns, 4)).as("ANAGRPID, as CNS 00h").isEqualTo(Le.u32(cns0, 92)).isEqualTo(1);
        assertThat(Le.u8(ns, 14) & 1).as("NSTAT: ready").isEqualTo(1);
        assertThat(ok(admin().identify(0x08, 2, 0))).as("an inactive nsid: zeros").containsOnly(0);
        assertStatus(admin().identify(0x08, 0, 0), 0, 0x0B, true);
    }

    @Test
    void activeNamespaceList() {
        assertThat(nsids(ok(admin().identify(0x02, 0, 0)))).containsExactly(1, 3);
        assertThat(nsids(ok(admin().identify(0x02, 1, 0)))).containsExactly(3);
        assertThat(nsids(ok(admin().identify(0x02, 3, 0)))).isEmpty();
    }

    private static List<Integer> nsids(byte[] list) {
        List<Integer> out = new ArrayList<>();
        for (int off = 0; off < list.length && Le.u32(list, off) != 0; off += 4) {
            out.add((int) Le.u32(list, off));
        }
        return out;
    }

    @Test
    void namespaceIdentificationDescriptors() {
        byte[] d = ok(admin().identify(0x03, 1, 0));
        Map<Integer, byte[]> byType = new HashMap<>();
        for (int off = 0; off + 4 <= d.length && d[off] != 0; off += 4 + Le.u8(d, off + 1)) {
            byType.put(Le.u8(d, off), slice(d, off + 4, Le.u8(d, off + 1)));
        }
        UUID u = UUID.fromString(TestTarget.UUID);
        byte[] uuid = ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array();
        assertThat(byType.get(1)).as("EUI64 (NIDT 1)").isEqualTo(Le.hex(TestTarget.EUI64));
        assertThat(byType.get(2)).as("NGUID (NIDT 2)").isEqualTo(Le.hex(TestTarget.NGUID));
        assertThat(byType.get(3)).as("UUID (NIDT 3)").isEqualTo(uuid);
    }

    @Test
    void unknownCnsIsInvalidField() {
        assertStatus(admin().identify(0x1F, 0, 0), 0, SC_INVALID_FIELD, true);
    }

    // ---- Log pages ----

    @Test
    void errorLogRecordsAFailedCommand() {
        Completion bad = ctrl.io(0).execute(Sqe.of(0x7E).nsid(1));
        assertThat(bad.ok()).isFalse();
        byte[] log = ok(admin().getLogPage(0x01, 0, 0, 64));
        assertThat(log).hasSize(64);
        assertThat(Le.u64(log, 0)).as("error count of the newest entry").isPositive();
    }

    @Test
    void smartLogCountsDataUnits() {
        byte[] before = ok(admin().getLogPage(0x02, NSID_ALL, 0, 512));
        NvmeHost io = ctrl.io(0);
        byte[] chunk = Le.random(128 * 1024, 7);
        for (int i = 0; i < 8; i++) {
            assertThat(io.write(1, 20000 + i * 256L, chunk).ok()).isTrue();
            assertThat(io.read(1, 20000 + i * 256L, 256).ok()).isTrue();
        }
        byte[] after = ok(admin().getLogPage(0x02, NSID_ALL, 0, 512));
        // 8 x 128 KiB = 2048 units of 512 B = 2.048 data units: the rounded-up counters move by 2 or 3.
        assertThat(Le.u64(after, 32) - Le.u64(before, 32)).as("data units read").isBetween(2L, 3L);
        assertThat(Le.u64(after, 48) - Le.u64(before, 48)).as("data units written").isBetween(2L, 3L);
        assertThat(Le.u64(after, 64) - Le.u64(before, 64)).as("host read commands").isEqualTo(8);
        assertThat(Le.u64(after, 80) - Le.u64(before, 80)).as("host write commands").isEqualTo(8);
    }

    @Test
    void firmwareSlotLog() {
        byte[] fw = ok(admin().getLogPage(0x03, NSID_ALL, 0, 512));
        byte[] id = ok(admin().identify(0x01, 0, 0));
        assertThat(Le.u8(fw, 0)).as("AFI").isEqualTo(1);
        assertThat(slice(fw, 8, 8)).as("FRS1").isEqualTo(slice(id, 64, 8));
    }

    @Test
    void changedNamespaceListLog() {
        assertThat(ok(admin().getLogPage(0x04, NSID_ALL, 0, 4096))).hasSize(4096);
    }

    @Test
    void commandsSupportedAndEffectsLog() {
        byte[] log = ok(admin().getLogPage(0x05, 0, 0, 4096));
        assertThat(Le.u32(log, NvmeHost.OPC_IDENTIFY * 4) & 1).as("Identify CSUPP").isEqualTo(1L);
        assertThat(Le.u32(log, 1024 + NvmeHost.OPC_READ * 4) & 1).as("Read CSUPP").isEqualTo(1L);
        assertThat(Le.u32(log, 1024 + NvmeHost.OPC_WRITE * 4) & 1).as("Write CSUPP").isEqualTo(1L);
    }

    // ---- Features ----

    @Test
    void numberOfQueuesIsCappedByMaxIoQueues() throws Exception {
        int max = target.config.tcp.maxIoQueues;
        try (NvmeController c = target.controller(0, TcpHostOptions.DEFAULT)) {
            Completion set = c.admin().setFeatures(0x07, 63 | (63 << 16));
            assertThat(set.ok()).as("%s", set).isTrue();
            assertThat(set.dw0()).as("NSQA/NCQA").isEqualTo((max - 1) | ((max - 1) << 16));
            assertThat(c.admin().getFeatures(0x07, 0).dw0()).isEqualTo((max - 1) | ((max - 1) << 16));
        }
        try (NvmeController c = target.controller(0, TcpHostOptions.DEFAULT)) {
            assertThat(c.admin().setFeatures(0x07, 1 | (1 << 16)).dw0()).as("2 queues asked").isEqualTo(1 | (1 << 16));
            assertThat(c.admin().getFeatures(0x07, 0).dw0()).isEqualTo(1 | (1 << 16));
        }
    }

    @Test
    void simpleFeatures() {
        assertThat(admin().setFeatures(0x0B, 0x100).ok()).as("Set Async Event Config").isTrue();
        assertThat(admin().getFeatures(0x0B, 0).ok()).as("Get Async Event Config").isTrue();
        Completion kato = admin().getFeatures(0x0F, 0);
        assertThat(kato.ok()).as("%s", kato).isTrue();
        assertThat(kato.dw0()).as("KATO").isEqualTo(TestTarget.KATO_MS);
        // malloc namespaces have no volatile write cache: Identify VWC 0, feature 06h Invalid Field (DurabilityTest)
        assertStatus(admin().getFeatures(0x06, 0), 0, SC_INVALID_FIELD, true);
    }

    @Test
    void hostIdentifierIsTheConnectHostid() {
        Completion hostid = admin().getFeatures(0x81, 1, 16);
        assertThat(hostid.ok()).as("%s", hostid).isTrue();
        assertThat(hostid.data()).isEqualTo(ctrl.hostid());
    }

    @Test
    void timestampRoundTrip() {
        long now = System.currentTimeMillis();
        byte[] ts = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(now).array();
        assertThat(admin().setFeatures(0x0E, 0, ts).ok()).as("Set Timestamp").isTrue();
        Completion get = admin().getFeatures(0x0E, 0, 8);
        assertThat(get.ok()).as("%s", get).isTrue();
        long got = Le.u64(get.data(), 0) & 0xFFFF_FFFF_FFFFL;
        assertThat(got).as("timestamp").isBetween(now, now + 60_000);
    }

    @Test
    void unknownFeatureIsInvalidField() {
        assertStatus(admin().getFeatures(0x7E, 0), 0, SC_INVALID_FIELD, true);
    }

    // ---- Other admin commands ----

    @Test
    void keepAliveSucceeds() {
        assertThat(admin().keepAlive().ok()).isTrue();
    }

    @Test
    void abortReportsCommandNotAborted() {
        Completion c = admin().abort(1, 0x1234);
        assertThat(c.ok()).as("%s", c).isTrue();
        assertThat(c.dw0() & 1).as("dw0 bit 0: not aborted").isEqualTo(1);
    }

    @Test
    void asyncEventRequestIsHeld() throws Exception {
        try (NvmeController c = target.controller(0, TcpHostOptions.DEFAULT)) {
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            TestTarget.settleAdmin(c.admin()); // an AER answered at once would be ahead of these answers
            assertThat(aer).as("AER held without an event, the admin queue still serving commands").isNotDone();
        }
    }

    // ---- issue 9: discovery enable, RAE, Supported Log Pages, temperature, mandatory features ----

    @Test
    void discoveryControllerEnablesWithZeroQueueEntrySizes() throws Exception {
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(tcp, 512);
            assertThat(h.fabricsConnect(0, 31, 0xFFFF, 0, TestTarget.HOSTNQN, NvmeHost.DISCOVERY_NQN,
                NvmeController.hostIdFor(TestTarget.HOSTNQN)).ok()).isTrue();
            assertThat(h.propertySet(NvmeHost.PROP_CC, 1, false).ok()).isTrue(); // EN only: IOSQES = IOCQES = 0
            int csts = 0;
            for (long end = System.nanoTime() + 5_000_000_000L; System.nanoTime() < end && (csts & 3) == 0;
                 Thread.sleep(5)) {
                csts = h.propertyGet(NvmeHost.PROP_CSTS, false).dw0();
            }
            assertThat(csts & 3).as("CSTS: RDY, no CFS").isEqualTo(1);
            assertThat(h.getLogPage(0x70, 0, 0, 1024).ok()).isTrue();
        }
    }

    @Test
    void logReadWithoutRaeAtAnOffsetClearsTheEvent() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost admin = c.admin();
            assertThat(admin.setFeatures(0x0B, 1 << 8).ok()).isTrue();
            CompletableFuture<Completion> aer = admin.asyncEventRequest();
            t.nvmf().addBdev(new BdevConfig("added", "malloc", 512, 2048));
            t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(2, "added"));
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            assertThat(admin.getLogPage(0x04, -1, 4, 1024).ok()).as("RAE 0 at offset 4").isTrue();
            Completion again = admin.getLogPage(0x04, -1, 0, 4096);
            assertThat(Le.u32(again.data(), 0)).as("the list was cleared by the read at offset 4").isZero();
            CompletableFuture<Completion> next = admin.asyncEventRequest();
            t.nvmf().removeNamespace(TestTarget.SUBNQN, 2);
            assertThat(next.get(10, TimeUnit.SECONDS).ok()).as("the event is unmasked: the next change is reported")
                .isTrue();
        }
    }

    @Test
    void supportedLogPages() {
        Completion c = admin().getLogPage(0x00, 0, 0, 1024);
        assertThat(c.ok()).as("%s", c).isTrue();
        for (int lid = 0; lid <= 5; lid++) {
            assertThat(Le.u32(c.data(), 4 * lid) & 1).as("LSUPP of LID %d", lid).isEqualTo(1);
        }
        assertThat(Le.u32(c.data(), 4 * 0x70)).as("no discovery log on an I/O controller").isZero();
        assertThat(Le.u32(c.data(), 4 * 6)).isZero();
    }

    @Test
    void smartLogReportsAPlausibleTemperature() {
        byte[] smart = admin().getLogPage(0x02, 0xFFFFFFFF, 0, 512).data();
        assertThat(Le.u16(smart, 1)).as("composite temperature (K)").isEqualTo(310);
        byte[] id = admin().identify(0x01, 0, 0).data();
        assertThat(Le.u16(id, 266)).as("WCTEMP (K)").isEqualTo(343);
        assertThat(Le.u16(id, 268)).as("CCTEMP (K)").isEqualTo(358);
    }

    @Test
    void mandatoryFeatures() {
        NvmeHost admin = admin();
        Completion arb = admin.getFeatures(0x01, 0);
        assertThat(arb.ok()).as("%s", arb).isTrue();
        assertThat(arb.dw0()).as("Arbitration: burst no limit").isEqualTo(0x7);
        Completion pm = admin.getFeatures(0x02, 0);
        assertThat(pm.ok()).as("%s", pm).isTrue();
        assertThat(pm.dw0()).as("Power Management: PS 0").isZero();
        Completion over = admin.getFeatures(0x04, 0);
        assertThat(over.ok()).as("%s", over).isTrue();
        assertThat(over.dw0() & 0xFFFF).as("over-temperature threshold (K)").isEqualTo(343);
        Completion under = admin.getFeatures(0x04, 1 << 20);
        assertThat(under.ok()).as("%s", under).isTrue();
        assertThat(under.dw0() & 0xFFFF).as("under-temperature threshold").isZero();
        assertStatus(admin.getFeatures(0x04, 1 << 16), 0, SC_INVALID_FIELD, true); // TMPSEL 1: no such sensor
        assertStatus(admin.getFeatures(0x04, 2 << 20), 0, SC_INVALID_FIELD, true); // THSEL 10b reserved
        Completion wan = admin.getFeatures(0x0A, 0);
        assertThat(wan.ok()).as("%s", wan).isTrue();
        assertThat(wan.dw0()).as("Write Atomicity Normal: DN 0").isZero();
        Completion caps = admin.execute(Sqe.of(NvmeHost.OPC_GET_FEATURES).cdw(10, 0x04 | (3 << 8)));
        assertThat(caps.ok()).as("%s", caps).isTrue();
        assertThat(caps.dw0()).as("capabilities: not changeable, not saveable").isZero();
    }
}
