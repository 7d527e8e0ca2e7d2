package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.ControlException;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.AnaGroupInfo;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.AnaLogs.AEC_ANA_CHANGE;
import static io.nvmf4j.it.AnaLogs.AEN_ANA_CHANGE;
import static io.nvmf4j.it.AnaLogs.ANAS_INACCESSIBLE;
import static io.nvmf4j.it.AnaLogs.ANAS_NON_OPTIMIZED;
import static io.nvmf4j.it.AnaLogs.ANAS_OPTIMIZED;
import static io.nvmf4j.it.AnaLogs.LID_ANA;
import static io.nvmf4j.it.AnaLogs.SCT_PATH;
import static io.nvmf4j.it.Le.u16;
import static io.nvmf4j.it.Le.u32;
import static io.nvmf4j.it.Le.u64;
import static io.nvmf4j.it.Le.u8;
import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Asymmetric namespace access over loopback NVMe/TCP: one subsystem on two listeners (two paths), namespace 1 in ANA
 * group 1 and namespace 3 in group 2, listener A with group 2 non-optimized and listener B with group 1 inaccessible.
 * Identify fields, the ANA log page (0Ch) through each path (with and without Return Groups Only, honouring the host's
 * namespace masking), live state changes with the ANA change AEN and its mask, I/O refused with the path status of
 * each state, the states kept in the document, and bad input.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AnaTest {
    static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000a9";
    static final int FID_ASYNC_EVENT_CONFIG = 0x0B;
    static final int ANAS_CHANGE = 0xF;

    private ConfigController<JavaEngine> target;
    private TargetConfig config;
    private ListenerConfig listenerA;
    private ListenerConfig listenerB;
    private int portB;
    private final List<NvmeController> open = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        int portA = FreePorts.pick();
        config = TestTarget.config(portA);
        SubsystemConfig s = config.subsystems.get(0);
        s.namespaces.get(1).anaGroup = 2;
        listenerA = s.listeners.get(0);
        listenerA.anaStates = new LinkedHashMap<>(Map.of("2", "non-optimized"));
        listenerB = new ListenerConfig("tcp", TestTarget.ADDRESS, 0);
        listenerB.anaStates = new LinkedHashMap<>(Map.of("1", "inaccessible"));
        s.listeners.add(listenerB);
        target = JavaEngine.start(config);
        portB = target.listeners().get(listenerB).getPort();
    }

    @AfterEach
    void stop() {
        open.forEach(NvmeController::close);
        if (target != null) {
            target.close();
        }
    }

    private NvmeController connect(int port, String hostnqn) throws IOException {
        NvmeController c = TestTarget.openController(port, hostnqn);
        open.add(c);
        return c;
    }

    private int portA() {
        return listenerA.port;
    }

    /**
     * A host sizes its ANA log buffer as 16 + 32 x NANAGRPID + 4 x MNAN bytes and reads it in one command; Linux turns
     * ANA off when that exceeds MDTS. At 8 KiB transfers and 1024 namespaces 128 groups would need 8208 bytes: the
     * controller reports as many groups as fit, and the page of that size reads in one command.
     */
    @Test
    void theAnaLogPageFitsInOneTransfer() throws Exception {
        target.close();
        config.tcp.mdtsBytes = 8192;
        config.subsystems.get(0).maxNamespaces = 1024;
        target = JavaEngine.start(config);
        NvmeController c = connect(portA(), TestTarget.HOSTNQN);
        byte[] ctrl = c.admin().identify(1, 0, 0).data();
        int maxTransfer = 4096 << u8(ctrl, 77);
        long nanagrpid = u32(ctrl, 348);
        long hostBuffer = 16 + 32 * nanagrpid + 4 * u32(ctrl, 540);
        assertThat(maxTransfer).as("MDTS").isEqualTo(8192);
        assertThat(u32(ctrl, 344)).as("ANAGRPMAX: group ids up to 128 as before").isEqualTo(128);
        assertThat(hostBuffer).as("the host's ANA log buffer (NANAGRPID %d) within MDTS", nanagrpid)
            .isLessThanOrEqualTo(maxTransfer);
        assertThat(nanagrpid).as("NANAGRPID: the groups in use fit").isGreaterThanOrEqualTo(2);
        Completion log = c.admin().executeRead(Sqe.of(NvmeHost.OPC_GET_LOG_PAGE).nsid(0)
            .cdw(10, LID_ANA | (1 << 15) | ((int) (hostBuffer / 4 - 1) << 16)), (int) hostBuffer);
        assertThat(log.ok()).as("the whole page in one Get Log Page: %s", log).isTrue();
        assertThat(AnaLogs.groups(log.data())).extracting(g -> g[0]).containsExactly(1, 2);
    }

    @Test
    void identifyReportsAna() throws Exception {
        NvmeController c = connect(portA(), TestTarget.HOSTNQN);
        byte[] ctrl = c.admin().identify(1, 0, 0).data();
        assertThat(u8(ctrl, 76) & 0x8).as("CMIC bit 3: ANA reporting").isEqualTo(0x8);
        assertThat(u32(ctrl, 92) & AEC_ANA_CHANGE).as("OAES bit 11: ANA change notices").isEqualTo(AEC_ANA_CHANGE);
        assertThat(u8(ctrl, 342)).as("ANATT, seconds").isEqualTo(10);
        assertThat(u8(ctrl, 343)).as("ANACAP: five states, ANAGRPID fixed while attached").isEqualTo(0x5F);
        assertThat(u32(ctrl, 344)).as("ANAGRPMAX").isEqualTo(128);
        assertThat(u32(ctrl, 348)).as("NANAGRPID").isEqualTo(128);
        assertThat(u32(ctrl, 540)).as("MNAN: the host sizes its ANA log buffer by it").isEqualTo(
            config.subsystems.get(0).maxNamespaces);
        byte[] supported = c.admin().getLogPage(0x00, 0, 0, 1024).data();
        assertThat(u32(supported, 4 * LID_ANA) & 1).as("log page 0Ch supported").isEqualTo(1);
        assertThat(u32(c.admin().identify(0, 1, 0).data(), 92)).as("ANAGRPID of nsid 1").isEqualTo(1);
        assertThat(u32(c.admin().identify(0, 3, 0).data(), 92)).as("ANAGRPID of nsid 3").isEqualTo(2);
        assertThat(u8(c.admin().identify(0, 3, 0).data(), 30) & 1).as("NMIC: shared").isEqualTo(1);
    }

    @Test
    void eachListenerReportsItsOwnStates() throws Exception {
        byte[] viaA = AnaLogs.read(connect(portA(), TestTarget.HOSTNQN).admin(), false);
        assertThat(u16(viaA, 8)).as("NGRPS").isEqualTo(2);
        assertThat(AnaLogs.groups(viaA)).containsExactly(new int[] {1, ANAS_OPTIMIZED, 1}, new int[] {2, ANAS_NON_OPTIMIZED, 3});
        byte[] viaB = AnaLogs.read(connect(portB, TestTarget.HOSTNQN).admin(), false);
        assertThat(AnaLogs.groups(viaB)).containsExactly(new int[] {1, ANAS_INACCESSIBLE, 1}, new int[] {2, ANAS_OPTIMIZED, 3});
        assertThat(u64(viaB, 16 + 8)).as("descriptor CHGCNT equals the header's").isEqualTo(u64(viaB, 0));

        byte[] rgo = AnaLogs.read(connect(portB, TestTarget.HOSTNQN).admin(), true);
        assertThat(u16(rgo, 8)).isEqualTo(2);
        assertThat(u32(rgo, 16 + 4)).as("RGO: no NSIDs").isZero();
        assertThat(u32(rgo, 48)).as("RGO: the second descriptor follows the first at once").isEqualTo(2);
        assertThat(u8(rgo, 48 + 16)).isEqualTo(ANAS_OPTIMIZED);
        assertThat(rgo[80]).as("nothing after the last descriptor").isZero();
    }

    @Test
    void maskedNamespacesAndTheirGroupsAreLeftOut() throws Exception {
        target.addBdev(new io.nvmf4j.config.BdevConfig("m4", "malloc", 512, 2048));
        NamespaceConfig masked = new NamespaceConfig(4, "m4");
        masked.anaGroup = 3;
        masked.hosts = new ArrayList<>(List.of(OTHER_HOST));
        target.addNamespace(TestTarget.SUBNQN, masked);
        assertThat(AnaLogs.groups(AnaLogs.read(connect(portA(), TestTarget.HOSTNQN).admin(), false))).as("host without nsid 4")
            .containsExactly(new int[] {1, ANAS_OPTIMIZED, 1}, new int[] {2, ANAS_NON_OPTIMIZED, 3});
        assertThat(AnaLogs.groups(AnaLogs.read(connect(portA(), OTHER_HOST).admin(), false))).as("the host nsid 4 is shown to")
            .containsExactly(new int[] {1, ANAS_OPTIMIZED, 1}, new int[] {2, ANAS_NON_OPTIMIZED, 3},
                new int[] {3, ANAS_OPTIMIZED, 4});
    }

    @Test
    void ioFollowsTheStateOfItsPath() throws Exception {
        NvmeController a = connect(portA(), TestTarget.HOSTNQN);
        NvmeController b = connect(portB, TestTarget.HOSTNQN);
        byte[] data = Le.random(TestTarget.BLOCK_SIZE, 5);
        assertThat(a.io(0).write(1, 10, data).ok()).as("optimized").isTrue();
        assertThat(a.io(0).read(3, 10, 1).ok()).as("non-optimized serves I/O").isTrue();
        assertStatus(b.io(0).read(1, 10, 1), SCT_PATH, 0x02, false); // ANA inaccessible, no DNR: fail over
        assertStatus(b.io(0).write(1, 10, data), SCT_PATH, 0x02, false);
        assertStatus(b.io(0).flush(1), SCT_PATH, 0x02, false);
        assertThat(b.io(0).read(3, 10, 1).ok()).as("group 2 is optimized through B").isTrue();

        target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "persistent-loss");
        assertStatus(a.io(0).read(1, 10, 1), SCT_PATH, 0x01, false);
        target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "change");
        assertStatus(a.io(0).write(1, 10, data), SCT_PATH, 0x03, false);
        target.setAnaState(TestTarget.SUBNQN, listenerB, 1, "optimized");
        Completion read = b.io(0).read(1, 10, 1);
        assertThat(read.ok()).as("B took over group 1").isTrue();
        assertThat(read.data()).as("the data written through A").isEqualTo(data);
        assertThat(u16(a.admin().getLogPage(0x01, 0, 0, 64).data(), 12) >> 1 & 0x7FF).as("error log: the last failure")
            .isEqualTo((SCT_PATH << 8) | 0x03);
    }

    @Test
    void stateChangeRaisesTheAnaEventOnItsListenerOnly() throws Exception {
        NvmeController a = connect(portA(), TestTarget.HOSTNQN);
        NvmeController b = connect(portB, TestTarget.HOSTNQN);
        assertThat(a.admin().setFeatures(FID_ASYNC_EVENT_CONFIG, AEC_ANA_CHANGE).ok()).isTrue();
        assertThat(b.admin().setFeatures(FID_ASYNC_EVENT_CONFIG, AEC_ANA_CHANGE).ok()).isTrue();
        long before = u64(AnaLogs.read(a.admin(), false), 0);
        CompletableFuture<Completion> aerA = a.admin().asyncEventRequest();
        CompletableFuture<Completion> aerB = b.admin().asyncEventRequest();

        target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "change");
        Completion event = aerA.get(10, TimeUnit.SECONDS);
        assertThat(event.ok()).isTrue();
        assertThat(event.dw0()).as("notice, ANA change, log page 0Ch").isEqualTo(AEN_ANA_CHANGE);
        byte[] log = AnaLogs.read(a.admin(), false); // RAE set: the event stays masked
        assertThat(u64(log, 0)).as("change count").isGreaterThan(before);
        assertThat(AnaLogs.groups(log).get(0)).containsExactly(1, ANAS_CHANGE, 1);
        TestTarget.settleAdmin(b.admin());
        assertThat(aerB).as("listener B's states did not change").isNotDone();

        CompletableFuture<Completion> next = a.admin().asyncEventRequest();
        target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "inaccessible");
        TestTarget.settleAdmin(a.admin());
        assertThat(next).as("masked until the log is read without RAE").isNotDone();
        assertThat(a.admin().getLogPage(LID_ANA, 0, 0, 4096).ok()).isTrue(); // RAE 0
        target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "optimized");
        assertThat(next.get(10, TimeUnit.SECONDS).dw0()).as("unmasked: the next change is reported")
            .isEqualTo(AEN_ANA_CHANGE);
        assertThat(AnaLogs.groups(AnaLogs.read(a.admin(), false)).get(0)).containsExactly(1, ANAS_OPTIMIZED, 1);

        CompletableFuture<Completion> quiet = a.admin().asyncEventRequest();
        target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "optimized");
        assertThat(a.admin().getLogPage(LID_ANA, 0, 0, 4096).ok()).isTrue();
        TestTarget.settleAdmin(a.admin());
        assertThat(quiet).as("setting the state it has is no change").isNotDone();
    }

    @Test
    void noEventWithoutTheHostsConsent() throws Exception {
        NvmeController a = connect(portA(), TestTarget.HOSTNQN);
        CompletableFuture<Completion> aer = a.admin().asyncEventRequest();
        target.setAnaState(TestTarget.SUBNQN, listenerA, 2, "inaccessible");
        TestTarget.settleAdmin(a.admin());
        assertThat(aer).as("Async Event Configuration bit 11 clear").isNotDone();
        assertThat(AnaLogs.groups(AnaLogs.read(a.admin(), false)).get(1)).containsExactly(2, ANAS_INACCESSIBLE, 3);
    }

    @Test
    void statesAreKeptInTheDocumentAndThroughARestart() throws Exception {
        target.setAnaState(TestTarget.SUBNQN, listenerB, 2, "non-optimized");
        target.setAnaState(TestTarget.SUBNQN, listenerB, 1, "optimized");
        TargetConfig saved = target.configSnapshot();
        ListenerConfig savedB = saved.subsystems.get(0).listeners.get(1);
        assertThat(savedB.anaStates).as("optimized is the default, left out").containsExactly(Map.entry("2",
            "non-optimized"));
        assertThat(target.anaGroups(TestTarget.SUBNQN, listenerB)).containsExactly(
            new AnaGroupInfo(1, "optimized", List.of(1)), new AnaGroupInfo(2, "non-optimized", List.of(3)));
        target.close();
        target = JavaEngine.start(saved);
        portB = target.listeners().get(listenerB).getPort();
        assertThat(AnaLogs.groups(AnaLogs.read(connect(portB, TestTarget.HOSTNQN).admin(), false))).containsExactly(
            new int[] {1, ANAS_OPTIMIZED, 1}, new int[] {2, ANAS_NON_OPTIMIZED, 3});
    }

    @Test
    void badInput() throws Exception {
        assertThatThrownBy(() -> target.setAnaState(TestTarget.SUBNQN, listenerA, 0, "optimized"))
            .isInstanceOf(ControlException.class).hasMessageContaining("group: an ANA group id must be 1..128, got 0");
        assertThatThrownBy(() -> target.setAnaState(TestTarget.SUBNQN, listenerA, 129, "optimized"))
            .hasMessageContaining("got 129");
        assertThatThrownBy(() -> target.setAnaState(TestTarget.SUBNQN, listenerA, 1, "Optimized"))
            .isInstanceOf(ControlException.class)
            .hasMessage("state: must be optimized, non-optimized, inaccessible, persistent-loss, change, got Optimized");
        ListenerConfig unknown = new ListenerConfig("tcp", TestTarget.ADDRESS, 1);
        assertThatThrownBy(() -> target.setAnaState(TestTarget.SUBNQN, unknown, 1, "optimized"))
            .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.kind())
                .isEqualTo(ControlException.Kind.NOT_FOUND));
        assertThat(target.configSnapshot().subsystems.get(0).listeners.get(0).anaStates).as("unchanged")
            .containsExactly(Map.entry("2", "non-optimized"));

        NvmeController a = connect(portA(), TestTarget.HOSTNQN);
        int used = 16 + 2 * 32 + 2 * 4;
        int max = 16 + 128 * 32 + 4 * config.subsystems.get(0).maxNamespaces; // NANAGRPID descriptors, MNAN NSIDs
        assertStatus(a.admin().getLogPage(LID_ANA, 0, max + 4, 64), 0, 0x02, true); // offset past the page
        assertStatus(a.admin().getLogPage(LID_ANA, 0, 2, 64), 0, 0x02, true); // not dword aligned
        Completion tail = a.admin().getLogPage(LID_ANA, 0, used - 4, 64);
        assertThat(tail.ok()).isTrue();
        assertThat(u32(tail.data(), 0)).as("the last NSID").isEqualTo(3);
        assertThat(u32(tail.data(), 4)).as("past the last descriptor reads zero").isZero();
        Completion second = a.admin().getLogPage(LID_ANA, 0, 4096, 64);
        assertThat(second.ok()).as("a second 4 KiB piece, as nvme-cli reads the page: %s", second).isTrue();
        assertThat(a.io(0).read(1, 0, 1).ok()).as("the connection carries on").isTrue();
    }
}
