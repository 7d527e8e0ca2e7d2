package io.nvmf4j.it;

import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
/**
 * Inputs and interleavings found in review: 64-bit offsets and LBAs that overflow signed arithmetic, a
 * write whose namespace is removed while its data is on the way, Disconnect's own response, Connect and
 * Number of Queues ordering. Each must end in exactly one response with the right status.
 */
class EdgeCaseTest {
    /**
     * The host's options; their timeout (10 s) bounds each command, the Connects of a target just started on a busy
     * machine included, and the waits for a PDU or the queue's end below.
     */
    static final TcpHostOptions HOST = TcpHostOptions.DEFAULT;
    static final Duration WAIT = HOST.timeout();

    /** Get Log Page with LPOU bit 31 set (negative as a signed long): Invalid Field, connection intact. */
    @Test
    void getLogPageWithHugeOffset() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, HOST)) {
            Completion r = c.admin().getLogPage(0x02, 0xFFFFFFFF, 0xFFFFFFFF_FFFFFFFCL, 4096);
            assertStatus(r, 0, 0x02, true);
        }
    }

    /** Same on a discovery controller, which any host may open (no allow-list). */
    @Test
    void discoveryGetLogPageWithHugeOffset() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController d = t.discovery("nqn.2014-08.org.example:anyone")) {
            Completion r = d.admin().getLogPage(0x70, 0, 0xFFFFFFFF_FFFFFFFCL, 4096);
            assertStatus(r, 0, 0x02, true);
        }
    }

    /** SLBA near 2^63 (slba + nlb overflows a signed long): LBA Out of Range. */
    @Test
    void readAtSlbaNearLongMaxOnMalloc() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, HOST)) {
            Completion r = c.io(0).read(1, Long.MAX_VALUE, 1);
            assertStatus(r, 0, 0x80, true);
        }
    }

    private static TargetConfig fileConfig(Path dir) {
        TargetConfig c = new TargetConfig();
        c.storage = TestTarget.testStorage();
        BdevConfig b = new BdevConfig("f0", "file", 512, 16384);
        b.path = dir.resolve("f0.img").toString();
        c.bdevs.add(b);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:review";
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "f0"));
        s.listeners.add(new ListenerConfig("tcp", TestTarget.ADDRESS, 0));
        c.subsystems.add(s);
        return c;
    }

    private static NvmeController connect(ConfigController<JavaEngine> t) throws Exception {
        int port = t.engine().tcpListenAddresses().get(0).getPort();
        return NvmeController.open(TestTarget.ADDRESS, port, "nqn.2024-01.io.nvmf4j:review", TestTarget.HOSTNQN,
            30000, 1, HOST);
    }

    /** The same on a file bdev (asynchronous device): LBA Out of Range, no lost completion. */
    @Test
    void readAtSlbaNearLongMaxOnFile(@TempDir Path dir) throws Exception {
        try (ConfigController<JavaEngine> t = JavaEngine.start(fileConfig(dir)); NvmeController c = connect(t)) {
            Completion r = c.io(0).read(1, Long.MAX_VALUE, 1);
            assertStatus(r, 0, 0x80, true);
        }
    }

    /** A write parked in R2T while its namespace and file bdev are removed completes with Invalid Namespace. */
    @Test
    void writeAwaitingH2cDataAfterBdevRemoved(@TempDir Path dir) throws Exception {
        try (ConfigController<JavaEngine> t = JavaEngine.start(fileConfig(dir)); NvmeController c = connect(t)) {
            TcpHost q = c.io(0).queue();
            int cid = TcpHost.RAW_CID_BASE + 1;
            Sqe w = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 0, 32).sgl(Sqe.SGL_TRANSPORT, 0, 16384).cid(cid);
            q.sendRaw(q.encodeCapsule(w, null));
            Pdu r2t = q.readPdu(WAIT);
            assertThat(r2t.type()).isEqualTo(Pdu.R2T);
            int ttag = r2t.u16(10);

            t.removeNamespace("nqn.2024-01.io.nvmf4j:review", 1);
            t.removeBdev("f0");

            q.sendRaw(q.encodeH2cData(cid, ttag, 0, new byte[16384], true));
            Pdu resp = q.readPdu(WAIT);
            assertThat(resp.type()).isEqualTo(Pdu.CAPSULE_RESP);
            int status = resp.u16(22) >>> 1;
            assertThat(status & 0xFF).as("SC").isEqualTo(0x0B);
            assertThat(status & 0x4000).as("DNR").isNotZero();
        }
    }

    /** Fabrics Disconnect on an I/O queue: the host gets its response, then the queue closes. */
    @Test
    void disconnectGetsAResponse() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, HOST)) {
            Completion r = c.io(0).execute(Sqe.fabrics(0x08));
            assertThat(r.ok()).isTrue();
            assertThat(c.io(0).queue().awaitClosed(WAIT)).as("queue closed after Disconnect").isTrue();
            assertThat(c.admin().keepAlive().ok()).as("the admin queue carries on").isTrue();
        }
    }

    /** I/O queue Connect before CC.EN = 1 / CSTS.RDY = 1: Command Sequence Error. */
    @Test
    void ioConnectBeforeEnableIsASequenceError() throws Exception {
        try (TestTarget t = TestTarget.start();
             TcpHost a = t.tcp(HOST); TcpHost q = t.tcp(HOST)) {
            NvmeHost admin = new NvmeHost(a, 512);
            byte[] hostid = NvmeController.hostIdFor(TestTarget.HOSTNQN);
            NvmeHost.ConnectResult r = admin.fabricsConnect(0, 31, 0xFFFF, 30000, TestTarget.HOSTNQN,
                TestTarget.SUBNQN, hostid);
            assertThat(r.ok()).isTrue();
            NvmeHost io = new NvmeHost(q, 512);
            Completion c = io.fabricsConnect(1, 127, r.cntlid(), 0, TestTarget.HOSTNQN, TestTarget.SUBNQN, hostid)
                .completion();
            assertStatus(c, 0, 0x0C, true);
        }
    }

    /** I/O queue Connect with another host identifier than the admin queue's: Connect Invalid Parameters. */
    @Test
    void ioConnectWithAnotherHostIdIsRefused() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, HOST); TcpHost q = t.tcp(HOST)) {
            byte[] other = NvmeController.hostIdFor("nqn.2014-08.org.example:other");
            Completion r = new NvmeHost(q, 512).fabricsConnect(2, 127, c.cntlid(), 0, TestTarget.HOSTNQN,
                TestTarget.SUBNQN, other).completion();
            assertStatus(r, 1, 0x82, true);
            assertThat(r.dw0()).as("IATTR | IPO of HOSTID").isEqualTo(1 << 16);
        }
    }

    /** Number of Queues once I/O queues exist: Command Sequence Error, the grant is unchanged. */
    @Test
    void numberOfQueuesAfterIoQueuesIsASequenceError() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(2, HOST)) {
            assertStatus(c.admin().setFeatures(0x07, 0), 0, 0x0C, true);
            assertThat(c.admin().getFeatures(0x07, 0).dw0()).isEqualTo(0x00010001);
            TestTarget.assertWriteReadBack(c.io(1), 100, 4096, 9);
        }
    }
}
