package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Well-framed but invalid NVMe and Fabrics commands: each gets its exact status, and a healthy
 * controller connected beforehand still writes and reads correctly afterwards.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmeBadInputTest {
    private static final int SCT_GENERIC = 0;
    private static final int SCT_COMMAND_SPECIFIC = 1;
    private static final int SC_INVALID_OPCODE = 0x01;
    private static final int SC_INVALID_FIELD = 0x02;
    private static final int SC_COMMAND_SEQUENCE_ERROR = 0x0C;
    private static final int SC_INVALID_NAMESPACE = 0x0B;
    private static final int SC_DATA_SGL_LENGTH_INVALID = 0x0F;
    private static final int SC_SGL_DESCRIPTOR_TYPE_INVALID = 0x11;
    private static final int SC_LBA_OUT_OF_RANGE = 0x80;
    private static final int SC_CONNECT_INVALID_PARAMETERS = 0x82;
    private static final int SC_CONNECT_INVALID_HOST = 0x84;

    static TestTarget target;
    static NvmeController healthy;
    static NvmeController ctrl;
    static final AtomicLong seed = new AtomicLong(200);

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
        healthy = target.controller(1, TcpHostOptions.DEFAULT);
        ctrl = target.controller(1, TcpHostOptions.DEFAULT);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {ctrl, healthy, target}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    @AfterEach
    void healthyControllerStillWorks() {
        assertThat(healthy.admin().keepAlive().ok()).as("healthy admin queue").isTrue();
        TestTarget.assertWriteReadBack(healthy.io(0), 50_000, 8192, seed.incrementAndGet());
    }

    private static NvmeHost io() {
        return ctrl.io(0);
    }

    // ---- Opcodes and queues ----

    @Test
    void invalidIoOpcode() {
        assertStatus(io().execute(Sqe.of(0x7E).nsid(1)), SCT_GENERIC, SC_INVALID_OPCODE, true);
    }

    @Test
    void invalidAdminOpcode() {
        assertStatus(ctrl.admin().execute(Sqe.of(0x7E)), SCT_GENERIC, SC_INVALID_OPCODE, true);
    }

    /** Flush (00h) on the admin queue is Delete I/O SQ, which a fabrics controller does not have. */
    @Test
    void ioCommandOnAdminQueue() {
        assertStatus(ctrl.admin().execute(Sqe.of(NvmeHost.OPC_FLUSH).nsid(1)), SCT_GENERIC, SC_INVALID_OPCODE, true);
    }

    @Test
    void adminCommandOnIoQueue() {
        assertStatus(io().identify(0x01, 0, 0), SCT_GENERIC, SC_INVALID_OPCODE, true);
    }

    // ---- Namespaces and LBA ranges ----

    @ParameterizedTest(name = "nsid 0x{0}")
    @ValueSource(ints = {0, 99, 0xFFFFFFFF})
    void readOfInvalidNamespace(int nsid) {
        Completion c = io().executeRead(NvmeHost.rw(NvmeHost.OPC_READ, nsid, 0, 1), 512);
        assertStatus(c, SCT_GENERIC, SC_INVALID_NAMESPACE, true);
    }

    @Test
    void lbaRangePastTheEnd() {
        long end = TestTarget.NUM_BLOCKS;
        assertStatus(io().read(1, end - 1, 2), SCT_GENERIC, SC_LBA_OUT_OF_RANGE, true);
        assertStatus(io().write(1, end, new byte[512]), SCT_GENERIC, SC_LBA_OUT_OF_RANGE, true);
        assertStatus(io().write(1, end - 8, new byte[16384]), SCT_GENERIC, SC_LBA_OUT_OF_RANGE, true);
    }

    // ---- SGLs ----

    @ParameterizedTest(name = "SGL identifier 0x{0}")
    @ValueSource(ints = {0x40, 0x30})
    void unsupportedSglType(int sglIdentifier) {
        Sqe read = NvmeHost.rw(NvmeHost.OPC_READ, 1, 0, 1).sgl(sglIdentifier, 0, 512);
        Completion c = io().await(io().queue().submitAsIs(read, null, 512));
        assertStatus(c, SCT_GENERIC, SC_SGL_DESCRIPTOR_TYPE_INVALID, true);
    }

    @Test
    void inCapsuleSglLengthDiffersFromData() {
        Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 0, 2).sgl(Sqe.SGL_IN_CAPSULE, 0, 1024);
        Completion c = io().await(io().queue().submitAsIs(write, new byte[512], 0));
        assertStatus(c, SCT_GENERIC, SC_DATA_SGL_LENGTH_INVALID, true);
    }

    // ---- Fabrics ----

    @Test
    void connectToUnknownSubsystem() throws Exception {
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(tcp, TestTarget.BLOCK_SIZE);
            Completion c = h.fabricsConnect(0, 31, 0xFFFF, 30000, TestTarget.HOSTNQN, "nqn.2024-01.io.nvmf4j:nope",
                    NvmeController.hostIdFor(TestTarget.HOSTNQN)).completion();
            assertStatus(c, SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_PARAMETERS, true);
            assertThat(c.dw0()).as("IATTR=1 (data), IPO=256 (SUBNQN)").isEqualTo((1 << 16) | 256);
        }
    }

    @Test
    void connectWithHostNotAllowed() throws Exception {
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(tcp, TestTarget.BLOCK_SIZE);
            Completion c = h.fabricsConnect(0, 31, 0xFFFF, 30000, TestTarget.HOSTNQN, TestTarget.RESTRICTED_NQN,
                    NvmeController.hostIdFor(TestTarget.HOSTNQN)).completion();
            assertStatus(c, SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_HOST, true);
        }
    }

    @Test
    void ioQueueConnectWithUnknownCntlid() throws Exception {
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(tcp, TestTarget.BLOCK_SIZE);
            Completion c = h.fabricsConnect(1, 127, 0xFFEE, 0, TestTarget.HOSTNQN, TestTarget.SUBNQN,
                    NvmeController.hostIdFor(TestTarget.HOSTNQN)).completion();
            assertStatus(c, SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_PARAMETERS, true);
            assertThat(c.dw0()).as("IATTR=1 (data), IPO=16 (CNTLID)").isEqualTo((1 << 16) | 16);
        }
    }

    @Test
    void truncatedConnectData() throws Exception {
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(tcp, TestTarget.BLOCK_SIZE);
            byte[] data = NvmeHost.connectData(NvmeController.hostIdFor(TestTarget.HOSTNQN), 0xFFFF,
                    TestTarget.SUBNQN, TestTarget.HOSTNQN);
            Completion c = h.executeWrite(NvmeHost.connectCommand(0, 31, 0, 30000), Arrays.copyOf(data, 512));
            assertStatus(c, SCT_GENERIC, SC_DATA_SGL_LENGTH_INVALID, true);
        }
    }

    @Test
    void commandBeforeConnect() throws Exception {
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(tcp, TestTarget.BLOCK_SIZE);
            assertStatus(h.identify(0x01, 0, 0), SCT_GENERIC, SC_COMMAND_SEQUENCE_ERROR, true);
        }
    }

    @Test
    void propertySetOfReadOnlyRegisters() {
        assertStatus(ctrl.admin().propertySet(NvmeHost.PROP_CAP, 0, true), SCT_GENERIC, SC_INVALID_FIELD, true);
        assertStatus(ctrl.admin().propertySet(NvmeHost.PROP_CSTS, 0, false), SCT_GENERIC, SC_INVALID_FIELD, true);
        assertThat(ctrl.admin().propertyGet(NvmeHost.PROP_CSTS, false).dw0() & 1).as("CSTS.RDY unchanged").isEqualTo(1);
    }

    // ---- issue 9: PSDT, a second Connect while the first waits for its data ----

    @Test
    void commandsWithoutSglsAreInvalidField() {
        for (int flags : new int[] {0x00, 0x80, 0xC0}) {
            Completion io = io().execute(Sqe.of(NvmeHost.OPC_FLUSH).nsid(1).u8(1, flags));
            assertStatus(io, 0, SC_INVALID_FIELD, true);
            Completion admin = ctrl.admin().execute(Sqe.of(NvmeHost.OPC_KEEP_ALIVE).u8(1, flags));
            assertStatus(admin, 0, SC_INVALID_FIELD, true);
        }
        assertThat(io().flush(1).ok()).as("PSDT 01b").isTrue();
    }

    /**
     * The first Connect's data comes by R2T; before the host sends it, a second Connect arrives in-capsule:
     * the second is a Command Sequence Error, the first then connects, and the subsystem has one controller
     * more, not two.
     */
    @Test
    void secondConnectWhileTheFirstWaitsForItsDataIsCommandSequenceError() throws Exception {
        int before = target.nvmf().controllers(TestTarget.SUBNQN).size();
        try (TcpHost tcp = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] data = NvmeHost.connectData(NvmeController.hostIdFor(TestTarget.HOSTNQN), 0xFFFF, TestTarget.SUBNQN,
                TestTarget.HOSTNQN);
            int cid = TcpHost.RAW_CID_BASE;
            Sqe first = NvmeHost.connectCommand(0, 31, 0, 30000).cid(cid).sgl(Sqe.SGL_TRANSPORT, 0, data.length);
            tcp.sendRaw(tcp.encodeCapsule(first, null));
            Pdu r2t = tcp.readPdu(Duration.ofSeconds(5));
            assertThat(r2t.type()).as("R2T for the first Connect's data").isEqualTo(Pdu.R2T);

            CompletableFuture<Completion> second = tcp.submit(NvmeHost.connectCommand(0, 31, 0, 30000), data, 0);
            assertStatus(second.get(5, TimeUnit.SECONDS), 0, SC_COMMAND_SEQUENCE_ERROR, true);

            tcp.sendRaw(tcp.encodeH2cData(cid, r2t.u16(10), 0, data, true));
            Pdu resp = tcp.readPdu(Duration.ofSeconds(5));
            assertThat(resp.type()).isEqualTo(Pdu.CAPSULE_RESP);
            Completion firstDone = Completion.fromCapsuleResp(resp, null);
            assertThat(firstDone.ok()).as("the first Connect: %s", firstDone).isTrue();
            assertThat(target.nvmf().controllers(TestTarget.SUBNQN)).as("one controller more, not two")
                .hasSize(before + 1);
        }
    }
}
