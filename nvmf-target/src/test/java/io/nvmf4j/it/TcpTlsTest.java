package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.auth.TlsPsk.Derivation;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.DiscoveryConfig;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ControllerLog;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import io.nvmf4j.testhost.TlsRelay;
import org.bouncycastle.tls.CipherSuite;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.ADDRESS;
import static io.nvmf4j.it.TestTarget.ALLOWED_HOSTNQN;
import static io.nvmf4j.it.TestTarget.HOSTNQN;
import static io.nvmf4j.it.TestTarget.KATO_MS;
import static io.nvmf4j.it.TestTarget.RESTRICTED_NQN;
import static io.nvmf4j.it.TestTarget.SUBNQN;
import static io.nvmf4j.it.TestTarget.assertWriteReadBack;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * NVMe/TCP TLS 1.3 with a PSK over loopback: the test host's connections go through {@link TlsRelay} (Bouncy Castle's
 * TLS client with the host's PSK) to a listener that requires TLS and another where it is optional. I/O with a
 * SHA-256 and a SHA-384 key and with version 0 and 1 identities; a wrong PSK, an unknown identity, garbage instead
 * of a ClientHello, a handshake that stops halfway and plain NVMe/TCP on the required listener each close that
 * connection only, while a TLS controller connected before carries on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpTlsTest {
    /**
     * tcp.connectTimeoutMs of the targets here, and the test host's wait for each answer: a connection's first TLS
     * handshake in the JVM (a cipher suite's first use loads and compiles its code) took over 10 s on a loaded core.
     */
    private static final int TLS_WAIT_MS = 30_000;
    private static final TcpHostOptions HOST = new TcpHostOptions(false, false, 8192, Duration.ofMillis(TLS_WAIT_MS));
    /**
     * tcp.connectTimeoutMs of the halfway test, which waits it out. It bounds the good controller's connections too
     * (TLS handshake through the relay, ICReq and Connect of each queue), which a loaded machine makes take seconds.
     */
    private static final int HANDSHAKE_TIMEOUT_MS = 10_000;

    @TempDir
    Path dir;

    private TestTarget t;
    private int optionalPort;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final String restrictedKeyText = TlsPsk.format(1, Le.random(32, 11));
    private final String openKeyText = TlsPsk.format(2, Le.random(48, 12));
    private final TlsPsk restrictedKey = TlsPsk.parse(restrictedKeyText);
    private final TlsPsk openKey = TlsPsk.parse(openKeyText);
    /** HOSTNQN's PSK for the discovery subsystem (discovery.hostKeys). */
    private final String discoveryKeyText = TlsPsk.format(1, Le.random(32, 13));
    private final TlsPsk discoveryKey = TlsPsk.parse(discoveryKeyText);

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        if (t != null) {
            t.close();
        }
    }

    /** Both subsystems on the standard listener (TLS required) and on a second one (TLS optional). */
    private void start() throws IOException {
        start(TLS_WAIT_MS);
    }

    private void start(int connectTimeoutMs) throws IOException {
        start(connectTimeoutMs, c -> { });
    }

    private void start(int connectTimeoutMs, java.util.function.Consumer<TargetConfig> more) throws IOException {
        optionalPort = FreePorts.pick();
        Path rk = writeKey("restricted.psk", restrictedKeyText);
        Path ok = writeKey("open.psk", openKeyText);
        Path dk = writeKey("discovery.psk", discoveryKeyText);
        t = TestTarget.start(c -> {
            c.tcp.connectTimeoutMs = connectTimeoutMs;
            for (SubsystemConfig s : c.subsystems) {
                s.listeners.get(0).secureChannel = ListenerConfig.SECURE_REQUIRED;
                ListenerConfig optional = new ListenerConfig("tcp", ADDRESS, optionalPort);
                optional.secureChannel = ListenerConfig.SECURE_OPTIONAL;
                s.listeners.add(optional);
            }
            subsystem(c, RESTRICTED_NQN).hostKeys.add(tlsKey(ALLOWED_HOSTNQN, rk));
            subsystem(c, SUBNQN).hostKeys.add(tlsKey(HOSTNQN, ok));
            c.discovery = new DiscoveryConfig();
            c.discovery.hostKeys.add(tlsKey(HOSTNQN, dk));
            more.accept(c);
        });
    }

    private static HostKeyConfig tlsKey(String host, Path file) {
        HostKeyConfig k = new HostKeyConfig(host, null, null);
        k.tlsKey = file.toString();
        return k;
    }

    private static SubsystemConfig subsystem(TargetConfig c, String nqn) {
        return c.subsystems.stream().filter(s -> s.nqn.equals(nqn)).findFirst().orElseThrow();
    }

    private Path writeKey(String name, String key) throws IOException {
        Path f = dir.resolve(name);
        Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(f, key + "\n");
        return f;
    }

    private TlsRelay relay(int port, TlsPsk key, String hostnqn, String subnqn, int version, byte[] wrongPsk)
        throws IOException {
        TlsPsk.Identity id = TlsPsk.Identity.parse(key.identity(Derivation.LIBNVME, version, hostnqn, subnqn));
        byte[] psk = wrongPsk != null ? wrongPsk : key.tlsPsk(Derivation.LIBNVME, id);
        TlsRelay r = new TlsRelay(ADDRESS, port, id.text(), psk, id.hash());
        open.add(r);
        return r;
    }

    private NvmeController controller(TlsRelay r, String subnqn, String hostnqn) throws IOException {
        NvmeController c = NvmeController.open(ADDRESS, r.port(), subnqn, hostnqn, KATO_MS, 1, HOST);
        open.add(c);
        return c;
    }

    @Test
    void ioOverTlsWithBothHashesAndBothIdentityVersions() throws IOException {
        start();
        TlsRelay sha256 = relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null);
        NvmeController c = controller(sha256, RESTRICTED_NQN, ALLOWED_HOSTNQN);
        assertWriteReadBack(c.io(0), 0, 4096, 1);
        assertWriteReadBack(c.io(0), 64, 128 * 1024, 2); // several TLS records each way
        assertThat(sha256.handshakes()).as("admin and I/O queue, each its own TLS connection").isEqualTo(2);

        TlsRelay sha384v1 = relay(t.port, openKey, HOSTNQN, SUBNQN, 1, null);
        NvmeController d = controller(sha384v1, SUBNQN, HOSTNQN);
        assertWriteReadBack(d.io(0), 8, 64 * 1024, 3);
        assertThat(sha384v1.handshakes()).isEqualTo(2);
    }

    /**
     * The Linux host of Debian 13 with a SHA-384 PSK ({@code nvme gen-tls-key --hmac=2}): its tlshd (ktls-utils
     * 1.0.0 on GnuTLS 3.8.9) offers the identity {@code NVMe0R02 ...} and the 48-byte TLS PSK libnvme derived, but
     * GnuTLS before 3.8.11 computes every external PSK's binder with SHA-256, its priority for a 48-byte key offers
     * TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256, and it accepts only a suite of the binder's hash. The
     * target took such a binder for SHA-384 and refused it ("Invalid PSK binder"); now it completes the one
     * handshake that host can: the PSK with SHA-256, TLS_CHACHA20_POLY1305_SHA256.
     */
    @Test
    void sha384PskWithTheSha256BinderOfGnuTlsBefore3811() throws Exception {
        start();
        TlsPsk.Identity id = TlsPsk.Identity.parse(openKey.identity(Derivation.LIBNVME, 0, HOSTNQN, SUBNQN));
        byte[] psk = openKey.tlsPsk(Derivation.LIBNVME, id);
        assertThat(id.text()).startsWith("NVMe0R02 ");
        assertThat(psk).hasSize(48);
        try (LogCapture log = new LogCapture("io.nvmf4j.transport.tcp")) {
            TlsRelay gnutls = new TlsRelay(ADDRESS, t.port, id.text(), psk, 1,
                CipherSuite.TLS_AES_256_GCM_SHA384, CipherSuite.TLS_CHACHA20_POLY1305_SHA256);
            open.add(gnutls);
            NvmeController c = controller(gnutls, SUBNQN, HOSTNQN);
            assertWriteReadBack(c.io(0), 8, 64 * 1024, 13);
            assertThat(gnutls.handshakes()).isEqualTo(2);
            assertThat(log.await("TLS 1.3 from", Duration.ofSeconds(5)).getFormattedMessage())
                .contains(id.text(), "TLS_CHACHA20_POLY1305_SHA256", "SHA-256 binder");
        }
    }

    /**
     * A PSK authenticates the host and subsystem its identity names, no other pair: a Connect over that TLS
     * connection naming another subsystem fails with Connect Invalid Parameters (IATTR/IPO at SUBNQN), naming another
     * host with Connect Invalid Host (at HOSTNQN), each logged with the identity's NQNs; the matching Connect works.
     */
    @Test
    void connectMustNameTheTlsIdentitysHostAndSubsystem() throws Exception {
        start();
        TlsRelay r = relay(t.port, openKey, HOSTNQN, SUBNQN, 0, null); // the identity: HOSTNQN on SUBNQN
        ControllerLog.resetRefusalWindow(); // other tests in this JVM refuse Connects too (the log is rate-limited)
        try (LogCapture log = new LogCapture("io.nvmf4j")) {
            Completion otherSubsystem = adminConnect(r, RESTRICTED_NQN, HOSTNQN);
            assertThat(otherSubsystem.ok()).isFalse();
            assertThat(otherSubsystem.sct() << 8 | otherSubsystem.sc()).as("Connect Invalid Parameters")
                .isEqualTo(NvmeStatus.CONNECT_INVALID_PARAMETERS & 0x7ff);
            assertThat(otherSubsystem.dw0()).as("IATTR 1, IPO: SUBNQN in the Connect data").isEqualTo((1 << 16) | 256);
            assertThat(log.await("TLS PSK identity", Duration.ofSeconds(5)).getFormattedMessage())
                .contains(RESTRICTED_NQN, "is for host " + HOSTNQN + " and subsystem " + SUBNQN);

            Completion otherHost = adminConnect(r, SUBNQN, ALLOWED_HOSTNQN);
            assertThat(otherHost.sct() << 8 | otherHost.sc()).as("Connect Invalid Host")
                .isEqualTo(NvmeStatus.CONNECT_INVALID_HOST & 0x7ff);
            assertThat(otherHost.dw0()).as("IATTR 1, IPO: HOSTNQN in the Connect data").isEqualTo((1 << 16) | 512);
        }
        NvmeController ok = controller(r, SUBNQN, HOSTNQN);
        assertWriteReadBack(ok.io(0), 24, 4096, 14);
    }

    private Completion adminConnect(TlsRelay r, String subnqn, String hostnqn) throws IOException {
        NvmeHost q = new NvmeHost(TcpHost.connect(ADDRESS, r.port(), HOST), 512);
        try {
            return q.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, KATO_MS, hostnqn, subnqn,
                NvmeController.hostIdFor(hostnqn)).completion();
        } finally {
            q.queue().close();
        }
    }

    /**
     * Many commands in flight on one TLS queue: responses gathered for the next record while new records
     * arrive (the Linux host's fio verify at QD 16 and spdk_nvme_perf at QD 8 once saw a corrupted stream).
     */
    @Test
    void manyCommandsInFlightOverTls() throws Exception {
        start();
        TlsRelay r = relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null);
        NvmeController c = controller(r, RESTRICTED_NQN, ALLOWED_HOSTNQN);
        io.nvmf4j.testhost.TcpHost q = c.io(0).queue();
        int n = 24;
        byte[][] data = new byte[n][];
        java.util.List<java.util.concurrent.CompletableFuture<io.nvmf4j.testhost.Completion>> writes = new java.util.ArrayList<>();
        for (int round = 0; round < 4; round++) {
            writes.clear();
            for (int i = 0; i < n; i++) {
                data[i] = Le.random(8192, 1000L * round + i);
                writes.add(q.submit(io.nvmf4j.testhost.NvmeHost.rw(io.nvmf4j.testhost.NvmeHost.OPC_WRITE, 1, 16L * i, 16),
                    data[i], 0));
            }
            for (var w : writes) {
                assertThat(w.get(20, java.util.concurrent.TimeUnit.SECONDS).ok()).as("write over TLS").isTrue();
            }
            java.util.List<java.util.concurrent.CompletableFuture<io.nvmf4j.testhost.Completion>> reads = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                reads.add(q.submit(io.nvmf4j.testhost.NvmeHost.rw(io.nvmf4j.testhost.NvmeHost.OPC_READ, 1, 16L * i, 16),
                    null, 8192));
            }
            for (int i = 0; i < n; i++) {
                io.nvmf4j.testhost.Completion back = reads.get(i).get(20, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(back.ok()).as("read over TLS").isTrue();
                assertThat(back.data()).as("round %d, block range %d read back over TLS", round, i).isEqualTo(data[i]);
            }
        }
    }

    /**
     * A queue kept full over TLS: a new command as soon as one completes, 100 deep, 3000 commands, every
     * read checked. (Behind TLS a request is free once the TLS handler has its response; on loopback the
     * socket also drains at once, so this does not single that rule out: it guards the whole path at depth.)
     */
    @Test
    void aQueueKeptFullOverTls() throws Exception {
        start();
        TlsRelay r = relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null);
        NvmeController c = controller(r, RESTRICTED_NQN, ALLOWED_HOSTNQN);
        io.nvmf4j.testhost.TcpHost q = c.io(0).queue();
        byte[] data = Le.random(4096, 77);
        for (int i = 0; i < 64; i++) {
            assertThat(c.io(0).write(1, 8L * i, data).ok()).isTrue();
        }
        int depth = 100;
        java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(depth);
        java.util.concurrent.atomic.AtomicInteger bad = new java.util.concurrent.atomic.AtomicInteger();
        for (int i = 0; i < 3000; i++) {
            assertThat(slots.tryAcquire(20, java.util.concurrent.TimeUnit.SECONDS)).as("command %d got a slot", i).isTrue();
            boolean write = i % 2 == 0;
            q.submit(io.nvmf4j.testhost.NvmeHost.rw(write ? io.nvmf4j.testhost.NvmeHost.OPC_WRITE
                        : io.nvmf4j.testhost.NvmeHost.OPC_READ, 1, 8L * (i % 64), 8), write ? data : null, write ? 0 : 4096)
                .whenComplete((done, e) -> {
                    if (e != null || !done.ok() || (!write && !java.util.Arrays.equals(done.data(), data))) {
                        bad.incrementAndGet();
                    }
                    slots.release();
                });
        }
        assertThat(slots.tryAcquire(depth, 30, java.util.concurrent.TimeUnit.SECONDS)).as("all completed").isTrue();
        assertThat(bad.get()).as("failed or wrong completions").isZero();
        assertThat(q.isClosed()).as("the connection stays up").isFalse();
    }

    @Test
    void wrongPskUnknownIdentityGarbageAndPlainFailThatConnectionOnly() throws Exception {
        start();
        NvmeController good = controller(relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null),
            RESTRICTED_NQN, ALLOWED_HOSTNQN);
        try (LogCapture log = new LogCapture("io.nvmf4j.transport.tcp")) {
            // the right identity with another key: the PSK binder does not verify
            TlsRelay wrong = relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, Le.random(32, 99));
            assertThatThrownBy(() -> controller(wrong, RESTRICTED_NQN, ALLOWED_HOSTNQN)).isInstanceOf(IOException.class);
            assertThat(wrong.failures()).isEqualTo(1);
            assertThat(log.await("handshake failed", Duration.ofSeconds(5)).getFormattedMessage()).contains("127.0.0.1");
            // a host with no PSK on that subsystem (the identity names the open one's host on the restricted one)
            TlsRelay unknown = relay(t.port, openKey, HOSTNQN, RESTRICTED_NQN, 0, null);
            assertThatThrownBy(() -> controller(unknown, RESTRICTED_NQN, HOSTNQN)).isInstanceOf(IOException.class);
            assertThat(unknown.failures()).isEqualTo(1);
            // plain NVMe/TCP on the listener that requires TLS
            TcpHost plain = TcpHost.open(ADDRESS, t.port, HOST);
            open.add(plain);
            plain.sendRaw(TcpHost.icReq(0, false, false));
            assertThat(plain.awaitClosed(Duration.ofSeconds(5))).as("plain ICReq on a required listener").isTrue();
            assertThat(plain.icResp()).isNull();
            assertThat(log.await("requires TLS", Duration.ofSeconds(5)).getFormattedMessage()).contains("0x0");
            // a TLS record header followed by garbage instead of a ClientHello
            assertClosedAfter(new byte[] {0x16, 0x03, 0x01, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8}, Duration.ofSeconds(5));
        }
        assertWriteReadBack(good.io(0), 0, 4096, 4);
        assertThat(good.admin().identify(1, 0, 0).ok()).isTrue();
    }

    @Test
    void handshakeThatStopsHalfwayIsClosedAfterTheTimeout() throws Exception {
        start(HANDSHAKE_TIMEOUT_MS);
        NvmeController good = controller(relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null),
            RESTRICTED_NQN, ALLOWED_HOSTNQN);
        try (LogCapture log = new LogCapture("io.nvmf4j.transport.tcp")) {
            long start = System.nanoTime();
            // a record header announcing 512 bytes of ClientHello, and only 4 of them
            assertClosedAfter(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc},
                Duration.ofMillis(HANDSHAKE_TIMEOUT_MS + 20_000));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(ms).as("closed after the %d ms handshake limit", HANDSHAKE_TIMEOUT_MS)
                .isGreaterThanOrEqualTo(HANDSHAKE_TIMEOUT_MS - 100);
            assertThat(log.await("no ICReq within", Duration.ofSeconds(5)).getFormattedMessage())
                .contains(HANDSHAKE_TIMEOUT_MS + " ms");
            log.await("handshake not finished", Duration.ofSeconds(5));
        }
        assertWriteReadBack(good.io(0), 0, 8192, 5);
    }

    @Test
    void optionalListenerTakesTlsAndPlain() throws IOException {
        start();
        NvmeController tls = controller(relay(optionalPort, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null),
            RESTRICTED_NQN, ALLOWED_HOSTNQN);
        assertWriteReadBack(tls.io(0), 0, 4096, 6);
        NvmeController plain = NvmeController.open(ADDRESS, optionalPort, SUBNQN, NO_PSK_HOSTNQN, KATO_MS, 1,
            HOST);
        open.add(plain);
        assertWriteReadBack(plain.io(0), 16, 4096, 7);
        NvmeHost admin = plain.admin();
        assertThat(admin.identify(1, 0, 0).ok()).isTrue();
    }

    /** A host of the open subsystem (allowAnyHost) without a TLS PSK anywhere. */
    private static final String NO_PSK_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000f3";

    /**
     * A host with a TLS PSK proves it on every queue, whatever listener the queue comes through: a plain Connect
     * naming that host, on a plain listener or in plain on an optional one, for its admin queue or for an I/O queue
     * of its TLS controller, is refused with Connect Invalid Host (SCT 1h, SC 84h, DNR; IATTR 1, IPO at HOSTNQN) and
     * logged; the same host over TLS connects and serves I/O, and a host without a PSK still connects in plain.
     */
    @Test
    void aPskHostWithoutTlsIsRefusedWhateverTheListener() throws Exception {
        int plainPort = FreePorts.pick();
        start(TLS_WAIT_MS, c -> c.subsystems.forEach(s -> s.listeners.add(new ListenerConfig("tcp", ADDRESS, plainPort))));
        ControllerLog.resetRefusalWindow(); // other tests in this JVM refuse Connects too (the log is rate-limited)
        try (LogCapture log = new LogCapture("io.nvmf4j")) {
            for (int port : new int[]{plainPort, optionalPort}) {
                Completion restricted = plainAdminConnect(port, RESTRICTED_NQN, ALLOWED_HOSTNQN);
                assertPskHostRefused(restricted);
                assertPskHostRefused(plainAdminConnect(port, SUBNQN, HOSTNQN));
            }
            assertThat(log.await("has a TLS PSK", Duration.ofSeconds(5)).getFormattedMessage())
                .contains(ALLOWED_HOSTNQN, "this queue is not over TLS", "tcp:" + ADDRESS + ":" + plainPort);
        }
        TlsRelay r = relay(t.port, restrictedKey, ALLOWED_HOSTNQN, RESTRICTED_NQN, 0, null);
        NvmeController tls = NvmeController.open(ADDRESS, r.port(), RESTRICTED_NQN, ALLOWED_HOSTNQN, KATO_MS, 2,
            HOST);
        open.add(tls);
        assertWriteReadBack(tls.io(0), 0, 4096, 31);

        // an I/O queue of that TLS controller (qid 2, given up by its host), connected in plain with its cntlid and
        // host ID
        tls.io(1).queue().close();
        NvmeHost io = new NvmeHost(TcpHost.connect(ADDRESS, plainPort, HOST), 512);
        open.add(io.queue());
        assertPskHostRefused(io.fabricsConnect(2, 31, tls.cntlid(), 0, ALLOWED_HOSTNQN, RESTRICTED_NQN,
            tls.hostid()).completion());
        assertWriteReadBack(tls.io(0), 8, 4096, 32);

        NvmeController plain = NvmeController.open(ADDRESS, plainPort, SUBNQN, NO_PSK_HOSTNQN, KATO_MS, 1,
            HOST);
        open.add(plain);
        assertWriteReadBack(plain.io(0), 16, 4096, 33);
    }

    private static void assertPskHostRefused(Completion c) {
        TestTarget.assertStatus(c, 1, 0x84, true);
        assertThat(c.dw0()).as("IATTR 1, IPO: HOSTNQN in the Connect data").isEqualTo((1 << 16) | 512);
    }

    private Completion plainAdminConnect(int port, String subnqn, String hostnqn) throws IOException {
        NvmeHost q = new NvmeHost(TcpHost.connect(ADDRESS, port, HOST), 512);
        try {
            return q.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, KATO_MS, hostnqn, subnqn,
                NvmeController.hostIdFor(hostnqn)).completion();
        } finally {
            q.queue().close();
        }
    }

    /**
     * The discovery log (read in plain over the optional listener) tells each entry's secure channel as nvmet's does:
     * TREQ bits 1:0 01b required / 10b not required (with bit 2, SQ flow control disable), TSAS SECTYPE 2 (TLS 1.3).
     */
    @Test
    void discoveryLogTellsTheSecureChannel() throws IOException {
        start();
        NvmeController d = NvmeController.open(ADDRESS, optionalPort, NvmeHost.DISCOVERY_NQN, NO_PSK_HOSTNQN, 0, 0,
            HOST);
        open.add(d);
        assertDiscoveryLogTellsTheSecureChannel(d);
        // a host with a PSK for the discovery subsystem discovers over TLS only
        ControllerLog.resetRefusalWindow();
        assertPskHostRefused(plainAdminConnect(optionalPort, NvmeHost.DISCOVERY_NQN, HOSTNQN));
    }

    /**
     * {@code nvme discover --tls} on a listener that requires TLS: the host's identity names the discovery NQN
     * ({@code NVMe0R01 <hostnqn> nqn.2014-08.org.nvmexpress.discovery}) and the PSK configured for that host on the
     * discovery subsystem ({@code discovery.hostKeys}) completes the handshake; the log read through it tells the
     * secure channel. A host whose only key is on a subsystem is refused at the handshake, and the discovery
     * identity does not open a subsystem (Connect Invalid Parameters at SUBNQN).
     */
    @Test
    void discoveryOverTlsOnARequiredListener() throws Exception {
        start();
        TlsRelay r = relay(t.port, discoveryKey, HOSTNQN, NvmeHost.DISCOVERY_NQN, 0, null);
        NvmeController d = NvmeController.open(ADDRESS, r.port(), NvmeHost.DISCOVERY_NQN, HOSTNQN, 0, 0,
            HOST);
        open.add(d);
        assertDiscoveryLogTellsTheSecureChannel(d);
        assertThat(r.handshakes()).isEqualTo(1);

        TlsRelay noKey = relay(t.port, restrictedKey, ALLOWED_HOSTNQN, NvmeHost.DISCOVERY_NQN, 0, null);
        try (LogCapture log = new LogCapture("io.nvmf4j.transport.tcp")) {
            assertThatThrownBy(() -> NvmeController.open(ADDRESS, noKey.port(), NvmeHost.DISCOVERY_NQN,
                ALLOWED_HOSTNQN, 0, 0, HOST)).isInstanceOf(IOException.class);
            assertThat(log.await("handshake failed", Duration.ofSeconds(5)).getFormattedMessage())
                .contains("no configured PSK");
        }
        assertThat(noKey.failures()).isEqualTo(1);

        ControllerLog.resetRefusalWindow(); // other tests in this JVM refuse Connects too (the log is rate-limited)
        Completion subsystem = adminConnect(r, SUBNQN, HOSTNQN);
        assertThat(subsystem.sct() << 8 | subsystem.sc()).as("Connect Invalid Parameters")
            .isEqualTo(NvmeStatus.CONNECT_INVALID_PARAMETERS & 0x7ff);
        assertThat(d.admin().getLogPage(0x70, 0, 0, 16).ok()).as("the discovery controller carries on").isTrue();
    }

    private void assertDiscoveryLogTellsTheSecureChannel(NvmeController d) {
        Completion header = d.admin().getLogPage(0x70, 0, 0, 16);
        int numrec = (int) Le.u64(header.data(), 8);
        byte[] log = d.admin().getLogPage(0x70, 0, 0, 1024 * (numrec + 1)).data();
        int seen = 0;
        for (int i = 0; i < numrec; i++) {
            DiscoveryTest.Entry e = DiscoveryTest.Entry.parse(log, i);
            int sectype = Le.u8(log, 1024 + i * 1024 + 768);
            int port = Integer.parseInt(new String(e.trsvcid(), java.nio.charset.StandardCharsets.US_ASCII).trim());
            if (port == t.port) {
                assertThat(e.treq()).as("TREQ of %s on the required listener", e.subnqn()).isEqualTo(0x05);
            } else {
                assertThat(port).isEqualTo(optionalPort);
                assertThat(e.treq()).as("TREQ of %s on the optional listener", e.subnqn()).isEqualTo(0x06);
            }
            assertThat(sectype).as("TSAS SECTYPE of %s", e.subnqn()).isEqualTo(2);
            seen++;
        }
        assertThat(seen).as("the open subsystem on both listeners (and the discovery entries)").isGreaterThanOrEqualTo(2);
    }

    /** Sends {@code bytes} on a new connection to the required listener and waits for the target to close it. */
    private void assertClosedAfter(byte[] bytes, Duration within) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(ADDRESS, t.port), 5000);
            OutputStream out = s.getOutputStream();
            out.write(bytes);
            out.flush();
            s.setSoTimeout((int) within.toMillis());
            byte[] buf = new byte[256];
            int n;
            do {
                n = s.getInputStream().read(buf); // an alert may come first, then the end of the stream
            } while (n > 0);
            assertThat(n).as("end of stream").isEqualTo(-1);
        }
    }
}
