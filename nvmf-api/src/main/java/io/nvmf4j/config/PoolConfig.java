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
 * <p>The spdk engine's kind is {@value #KIND_LVOL}: an SPDK lvol store named like the pool on the document's bdev
 * {@link #baseBdev} (malloc or file), with clusters of {@link #clusterSize} bytes; volumes, snapshots
 * ({@code <volume>@<snapshot>}) and clones are the store's lvols, thin unless thick.
 *
 * <p>The java engine's other kind is {@value #KIND_RBD}: a RADOS pool {@link #pool} of a Ceph cluster, reached as an
 * rbd bdev reaches it ({@link #cephConf}, {@link #clientName}, {@link #keyring}); a volume is an RBD image named like
 * it (thin), a snapshot an RBD snapshot of that image, a clone an RBD clone (format 2) of a snapshot.
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
    /** The spdk engine's pool: an SPDK lvol store on a bdev of the document. */
    public static final String KIND_LVOL = "lvol";
    /** The java engine's pool on Ceph: a RADOS pool whose volumes are RBD images. */
    public static final String KIND_RBD = "rbd";
    /** The kinds a document may name, in the order messages list them. */
    public static final java.util.List<String> KINDS = java.util.List.of(KIND_REFLINK_DIR, KIND_LVOL, KIND_RBD);
    /** {@code lvol}: the cluster size when none is given (SPDK's own default). */
    public static final long DEFAULT_CLUSTER_SIZE = 4L << 20;
    public static final long MIN_CLUSTER_SIZE = 4096;
    public static final long MAX_CLUSTER_SIZE = 1L << 30;
    public static final int DEFAULT_WARN_PERCENT = 85;
    public static final int MIN_WARN_PERCENT = 1;
    public static final int MAX_WARN_PERCENT = 100;

    /** Its name: letters, digits, '.', '_', '-' (as a bdev's), unique among pools. */
    public String name;
    /**
     * How it keeps volumes: {@value #KIND_REFLINK_DIR} or {@value #KIND_RBD} (java engine), {@value #KIND_LVOL} (spdk
     * engine).
     */
    public String kind = KIND_REFLINK_DIR;
    /** {@code reflink-dir}: the absolute directory, under one of {@code storage.fileDirectories}. */
    public String path;
    /** {@code lvol}: the bdev of the document the lvol store lives on (malloc or file; no namespace uses it). */
    public String baseBdev;
    /** {@code rbd}: the RADOS pool whose RBD images are the volumes (no other image may be in it). */
    public String pool;
    /** {@code rbd}: the Ceph config file, under {@code storage.cephDirectories}; null: Ceph's default search. */
    public String cephConf;
    /** {@code rbd}: the Ceph client ("client.NAME"; null: {@value BdevConfig#DEFAULT_RBD_CLIENT}). */
    public String clientName;
    /** {@code rbd}: the keyring with the client's key, under {@code storage.cephDirectories}. */
    public String keyring;
    /**
     * {@code lvol}: bytes per cluster, the unit volumes are allocated and sized in; a power of two,
     * {@value #MIN_CLUSTER_SIZE}..{@value #MAX_CLUSTER_SIZE}; null: {@value #DEFAULT_CLUSTER_SIZE}.
     */
    public Long clusterSize;
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

    public long clusterSizeOrDefault() {
        return clusterSize == null ? DEFAULT_CLUSTER_SIZE : clusterSize;
    }

    public String clientNameOrDefault() {
        return clientName == null ? BdevConfig.DEFAULT_RBD_CLIENT : clientName;
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
