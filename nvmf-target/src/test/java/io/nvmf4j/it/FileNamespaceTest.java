package io.nvmf4j.it;

import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A namespace on a file bdev: data written over NVMe/TCP and flushed is in the file, and a new target
 * started on the same file (numBlocks 0: take the file's size) serves it back.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileNamespaceTest {
    private static final String NQN = "nqn.2024-01.io.nvmf4j:it-file";
    private static final int BS = 512;
    private static final long BLOCKS = 16384;  // 8 MiB
    /** LBA, size: in-capsule (<= 8 KiB) and R2T writes, the first and the last block. */
    private static final long[][] WRITES = {{0, 4096}, {8, 512}, {100, 8192 + 512}, {1000, 128 * 1024},
        {BLOCKS - 1, 512}};

    private Path dir;
    private Path file;

    @BeforeEach
    void makeDir() throws IOException {
        Path base = Path.of("target", "test-files").toAbsolutePath();
        Files.createDirectories(base);
        dir = Files.createTempDirectory(base, "file-ns-");
        file = dir.resolve("ns1.img");
    }

    @AfterEach
    void deleteDir() throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    private TargetConfig config(long numBlocks) {
        TargetConfig c = new TargetConfig();
        c.storage = StorageConfig.directories(file.getParent().toString());
        BdevConfig b = new BdevConfig("f0", "file", BS, numBlocks);
        b.path = file.toString();
        c.bdevs.add(b);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = NQN;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "f0"));
        s.listeners.add(new ListenerConfig("tcp", TestTarget.ADDRESS, 0));  // ephemeral port
        c.subsystems.add(s);
        return c;
    }

    private static NvmeController connect(ConfigController<JavaEngine> t) throws IOException {
        int port = t.engine().tcpListenAddresses().get(0).getPort();
        return NvmeController.open(TestTarget.ADDRESS, port, NQN, TestTarget.HOSTNQN, TestTarget.KATO_MS, 1,
            TcpHostOptions.DEFAULT);
    }

    private static byte[] dataFor(int i) {
        return Le.random((int) WRITES[i][1], 9000 + i);
    }

    @Test
    void dataSurvivesARestartOnTheSameFile() throws Exception {
        TargetConfig first = config(BLOCKS);
        byte[] nguidBefore;
        try (ConfigController<JavaEngine> t = JavaEngine.start(first); NvmeController c = connect(t)) {
            assertThat(Files.size(file)).as("file created with numBlocks x blockSize").isEqualTo(BLOCKS * BS);
            NvmeHost io = c.io(0);
            for (int i = 0; i < WRITES.length; i++) {
                Completion w = io.write(1, WRITES[i][0], dataFor(i));
                assertThat(w.ok()).as("write %d B at LBA %d: %s", WRITES[i][1], WRITES[i][0], w).isTrue();
            }
            Completion z = io.writeZeroes(1, 0, 2);  // zero the first 1 KiB of the first write
            assertThat(z.ok()).as("%s", z).isTrue();
            Completion f = io.flush(1);
            assertThat(f.ok()).as("flush: %s", f).isTrue();
            nguidBefore = Le.slice(identifyNamespace(c), 104, 16);

            // flushed: the bytes are in the file, at LBA x block size
            byte[] expected0 = expectedFirstWrite();
            assertThat(readFile(WRITES[0][0] * BS, expected0.length)).isEqualTo(expected0);
            for (int i = 1; i < WRITES.length; i++) {
                assertThat(readFile(WRITES[i][0] * BS, (int) WRITES[i][1])).as("file bytes of write %d", i)
                    .isEqualTo(dataFor(i));
            }
        }

        // a new target, told nothing about the size, with the identities the first start assigned
        TargetConfig second = config(0);
        second.subsystems.get(0).serial = first.subsystems.get(0).serial;
        NamespaceConfig ns = second.subsystems.get(0).namespaces.get(0);
        ns.nguid = first.subsystems.get(0).namespaces.get(0).nguid;
        ns.uuid = first.subsystems.get(0).namespaces.get(0).uuid;
        try (ConfigController<JavaEngine> t = JavaEngine.start(second); NvmeController c = connect(t)) {
            byte[] id = identifyNamespace(c);
            assertThat(Le.u64(id, 0)).as("NSZE taken from the file").isEqualTo(BLOCKS);
            assertThat(Le.slice(id, 104, 16)).as("NGUID kept").isEqualTo(nguidBefore);
            NvmeHost io = c.io(0);
            Completion r0 = io.read(1, WRITES[0][0], (int) WRITES[0][1] / BS);
            assertThat(r0.ok()).as("%s", r0).isTrue();
            assertThat(r0.data()).as("first write, with its first 2 blocks zeroed").isEqualTo(expectedFirstWrite());
            for (int i = 1; i < WRITES.length; i++) {
                Completion r = io.read(1, WRITES[i][0], (int) WRITES[i][1] / BS);
                assertThat(r.ok()).as("read %d B at LBA %d: %s", WRITES[i][1], WRITES[i][0], r).isTrue();
                assertThat(r.data()).as("data at LBA %d after restart", WRITES[i][0]).isEqualTo(dataFor(i));
            }
            Completion untouched = io.read(1, 5000, 8);
            assertThat(Le.allZero(untouched.data())).as("never written blocks read zeros").isTrue();
        }
    }

    @Test
    void deallocatedBlocksReadZerosOverNvmeTcp() throws Exception {
        try (ConfigController<JavaEngine> t = JavaEngine.start(config(BLOCKS)); NvmeController c = connect(t)) {
            NvmeHost io = c.io(0);
            TestTarget.assertWriteReadBack(io, 200, 16384, 31);
            Completion d = io.deallocate(1, new NvmeHost.Range(204, 8));
            assertThat(d.ok()).as("%s", d).isTrue();
            byte[] all = io.read(1, 200, 32).data();
            byte[] written = Le.random(16384, 31);
            assertThat(Le.slice(all, 0, 4 * BS)).isEqualTo(Le.slice(written, 0, 4 * BS));
            assertThat(Le.allZero(Le.slice(all, 4 * BS, 8 * BS))).as("deallocated range").isTrue();
            assertThat(Le.slice(all, 12 * BS, 20 * BS)).isEqualTo(Le.slice(written, 12 * BS, 20 * BS));
        }
    }

    private byte[] expectedFirstWrite() {
        byte[] b = dataFor(0);
        java.util.Arrays.fill(b, 0, 2 * BS, (byte) 0);
        return b;
    }

    private static byte[] identifyNamespace(NvmeController c) {
        Completion id = c.admin().identify(0x00, 1, 0);
        assertThat(id.ok()).as("%s", id).isTrue();
        return id.data();
    }

    private byte[] readFile(long offset, int length) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            while (b.hasRemaining() && ch.read(b, offset + b.position()) >= 0) {
                // keep reading
            }
            return b.array();
        }
    }

    /**
     * With O_DIRECT (blocks of 4 KiB), NVMe/TCP reads and the writes whose data follows an R2T land in buffers
     * whose data is aligned, so the file is read into them and written from them in place: none goes through a
     * worker's bounce buffer and its extra copy. In-capsule write data sits where the socket put it and may
     * still bounce (not checked).
     */
    @Test
    void directIoReadsAndR2tWritesNeedNoBounceBuffer() throws Exception {
        int bs = 4096;
        TargetConfig cfg = config(0);
        BdevConfig b = cfg.bdevs.get(0);
        b.blockSize = bs;
        b.numBlocks = 2048; // 8 MiB
        b.directIo = true;
        ConfigController<JavaEngine> t;
        try {
            t = JavaEngine.start(cfg);
        } catch (RuntimeException e) {
            org.junit.jupiter.api.Assumptions.assumeFalse(String.valueOf(e.getMessage()).contains("Invalid argument"),
                "the filesystem under " + dir + " refuses O_DIRECT: " + e.getMessage());
            throw e;
        }
        try (t; NvmeController c = NvmeController.open(TestTarget.ADDRESS, t.engine().tcpListenAddresses().get(0).getPort(),
                NQN, TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT.withHpda(7))) {
            NvmeHost io = new NvmeHost(c.io(0).queue(), bs); // the test host's default is 512-byte blocks
            int[] blocks = {1, 2, 8, 32}; // 4 KiB to 128 KiB
            io.nvmf4j.bdev.FileBdev f0 = (io.nvmf4j.bdev.FileBdev) t.engine().bdev("f0");
            long lba = 0;
            byte[][] data = new byte[blocks.length][];
            for (int i = 0; i < blocks.length; i++) {
                data[i] = Le.random(blocks[i] * bs, 4400 + i);
                long before = f0.bouncedIos();
                assertThat(io.write(1, lba, data[i]).ok()).isTrue();
                if (data[i].length > TcpHostOptions.DEFAULT.inCapsuleDataSize()) {
                    assertThat(f0.bouncedIos() - before).as("a %d-byte write after an R2T went through the bounce buffer",
                        data[i].length).isZero();
                }
                lba += blocks[i];
            }
            assertThat(io.flush(1).ok()).isTrue();
            long bouncedBefore = f0.bouncedIos();
            for (int round = 0; round < 3; round++) {
                lba = 0;
                for (int i = 0; i < blocks.length; i++) {
                    Completion r = io.read(1, lba, blocks[i]);
                    assertThat(r.ok()).as("read of %d blocks: %s", blocks[i], r).isTrue();
                    assertThat(r.data()).isEqualTo(data[i]);
                    lba += blocks[i];
                }
            }
            assertThat(f0.bouncedIos() - bouncedBefore)
                .as("reads that went through the bounce buffer").isZero();
        }
    }
}
