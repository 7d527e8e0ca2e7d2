package io.nvmf4j.bdev;

/** The identity and geometry every block device has. */
abstract class AbstractBdev implements BlockDevice {
    private final String name;
    private final int blockSize;
    private volatile long numBlocks;

    AbstractBdev(String name, int blockSize, long numBlocks) {
        this.name = name;
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int blockSize() {
        return blockSize;
    }

    @Override
    public final long numBlocks() {
        return numBlocks;
    }

    /** Records a new capacity once the medium has it (growth only; see {@link BlockDevice#grow(long)}). */
    protected final void setNumBlocks(long blocks) {
        this.numBlocks = blocks;
    }
}
