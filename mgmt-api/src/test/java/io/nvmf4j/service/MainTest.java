package io.nvmf4j.service;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service launcher as a child JVM ({@code Main} blocks until SIGTERM and calls System.exit, so it
 * cannot run inside the test JVM). Every process a test starts is destroyed in {@link #stopAll()}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MainTest {
    private static final String NQN = "nqn.2026-11.io.nvmf4j:main-test";
    private static final long START_TIMEOUT_MS = 15_000;

    @TempDir
    Path dir;

    private final List<ServiceProcess> started = new ArrayList<>();

    @AfterEach
    void stopAll() throws InterruptedException {
        for (ServiceProcess s : started) {
            s.process.destroyForcibly();
            s.process.waitFor(5, TimeUnit.SECONDS);
        }
    }

    /**
     * First start: the listener is announced with the nvme-cli command line, a TCP connection is accepted,
     * SIGTERM stops the target cleanly. Second start: the identities the first one generated are kept.
     */
    @Test
    void announcesAcceptsStopsOnSigtermAndKeepsIdentitiesAcrossRestarts() throws Exception {
        int port = FreePorts.pick();
        Path config = writeConfig(port);
        assertThat(ConfigStore.load(config).subsystems.get(0).serial).as("no identities before the first start")
            .isNull();

        ServiceProcess first = start("--state-dir", dir.toString(), "--config", config.toString());
        String connect = "nvme connect -t tcp -a 127.0.0.1 -s " + port + " -n " + NQN;
        assertThat(first.awaitLine(l -> l.contains(connect)))
            .as("log line with '%s'; output:%n%s", connect, first.output()).isTrue();
        assertThat(first.output()).contains("nvme discover -t tcp -a 127.0.0.1 -s " + port);
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            assertThat(socket.isConnected()).isTrue();
        }
        TargetConfig afterFirst = ConfigStore.load(config);
        first.process.destroy();  // SIGTERM
        assertThat(first.process.waitFor(10, TimeUnit.SECONDS)).as("stopped within 10 s of SIGTERM").isTrue();
        assertThat(first.process.exitValue()).as("exit code; output:%n%s", first.output()).isZero();
        assertThat(first.output()).contains("target stopped");

        SubsystemConfig s1 = afterFirst.subsystems.get(0);
        assertThat(s1.serial).isNotBlank();
        assertThat(s1.namespaces.get(0).nguid).matches("[0-9a-f]{32}");
        assertThat(s1.namespaces.get(0).uuid).isNotBlank();
        String fileAfterFirst = Files.readString(config);

        ServiceProcess second = start("--state-dir", dir.toString(), "--config", config.toString());
        assertThat(second.awaitLine(l -> l.contains(connect))).as("output:%n%s", second.output()).isTrue();
        TargetConfig afterSecond = ConfigStore.load(config);
        SubsystemConfig s2 = afterSecond.subsystems.get(0);
        assertThat(s2.serial).isEqualTo(s1.serial);
        assertThat(s2.namespaces.get(0).nguid).isEqualTo(s1.namespaces.get(0).nguid);
        assertThat(s2.namespaces.get(0).uuid).isEqualTo(s1.namespaces.get(0).uuid);
        assertThat(Files.readString(config)).as("the second start did not rewrite the file").isEqualTo(fileAfterFirst);
    }

    @Test
    void anInvalidConfigurationExitsWithStatus2NamingTheField() throws Exception {
        TargetConfig c = config(70000);
        Path file = dir.resolve("bad.json");
        Files.writeString(file, ConfigStore.toJson(c));
        ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(2);
        assertThat(s.output()).contains("subsystems[0].listeners[0].port").contains("70000").contains(file.toString());
    }

    @Test
    void anInvalidConfigurationFileIsLeftAlone() throws Exception {
        TargetConfig c = config(70000);
        Path file = dir.resolve("bad.json");
        Files.writeString(file, ConfigStore.toJson(c));
        ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(s.awaitExit()).isEqualTo(2);
        assertThat(Files.readString(file)).isEqualTo(ConfigStore.toJson(c));
    }

    @Test
    void anUnparsableConfigurationExitsWithStatus2SayingWhere() throws Exception {
        Path file = dir.resolve("broken.json");
        Files.writeString(file, "{\n  \"cores\": 2,\n  \"colour\": \"blue\"\n}\n");
        ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(2);
        assertThat(s.output()).contains("colour").contains("line 3");
    }

    /**
     * An spdk engine that cannot start (here: a core this process may not run on) says why in one line and
     * exits 1 ("cannot start", as for a taken port); the java engine never starts in its place.
     */
    @Test
    void theSpdkEngineThatCannotStartSaysWhyInOneLineAndNothingFallsBack() throws Exception {
        TargetConfig c = spdkConfig(FreePorts.pick(), "[1000]", true);
        Path file = dir.resolve("spdk.json");
        ConfigStore.save(file, c);
        ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(1);
        assertThat(s.output()).contains("nvmf4j-target: cannot start: engine spdk");
        assertThat(s.output()).as("no engine in its place").doesNotContain("target up")
            .doesNotContain("listening on");
        assertThat(ConfigStore.load(file).engine).as("the document keeps its engine").isEqualTo("spdk");
    }

    /**
     * A core another SPDK process holds (SPDK's core lock files): the start fails with one line saying which, exit
     * 1, and nothing else starts. An rdma listener on a machine without an RDMA device does not stop the start (as
     * with the java engine): it is kept as failed, logged, and TCP serves.
     */
    @Test
    void aTakenCoreStopsTheSpdkEngineAndAMissingRdmaDeviceDoesNot() throws Exception {
        SpdkRequirement.assumeBuilt();
        // core 1, with locks: the other tests (and SPDK's host tools in them) lock no core here
        TargetConfig holder = spdkConfig(FreePorts.pick(), "[1]", true);
        Path holderFile = dir.resolve("holder.json");
        ConfigStore.save(holderFile, holder);
        ServiceProcess first = start("--state-dir", dir.resolve("a").toString(), "--config", holderFile.toString());
        assertThat(first.awaitLine(l -> l.contains("spdk engine up"))).as("output:%n%s", first.output()).isTrue();

        TargetConfig second = spdkConfig(FreePorts.pick(), "[1]", true);
        Path secondFile = dir.resolve("second.json");
        ConfigStore.save(secondFile, second);
        ServiceProcess taken = start("--state-dir", dir.resolve("b").toString(), "--config", secondFile.toString());
        assertThat(taken.awaitExit()).as("exit code; output:%n%s", taken.output()).isEqualTo(1);
        assertThat(taken.output()).contains("nvmf4j-target: cannot start: engine spdk: SPDK did not start")
            .contains("core 1").doesNotContain("listening on");

        Assumptions.assumeFalse(hasRdmaDevice(), "this machine has an RDMA device");
        TargetConfig rdma = spdkConfig(FreePorts.pick(), "0x1", false);
        rdma.subsystems.get(0).listeners.add(new ListenerConfig("rdma", "127.0.0.1", FreePorts.pick()));
        Path rdmaFile = dir.resolve("rdma.json");
        ConfigStore.save(rdmaFile, rdma);
        ServiceProcess noDevice = start("--state-dir", dir.resolve("c").toString(), "--config", rdmaFile.toString());
        int tcpPort = rdma.subsystems.get(0).listeners.get(0).port;
        assertThat(noDevice.awaitLine(l -> l.contains("is not serving and not in the discovery log")))
            .as("output:%n%s", noDevice.output()).isTrue();
        assertThat(noDevice.output()).as("TCP carries on").contains("listening on tcp 127.0.0.1:" + tcpPort)
            .contains("listener rdma:127.0.0.1:")
            .contains("not bound, not in the discovery log (TCP carries on): rdma transport unavailable: this machine "
                + "has no RDMA device").doesNotContain("listening on rdma");
    }

    /**
     * {@link #config} for the spdk engine in 512 MiB of ordinary memory on {@code coreMask}; without
     * {@code coreLocks} other suites on this machine may run SPDK on the same core.
     */
    private static TargetConfig spdkConfig(int port, String coreMask, boolean coreLocks) {
        TargetConfig c = config(port);
        c.engine = "spdk";
        c.spdk.hugepages = false;
        c.spdk.memSizeMb = 512;
        c.spdk.coreMask = coreMask;
        c.spdk.coreLocks = coreLocks;
        return c;
    }

    private static boolean hasRdmaDevice() {
        try (var s = Files.list(Path.of("/sys/class/infiniband"))) {
            return s.findAny().isPresent();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The spdk engine under the same launcher: announced, accepts a connection, SIGTERM stops SPDK cleanly and
     * exits 0; a second process keeps the identities (SPDK starts once per process, so restarts are processes).
     */
    @Test
    void theSpdkEngineServesStopsOnSigtermWithStatus0AndKeepsIdentities() throws Exception {
        SpdkRequirement.assumeBuilt();
        int port = FreePorts.pick();
        TargetConfig c = spdkConfig(port, "0x1", false);
        Path file = dir.resolve("spdk.json");
        ConfigStore.save(file, c);
        String connect = "nvme connect -t tcp -a 127.0.0.1 -s " + port + " -n " + NQN;
        ServiceProcess first = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(first.awaitLine(l -> l.contains(connect))).as("output:%n%s", first.output()).isTrue();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            assertThat(socket.isConnected()).isTrue();
        }
        TargetConfig afterFirst = ConfigStore.load(file);
        first.process.destroy();  // SIGTERM
        assertThat(first.process.waitFor(15, TimeUnit.SECONDS)).as("stopped within 15 s of SIGTERM").isTrue();
        assertThat(first.process.exitValue()).as("exit code; output:%n%s", first.output()).isZero();
        assertThat(first.output()).contains("spdk engine up").contains("spdk engine stopped (SPDK's exit status 0)");

        ServiceProcess second = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(second.awaitLine(l -> l.contains(connect))).as("output:%n%s", second.output()).isTrue();
        SubsystemConfig s1 = afterFirst.subsystems.get(0);
        SubsystemConfig s2 = ConfigStore.load(file).subsystems.get(0);
        assertThat(s2.serial).isEqualTo(s1.serial);
        assertThat(s2.namespaces.get(0).nguid).isEqualTo(s1.namespaces.get(0).nguid);
        assertThat(s2.namespaces.get(0).uuid).isEqualTo(s1.namespaces.get(0).uuid);
    }

    /**
     * An OutOfMemoryError in a thread of the service running the spdk engine: one log line names it, the target
     * stops as for SIGTERM (SPDK's threads before the JVM's exit frees their memory) and the exit status is 3, with
     * no crash report (hs_err_pid*.log) and no core file written into the working directory.
     */
    @Test
    void anOutOfMemoryErrorWithTheSpdkEngineRunningIsOneLineAStopAndStatus3WithoutACrash() throws Exception {
        SpdkRequirement.assumeBuilt();
        int port = FreePorts.pick();
        Path file = dir.resolve("spdk.json");
        ConfigStore.save(file, spdkConfig(port, "0x1", false));
        ServiceProcess s = start(OutOfMemoryMain.class, "-Xmx96m", "--state-dir", dir.toString(), "--config",
            file.toString());
        String connect = "nvme connect -t tcp -a 127.0.0.1 -s " + port + " -n " + NQN;  // announced: the service is up
        assertThat(s.awaitLine(l -> l.contains(connect))).as("output:%n%s", s.output()).isTrue();
        s.process.getOutputStream().write('\n');  // OutOfMemoryMain's allocator starts
        s.process.getOutputStream().flush();

        assertThat(s.awaitExit()).as("exit status; output:%n%s", s.output()).isEqualTo(Main.FATAL);
        String out = s.output();
        assertThat(out).as("no native crash").doesNotContain("A fatal error has been detected");
        assertThat(out.lines().filter(l -> l.contains("OutOfMemoryError")))
            .as("one line names the error; output:%n%s", out)
            .singleElement().asString().contains("stopping on a fatal error in thread " + OutOfMemoryMain.THREAD
                + ": java.lang.OutOfMemoryError: Java heap space");
        assertThat(out).contains("spdk engine stopped (SPDK's exit status 0)");
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()))
                .as("crash reports and core files in the working directory")
                .noneMatch(n -> n.startsWith("hs_err_pid") || n.equals("core") || n.startsWith("core."));
        }
    }

    /**
     * A stop that cannot end: the file bdev's file system is frozen ({@code fsfreeze}) while a host's write is in
     * flight, so the write waits in the kernel and the stop waits for it. The stop bound halts the JVM after
     * {@code --stop-timeout} with one line naming where the stop waits, and exit status 1; the write was never
     * acknowledged. (The kernel holds the exiting process until the frozen write is let go: the test thaws the file
     * system after the line, as an operator would.)
     */
    @Test
    void aStopThatCannotEndExitsAtTheStopTimeoutWithOneLineAndStatus1() throws Exception {
        io.nvmf4j.bdev.ScratchMounts.assumeRoot();
        try (io.nvmf4j.bdev.ScratchMounts mounts = new io.nvmf4j.bdev.ScratchMounts(dir)) {
            Path fs = mounts.xfs(320L << 20); // mkfs.xfs wants more than 300 MB; the image is sparse
            int port = FreePorts.pick();
            TargetConfig c = config(port);
            BdevConfig f = new BdevConfig("f0", "file", 512, 8192);
            f.path = fs.resolve("disk.img").toString();
            c.bdevs.add(f);
            c.storage = io.nvmf4j.config.StorageConfig.directories(fs.toString());
            c.subsystems.get(0).namespaces.add(new NamespaceConfig(2, "f0"));
            Path file = dir.resolve("frozen.json");
            ConfigStore.save(file, c);
            ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString(), "--stop-timeout", "2");
            String connect = "nvme connect -t tcp -a 127.0.0.1 -s " + port + " -n " + NQN;
            assertThat(s.awaitLine(l -> l.contains(connect))).as("output:%n%s", s.output()).isTrue();
            boolean frozen = false;
            io.nvmf4j.testhost.NvmeController host = io.nvmf4j.testhost.NvmeController.open("127.0.0.1", port, NQN,
                "nqn.2014-08.org.nvmexpress:uuid:7d3c1c6e-5b0a-4f4e-9d7e-3a1f00000001", 15000, 1,
                io.nvmf4j.testhost.TcpHostOptions.DEFAULT);
            try {
                assertThat(host.io(0).write(2, 0, new byte[4096]).ok()).as("a write before the freeze").isTrue();
                int blockedBefore = blockedTasks(s.process.pid());
                run("fsfreeze", "-f", fs.toString());
                frozen = true;
                var inFlight = host.io(0).writeAsync(2, 8, new byte[4096]);
                assertThat(awaitBlockedTasks(s.process.pid(), blockedBefore + 1))
                    .as("a thread of the service waits in the frozen file system (state D)").isTrue();
                s.process.destroy();  // SIGTERM
                String line = "stop did not end within 2 s (--stop-timeout); exiting with status 1 without finishing "
                    + "it; it waits at ";
                assertThat(s.awaitLine(l -> l.contains(line))).as("output:%n%s", s.output()).isTrue();
                // the JVM has halted; the kernel ends the process once the thread in the frozen file system is let go
                run("fsfreeze", "-u", fs.toString());
                frozen = false;
                assertThat(s.process.waitFor(START_TIMEOUT_MS, TimeUnit.MILLISECONDS))
                    .as("ended; output:%n%s", s.output()).isTrue();
                assertThat(s.process.exitValue()).as("exit status; output:%n%s", s.output()).isEqualTo(1);
                assertThat(s.output().lines().filter(l -> l.contains(line))).as("one line; output:%n%s", s.output())
                    .hasSize(1);
                assertThat(s.output()).as("the stop did not finish").doesNotContain("target stopped");
                assertThat(inFlight.isDone() && !inFlight.isCompletedExceptionally() && inFlight.join().ok())
                    .as("the write in flight was not acknowledged").isFalse();
            } finally {
                try {
                    host.close();
                } catch (Exception targetGone) {
                    // the target ended under the host: its close may fail, the assertions above are what counts
                }
                if (frozen) {
                    run("fsfreeze", "-u", fs.toString());
                }
            }
        }
    }

    /** Threads of process {@code pid} in uninterruptible sleep (state D), from /proc. */
    private static int blockedTasks(long pid) throws IOException {
        int n = 0;
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    // "pid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses)
                    if (stat.charAt(stat.lastIndexOf(')') + 2) == 'D') {
                        n++;
                    }
                } catch (java.nio.file.NoSuchFileException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return n;
    }

    private static boolean awaitBlockedTasks(long pid, int atLeast) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        while (blockedTasks(pid) < atLeast) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);  // poll interval, bounded by the deadline
        }
        return true;
    }

    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + ": " + out.trim());
        }
    }

    @Test
    void aStopTimeoutOutOfRangeIsBadUsageNamingTheOption() throws Exception {
        int port = FreePorts.pick();
        Path config = writeConfig(port);
        for (String bad : new String[] {"0", "3601", "-5"}) {
            ServiceProcess s = start("--state-dir", dir.toString(), "--config", config.toString(), "--stop-timeout", bad);
            assertThat(s.awaitExit()).as("exit status for %s; output:%n%s", bad, s.output()).isEqualTo(2);
            assertThat(s.output()).contains("--stop-timeout: must be 1..3600 seconds, got " + bad)
                .doesNotContain("listening on");
        }
    }

    @Test
    void anUnknownEngineIsABadConfigurationNamingTheField() throws Exception {
        TargetConfig c = config(FreePorts.pick());
        c.engine = "dpdk";
        Path file = dir.resolve("dpdk.json");
        Files.writeString(file, ConfigStore.toJson(c));
        ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(2);
        assertThat(s.output()).contains("engine: must be java or spdk, got dpdk");
    }

    @Test
    void aPortInUseExitsWithAClearMessage() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = busy.getLocalPort();
            Path config = writeConfig(port);
            ServiceProcess s = start("--state-dir", dir.toString(), "--config", config.toString());
            assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(1);
            assertThat(s.output()).contains("cannot start: address 127.0.0.1:" + port + " is already in use")
                .doesNotContain("bind(..)");
        }
    }

    @Test
    void helpExitsZero() throws Exception {
        ServiceProcess s = start("--help");
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isZero();
        assertThat(s.output()).contains("Usage").contains("--state-dir").contains("--config");
    }

    @Test
    void withoutConfigTheDefaultIsWrittenAndServedOrPort4420IsReportedBusy() throws Exception {
        ServiceProcess s = start("--state-dir", dir.toString());
        String listening = "nvme connect -t tcp -a 127.0.0.1 -s 4420 -n " + ConfigStore.DEFAULT_NQN;
        // BindFailures' words for a taken port (another target of this machine's may hold 4420)
        String busy = "cannot start: address 127.0.0.1:4420 is already in use";
        String apiBusy = "cannot start the management API on 127.0.0.1:8420";
        assertThat(s.awaitLine(l -> l.contains(listening) || l.contains(busy) || l.contains(apiBusy)))
            .as("either the listener line or a clear 'cannot listen'; output:%n%s", s.output()).isTrue();
        if (s.output().contains(busy) || s.output().contains(apiBusy)) {
            assertThat(s.awaitExit()).as("exit code when 4420 is taken").isEqualTo(1);
        }
        Path written = dir.resolve("config.json");
        assertThat(written).exists();
        TargetConfig c = ConfigStore.load(written);
        assertThat(c.subsystems).hasSize(1);
        assertThat(c.subsystems.get(0).nqn).isEqualTo(ConfigStore.DEFAULT_NQN);
        assertThat(c.subsystems.get(0).listeners).containsExactly(new ListenerConfig("tcp", "127.0.0.1", 4420));
        assertThat(c.subsystems.get(0).serial).as("identities written with the default").isNotBlank();
        assertThat(c.subsystems.get(0).namespaces.get(0).nguid).isNotBlank();
    }

    // ---- check-config ----

    /**
     * A valid document with identities left out and the API on: "FILE: valid", exit 0, and nothing written:
     * the file keeps its bytes (no generated serial or NGUID), no api-token, nothing listens.
     */
    @Test
    void checkConfigOfAValidDocumentSaysValidAndWritesNothing() throws Exception {
        int port = FreePorts.pick();
        TargetConfig c = config(port);
        c.api.port = FreePorts.pick();
        Path state = Files.createDirectories(dir.resolve("check-state"));
        Path file = state.resolve("config.json");
        String text = ConfigStore.toJson(c);
        Files.writeString(file, text);
        assertThat(text).doesNotContain("serial").doesNotContain("nguid");

        ServiceProcess s = start("check-config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isZero();
        assertThat(s.output()).isEqualTo(file + ": valid\n");
        assertThat(Files.readString(file)).as("no identities written back").isEqualTo(text);
        try (var files = Files.list(state)) {
            assertThat(files).as("no api-token, no temporary file").containsExactly(file);
        }
        try (ServerSocket free = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            assertThat(free.getLocalPort()).as("nothing listened on the document's port").isEqualTo(port);
        }

        // without FILE: the file a start would read (<state-dir>/config.json)
        ServiceProcess byDir = start("--state-dir", state.toString(), "check-config");
        assertThat(byDir.awaitExit()).as("output:%n%s", byDir.output()).isZero();
        assertThat(byDir.output()).isEqualTo(file + ": valid\n");
        try (var files = Files.list(state)) {
            assertThat(files).containsExactly(file);
        }
    }

    /** Every bad field on its own line, with the service-level checks (the API's TLS files), exit 2. */
    @Test
    void checkConfigNamesEveryBadFieldAndExits2() throws Exception {
        TargetConfig c = config(70000);
        c.cores = 0;
        c.api.port = 8420;
        c.api.tlsCert = dir.resolve("absent-cert.pem").toString();
        c.api.tlsKey = dir.resolve("absent-key.pem").toString();
        Path file = dir.resolve("bad.json");
        Files.writeString(file, ConfigStore.toJson(c));
        ServiceProcess s = start("check-config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(2);
        // the validator's wording is its own (and may change); the field and the value are what matter here
        List<String> lines = s.output().lines().toList();
        assertThat(lines).hasSize(4).allSatisfy(l -> assertThat(l).startsWith(file + ": "));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith(file + ": cores: ").endsWith(" 0"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(": subsystems[0].listeners[0].port: ").endsWith("70000"));
        assertThat(lines).contains(file + ": api.tlsCert: no such file " + c.api.tlsCert,
            file + ": api.tlsKey: no such file " + c.api.tlsKey);
        assertThat(Files.readString(file)).isEqualTo(ConfigStore.toJson(c));
    }

    @Test
    void checkConfigOfAnUnparsableOrAbsentFileExits2() throws Exception {
        Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\n  \"cores\": 2,\n  \"colour\": \"blue\"\n}\n");
        ServiceProcess s = start("check-config", broken.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(2);
        assertThat(s.output()).startsWith(broken + ": ").contains("colour").contains("line 3").hasLineCount(1);

        Path absent = dir.resolve("absent.json");
        ServiceProcess none = start("check-config", absent.toString());
        assertThat(none.awaitExit()).isEqualTo(2);
        assertThat(none.output()).isEqualTo(absent + ": no such file\n");
        assertThat(absent).as("check-config never writes the default").doesNotExist();
    }

    /** The start runs the same checks: a missing TLS file is a bad configuration (exit 2) naming the field. */
    @Test
    void theStartRefusesAMissingTlsFileAsABadConfiguration() throws Exception {
        TargetConfig c = config(FreePorts.pick());
        c.api.port = FreePorts.pick();
        c.api.tlsCert = dir.resolve("absent-cert.pem").toString();
        c.api.tlsKey = dir.resolve("absent-key.pem").toString();
        Path file = dir.resolve("tls.json");
        Files.writeString(file, ConfigStore.toJson(c));
        ServiceProcess s = start("--state-dir", dir.toString(), "--config", file.toString());
        assertThat(s.awaitExit()).as("exit code; output:%n%s", s.output()).isEqualTo(2);
        assertThat(s.output()).contains("api.tlsCert: no such file " + c.api.tlsCert).doesNotContain("listening on");
    }

    // ---- helpers ----

    /** These tests are about the target: the API is off (it has its own tests). */
    private static TargetConfig config(int port) {
        return ServiceProcess.document(NQN, port);
    }

    private Path writeConfig(int port) throws IOException {
        Path file = dir.resolve("c.json");
        ConfigStore.save(file, config(port));
        return file;
    }


    private ServiceProcess start(String... args) throws IOException {
        return start(Main.class, "-Xmx256m", args);
    }

    /** {@code main} (Main or a test's variant of it) in a child JVM with heap {@code xmx}, working in {@link #dir}. */
    private ServiceProcess start(Class<?> main, String xmx, String... args) throws IOException {
        Path log = dir.resolve("service-" + started.size() + ".log");
        ServiceProcess s = ServiceProcess.start(main, xmx, dir, log, args);
        started.add(s);
        return s;
    }
}
