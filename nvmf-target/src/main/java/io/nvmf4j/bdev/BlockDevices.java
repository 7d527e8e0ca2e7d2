package io.nvmf4j.bdev;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.storage.BdevException;

import java.nio.file.Path;
import java.util.function.Function;

/** Creates a block device from its configuration. */
public final class BlockDevices {
    private BlockDevices() {
    }

    /** Creates {@code c}, which is neither an error bdev nor a file bdev (no storage is allowed). */
    public static BlockDevice create(BdevConfig c) {
        return create(c, (StorageConfig) null);
    }

    /**
     * Creates {@code c}, which is not an error bdev (those need their base: see the other overload); a file bdev
     * opens only what {@code storage} allows.
     */
    public static BlockDevice create(BdevConfig c, StorageConfig storage) {
        return create(c, storage, name -> null);
    }

    /** Creates {@code c}; an error bdev finds its base, created before it, through {@code existing}. */
    public static BlockDevice create(BdevConfig c, StorageConfig storage, Function<String, BlockDevice> existing) {
        return switch (c.type) {
            case "malloc" -> new MallocBdev(c.name, c.blockSize, c.numBlocks);
            case "null" -> new NullBdev(c.name, c.blockSize, c.numBlocks);
            case "file" -> FileBdev.open(c.name, Path.of(c.path), c.blockSize, c.numBlocks, c.directIo,
                c.ioWorkersOrDefault(), c.ioQueueDepthOrDefault(), storage, c.ioEngineOrDefault());
            case "rbd" -> RbdBdev.open(c.name, c.blockSize, c.numBlocks, new RbdBdev.Options(c.pool, c.image,
                c.cephConf, c.clientNameOrDefault(), c.keyring, c.createOrDefault(), c.timeoutSecondsOrDefault(),
                c.osdOpTimeoutSecondsOrDefault(), c.cacheOrDefault()));
            case "error" -> {
                BlockDevice base = c.base == null ? null : existing.apply(c.base);
                if (base == null) {
                    throw new BdevException("error bdev " + c.name + ": no base bdev '" + c.base + "'");
                }
                yield new ErrorBdev(c.name, base, c.maxHeldCommandsOrDefault());
            }
            default -> throw new BdevException("bdev " + c.name + ": unknown type '" + c.type + "'");
        };
    }
}
