package io.nvmf4j.engine;

import java.util.List;

/**
 * A volume as the control layer lists it.
 *
 * @param bdev             the name a namespace gives it ({@code <pool>/<volume>})
 * @param provisionedBytes its size
 * @param allocatedBytes   bytes its file occupies on the pool's medium (st_blocks; blocks it shares with snapshots
 *                         and clones are counted in each of them: the pool's {@code used} is the shared truth)
 * @param origin           the snapshot it was cloned from ({@code volume@snapshot}), or null
 * @param snapshots        its snapshots' names, oldest first
 * @param namespace        the namespace that uses it ({@code <nqn>/<nsid>}), or null
 * @param state            {@link MissingVolumes#AVAILABLE}, or {@link MissingVolumes#MISSING} when the start found its
 *                         pool without it (then its namespace is not served and its allocated bytes are 0)
 * @param cause            why it is missing, or null
 */
public record VolumeInfo(String pool, String name, String bdev, int blockSize, long provisionedBytes,
                         long allocatedBytes, boolean thin, String origin, List<String> snapshots, String namespace,
                         String state, String cause) {
}
