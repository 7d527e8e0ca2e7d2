package io.nvmf4j.spdk;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.it.TestTarget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPDK's userspace host over NVMe/TCP TLS 1.3 with a PSK against the java engine, on a listener that requires TLS:
 * bdevperf's verify workload with a SHA-256 PSK (SPDK's keyring_file key named by bdev_nvme's {@code psk}) finishes
 * with no failed I/O, spdk_nvme_perf with a SHA-384 PSK ({@code -S ssl --psk-path}) reads and writes; SPDK derives
 * the retained and TLS PSK as RFC 8446 says, so the keys have {@code tlsKeyDerivation: rfc8446}. A wrong PSK and a
 * plain connect attach nothing, and the target lives on.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkHostTlsTest {
    @TempDir
    Path dir;

    /** A PSK file as SPDK's keyring_file takes it: mode 0600, the interchange format without a newline. */
    private Path key(String name, int hash, int length) throws Exception {
        return SpdkTools.secretFile(dir, name, SpdkTools.spdkHostPsk(new SecureRandom(), hash, length,
            TestTarget.HOSTNQN, TestTarget.ALLOWED_HOSTNQN));
    }

    private static HostKeyConfig tlsKey(String host, Path file) {
        HostKeyConfig k = new HostKeyConfig(host, null, null);
        k.tlsKey = file.toString();
        k.tlsKeyDerivation = TlsPsk.Derivation.RFC8446.configName();
        return k;
    }

    private static SpdkTools.Run perf(int port, String subnqn, String hostnqn, Path psk) throws Exception {
        String trid = SpdkTools.trid(TestTarget.ADDRESS, port, subnqn, hostnqn);
        return SpdkTools.run(psk == null ? SpdkTools.perfCommand(trid)
            : SpdkTools.perfCommand(trid, "-S", "ssl", "--psk-path", psk.toString()));
    }

    @Test
    void bdevperfVerifyAndPerfOverTlsWithBothHashes() throws Exception {
        SpdkTools.assumeBuilt();
        Path sha256 = key("restricted.psk", 1, 32);
        Path sha384 = key("open.psk", 2, 48);
        Path wrong = key("wrong.psk", 1, 32);
        int port = FreePorts.pick();
        TargetConfig cfg = TestTarget.config(port);
        for (SubsystemConfig s : cfg.subsystems) {
            s.listeners.get(0).secureChannel = ListenerConfig.SECURE_REQUIRED;
            s.hostKeys.add(s.nqn.equals(TestTarget.RESTRICTED_NQN) ? tlsKey(TestTarget.ALLOWED_HOSTNQN, sha256)
                : tlsKey(TestTarget.HOSTNQN, sha384));
        }
        try (ConfigController<JavaEngine> target = JavaEngine.start(cfg)) {
            SpdkTools.Run verify = SpdkTools.bdevperfVerify(TestTarget.ADDRESS, port, TestTarget.RESTRICTED_NQN,
                TestTarget.ALLOWED_HOSTNQN, 3, sha256);
            SpdkTools.assertVerified(verify, "bdevperf over TLS");

            SpdkTools.Run perf = perf(port, TestTarget.SUBNQN, TestTarget.HOSTNQN, sha384);
            assertThat(perf.exitCode()).as("spdk_nvme_perf over TLS; it printed:\n%s", perf.output()).isZero();
            assertThat(perf.output()).contains("Total").doesNotContain("No valid NVMe controllers found");

            SpdkTools.Run bad = perf(port, TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, wrong);
            assertThat(bad.output()).as("spdk_nvme_perf with a wrong PSK")
                .contains("No valid NVMe controllers found").doesNotContain("Total");
            SpdkTools.Run plain = perf(port, TestTarget.SUBNQN, TestTarget.HOSTNQN, null);
            assertThat(plain.output()).as("spdk_nvme_perf without TLS on a listener that requires it")
                .contains("No valid NVMe controllers found").doesNotContain("Total");

            SpdkTools.Run again = perf(port, TestTarget.SUBNQN, TestTarget.HOSTNQN, sha384);
            assertThat(again.output()).as("the target lives on after the refusals").contains("Total");
        }
    }
}
