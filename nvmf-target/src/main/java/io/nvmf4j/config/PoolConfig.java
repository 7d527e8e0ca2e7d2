package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/**
 * A storage pool: where volumes are carved from, by the engine's own mechanism ({@link #kind}). The java engine's
 * kind is {@value #KIND_REFLINK_DIR}: a directory on a file system that can reflink (XFS with {@code reflink=1}, or
 * btrfs), under one of {@code storage.fileDirectories}, that holds nothing but the pool's files. A volume is a file
 * ({@code <volume>.vol}, sparse unless thick), a snapshot a read-only reflink copy of it
 * ({@code <volume>@<snapshot>.snap}), a clone a reflink copy of a snapshot made into a new volume. A namespace uses
 * a volume as its bdev by the name {@code <pool>/<volume>}.
 *
 * <p>The document is the truth about what the pool holds: at start a file of the pool's naming that the document
 * does not name (left by a create, snapshot or clone whose document change was never committed, or by a delete
 * whose file removal did not finish) is removed and logged; a volume file shorter or longer than the document's size
 * (a resize whose change was never committed) is set back to it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class PoolConfig {
    /** The java engine's pool: a directory on a reflink file system. */
    public static final String KIND_REFLINK_DIR = "reflink-dir";
    public static final int DEFAULT_WARN_PERCENT = 85;
    public static final int MIN_WARN_PERCENT = 1;
    public static final int MAX_WARN_PERCENT = 100;

    /** Its name: letters, digits, '.', '_', '-' (as a bdev's), unique among pools. */
    public String name;
    /** How it keeps volumes: {@value #KIND_REFLINK_DIR} (java engine). */
    public String kind = KIND_REFLINK_DIR;
    /** {@code reflink-dir}: the absolute directory, under one of {@code storage.fileDirectories}. */
    public String path;
    /**
     * The percentage of the file system's bytes in use above which the pool warns (logged once per crossing and
     * counted); null: {@value #DEFAULT_WARN_PERCENT}. 1..100.
     */
    public Integer warnPercent;
    /** Its volumes, with their snapshots. */
    public List<VolumeConfig> volumes = new ArrayList<>();

    public PoolConfig() {
    }

    public PoolConfig(String name, String kind, String path) {
        this.name = name;
        this.kind = kind;
        this.path = path;
    }

    public int warnPercentOrDefault() {
        return warnPercent == null ? DEFAULT_WARN_PERCENT : warnPercent;
    }

    /** Its volume named {@code name}, or null. */
    public VolumeConfig volume(String name) {
        if (volumes == null) {
            return null;
        }
        for (VolumeConfig v : volumes) {
            if (v != null && v.name != null && v.name.equals(name)) {
                return v;
            }
        }
        return null;
    }
}
