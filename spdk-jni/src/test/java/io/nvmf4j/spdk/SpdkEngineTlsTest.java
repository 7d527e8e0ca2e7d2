package io.nvmf4j.spdk;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.it.Le;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.spdk.SpdkTools.assertPerfAttachedNothing;
import static io.nvmf4j.spdk.SpdkTools.assertPerfRan;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * NVMe/TCP TLS 1.3 with a PSK on the spdk engine: a listener with {@code secureChannel: required} is SPDK's ssl
 * socket, and each host's {@code hostKeys[].tlsKey} (the interchange format with the newline
 * {@code nvme gen-tls-key} prints, {@code tlsKeyDerivation: rfc8446}) goes through SPDK's keyring into its TCP
 * transport. SPDK's userspace host gets in with the same key (without the newline, as SPDK's keyring_file takes
 * it): bdevperf's verify workload with a SHA-256 PSK, spdk_nvme_perf with a SHA-384 one; a wrong PSK, a host
 * without a PSK and a plain connect attach nothing, while a plain host on the open subsystem's plain listener
 * carries on. The discovery log tells the secure channel of each port; a host added with a PSK through the
 * engine gets in and is out again once removed; a replaced PSK file applies to the next connection.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkEngineTlsTest extends SpdkEngineSecurity {
    static final String RUNTIME_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000b1";
    static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000b2";
    static final String ROTATING_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000b3";

    /** The TLS listener of both subsystems, and the open subsystem's plain one. */
    static int tlsPort;
    static int plainPort;
    /** key file name → the same key as the host's copy (no newline: SPDK's keyring_file reads the file as is). */
    static final Map<String, Path> hostCopies = new HashMap<>();

    /** A PSK as nvme gen-tls-key prints it (with its newline) for the target, and the host's copy without it. */
    static Path psk(String name, int hash, int length) throws Exception {
        String text = SpdkTools.spdkHostPsk(RANDOM, hash, length, TestTarget.HOSTNQN, TestTarget.ALLOWED_HOSTNQN,
            RUNTIME_HOST, OTHER_HOST, ROTATING_HOST);
        hostCopies.put(name, SpdkTools.secretFile(dir, name + ".host", text));
        return SpdkTools.secretFile(dir, name, text + "\n");
    }

    static HostKeyConfig tlsKey(String host, Path file) {
        HostKeyConfig k = new HostKeyConfig(host, null, null);
        k.tlsKey = file.toString();
        k.tlsKeyDerivation = TlsPsk.Derivation.RFC8446.configName();
        return k;
    }

    static Path host(Path targetFile) {
        return hostCopies.get(targetFile.getFileName().toString());
    }

    @BeforeAll
    static void start() throws Exception {
        SpdkTools.assumeBuilt();
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        SubsystemConfig open = cfg.subsystems.get(0);
        SubsystemConfig restricted = cfg.subsystems.get(1);
        ListenerConfig plain = new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick());
        for (SubsystemConfig s : cfg.subsystems) {
            s.listeners.get(0).secureChannel = ListenerConfig.SECURE_REQUIRED;
        }
        open.listeners.add(plain);
        restricted.hostKeys.add(tlsKey(TestTarget.ALLOWED_HOSTNQN, psk("restricted.psk", 1, 32)));
        open.hostKeys.add(tlsKey(TestTarget.HOSTNQN, psk("open.psk", 2, 48)));
        tlsPort = open.listeners.get(0).port; // free ports picked by EngineTarget.document and above
        plainPort = plain.port;
        startWith(cfg, plainPort, OTHER_HOST);
    }

    static SpdkTools.Run perf(int port, String subnqn, String hostnqn, Path hostPsk) throws Exception {
        String trid = SpdkTools.trid(TestTarget.ADDRESS, port, subnqn, hostnqn);
        return SpdkTools.run(hostPsk == null ? SpdkTools.perfCommand(trid)
            : SpdkTools.perfCommand(trid, "-S", "ssl", "--psk-path", hostPsk.toString()));
    }

    @Test
    void bdevperfVerifiesAndPerfRunsOverTlsWithBothHashes() throws Exception {
        SpdkTools.Run verify = SpdkTools.bdevperfVerify(TestTarget.ADDRESS, tlsPort, TestTarget.RESTRICTED_NQN,
            TestTarget.ALLOWED_HOSTNQN, 3, hostCopies.get("restricted.psk"));
        SpdkTools.assertVerified(verify, "bdevperf over TLS with a SHA-256 PSK");
        assertPerfRan(perf(tlsPort, TestTarget.SUBNQN, TestTarget.HOSTNQN, hostCopies.get("open.psk")),
            "spdk_nvme_perf over TLS with a SHA-384 PSK");
        assertBystanderCarriesOn(1);
    }

    @Test
    void aWrongPskNoPskAndPlainConnectsAttachNothing() throws Exception {
        Path wrong = psk("wrong.psk", 1, 32);
        assertPerfAttachedNothing(perf(tlsPort, TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, host(wrong)),
            "a wrong PSK");
        assertPerfAttachedNothing(perf(tlsPort, TestTarget.SUBNQN, OTHER_HOST, host(wrong)),
            "a host without a PSK on the allowAnyHost subsystem");
        assertPerfAttachedNothing(perf(tlsPort, TestTarget.SUBNQN, TestTarget.HOSTNQN, null),
            "plain NVMe/TCP on the listener that requires TLS");
        assertBystanderCarriesOn(2);
        assertPerfRan(perf(tlsPort, TestTarget.SUBNQN, TestTarget.HOSTNQN, hostCopies.get("open.psk")),
            "the right PSK after the refusals");
        assertPerfRan(perf(plainPort, TestTarget.SUBNQN, TestTarget.HOSTNQN, null),
            "plain NVMe/TCP on the plain listener");
    }

    @Test
    void aHostAddedWithAPskGetsInAndIsOutOnceRemoved() throws Exception {
        Path key = psk("runtime.psk", 1, 32);
        engine.addHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, tlsKey(null, key));
        try {
            assertPerfRan(perf(tlsPort, TestTarget.RESTRICTED_NQN, RUNTIME_HOST, host(key)), "a host added with a PSK");
        } finally {
            engine.removeHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST);
        }
        assertPerfAttachedNothing(perf(tlsPort, TestTarget.RESTRICTED_NQN, RUNTIME_HOST, host(key)), "a removed host");
        engine.addHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, tlsKey(null, key));
        try {
            assertPerfRan(perf(tlsPort, TestTarget.RESTRICTED_NQN, RUNTIME_HOST, host(key)),
                "the same host added again (its key names in SPDK's keyring are new ones)");
        } finally {
            engine.removeHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST);
        }
        assertBystanderCarriesOn(3);
    }

    /**
     * A PSK file replaced while the target runs applies to the next connection (SPDK's TCP transport reads a PSK when
     * the host is added; the engine has it read again once the file changed, within half a second), and the key
     * before it no longer gets in.
     */
    @Test
    void aReplacedPskFileAppliesToTheNextConnection() throws Exception {
        Path key = psk("rotating.psk", 1, 32);
        Path old = host(key);
        engine.addHost(TestTarget.RESTRICTED_NQN, ROTATING_HOST, tlsKey(null, key));
        try {
            assertPerfRan(perf(tlsPort, TestTarget.RESTRICTED_NQN, ROTATING_HOST, old), "the PSK before the rotation");
            Path next = psk("rotating.next", 1, 32);
            Files.move(next, key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            SpdkTools.Run rotated = null;
            for (int attempt = 0; attempt < 5; attempt++) {
                Thread.sleep(SpdkEngine.CONTROLLER_POLL_MS * 2);
                rotated = perf(tlsPort, TestTarget.RESTRICTED_NQN, ROTATING_HOST, host(next));
                if (rotated.output().contains("Total")) {
                    break;
                }
            }
            assertPerfRan(rotated, "the rotated PSK");
            assertPerfAttachedNothing(perf(tlsPort, TestTarget.RESTRICTED_NQN, ROTATING_HOST, old),
                "the PSK before the rotation");
        } finally {
            engine.removeHost(TestTarget.RESTRICTED_NQN, ROTATING_HOST);
        }
        assertBystanderCarriesOn(4);
    }

    /**
     * The discovery log (read in plain over the plain listener) tells each port's secure channel as SPDK's target
     * does: TREQ bits 1:0 01b (required) and TSAS SECTYPE 2 (TLS 1.3) on the TLS port, 10b and SECTYPE 0 on the
     * plain one.
     */
    @Test
    void discoveryLogTellsTheSecureChannel() throws Exception {
        try (NvmeController d = NvmeController.open(TestTarget.ADDRESS, plainPort, NvmeHost.DISCOVERY_NQN,
            TestTarget.HOSTNQN, 0, 0, TcpHostOptions.DEFAULT)) {
            Completion header = d.admin().getLogPage(0x70, 0, 0, 16);
            assertThat(header.ok()).as("%s", header).isTrue();
            int numrec = (int) Le.u64(header.data(), 8);
            Completion all = d.admin().getLogPage(0x70, 0, 0, 1024 * (numrec + 1));
            assertThat(all.ok()).as("%s", all).isTrue();
            byte[] log = all.data();
            Map<String, Integer> seen = new HashMap<>();
            for (int i = 0; i < numrec; i++) {
                int o = 1024 + i * 1024;
                int treq = Le.u8(log, o + 3);
                int port = Integer.parseInt(new String(log, o + 32, 32, StandardCharsets.US_ASCII).trim());
                String subnqn = Le.cString(log, o + 256, 256);
                int sectype = Le.u8(log, o + 768);
                if (port == tlsPort) {
                    assertThat(treq & 3).as("TREQ secure channel of %s on the TLS port", subnqn).isEqualTo(1);
                    assertThat(sectype).as("TSAS SECTYPE of %s on the TLS port", subnqn).isEqualTo(2);
                } else {
                    assertThat(port).isEqualTo(plainPort);
                    assertThat(treq & 3).as("TREQ secure channel of %s on the plain port", subnqn).isEqualTo(2);
                    assertThat(sectype).as("TSAS SECTYPE of %s on the plain port", subnqn).isZero();
                }
                seen.merge(subnqn + " " + port, 1, Integer::sum);
            }
            assertThat(seen).containsKeys(TestTarget.SUBNQN + " " + tlsPort, TestTarget.SUBNQN + " " + plainPort);
        }
    }
}
