package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.javaengine.JavaEngine;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The control layer's pool, volume and snapshot calls on a real XFS ({@code reflink=1}, {@link PoolScratch},
 * root): every bad request is refused naming its field with nothing changed (document and directory); a crash between
 * a change's file operation and the document's commit (a fault hook) leaves, after a restart from the committed
 * document, the pool as the document says, without leftovers or leaked space; a pool on a file system that cannot
 * reflink is refused with that reason; a group snapshot keeps a write order across its volumes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class VolumeControlTest {
    private static final long MIB = 1L << 20;

    @TempDir
    Path tmp;
    private PoolScratch scratch;
    private Path fs;
    private Path poolDir;
    private ConfigController<JavaEngine> t;

    @BeforeEach
    void setUp() throws Exception {
        scratch = PoolScratch.make(tmp);
        fs = scratch.fs;
        poolDir = scratch.poolDir;
        t = JavaEngine.start(config());
        t.addPool(new PoolConfig("p0", PoolConfig.KIND_REFLINK_DIR, poolDir.toString()));
    }

    private TargetConfig config() throws Exception {
        TargetConfig c = TestTarget.config(FreePorts.pick());
        c.storage = StorageConfig.directories(fs.toString(), tmp.toString());
        return c;
    }

    @AfterEach
    void tearDown() throws Exception {
        if (scratch != null) {
            scratch.closeAfter(t);
        }
    }

    @Test
    void badRequestsAreRefusedNamingTheFieldAndChangeNothing() throws Exception {
        t.createVolume("p0", VolumeRequest.thin("v", 64 * MIB));
        t.createSnapshot("p0", "v", "s");
        String doc = ConfigStore.toJson(t.configSnapshot());
        List<String> files = listing();

        for (String name : List.of("a/b", "..", ".hidden", "x".repeat(64), "a@b", "")) {
            refused(() -> t.createVolume("p0", VolumeRequest.thin(name, MIB)), ControlException.Kind.INVALID, "name:");
            refused(() -> t.createSnapshot("p0", "v", name), ControlException.Kind.INVALID, "name:");
            refused(() -> t.cloneSnapshot("p0", "v", "s", name), ControlException.Kind.INVALID, "name:");
        }
        refused(() -> t.createVolume("p0", VolumeRequest.thin("v", MIB)), ControlException.Kind.CONFLICT, "name:");
        refused(() -> t.createSnapshot("p0", "v", "s"), ControlException.Kind.CONFLICT, "name:");
        refused(() -> t.cloneSnapshot("p0", "v", "s", "v"), ControlException.Kind.CONFLICT, "name:");
        refused(() -> t.createVolume("p0", VolumeRequest.thin("w", 0)), ControlException.Kind.INVALID, "size:");
        refused(() -> t.createVolume("p0", VolumeRequest.thin("w", -512)), ControlException.Kind.INVALID, "size:");
        refused(() -> t.createVolume("p0", VolumeRequest.thin("w", 1000)), ControlException.Kind.INVALID,
            "not a multiple of the block size 512");
        refused(() -> t.createVolume("p0", new VolumeRequest("w", BigInteger.valueOf(6144), 4096, null)),
            ControlException.Kind.INVALID, "not a multiple of the block size 4096");
        refused(() -> t.createVolume("p0", new VolumeRequest("w", BigInteger.ONE.shiftLeft(64).add(BigInteger.ONE),
            null, null)), ControlException.Kind.INVALID, "size:");
        refused(() -> t.createVolume("p0", new VolumeRequest("w", BigInteger.valueOf(1L << 40), null, true)),
            ControlException.Kind.INVALID, "exceed the free space");
        refused(() -> t.createVolume("p0", new VolumeRequest("w", BigInteger.valueOf(MIB), 520, null)),
            ControlException.Kind.INVALID, "blockSize:");
        refused(() -> t.createVolume("nope", VolumeRequest.thin("w", MIB)), ControlException.Kind.NOT_FOUND, "no pool");
        refused(() -> t.createSnapshot("p0", "missing", "s2"), ControlException.Kind.NOT_FOUND, "no volume missing");
        refused(() -> t.createGroupSnapshot("p0", List.of("v", "missing"), "g"), ControlException.Kind.NOT_FOUND,
            "no volume missing");
        refused(() -> t.cloneSnapshot("p0", "v", "missing", "c"), ControlException.Kind.NOT_FOUND,
            "no snapshot missing");
        refused(() -> t.resizeVolume("p0", "v", BigInteger.valueOf(1000)), ControlException.Kind.INVALID, "size:");
        refused(() -> t.removeBdev("p0/v"), ControlException.Kind.INVALID, "is a volume");
        refused(() -> t.removePool("p0"), ControlException.Kind.CONFLICT, "still has volume");

        Path outside = Files.createDirectory(fs.resolve("elsewhere"));
        TargetConfig c = t.configSnapshot();
        PoolConfig out = new PoolConfig("p1", PoolConfig.KIND_REFLINK_DIR, "/var/tmp");
        assertThatThrownBy(() -> t.addPool(out)).hasMessageContaining("outside storage.fileDirectories");
        refused(() -> t.addPool(new PoolConfig("p0", PoolConfig.KIND_REFLINK_DIR, outside.toString())),
            ControlException.Kind.CONFLICT, "name:");
        refused(() -> t.addPool(new PoolConfig("p1", "lvol", outside.toString())), ControlException.Kind.INVALID,
            "kind:");
        assertThatThrownBy(() -> t.addPool(new PoolConfig("p1", PoolConfig.KIND_REFLINK_DIR, poolDir.resolve("in")
            .toString()))).hasMessageContaining("overlaps pool 'p0'");
        assertThat(c.pools).hasSize(1);

        assertThat(ConfigStore.toJson(t.configSnapshot())).as("the document").isEqualTo(doc);
        assertThat(listing()).as("the pool's directory").isEqualTo(files);
    }

    @Test
    void aFileSystemThatCannotReflinkIsRefusedWithThatReason() throws Exception {
        Path plain = Files.createDirectory(tmp.resolve("ext4-pool")); // the test's temp dir: ext4 on this machine
        assertThatThrownBy(() -> t.addPool(new PoolConfig("p1", PoolConfig.KIND_REFLINK_DIR, plain.toString())))
            .isInstanceOf(ControlException.class)
            .hasMessageContaining("path:").hasMessageContaining("cannot reflink").hasMessageContaining("FICLONE");
        try (var left = Files.list(plain)) {
            assertThat(left.toList()).as("the probe's files are gone").isEmpty();
        }
        assertThat(t.configSnapshot().pools).extracting(p -> p.name).containsExactly("p0");
    }

    @Test
    void aCrashBetweenTheFileOperationAndTheCommitLeavesThePoolAsTheDocumentSaysAfterARestart() throws Exception {
        t.createVolume("p0", VolumeRequest.thin("base", 64 * MIB));
        write(poolDir.resolve("base.vol"), 8 * MIB);
        t.createSnapshot("p0", "base", "s0");
        t.createVolume("p0", VolumeRequest.thin("victim", 16 * MIB));
        t.settle();
        long usedBefore = t.pool("p0").used();

        crashAt("createVolume", c -> c.createVolume("p0", new VolumeRequest("new", BigInteger.valueOf(32 * MIB), null,
            true)));
        crashAt("snapshot", c -> c.createSnapshot("p0", "base", "s1"));
        crashAt("snapshot", c -> c.createGroupSnapshot("p0", List.of("base", "victim"), "g1"));
        crashAt("cloneSnapshot", c -> c.cloneSnapshot("p0", "base", "s0", "clone"));
        crashAt("resizeVolume", c -> c.resizeVolume("p0", "victim", BigInteger.valueOf(48 * MIB)));
        crashAt("deleteVolume", c -> c.deleteVolume("p0", "victim"));
        crashAt("deleteSnapshot", c -> c.deleteSnapshot("p0", "base", "s0"));

        assertThat(listing()).containsExactly("base.vol", "base@s0.snap", "victim.vol");
        assertThat(Files.size(poolDir.resolve("victim.vol"))).as("the uncommitted grow set back").isEqualTo(16 * MIB);
        assertThat(t.volumes("p0")).extracting(v -> v.name()).containsExactly("base", "victim");
        long usedAfter = usedWithin(usedBefore + MIB);
        System.out.printf("pool used before the crashes %d bytes, after them and the restarts %d%n", usedBefore,
            usedAfter);
        assertThat(usedAfter - usedBefore).as("no space leaks").isLessThan(MIB);

        // and a committed delete whose trash was not emptied yet (a crash before settle) is finished at start
        t.deleteVolume("p0", "victim");
        restart(t.configSnapshot());
        assertThat(listing()).containsExactly("base.vol", "base@s0.snap");
    }

    /**
     * A volume's file and a snapshot's file removed behind the document's back between two starts: the start goes on
     * and serves the rest; the volume lists as missing (its cause, 0 allocated bytes), its namespace is not served
     * (logged, inactive for the host, reported) and what needs the missing medium is refused; the namespace, the
     * snapshot and the volume then leave the document, and the next start finds nothing missing.
     */
    @Test
    void aVolumeWhoseFileIsMissingAtStartListsAsMissingAndOnlyItsNamespaceIsNotServed() throws Exception {
        t.createVolume("p0", VolumeRequest.thin("kept", 16 * MIB));
        t.createVolume("p0", VolumeRequest.thin("lost", 16 * MIB));
        t.createSnapshot("p0", "kept", "s1");
        t.addNamespace(TestTarget.SUBNQN, new io.nvmf4j.config.NamespaceConfig(5, "p0/kept"));
        t.addNamespace(TestTarget.SUBNQN, new io.nvmf4j.config.NamespaceConfig(6, "p0/lost"));
        TargetConfig committed = t.configSnapshot();
        t.close();
        t = null;
        Files.delete(poolDir.resolve("lost.vol"));
        Files.delete(poolDir.resolve("kept@s1.snap"));

        try (LogCapture log = new LogCapture("io.nvmf4j.engine.MissingVolumes")) {
            t = JavaEngine.start(committed);
            assertThat(log.lines("namespace 6 of " + TestTarget.SUBNQN + ": not served: its volume p0/lost is missing"
                + " (file lost.vol is not in " + poolDir + ")")).hasSize(1);
        }
        var lost = t.volume("p0", "lost");
        assertThat(lost.state()).isEqualTo("missing");
        assertThat(lost.cause()).isEqualTo("file lost.vol is not in " + poolDir);
        assertThat(lost.allocatedBytes()).isZero();
        assertThat(t.volume("p0", "kept").state()).isEqualTo("available");
        assertThat(t.snapshots("p0", "kept").get(0).allocatedBytes()).isZero();
        assertThat(t.unservedNamespaces()).containsOnlyKeys(TestTarget.SUBNQN + "/6");
        int port = t.listeners().values().iterator().next().getPort();
        try (var c = io.nvmf4j.testhost.NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN,
            TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, io.nvmf4j.testhost.TcpHostOptions.DEFAULT)) {
            assertThat(c.io(0).read(5, 0, 1).ok()).as("the volume that is there serves").isTrue();
            assertThat(c.io(0).read(6, 0, 1).sc()).as("the missing one's nsid is inactive").isEqualTo(0x0B);
        }

        refused(() -> t.resizeVolume("p0", "lost", BigInteger.valueOf(32 * MIB)), ControlException.Kind.CONFLICT,
            "volume lost of pool p0 is missing");
        refused(() -> t.createSnapshot("p0", "lost", "s2"), ControlException.Kind.CONFLICT, "is missing");
        refused(() -> t.cloneSnapshot("p0", "kept", "s1", "c1"), ControlException.Kind.CONFLICT,
            "snapshot kept@s1 of pool p0 is missing");
        refused(() -> t.setNamespaceAnaGroup(TestTarget.SUBNQN, 6, 2), ControlException.Kind.CONFLICT,
            "namespace 6 of " + TestTarget.SUBNQN + " is not served");
        t.removeNamespace(TestTarget.SUBNQN, 6);
        refused(() -> t.addNamespace(TestTarget.SUBNQN, new io.nvmf4j.config.NamespaceConfig(7, "p0/lost")),
            ControlException.Kind.CONFLICT, "bdev: volume p0/lost is missing");
        t.deleteSnapshot("p0", "kept", "s1");
        t.deleteVolume("p0", "lost");
        assertThat(t.volumes("p0")).extracting(v -> v.name()).containsExactly("kept");
        assertThat(t.unservedNamespaces()).isEmpty();
        assertThat(listing()).containsExactly("kept.vol");
        restart(t.configSnapshot());
        assertThat(t.engine().missingVolumes().all()).isEmpty();
        assertThat(t.volume("p0", "kept").state()).isEqualTo("available");
    }

    /**
     * The pool's used bytes once at most {@code bound} (XFS frees a removed file's blocks in the background), or as
     * they are after 20 s.
     */
    private long usedWithin(long bound) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long used = t.pool("p0").used();
        while (used >= bound && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
            used = t.pool("p0").used();
        }
        return used;
    }

    /** Runs {@code change} with a fault at {@code step}, then restarts from the committed document. */
    private void crashAt(String step, Consumer<ConfigController<JavaEngine>> change) throws Exception {
        TargetConfig committed = t.configSnapshot();
        t.faultHook(s -> {
            if (s.equals(step)) {
                throw new IllegalStateException("crash at " + s);
            }
        });
        assertThatThrownBy(() -> change.accept(t)).hasMessageContaining("crash at " + step);
        assertThat(ConfigStore.toJson(t.configSnapshot())).as("nothing committed").isEqualTo(ConfigStore.toJson(committed));
        restart(committed);
    }

    private void restart(TargetConfig committed) throws Exception {
        t.close();
        t = null;
        t = JavaEngine.start(committed);
    }

    @Test
    void aGroupSnapshotKeepsTheWriteOrderAcrossItsVolumes() throws Exception {
        t.createVolume("p0", VolumeRequest.thin("a", 16 * MIB));
        t.createVolume("p0", VolumeRequest.thin("b", 16 * MIB));
        t.addNamespace(TestTarget.SUBNQN, new io.nvmf4j.config.NamespaceConfig(5, "p0/a"));
        t.addNamespace(TestTarget.SUBNQN, new io.nvmf4j.config.NamespaceConfig(6, "p0/b"));
        int port = t.listeners().values().iterator().next().getPort();
        try (var c = io.nvmf4j.testhost.NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN,
            TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, io.nvmf4j.testhost.TcpHostOptions.DEFAULT)) {
            var io = c.io(0);
            var stop = new java.util.concurrent.atomic.AtomicBoolean();
            var done = new java.util.concurrent.atomic.AtomicLong();
            var writer = java.util.concurrent.CompletableFuture.runAsync(() -> {
                // write k goes to a, then to b: b never holds a write that a lacks
                for (long k = 0; !stop.get() && k < 4096; k++) {
                    byte[] block = stamp(k);
                    assertThat(io.write(5, k * 8, block).ok()).isTrue();
                    assertThat(io.write(6, k * 8, block).ok()).isTrue();
                    done.set(k + 1);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (done.get() < 100 && System.nanoTime() - deadline < 0) {
                Thread.sleep(1);
            }
            var taken = t.createGroupSnapshot("p0", List.of("a", "b"), "g");
            stop.set(true);
            writer.get(30, TimeUnit.SECONDS);
            System.out.printf("group snapshot g of a and b: writes held for %d us%n",
                TimeUnit.NANOSECONDS.toMicros(taken.pauseNanos()));
            long inA = stamped(poolDir.resolve("a@g.snap"));
            long inB = stamped(poolDir.resolve("b@g.snap"));
            System.out.printf("snapshot a@g holds writes 0..%d, b@g 0..%d%n", inA - 1, inB - 1);
            assertThat(inB).as("b's snapshot holds no write that a's lacks").isLessThanOrEqualTo(inA);
            assertThat(inA - inB).as("the two were taken at one instant").isLessThanOrEqualTo(1);
            assertThat(t.snapshots("p0", "a")).extracting(s -> s.group()).containsExactly("g");
        }
    }

    private static byte[] stamp(long k) {
        byte[] b = new byte[4096];
        java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(0, k + 1);
        return b;
    }

    /** How many stamped 4 KiB blocks, from the first, the file holds (checking that none follows a gap). */
    private static long stamped(Path file) throws Exception {
        byte[] all = Files.readAllBytes(file);
        long n = 0;
        while (n * 4096 < all.length && java.util.Arrays.equals(java.util.Arrays.copyOfRange(all, (int) n * 4096,
            (int) n * 4096 + 4096), stamp(n))) {
            n++;
        }
        for (long k = n; k * 4096 < all.length; k++) {
            assertThat(all[(int) k * 4096]).as("block %d after the gap at %d", k, n).isZero();
        }
        return n;
    }

    private void refused(ThrowableAssert.ThrowingCallable call, ControlException.Kind kind, String text) {
        assertThatThrownBy(call).isInstanceOf(ControlException.class).hasMessageContaining(text)
            .extracting(e -> ((ControlException) e).kind()).isEqualTo(kind);
    }

    private List<String> listing() throws Exception {
        try (var s = Files.list(poolDir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static void write(Path file, long bytes) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] chunk = new byte[(int) MIB];
            java.util.Arrays.fill(chunk, (byte) 0x5a);
            for (long off = 0; off < bytes; off += MIB) {
                f.seek(off);
                f.write(chunk);
            }
            f.getFD().sync();
        }
    }
}
