package io.nvmf4j.bdev;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.storage.BdevException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.allZero;
import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The file block device driven through {@link BlockDevice} directly. Files live under the module's
 * {@code target/} directory (a real disk filesystem, so O_DIRECT has a chance; /tmp may be tmpfs).
 */
@ParameterizedClass(name = "{0}")
@EnumSource(IoPath.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBdevTest {
    /** The I/O path every test here runs on (each runs on both). */
    @Parameter
    IoPath path;

    private static final int BS = 512;

    private Path dir;
    private final List<FileBdev> open = new ArrayList<>();

    @BeforeEach
    void makeDir() throws IOException {
        dir = TestDirs.create("file-bdev-");
    }

    @AfterEach
    void cleanUp() throws IOException {
        open.forEach(FileBdev::close);
        TestDirs.delete(dir);
    }

    private FileBdev open(Path file, int blockSize, long numBlocks, boolean directIo) {
        FileBdev d = path.open("f0", file, blockSize, numBlocks, directIo);
        open.add(d);
        return d;
    }

    private void close(FileBdev d) {
        open.remove(d);
        d.close();
    }

    @Test
    void createWithNumBlocksMakesASparseFileOfThatSize() throws Exception {
        Path file = dir.resolve("sub/dir/disk.img");
        long blocks = 131072;  // 64 MiB
        assertThatThrownBy(() -> open(file, BS, blocks, false)).isInstanceOf(BdevException.class)
            .hasMessage("file bdev f0: directory " + file.getParent() + " does not exist; nvmf4j creates no "
                + "directories, make it first");
        assertThat(dir.resolve("sub")).as("no directory was made").doesNotExist();
        Files.createDirectories(file.getParent());
        FileBdev d = open(file, BS, blocks, false);
        assertThat(Files.getPosixFilePermissions(file)).as("a new image is mode 0600")
            .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(d.numBlocks()).isEqualTo(blocks);
        assertThat(d.blockSize()).isEqualTo(BS);
        assertThat(d.persistent()).isTrue();
        assertThat(d.path()).isEqualTo(file);
        assertThat(Files.size(file)).as("file size = numBlocks x blockSize").isEqualTo(blocks * BS);
        long allocated = allocatedBytes(file);
        assertThat(allocated).as("bytes allocated on disk for a fresh 64 MiB file (sparse)").isLessThan(1 << 20);
        assertThat(allZero(read(d, 0, 64 * 1024))).as("a fresh file reads zeros").isTrue();
    }

    /**
     * O_NOFOLLOW: a symbolic link as the file is refused at open(2) even where no validator looked (the link
     * target, here another image, is neither opened nor grown).
     */
    @Test
    void aSymbolicLinkIsNotFollowed() throws Exception {
        Path target = Files.write(dir.resolve("victim.img"), new byte[BS]);
        Path link = Files.createSymbolicLink(dir.resolve("link.img"), target);
        assertThatThrownBy(() -> open(link, BS, 64, false)).isInstanceOf(BdevException.class)
            .hasMessageStartingWith("file bdev f0: " + link + " passes through a symbolic link");
        assertThat(Files.size(target)).as("the link's target was not grown").isEqualTo(BS);
    }

    @Test
    void writeReadVerifyAtSeveralOffsetsAndTheBytesLandInTheFile() throws Exception {
        Path file = dir.resolve("disk.img");
        FileBdev d = open(file, BS, 8192, false);
        long[] offsets = {0, BS, 10 * BS, 3 * 4096, 1 << 20, (8192 - 1) * BS};
        int[] lengths = {BS, 4096, 3 * BS, 128 * 1024, 2 << 20, BS};
        for (int i = 0; i < offsets.length; i++) {
            assertThat(write(d, offsets[i], random(lengths[i], 200 + i))).as("write at %d", offsets[i])
                .isEqualTo(NvmeStatus.SUCCESS);
        }
        for (int i = 0; i < offsets.length; i++) {
            byte[] expected = random(lengths[i], 200 + i);
            assertThat(read(d, offsets[i], lengths[i])).as("read back at %d", offsets[i]).isEqualTo(expected);
        }
        flush(d);
        for (int i = 0; i < offsets.length; i++) {
            assertThat(readFile(file, offsets[i], lengths[i])).as("file bytes at %d", offsets[i])
                .isEqualTo(random(lengths[i], 200 + i));
        }
    }

    @Test
    void flushCompletesOnceWithSuccess() {
        FileBdev d = open(dir.resolve("disk.img"), BS, 2048, false);
        write(d, 0, random(4096, 1));
        try (TestIo f = TestIo.of(0, 0)) {
            IoPath.on(d).flush(f);
            assertThat(f.await()).isEqualTo(NvmeStatus.SUCCESS);
            if (path == IoPath.THREADS) {
                assertThat(f.asyncCompletions.get()).as("a worker completes it for the caller").isEqualTo(1);
                assertThat(f.syncCompletions.get()).isZero();
            } else {
                assertThat(f.syncCompletions.get()).as("the poll group reaps it from its ring").isEqualTo(1);
                assertThat(f.asyncCompletions.get()).isZero();
                assertThat(IoPath.onPollGroupThread(f.completionThread)).as("completed on %s", f.completionThread)
                    .isTrue();
            }
        }
    }

    @Test
    void writeZeroesAndDeallocateReadBackZeros() throws Exception {
        Path file = dir.resolve("disk.img");
        FileBdev d = open(file, BS, 8192, false);
        int len = 3 << 20;  // larger than one zeroing chunk (1 MiB)
        byte[] data = random(len + 64 * BS, 5);
        write(d, 0, data);
        try (TestIo z = TestIo.of(4 * BS, len - 8 * BS)) {
            IoPath.on(d).writeZeroes(z);
            assertThat(z.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        try (TestIo a = TestIo.of(len + 8 * BS, 16 * BS)) {
            IoPath.on(d).deallocate(a);
            assertThat(a.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        byte[] all = read(d, 0, data.length);
        assertThat(slice(all, 0, 4 * BS)).as("before the zeroed range").isEqualTo(slice(data, 0, 4 * BS));
        assertThat(allZero(slice(all, 4 * BS, len - 8 * BS))).as("write-zeroed range").isTrue();
        assertThat(slice(all, len - 4 * BS, 12 * BS)).as("between the ranges")
            .isEqualTo(slice(data, len - 4 * BS, 12 * BS));
        assertThat(allZero(slice(all, len + 8 * BS, 16 * BS))).as("deallocated range").isTrue();
        assertThat(slice(all, len + 24 * BS, 40 * BS)).as("after the ranges")
            .isEqualTo(slice(data, len + 24 * BS, 40 * BS));
        flush(d);
        assertThat(allZero(readFile(file, len + 8 * BS, 16 * BS))).as("deallocated range in the file").isTrue();
    }

    @Test
    void closeAndReopenKeepsData() {
        Path file = dir.resolve("disk.img");
        FileBdev d = open(file, BS, 4096, false);
        byte[] a = random(8192, 31);
        byte[] b = random(BS, 32);
        write(d, 0, a);
        write(d, 4095L * BS, b);
        close(d);  // no explicit flush: close must make the writes durable itself

        FileBdev again = open(file, BS, 0, false);
        assertThat(again.numBlocks()).as("numBlocks 0 takes the existing size").isEqualTo(4096);
        assertThat(read(again, 0, a.length)).isEqualTo(a);
        assertThat(read(again, 4095L * BS, BS)).isEqualTo(b);
    }

    @Test
    void numBlocksZeroOnAnExistingFileTakesItsSize() throws Exception {
        Path file = dir.resolve("existing.img");
        byte[] content = random((3 << 20) + 100, 41);  // not a whole number of blocks
        Files.write(file, content);
        FileBdev d = open(file, 4096, 0, false);
        assertThat(d.numBlocks()).as("whole 4 KiB blocks in 3 MiB + 100 bytes").isEqualTo(768);
        assertThat(read(d, 4096, 4096)).as("existing content is exposed").isEqualTo(slice(content, 4096, 4096));
        assertThat(Files.size(file)).as("opening does not change the file").isEqualTo(content.length);
    }

    @Test
    void numBlocksSmallerThanTheFileKeepsTheFile() throws Exception {
        Path file = dir.resolve("bigger.img");
        Files.write(file, new byte[1 << 20]);
        FileBdev d = open(file, BS, 16, false);
        assertThat(d.numBlocks()).isEqualTo(16);
        assertThat(Files.size(file)).as("not truncated").isEqualTo(1 << 20);
    }

    @Test
    void numBlocksZeroOnAnEmptyFileFailsNamingTheFile() throws Exception {
        Path file = dir.resolve("empty.img");
        Files.createFile(file);
        assertThatThrownBy(() -> open(file, BS, 0, false))
            .isInstanceOf(BdevException.class)
            .hasMessageContaining(file.toString())
            .hasMessageContaining("f0")
            .hasMessageContaining("empty");
    }

    @Test
    void numBlocksZeroOnANewFileFailsNamingTheFile() {
        Path file = dir.resolve("new.img");
        assertThatThrownBy(() -> open(file, BS, 0, false))
            .isInstanceOf(BdevException.class)
            .hasMessageContaining(file.toString())
            .hasMessageContaining("numBlocks");
    }

    @Test
    void aDirectoryCannotBeOpened() {
        assertThatThrownBy(() -> BlockDevices.create(fileConfig(dir.toString(), 16, false)))
            .isInstanceOf(BdevException.class)
            .hasMessageContaining(dir.toString());
    }

    @Test
    void completionsArriveExactlyOnceOnTheirPath() {
        Path file = dir.resolve("disk.img");
        FileBdev d = open(file, BS, 4096, false);
        List<TestIo> ios = new ArrayList<>();
        try {
            for (int i = 0; i < 64; i++) {
                TestIo io = TestIo.of(i * 4096L, random(4096, 500 + i));
                ios.add(io);
                IoPath.on(d).write(io);
            }
            for (TestIo io : ios) {
                assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
            }
            // close waits for the worker pool to terminate and the rings to give back every operation: no
            // completion can arrive after it
            close(d);
            for (TestIo io : ios) {
                if (path == IoPath.THREADS) {
                    assertThat(io.asyncCompletions.get()).as("async completions of I/O at %d", io.offset()).isEqualTo(1);
                    assertThat(io.syncCompletions.get()).as("sync completions of I/O at %d", io.offset()).isZero();
                    assertThat(io.completionThread.getName()).startsWith("bdev-f0-");
                } else {
                    // the poll group reaps its ring and completes on its own thread: no hand-over
                    assertThat(io.syncCompletions.get()).as("sync completions of I/O at %d", io.offset()).isEqualTo(1);
                    assertThat(io.asyncCompletions.get()).as("async completions of I/O at %d", io.offset()).isZero();
                    assertThat(IoPath.onPollGroupThread(io.completionThread)).as("completed on %s", io.completionThread)
                        .isTrue();
                }
                assertThat(io.completionThread).isNotSameAs(Thread.currentThread());
            }
        } finally {
            ios.forEach(TestIo::close);
        }
        FileBdev again = open(file, BS, 0, false);
        for (int i = 0; i < 64; i++) {
            assertThat(read(again, i * 4096L, 4096)).isEqualTo(random(4096, 500 + i));
        }
    }

    @Test
    void directIoOnAPreSizedFile() throws Exception {
        Path file = dir.resolve("direct.img");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.truncate(0);
            ch.write(ByteBuffer.allocate(1), (4L << 20) - 1);
        }
        FileBdev d = openDirectOrSkip(file, 4096, 0);
        assertThat(d.numBlocks()).isEqualTo(1024);
        exerciseDirect(d, file);
    }

    @Test
    void directIoCreatingTheFile() throws Exception {
        Path file = dir.resolve("direct-new.img");
        FileBdev d = openDirectOrSkip(file, 4096, 1024);
        assertThat(Files.size(file)).isEqualTo(4L << 20);
        exerciseDirect(d, file);
    }

    private void exerciseDirect(FileBdev d, Path file) throws IOException {
        long[] offsets = {0, 4096, 5 * 4096, 1 << 20, (1024 - 1) * 4096L};
        int[] lengths = {4096, 8192, 3 * 4096, (2 << 20) + 4096, 4096};  // one longer than the bounce buffer
        for (int i = 0; i < offsets.length; i++) {
            assertThat(write(d, offsets[i], random(lengths[i], 700 + i))).as("O_DIRECT write at %d", offsets[i])
                .isEqualTo(NvmeStatus.SUCCESS);
        }
        for (int i = 0; i < offsets.length; i++) {
            assertThat(read(d, offsets[i], lengths[i])).as("O_DIRECT read at %d", offsets[i])
                .isEqualTo(random(lengths[i], 700 + i));
        }
        try (TestIo z = TestIo.of(4096, 8192)) {
            IoPath.on(d).writeZeroes(z);
            assertThat(z.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(allZero(read(d, 4096, 8192))).as("O_DIRECT write zeroes").isTrue();
        try (TestIo fua = TestIo.of(8 * 4096, random(3 * 4096, 777)).withFua()) {
            IoPath.on(d).write(fua);
            assertThat(fua.await()).as("O_DIRECT write with FUA (RWF_DSYNC)").isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(read(d, 8 * 4096, 3 * 4096)).isEqualTo(random(3 * 4096, 777));
        flush(d);
        close(d);
        assertThat(readFile(file, 5 * 4096, 3 * 4096)).as("file bytes written with O_DIRECT")
            .isEqualTo(random(3 * 4096, 702));
    }

    /** Block size 512 with O_DIRECT cannot be served (the filesystem block is larger): refused at open. */
    @Test
    void directIoWithSmallBlocksIsRefused() throws Exception {
        Path file = dir.resolve("direct512.img");
        Files.write(file, new byte[1 << 20]);
        long fsBlock = Files.getFileStore(file).getBlockSize();
        Assumptions.assumeTrue(fsBlock > BS, "filesystem block " + fsBlock + " is not larger than " + BS);
        assertThatThrownBy(() -> open(file, BS, 0, true))
            .isInstanceOf(BdevException.class)
            .hasMessageContaining("directIo needs blockSize >= the filesystem block size");
    }

    private FileBdev openDirectOrSkip(Path file, int blockSize, long numBlocks) {
        try {
            return open(file, blockSize, numBlocks, true);
        } catch (BdevException e) {
            String why = String.valueOf(e.getMessage());
            Assumptions.assumeFalse(why.contains("Invalid argument") || why.contains("EINVAL")
                    || e.getCause() instanceof UnsupportedOperationException,
                "filesystem under " + dir + " refuses O_DIRECT: " + why);
            throw e;
        }
    }

    private static BdevConfig fileConfig(String path, long numBlocks, boolean directIo) {
        BdevConfig c = new BdevConfig("f0", "file", BS, numBlocks);
        c.path = path;
        c.directIo = directIo;
        return c;
    }

    private static void flush(BlockDevice d) {
        try (TestIo f = TestIo.of(0, 0)) {
            IoPath.on(d).flush(f);
            assertThat(f.await()).as("flush status").isEqualTo(NvmeStatus.SUCCESS);
        }
    }

    private static byte[] readFile(Path file, long offset, int length) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            while (b.hasRemaining()) {
                if (ch.read(b, offset + b.position()) < 0) {
                    break;
                }
            }
            return b.array();
        }
    }

    /** st_blocks x 512 from stat(1): Java has no portable way to ask how much of a file is allocated. */
    private static long allocatedBytes(Path file) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("stat(1) is not available: " + e);
            throw e;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor(5, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("stat: %s", out).isZero();
        String[] f = out.split(" ");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }

    private static byte[] slice(byte[] b, int off, int len) {
        byte[] s = new byte[len];
        System.arraycopy(b, off, s, 0, len);
        return s;
    }
}
