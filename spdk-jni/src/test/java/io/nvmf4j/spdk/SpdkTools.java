package io.nvmf4j.spdk;

import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.it.ToolOutput;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPDK as this build found it: whether the spdk engine can be tested here, and SPDK's own host tools
 * (spdk_nvme_identify, bdevperf) from the tree the build linked against, run as child processes on core 1
 * (the spdk engine's reactor owns core 0).
 */
final class SpdkTools {
    /** Set by spdk-jni's pom: a file holding the path of the SPDK tree the library was built against. */
    static final String DIR_FILE_PROPERTY = "nvmf4j.spdk.dirFile";
    private static final long TOOL_TIMEOUT_S = 60;

    private SpdkTools() {
    }

    /**
     * Skips (saying why) only where this build found no SPDK at all; anywhere else the engine must load, so a
     * broken library fails the test instead of skipping it.
     */
    static void assumeBuilt() {
        Assumptions.assumeFalse(Spdk.builtWithoutSpdk(), () -> "this build found no SPDK (no SPDK_DIR and no "
            + "vendored tarball): " + Spdk.unavailabilityCause());
        assertThat(Spdk.unavailabilityCause()).as("the spdk engine was built and must load").isNull();
    }

    /** The SPDK tree the build used; assumes {@link #assumeBuilt()} passed. */
    static Path tree() throws IOException {
        String dirFile = System.getProperty(DIR_FILE_PROPERTY);
        assertThat(dirFile).as("system property " + DIR_FILE_PROPERTY + " (set by spdk-jni's pom)").isNotNull();
        Path tree = Paths.get(Files.readString(Paths.get(dirFile), StandardCharsets.UTF_8).trim());
        assertThat(tree.resolve("build/bin/spdk_nvme_identify")).as("SPDK's tree").isExecutable();
        return tree;
    }

    /**
     * What a finished tool printed (stdout and stderr together, its beginning and end when longer than
     * {@link ToolOutput}'s bound), the whole lines its caller asked to keep, and its exit status.
     */
    record Run(int exitCode, String output, List<String> kept) {
    }

    /**
     * Runs {@code command}, failing the test when it does not finish within a minute. It runs with no core file
     * (ulimit -c 0): a tool that crashes says so in its status and output, and leaves nothing in the module.
     */
    static Run run(List<String> command) throws IOException, InterruptedException {
        return run(command, l -> false);
    }

    /**
     * What SPDK's host prints when a Fabric Connect got no answer within its own bound: 500 ms in a release build
     * ({@code NVME_FABRIC_CONNECT_COMMAND_TIMEOUT}), which neither spdk_nvme_perf nor bdevperf lets a caller change.
     */
    static final String HOST_CONNECT_TIMEOUT = "Connect command failed, rc -125";
    /**
     * The SPDK host's bounds that a loaded machine can pass while nothing is wrong: the 500 ms Fabric Connect
     * ({@link #HOST_CONNECT_TIMEOUT}); spdk_nvme_perf's 10 s for every I/O queue to connect (with DH-HMAC-CHAP each
     * authenticates, on a reactor that shares its core); the connection lost while the admin queue's first Property
     * Get was on its way (the target gave up on a host that answered late). A run that shows one is run again: a
     * refusal stays a refusal, and an accepted run that should have been refused still fails its test.
     */
    static final List<String> HOST_TIMEOUTS = List.of(HOST_CONNECT_TIMEOUT, "ERROR: qpair connect timeout",
        "Failed to send Property Get fabrics command");
    /** How often a tool that met one of {@link #HOST_TIMEOUTS} is run in all. */
    static final int CONNECT_TIMEOUT_ATTEMPTS = 3;

    /**
     * The same, keeping whole every line of the output for which {@code keep} is true. A run that met one of the SPDK
     * host's fixed bounds ({@link #HOST_TIMEOUTS}: a cold or loaded target answers a little later) is run again, up to
     * {@value #CONNECT_TIMEOUT_ATTEMPTS} times in all, and says so; every other outcome is the caller's to judge.
     */
    static Run run(List<String> command, Predicate<String> keep) throws IOException, InterruptedException {
        List<String> noCore = new ArrayList<>(List.of("sh", "-c", "ulimit -c 0 && exec \"$@\"", "sh"));
        noCore.addAll(command);
        for (int attempt = 1; ; attempt++) {
            ToolOutput.Finished f = ToolOutput.run(noCore, TOOL_TIMEOUT_S, keep);
            if (f.timedOut()) {
                throw new AssertionError(command.get(0) + " did not finish within " + TOOL_TIMEOUT_S + " s:\n"
                    + f.output().text());
            }
            Run r = new Run(f.exitCode(), f.output().text(), f.output().keptLines());
            String met = HOST_TIMEOUTS.stream().filter(r.output()::contains).findFirst().orElse(null);
            if (met == null || attempt == CONNECT_TIMEOUT_ATTEMPTS) {
                return r;
            }
            System.out.println("SpdkTools: " + Path.of(command.get(0)).getFileName() + " met one of the SPDK host's"
                + " fixed bounds (\"" + met + "\"); running it again (attempt " + (attempt + 1) + " of "
                + CONNECT_TIMEOUT_ATTEMPTS + ")");
        }
    }

    /** SPDK's transport ID string for a TCP subsystem on IPv4. */
    static String trid(String address, int port, String subnqn, String hostnqn) {
        return "trtype:TCP adrfam:IPv4 traddr:" + address + " trsvcid:" + port + " subnqn:" + subnqn
            + " hostnqn:" + hostnqn;
    }

    /** spdk_nvme_identify against one subsystem, in 256 MiB of ordinary memory on core 1. */
    static Run identify(String trid) throws IOException, InterruptedException {
        return run(List.of(tree().resolve("build/bin/spdk_nvme_identify").toString(), "--no-huge", "-s", "256", "-p",
            "1", "-r", trid));
    }

    /**
     * bdevperf's verify workload (write, read back, compare) for {@code seconds} on every namespace of a TCP
     * subsystem, attached through bdev_nvme, on core 1 with no RPC server and no core lock files.
     */
    static Run bdevperfVerify(String address, int port, String subnqn, String hostnqn, int seconds)
        throws IOException, InterruptedException {
        return bdevperfVerify(address, port, subnqn, hostnqn, seconds, (Path) null);
    }

    /**
     * The same over NVMe/TCP TLS when {@code psk} is not null: the PSK file (interchange format, mode 0600) in
     * SPDK's keyring ({@code keyring_file_add_key}), named by the controller's {@code psk}, which makes bdev_nvme
     * connect through the ssl socket implementation.
     */
    static Run bdevperfVerify(String address, int port, String subnqn, String hostnqn, int seconds, Path psk)
        throws IOException, InterruptedException {
        return bdevperfVerify(address, port, subnqn, hostnqn, seconds, psk == null ? Map.of() : Map.of("psk", psk));
    }

    /**
     * The same with keys: {@code keys} maps bdev_nvme_attach_controller's key parameters ({@code psk},
     * {@code dhchap_key}, {@code dhchap_ctrlr_key}) to key files (mode 0600), each added to SPDK's keyring
     * ({@code keyring_file_add_key}) and named by that parameter.
     */
    static Run bdevperfVerify(String address, int port, String subnqn, String hostnqn, int seconds,
                              Map<String, Path> keys) throws IOException, InterruptedException {
        Path json = Files.createTempFile("nvmf4j-bdevperf", ".json");
        try {
            StringBuilder keyring = new StringBuilder();
            StringBuilder params = new StringBuilder();
            for (Map.Entry<String, Path> k : new TreeMap<>(keys).entrySet()) {
                keyring.append(keyring.length() == 0 ? "" : ", ").append("{\"method\": \"keyring_file_add_key\", ")
                    .append("\"params\": {\"name\": \"").append(k.getKey()).append("\", \"path\": \"")
                    .append(k.getValue()).append("\"}}");
                params.append(", \"").append(k.getKey()).append("\": \"").append(k.getKey()).append('"');
            }
            Files.writeString(json, "{\"subsystems\": ["
                + (keys.isEmpty() ? "" : "{\"subsystem\": \"keyring\", \"config\": [" + keyring + "]}, ")
                + "{\"subsystem\": \"bdev\", \"config\": [{\"method\": "
                + "\"bdev_nvme_attach_controller\", \"params\": {\"name\": \"Nvme0\", \"trtype\": \"tcp\", "
                + "\"adrfam\": \"IPv4\", \"traddr\": \"" + address + "\", \"trsvcid\": \"" + port + "\", "
                + "\"subnqn\": \"" + subnqn + "\", \"hostnqn\": \"" + hostnqn + "\"" + params + "}}]}]}");
            List<String> cmd = new ArrayList<>(List.of(tree().resolve("build/examples/bdevperf").toString(),
                "--no-huge", "-s", "512", "-m", "0x2", "--no-rpc-server", "--disable-cpumask-locks",
                "-c", json.toString(), "-q", "16", "-o", "4096", "-w", "verify", "-t", Integer.toString(seconds)));
            return run(cmd);
        } finally {
            Files.deleteIfExists(json);
        }
    }

    /**
     * SPDK's nvme_fuzz for {@code seconds} with a fixed seed: random admin and I/O commands on the subsystem's
     * valid namespaces, on core 1 with no RPC server and no core lock files. It prints each command it sends as a
     * JSON block (hundreds of MB in a few seconds), so the run keeps only its summary lines whole ("Fuzzing
     * completed", and each queue's "Total commands completed: N").
     */
    static Run fuzz(String trid, int seconds, int seed) throws IOException, InterruptedException {
        return run(List.of(tree().resolve("test/app/fuzz/nvme_fuzz/nvme_fuzz").toString(), "-m", "0x2", "--no-huge",
            "-s", "512", "--no-rpc-server", "--disable-cpumask-locks", "-U", "-t", Integer.toString(seconds), "-S",
            Integer.toString(seed), "-N", "-a", "-F", trid),
            l -> l.startsWith("Fuzzing completed") || l.contains("Total commands completed:"));
    }

    /**
     * A random configured PSK in the interchange format ({@code hash}: its retained-PSK hash, 1 or 2; {@code length}
     * 32 or 48 bytes) whose TLS PSK, as SPDK derives it (RFC 8446 labels, identity version 0), does not start with a
     * zero byte for any of {@code hosts} with {@link TestTarget#SUBNQN} or
     * {@link TestTarget#RESTRICTED_NQN}. SPDK's host (lib/nvme/nvme_tcp.c) opens the TLS socket only
     * {@code if (tcp_ctrlr->psk[0])}, so one such key in 256 made it connect without its PSK ("PSK is not set") and a
     * test fail now and then; such keys are drawn again.
     */
    static String spdkHostPsk(SecureRandom random, int hash, int length, String... hosts) {
        while (true) {
            byte[] secret = new byte[length];
            random.nextBytes(secret);
            String text = TlsPsk.format(hash, secret);
            TlsPsk key = TlsPsk.parse(text);
            boolean usable = true;
            for (String host : hosts) {
                for (String subnqn : new String[] {TestTarget.SUBNQN, TestTarget.RESTRICTED_NQN}) {
                    TlsPsk.Derivation d = TlsPsk.Derivation.RFC8446;
                    byte[] psk = key.tlsPsk(d, TlsPsk.Identity.parse(key.identity(d, 0, host, subnqn)));
                    usable &= psk != null && psk[0] != 0;
                }
            }
            if (usable) {
                return text;
            }
        }
    }

    /** A key file of mode 0600 in {@code dir} holding {@code text} (SPDK's keyring_file takes no other mode). */
    static Path secretFile(Path dir, String name, String text) throws IOException {
        Path f = dir.resolve(name);
        Files.createFile(f, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        Files.writeString(f, text);
        return f;
    }

    /** spdk_nvme_perf attached a controller and ran its workload ({@code what} says which run, for the message). */
    static void assertPerfRan(Run r, String what) {
        assertThat(r.exitCode()).as("%s; it printed:%n%s", what, r.output()).isZero();
        assertThat(r.output()).as(what).contains("Total").doesNotContain("No valid NVMe controllers found");
    }

    /** spdk_nvme_perf attached nothing: it exits 0 even then, its output says what happened. */
    static void assertPerfAttachedNothing(Run r, String what) {
        assertThat(r.output()).as(what).contains("No valid NVMe controllers found").doesNotContain("Total");
    }

    /** bdevperf's verify workload ran on Nvme0n1 without a failed or timed-out I/O or a miscompare. */
    static void assertVerified(Run r, String what) {
        assertThat(r.exitCode()).as("%s; it printed:%n%s", what, r.output()).isZero();
        assertThat(r.output()).contains("Nvme0n1").doesNotContainIgnoringCase("miscompare");
        List<double[]> totals = TestData.bdevperfTotals(r.output());
        assertThat(totals).as("bdevperf's Total line in:%n%s", r.output()).hasSize(1);
        assertThat(totals.get(0)[0]).as("IOPS in:%n%s", r.output()).isPositive();
        assertThat(totals.get(0)[2]).as("failed/s in:%n%s", r.output()).isZero();
        assertThat(totals.get(0)[3]).as("timed out/s in:%n%s", r.output()).isZero();
    }

    /** spdk_nvme_perf's command for 2 s of 4 KiB random reads and writes at depth 8 on core 1, plus {@code extra}. */
    static List<String> perfCommand(String trid, String... extra) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(tree().resolve("build/bin/spdk_nvme_perf").toString(), "--no-huge",
            "-s", "256", "-c", "0x2", "-q", "8", "-o", "4096", "-w", "randrw", "-M", "50", "-t", "2", "-r", trid));
        cmd.addAll(List.of(extra));
        return cmd;
    }
}
