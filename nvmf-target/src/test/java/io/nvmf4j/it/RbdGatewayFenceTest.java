package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.nvmf4j.it.ReservationTest.conflict;
import static io.nvmf4j.it.ReservationTest.ok;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Preempt and Abort across two gateways of one RBD image (two targets in this JVM, each its own RADOS client, on the
 * test cluster of {@link CephCluster}): the preempted host has a write in flight on gateway B that B's librbd holds
 * (B's client runs with librbd's QoS, {@code rbd_qos_write_bps_limit}, so a large write waits in librbd before it
 * goes to the OSDs) while the survivor preempts it through gateway A. The Acquire completes only when B drained that
 * write (it landed before), or when B's client is blocklisted (it can never land); never on a timeout alone. And
 * the reservation changes of ten namespaces, each image with a stopped watcher (a frozen gateway's watch), are not
 * serialised behind each other's wait.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdGatewayFenceTest extends RbdGateways {
    static final String SURVIVOR = HOST_A;
    static final String PREEMPTED = HOST_B;
    static final long KEY_S = KEY_A;
    static final long KEY_P = KEY_B;
    static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 3;
    static final int PREEMPT_AND_ABORT = 2;
    /** The write the preempted host has in flight: 64 KiB at LBA 2048. */
    static final int LENGTH = 64 * 1024;
    static final long LBA = 2048;
    /** How long a reservation change waits for a gateway's acknowledgement (ReservationMetadata). */
    static final long ANNOUNCE_MS = 5000;

    @TempDir
    Path dir;
    private final TargetConfig[] config = new TargetConfig[2];
    private final List<Process> watchers = new ArrayList<>();
    /** The survivor, connected through A, and the preempted host, through B. */
    private NvmeController s;
    private NvmeController p;

    RbdGatewayFenceTest() {
        super("fence");
    }

    @AfterEach
    void stopWatchers() {
        watchers.forEach(Process::destroyForcibly);
    }

    /** Gateway {@code i}; with {@code qosBytesPerSecond > 0} its client's librbd lets writes through at that rate. */
    private void start(int i, long qosBytesPerSecond) throws IOException {
        config[i] = gatewayConfig(new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick()), false);
        if (qosBytesPerSecond > 0) {
            config[i].bdevs.get(0).cephConf = throttledConf(qosBytesPerSecond).toString();
        }
        gw[i] = JavaEngine.start(config[i], IoObserver.NONE, null);
    }

    /** The cluster's config with librbd's write QoS for this test's client (Ceph's own option, read at open). */
    private Path throttledConf(long bytesPerSecond) throws IOException {
        CephCluster c = CephCluster.get();
        Path conf = dir.resolve("throttled-" + bytesPerSecond + ".conf");
        Files.writeString(conf, Files.readString(Path.of(c.conf())) + "\n[" + c.client() + "]\n"
            + "rbd qos write bps limit = " + bytesPerSecond + "\n");
        return conf;
    }

    private NvmeController connect(int i, String hostnqn) throws IOException {
        return connectPort(config[i].subsystems.get(0).listeners.get(0).port, hostnqn);
    }

    private RbdBdev device(int i) {
        return (RbdBdev) gw[i].engine().bdev("r0");
    }

    private static byte[] pattern(int seed) {
        byte[] b = new byte[LENGTH];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (seed * 31 + i / 512);
        }
        return b;
    }

    private static void await(String what, long seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as(what + " within " + seconds + " s").isNegative();
            Thread.sleep(20);
        }
    }

    /** When a future completed (System.nanoTime), recorded by the completing thread. */
    private static long[] completedAt(CompletableFuture<Completion> f) {
        long[] at = {0};
        f.whenComplete((c, e) -> at[0] = System.nanoTime());
        return at;
    }

    /**
     * Gateways A and B (B's librbd lets writes through at {@code qosBytesPerSecond}); the survivor (through A) and the
     * preempted host (through B) registered, the survivor holding Write Exclusive - Registrants Only (both may
     * write); then the preempted host's write through B, held in B's librbd.
     */
    private CompletableFuture<Completion> heldWrite(long qosBytesPerSecond) throws Exception {
        start(0, 0);
        start(1, qosBytesPerSecond);
        s = connect(0, SURVIVOR);
        p = connect(1, PREEMPTED);
        ok(s.io(0).resvRegister(1, 0, false, 0, 0, KEY_S));
        ok(p.io(0).resvRegister(1, 0, false, 0, 0, KEY_P));
        ok(s.io(0).resvAcquire(1, 0, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_S, 0));
        CompletableFuture<Completion> write = p.io(0).writeAsync(1, LBA, pattern(1));
        await("the preempted host's write in B's librbd", 20, () -> device(1).outstanding() > 0);
        return write;
    }

    /** Preempt and Abort of the preempted host's registration through A, taking Write Exclusive. */
    private CompletableFuture<Completion> preemptAndAbort() {
        return s.io(0).resvAcquireAsync(1, PREEMPT_AND_ABORT | (WRITE_EXCLUSIVE << 8), KEY_S, KEY_P);
    }

    /**
     * B's librbd releases the held write within about 2 s, before the announcement's timeout: B drains it before it
     * acknowledges, so the Acquire completes after the write did, and the survivor's data written after the Acquire
     * is what stays.
     */
    @Test
    void preemptAndAbortCompletesOnlyAfterTheOtherGatewayDrainedThePreemptedHostsWrite() throws Exception {
        CompletableFuture<Completion> write = heldWrite(24 * 1024);
        long[] writeDone = completedAt(write);

        CompletableFuture<Completion> acquire = preemptAndAbort();
        long[] acquireDone = completedAt(acquire);
        ok(acquire.get(60, TimeUnit.SECONDS));
        ok(s.io(0).write(1, LBA, pattern(2)));

        Completion w = write.get(60, TimeUnit.SECONDS);
        ok(w); // it ran on the device before the preempt took effect there: it landed, and before the Acquire ended
        assertThat(acquire.isDone() && write.isDone()).isTrue();
        assertThat(writeDone[0]).as("the preempted host's write completed before the Acquire (B drained it first)")
            .isLessThanOrEqualTo(acquireDone[0]);
        assertThat(device(1).blocklistedCount()).as("B answered: not fenced").isZero();
        assertThat(s.io(0).read(1, LBA, LENGTH / TestTarget.BLOCK_SIZE).data())
            .as("the survivor's data, written after the Acquire, stays").isEqualTo(pattern(2));
        conflict(p.io(0).write(1, LBA, pattern(3)));
    }

    /**
     * B's librbd holds the write for about 15 s, longer than a gateway gets to acknowledge: A blocklists B's client
     * and the Acquire completes; the held write, when librbd finally sends it, is refused by the OSDs, and the
     * survivor's data stays. B then serves as a new client that checks against the new state.
     */
    @Test
    void preemptAndAbortFencesAGatewayThatDoesNotDrainInTime() throws Exception {
        CompletableFuture<Completion> write = heldWrite(4 * 1024);

        long listed = blocklistEntries();
        long t0 = System.nanoTime();
        CompletableFuture<Completion> acquire = preemptAndAbort();
        ok(acquire.get(60, TimeUnit.SECONDS));
        long acquireMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("RbdGatewayFenceTest: the Acquire took %d ms%n", acquireMs);
        assertThat(write.isDone()).as("the held write is still held when the Acquire completes").isFalse();
        long blocklisted = blocklistEntries() - listed;
        ok(s.io(0).write(1, LBA, pattern(2)));

        Completion w = write.get(90, TimeUnit.SECONDS);
        assertThat(w.ok()).as("the fenced gateway's held write does not land: " + w).isFalse();
        assertThat(s.io(0).read(1, LBA, LENGTH / TestTarget.BLOCK_SIZE).data())
            .as("the survivor's data stays after the fenced write was let go").isEqualTo(pattern(2));
        assertThat(blocklisted).as("B's client on the OSDs' blocklist when the Acquire completed").isPositive();
        await("B serves again as a new client", 60, () -> device(1).blocklistedCount() > 0 && !device(1).isFenced());
        conflict(p.io(0).write(1, LBA, pattern(3)));
        // the new client watches the header: a change made through A afterwards is seen through B at once
        assertThat(device(1).watchesHeader()).as("B's new client watches the image's header").isTrue();
        ok(s.io(0).resvRelease(1, 0, WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_S)); // the type it held: the preempted host was no holder
        byte[] r = p.io(0).resvReport(1, true, 4096).data();
        assertThat(r[4]).as("the reservation A released, as B reports it").isZero();
    }

    /**
     * Ten namespaces, each an image whose header a stopped client still watches (a gateway frozen during failover):
     * a host registers on all ten at once through one gateway. Each change waits for the stopped watcher (and fences
     * it), but the namespaces do not wait for each other: every Register completes within one announcement timeout
     * and a fence, far inside the Linux host's 30 s I/O timeout, where ten serial waits would take 50 s.
     */
    @Test
    void tenNamespacesWithAStoppedWatcherDoNotWaitForEachOther() throws Exception {
        int n = 10;
        TargetConfig cfg = gatewayConfig(new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick()), false);
        BdevConfig template = cfg.bdevs.get(0);
        cfg.bdevs.clear();
        cfg.subsystems.get(0).namespaces.clear();
        CephCluster c = CephCluster.get();
        for (int i = 1; i <= n; i++) {
            BdevConfig b = new BdevConfig("r" + i, "rbd", TestTarget.BLOCK_SIZE, 2048);
            b.pool = template.pool;
            b.image = image + "-" + i;
            b.cephConf = template.cephConf;
            b.clientName = template.clientName;
            b.keyring = template.keyring;
            b.create = true;
            cfg.bdevs.add(b);
            NamespaceConfig ns = new NamespaceConfig(i, "r" + i);
            ns.nguid = String.format("0123456789abcdef0123456789ab%04x", i);
            ns.uuid = String.format("9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f%04x", i);
            cfg.subsystems.get(0).namespaces.add(ns);
        }
        config[0] = cfg;
        gw[0] = JavaEngine.start(cfg, IoObserver.NONE, null);
        NvmeController h = connect(0, SURVIVOR);
        List<String> headers = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            headers.add(header(c, image + "-" + i));
        }
        stoppedWatchers(c, headers);

        long t0 = System.nanoTime();
        List<CompletableFuture<Completion>> done = new ArrayList<>();
        long[][] at = new long[n][];
        for (int i = 1; i <= n; i++) {
            byte[] keys = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(0).putLong(KEY_S + i).array();
            CompletableFuture<Completion> f = h.io(0).queue().submit(Sqe.of(NvmeHost.OPC_RESV_REGISTER).nsid(i), keys, 0);
            at[i - 1] = completedAt(f);
            done.add(f);
        }
        for (CompletableFuture<Completion> f : done) {
            ok(f.get(120, TimeUnit.SECONDS));
        }
        long[] ms = new long[n];
        for (int i = 0; i < n; i++) {
            ms[i] = (at[i][0] - t0) / 1_000_000;
        }
        System.out.println("RbdGatewayFenceTest: the ten Registers completed after (ms) " + Arrays.toString(ms));
        long bound = 3 * ANNOUNCE_MS;
        assertThat(Arrays.stream(ms).max().orElseThrow()).as("the slowest of the ten Registers %s: each within %d ms"
            + " (one wait for the stopped watcher and its fence), not one wait per namespace before it",
            Arrays.toString(ms), bound).isLessThan(bound);
    }

    /** The header object of {@code image}: {@code rbd_header.<id>}. */
    private static String header(CephCluster c, String image) throws Exception {
        String info = c.rbd("info", c.pool() + "/" + image, "--format", "json");
        return "rbd_header." + io.nvmf4j.config.ConfigStore.mapper().readTree(info).path("id").asText();
    }

    /**
     * A client per header that watches it and then stops (SIGSTOP), all at once: each watch stays and never answers,
     * until Ceph drops it ({@code osd_client_watch_timeout}, 30 s after the stop), which the test runs well inside.
     */
    private void stoppedWatchers(CephCluster c, List<String> headers) throws Exception {
        List<Process> started = new ArrayList<>();
        for (String header : headers) {
            Process p = new ProcessBuilder(c.adminCommand("rados", "-p", c.pool(), "watch", header))
                .redirectErrorStream(true).redirectOutput(dir.resolve("watch-" + header + ".log").toFile()).start();
            watchers.add(p);
            started.add(p);
        }
        for (String header : headers) {
            await("rados watch on " + header, 60, () -> {
                try {
                    return watchersOf(c, header) >= 2; // the gateway's client and the rados tool
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        List<String> kill = new ArrayList<>(List.of("kill", "-STOP"));
        started.forEach(p -> kill.add(Long.toString(p.pid())));
        Process stop = new ProcessBuilder(kill).start();
        assertThat(stop.waitFor(10, TimeUnit.SECONDS) && stop.exitValue() == 0).as("SIGSTOP to rados watch").isTrue();
    }

    /** The entries of the cluster's blocklist ({@code ceph osd blocklist ls}). */
    private static long blocklistEntries() throws Exception {
        return CephCluster.get().ceph("osd", "blocklist", "ls").lines().filter(l -> !l.isBlank()).count();
    }

    /** How many clients watch {@code oid} ({@code rados listwatchers}). */
    private static long watchersOf(CephCluster c, String oid) throws Exception {
        Process p = new ProcessBuilder(c.adminCommand("rados", "-p", c.pool(), "listwatchers", oid)).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        p.waitFor(60, TimeUnit.SECONDS);
        return out.lines().filter(l -> l.startsWith("watcher=")).map(l -> l.split("\\s+")[1]).distinct().count();
    }
}
