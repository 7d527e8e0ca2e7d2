package io.nvmf4j.bdev;

import io.nvmf4j.config.VolumeConfig;

/**
 * What every pool kind of the java engine does with a volume's medium (a file of a {@link ReflinkPool}, an image of
 * an {@link RbdPool}), so that the engine opens, resizes, deletes and takes back volumes the same way for each.
 * Control-plane threads only, serialised by the engine.
 */
public interface VolumeStore {
    /** Opens volume {@code v} as bdev {@code bdevName}. */
    BlockDevice openVolume(String bdevName, VolumeConfig v);

    /** Sets the size of a volume no bdev has open (a shrink). */
    void setVolumeSize(String volume, long bytes);

    /** Deletes a volume so that {@link #restoreVolume} can take it back until the pool's trash is emptied. */
    void trashVolume(String volume);

    /** Brings back a volume {@link #trashVolume} deleted. */
    void restoreVolume(String volume);

    /** Removes a volume now: the undo of a create or clone that was never committed. */
    void discardVolume(String volume);
}
