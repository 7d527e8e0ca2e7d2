package io.nvmf4j.core;

import io.nvmf4j.bdev.BlockDevice;

import java.util.concurrent.atomic.LongAdder;

/** A namespace: nsid, the block device behind it, its identifiers and its I/O counters. */
public final class Namespace {
    private final int nsid;
    private final BlockDevice bdev;
    private final byte[] nguid;
    private final byte[] uuid;
    private final byte[] eui64;

    public final LongAdder readCommands = new LongAdder();
    public final LongAdder writeCommands = new LongAdder();
    public final LongAdder bytesRead = new LongAdder();
    public final LongAdder bytesWritten = new LongAdder();

    /**
     * @param nguid 16 bytes
     * @param uuid  16 bytes
     * @param eui64 8 bytes or null
     */
    public Namespace(int nsid, BlockDevice bdev, byte[] nguid, byte[] uuid, byte[] eui64) {
        this.nsid = nsid;
        this.bdev = bdev;
        this.nguid = nguid.clone();
        this.uuid = uuid.clone();
        this.eui64 = eui64 == null ? null : eui64.clone();
    }

    public int nsid() {
        return nsid;
    }

    public BlockDevice bdev() {
        return bdev;
    }

    public int blockSize() {
        return bdev.blockSize();
    }

    public long numBlocks() {
        return bdev.numBlocks();
    }

    public byte[] nguid() {
        return nguid.clone();
    }

    public byte[] uuid() {
        return uuid.clone();
    }

    /** 8 bytes, or null when none was configured. */
    public byte[] eui64() {
        return eui64 == null ? null : eui64.clone();
    }
}
