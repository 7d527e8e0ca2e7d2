package io.nvmf4j.bdev;

import io.nvmf4j.nvme.NvmeStatus;

/**
 * Discards writes and reads zeros; for measuring the transport without a medium. Deallocate is accepted and
 * has its effect already (reads return zeros, DLFEAT 001b); there is no space to free and no limit.
 */
public final class NullBdev extends AbstractBdev {
    private static final DiscardLimits LIMITS = new DiscardLimits(true, false, true, false, 256, 0, 0);

    public NullBdev(String name, int blockSize, long numBlocks) {
        super(name, blockSize, numBlocks);
    }

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public DiscardLimits discardLimits() {
        return LIMITS;
    }

    @Override
    public void read(BdevIo io) {
        io.buffer().setZero(0, io.length());
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void write(BdevIo io) {
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void flush(BdevIo io) {
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void writeZeroes(BdevIo io) {
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void deallocate(BdevIo io) {
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void grow(long newNumBlocks) {
        setNumBlocks(newNumBlocks);
    }

    @Override
    public void close() {
    }
}
