package io.nvmf4j.bdev;

import io.netty.channel.EventLoop;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.runtime.IdleStrategyNames;
import io.nvmf4j.runtime.PollGroups;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Path;

/**
 * The two ways a file bdev does its I/O, for tests that run once on each ({@code @ParameterizedClass} with
 * {@code @EnumSource(IoPath.class)}): {@link #URING} opens the device with {@code ioEngine io_uring} and calls it
 * from a real poll group (its ring is that poll group's), {@link #THREADS} with {@code ioEngine threads} and calls
 * it from the test's thread, as the workers do not care who calls.
 */
enum IoPath {
    /** The poll group's io_uring ring. */
    URING(BdevConfig.IO_ENGINE_URING),
    /** The worker threads, forced by the config field (the fallback where io_uring is missing or refused). */
    THREADS(BdevConfig.IO_ENGINE_THREADS);

    /** The poll group the {@link #URING} devices are called from: one, as a target with {@code cores 1} has. */
    private static PollGroups pollGroups;

    final String engine;

    IoPath(String engine) {
        this.engine = engine;
    }

    /** Opens {@code file} (under its own directory) as {@link FileBdev#open(String, Path, int, long, boolean)} does. */
    FileBdev open(String name, Path file, int blockSize, long numBlocks, boolean directIo) {
        Path abs = file.toAbsolutePath().normalize();
        return open(name, abs, blockSize, numBlocks, directIo, StorageConfig.directories(String.valueOf(abs.getParent())));
    }

    /** Opens {@code file} where {@code storage} allows, on this path. */
    FileBdev open(String name, Path file, int blockSize, long numBlocks, boolean directIo, StorageConfig storage) {
        if (this == URING) {
            Assumptions.assumeTrue(FileRing.unavailabilityCause() == null,
                () -> "io_uring is unavailable here: " + FileRing.unavailabilityCause());
        }
        FileBdev d = FileBdev.open(name, file, blockSize, numBlocks, directIo, BdevConfig.DEFAULT_IO_WORKERS,
            BdevConfig.DEFAULT_IO_QUEUE_DEPTH, storage, engine);
        if (!d.ioEngine().equals(engine)) {
            d.close();
            throw new AssertionError("file bdev opened with ioEngine " + engine + " reports " + d.ioEngine());
        }
        return d;
    }

    /**
     * {@code d} as a test calls it: a device on the io_uring path is called from the poll group (every I/O call
     * runs there; the rest goes straight to {@code d}), any other as it is.
     */
    static BlockDevice on(BlockDevice d) {
        return d instanceof FileBdev f && f.ioEngine().equals(BdevConfig.IO_ENGINE_URING) ? new OnPollGroup(f) : d;
    }

    /** The poll group's event loop (started on first use, kept for the test JVM). */
    static synchronized EventLoop pollGroup() {
        if (pollGroups == null) {
            pollGroups = new PollGroups(1, IdleStrategyNames.BACKOFF);
        }
        return pollGroups.workers().next();
    }

    /** Whether the calling thread is a poll group's (a ring's completion runs there). */
    static boolean onPollGroupThread(Thread t) {
        return t.getName().startsWith("nvmf4j-poll");
    }

    /** A file bdev whose I/O calls run on the poll group, as a transport's requests make them. */
    private static final class OnPollGroup implements BlockDevice {
        private final FileBdev d;
        private final EventLoop loop = pollGroup();

        OnPollGroup(FileBdev d) {
            this.d = d;
        }

        @Override
        public String name() {
            return d.name();
        }

        @Override
        public boolean wantsAlignedBuffers() {
            return d.wantsAlignedBuffers();
        }

        @Override
        public int blockSize() {
            return d.blockSize();
        }

        @Override
        public long numBlocks() {
            return d.numBlocks();
        }

        @Override
        public void read(BdevIo io) {
            loop.execute(() -> d.read(io));
        }

        @Override
        public void write(BdevIo io) {
            loop.execute(() -> d.write(io));
        }

        @Override
        public void flush(BdevIo io) {
            loop.execute(() -> d.flush(io));
        }

        @Override
        public void writeZeroes(BdevIo io) {
            loop.execute(() -> d.writeZeroes(io));
        }

        @Override
        public void deallocate(BdevIo io) {
            loop.execute(() -> d.deallocate(io));
        }

        @Override
        public void grow(long newNumBlocks) {
            d.grow(newNumBlocks);
        }

        @Override
        public boolean persistent() {
            return d.persistent();
        }

        @Override
        public boolean writeCacheEnabled() {
            return d.writeCacheEnabled();
        }

        @Override
        public void setWriteCacheEnabled(boolean enabled) {
            d.setWriteCacheEnabled(enabled);
        }

        @Override
        public DiscardLimits discardLimits() {
            return d.discardLimits();
        }

        @Override
        public int stickyErrorStatus() {
            return d.stickyErrorStatus();
        }

        @Override
        public long durabilityErrors() {
            return d.durabilityErrors();
        }

        @Override
        public void close() {
            d.close();
        }
    }
}
