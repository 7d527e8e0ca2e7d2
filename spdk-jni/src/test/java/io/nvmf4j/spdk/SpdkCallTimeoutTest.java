package io.nvmf4j.spdk;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A file bdev whose creation outlasts the control call's timeout (SPDK's app thread held by the test hook while
 * {@code addBdev} waits): the call fails with ETIMEDOUT, the descriptor it handed SPDK stays open until SPDK ran
 * the call, so the bdev SPDK builds later serves the file that was asked for, even though the test meanwhile opens
 * another file as often as it can to take a freed descriptor number, and the descriptor is closed once SPDK is
 * done with it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkCallTimeoutTest {
    private static final int CALL_TIMEOUT_MS = 1000; // spdk.callTimeoutMs's lower bound
    private static final int BLOCKS = 2048;
    private static final int NSID = 7;
    private static final long AWAIT_MS = 30_000;

    private static ConfigController<Engine> engine;
    private static int port;

    @BeforeAll
    static void start() throws IOException {
        SpdkTools.assumeBuilt();
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        cfg.spdk.callTimeoutMs = CALL_TIMEOUT_MS;
        port = cfg.subsystems.get(0).listeners.get(0).port;
        engine = Engines.start(cfg, IoObserver.NONE);
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            SpdkNative.releaseAppThread();
            engine.close();
        }
    }

    @Test
    void aFileBdevCreatedAfterItsCallTimedOutServesTheFileAskedForAndItsDescriptorIsClosedAfterwards(
        @TempDir Path dir) throws Exception {
        Path wanted = image(dir.resolve("wanted.img"), (byte) 0xA5).toRealPath();
        Path other = image(dir.resolve("other.img"), (byte) 0x5A).toRealPath();
        BdevConfig b = new BdevConfig("late0", "file", TestTarget.BLOCK_SIZE, BLOCKS);
        b.path = wanted.toString();

        List<FileChannel> takers = new ArrayList<>();
        SpdkNative.holdAppThread();
        boolean held = true;
        try {
            CompletableFuture<Void> add = CompletableFuture.runAsync(() -> engine.addBdev(b));
            int fd = await("the engine's descriptor of " + wanted, () -> add.isDone() || !fdsOf(wanted).isEmpty())
                ? single(fdsOf(wanted)) : -1;
            assertThat(fd).as("descriptor of the file, seen while the call waits").isNotNegative();

            Throwable thrown = failure(add);
            assertThat(thrown).isInstanceOf(ControlException.class)
                .hasMessageContaining("SPDK did not finish the call within " + CALL_TIMEOUT_MS + " ms");
            // a closed descriptor number is the lowest free one and goes to the next open: take the free numbers
            for (int i = 0; i < 32 && !other.equals(target(fd)); i++) {
                takers.add(FileChannel.open(other, StandardOpenOption.READ));
            }
            assertThat(target(fd)).as("descriptor %d while SPDK has not run the call", fd).isEqualTo(wanted);

            SpdkNative.releaseAppThread();
            held = false;
            assertThat(await("SPDK to create bdev late0", () -> SpdkNative.bdevStats().contains("late0\t")))
                .as("bdev late0 created by SPDK once its app thread went on").isTrue();
            assertThat(await("descriptor " + fd + " closed", () -> !wanted.equals(target(fd))))
                .as("the handed-over descriptor %d closed once SPDK opened its own", fd).isTrue();
            assertThat(fdsOf(wanted)).as("descriptors of %s: SPDK's aio bdev's own", wanted).hasSize(1);

            SpdkNative.addNamespace(TestTarget.SUBNQN, NSID, "late0", null, null, null, false, 1, null);
            try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN,
                TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                Completion r = c.io(0).read(NSID, 0, 1);
                assertThat(r.ok()).as("%s", r).isTrue();
                assertThat(r.data()).as("block 0 of the exported bdev (0xA5: %s, 0x5A: %s)", wanted, other)
                    .containsOnly((byte) 0xA5);
            } finally {
                SpdkNative.removeNamespace(TestTarget.SUBNQN, NSID);
                SpdkNative.deleteBdev("file", "late0");
            }
        } finally {
            if (held) {
                SpdkNative.releaseAppThread();
            }
            for (FileChannel ch : takers) {
                ch.close();
            }
        }
    }

    private static Path image(Path p, byte fill) throws IOException {
        byte[] data = new byte[BLOCKS * TestTarget.BLOCK_SIZE];
        Arrays.fill(data, fill);
        return Files.write(p, data);
    }

    private static Throwable failure(CompletableFuture<Void> f) throws InterruptedException {
        try {
            f.get(AWAIT_MS, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("addBdev did not return within " + AWAIT_MS + " ms");
        }
    }

    /** Polls {@code done} every 10 ms for at most {@link #AWAIT_MS}; whether it came true. */
    private static boolean await(String what, BooleanSupplier done) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AWAIT_MS);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    private static int single(List<Integer> fds) {
        assertThat(fds).as("descriptors of the file while the call waits").hasSize(1);
        return fds.get(0);
    }

    /** This process's descriptors that name {@code file}. */
    private static List<Integer> fdsOf(Path file) {
        List<Integer> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            s.forEach(p -> {
                int fd = Integer.parseInt(p.getFileName().toString());
                if (file.equals(target(fd))) {
                    out.add(fd);
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** The file descriptor {@code fd} names, or null when it is not open. */
    private static Path target(int fd) {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd));
        } catch (IOException e) {
            return null;
        }
    }
}
