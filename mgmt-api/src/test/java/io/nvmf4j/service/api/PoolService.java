package io.nvmf4j.service.api;

import io.nvmf4j.bdev.ScratchMounts;
import io.nvmf4j.config.StorageConfig;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The service in-process (see {@link TestService}) whose {@code storage.fileDirectories} is a fresh XFS made with
 * {@code reflink=1} (400 MiB, on a loop device over a sparse image in {@code tmp}), with an empty directory on it for
 * a pool. Needs root; skips the test where mkfs.xfs or losetup is missing. {@link #close} stops the service, then
 * unmounts.
 */
public final class PoolService implements AutoCloseable {
    public final TestService service;
    /** An empty directory on the XFS for a pool. */
    public final Path poolDir;
    private final ScratchMounts mounts;

    private PoolService(ScratchMounts mounts, TestService service, Path poolDir) {
        this.mounts = mounts;
        this.service = service;
        this.poolDir = poolDir;
    }

    public static PoolService start(Path tmp) throws Exception {
        ScratchMounts.assumeRoot();
        ScratchMounts mounts = new ScratchMounts(tmp);
        try {
            Path fs = mounts.xfs(400L << 20);
            Path poolDir = Files.createDirectory(fs.resolve("pool"));
            TestService t = TestService.start(Files.createDirectory(tmp.resolve("state")),
                c -> c.storage = StorageConfig.directories(fs.toString()));
            return new PoolService(mounts, t, poolDir);
        } catch (Exception | Error e) {
            mounts.close();
            throw e;
        }
    }

    @Override
    public void close() throws Exception {
        try {
            service.close();
        } finally {
            mounts.close();
        }
    }
}
