package io.nvmf4j.engine;

import java.util.List;

/**
 * The snapshots one call took at one instant ({@link ConfigController#createSnapshot},
 * {@link ConfigController#createGroupSnapshot}).
 *
 * @param pauseNanos how long writes to the volumes' namespaces were held (0 when no namespace used them)
 */
public record SnapshotTaken(List<SnapshotInfo> snapshots, long pauseNanos) {
}
