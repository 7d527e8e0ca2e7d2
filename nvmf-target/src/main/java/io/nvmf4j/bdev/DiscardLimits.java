package io.nvmf4j.bdev;

/**
 * What Deallocate (Dataset Management) and Write Zeroes do on one block device, and how much of either
 * one command may ask for. The command layer reports these truthfully to the host: ONCS bits, DLFEAT
 * (Identify Namespace), and DMRL / DMRSL / DMSL (Identify Controller, NVM command set, CNS 06h), and
 * rejects a Dataset Management beyond them before any work starts.
 *
 * @param deallocate          Deallocate is supported (ONCS bit 2); false: the device has nothing to free
 * @param freesSpace          Deallocate releases the medium's space (a hole, BLKDISCARD), not only zeroes it
 * @param readsZeroes         blocks read back as zeros after Deallocate (DLFEAT 001b), else unspecified (000b)
 * @param writeZeroesFrees    Write Zeroes with DEAC may free the space too (DLFEAT bit 3)
 * @param maxRanges           DMRL: most ranges in one Dataset Management (1..256)
 * @param maxRangeBlocks      DMRSL: most blocks in one range (0 = no limit below 2^32 - 1)
 * @param maxTotalBlocks      DMSL: most blocks in one Dataset Management command (0 = no limit)
 */
public record DiscardLimits(boolean deallocate, boolean freesSpace, boolean readsZeroes, boolean writeZeroesFrees,
                            int maxRanges, long maxRangeBlocks, long maxTotalBlocks) {
    public DiscardLimits {
        if (maxRanges < 1 || maxRanges > 256 || maxRangeBlocks < 0 || maxRangeBlocks > 0xFFFF_FFFFL
            || maxTotalBlocks < 0) {
            throw new IllegalArgumentException("discard limits out of range: ranges " + maxRanges + ", range blocks "
                + maxRangeBlocks + ", total " + maxTotalBlocks);
        }
    }
}
