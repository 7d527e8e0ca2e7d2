package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeHost;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the volume tests of both engines check a snapshot with: 4 KiB blocks that each say which write they are,
 * written one after another while the snapshot is taken, then read back from a clone of it.
 */
public final class StampedWrites {
    public static final int STAMP = 4096;

    private StampedWrites() {
    }

    /** A 4 KiB block that says it is write {@code k}. */
    public static byte[] stamp(long k) {
        ByteBuffer b = ByteBuffer.allocate(STAMP).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            b.putLong(k + 1);
        }
        return b.array();
    }

    /**
     * How many stamped blocks, from the first, read back as written (write {@code k} in block {@code k} from byte
     * {@code base}), and checks that none after them does: the snapshot holds a prefix of the writes, each whole.
     */
    public static long stampedPrefix(NvmeHost io, int nsid, int blockSize, long base, long upTo) {
        long prefix = -1;
        for (long k = 0; k < upTo; k++) {
            Completion r = io.read(nsid, (base + k * STAMP) / blockSize, STAMP / blockSize);
            assertThat(r.ok()).isTrue();
            if (!Arrays.equals(r.data(), stamp(k))) {
                assertThat(r.data()).as("block %d is either write %d, whole, or never written", k, k)
                    .isEqualTo(new byte[STAMP]);
                if (prefix < 0) {
                    prefix = k;
                }
            } else {
                assertThat(prefix).as("write %d is in the snapshot but write %d before it is not", k, prefix)
                    .isNegative();
            }
        }
        return prefix < 0 ? upTo : prefix;
    }

    /** {@code bytes} from LBA 0 of {@code nsid}, read 64 KiB at a time. */
    public static byte[] readAll(NvmeHost io, int nsid, int blockSize, int bytes) {
        byte[] out = new byte[bytes];
        for (int off = 0; off < bytes; off += 64 << 10) {
            Completion r = io.read(nsid, off / blockSize, (64 << 10) / blockSize);
            assertThat(r.ok()).as("read at %d: %s", off, r).isTrue();
            System.arraycopy(r.data(), 0, out, off, 64 << 10);
        }
        return out;
    }

    /** Waits (at most 30 s) until {@code n} reaches {@code target}. */
    public static void awaitAtLeast(AtomicLong n, long target) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (n.get() < target) {
            assertThat(System.nanoTime() - deadline).as("waiting for %d writes, %d done", target, n.get()).isNegative();
            Thread.sleep(1);
        }
    }

    /** A queue writing stamped blocks one after another from byte {@code base} until stopped (or {@code max}). */
    public static final class Writer {
        /** Writes acknowledged so far. */
        public final AtomicLong acknowledged = new AtomicLong();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final CompletableFuture<Void> done;

        private Writer(NvmeHost queue, int nsid, int blockSize, long base, long max) {
            done = CompletableFuture.runAsync(() -> {
                for (long k = 0; !stop.get() && k < max; k++) {
                    Completion w = queue.write(nsid, (base + k * STAMP) / blockSize, stamp(k));
                    assertThat(w.ok()).as("stamped write %d: %s", k, w).isTrue();
                    acknowledged.set(k + 1);
                }
            });
        }

        public static Writer start(NvmeHost queue, int nsid, int blockSize, long base, long max) {
            return new Writer(queue, nsid, blockSize, base, max);
        }

        /** Stops it and waits (at most 60 s) for its last write. */
        public void stop() throws Exception {
            stop.set(true);
            done.get(60, TimeUnit.SECONDS);
        }
    }
}
