package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/**
 * A volume of a pool ({@link PoolConfig}): a block device of {@link #numBlocks} blocks of {@link #blockSize} bytes
 * that a namespace names as {@code <pool>/<volume>}.
 *
 * <p>Lineage, kept here because reflink copies share blocks but are independent files: a snapshot belongs to its
 * volume, and a clone names the snapshot it was made from in {@link #origin}. A volume is deleted only when it has no
 * snapshot left and no namespace uses it; a snapshot only when no volume was cloned from it. So the delete order is
 * the creation order reversed: the clone, then the snapshot, then the volume.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class VolumeConfig {
    public String name;
    /** Logical block size in bytes: 512 or 4096. */
    public int blockSize = 512;
    /** Size in blocks (positive). */
    public long numBlocks;
    /** Whether its blocks were all allocated at creation (fallocate); false: thin (a sparse file, allocated as written). */
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public boolean thick;
    /** A clone: the snapshot it was made from, {@code <volume>@<snapshot>}; absent otherwise. */
    public String origin;
    /** Its snapshots, oldest first. */
    public List<SnapshotConfig> snapshots = new ArrayList<>();

    public VolumeConfig() {
    }

    public VolumeConfig(String name, int blockSize, long numBlocks) {
        this.name = name;
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
    }

    /** Its snapshot named {@code name}, or null. */
    public SnapshotConfig snapshot(String name) {
        if (snapshots == null) {
            return null;
        }
        for (SnapshotConfig s : snapshots) {
            if (s != null && s.name != null && s.name.equals(name)) {
                return s;
            }
        }
        return null;
    }

    /** The name a namespace's {@code bdev} gives the volume {@code volume} of pool {@code pool}. */
    public static String bdevName(String pool, String volume) {
        return pool + "/" + volume;
    }
}
