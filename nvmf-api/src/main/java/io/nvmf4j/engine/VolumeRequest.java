package io.nvmf4j.engine;

import java.math.BigInteger;

/**
 * A volume to create in a pool ({@link ConfigController#createVolume}).
 *
 * @param name      the volume's name (as a pool's: letters, digits, '.', '_', '-')
 * @param size      its size in bytes: positive, a multiple of the block size, at most 1 PiB (any integer is taken,
 *                  so a size beyond 2^64 is refused by name rather than lost in a conversion)
 * @param blockSize 512 or 4096; null: 512
 * @param thick     every block allocated now (refused when the pool has no room for them); null or false: thin
 */
public record VolumeRequest(String name, BigInteger size, Integer blockSize, Boolean thick) {
    public static VolumeRequest thin(String name, long size) {
        return new VolumeRequest(name, BigInteger.valueOf(size), null, null);
    }
}
