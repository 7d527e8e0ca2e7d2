package io.nvmf4j.engine;

import java.util.List;

/**
 * A snapshot as the control layer lists it.
 *
 * @param sizeBytes      the volume's size when it was taken
 * @param allocatedBytes bytes its file occupies (st_blocks; shared blocks counted in full)
 * @param group          its group snapshot's name, or null
 * @param clones         the volumes cloned from it (it cannot be deleted while there are any)
 */
public record SnapshotInfo(String pool, String volume, String name, long sizeBytes, long allocatedBytes,
                           String created, String group, List<String> clones) {
}
