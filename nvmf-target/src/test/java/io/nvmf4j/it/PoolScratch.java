package io.nvmf4j.it;

import io.nvmf4j.bdev.ScratchMounts;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A fresh XFS made with {@code reflink=1} (400 MiB, on a loop device over a sparse image in {@code tmp}) with an
 * empty pool directory on it, for the volume tests (root; skipped where mkfs.xfs or losetup is missing). Undone by
 * {@link #closeAfter}.
 */
final class PoolScratch {
    /** The mount point: what {@code storage.fileDirectories} allows. */
    final Path fs;
    /** An empty directory on it for a pool. */
    final Path poolDir;
    private final ScratchMounts mounts;

    private PoolScratch(ScratchMounts mounts, Path fs, Path poolDir) {
        this.mounts = mounts;
        this.fs = fs;
        this.poolDir = poolDir;
    }

    static PoolScratch make(Path tmp) throws Exception {
        ScratchMounts.assumeRoot();
        ScratchMounts mounts = new ScratchMounts(tmp);
        try {
            Path fs = mounts.xfs(400L << 20);
            return new PoolScratch(mounts, fs, Files.createDirectory(fs.resolve("pool")));
        } catch (Exception | Error e) {
            mounts.close();
            throw e;
        }
    }

    /** Closes {@code target} (the engine serving the pool; may be null), then unmounts. */
    void closeAfter(AutoCloseable target) throws Exception {
        try {
            if (target != null) {
                target.close();
            }
        } finally {
            mounts.close();
        }
    }
}
