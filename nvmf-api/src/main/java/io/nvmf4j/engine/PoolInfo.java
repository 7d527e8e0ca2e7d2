package io.nvmf4j.engine;

/**
 * A pool as the control layer lists it: its place and its file system's capacity.
 *
 * @param size               bytes of the pool's file system
 * @param used               bytes in use on it (by the pool and anything else on that file system)
 * @param free               bytes a writer can still allocate
 * @param warnPercent        the warning watermark in percent of {@code size}
 * @param watermarkCrossings times the use rose above the watermark since the engine started
 * @param volumes            volumes in the pool
 */
public record PoolInfo(String name, String kind, String path, long size, long used, long free, int warnPercent,
                       long watermarkCrossings, int volumes) {
}
