package io.nvmf4j.spdk;

import io.nvmf4j.auth.DhchapKey;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.it.TestTarget;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.spdk.SpdkTools.assertPerfAttachedNothing;
import static io.nvmf4j.spdk.SpdkTools.assertPerfRan;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DH-HMAC-CHAP on the spdk engine: the document's {@code hostKeys} (the java engine's key files, DHHC-1 with the
 * newline {@code nvme gen-dhchap-key} writes) go into SPDK's keyring and SPDK's target authenticates with them.
 * SPDK's userspace host ({@code spdk_nvme_perf --dhchap-key [--dhchap-ctrlr-key]}, bdevperf's verify workload with
 * keyring keys) authenticates uni- and bidirectionally; a wrong key, no key or a wrong controller key attaches
 * nothing; a host with keys on an {@code allowAnyHost} subsystem must authenticate too; a replaced key file applies
 * to the next authentication; keys given through the engine's {@code addHost} work and leave with
 * {@code removeHost}; a key file others may read is refused. A plain host without keys stays connected and does
 * I/O throughout.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkEngineAuthTest extends SpdkEngineSecurity {
    static final String KEYED_ANY_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000a1";
    static final String RUNTIME_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000a2";

    static int port;
    static Path hostKey;
    static Path ctrlKey;
    static Path anyHostKey;

    /** A DHHC-1 key as nvme gen-dhchap-key writes it (newline included), in a file of mode 0600. */
    static Path key(String name, int hash, int length) throws Exception {
        return SpdkTools.secretFile(dir, name, keyText(hash, length));
    }

    static String keyText(int hash, int length) {
        byte[] secret = new byte[length];
        RANDOM.nextBytes(secret);
        return DhchapKey.format(hash, secret) + "\n";
    }

    @BeforeAll
    static void start() throws Exception {
        SpdkTools.assumeBuilt();
        hostKey = key("host.key", 1, 32);
        ctrlKey = key("ctrl.key", 3, 64);
        anyHostKey = key("any.key", 2, 48);
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        SubsystemConfig open = cfg.subsystems.get(0);
        SubsystemConfig restricted = cfg.subsystems.get(1);
        restricted.hosts.add(TestTarget.HOSTNQN);
        restricted.hostKeys.add(new HostKeyConfig(TestTarget.ALLOWED_HOSTNQN, hostKey.toString(), ctrlKey.toString()));
        open.hostKeys.add(new HostKeyConfig(KEYED_ANY_HOST, anyHostKey.toString(), null));
        port = open.listeners.get(0).port; // a free port picked by EngineTarget.document
        startWith(cfg, port, TestTarget.HOSTNQN);
    }

    static SpdkTools.Run perf(String subnqn, String hostnqn, Path key, Path ctrl) throws Exception {
        List<String> extra = new ArrayList<>();
        if (key != null) {
            extra.addAll(List.of("--dhchap-key", key.toString()));
        }
        if (ctrl != null) {
            extra.addAll(List.of("--dhchap-ctrlr-key", ctrl.toString()));
        }
        return SpdkTools.run(SpdkTools.perfCommand(SpdkTools.trid(TestTarget.ADDRESS, port, subnqn, hostnqn),
            extra.toArray(String[]::new)));
    }

    @Test
    void spdkHostsAuthenticateUniAndBidirectionallyAndVerify() throws Exception {
        assertPerfRan(perf(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, hostKey, null),
            "spdk_nvme_perf, unidirectional");
        assertPerfRan(perf(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, hostKey, ctrlKey),
            "spdk_nvme_perf, bidirectional");
        SpdkTools.Run verify = SpdkTools.bdevperfVerify(TestTarget.ADDRESS, port, TestTarget.RESTRICTED_NQN,
            TestTarget.ALLOWED_HOSTNQN, 2, Map.of("dhchap_key", hostKey, "dhchap_ctrlr_key", ctrlKey));
        SpdkTools.assertVerified(verify, "bdevperf with DH-HMAC-CHAP, bidirectional");
        assertPerfRan(perf(TestTarget.RESTRICTED_NQN, TestTarget.HOSTNQN, null, null),
            "a host without keys on the same subsystem");
        assertBystanderCarriesOn(1);
    }

    @Test
    void wrongMissingAndWrongControllerKeysAttachNothing() throws Exception {
        Path wrong = key("wrong.key", 1, 32);
        Path wrongCtrl = key("wrong-ctrl.key", 3, 64);
        String allowed = TestTarget.ALLOWED_HOSTNQN;
        assertPerfAttachedNothing(perf(TestTarget.RESTRICTED_NQN, allowed, wrong, null), "a wrong key");
        assertPerfAttachedNothing(perf(TestTarget.RESTRICTED_NQN, allowed, null, null), "no key");
        assertPerfAttachedNothing(perf(TestTarget.RESTRICTED_NQN, allowed, hostKey, wrongCtrl),
            "the controller proving itself with a key the host does not expect");
        assertPerfAttachedNothing(perf(TestTarget.SUBNQN, KEYED_ANY_HOST, null, null),
            "a keyed host on an allowAnyHost subsystem without its key");
        assertPerfRan(perf(TestTarget.SUBNQN, KEYED_ANY_HOST, anyHostKey, null),
            "a keyed host on an allowAnyHost subsystem with its key (SHA-384)");
        assertBystanderCarriesOn(2);
        assertPerfRan(perf(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, hostKey, ctrlKey),
            "the right keys after the refusals");
    }

    @Test
    void aReplacedKeyFileAppliesToTheNextAuthentication() throws Exception {
        Path rotating = key("rotating.key", 1, 32);
        Path old = SpdkTools.secretFile(dir, "rotating.old", Files.readString(rotating));
        engine.addHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, new HostKeyConfig(null, rotating.toString(), null));
        try {
            assertPerfRan(perf(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, rotating, null), "a host added with a key");
            Path next = SpdkTools.secretFile(dir, "rotating.next", keyText(1, 32));
            Files.move(next, rotating, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            assertPerfAttachedNothing(perf(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, old, null),
                "the key before the rotation");
            assertPerfRan(perf(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, rotating, null), "the rotated key");
            assertThat(engine.configSnapshot().subsystems.get(1).hostKeys).as("the document keeps the path only")
                .contains(new HostKeyConfig(RUNTIME_HOST, rotating.toString(), null));
        } finally {
            engine.removeHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST);
        }
        assertPerfAttachedNothing(perf(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, rotating, null), "a removed host");
        assertThat(engine.configSnapshot().subsystems.get(1).hostKeys).extracting(k -> k.host)
            .doesNotContain(RUNTIME_HOST);
        assertBystanderCarriesOn(3);
    }

    @Test
    void aKeyFileOthersMayReadIsRefusedAndNothingChanges() throws Exception {
        Path open = key("open.key", 1, 32);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> engine.addHost(TestTarget.RESTRICTED_NQN, RUNTIME_HOST,
            new HostKeyConfig(null, open.toString(), null)))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("hostKeys").hasMessageContaining("dhchapKey");
        assertThat(engine.configSnapshot().subsystems.get(1).hosts).doesNotContain(RUNTIME_HOST);
        assertPerfAttachedNothing(perf(TestTarget.RESTRICTED_NQN, RUNTIME_HOST, hostKey, null),
            "a host whose add was refused");
        assertThatThrownBy(() -> engine.setAllowAnyHost(TestTarget.SUBNQN, false))
            .as("a keyed host that only allowAnyHost admits").isInstanceOf(ConfigException.class)
            .hasMessageContaining(KEYED_ANY_HOST);
        assertBystanderCarriesOn(4);
    }
}
