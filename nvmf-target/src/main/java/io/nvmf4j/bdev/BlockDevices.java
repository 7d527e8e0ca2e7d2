package io.nvmf4j.bdev;

import io.nvmf4j.config.BdevConfig;

import java.nio.file.Path;

/** Creates a block device from its configuration. */
public final class BlockDevices {
    private BlockDevices() {
    }

    public static BlockDevice create(BdevConfig c) {
        return switch (c.type) {
            case "malloc" -> new MallocBdev(c.name, c.blockSize, c.numBlocks);
            case "null" -> new NullBdev(c.name, c.blockSize, c.numBlocks);
            case "file" -> FileBdev.open(c.name, Path.of(c.path), c.blockSize, c.numBlocks, c.directIo,
                c.ioWorkersOrDefault(), c.ioQueueDepthOrDefault());
            default -> throw new BdevException("bdev " + c.name + ": unknown type '" + c.type + "'");
        };
    }
}
