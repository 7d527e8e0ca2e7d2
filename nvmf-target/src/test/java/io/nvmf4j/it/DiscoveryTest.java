package io.nvmf4j.it;

import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.Le.slice;
import static org.assertj.core.api.Assertions.assertThat;

/** The discovery controller and its log page (LID 70h), served on every listener. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DiscoveryTest {
    private static final int LID_DISCOVERY = 0x70;
    private static final int ENTRY_SIZE = 1024;
    private static final String OTHER_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000ff";

    static TestTarget target;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    /** One discovery log entry, decoded. */
    record Entry(int trtype, int adrfam, int subtype, int treq, int portid, int cntlid, int asqsz,
                 byte[] trsvcid, String subnqn, byte[] traddr) {
        static Entry parse(byte[] log, int index) {
            int o = ENTRY_SIZE + index * ENTRY_SIZE;
            return new Entry(Le.u8(log, o), Le.u8(log, o + 1), Le.u8(log, o + 2), Le.u8(log, o + 3),
                    Le.u16(log, o + 4), Le.u16(log, o + 6), Le.u16(log, o + 8),
                    slice(log, o + 32, 32), Le.cString(log, o + 256, 256), slice(log, o + 512, 256));
        }
    }

    private static byte[] readWholeLog(NvmeHost admin) {
        Completion header = admin.getLogPage(LID_DISCOVERY, 0, 0, 16);
        assertThat(header.ok()).as("discovery log header: %s", header).isTrue();
        long numrec = Le.u64(header.data(), 8);
        Completion all = admin.getLogPage(LID_DISCOVERY, 0, 0, (int) (ENTRY_SIZE * (numrec + 1)));
        assertThat(all.ok()).as("discovery log: %s", all).isTrue();
        return all.data();
    }

    private static List<Entry> entries(byte[] log) {
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < Le.u64(log, 8); i++) {
            out.add(Entry.parse(log, i));
        }
        return out;
    }

    @Test
    void discoveryControllerIdentifiesAsDiscovery() throws Exception {
        try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
            Completion id = d.admin().identify(0x01, 0, 0);
            assertThat(id.ok()).as("%s", id).isTrue();
            assertThat(Le.u8(id.data(), 111)).as("CNTRLTYPE").isEqualTo(2);
            assertThat(Le.cString(id.data(), 768, 256)).as("SUBNQN").isEqualTo(NvmeHost.DISCOVERY_NQN);
            assertThat(Le.u16(id.data(), 78)).as("CNTLID").isEqualTo(d.cntlid());
        }
    }

    @Test
    void logListsOpenSubsystemAndCurrentDiscoverySubsystem() throws Exception {
        try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
            byte[] log = readWholeLog(d.admin());
            assertThat(Le.u16(log, 16)).as("RECFMT").isEqualTo(0);
            List<Entry> entries = entries(log);
            assertThat(entries).extracting(Entry::subnqn)
                    .containsExactlyInAnyOrder(TestTarget.SUBNQN, NvmeHost.DISCOVERY_NQN);
            for (Entry e : entries) {
                assertThat(e.trtype()).as("TRTYPE of %s", e.subnqn()).isEqualTo(3);
                assertThat(e.adrfam()).as("ADRFAM").isEqualTo(1);
                assertThat(e.subtype()).as("SUBTYPE of %s", e.subnqn())
                        .isEqualTo(e.subnqn().equals(NvmeHost.DISCOVERY_NQN) ? 3 : 2);
                assertThat(e.cntlid()).as("CNTLID").isEqualTo(0xFFFF);
                assertThat(e.asqsz()).as("ASQSZ").isGreaterThanOrEqualTo(32);
                assertThat(e.trsvcid()).as("TRSVCID").isEqualTo(Le.spacePadded(Integer.toString(target.port), 32));
                assertThat(e.traddr()).as("TRADDR").isEqualTo(Le.spacePadded(TestTarget.ADDRESS, 256));
            }
            assertThat(entries).extracting(Entry::portid).as("one listener, one PORTID").containsOnly(entries.get(0).portid());
        }
    }

    /** A listener configured with port 0: the log gives the port it was bound to, never 0. */
    @Test
    void aPortZeroListenerIsListedWithItsBoundPort() throws Exception {
        try (io.nvmf4j.engine.ConfigController<io.nvmf4j.javaengine.JavaEngine> t = io.nvmf4j.javaengine.JavaEngine.start(TestTarget.config(0))) {
            int bound = t.listeners().values().iterator().next().getPort();
            assertThat(bound).isPositive();
            try (NvmeController d = NvmeController.open(TestTarget.ADDRESS, bound, NvmeHost.DISCOVERY_NQN,
                    TestTarget.HOSTNQN, 0, 0, TcpHostOptions.DEFAULT)) {
                List<Entry> entries = entries(readWholeLog(d.admin()));
                assertThat(entries).isNotEmpty();
                for (Entry e : entries) {
                    assertThat(e.trsvcid()).as("TRSVCID of %s", e.subnqn())
                        .isEqualTo(Le.spacePadded(Integer.toString(bound), 32));
                }
            }
        }
    }

    /**
     * TRTYPE, ADRFAM and TSAS of each entry come from its transport's type in the registry: an RDMA referral
     * gets TRTYPE 1 with TSAS RC / not specified / RDMA_CM, a TCP one over IPv6 TRTYPE 3, ADRFAM 2, no TSAS.
     */
    @Test
    void referralEntriesCarryTheirTransportsFields() throws Exception {
        ReferralConfig rdma = new ReferralConfig("rdma", "10.0.0.2", 4420);
        ReferralConfig tcp6 = new ReferralConfig("tcp", "fd00::2", 4430);
        target.nvmf().addReferral(rdma);
        target.nvmf().addReferral(tcp6);
        try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
            byte[] log = readWholeLog(d.admin());
            List<Entry> entries = entries(log);
            int r = entries.size() - 2;
            assertThat(entries.get(r).subtype()).as("SUBTYPE referral").isEqualTo(1);
            assertThat(entries.get(r).trtype()).as("TRTYPE rdma").isEqualTo(1);
            assertThat(entries.get(r).adrfam()).as("ADRFAM").isEqualTo(1);
            int tsas = ENTRY_SIZE + r * ENTRY_SIZE + 768;
            assertThat(slice(log, tsas, 4)).as("TSAS rdma").containsExactly(1, 1, 1, 0);
            assertThat(entries.get(r + 1).trtype()).as("TRTYPE tcp").isEqualTo(3);
            assertThat(entries.get(r + 1).adrfam()).as("ADRFAM ipv6").isEqualTo(2);
            assertThat(slice(log, tsas + ENTRY_SIZE, 256)).as("TSAS tcp").containsOnly(0);
        } finally {
            target.nvmf().removeReferral(rdma);
            target.nvmf().removeReferral(tcp6);
        }
    }

    @Test
    void logIsFilteredByHostNqn() throws Exception {
        try (NvmeController allowed = target.discovery(TestTarget.ALLOWED_HOSTNQN);
             NvmeController other = target.discovery(OTHER_HOSTNQN)) {
            assertThat(entries(readWholeLog(allowed.admin()))).extracting(Entry::subnqn)
                    .containsExactlyInAnyOrder(TestTarget.SUBNQN, TestTarget.RESTRICTED_NQN, NvmeHost.DISCOVERY_NQN);
            assertThat(entries(readWholeLog(other.admin()))).extracting(Entry::subnqn)
                    .containsExactlyInAnyOrder(TestTarget.SUBNQN, NvmeHost.DISCOVERY_NQN);
        }
    }

    @Test
    void partialReadsMatchTheWholeLog() throws Exception {
        try (NvmeController d = target.discovery(TestTarget.ALLOWED_HOSTNQN)) {
            NvmeHost admin = d.admin();
            Completion header1024 = admin.getLogPage(LID_DISCOVERY, 0, 0, 1024);
            assertThat(header1024.ok()).as("%s", header1024).isTrue();
            byte[] whole = readWholeLog(admin);
            assertThat(slice(whole, 0, 1024)).as("1024-byte header read").isEqualTo(header1024.data());
            int half = whole.length / 2;
            Completion first = admin.getLogPage(LID_DISCOVERY, 0, 0, half);
            Completion second = admin.getLogPage(LID_DISCOVERY, 0, half, whole.length - half);
            assertThat(first.ok()).as("%s", first).isTrue();
            assertThat(second.ok()).as("%s", second).isTrue();
            assertThat(first.data()).as("first half").isEqualTo(slice(whole, 0, half));
            assertThat(second.data()).as("second half").isEqualTo(slice(whole, half, whole.length - half));
            Completion entryOnly = admin.getLogPage(LID_DISCOVERY, 0, ENTRY_SIZE, ENTRY_SIZE);
            assertThat(entryOnly.data()).as("entry 0 read at offset 1024").isEqualTo(slice(whole, ENTRY_SIZE, ENTRY_SIZE));
        }
    }

    @Test
    void generationCounterIsStableWithoutChanges() throws Exception {
        try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
            long gen1 = Le.u64(d.admin().getLogPage(LID_DISCOVERY, 0, 0, 16).data(), 0);
            long gen2 = Le.u64(d.admin().getLogPage(LID_DISCOVERY, 0, 0, 16).data(), 0);
            assertThat(gen2).as("GENCTR").isEqualTo(gen1);
        }
    }

    @Test
    void discoveryLogIsNotOnIoControllers() throws Exception {
        try (NvmeController c = target.controller(0, TcpHostOptions.DEFAULT)) {
            Completion log = c.admin().getLogPage(LID_DISCOVERY, 0, 0, 16);
            assertThat(log.ok()).as("LID 70h on an I/O controller: %s", log).isFalse();
            assertThat(log.dnr()).as("DNR").isTrue();
        }
    }
}
