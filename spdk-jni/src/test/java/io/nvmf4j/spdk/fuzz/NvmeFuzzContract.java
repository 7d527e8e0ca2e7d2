package io.nvmf4j.spdk.fuzz;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.spdk.Spdk;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPDK's {@code nvme_fuzz} (random admin and I/O commands on valid namespaces, fixed seed) against an engine
 * over NVMe/TCP loopback: the fuzzer finishes, the target answered many thousand commands, and afterwards a
 * well-behaved host still connects and reads back what it wrote. One subclass per engine, each in a JVM of its
 * own (spdk-jni's surefire forks per class).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class NvmeFuzzContract {
    static final String NQN = "nqn.2026-11.io.nvmf4j:fuzz";
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:0b7a4c1e-2f3d-4e5a-8b6c-00000000f022";
    static final int FUZZ_SECONDS = 10;
    static final int SEED = 20261201;

    static Engine engine;

    /** A document with one malloc namespace on a TCP listener at a free port, for {@code engine}. */
    static TargetConfig config(String engineName) {
        TargetConfig c = new TargetConfig();
        c.engine = engineName;
        c.cores = 1;
        c.spdk.hugepages = false;
        c.spdk.memSizeMb = 512;
        c.spdk.coreLocks = false; // nvme_fuzz and other suites may use SPDK on this machine too
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 65536));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = NQN;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "m0"));
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", 0));
        c.subsystems.add(s);
        return c;
    }

    /** The SPDK tree the build used (spdk-jni's pom passes the file naming it). */
    static Path spdkTree() throws IOException {
        Assumptions.assumeFalse(Spdk.builtWithoutSpdk(), () -> "this build found no SPDK: "
            + Spdk.unavailabilityCause());
        Path file = Path.of(System.getProperty("nvmf4j.spdk.dirFile", "target/spdk-dir"));
        assertThat(file).as("the build records the SPDK tree it used").exists();
        return Path.of(Files.readString(file).trim());
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
            engine = null;
        }
    }

    private static int port() {
        return engine.listeners().values().iterator().next().getPort();
    }

    @Test
    void theTargetSurvivesNvmeFuzzAndStillServesAWellBehavedHost() throws Exception {
        Path fuzz = spdkTree().resolve("test/app/fuzz/nvme_fuzz/nvme_fuzz");
        assertThat(fuzz).isExecutable();
        Path out = Files.createTempFile("nvme_fuzz", ".log");
        try {
            String trid = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:" + port() + " subnqn:" + NQN;
            Process p = new ProcessBuilder(List.of(fuzz.toString(), "-m", "0x2", "--no-huge", "-s", "512",
                "--no-rpc-server", "--disable-cpumask-locks", "-U", "-t", Integer.toString(FUZZ_SECONDS),
                "-S", Integer.toString(SEED), "-N", "-a", "-F", trid))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            assertThat(p.waitFor(FUZZ_SECONDS + 60L, TimeUnit.SECONDS)).as("nvme_fuzz finished").isTrue();
            String log = Files.readString(out, StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as("nvme_fuzz exit status; its output ends:%n%s", tail(log)).isZero();
            assertThat(log).contains("Fuzzing completed");
            assertThat(completed(log, "I/O qp")).as("I/O commands the target answered").isGreaterThan(1000);
            assertThat(completed(log, "admin qp")).as("admin commands the target answered").isGreaterThan(100);
        } finally {
            Files.deleteIfExists(out);
        }

        try (NvmeController c = NvmeController.open("127.0.0.1", port(), NQN, HOSTNQN, 0, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = new byte[4096];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i * 31 + 7);
            }
            assertThat(io.write(1, 1024, data).ok()).isTrue();
            Completion r = io.read(1, 1024, 8);
            assertThat(r.ok()).isTrue();
            assertThat(r.data()).isEqualTo(data);
        }
    }

    /** "Total commands completed: N" of the fuzzer's summary line for that queue. */
    private static long completed(String log, String queue) {
        Matcher m = Pattern.compile(Pattern.quote(queue) + ", Total commands completed: (\\d+)").matcher(log);
        long total = 0;
        while (m.find()) {
            total += Long.parseLong(m.group(1));
        }
        return total;
    }

    private static String tail(String log) {
        String[] lines = log.split("\n");
        return String.join("\n", java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - 20), lines.length));
    }
}
